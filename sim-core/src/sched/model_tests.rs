//! Tests of the version table (`model.rs`): versions round-trip, the
//! settings a model lacks agree with validation, elevators per kernel.

use super::model::*;

#[test]
fn versions_round_trip() {
    for m in KernelModel::ALL {
        assert_eq!(KernelModel::parse(m.version()), Some(m));
    }
    assert_eq!(KernelModel::parse("6.10"), None);
    assert_eq!(KernelModel::default().label(), "linux-6.18-eevdf");
    assert_eq!(KernelModel::Linux44.label(), "linux-4.4-cfs");
    assert_eq!(KernelModel::allowed(), "\"4.4\", \"6.6\", \"6.12\", \"6.18\"");
    assert!(KernelModel::Linux44 < KernelModel::Linux66 && KernelModel::Linux612 < KernelModel::Linux618);
}

/// `lacks_setting` is exactly what validation refuses as another
/// model's setting: under each model, every fair-class key of every
/// model is refused (naming that key) if and only if it is lacking; a
/// misspelt feature is refused without being "lacking".
#[test]
fn lacks_setting_agrees_with_validation_under_every_model() {
    use crate::sched::tunables::{EevdfFeatures, SchedFeatures};
    const TOML: &str = "schema = 1\nseed = 1\nduration = \"10ms\"\n[machine]\ncpus = 1\n\
                        [[tasks]]\nname = \"t\"\nprogram = [{ run = \"1ms\" }]\n";
    let mut keys: Vec<(String, &str)> = Vec::new();
    for name in ["sched_latency_ns", "sched_min_granularity_ns", "sched_wakeup_granularity_ns", "base_slice_ns"] {
        keys.push((format!("cfs.{name}"), "\"3ms\""));
        keys.push((format!("cfs.base.{name}"), "\"3ms\""));
    }
    let features = KernelModel::ALL.into_iter().filter(|m| m.rules().fair_class == FairClassKind::Eevdf).flat_map(EevdfFeatures::names);
    for name in SchedFeatures::NAMES.into_iter().chain(features) {
        keys.push((format!("features.{name}"), "true"));
    }
    keys.push(("machine.clusters_per_socket".to_string(), "1"));
    keys.push(("fair_server.runtime".to_string(), "\"10ms\""));
    keys.push(("fair_server.period".to_string(), "\"500ms\""));
    keys.push(("rt.rt_group_sched".to_string(), "true"));
    let base = crate::Scenario::from_toml("t.toml", TOML).unwrap();
    let mut lacking = 0;
    for m in KernelModel::ALL {
        let under = base.with_overrides(&[("kernel.version", &format!("\"{}\"", m.version()))]).unwrap();
        for (key, value) in &keys {
            let result = under.with_overrides(&[(key.as_str(), *value)]);
            if m.lacks_setting(key) {
                lacking += 1;
                let e = result.expect_err(key);
                assert_eq!(e.key(), key, "{m:?}: {e}");
            } else {
                assert!(result.is_ok(), "{m:?} {key}: {:?}", result.err());
            }
        }
        let e = under.with_overrides(&[("features.NOT_A_FEATURE", "true")]).expect_err("a misspelt feature");
        assert!(!m.lacks_setting("features.NOT_A_FEATURE"), "{e}");
        assert!(!m.lacks_setting("machine.hz") && !m.lacks_setting("cfs.sched_tunable_scaling"));
    }
    assert!(KernelModel::Linux618.lacks_setting("cfs.sched_latency_ns"));
    assert!(KernelModel::Linux44.lacks_setting("features.\"PLACE_LAG\""));
    assert!(KernelModel::Linux44.lacks_setting("machine.clusters_per_socket"));
    assert!(!KernelModel::Linux66.lacks_setting("machine.clusters_per_socket"));
    assert!(lacking > 20, "{lacking}");
}

/// The fair server's keys and `rt.rt_group_sched` exist from 6.12 only:
/// lacking on 4.4 and 6.6 (so Compare drops them from a variant on those
/// models with a note), present on 6.12 and 6.18; the other `[rt]`
/// sysctls and the task keys of the RT and deadline classes are in every
/// model; a misspelt key under `[rt]` or `[fair_server]` is not lacking.
#[test]
fn fair_server_and_rt_group_sched_are_lacking_before_6_12() {
    let before = [KernelModel::Linux44, KernelModel::Linux66];
    for key in ["fair_server.runtime", "fair_server.period", "\"fair_server\".\"runtime\"", "rt.rt_group_sched"] {
        for m in KernelModel::ALL {
            assert_eq!(m.lacks_setting(key), before.contains(&m), "{m:?} {key}");
        }
    }
    for key in [
        "rt.sched_rt_runtime_us",
        "rt.sched_rt_period_us",
        "rt.sched_rr_timeslice_ms",
        "tasks.t.policy",
        "tasks.t.rt_priority",
        "tasks.t.dl_runtime",
        "fair_server.runtme",
        "fair_server",
        "rt.rt_group_schedd",
    ] {
        for m in KernelModel::ALL {
            assert!(!m.lacks_setting(key), "{m:?} {key}");
        }
    }
}

#[test]
fn elevators_follow_the_kernel() {
    assert_eq!(KernelModel::Linux44.default_elevator(1), "cfq");
    assert_eq!(KernelModel::Linux44.default_elevator(4), "cfq");
    for m in [KernelModel::Linux66, KernelModel::Linux612, KernelModel::Linux618] {
        assert_eq!(m.default_elevator(1), "mq-deadline");
        assert_eq!(m.default_elevator(2), "none");
        assert!(!m.elevators().contains(&"cfq") && m.elevators().contains(&"bfq"));
        assert!(m.elevator_history("noop").is_some_and(|h| h.contains("5.0")));
    }
    for m in KernelModel::ALL {
        assert!(m.elevators().contains(&m.default_elevator(1)) && m.elevators().contains(&m.default_elevator(8)));
    }
    assert!(!KernelModel::Linux44.elevators().contains(&"mq-deadline"));
}
