//! Traffic generators and receivers: what a flow is ([`FlowSpec`]: pattern, volume,
//! transport), its sender ([`FlowTx`], in `tx`) and its receiver ([`FlowRx`], in `rx`).
//!
//! A [`FlowTx`] decides when its host may start the next frame (greedy, constant bit rate
//! that does not accumulate missed slots, on/off) and builds it from a header template
//! (real Ethernet/IPv4/UDP/BTH headers; payload never materialized). A [`FlowRx`] counts
//! what arrives: packets, bytes, reordering, one-way latency (hdrhistogram) and completion.

use crate::rc::RcConfig;
use crate::tcp::TcpFlow;
use lossless_buffer_model::{Rate, Time};
use lossless_pipeline::wire::build::FrameSpec;

mod rx;
#[cfg(test)]
mod tests;
mod tx;

pub use rx::FlowRx;
pub use tx::FlowTx;

/// When a flow offers traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Always backlogged: sends whenever its NIC lets it.
    Greedy,
    /// One frame per slot at `rate` (wire time included); slots missed while paused or busy
    /// are skipped and counted, not made up later.
    Cbr {
        /// Offered rate (line-rate bits: frame + preamble + IFG).
        rate: Rate,
    },
    /// Alternating `on` and `off` periods from the flow's start; while on, CBR at `rate`
    /// (or greedy without a rate).
    OnOff {
        /// On period.
        on: Time,
        /// Off period.
        off: Time,
        /// Rate while on (None: greedy).
        rate: Option<Rate>,
    },
}

/// How much a flow sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Until `stop` or the end of the run.
    Unbounded,
    /// Bytes of frames (FCS included); the last frame may be shorter.
    Bytes(u64),
    /// Frames.
    Packets(u64),
}

/// What carries a flow's frames.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Transport {
    /// Open loop: frames leave as the pattern allows; a lost frame is simply gone.
    #[default]
    OpenLoop,
    /// RoCEv2 Reliable Connection: messages in PSN order, ACKs and NAKs from the
    /// responder, recovery of what is lost ([`crate::rc`]).
    Rc(RcFlow),
    /// TCP on smoltcp: a bulk transfer of `size` bytes ([`crate::tcp`]); the host's TCP
    /// stack makes its frames.
    Tcp(TcpFlow),
}

/// The RC side of a flow: its queue pair's settings and what it sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RcFlow {
    /// Queue-pair settings (both ends).
    pub config: RcConfig,
    /// The messages it sends.
    pub messages: Messages,
    /// DSCP of the responder's ACKs and NAKs.
    pub ack_dscp: u8,
    /// The priority the responder's NIC queues them on.
    pub ack_priority: u8,
}

/// The messages an RC flow sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Messages {
    /// `count` messages of `size` payload bytes, all posted at the flow's start.
    Count {
        /// How many.
        count: u64,
        /// Payload bytes each.
        size: u64,
    },
    /// Messages of `size` without end, two posted at a time (a new one as one completes).
    Stream {
        /// Payload bytes each.
        size: u64,
    },
    /// Posted from outside (a collective's steps).
    Posted,
}

/// Messages a stream keeps posted.
pub(crate) const STREAM_DEPTH: usize = 2;

/// A flow as configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    /// Name for reports.
    pub name: String,
    /// Flow id carried in packet metadata (1-based; 0 marks frames of no flow).
    pub id: u32,
    /// Header template: addresses, DSCP/ECN, VLAN, ports, BTH (PSN rewritten per frame).
    pub headers: FrameSpec,
    /// Priority the sending NIC queues it on (honours PFC for this priority).
    pub priority: u8,
    /// Offered pattern.
    pub pattern: Pattern,
    /// Volume.
    pub limit: Limit,
    /// First frame no earlier than this.
    pub start: Time,
    /// No frame starts at or after this.
    pub stop: Option<Time>,
    /// Open loop, or RoCEv2 RC.
    pub transport: Transport,
}

impl FlowSpec {
    /// Does the flow end on its own: a volume, a stop time, or a count of RC messages (or
    /// messages a collective posts, which has a count of iterations)?
    pub fn finite(&self) -> bool {
        match &self.transport {
            Transport::Rc(rc) => {
                self.stop.is_some() || !matches!(rc.messages, Messages::Stream { .. })
            }
            Transport::OpenLoop => self.limit != Limit::Unbounded || self.stop.is_some(),
            Transport::Tcp(_) => true,
        }
    }
}
