//! One port's transmitter, under its link layer ([`crate::link::LinkLayer`]): the wire
//! (busy until the frame being sent ends: `(len + 20) × 8` bit times), link and enable
//! state, the port's frame counters, and — for a wall-clock engine that wakes late — how
//! far back a frame's start may be dated. It keeps the owner's answer to "when may the
//! next frame start" until the owner [`touch`]es it.
//!
//! [`touch`]: Transmitter::touch

use crate::counters::PortCounters;
use lossless_buffer_model::{Rate, Time, WireTimes};
use std::cell::Cell;

/// The transmit side of one port.
#[derive(Clone, Debug)]
pub struct Transmitter {
    /// The line rate, and the wire time of the last data frame's length.
    wire: WireTimes,
    /// Link is up (frames can arrive and leave).
    pub link_up: bool,
    /// Transmitter enabled (`tx: disable` holds frames back).
    pub tx_enabled: bool,
    /// The frame being sent finishes at this time.
    pub busy_until: Time,
    /// Frame, byte and PFC counters.
    pub counters: PortCounters,
    /// How far back a late poll may date a frame's start (0: exact, the virtual-time case).
    catch_up: Time,
    /// The owner's next possible start, as last computed; None once something changed.
    next: Cell<Option<Option<Time>>>,
}

impl Transmitter {
    /// The transmitter of a port at `speed`.
    pub fn new(speed: Rate) -> Transmitter {
        Transmitter {
            wire: WireTimes::new(speed),
            link_up: true,
            tx_enabled: true,
            busy_until: Time::ZERO,
            counters: PortCounters::default(),
            catch_up: Time::ZERO,
            next: Cell::new(None),
        }
    }

    /// Line rate.
    pub fn speed(&self) -> Rate {
        self.wire.speed()
    }

    /// Let a late poll date a frame's start up to `window` into the past (never before the
    /// wire was free, the frame was ready, or a pause of its priorities ended).
    pub fn set_catch_up(&mut self, window: Time) {
        self.catch_up = window;
    }

    /// The earliest a frame polled at `now` may be dated to as far as the wire goes: None
    /// without a catch-up window (exactly `now`), else the later of the window's start and
    /// the end of the frame before.
    #[inline]
    pub fn catch_up_from(&self, now: Time) -> Option<Time> {
        (self.catch_up != Time::ZERO)
            .then(|| now.saturating_sub(self.catch_up).max(self.busy_until))
    }

    /// May a frame start at `now`: link up, transmitter enabled, wire free?
    #[inline]
    pub fn idle_at(&self, now: Time) -> bool {
        self.link_up && self.tx_enabled && self.busy_until <= now
    }

    /// When the wire is free, as of `now` (None: link down or transmitter disabled).
    #[inline]
    pub fn free_from(&self, now: Time) -> Option<Time> {
        (self.link_up && self.tx_enabled).then(|| self.busy_until.max(now))
    }

    /// A data frame of `len` bytes starts at `start`: counted, the wire busy for it.
    #[inline]
    pub fn start(&mut self, start: Time, len: u32) {
        self.counters.tx_packets += 1;
        self.counters.tx_bytes += len as u64;
        let wire = self.wire.of(len as u64);
        self.busy_until = start + wire;
        self.counters.tx_busy += wire;
        self.touch();
    }

    /// A control frame (counted by its link protocol) starts at `now`: the wire busy for
    /// its `wire` time.
    #[inline]
    pub fn start_control(&mut self, now: Time, wire: Time) {
        self.busy_until = now + wire;
        self.counters.tx_busy += wire;
    }

    /// The owner's next possible start: the cached answer, or `compute()`'s (kept until
    /// the next [`Self::touch`]).
    #[inline]
    pub fn next_start(&self, compute: impl FnOnce() -> Option<Time>) -> Option<Time> {
        if let Some(t) = self.next.get() {
            return t;
        }
        let t = compute();
        self.next.set(Some(t));
        t
    }

    /// Is the owner's next start kept (not touched since it was last computed)?
    pub fn next_start_kept(&self) -> bool {
        self.next.get().is_some()
    }

    /// Something behind the transmitter changed: the next start is computed again.
    #[inline]
    pub fn touch(&self) {
        self.next.set(None);
    }

    /// Enable or disable the transmitter.
    pub fn set_enabled(&mut self, enabled: bool) {
        self.tx_enabled = enabled;
        self.touch();
    }

    /// Time the wire was busy before `t` (at or after the latest frame's start).
    pub fn busy_time(&self, t: Time) -> Time {
        self.counters.busy_before(t, self.busy_until)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_busies_the_wire_for_its_wire_time() {
        let mut t = Transmitter::new(Rate::gbps(100));
        assert!(t.idle_at(Time::ZERO));
        t.start(Time::ZERO, 1518);
        assert_eq!(t.busy_until, Time::from_ps(123_040));
        assert!(!t.idle_at(Time::from_ps(123_039)));
        assert_eq!(t.free_from(Time::ZERO), Some(Time::from_ps(123_040)));
        t.set_enabled(false);
        assert_eq!(t.free_from(Time::ZERO), None);
    }

    #[test]
    fn the_next_start_is_kept_until_touched() {
        let t = Transmitter::new(Rate::gbps(100));
        assert_eq!(
            t.next_start(|| Some(Time::from_ns(1))),
            Some(Time::from_ns(1))
        );
        assert_eq!(t.next_start(|| None), Some(Time::from_ns(1)));
        t.touch();
        assert_eq!(t.next_start(|| None), None);
    }
}
