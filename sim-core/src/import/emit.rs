//! The imported scenario as TOML text, every inference beside the key it
//! sets as a comment.

use std::fmt::Write;

use super::fit::{Decl, Trigger};
use crate::time::format_duration as dur;

/// What the `[machine]`/`[kernel]` tables say, with their evidence.
pub struct MachineText {
    pub cpus: usize,
    pub cpus_why: String,
    pub hz: u32,
    pub tick_offset: u64,
    pub hz_why: String,
    pub kernel: &'static str,
    pub kernel_why: String,
    pub duration: u64,
}

fn comment(out: &mut String, text: &str) {
    for line in text.lines() {
        let _ = writeln!(out, "# {line}");
    }
}

fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

pub fn scenario(name: &str, header: &[String], m: &MachineText, victim: Option<&str>, decls: &[Decl]) -> String {
    let mut out = String::new();
    for h in header {
        comment(&mut out, h);
    }
    out.push('\n');
    let _ = writeln!(out, "schema = 1\nname = {}\nseed = 1\nduration = {}\n", quoted(name), quoted(&dur(m.duration)));
    comment(&mut out, &m.kernel_why);
    let _ = writeln!(out, "[kernel]\nversion = {}\n", quoted(m.kernel));
    out.push_str("[machine]\n");
    comment(&mut out, &m.cpus_why);
    let _ = writeln!(out, "cpus = {}", m.cpus);
    comment(&mut out, &m.hz_why);
    let _ = writeln!(out, "hz = {}\ntick_offset = {}\n", m.hz, quoted(&dur(m.tick_offset)));
    if let Some(v) = victim {
        let _ = writeln!(out, "[report]\nvictim = {}\n", quoted(v));
    }
    for d in decls {
        task(&mut out, d, m.duration);
    }
    out
}

fn task(out: &mut String, d: &Decl, duration: u64) {
    for n in &d.notes {
        comment(out, n);
    }
    let _ = writeln!(out, "[[tasks]]\nname = {}", quoted(&d.name));
    if d.members.len() > 1 {
        let _ = writeln!(out, "count = {}", d.members.len());
    }
    if let Some((cpus, each)) = &d.cpus {
        let _ = writeln!(out, "cpus = {}", quoted(cpus));
        if *each {
            out.push_str("pin_each = true\n");
        }
    }
    if let Some(p) = d.rt_priority {
        let _ = writeln!(out, "policy = \"fifo\"\nrt_priority = {p}");
    } else if d.nice != 0 {
        let _ = writeln!(out, "nice = {}", d.nice);
    }
    if d.start_ns > 0 {
        let _ = writeln!(out, "start = {}", quoted(&dur(d.start_ns)));
    }
    if let Some(n) = d.iterations {
        let _ = writeln!(out, "iterations = {n}");
    }
    let run = format!("{{ run = {} }}", quoted(&d.burst.to_string()));
    let wakes: Vec<String> = d
        .wakes
        .iter()
        .map(|w| format!("{{ wake = {} }}", quoted(w)))
        .collect();
    let mut steps: Vec<String> = Vec::new();
    if d.serve {
        let _ = writeln!(out, "program = [\"serve\"]");
        if let Some(f) = &d.forward {
            let _ = writeln!(out, "forward = {}", quoted(f));
        }
        if matches!(d.trigger, Trigger::Wait { .. }) {
            let _ = writeln!(out, "hop_work = {}", quoted(&d.burst.to_string()));
        }
        out.push('\n');
        if let Some(rate) = d.rate_per_s {
            let _ = writeln!(
                out,
                "[[sources]]\nname = {}\ntarget = {}\nrate_per_s = {rate}\nwork = {}\n",
                quoted(&format!("{}-arrivals", d.name)),
                quoted(&d.name),
                quoted(&d.burst.to_string())
            );
        }
        if let Some(gaps) = &d.arrivals {
            let _ = writeln!(
                out,
                "[[sources]]\nname = {}\ntarget = {}\ninterval = {}\nwork = {}\n",
                quoted(&format!("{}-arrivals", d.name)),
                quoted(&d.name),
                quoted(&gaps.to_string()),
                quoted(&d.burst.to_string())
            );
        }
        return;
    }
    match &d.trigger {
        Trigger::Hog if d.iterations.is_some() => steps.push(run),
        Trigger::Hog => steps.push(format!("{{ run = {} }}", quoted(&dur(duration.saturating_add(1_000_000_000))))),
        Trigger::Periodic { period, offset } => {
            steps.push(format!("{{ sleep_until = {}, offset = {} }}", quoted(&dur(*period)), quoted(&dur(*offset))));
            steps.push(run);
            steps.extend(wakes);
        }
        Trigger::Sleep(dist) => {
            steps.push(format!("{{ sleep = {} }}", quoted(&dist.to_string())));
            steps.push(run);
            steps.extend(wakes);
        }
        Trigger::Wait { .. } if d.starts_running => {
            steps.push(run);
            steps.extend(wakes);
            steps.push("\"wait\"".into());
        }
        Trigger::Wait { .. } => {
            steps.push("\"wait\"".into());
            steps.push(run);
            steps.extend(wakes);
        }
    }
    if steps.len() <= 3 {
        let _ = writeln!(out, "program = [{}]\n", steps.join(", "));
    } else {
        let _ = writeln!(out, "program = [\n    {},\n]\n", steps.join(",\n    "));
    }
}
