//! What the engine does on its own clock besides moving frames: the measurement window's
//! edges (every port sampled), time-series samples, `--plot` samples and deadlock checks —
//! none of which changes the network.

use super::{Ev, Sim};
use crate::measure::{Samples, Window};
use lossless_buffer_model::{priorities_in, Time};
use lossless_pipeline::link::{Gate, LinkLayer};

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
            self.push(next, Ev::DeadlockCheck);
        }
        false
    }

    /// Run the LLR stall indicator now and schedule its next look. True when the run should
    /// stop: it waits for idle, a link has stalled for good, and no event of the scenario
    /// is left that could bring it back (a link taken down and up).
    pub(super) fn check_llr_stall(&mut self) -> bool {
        let now = self.now;
        let Some(w) = &mut self.llr_stalls else {
            return false;
        };
        let new = w.check(now, &self.cabling, &self.switches, &self.hosts);
        let next = now + w.period();
        if new && self.until_idle && self.scheduled_left == 0 {
            return true;
        }
        let done = self.until_idle && self.idle();
        if next <= self.end && !done {
            self.push(next, Ev::LlrCheck);
        }
        false
    }

    /// Take a `--plot` sample and schedule the next.
    pub(super) fn record(&mut self) {
        let now = self.now;
        let done = self.done();
        let Some(changed) = self.record_sample_only() else {
            return;
        };
        let interval = self.recorder.as_ref().map_or(Time::ZERO, |r| r.interval);
        let mut next = now + interval;
        let to = self.record_window.map_or(self.end, |w| w.1.min(self.end));
        // Nothing moved since the last sample and nothing is on a wire: nothing changes
        // before the next deadline, scheduled event or pause expiry, so the stretch until
        // then is one gap, not a sample per interval (a 4 s retransmission timer).
        if !changed && !done && self.wire_empty() {
            let until = self.next_activity().map_or(to, |t| t.min(to));
            if until > now + Time(interval.as_ps() * 2) {
                if let Some(r) = &mut self.recorder {
                    r.hold(until - interval);
                }
                next = until;
            }
        }
        if next <= to && !done {
            self.push(next, Ev::Record);
        }
    }

    /// Take a `--plot` sample now; Some(something changed since the last), None without
    /// a recorder.
    fn record_sample_only(&mut self) -> Option<bool> {
        let now = self.now;
        let r = self.recorder.as_mut()?;
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
        Some(r.sample(now, &self.switches, &self.hosts, &flows, &link_bps))
    }

    /// When something may next change the network's state: the earliest node deadline,
    /// scheduled event or end of a pause in effect (None: nothing ever will). A node due
    /// now has not acted yet (the run's own events come first at an instant): that is now.
    fn next_activity(&self) -> Option<Time> {
        let now = self.now;
        let nodes = self.switches.len() + self.hosts.len();
        let wakes = (0..nodes).filter_map(|i| self.wake_time(i));
        if wakes.clone().any(|t| t <= now) {
            return Some(now);
        }
        let events = self
            .scenario
            .run
            .events
            .iter()
            .map(|e| e.at)
            .filter(|t| *t > now);
        let mut resumes = Vec::new();
        for s in &self.switches {
            for port in s.sw.ports() {
                pause_ends(&port.link, now, &mut resumes);
            }
        }
        for h in &self.hosts {
            pause_ends(&h.host.link, now, &mut resumes);
        }
        wakes
            .chain(events)
            .chain(resumes)
            .filter(|t| *t > now)
            .min()
    }

    /// The `--plot` recording's last sample at the run's end (or its window's), so that
    /// every figure reaches it.
    pub(super) fn record_end(&mut self) {
        let end = self.record_window.map_or(self.end, |w| w.1.min(self.end));
        let from = self.record_window.map_or(Time::ZERO, |w| w.0);
        let last = self.recorder.as_ref().and_then(|r| r.last_time());
        if last.is_some_and(|t| t < end) && end >= from {
            let saved = self.now;
            self.now = end;
            self.record_sample_only();
            self.now = saved;
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
                self.push(next, Ev::Sample);
            }
        }
        Ok(())
    }
}

/// When each priority `link`'s peer holds paused at `now` may send again, onto `ends`.
fn pause_ends(link: &LinkLayer, now: Time, ends: &mut Vec<Time>) {
    for p in priorities_in(link.paused_mask(now)) {
        if let Gate::Until(t) = link.gate(1 << p, now) {
            ends.push(t);
        }
    }
}
