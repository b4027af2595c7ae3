//! Counters in the shapes of SONiC's `portstat`, `pfcstat` and `queuestat`.

use lossless_buffer_model::{Time, PRIORITIES};

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
}

impl PfcCounters {
    /// Count a frame with class-enable vector `enable` and `quanta`, sent or received.
    pub fn count(
        xoff: &mut [u64; PRIORITIES],
        xon: &mut [u64; PRIORITIES],
        enable: u8,
        quanta: &[u16; PRIORITIES],
    ) {
        for p in 0..PRIORITIES {
            if enable & (1 << p) != 0 {
                if quanta[p] > 0 {
                    xoff[p] += 1;
                } else {
                    xon[p] += 1;
                }
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
    /// Time the transmitter has been (or is committed to be) busy: the wire time of every
    /// frame started, preamble and gap included.
    pub tx_busy: Time,
}

impl PortCounters {
    /// Count a PFC frame this port sent (`enable`, `quanta`): per priority, as a frame and
    /// as 64 bytes on the wire.
    pub fn count_pfc_sent(&mut self, enable: u8, quanta: &[u16; PRIORITIES]) {
        PfcCounters::count(&mut self.pfc.tx_xoff, &mut self.pfc.tx_xon, enable, quanta);
        self.tx_pfc_frames += 1;
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
}
