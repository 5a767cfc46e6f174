//! `sim-cli serve`: serves the built browser explorer (`web/www`, built by
//! `web/build.sh`) over HTTP on 127.0.0.1 only. The page runs the simulator
//! in WebAssembly; nothing is sent anywhere, so a static server is enough.

use anyhow::{Result, anyhow, bail};
use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// The MIME type a browser needs for each file the page is made of
/// (`.wasm` must be `application/wasm` for streaming compilation).
fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("json") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        _ => "text/plain; charset=utf-8",
    }
}

/// The file a request path names inside `root`, or `None` if it tries to
/// leave it. `/` is `index.html`; query strings are ignored.
pub fn resolve(root: &Path, url: &str) -> Option<PathBuf> {
    let path = url.split(['?', '#']).next().unwrap_or("/");
    let rel = Path::new(path.trim_start_matches('/'));
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return None;
    }
    let full = root.join(rel);
    Some(if path.ends_with('/') || path.is_empty() { full.join("index.html") } else { full })
}

/// Serves `dir` until the process is stopped. Prints the URL on stdout
/// (port 0 picks a free port, which the URL then shows).
pub fn serve(dir: &Path, port: u16) -> Result<()> {
    let wasm = dir.join("pkg/web_bg.wasm");
    if !dir.join("index.html").is_file() || !wasm.is_file() {
        bail!("{} is missing: build the page first with `web/build.sh`", wasm.display());
    }
    let server =
        tiny_http::Server::http(("127.0.0.1", port)).map_err(|e| anyhow!("cannot listen on 127.0.0.1:{port}: {e}"))?;
    let addr = server.server_addr().to_ip().ok_or_else(|| anyhow!("not an IP listener"))?;
    println!("serving {} at http://{addr}/ (Ctrl-C stops)", dir.display());
    std::io::stdout().flush()?;
    for req in server.incoming_requests() {
        let file = resolve(dir, req.url()).filter(|p| p.is_file());
        let response = match file.and_then(|p| std::fs::read(&p).ok().map(|b| (p, b))) {
            Some((p, body)) => {
                let header = tiny_http::Header::from_bytes("Content-Type", content_type(&p)).expect("valid header");
                let no_cache = tiny_http::Header::from_bytes("Cache-Control", "no-cache").expect("valid header");
                tiny_http::Response::from_data(body).with_header(header).with_header(no_cache)
            }
            None => tiny_http::Response::from_string("not found").with_status_code(404),
        };
        // A client that went away is not the server's problem.
        let _ = req.respond(response);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_root() {
        let root = Path::new("/srv/www");
        assert_eq!(resolve(root, "/"), Some(root.join("index.html")));
        assert_eq!(resolve(root, "/pkg/web_bg.wasm?v=1"), Some(root.join("pkg/web_bg.wasm")));
        assert_eq!(resolve(root, "/../etc/passwd"), None);
        assert_eq!(resolve(root, "/pkg/../../x"), None);
        assert_eq!(content_type(Path::new("a.wasm")), "application/wasm");
        // The page's favicon (web/www/favicon.svg): browsers ignore an SVG icon sent as text.
        assert_eq!(content_type(Path::new("favicon.svg")), "image/svg+xml");
        assert!(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../web/www/favicon.svg")).is_file());
    }
}
