#!/usr/bin/env bash
# Builds the browser explorer into web/www/pkg (one command, idempotent).
# Installs what it needs when missing: the wasm32 target and the
# wasm-bindgen CLI at exactly the version the `web` crate is pinned to
# (`cargo install` without --locked: its lock file names crates the registry
# may not serve; no npm wasm-pack or Trunk: they download prebuilt binaries).
# Needs nothing outside the repository but rustup and cargo; web/www is then
# a complete static site (.github/workflows/pages.yml publishes it).
# Serve it locally: cargo run --release --bin sim-cli -- serve
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(sed -n 's/^wasm-bindgen = "=\([0-9.]*\)"/\1/p' Cargo.toml)
[ -n "$version" ] || { echo "build.sh: no pinned wasm-bindgen version in Cargo.toml" >&2; exit 1; }

rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
# cargo install puts it in $CARGO_HOME/bin, which need not be on PATH yet.
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
if ! wasm-bindgen --version 2>/dev/null | grep -qx "wasm-bindgen $version"; then
    cargo install wasm-bindgen-cli --version "$version"
fi

cargo build --release --target wasm32-unknown-unknown -p web
# Where cargo put it: CARGO_TARGET_DIR when set (relative to the repository), else target/.
wasm-bindgen --target web --no-typescript --out-dir web/www/pkg "${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/release/web.wasm"
echo "built web/www ($(du -k web/www/pkg/web_bg.wasm | cut -f1) KiB of wasm); serve it with: cargo run --release --bin sim-cli -- serve"
