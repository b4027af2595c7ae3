//! What the engine does on its own clock besides moving frames: the measurement window's
//! edges (every port sampled), time-series samples, `--plot` samples and deadlock checks —
//! none of which changes the network.

use super::{Ev, Sim};
use crate::measure::{Samples, Window};
use lossless_buffer_model::Time;

impl Sim {
    /// Sample every port where the measurement window opens or closes.
    pub(super) fn sample_window(&mut self, open: bool) {
        let samples = Samples::take(
            self.switches.iter().map(|n| &n.sw),
            self.hosts.iter().map(|n| &n.host),
            self.now,
        );
        if open {
            self.window_open = Some((self.now, samples));
        } else {
            self.window_close = Some((self.now, samples));
        }
    }

    /// The measurement window as run (after `run`): from `measure.from` (or 0) to
    /// `measure.to` or the end of the run, whichever came first.
    pub(super) fn window(&self) -> Window {
        let end = self.window_close.clone().unwrap_or_else(|| {
            let s = Samples::take(
                self.switches.iter().map(|n| &n.sw),
                self.hosts.iter().map(|n| &n.host),
                self.end,
            );
            (self.end, s)
        });
        // A run that ended before the window opened has an empty window at its end.
        let start = self.window_open.clone().unwrap_or_else(|| end.clone());
        Window {
            from: start.0,
            to: end.0,
            start: start.1,
            end: end.1,
        }
    }

    /// A run that waits for idle has nothing left to do (and `now` is past its start).
    fn done(&self) -> bool {
        self.until_idle && self.now > Time::ZERO && self.idle()
    }

    /// Run the deadlock indicator now and schedule its next check. True when the run should
    /// stop: it waits for idle, and a deadlock stands that no watchdog on its switches can
    /// break.
    pub(super) fn check_deadlock(&mut self) -> bool {
        let now = self.now;
        let Some(w) = &mut self.deadlocks else {
            return false;
        };
        let new = w.check(now, &self.switches);
        let next = w.next_check(now);
        if new && self.until_idle {
            let d = w.found().last().expect("a new deadlock");
            let breakable = d
                .cycle
                .iter()
                .any(|x| self.switches[x.switch].sw.config().qos.pfcwd.is_some());
            if !breakable {
                return true;
            }
        }
        let done = self.until_idle && self.idle();
        if next <= self.end && !done {
            self.queue.push(next, Ev::DeadlockCheck);
        }
        false
    }

    /// Take a `--plot` sample and schedule the next.
    pub(super) fn record(&mut self) {
        let now = self.now;
        let done = self.done();
        let Some(r) = &mut self.recorder else { return };
        let flows: Vec<_> = self
            .scenario
            .run
            .flows
            .iter()
            .map(|f| {
                let dcqcn = self.hosts[f.src]
                    .host
                    .flows
                    .iter()
                    .any(|t| t.spec.id == f.spec.id && t.dcqcn.is_some());
                let rx = self.hosts[f.dst]
                    .host
                    .receiver(f.spec.id)
                    .expect("each flow's receiver is at its destination");
                (f.spec.name.as_str(), dcqcn, rx)
            })
            .collect();
        let link_bps: Vec<u64> = self
            .scenario
            .run
            .flows
            .iter()
            .map(|f| self.hosts[f.dst].host.speed().bps())
            .collect();
        r.sample(now, &self.switches, &self.hosts, &flows, &link_bps);
        let next = now + r.interval;
        let to = self.record_window.map_or(self.end, |w| w.1.min(self.end));
        if next <= to && !done {
            self.queue.push(next, Ev::Record);
        }
    }

    /// Write a time-series sample and schedule the next.
    pub(super) fn sample(&mut self) -> Result<(), super::SimError> {
        let now = self.now;
        self.observers
            .sample(now, &self.switches, &mut self.hosts)?;
        let next = self.observers.next_sample_after(now);
        if let Some(next) = next.filter(|n| *n <= self.end) {
            if !self.done() {
                self.queue.push(next, Ev::Sample);
            }
        }
        Ok(())
    }
}
