//! The wall-clock driver: one [`Node`] — the switch of `lossless tap`, the host NIC of
//! `lossless gen` — run against real ports in real time, by one thread.
//!
//! A turn waits for work (the node's next deadline, or a frame's arrival, or a fixed
//! gathering time under load), takes what the ports bring ([`Ports::take`]: frames and
//! link changes), hands it to the node, starts every frame the node has due
//! ([`Node::poll_due`]) and gives the started frames back to the ports
//! ([`Ports::send`], then [`Ports::flush`] once per turn, so that ports can write in
//! batches). The node's own timers, shaping and PFC decide everything else: a frame sent
//! late is dated back by the transmitter's catch-up, so shaping stays exact when the
//! operating system wakes the thread late.
//!
//! What differs between the two tools is data, not code: how long a turn may wait
//! ([`Pacing`]), and the port I/O behind the [`Ports`] trait (TAPs and interfaces with a
//! writer thread each; one packet socket). Every turn is timed ([`turns`], the stall
//! detector).

pub mod turns;

use lossless_buffer_model::Time;
use lossless_pipeline::{Node, Packet};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use turns::Turns;

/// What the ports bring the node in a turn, in the order it happened.
#[derive(Debug)]
pub enum Input {
    /// A frame arrived on a port, as the node's wire model holds it.
    Frame(usize, Packet),
    /// A port's link came up (`true`) or went down.
    Link(usize, bool),
}

/// How a turn waits before it takes what the ports have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Until a frame arrives on any port, at most this long (zero: not at all).
    Arrival(Duration),
    /// This long whatever arrives: frames gather meanwhile and are taken in one batch, as
    /// a NIC moderates its interrupts under load.
    Gather(Duration),
}

/// The ports of a node driven in wall-clock time: batched I/O, the node's side of the
/// cables (smoltcp's `phy::Device`, one batch per turn instead of a token per frame).
pub trait Ports {
    /// Wait as `wait` says, then take up to `max` inputs into `into`; how long it waited.
    fn take(&mut self, wait: Wait, max: usize, into: &mut Vec<Input>) -> Duration;

    /// The last [`Ports::take`] left frames waiting (a round's share, or `max`): the next
    /// turn takes them without waiting.
    fn more_waiting(&self) -> bool;

    /// The node started `pkt` on `port`: put it on the wire (now, or with the turn's
    /// batch).
    fn send(&mut self, port: usize, pkt: Packet);

    /// Every frame of the turn has been handed to [`Ports::send`] (`started` of them):
    /// write what was kept for a batch.
    fn flush(&mut self, started: usize);
}

/// Under load, how long a turn gathers frames instead of waking at each one.
#[derive(Clone, Copy, Debug)]
pub struct Moderation {
    /// The gathering time of a busy turn.
    pub busy_wait: Duration,
    /// Frames moved (taken plus started) in a turn at or below which the load counts as
    /// light: the next turn wakes when a frame is due or arrives, as when idle.
    pub light_turn: usize,
}

/// How long turns may wait: the driver's settings for one tool.
#[derive(Clone, Copy, Debug)]
pub struct Pacing {
    /// Shortest timed wait: a deadline nearer than this is waited for this long (a
    /// wake-up costs more than being a little late).
    pub min_wait: Duration,
    /// Longest single wait, so that a stop request or a stats line is never later.
    pub max_wait: Duration,
    /// How long past the node's next deadline a turn may start, so that one wake-up
    /// starts several frames (a frame from a port still ends the wait at once).
    pub slack: Duration,
    /// Gathering under load; None: every turn wakes at the first arrival.
    pub moderation: Option<Moderation>,
    /// Most inputs taken in one turn, before the node transmits.
    pub batch: usize,
}

/// A node and its ports, driven in wall-clock time.
pub struct Driver<N, P> {
    /// The node (its counters, its buffer state).
    pub node: N,
    /// Its ports.
    pub ports: P,
    pacing: Pacing,
    start: Instant,
    turns: Turns,
    inputs: Vec<Input>,
    /// Frames moved (taken plus started) in the last turn.
    moved: usize,
}

