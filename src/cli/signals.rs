//! Stopping on a signal: SIGINT, SIGTERM and SIGHUP set a flag the long-running
//! subcommands look at, so that they stop cleanly and still write what they have; a second
//! signal of the same kind ends the process at once.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// The signals that ask a run or a switch to stop.
const STOP_SIGNALS: [i32; 3] = [
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
];

/// Stop requests: set by a signal, read by the subcommand.
#[derive(Clone, Debug)]
pub struct Signals {
    /// Set when any stop signal arrived.
    pub stop: Arc<AtomicBool>,
    /// The last signal that arrived (0: none).
    last: Arc<AtomicUsize>,
}

impl Signals {
    /// Catch SIGINT, SIGTERM and SIGHUP. The first sets [`Signals::stop`]; a second one
    /// ends the process with status 128 + its number (as a shell reports a signal).
    pub fn catch() -> std::io::Result<Signals> {
        let stop = Arc::new(AtomicBool::new(false));
        let last = Arc::new(AtomicUsize::new(0));
        for sig in STOP_SIGNALS {
            // Registered first, so that it sees the flag as it was before this signal.
            signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&stop))?;
            signal_hook::flag::register_usize(sig, Arc::clone(&last), sig as usize)?;
            signal_hook::flag::register(sig, Arc::clone(&stop))?;
        }
        Ok(Signals { stop, last })
    }

    /// Has a stop been asked for?
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The signal that asked for the stop, if any.
    pub fn received(&self) -> Option<i32> {
        match self.last.load(Ordering::Relaxed) {
            0 => None,
            s => Some(s as i32),
        }
    }

    /// The exit status of a process stopped by the signal received: 128 + its number.
    pub fn exit_status(&self) -> Option<u8> {
        self.received().map(|s| (128 + s) as u8)
    }
}

/// The signal's name, as a report says it.
pub fn name(sig: i32) -> &'static str {
    match sig {
        signal_hook::consts::SIGINT => "SIGINT",
        signal_hook::consts::SIGTERM => "SIGTERM",
        signal_hook::consts::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}
