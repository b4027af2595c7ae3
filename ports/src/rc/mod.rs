//! RoCEv2 Reliable Connection (RC): the two ends of one queue pair, as pure state machines
//! driven with explicit time, in the manner of InfiniBand's RC transport (IBTA spec vol. 1,
//! ch. 9.7) as ConnectX NICs run it.
//!
//! * [`Requester`]: posted messages split into packets of consecutive PSNs; sends each once,
//!   keeps the oldest unacknowledged PSN, and recovers: on a NAK "PSN sequence error" it
//!   goes back to the NAK's PSN and re-sends everything from there (`go_back_n`) or only
//!   that packet (`selective`); with no ACK progress for `rto` (the local ACK timeout) it
//!   re-sends from the oldest unacknowledged PSN, at most `retry_count` times in a row, then
//!   the QP errors out.
//! * [`Responder`]: the expected PSN; an in-order packet is delivered and acknowledged
//!   every `ack_every` packets and at each message end; a later PSN is dropped and answered
//!   by one NAK per hole (selective: kept, and delivered when the hole fills); an earlier
//!   one is a duplicate, dropped and acknowledged.
//!
//! PSNs are 24 bits on the wire; both ends count them in 64 bits and unwrap what arrives
//! against where they are (the window is half the PSN space).

use lossless_buffer_model::Time;
use lossless_pipeline::wire::rocev2::PSN_MASK;

mod requester;
mod responder;
#[cfg(test)]
mod tests;

pub use requester::{PacketPlan, Requester, RequesterStats};
pub use responder::{Delivery, Reply, Responder, ResponderStats};

/// How a requester recovers a lost packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Recovery {
    /// Re-send everything from the lost PSN on (RC as ConnectX runs it).
    #[default]
    GoBackN,
    /// Re-send only the lost packet; the responder keeps later ones until the hole fills.
    Selective,
}

impl lossless_buffer_model::Named for Recovery {
    const WORDS: &'static [(&'static str, Recovery)] = &[
        ("go_back_n", Recovery::GoBackN),
        ("selective", Recovery::Selective),
    ];
}

/// The IB local ACK timeout exponent NCCL sets (`NCCL_IB_TIMEOUT`, 20 in current releases:
/// `NCCL_PARAM(IbTimeout, "IB_TIMEOUT", 20)` in src/transport/net_ib.cc; 18 and 14 in
/// older ones): the timeout is 4.096 µs × 2^20 = 4.295 s.
pub const NCCL_IB_TIMEOUT: u32 = 20;
/// Retries NCCL allows (`NCCL_IB_RETRY_CNT`, 7, the most the 3-bit field holds).
pub const NCCL_IB_RETRY_CNT: u32 = 7;
/// In-order packets per ACK by default. A model choice, not a measured NIC value (NICs
/// coalesce ACKs adaptively): an ACK every 8 packets is 66 bytes per 8 data frames.
pub const DEFAULT_ACK_EVERY: u32 = 8;

/// The IB local ACK timeout for exponent `n`: 4.096 µs × 2^n.
pub fn ib_timeout(n: u32) -> Time {
    Time(4_096_000u64 << n.min(31))
}

/// Settings of one RC queue pair (both ends use the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RcConfig {
    /// The responder acknowledges every this many in-order packets, and at each message end.
    pub ack_every: u32,
    /// How the requester recovers a loss.
    pub recovery: Recovery,
    /// No ACK progress for this long: re-send from the oldest unacknowledged PSN.
    pub rto: Time,
    /// Timeouts in a row before the QP errors out.
    pub retry_count: u32,
}

impl Default for RcConfig {
    fn default() -> Self {
        RcConfig {
            ack_every: DEFAULT_ACK_EVERY,
            recovery: Recovery::GoBackN,
            rto: ib_timeout(NCCL_IB_TIMEOUT),
            retry_count: NCCL_IB_RETRY_CNT,
        }
    }
}

/// The 64-bit PSN nearest to `reference` whose low 24 bits are `wire`.
pub fn unwrap_psn(reference: u64, wire: u32) -> u64 {
    let r = (reference & PSN_MASK as u64) as u32;
    let d = wire.wrapping_sub(r) & PSN_MASK;
    if d < 1 << 23 {
        reference + d as u64
    } else {
        reference.saturating_sub(((1u32 << 24) - d) as u64)
    }
}
