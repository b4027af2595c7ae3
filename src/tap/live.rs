//! The hand-off of live reports from the pipeline thread to the metrics endpoint.
//!
//! The pipeline thread owns the switch, so a request asks it for a fresh report
//! ([`Live::wanted`], looked at on every turn of its loop, at most 50 ms apart) and waits
//! for it; once the switch has stopped, requests get the final report at once, which is
//! why the last scrape and the JSON written at exit agree. Requests that wait together are
//! answered by the same report.

use crate::report::model::Report;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long a request waits for the pipeline thread's report.
pub const ANSWER_WAIT: Duration = Duration::from_secs(2);

#[derive(Default)]
struct State {
    /// Requests made, and the last one answered.
    asked: u64,
    answered: u64,
    report: Option<Arc<Report>>,
    /// The switch has stopped: `report` is final.
    finished: bool,
}

/// Reports handed from the pipeline thread to the HTTP thread.
#[derive(Default)]
pub struct Live {
    want: AtomicBool,
    state: Mutex<State>,
    ready: Condvar,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("wanted", &self.wanted())
            .finish()
    }
}

impl Live {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Does a request wait for a report? (The pipeline thread asks on every turn.)
    pub fn wanted(&self) -> bool {
        self.want.load(Ordering::Relaxed)
    }

    /// Answer the requests waiting with `r`.
    pub fn publish(&self, r: Report) {
        let mut s = self.lock();
        self.want.store(false, Ordering::Relaxed);
        s.answered = s.asked;
        s.report = Some(Arc::new(r));
        self.ready.notify_all();
    }

    /// The switch stopped: `r` is the final report, the answer to every later request.
    pub fn finish(&self, r: Report) {
        self.publish(r);
        self.lock().finished = true;
    }

    /// A report at least as new as this call (None if the pipeline thread did not answer
    /// within [`ANSWER_WAIT`]). Blocks: the HTTP server calls it off its event loop.
    pub fn fetch(&self) -> Option<Arc<Report>> {
        let mut s = self.lock();
        if s.finished {
            return s.report.clone();
        }
        s.asked += 1;
        let ticket = s.asked;
        self.want.store(true, Ordering::Relaxed);
        let deadline = Instant::now() + ANSWER_WAIT;
        while s.answered < ticket && !s.finished {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            s = self
                .ready
                .wait_timeout(s, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        s.report.clone()
    }
}
