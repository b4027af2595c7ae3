//! Counters in the shapes of SONiC's `portstat`, `pfcstat` and `queuestat`.

use lossless_buffer_model::{priorities_in, Time, PRIORITIES};

/// Per-priority PFC frame counters of one port (`pfcstat`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PfcCounters {
    /// PFC frames sent that paused priority p (time > 0).
    pub tx_xoff: [u64; PRIORITIES],
    /// PFC frames sent that resumed priority p (time 0).
    pub tx_xon: [u64; PRIORITIES],
    /// PFC frames received that paused priority p.
    pub rx_xoff: [u64; PRIORITIES],
    /// PFC frames received that resumed priority p.
    pub rx_xon: [u64; PRIORITIES],
    /// When this port started its first frame pausing priority p: where a pause began
    /// (or spread to, hop by hop).
    pub first_tx_xoff: [Option<Time>; PRIORITIES],
    /// When this port started its last frame resuming priority p.
    pub last_tx_xon: [Option<Time>; PRIORITIES],
    /// When this port started its last frame pausing priority p (an XOFF or a refresh).
    pub last_tx_xoff: [Option<Time>; PRIORITIES],
}

impl PfcCounters {
    /// Count a frame with class-enable vector `enable` and `quanta`, sent or received.
    pub fn count(
        xoff: &mut [u64; PRIORITIES],
        xon: &mut [u64; PRIORITIES],
        enable: u8,
        quanta: &[u16; PRIORITIES],
    ) {
        for p in priorities_in(enable) {
            if quanta[p] > 0 {
                xoff[p] += 1;
            } else {
                xon[p] += 1;
            }
        }
    }
}

/// Frame and byte counters of one port (`portstat`); bytes count the FCS.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PortCounters {
    /// Frames received (good or bad).
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Frames received whose FCS check failed (corrupted on the wire; SAI
    /// `IF_IN_ERRORS`).
    pub rx_bad_fcs: u64,
    /// Frames sent (PFC frames included).
    pub tx_packets: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// PFC frames sent (any priority).
    pub tx_pfc_frames: u64,
    /// PFC frames received and acted on.
    pub rx_pfc_frames: u64,
    /// PFC per priority.
    pub pfc: PfcCounters,
    /// 802.3x PAUSE frames sent (any pause time, 0 included).
    pub tx_pause_frames: u64,
    /// 802.3x PAUSE frames received and acted on.
    pub rx_pause_frames: u64,
    /// Time the transmitter has been (or is committed to be) busy: the wire time of every
    /// frame started, preamble and gap included.
    pub tx_busy: Time,
}

impl PortCounters {
    /// Count a PFC frame this port started at `now` (`enable`, `quanta`): per priority, as a
    /// frame and as 64 bytes on the wire.
    pub fn count_pfc_sent(&mut self, enable: u8, quanta: &[u16; PRIORITIES], now: Time) {
        PfcCounters::count(&mut self.pfc.tx_xoff, &mut self.pfc.tx_xon, enable, quanta);
        for p in priorities_in(enable) {
            if quanta[p] > 0 {
                self.pfc.first_tx_xoff[p].get_or_insert(now);
                self.pfc.last_tx_xoff[p] = Some(now);
            } else {
                self.pfc.last_tx_xon[p] = Some(now);
            }
        }
        self.tx_pfc_frames += 1;
        self.tx_packets += 1;
        self.tx_bytes += crate::wire::pfc::PFC_FRAME_LEN as u64;
    }

    /// Count an 802.3x PAUSE frame this port started: as a frame and 64 bytes on the wire.
    pub fn count_pause_sent(&mut self) {
        self.tx_pause_frames += 1;
        self.tx_packets += 1;
        self.tx_bytes += crate::wire::pfc::PFC_FRAME_LEN as u64;
    }

    /// Time the transmitter was busy before `t`, given that its current frame ends at
    /// `busy_until` (`t` at or after that frame's start).
    pub fn busy_before(&self, t: Time, busy_until: Time) -> Time {
        self.tx_busy.saturating_sub(busy_until.saturating_sub(t))
    }

    /// Count a PFC frame this port received and acted on (`enable` already masked to the
    /// priorities it honours).
    pub fn count_pfc_received(&mut self, enable: u8, quanta: &[u16; PRIORITIES]) {
        PfcCounters::count(&mut self.pfc.rx_xoff, &mut self.pfc.rx_xon, enable, quanta);
        self.rx_pfc_frames += 1;
    }
}

