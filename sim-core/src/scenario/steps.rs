//! The steps of a task's program (`program = [...]`): bare words and step
//! tables, the I/O steps' options, and the tasks a `wake` names.

use super::error::{KeyError, did_you_mean};
use super::file::ScenarioFile;
use super::values::{dist_value, duration_in, duration_value, shown};
use crate::block::request::SECTOR_BYTES;
use crate::block::{Op, ReqFlags};
use crate::ids::{DeviceId, TaskId};
use crate::time::format_duration;
use crate::workload::dist::{SAMPLE_MAX_NS, parse_size};
use crate::workload::{Dist, IoStep, Pattern, Step, WakeTarget};
use toml::Value;

/// The shortest interval between kernel entries of a `run` step: 1 µs.
const ENTER_KERNEL_EVERY_MIN_NS: u64 = 1_000;

const STEP_KINDS: &str = "run, sleep, sleep_until, wait, wake, serve, yield, read, write, fdatasync, wait_io";
const STEP_TABLE_KINDS: &[&str] =
    &["run", "sleep", "sleep_until", "wait", "wake", "serve", "yield", "read", "write", "fdatasync", "wait_io"];
/// Every step name, bare or as a table key, for suggestions.
const STEP_WORDS_ALL: &[&str] = STEP_TABLE_KINDS;
const IO_OPTIONS: &[&str] =
    &["device", "sync", "meta", "prio", "wait", "depth", "pattern", "offset", "span", "io_class"];

pub(super) fn step(f: &ScenarioFile, v: &Value, key: &str) -> Result<Step, KeyError> {
    let word = |w: &str| -> Result<Step, KeyError> {
        match w {
            "wait" => Ok(Step::Wait),
            "serve" => Ok(Step::Serve),
            "yield" => Ok(Step::Yield),
            "fdatasync" => Ok(Step::Fdatasync),
            _ => Err(KeyError::new(
                key,
                format!(
                    "`{w}` is not a step{}; bare words: wait, serve, yield, fdatasync; tables: {{ run = \"1ms\" }}, {{ sleep = \"exp(5ms)\" }}, {{ sleep_until = \"10ms\" }}, {{ wake = \"task\" }}, {{ read = \"4KiB\" }}, {{ write = \"2MiB\" }}, {{ wait_io = \"task\" }}",
                    did_you_mean(w, STEP_WORDS_ALL)
                ),
            )),
        }
    };
    let table = match v {
        Value::String(w) => return word(w),
        Value::Table(t) => t,
        other => {
            return Err(KeyError::new(key, format!("expected a step (a word or a table), found {}", other.type_str())));
        }
    };
    // `read`/`write` take options, one of which (`wait`) is also a step name.
    let io_kinds: Vec<&String> = table.keys().filter(|k| *k == "read" || *k == "write").collect();
    let kinds: Vec<&String> = if io_kinds.is_empty() {
        table.keys().filter(|k| STEP_TABLE_KINDS.contains(&k.as_str())).collect()
    } else {
        io_kinds
    };
    if kinds.is_empty()
        && let Some(unknown) = table.keys().find(|k| !IO_OPTIONS.contains(&k.as_str()) && k.as_str() != "offset")
    {
        return Err(KeyError::new(
            format!("{key}.{unknown}"),
            format!(
                "`{unknown}` is not a step{}; a step table has exactly one of: {STEP_KINDS}",
                did_you_mean(unknown, STEP_WORDS_ALL)
            ),
        ));
    }
    if kinds.len() != 1 {
        let found: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
        let found = if found.is_empty() { "none".to_string() } else { found.join(", ") };
        return Err(KeyError::new(key, format!("a step table has exactly one of: {STEP_KINDS} (found: {found})")));
    }
    let kind = kinds[0].as_str();
    let val = &table[kind];
    let sub = format!("{key}.{kind}");
    let options: &[&str] = match kind {
        "sleep_until" => &["offset"],
        "run" => &["enter_kernel_every"],
        "wake" => &["sync"],
        "read" | "write" => IO_OPTIONS,
        _ => &[],
    };
    if let Some(extra) = table.keys().find(|k| k.as_str() != kind && !options.contains(&k.as_str())) {
        let allowed = if options.is_empty() { "none".to_string() } else { options.join(", ") };
        return Err(KeyError::new(format!("{key}.{extra}"), format!("not an option of `{kind}`; allowed: {allowed}")));
    }
    Ok(match kind {
        "run" => {
            let enter_kernel_every_ns = match table.get("enter_kernel_every") {
                None => None,
                Some(e) => {
                    let k = format!("{key}.enter_kernel_every");
                    let range = (ENTER_KERNEL_EVERY_MIN_NS, SAMPLE_MAX_NS);
                    Some(duration_in(e, &k, range, " (each entry is an event)")?)
                }
            };
            Step::Run { work: dist_value(val, &sub)?, enter_kernel_every_ns }
        }
        "sleep" => Step::Sleep(dist_value(val, &sub)?),
        "sleep_until" => {
            let period_ns = duration_in(val, &sub, (1, SAMPLE_MAX_NS), " (the period)")?;
            let offset_ns = match table.get("offset") {
                Some(o) => duration_value(o, &format!("{key}.offset"))?,
                None => 0,
            };
            if offset_ns >= period_ns {
                return Err(KeyError::new(
                    format!("{key}.offset"),
                    format!(
                        "{} is not allowed: smaller than the period ({})",
                        format_duration(offset_ns),
                        format_duration(period_ns)
                    ),
                ));
            }
            Step::SleepUntil { period_ns, offset_ns }
        }
        "wake" | "wait_io" => {
            let target = val.as_str().ok_or_else(|| KeyError::new(&sub, "expected a task name or comm"))?;
            let t = wake_target(f, target).ok_or_else(|| {
                KeyError::new(&sub, format!("no task named `{target}` (give a task name, or a comm like `name/2`)"))
            })?;
            if kind == "wait_io" {
                return Ok(Step::WaitIo(t));
            }
            // `sync = true`: WF_SYNC, the waker is about to sleep.
            let sync = match table.get("sync") {
                None => false,
                Some(Value::Boolean(b)) => *b,
                Some(v) => {
                    return Err(KeyError::new(
                        format!("{key}.sync"),
                        format!("expected true or false (WF_SYNC: the waker sleeps next), found {}", shown(v)),
                    ));
                }
            };
            Step::Wake { target: t, sync }
        }
        "read" | "write" => Step::Io(io_step(f, table, kind, key)?),
        "wait" | "serve" | "yield" | "fdatasync" => match val {
            Value::Boolean(true) => word(kind)?,
            _ => return Err(KeyError::new(sub, format!("write `{kind} = true`, or the bare word \"{kind}\""))),
        },
        other => return Err(KeyError::new(format!("{key}.{other}"), format!("unknown step; allowed: {STEP_KINDS}"))),
    })
}

