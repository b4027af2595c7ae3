//! Processes the TAP tests start and must end: a CPU hog, a reaper for a server.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A busy loop on every core while it lives (killed, by pid, on drop).
pub struct Hog {
    procs: Vec<Child>,
}

impl Hog {
    /// One busy-loop process per core.
    pub fn start() -> Hog {
        let n = std::thread::available_parallelism().map_or(2, |n| n.get());
        let procs = (0..n)
            .map(|_| {
                Command::new("sh")
                    .args(["-c", "while :; do :; done"])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .expect("sh")
            })
            .collect();
        Hog { procs }
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        for p in &mut self.procs {
            let _ = p.kill();
            let _ = p.wait();
        }
    }
}

/// A process this test started, killed (by pid) on drop if it has not finished.
pub struct Reaper(pub Option<Child>);

impl Reaper {
    /// Wait at most `limit` for it to finish.
    pub fn wait(&mut self, limit: Duration) {
        let deadline = Instant::now() + limit;
        if let Some(c) = self.0.as_mut() {
            while c.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
