//! The link layer's counters in a report: CBFC per port and per credited virtual channel,
//! LLR per port,
//! each group serialised from its one description ([`CounterGroup`]), so the JSON keys,
//! the Prometheus families and the text columns are the same names.

use lossless_pipeline::counter_group::CounterGroup;
use lossless_pipeline::link::cbfc::{CbfcCounters, VcCounters};
use lossless_pipeline::link::llr::{LlrCounters, LlrLink};
use serde::ser::{Serialize, SerializeMap, Serializer};

/// A counter group as a JSON object, `{key: value}` in the group's order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters<G>(pub G);

impl<G: CounterGroup> Serialize for Counters<G> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(G::DEFS.len()))?;
        for (d, v) in G::DEFS.iter().zip(self.0.values()) {
            m.serialize_entry(d.key, &v)?;
        }
        m.end()
    }
}

/// LLR on one port: its profile as resolved, its states at the end, its counters
/// (`SAI_PORT_STAT_LLR_*` and a few of this project's own).
#[derive(Clone, Debug, serde::Serialize)]
pub struct LlrReport {
    /// Frames the replay buffer holds at most.
    pub max_outstanding_frames: u32,
    /// Bytes the replay buffer holds at most.
    pub max_outstanding_bytes: u64,
    /// Replay timer, ps (0: off).
    pub replay_timer_ps: u64,
    /// Replays allowed without progress (255: no limit).
    pub max_replay_count: u8,
    /// The sender's state: `init`, `advance`, `replay` or `flush`.
    pub tx_state: &'static str,
    /// The receiver's state: `send_acks` or `nack_sent`.
    pub rx_state: &'static str,
    /// Counters.
    #[serde(flatten)]
    pub counters: Counters<LlrCounters>,
}

impl LlrReport {
    /// The report of a port's LLR as it stands.
    pub fn of(l: &LlrLink) -> LlrReport {
        let s = l.setup();
        LlrReport {
            max_outstanding_frames: s.max_frames,
            max_outstanding_bytes: s.max_bytes,
            replay_timer_ps: s.replay_timer.as_ps(),
            max_replay_count: s.max_replay_count,
            tx_state: l.tx_state().name(),
            rx_state: l.rx_state().name(),
            counters: Counters(l.counters),
        }
    }
}

/// CBFC on one port: its port counters (`SAI_PORT_STAT_CBFC_*`) and its credited channels.
#[derive(Clone, Debug, serde::Serialize)]
pub struct CbfcReport {
    /// Bytes one credit stands for.
    pub credit_size: u32,
    /// `per_vc` or `per_port`.
    pub mode: &'static str,
    /// Port counters.
    #[serde(flatten)]
    pub counters: Counters<CbfcCounters>,
    /// Each credited channel.
    pub vcs: Vec<VcReport>,
}

/// One credited virtual channel of a CBFC port.
#[derive(Clone, Debug, serde::Serialize)]
pub struct VcReport {
    /// Channel index.
    pub vc: usize,
    /// Credits this port's receiver gives the channel (its buffer for it).
    pub rx_credits: u64,
    /// Credits the peer's receiver gave it (this port's sending limit).
    pub tx_credits: u64,
    /// Most credits the receiver held at once (never above `rx_credits`).
    pub receiver_credits_held_watermark: u64,
    /// `SAI_VIRTUAL_CHANNEL_STAT_*`.
    #[serde(flatten)]
    pub counters: Counters<VcCounters>,
}

impl CbfcReport {
    /// The report of a port's CBFC as it stands.
    pub fn of(c: &lossless_pipeline::link::cbfc::CbfcLink) -> CbfcReport {
        use lossless_buffer_model::Named;
        let s = &c.setup;
        CbfcReport {
            credit_size: s.credit_size,
            mode: s.mode.word(),
            counters: Counters(c.port_counters()),
            vcs: (0..lossless_pipeline::link::cbfc::VCS)
                .filter(|&v| s.is_credited(v as u8))
                .map(|v| VcReport {
                    vc: v,
                    rx_credits: s.rx_credits[v] as u64,
                    tx_credits: c.sender.limit(v),
                    receiver_credits_held_watermark: c.receiver.held_watermark(v),
                    counters: Counters(c.vc_counters(v)),
                })
                .collect(),
        }
    }
}
