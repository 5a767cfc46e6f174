//! Ctrl-C, SIGTERM and SIGHUP during `sim-cli measure`: instead of dying with
//! cgroups created and sysctls changed, the process sets a flag that the
//! runner polls; it then stops its workers and runs the normal cleanup
//! (`Cgroups::remove`, `SysctlGuard::restore`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use anyhow::Context as _;

/// The one flag of this process, once `install` has succeeded.
static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
/// Serializes `install` so two callers never register the handlers twice.
static INSTALL: Mutex<()> = Mutex::new(());

/// SIGINT, SIGTERM and SIGHUP set a flag (signal-hook) instead of killing us;
/// returns it. Idempotent: later calls return the same flag and register
/// nothing more.
pub fn install() -> anyhow::Result<Arc<AtomicBool>> {
    let _serial = INSTALL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(flag) = FLAG.get() {
        return Ok(Arc::clone(flag));
    }
    let flag = Arc::new(AtomicBool::new(false));
    for (signal, name) in [
        (signal_hook::consts::SIGINT, "SIGINT"),
        (signal_hook::consts::SIGTERM, "SIGTERM"),
        (signal_hook::consts::SIGHUP, "SIGHUP"),
    ] {
        signal_hook::flag::register(signal, Arc::clone(&flag))
            .with_context(|| format!("installing the {name} handler (signal-hook)"))?;
    }
    // Only reached once: the mutex is held and FLAG was empty.
    let _ = FLAG.set(Arc::clone(&flag));
    Ok(flag)
}

/// True once SIGINT, SIGTERM or SIGHUP arrived after `install`; false before
/// `install`.
pub fn interrupted() -> bool {
    FLAG.get().is_some_and(|flag| flag.load(Ordering::SeqCst))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_is_idempotent_and_a_raised_sighup_sets_the_flag() {
        let first = install().expect("install");
        let second = install().expect("install again");
        assert!(Arc::ptr_eq(&first, &second), "install must return the same flag");
        // SIGHUP: nothing else in the test binary uses it; with the handler
        // installed it must set the flag instead of terminating the process.
        signal_hook::low_level::raise(signal_hook::consts::SIGHUP).expect("raise SIGHUP");
        assert!(interrupted());
        assert!(first.load(Ordering::SeqCst));
        first.store(false, Ordering::SeqCst);
        assert!(!interrupted());
    }
}