/// Counters of one egress queue (`queuestat`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueCounters {
    /// Frames sent from this queue.
    pub tx_packets: u64,
    /// Bytes sent from this queue.
    pub tx_bytes: u64,
    /// Frames dropped on their way into (or out of) this queue.
    pub drop_packets: u64,
    /// Bytes dropped.
    pub drop_bytes: u64,
    /// Frames marked CE here.
    pub ecn_marked: u64,
    /// Non-ECT frames dropped by WRED here.
    pub wred_drops: u64,
    /// Packet trimming on this queue.
    pub trim: QueueTrimCounters,
}

crate::counter_group! {
    /// Packet trimming on one egress queue. A trimmed copy's fate is counted on the queue
    /// that trimmed it, whichever queue it left from: trim = tx_trim + dropped_trim + the
    /// copies still queued.
    pub struct QueueTrimCounters {
        /// Frames the buffer refused here that were trimmed (each is also a drop).
        trim_packets: Counter = "SAI_QUEUE_STAT_TRIM_PACKETS",
        /// Trimmed copies of this queue's frames sent.
        tx_trim_packets: Counter = "SAI_QUEUE_STAT_TX_TRIM_PACKETS",
        /// Trimmed copies of this queue's frames dropped in their turn.
        dropped_trim_packets: Counter = "SAI_QUEUE_STAT_DROPPED_TRIM_PACKETS",
    }
}

crate::counter_group! {
    /// Packet trimming on one port (the sum of its queues') or a whole switch.
    pub struct PortTrimCounters {
        /// Frames the buffer refused that were trimmed.
        trim_packets: Counter = "SAI_PORT_STAT_TRIM_PACKETS",
        /// Trimmed copies sent.
        tx_trim_packets: Counter = "SAI_PORT_STAT_TX_TRIM_PACKETS",
        /// Trimmed copies dropped in their turn.
        dropped_trim_packets: Counter = "SAI_PORT_STAT_DROPPED_TRIM_PACKETS",
    }
}

impl core::ops::AddAssign<&QueueTrimCounters> for PortTrimCounters {
    /// A queue's trimming into its port's.
    fn add_assign(&mut self, q: &QueueTrimCounters) {
        self.trim_packets += q.trim_packets;
        self.tx_trim_packets += q.tx_trim_packets;
        self.dropped_trim_packets += q.dropped_trim_packets;
    }
}

/// Where the frames a switch received went. Every received frame is consumed (a PFC frame
/// acted on), dropped before forwarding, or forwarded as one or more copies (flooding
/// makes several); every copy is refused (at admission, or on its way into a queue) or
/// queued; every queued copy is sent, dropped from its queue, or still queued.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ledger {
    /// Frames received on all ports.
    pub received: u64,
    /// MAC Control frames acted on (PFC).
    pub consumed: u64,
    /// Frames dropped before forwarding (malformed, no route, port down, …).
    pub dropped_on_receive: u64,
    /// Frames forwarded toward at least one egress port.
    pub forwarded: u64,
    /// Egress copies of forwarded frames (more than `forwarded` when flooding), and the
    /// trimmed copies of refused ones.
    pub copies: u64,
    /// Copies dropped before entering a queue (buffer limits, WRED at enqueue, watchdog,
    /// egress link down).
    pub refused: u64,
    /// Copies that entered an egress queue.
    pub queued: u64,
    /// Queued copies sent.
    pub sent: u64,
    /// Queued copies dropped from their queue (WRED at dequeue, watchdog, link down).
    pub dropped_from_queue: u64,
}

impl Ledger {
    /// Check the books given `in_queues` copies still queued and `drops` drops counted by
    /// reason: Err names the identity that does not hold.
    pub fn check(&self, in_queues: u64, drops: u64) -> Result<(), String> {
        let l = self;
        let rules = [
            (
                l.received == l.consumed + l.dropped_on_receive + l.forwarded,
                "received = consumed + dropped_on_receive + forwarded",
            ),
            (l.copies >= l.forwarded, "copies ≥ forwarded"),
            (
                l.copies == l.refused + l.queued,
                "copies = refused + queued",
            ),
            (
                l.queued == l.sent + l.dropped_from_queue + in_queues,
                "queued = sent + dropped_from_queue + still queued",
            ),
            (
                drops == l.dropped_on_receive + l.refused + l.dropped_from_queue,
                "drops by reason = dropped_on_receive + refused + dropped_from_queue",
            ),
        ];
        match rules.iter().find(|(ok, _)| !ok) {
            None => Ok(()),
            Some((_, rule)) => Err(format!(
                "{rule} fails: {l:?}, {in_queues} queued, {drops} drops"
            )),
        }
    }
}
