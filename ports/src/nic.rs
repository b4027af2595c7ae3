//! What a host NIC is configured with: whether it honours PFC, how fast it reacts, its
//! receive buffer (a slow receiver's XOFF and XON levels), DCQCN, and the priorities it
//! pauses and sends CNPs on — with the defaults of a plain RDMA NIC.

use crate::dcqcn::DcqcnParams;
use lossless_buffer_model::{Bytes, Rate, Time};
use lossless_pipeline::config::FlowControl;
use lossless_pipeline::link::cbfc::CbfcSetup;
use lossless_pipeline::link::llr::LlrSetup;

/// Whether the NIC obeys PFC frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PfcMode {
    /// Stop starting frames of a paused priority (an RDMA NIC).
    Honor,
    /// Ignore PFC (a plain Linux host, a test port).
    Ignore,
}

impl lossless_buffer_model::Named for PfcMode {
    const WORDS: &'static [(&'static str, PfcMode)] = &[
        ("honor", PfcMode::Honor),
        ("honour", PfcMode::Honor),
        ("ignore", PfcMode::Ignore),
    ];
}

/// A bounded receive buffer drained at a fixed rate (a slow receiver).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RxBuffer {
    /// Buffer size; frames beyond it are dropped.
    pub size: Bytes,
    /// When an RC responder acknowledges a packet: once the host has drained it from the
    /// buffer into memory (as an RNIC acknowledges what it has placed), or as it arrives.
    pub rc_ack: RcAck,
    /// Drain rate of the host's software.
    pub drain: Rate,
    /// Send XOFF when the buffer holds more than this.
    pub xoff: Bytes,
    /// Send XON when it holds less than this.
    pub xon: Bytes,
}

/// When an RC packet that went through a NIC's receive buffer is acknowledged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RcAck {
    /// When the host has drained it from the buffer (placed it in memory): an RC
    /// completion means the data is in the responder's memory.
    #[default]
    Placed,
    /// When its last bit arrives at the NIC, the buffer notwithstanding.
    Arrived,
}

impl lossless_buffer_model::Named for RcAck {
    const WORDS: &'static [(&'static str, RcAck)] =
        &[("placed", RcAck::Placed), ("arrived", RcAck::Arrived)];
}

impl RxBuffer {
    /// The XOFF level of a buffer of `size` whose file gives none: half of it.
    pub fn default_xoff(size: Bytes) -> Bytes {
        Bytes(size.get() / 2)
    }

    /// The XON level below an XOFF level of `xoff` whose file gives none: half of it.
    pub fn default_xon(xoff: Bytes) -> Bytes {
        Bytes(xoff.get() / 2)
    }
}

/// NIC settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NicConfig {
    /// PFC honoured or ignored.
    pub pfc: PfcMode,
    /// How long after a PFC frame arrives the NIC may still start frames.
    pub pfc_response: Time,
    /// Optional bounded receive buffer (None: unlimited, frames consumed at once).
    pub rx_buffer: Option<RxBuffer>,
    /// Priorities the NIC pauses (its own XOFF) and honours pauses for.
    pub pfc_enable: u8,
    /// Quanta carried by the NIC's XOFF frames.
    pub pause_quanta: u16,
    /// DCQCN: rate control of the NIC's RoCEv2 flows (reaction point) and CNPs for the
    /// CE-marked RoCEv2 frames it receives (notification point). None: neither.
    pub dcqcn: Option<DcqcnParams>,
    /// Priority the NIC sends CNPs on (the class its switch gives their DSCP).
    pub cnp_priority: u8,
    /// PFC, 802.3x PAUSE of the whole link, CBFC or none (what its switch port speaks).
    pub flow_control: FlowControl,
    /// CBFC settings, on a CBFC link: its receiver's credits are those of its receive
    /// buffer (or all a channel may have, for a NIC that consumes frames as they arrive).
    pub cbfc: CbfcSetup,
    /// Link-level retry, on a link whose switch port speaks it.
    pub llr: Option<LlrSetup>,
}

impl Default for NicConfig {
    /// An RDMA NIC: honours PFC at once on priorities 3 and 4 (SONiC's lossless ones), no
    /// receive limit (frames consumed as they arrive), XOFF of 0xFFFF quanta, no DCQCN.
    fn default() -> Self {
        NicConfig {
            pfc: PfcMode::Honor,
            pfc_response: Time::ZERO,
            rx_buffer: None,
            pfc_enable: (1 << 3) | (1 << 4),
            pause_quanta: 0xFFFF,
            dcqcn: None,
            cnp_priority: 0,
            flow_control: FlowControl::Pfc,
            cbfc: CbfcSetup::default(),
            llr: None,
        }
    }
}
