//! Ctrl-C, SIGTERM and SIGHUP during `sim-cli measure`: instead of dying with
//! cgroups created and sysctls changed, the process sets a flag that the
//! runner polls; it then stops its workers and runs the normal cleanup
//! (`Cgroups::remove`, `SysctlGuard::restore`). Once the host is restored,
//! `uninstall` makes the signals end the process again (exit status 130).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Context as _;

/// The flag the runner polls, and whether a signal now ends the process.
struct State {
    flag: Arc<AtomicBool>,
    exit_now: Arc<AtomicBool>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// SIGINT, SIGTERM and SIGHUP set a flag (signal-hook) instead of killing us;
/// returns it, cleared. The handlers are registered once per process;
/// later calls (after `uninstall`, for the next run) re-arm them.
pub fn install() -> anyhow::Result<Arc<AtomicBool>> {
    let mut state = STATE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(s) = state.as_ref() {
        if s.exit_now.load(Ordering::SeqCst) {
            s.flag.store(false, Ordering::SeqCst);
            s.exit_now.store(false, Ordering::SeqCst);
        }
        return Ok(Arc::clone(&s.flag));
    }
    let s = State { flag: Arc::new(AtomicBool::new(false)), exit_now: Arc::new(AtomicBool::new(false)) };
    for (signal, name) in [
        (signal_hook::consts::SIGINT, "SIGINT"),
        (signal_hook::consts::SIGTERM, "SIGTERM"),
        (signal_hook::consts::SIGHUP, "SIGHUP"),
    ] {
        // The shutdown action first: once `exit_now` is set, the signal ends the process.
        signal_hook::flag::register_conditional_shutdown(signal, 130, Arc::clone(&s.exit_now))
            .and_then(|_| signal_hook::flag::register(signal, Arc::clone(&s.flag)))
            .with_context(|| format!("installing the {name} handler (signal-hook)"))?;
    }
    let flag = Arc::clone(&s.flag);
    *state = Some(s);
    Ok(flag)
}

/// Calls `wake` from a thread of its own each time SIGINT, SIGTERM or SIGHUP
/// arrives (after the flag is set: signal-hook runs a signal's actions in
/// the order they were registered), until the returned guard is dropped.
/// The thread sleeps in a blocking read of signal-hook's self-pipe, so the
/// measured window has no periodic wake-up of this process.
pub fn wake_on_signal(wake: impl Fn() + Send + 'static) -> anyhow::Result<WakeGuard> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("watching SIGINT, SIGTERM and SIGHUP (signal-hook)")?;
    let handle = signals.handle();
    std::thread::spawn(move || {
        for _ in signals.forever() {
            wake();
        }
    });
    Ok(WakeGuard(handle))
}

/// Stops `wake_on_signal`'s thread when dropped.
pub struct WakeGuard(signal_hook::iterator::Handle);

impl Drop for WakeGuard {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// From now on SIGINT, SIGTERM and SIGHUP end the process (status 130), as
/// before `install`: for what runs after the host was restored.
pub fn uninstall() {
    if let Some(s) = STATE.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).as_ref() {
        s.exit_now.store(true, Ordering::SeqCst);
    }
}

/// True once SIGINT, SIGTERM or SIGHUP arrived while installed; false before
/// `install` and after `uninstall`.
pub fn interrupted() -> bool {
    STATE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .as_ref()
        .is_some_and(|s| !s.exit_now.load(Ordering::SeqCst) && s.flag.load(Ordering::SeqCst))
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
        uninstall();
        assert!(!interrupted(), "after uninstall nothing is interrupted");
        let again = install().expect("install after uninstall");
        assert!(Arc::ptr_eq(&first, &again) && !again.load(Ordering::SeqCst), "re-armed and cleared");
        assert!(!interrupted());
    }
}