/// `{ read = "4KiB", device = "sda", pattern = "random", span = "10GiB" }` and
/// `{ write = "2MiB", sync = true, wait = false, depth = 4 }`.
fn io_step(f: &ScenarioFile, table: &toml::Table, kind: &str, key: &str) -> Result<IoStep, KeyError> {
    let sub = |k: &str| format!("{key}.{k}");
    let size = match &table[kind] {
        Value::String(s) => Dist::parse_size(s).map_err(|m| KeyError::new(sub(kind), m))?,
        other => {
            return Err(KeyError::new(
                sub(kind),
                format!("expected a size such as \"4KiB\" or \"uniform(4KiB, 64KiB)\", found {}", other.type_str()),
            ));
        }
    };
    if size.is_always_zero() || size.mean_ns() > IO_SIZE_MAX as f64 {
        return Err(KeyError::new(sub(kind), format!("a submission is 1 byte to {} MiB", IO_SIZE_MAX >> 20)));
    }
    let flag = |k: &str| -> Result<Option<bool>, KeyError> {
        match table.get(k) {
            None => Ok(None),
            Some(Value::Boolean(b)) => Ok(Some(*b)),
            Some(_) => Err(KeyError::new(sub(k), "expected true or false")),
        }
    };
    // `io_class = "QUEUE.CLASS"`: through a userspace I/O queue, whose device it implies.
    let io_class = match table.get("io_class") {
        None => None,
        Some(Value::String(c)) => Some(super::io_queues::class_ref(f, c, &sub("io_class"))?),
        Some(_) => {
            return Err(KeyError::new(sub("io_class"), "expected \"QUEUE.CLASS\", a class of [io_queues.QUEUE]"));
        }
    };
    let implied = io_class.map(|(_, d)| d);
    let device = match table.get("device") {
        None if implied.is_some() => implied.unwrap_or_default(),
        None if f.devices.len() == 1 => 0,
        None if f.devices.is_empty() => {
            return Err(KeyError::new(key, "an I/O step needs a device; declare one under [devices.<name>]"));
        }
        None => return Err(KeyError::new(sub("device"), "required: the scenario has several devices")),
        Some(Value::String(d)) => f.devices.keys().position(|n| n == d).ok_or_else(|| {
            let names: Vec<&str> = f.devices.keys().map(String::as_str).collect();
            let declared = if names.is_empty() {
                format!("no devices are declared (add [devices.{d}])")
            } else {
                format!("declared: {}", names.join(", "))
            };
            KeyError::new(sub("device"), format!("no device named `{d}`; {declared}"))
        })?,
        Some(_) => return Err(KeyError::new(sub("device"), "expected a device name")),
    };
    if let Some((_, d)) = io_class
        && d != device
    {
        return Err(KeyError::new(sub("device"), "differs from the device of the step's `io_class` queue"));
    }
    let op = if kind == "read" { Op::Read } else { Op::Write };
    let wait = flag("wait")?.unwrap_or(true);
    let sync = flag("sync")?.unwrap_or(op == Op::Read || wait);
    if op == Op::Read && !sync {
        return Err(KeyError::new(sub("sync"), "reads are always synchronous (`rq_is_sync`)"));
    }
    let depth = match table.get("depth") {
        None => 0,
        Some(Value::Integer(n)) if (1..=4096).contains(n) && !wait => *n as u32,
        Some(Value::Integer(_)) if wait => return Err(KeyError::new(sub("depth"), "only applies with `wait = false`")),
        Some(v) => {
            return Err(KeyError::new(sub("depth"), format!("{} is not allowed: an integer from 1 to 4096", shown(v))));
        }
    };
    let pattern = match table.get("pattern") {
        None => Pattern::Sequential,
        Some(v) => match v.as_str() {
            Some("sequential" | "seq") => Pattern::Sequential,
            Some("random" | "rand") => Pattern::Random,
            _ => {
                return Err(KeyError::new(
                    sub("pattern"),
                    format!("{} is not allowed: \"sequential\", \"random\"", shown(v)),
                ));
            }
        },
    };
    let sectors = |k: &str| -> Result<Option<u64>, KeyError> {
        match table.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => {
                let b = parse_size(s).map_err(|m| KeyError::new(sub(k), m))?;
                Ok(Some(b / SECTOR_BYTES))
            }
            Some(_) => Err(KeyError::new(sub(k), "expected a size such as \"10GiB\"")),
        }
    };
    let span_sectors = sectors("span")?.unwrap_or((1u64 << 30) / SECTOR_BYTES);
    Ok(IoStep {
        device: DeviceId(device as u16),
        flags: ReqFlags { op, sync, meta: flag("meta")?.unwrap_or(false), prio: flag("prio")?.unwrap_or(false) },
        size,
        pattern,
        offset_sectors: sectors("offset")?,
        span_sectors,
        wait,
        depth,
        io_class: io_class.map(|(c, _)| c),
    })
}

