//! The report of a collective, in nccl-tests' vocabulary: per iteration its time, the
//! algorithm bandwidth (buffer size over time) and the bus bandwidth (what each link
//! carried: algbw × 2(N−1)/N for an AllReduce, × (N−1)/N for an all-to-all).

use super::Percentiles;
use serde::Serialize;

/// One collective.
#[derive(Clone, Debug, Serialize)]
pub struct CollectiveReport {
    /// Name.
    pub name: String,
    /// `allreduce` or `alltoall`.
    pub kind: &'static str,
    /// `ring` (AllReduce).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<&'static str>,
    /// Its hosts, in rank order.
    pub hosts: Vec<String>,
    /// Bytes of each rank's buffer.
    pub size_bytes: u64,
    /// Payload bytes of each message: size/N.
    pub chunk_bytes: u64,
    /// Iterations asked for.
    pub iterations_requested: u64,
    /// Iterations every rank finished.
    pub completed_iterations: u64,
    /// Bus bandwidth over algorithm bandwidth: 2(N−1)/N or (N−1)/N.
    pub bus_factor: f64,
    /// Each completed iteration.
    pub iterations: Vec<IterationReport>,
    /// Iteration times, ps (None before one completes).
    pub time_ps: Option<Percentiles>,
    /// Algorithm bandwidth at the median iteration time (the one number nccl-tests
    /// prints), bit/s.
    pub algbw_bps: Option<f64>,
    /// Bus bandwidth at the median iteration time, bit/s.
    pub busbw_bps: Option<f64>,
    /// Algorithm bandwidth at the median, 99th-percentile and slowest iteration time,
    /// bit/s.
    pub algbw_at_bps: Option<Bandwidths>,
    /// Bus bandwidth at the same times, bit/s.
    pub busbw_at_bps: Option<Bandwidths>,
    /// Packets its RC queue pairs, or segments its TCP connections, sent again.
    pub retransmitted_packets: u64,
    /// Local ACK timeouts on its RC queue pairs (TCP: not counted, 0).
    pub timeouts: u64,
    /// NAKs its responders sent.
    pub naks: u64,
    /// Queue pairs that errored out (retries exhausted): the collective never finishes.
    pub qp_errors: u64,
}

/// One iteration of a collective.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct IterationReport {
    /// When the last rank finished it, ps.
    pub end_ps: u64,
    /// From the previous iteration's end (the start, for the first) to this one's, ps.
    pub time_ps: u64,
    /// size / time, bit/s.
    pub algbw_bps: f64,
    /// algbw × the bus factor, bit/s.
    pub busbw_bps: f64,
    /// Packets re-sent during it, on the collective's queue pairs.
    pub retransmitted_packets: u64,
}

/// A bandwidth at three iteration times.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Bandwidths {
    /// At the median iteration time.
    pub p50: f64,
    /// At the 99th-percentile iteration time.
    pub p99: f64,
    /// At the slowest iteration.
    pub slowest: f64,
}
