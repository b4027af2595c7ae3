//! The one interface every engine drives a network node through — a switch or a host NIC —
//! with explicit time (docs/architecture.md, "The core"): frames in with [`Node::receive`], everything due out
//! with [`Node::poll_due`], and when to come back with [`Node::poll_timeout`]. The
//! virtual-time simulator, the TAP engine, `lossless gen` and the pipeline bench all call
//! exactly these, so each measures and exercises the same path.

use crate::packet::Packet;
use lossless_buffer_model::{Rate, Time};

/// A sans-IO network node: it never reads a clock and never does I/O.
pub trait Node {
    /// The last bit of `pkt` arrived on `port` at `now` (a host NIC has one port, 0).
    fn receive(&mut self, port: usize, pkt: Packet, now: Time);

    /// Act on everything due at `now` (PFC refreshes, timers) and hand every frame that
    /// starts by `now` to `emit(port, frame)`, ports in order: one frame per port and call
    /// in virtual time, a bounded catch-up burst in wall-clock time.
    fn poll_due(&mut self, now: Time, emit: &mut dyn FnMut(usize, Packet));

    /// The earliest time at which something can happen (a frame may start, a timer runs
    /// out); None when nothing is pending. A time before the latest `now` means at once.
    fn poll_timeout(&mut self) -> Option<Time>;

    /// Would [`Node::poll_timeout`] answer as it did when last called? True only when the
    /// node knows that nothing it reads has changed since (a frame queued behind another
    /// one, a frame a receiver only counts); an engine that kept the last answer may then
    /// skip asking. False means "ask again".
    fn deadline_unchanged(&self) -> bool {
        false
    }

    /// Line rate of `port`: how long its frames take on the wire.
    fn port_speed(&self, port: usize) -> Rate;

    /// `port`'s link came up or went down at `now` (its cable was plugged or pulled, its
    /// peer's interface set up or down). Down drops what the port had queued and forgets
    /// the pauses its peer asked for.
    fn set_link(&mut self, port: usize, up: bool, now: Time);
}
