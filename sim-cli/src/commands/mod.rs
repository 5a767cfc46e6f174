//! The dispatcher: one arm per subcommand, each handing its parsed options
//! to that subcommand's file (or folder) and returning the text `main`
//! prints. The subcommands share the loading module (`crate::input`) and the
//! text output (`crate::output`); none imports another subcommand or this
//! dispatcher.

pub mod advise;
pub mod compare;
pub mod docs;
pub mod fit_device;
pub mod import;
pub mod measure;
pub mod rtapp;
pub mod run;
pub mod serve;
pub mod sweep;

use crate::args::{Cli, Command};
use anyhow::{Result, bail};

/// `advise`, then with `--verify` `validate` of its first fix: the two
/// subcommands composed here, neither importing the other.
fn advise_and_verify(a: &crate::args::AdviseArgs) -> Result<String> {
    let (out, fix) = advise::advise(a)?;
    if !a.verify {
        return Ok(out);
    }
    let Some(fix) = fix else {
        if a.common.json {
            return Ok(out);
        }
        return Ok(out + "\n--verify: no fix meets every target; nothing measured\n");
    };
    let opts = measure::Options {
        variant: a.variant.clone(),
        sets: advise::verify_sets(&a.common.set, &fix),
        duration: None,
        cpus: a.cpus.clone(),
        apply_sysctls: a.apply_sysctls,
        ignore_limiters: false,
        io_dir: None,
        no_perf: false,
        perf_data: None,
        progress: !a.common.json,
    };
    let pred = measure::validate::Prediction {
        also_kernel: None,
        noise: a.noise.as_deref(),
        phases: a.phases,
        seeds: a.seeds,
        rejudge: None,
    };
    let measured = measure::validate::validate(&a.common.file, &opts, a.verify_repeat, &pred, a.common.json)?;
    if a.common.json {
        let mut v: serde_json::Value = serde_json::from_str(&out)?;
        v["verify"] = serde_json::from_str(&measured)?;
        return Ok(serde_json::to_string_pretty(&v)? + "\n");
    }
    Ok(format!("{out}\nVerify: the first fix on this machine (--set {})\n{measured}", fix.join(" --set ")))
}

/// Carries out `cli`'s command and returns the text to print on stdout.
pub fn execute(cli: Cli) -> Result<String> {
    match cli.command {
        Command::Run(a) => run::run(a),
        Command::Compare(a) => compare::compare(a),
        Command::Measure(m) => measure::command(&m),
        Command::Validate { measure, repeat, also_kernel, noise, phases, seeds, rejudge } => {
            measure::validate::validate(
                &measure.common.file,
                &measure::Options::from_args(&measure),
                repeat,
                &measure::validate::Prediction {
                    also_kernel: also_kernel.as_deref(),
                    noise: noise.as_deref(),
                    phases,
                    seeds,
                    rejudge: rejudge.as_deref(),
                },
                measure.common.json,
            )
        }
        Command::Calibrate { repeat, duration, cpus, keep, from, output } => {
            measure::calibrate::calibrate(&measure::calibrate::Args {
                repeat,
                duration,
                cpus,
                keep,
                from,
                output,
                progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
            })
        }
        Command::MeasureWorker => bail!("`__measure-worker` is started by `measure`, not by hand"),
        Command::Sweep(a) => sweep::sweep(a),
        Command::Advise(a) => advise_and_verify(&a),
        Command::Merge { files, budget, json, plot } => {
            sweep::merge::merge(&files, budget.as_deref(), json, plot.as_deref())
        }
        Command::Completions { shell } => Ok(docs::completions(shell)),
        Command::Man { out_dir: None } => Ok(docs::man_page()),
        Command::Man { out_dir: Some(dir) } => {
            let files = docs::write_man_pages(&dir)?;
            eprintln!("wrote {} man pages to {}", files.len(), dir.display());
            Ok(String::new())
        }
        Command::Schema { what } => Ok(docs::schema(what)),
        Command::Serve { dir, port } => serve::serve(&dir, port).map(|()| String::new()),
        Command::FitDevice { files, name } => fit_device::command(&files, &name),
        Command::Import { trace, output, victim, kernel, hz, window, replay, set, json } => {
            import::command(&import::Args { trace, output, victim, kernel, hz, window, replay, set, json })
        }
        Command::Export { file, rt_app: _, variant, set, output } => {
            rtapp::command(&file, variant.as_deref(), &set, output.as_deref())
        }
    }
}

/// The text of an error as `main` prints it: every control character but
/// the line break shown escaped (a path from argv, a name from a file), so
/// an error cannot drive the terminal.
pub fn error_text(e: &anyhow::Error) -> String {
    let text = format!("{e:#}");
    text.split('\n').map(sim_core::escape_controls).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Every command that reads a user's file goes through the bounded
    /// reader: `run`/`compare`/`sweep`/`measure` (scenario), `merge`,
    /// `fit-device` and `export` all refuse `/dev/zero` quickly.
    #[test]
    fn every_reader_is_bounded() {
        let zero = Path::new("/dev/zero");
        let errors = [
            crate::input::load_text(zero, &[]).map(|_| ()).unwrap_err(),
            sweep::merge::merge(&[zero.to_path_buf()], None, false, None).map(|_| ()).unwrap_err(),
            fit_device::command(&[zero.to_path_buf()], "x").map(|_| ()).unwrap_err(),
            rtapp::command(zero, None, &[], None).map(|_| ()).unwrap_err(),
            import::command(&import::Args::of(zero)).map(|_| ()).unwrap_err(),
        ];
        for e in errors {
            let e = format!("{e:#}");
            assert!(e.starts_with("/dev/zero: the ") && e.contains("is larger than"), "{e}");
        }
    }
}