/// Largest single submission.
pub const IO_SIZE_MAX: u64 = 64 << 20;

fn wake_target(f: &ScenarioFile, target: &str) -> Option<WakeTarget> {
    let mut first = 0u32;
    for t in &f.tasks {
        let count = t.count.unwrap_or(1) as u32;
        if t.name == target {
            return Some(if count == 1 {
                WakeTarget::Task(TaskId(first))
            } else {
                WakeTarget::Group { first: TaskId(first), count }
            });
        }
        if let Some(idx) = target.strip_prefix(&format!("{}/", t.name)).and_then(|s| s.parse::<u32>().ok())
            && idx < count
        {
            return Some(WakeTarget::Task(TaskId(first + idx)));
        }
        first += count;
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;
    use crate::workload::{Step, WakeTarget};

    fn waker(step: &str) -> Result<Scenario, String> {
        let toml = format!(
            "schema = 1\nseed = 1\nduration = \"10ms\"\n[machine]\ncpus = 2\n\
             [[tasks]]\nname = \"a\"\nprogram = [{step}, {{ sleep = \"1ms\" }}]\n\
             [[tasks]]\nname = \"b\"\nprogram = [\"wait\"]\n"
        );
        Scenario::from_toml("w.toml", &toml).map_err(|e| e.to_string())
    }

    #[test]
    fn a_wake_step_may_be_sync_and_refuses_other_values_naming_the_key() {
        let target = WakeTarget::Task(crate::ids::TaskId(1));
        for (step, sync) in [("{ wake = \"b\" }", false), ("{ wake = \"b\", sync = true }", true)] {
            let s = waker(step).unwrap();
            assert_eq!(s.spec.tasks[0].program.steps[0], Step::Wake { target, sync }, "{step}");
        }
        let e = waker("{ wake = \"b\", sync = \"yes\" }").unwrap_err();
        assert!(e.contains("tasks.a.program[0].sync") && e.contains("expected true or false"), "{e}");
        let e = waker("{ wake = \"b\", depth = 4 }").unwrap_err();
        assert!(e.contains("tasks.a.program[0].depth") && e.contains("allowed: sync"), "{e}");
    }
}