impl<N: Node, P: Ports> Driver<N, P> {
    /// A driver whose clock starts now.
    pub fn new(node: N, ports: P, pacing: Pacing) -> Driver<N, P> {
        Driver {
            node,
            ports,
            pacing,
            start: Instant::now(),
            turns: Turns::default(),
            inputs: Vec::with_capacity(pacing.batch),
            moved: 0,
        }
    }

    /// The node's time: how long the driver has run.
    pub fn now(&self) -> Time {
        Time::from_duration(self.start.elapsed())
    }

    /// When the driver's clock started.
    pub fn started(&self) -> Instant {
        self.start
    }

    /// The turns taken so far, timed.
    pub fn turns(&self) -> &Turns {
        &self.turns
    }

    /// How the next turn waits: not at all when frames were left waiting or something is
    /// due; under load (moderation), a fixed gathering time; otherwise until the node's
    /// next deadline (plus the slack) or an arrival. Never past `until`.
    fn wait(&mut self, until: Option<Instant>) -> Wait {
        if self.ports.more_waiting() {
            return Wait::Arrival(Duration::ZERO);
        }
        let p = self.pacing;
        let mut until_due = match self.node.poll_timeout() {
            Some(t) => t
                .saturating_add(Time::from_duration(p.slack))
                .saturating_sub(self.now())
                .to_duration(),
            None => p.max_wait,
        };
        if let Some(u) = until {
            until_due = until_due.min(u.saturating_duration_since(Instant::now()));
        }
        match p.moderation {
            Some(m) if self.moved > 0 && self.moved <= m.light_turn => {
                Wait::Arrival(until_due.clamp(p.min_wait.min(m.busy_wait), m.busy_wait))
            }
            Some(m) if self.moved > 0 => Wait::Gather(m.busy_wait),
            _ if until_due.is_zero() => Wait::Arrival(Duration::ZERO),
            _ => Wait::Arrival(until_due.clamp(p.min_wait, p.max_wait)),
        }
    }

    /// One turn: wait, take what the ports bring, hand it to the node, start what is due.
    pub fn turn(&mut self, until: Option<Instant>) {
        let wait = self.wait(until);
        let mut inputs = std::mem::take(&mut self.inputs);
        let waited = self.ports.take(wait, self.pacing.batch, &mut inputs);
        let asked = match wait {
            Wait::Arrival(d) | Wait::Gather(d) => d,
        };
        self.turns.waited(asked, waited);
        self.turns.begin(Instant::now());
        let now = self.now();
        let mut taken = 0;
        for input in inputs.drain(..) {
            match input {
                Input::Frame(port, pkt) => {
                    taken += 1;
                    self.node.receive(port, pkt, now);
                }
                Input::Link(port, up) => self.node.set_link(port, up, now),
            }
        }
        self.inputs = inputs;
        let started = self.transmit(now);
        self.moved = taken + started;
    }

    /// Start every frame the node has due at `now` and flush the ports; how many started.
    fn transmit(&mut self, now: Time) -> usize {
        let ports = &mut self.ports;
        let mut started = 0;
        self.node.poll_due(now, &mut |port, pkt| {
            started += 1;
            ports.send(port, pkt);
        });
        ports.flush(started);
        started
    }

    /// Start what is due now and flush the ports: the last act before the ports close.
    pub fn finish(&mut self) {
        let now = self.now();
        self.transmit(now);
    }

    /// Take turns until `stop` is set, `until` has passed, or `between` — called after
    /// each turn (stats lines, live reports, a port that failed) — breaks.
    pub fn run(
        &mut self,
        stop: &AtomicBool,
        until: Option<Instant>,
        mut between: impl FnMut(&mut Self) -> ControlFlow<()>,
    ) {
        while !stop.load(Ordering::Relaxed) && until.is_none_or(|u| Instant::now() < u) {
            self.turn(until);
            if between(self).is_break() {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests;
