//! What a switch can say about its own waits, for a deadlock detector that sees the whole
//! fabric: which egress queues are held by PFC with frames and no progress, and which
//! ingress ports (through which PGs) those frames came from. A cycle of such waits across
//! switches is a PFC deadlock.

use super::Switch;
use lossless_buffer_model::Time;

impl Switch {
    /// PFC priorities whose pause holds egress queue `q` (those mapped to it).
    pub fn queue_priorities(&self, q: usize) -> u8 {
        self.queue_pfc[q]
    }

    /// Since when egress queue `q` of `port` has been stuck at `now`: it holds frames, is
    /// held by a PFC pause (one the watchdog does not override), and has started no frame
    /// since the returned time (its last start, or when it last stopped being empty).
    /// None when it is not stuck.
    pub fn queue_stuck_since(&self, port: usize, q: usize, now: Time) -> Option<Time> {
        let p = &self.ports[port];
        if p.queues[q].is_empty() {
            return None;
        }
        let paused = p.link.paused_mask(now);
        if !self.queue_paused(port, q, paused) {
            return None;
        }
        Some(p.waiting_since[q])
    }

    /// Does egress queue `q` of `port` hold a frame that came in on `in_port` through a PG
    /// that pauses any of `prios` (so that the queue's wait keeps `in_port`'s peer paused on
    /// those priorities)?
    pub fn queue_holds_from(&self, port: usize, q: usize, in_port: usize, prios: u8) -> bool {
        self.frames.iter(&self.ports[port].queues[q]).any(|pkt| {
            pkt.meta.in_port as usize == in_port && self.pg_pfc[pkt.meta.pg as usize] & prios != 0
        })
    }
}
