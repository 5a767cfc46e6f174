//! JSON Schemas (feature `schema`) of the scenario format and of the `--json`
//! report, generated from the serde types themselves (`file.rs`,
//! `metrics/json.rs`) with `schemars`, so they follow every field added.
//!
//! Scenario values that `validate.rs` interprets stay `toml::Value` in
//! `file.rs`; the types here only describe what those values may be (a
//! duration as an integer of ns or a string with a unit, a step as a word or
//! a table, …) and are never constructed. The schema accepts what the parser
//! accepts; range checks that need the whole file (CPU numbers, task names in
//! `wake`) stay with the parser's error messages.

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use std::borrow::Cow;

/// A string matching what `workload::dist::parse_duration` reads.
const DURATION_PATTERN: &str = r"^\s*[0-9]+(\.[0-9]*)?\s*(ns|us|µs|ms|s)\s*$";

macro_rules! described {
    ($(#[$doc:meta])* $name:ident => $schema:tt) => {
        $(#[$doc])*
        pub enum $name {}
        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!($schema)
            }
        }
    };
}

described!(
    /// A duration: an integer of nanoseconds or a string with a unit.
    Duration => {
        "description": "A duration: an integer of nanoseconds, or a number with a unit ns, us, ms or s (\"50us\", \"1.5ms\"). Never negative.",
        "anyOf": [
            { "type": "integer", "minimum": 0, "maximum": 86_400_000_000_000u64 },
            { "type": "string", "pattern": DURATION_PATTERN }
        ]
    }
);

described!(
    /// A duration or a distribution of durations.
    Dist => {
        "description": "A duration (\"50us\", or an integer of ns) or a distribution: const(d), uniform(lo, hi), exp(mean), normal(mean, sd), lognormal(median, sigma), pareto(scale, shape), empirical(0%: d, …, 100%: d).",
        "anyOf": [
            { "type": "integer", "minimum": 0, "maximum": 86_400_000_000_000u64 },
            { "type": "string", "pattern": r"^\s*([0-9]|(const|uniform|exp|normal|lognormal|pareto|empirical)\s*\()" }
        ]
    }
);

described!(
    /// `machine.hz`.
    Hz => {
        "description": "CONFIG_HZ: the tick rate (default 250).",
        "type": "integer",
        "enum": [100, 250, 300, 1000]
    }
);

described!(
    /// `cfs.sched_tunable_scaling`.
    Scaling => {
        "description": "How the tunables scale with the CPU count: none, log (default) or linear (or 0, 1, 2 as the sysctl takes).",
        "anyOf": [
            { "type": "string", "enum": ["none", "log", "linear"] },
            { "type": "integer", "enum": [0, 1, 2] }
        ]
    }
);

described!(
    /// A sysfs tunable of an elevator.
    Tunable => {
        "description": "An elevator's sysfs tunable, as written to /sys/block/DEV/queue/iosched/NAME.",
        "type": ["integer", "boolean"]
    }
);

described!(
    /// A task's CPUs.
    CpuList => {
        "description": "A CPU list as taskset takes it (\"0-3,8\"), one CPU as a number, or one list per instance.",
        "anyOf": [
            { "type": "string" },
            { "type": "integer", "minimum": 0 },
            { "type": "array", "items": { "type": "string" } }
        ]
    }
);

described!(
    /// `machine.isolcpus`.
    Isolcpus => {
        "description": "The isolcpus= boot parameter: a CPU list (\"2-3\"), or one CPU as a number.",
        "anyOf": [
            { "type": "string" },
            { "type": "integer", "minimum": 0 }
        ]
    }
);

described!(
    /// cgroup v2 `cpu.max`.
    CpuMax => {
        "description": "cgroup v2 cpu.max: \"QUOTA PERIOD\", \"max PERIOD\", \"QUOTA\" or \"max\" (µs), or the quota as a number of µs.",
        "anyOf": [
            { "type": "string" },
            { "type": "integer", "minimum": 0 }
        ]
    }
);

described!(
    /// One step of a task's program.
    Step => {
        "description": "A step: a bare word (wait, serve, yield, fdatasync) or a table with one step key (run, sleep, sleep_until, wait, wake, serve, yield, read, write, fdatasync, wait_io) and its options.",
        "anyOf": [
            { "type": "string", "enum": ["wait", "serve", "yield", "fdatasync"] },
            {
                "type": "object",
                "minProperties": 1,
                "additionalProperties": false,
                "properties": {
                    "run": { "$ref": "#/$defs/Dist" },
                    "enter_kernel_every": {
                        "description": "run: enter the kernel this often while the burst runs (as a clock_gettime(CLOCK_THREAD_CPUTIME_ID) call does), at least 1us; a duration.",
                        "$ref": "#/$defs/Duration"
                    },
                    "sleep": { "$ref": "#/$defs/Dist" },
                    "sleep_until": { "$ref": "#/$defs/Duration" },
                    "offset": {
                        "description": "sleep_until: the phase within the period (a duration); read/write: where the region starts (a size such as \"1GiB\").",
                        "type": ["integer", "string"]
                    },
                    "wake": { "type": "string", "description": "A task name, or a comm like name/2." },
                    "wait_io": { "type": "string", "description": "A task name, or a comm like name/2." },
                    "wait": { "type": "boolean" },
                    "serve": { "const": true },
                    "yield": { "const": true },
                    "fdatasync": { "const": true },
                    "read": { "type": "string", "description": "A size or a distribution of sizes (\"4KiB\", \"uniform(4KiB, 64KiB)\")." },
                    "write": { "type": "string", "description": "A size or a distribution of sizes (\"4KiB\", \"uniform(4KiB, 64KiB)\")." },
                    "device": { "type": "string" },
                    "sync": { "type": "boolean", "description": "read/write: a synchronous request (REQ_SYNC); wake: WF_SYNC, the waker sleeps next (wake_up_interruptible_sync)." },
                    "meta": { "type": "boolean" },
                    "prio": { "type": "boolean" },
                    "depth": { "type": "integer", "minimum": 1, "maximum": 4096 },
                    "pattern": { "type": "string", "enum": ["sequential", "seq", "random", "rand"] },
                    "span": { "type": "string" },
                    "io_class": { "type": "string", "description": "read/write through a userspace I/O queue's class: \"QUEUE.CLASS\" ([io_queues.QUEUE.classes.CLASS])." }
                }
            }
        ]
    }
);

described!(
    /// `[variants.NAME]` tables.
    Variants => {
        "description": "Named sets of overrides: [variants.NAME] tables whose keys are --set key paths (\"cfs.sched_latency_ns\" = \"6ms\") or nested tables.",
        "type": "object",
        "additionalProperties": { "type": "object" }
    }
);

/// Generated schemas carry a title and an id naming the committed file.
fn finish(mut schema: Schema, title: &str, file: &str) -> serde_json::Value {
    schema.insert("title".into(), title.into());
    schema.insert("$id".into(), format!("https://schedlab.invalid/docs/schema/{file}").into());
    schema.to_value()
}

/// The JSON Schema of a scenario file (TOML read as JSON), from `ScenarioFile`.
/// `Step` refers to `Dist` and `Duration` in `$defs`: fields of the file use
/// both, so they are there.
pub fn scenario_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(crate::scenario::file::ScenarioFile);
    finish(schema, "schedlab scenario file (schema = 1)", "scenario.schema.json")
}

/// The JSON Schema of `run --json` (`report_json`).
pub fn report_schema() -> serde_json::Value {
    finish(crate::report::json::schema(), "schedlab run report (--json, schema 1)", "report.schema.json")
}
