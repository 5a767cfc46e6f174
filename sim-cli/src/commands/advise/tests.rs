//! Tests of `advise` as the CLI drives it: the answer is the same for any
//! `--jobs`, a fix's `set` list re-runs with `--set` and meets the target,
//! and bad flags are refused naming the flag and what is allowed.

use super::*;
use crate::args::{Cli, Command};
use clap::Parser;

const SCENARIO: &str = "schema = 1\nname = \"advise-test\"\nseed = 1\nduration = \"400ms\"\n\
    [kernel]\nversion = \"6.18\"\n[machine]\ncpus = 1\nhz = 250\ntick_offset = \"500us\"\n\
    [report]\nvictim = \"reactor\"\n\
    [[tasks]]\nname = \"reactor\"\ncpus = \"0\"\nprogram = [{ sleep_until = \"1ms\" }, { run = \"50us\" }]\n\
    [[tasks]]\nname = \"hog\"\ncount = 3\ncpus = \"0\"\nprogram = [{ run = \"1s\" }]\n";

fn file(tag: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("sim-cli-advise-{}-{tag}.toml", std::process::id()));
    std::fs::write(&p, SCENARIO).expect("write");
    p
}

fn args(path: &std::path::Path, extra: &[&str]) -> AdviseArgs {
    let mut v = vec!["sim-cli", "advise", path.to_str().expect("path")];
    v.extend_from_slice(extra);
    match Cli::try_parse_from(v).expect("parses").command {
        Command::Advise(a) => a,
        _ => unreachable!("advise"),
    }
}

#[test]
fn the_answer_is_the_same_for_any_jobs_and_its_fix_reruns_and_meets_the_target() {
    let p = file("jobs");
    let flags = ["--target", "reactor max <= 1ms", "--phases", "2", "--seeds", "2", "--budget", "200", "--json"];
    let one = advise(&args(&p, &[&flags[..], &["--jobs", "1"]].concat())).expect("advise").0;
    let two = advise(&args(&p, &[&flags[..], &["--jobs", "3"]].concat())).expect("advise").0;
    assert_eq!(one, two);
    let v: serde_json::Value = serde_json::from_str(&one).expect("JSON");
    assert_eq!(v["baseline"]["met"], false, "the hog's slice delays the reactor past 1 ms: {}", v["baseline"]);
    let fix = &v["fixes"][0];
    assert_eq!(fix["eval"]["met"], true, "some setting fixes it: {}", v["fixes"]);
    // Re-run the first fix as `run --set …` would, at every point of its band.
    let sets: Vec<String> =
        fix["set"].as_array().expect("set").iter().map(|s| s.as_str().expect("str").to_string()).collect();
    let base = crate::input::with_sets(&sim_core::Scenario::from_toml("t.toml", SCENARIO).expect("scenario"), &sets)
        .expect("the set list applies verbatim");
    let plan = BandPlan::new(2, 2).expect("plan");
    for p in plan.points(&base) {
        let r = sim_core::run(&plan.scenario(&base, &p).expect("point"));
        let max = r.task_delays.iter().find(|d| d.name == "reactor").expect("reactor").delay.max_ns;
        assert!(max <= 1_000_000, "{sets:?} at {p:?}: max {max}");
    }
    // Each change says how to apply it.
    assert!(
        fix["changes"].as_array().expect("changes").iter().all(|c| !c["apply"].as_array().expect("apply").is_empty())
    );
    let text = advise(&args(&p, &flags[..flags.len() - 1])).expect("text").0;
    assert!(text.contains("Sensitivity") && text.contains("apply:") && text.contains("Why (reactor"), "{text}");
    std::fs::remove_file(&p).ok();
}

#[test]
fn bad_flags_name_the_flag_and_what_is_allowed() {
    let p = file("bad");
    for (extra, says) in [
        (vec!["--target", "reactor p98 <= 1ms"], "--target reactor p98 <= 1ms: unknown statistic"),
        (vec!["--target", "nobody max <= 1ms"], "no task `nobody`"),
        (vec!["--target", "reactor max <= 1ms", "--knobs", "placment"], "--knobs placment: unknown family `placment`"),
        (vec!["--target", "reactor max <= 1ms", "--budget", "0"], "--budget 0: allowed 1 to"),
        (vec!["--target", "reactor max <= 1ms", "--phases", "65"], "--phases 65: allowed 1 to 64"),
        (vec!["--target", "request q p99 <= 1ms"], "no source `q` whose requests cross a hop"),
    ] {
        let e = format!("{:#}", advise(&args(&p, &extra)).expect_err("refused"));
        assert!(e.contains(says), "{extra:?}: {e}");
    }
    std::fs::remove_file(&p).ok();
}

#[test]
fn verify_measures_the_users_sets_with_the_fixs_replacing_the_same_keys() {
    let user = vec!["duration=2s".to_string(), "cfs.base_slice_ns=3ms".to_string()];
    let fix = vec!["cfs.base_slice_ns=100us".to_string(), "features.HRTICK=true".to_string()];
    assert_eq!(verify_sets(&user, &fix), vec!["duration=2s", "cfs.base_slice_ns=100us", "features.HRTICK=true"]);
}
