//! How the calling thread is scheduled: timer slack, and real-time priority.
//!
//! A wall-clock switch and a paced generator wake every few microseconds; the default
//! 50 µs timer slack would make each wake-up that late. And a busy machine (a CPU hog on
//! every core) would delay their wake-ups by whole scheduler time slices, so that frames
//! sit in queues that PFC headroom must cover: with `SCHED_FIFO` they run as soon as they
//! are runnable. The kernel's real-time throttling (`sched_rt_runtime_us`, 95 % by default)
//! keeps a runaway real-time thread from locking up the machine.

use std::io;

/// Set the calling thread's timer slack (how late the kernel may fire its timed waits) to
/// `ns` nanoseconds.
pub fn set_timer_slack(ns: u64) -> io::Result<()> {
    // SAFETY: prctl(PR_SET_TIMERSLACK, value) reads only its integer arguments.
    let rc = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Run the calling thread under `SCHED_FIFO` at `priority` (1–99; higher runs first).
/// Needs CAP_SYS_NICE (root) and a cgroup that grants real-time time.
pub fn set_realtime(priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: pid 0 is the calling thread; `param` is valid for the call.
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Whether a thread should run with real-time priority.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Realtime {
    /// Try, and run at normal priority when the system does not allow it.
    #[default]
    Auto,
    /// Require it (an error when not allowed).
    On,
    /// Normal priority.
    Off,
}

impl std::str::FromStr for Realtime {
    type Err = String;
    fn from_str(s: &str) -> Result<Realtime, String> {
        match s {
            "auto" => Ok(Realtime::Auto),
            "on" => Ok(Realtime::On),
            "off" => Ok(Realtime::Off),
            _ => Err(format!("`{s}`: expected auto, on or off")),
        }
    }
}

impl Realtime {
    /// Apply to the calling thread at `priority`: Ok(true) when it now runs real-time.
    pub fn apply(self, priority: i32) -> io::Result<bool> {
        match self {
            Realtime::Off => Ok(false),
            Realtime::Auto => Ok(set_realtime(priority).is_ok()),
            Realtime::On => set_realtime(priority).map(|_| true),
        }
    }
}
