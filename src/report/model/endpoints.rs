//! The report's flows and hosts: what each flow sent and received, its transport, and
//! each host NIC.

use super::PfcReport;
use lossless_buffer_model::PRIORITIES;
use serde::Serialize;

/// One flow.
#[derive(Clone, Debug, Serialize)]
pub struct FlowReport {
    /// Name.
    pub name: String,
    /// Sending host.
    pub src: String,
    /// Receiving host.
    pub dst: String,
    /// Priority its NIC queues it on.
    pub priority: u8,
    /// Frames sent.
    pub tx_packets: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Frames received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Frames that arrived after a later one.
    pub reordered: u64,
    /// Trimmed frames received (cut on the way; not in `rx_packets`).
    #[serde(skip_serializing_if = "is_zero")]
    pub trimmed_packets: u64,
    /// When its last frame arrived, ps (null: none arrived).
    pub last_rx_ps: Option<u64>,
    /// The longest wait between two received frames (whole run), ps: a stalled victim.
    pub longest_gap_ps: Option<u64>,
    /// When that wait began (arrival of the frame before it), ps.
    pub longest_gap_from_ps: Option<u64>,
    /// Frames received marked CE.
    pub ce_marked: u64,
    /// CBR slots skipped (paused or busy).
    pub skipped_slots: u64,
    /// Throughput in the window, bit/s: frame bits over the flow's receive interval
    /// (first to last frame) clipped to the window.
    pub throughput_bps: f64,
    /// Frame bits received in the window over the whole window, bit/s: a flow that stopped
    /// (deadlocked, stalled) shows its loss here, while `throughput_bps` does not.
    pub window_rate_bps: f64,
    /// Flow completion time, ps (finite flows fully delivered): from the first bit sent to
    /// the last bit received (RC: the last ACK; TCP: the last byte read by the receiver).
    pub fct_ps: Option<u64>,
    /// The same, from the flow's `start` (the time before its first frame could leave
    /// counted too), ps.
    pub fct_from_start_ps: Option<u64>,
    /// Latency in the window, ps.
    pub latency_ps: LatencyReport,
    /// DCQCN state, when the sender runs DCQCN.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dcqcn: Option<DcqcnFlowReport>,
    /// The reliable transport's counters (null for open-loop flows).
    pub transport: Option<TransportReport>,
    /// TCP flows: their transport.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpReport>,
}

/// An RC flow's transport: what was lost, re-sent and delivered.
#[derive(Clone, Debug, Serialize)]
pub struct TransportReport {
    /// `rc`.
    pub kind: &'static str,
    /// `go_back_n` or `selective`.
    pub recovery: &'static str,
    /// Packets the requester sent again.
    pub retransmitted_packets: u64,
    /// Payload bytes it sent again.
    pub retransmitted_bytes: u64,
    /// NAKs the responder sent (one per hole).
    pub naks_sent: u64,
    /// NAKs the requester received.
    pub naks_received: u64,
    /// ACKs the responder sent.
    pub acks_sent: u64,
    /// Local ACK timeouts at the requester.
    pub timeouts: u64,
    /// Packets the responder dropped as duplicates.
    pub duplicates: u64,
    /// Packets that arrived ahead of a hole (go-back-N drops them).
    pub out_of_order: u64,
    /// Unique payload bytes delivered in order (whole run).
    pub delivered_bytes: u64,
    /// Unique payload delivered in order in the window, bit/s, over the flow's receive
    /// interval (as `throughput_bps`, which counts every frame).
    pub goodput_bps: f64,
    /// Messages completed at the requester (every packet acknowledged).
    pub messages_completed: u64,
    /// Messages posted and not completed at the end.
    pub messages_outstanding: u64,
    /// Message completion times, posted → last packet acknowledged, ps (exact order
    /// statistics; null when none completed).
    pub message_fct_ps: Option<Percentiles>,
    /// When the QP went to the error state (retries exhausted), ps; null: it did not.
    pub qp_error_ps: Option<u64>,
}

