//! The collectives' table, in nccl-tests' columns: buffer size, time per iteration, and
//! algorithm and bus bandwidth in GB/s (10^9 bytes/s); each iteration on its own line
//! when there are few.

use super::time;
use crate::report::model::Report;
use std::fmt::Write;

/// Up to this many iterations are listed one by one.
const LISTED: usize = 20;

pub(super) fn table(o: &mut String, r: &Report) {
    if r.collectives.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\nCollectives (time: from the previous iteration's end to the last rank's; GB/s = 10^9 bytes/s; busbw = algbw × {{2(N-1)/N allreduce, (N-1)/N alltoall}})"
    );
    let _ = writeln!(
        o,
        "  {:<12} {:<15} {:>5} {:>12} {:>7} {:>11} {:>11} {:>11} {:>8} {:>8} {:>7} {:>8}",
        "collective",
        "kind",
        "ranks",
        "size(B)",
        "iters",
        "time p50",
        "p99",
        "max",
        "algbw",
        "busbw",
        "retx",
        "timeouts"
    );
    let gb = |bps: f64| format!("{:.2}", bps / 8e9);
    for c in &r.collectives {
        let kind = match c.algorithm {
            Some(a) => format!("{}/{a}", c.kind),
            None => c.kind.to_string(),
        };
        let t = |x: fn(&crate::report::model::Percentiles) -> u64| {
            c.time_ps.as_ref().map_or("-".into(), |p| time(x(p)))
        };
        let _ = writeln!(
            o,
            "  {:<12} {:<15} {:>5} {:>12} {:>7} {:>11} {:>11} {:>11} {:>8} {:>8} {:>7} {:>8}",
            c.name,
            kind,
            c.hosts.len(),
            c.size_bytes,
            format!("{}/{}", c.completed_iterations, c.iterations_requested),
            t(|p| p.p50),
            t(|p| p.p99),
            t(|p| p.max),
            c.algbw_bps.map_or("-".into(), gb),
            c.busbw_bps.map_or("-".into(), gb),
            c.retransmitted_packets,
            c.timeouts,
        );
        if c.iterations.len() <= LISTED {
            for (i, it) in c.iterations.iter().enumerate() {
                let _ = writeln!(
                    o,
                    "  {:<12} iteration {:<5} {:>11} ends at {:>11}   algbw {:>7}  busbw {:>7}  retx {}",
                    "",
                    i + 1,
                    time(it.time_ps),
                    time(it.end_ps),
                    gb(it.algbw_bps),
                    gb(it.busbw_bps),
                    it.retransmitted_packets
                );
            }
        }
        if c.completed_iterations < c.iterations_requested {
            let why = if c.qp_errors > 0 {
                format!(
                    "{} queue pair(s) errored out (retries exhausted)",
                    c.qp_errors
                )
            } else {
                "the run ended first".to_string()
            };
            let _ = writeln!(
                o,
                "  {:<12} INCOMPLETE: {} of {} iterations finished; {why}",
                "", c.completed_iterations, c.iterations_requested
            );
        }
    }
}
