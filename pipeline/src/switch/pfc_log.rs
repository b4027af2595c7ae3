//! The PFC event log: each decision (a PG crossing into XOFF, a PG qualifying for XON) with
//! the occupancy behind it, each PFC frame sent, and each one received with when it takes
//! effect. Off unless an engine turns it on; the engine drains it.

use super::Switch;
use lossless_buffer_model::{Time, PRIORITIES};

/// One PFC decision or frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PfcEvent {
    /// Ingress PG `pg` of `port` crossed its shared limit: XOFF for `priorities`.
    XoffDecided {
        /// When.
        at: Time,
        /// Ingress port.
        port: u16,
        /// Priority group.
        pg: u8,
        /// Priorities the XOFF speaks for.
        priorities: u8,
        /// The PG's shared use then, bytes (the crossing frame went to headroom).
        shared_bytes: u64,
        /// The PG's headroom use then, bytes.
        headroom_bytes: u64,
        /// The shared limit the crossing frame was tested against (the pool's use counting
        /// the frame), bytes: `shared_bytes` plus the frame exceeds it.
        limit_bytes: u64,
    },
    /// Ingress PG `pg` of `port`, in XOFF, fell below its XON level with empty headroom.
    XonDecided {
        /// When.
        at: Time,
        /// Ingress port.
        port: u16,
        /// Priority group.
        pg: u8,
        /// Priorities the XON speaks for.
        priorities: u8,
        /// The PG's shared use then, bytes.
        shared_bytes: u64,
        /// The XON level: max(xon, limit − xon_offset), bytes.
        xon_level_bytes: u64,
    },
    /// A PFC frame started on `port` (an XOFF, its refresh, or an XON: quanta 0).
    Sent {
        /// When its first bit left.
        at: Time,
        /// Port.
        port: u16,
        /// Class-enable vector.
        enable: u8,
        /// Quanta per priority.
        quanta: [u16; PRIORITIES],
        /// The frame went out as an 802.3x PAUSE of the whole link.
        pause: bool,
    },
    /// A PFC (or, on a port speaking PAUSE, an 802.3x PAUSE) frame arrived on `port` and
    /// was acted on.
    Received {
        /// When its last bit arrived.
        at: Time,
        /// Port.
        port: u16,
        /// Priorities acted on.
        enable: u8,
        /// Quanta per priority.
        quanta: [u16; PRIORITIES],
        /// When it takes effect (arrival + the switch's pfc_response).
        effect_at: Time,
        /// It was an 802.3x PAUSE (every priority).
        pause: bool,
    },
}

impl Switch {
    /// Start (or stop) logging PFC events.
    pub fn log_pfc(&mut self, on: bool) {
        self.pfc_log = on.then(Vec::new);
    }

    /// The PFC events logged since the last call, oldest first.
    pub fn take_pfc_log(&mut self) -> Vec<PfcEvent> {
        self.pfc_log
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    pub(super) fn log(&mut self, e: impl FnOnce(&Switch) -> PfcEvent) {
        // Taken out while the event is built from the switch's state, then put back.
        if let Some(mut log) = self.pfc_log.take() {
            log.push(e(self));
            self.pfc_log = Some(log);
        }
    }

    /// PG `pg` of `port`: (shared bytes, headroom bytes, shared limit bytes, XON level).
    pub(super) fn pg_levels(&self, port: usize, pg: usize) -> (u64, u64, u64, u64) {
        let g = self.mmu.pg(port, pg);
        let cell = self.mmu.cell();
        (
            g.shared_used * cell,
            g.headroom_used * cell,
            self.mmu.pg_limit_bytes(port, pg),
            self.mmu.pg_xon_level_bytes(port, pg),
        )
    }
}