/// A TCP flow's transport: what its sender's NIC saw smoltcp send again, its RTT, what
/// the receiver's application read.
#[derive(Clone, Debug, Serialize)]
pub struct TcpReport {
    /// `tcp`.
    pub kind: &'static str,
    /// `reno`, `cubic` or `none`.
    pub congestion: &'static str,
    /// Maximum segment size: the IP MTU less 40 bytes of IPv4 and TCP headers.
    pub mss: u32,
    /// Data segments the sender sent.
    pub segments: u64,
    /// Of those, sent again (by sequence number, at the sender's NIC).
    pub retransmitted_segments: u64,
    /// Payload bytes sent again.
    pub retransmitted_bytes: u64,
    /// Payload bytes the receiver's application read, in order, once.
    pub delivered_bytes: u64,
    /// Those over the flow's receive interval (as `throughput_bps`), bit/s.
    pub goodput_bps: f64,
    /// When the sender's handshake completed (SYN-ACK received), ps.
    pub established_ps: Option<u64>,
    /// RTT samples (a segment sent once, to the first ACK covering it), ps.
    pub rtt_ps: Option<Percentiles>,
}

/// Exact order statistics of a set of times, ps (nearest rank).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Percentiles {
    /// Smallest.
    pub min: u64,
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Largest.
    pub max: u64,
    /// How many.
    pub count: u64,
}

impl Percentiles {
    /// Of `values` (any order); None when empty.
    pub fn of(mut values: Vec<u64>) -> Option<Percentiles> {
        if values.is_empty() {
            return None;
        }
        values.sort_unstable();
        let n = values.len();
        let rank = |q: f64| values[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
        Some(Percentiles {
            min: values[0],
            p50: rank(0.5),
            p99: rank(0.99),
            max: values[n - 1],
            count: n as u64,
        })
    }
}

/// A flow's DCQCN reaction point at the end of the run.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct DcqcnFlowReport {
    /// CNPs received for the flow's queue pair.
    pub cnps: u64,
    /// Current rate R_C, bit/s.
    pub rate_bps: f64,
    /// Target rate R_T, bit/s.
    pub target_bps: f64,
    /// α.
    pub alpha: f64,
}

/// Latency percentiles (hdrhistogram, 3 significant digits but no finer than 512 ps,
/// clamped to min/max) and the exact extremes, ps.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct LatencyReport {
    /// Median.
    pub p50: Option<u64>,
    /// 99th percentile.
    pub p99: Option<u64>,
    /// 99.9th percentile.
    pub p999: Option<u64>,
    /// Largest.
    pub max: Option<u64>,
    /// Smallest.
    pub min: Option<u64>,
}

/// One host NIC.
#[derive(Clone, Debug, Serialize)]
pub struct HostReport {
    /// Name.
    pub name: String,
    /// PFC counters.
    pub pfc: PfcReport,
    /// Time paused, per priority, ps (whole run).
    pub paused_ps: [u64; PRIORITIES],
    /// Fraction of the window paused, per priority.
    pub paused_fraction: [f64; PRIORITIES],
    /// Fraction of the window the transmitter was busy.
    pub tx_utilization: f64,
    /// Frames sent.
    pub tx_packets: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Frames received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Frames received whose FCS check failed (corrupted on the wire).
    pub rx_bad_fcs: u64,
    /// Frames the receive buffer dropped.
    pub rx_drops: u64,
    /// Peak receive-buffer occupancy, bytes.
    pub rx_buffer_watermark_bytes: u64,
    /// CNPs the NIC sent (DCQCN notification point), when it runs DCQCN.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cnps_sent: Option<u64>,
    /// The NIC's CBFC credit counters, when its link speaks CBFC (as a switch port's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cbfc: Option<super::CbfcReport>,
    /// The NIC's LLR state and counters, when its link speaks LLR (as a switch port's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llr: Option<super::LlrReport>,
}

/// Leave a count out of the JSON while it is zero (a feature that never ran).
fn is_zero(n: &u64) -> bool {
    *n == 0
}
