//! A collective's report from its ranks: an iteration ends when its last rank finishes it,
//! and lasts from the end of the one before (or the collective's start).

use super::model::{Bandwidths, CollectiveReport, FlowReport, IterationReport, Percentiles};
use crate::config::scenario::CollectiveDef;
use crate::sim::outcome::Outcome;
use lossless_ports::collective::{CollectiveKind, Rank};

/// The report of every collective of the run; `flows` are the flows' reports (the
/// collectives' queue pairs among them).
pub fn reports(o: &Outcome, flows: &[FlowReport]) -> Vec<CollectiveReport> {
    o.scenario
        .run
        .collectives
        .iter()
        .enumerate()
        .map(|(ci, c)| report(o, ci, c, flows))
        .collect()
}

fn report(o: &Outcome, ci: usize, c: &CollectiveDef, flows: &[FlowReport]) -> CollectiveReport {
    let ranks: Vec<&Rank> = c
        .hosts
        .iter()
        .filter_map(|h| o.hosts[*h].ranks().iter().find(|r| r.collective == ci))
        .collect();
    let completed = ranks.iter().map(|r| r.finished.len()).min().unwrap_or(0);
    let factor = c.kind.bus_factor(c.hosts.len());
    let bits = c.size as f64 * 8.0;
    let mut per_iteration = Vec::with_capacity(completed);
    let (mut before, mut resent_before) = (c.start.as_ps(), 0);
    for t in 0..completed {
        let end = ranks
            .iter()
            .map(|r| r.finished[t].as_ps())
            .max()
            .unwrap_or(0);
        let resent: u64 = ranks.iter().map(|r| r.retransmitted[t]).sum();
        let time = end - before;
        let algbw = bits / (time as f64 * 1e-12);
        per_iteration.push(IterationReport {
            end_ps: end,
            time_ps: time,
            algbw_bps: algbw,
            busbw_bps: algbw * factor,
            retransmitted_packets: resent - resent_before,
        });
        (before, resent_before) = (end, resent);
    }
    let time_ps = Percentiles::of(per_iteration.iter().map(|i| i.time_ps).collect());
    let at = |scale: f64| {
        time_ps.map(|p| {
            let bw = |ps: u64| bits / (ps as f64 * 1e-12) * scale;
            Bandwidths {
                p50: bw(p.p50),
                p99: bw(p.p99),
                slowest: bw(p.max),
            }
        })
    };
    let mine: Vec<&FlowReport> = flows
        .iter()
        .zip(&o.scenario.run.flows)
        .filter(|(_, def)| c.qps.iter().any(|(out, _)| out.contains(&def.spec.id)))
        .map(|(f, _)| f)
        .collect();
    let qps: Vec<_> = mine.iter().filter_map(|f| f.transport.as_ref()).collect();
    // TCP connections count segments sent again.
    let segments: u64 = mine
        .iter()
        .filter_map(|f| f.tcp.as_ref())
        .map(|t| t.retransmitted_segments)
        .sum();
    CollectiveReport {
        name: c.name.clone(),
        kind: match c.kind {
            CollectiveKind::AllReduceRing => "allreduce",
            CollectiveKind::AllToAll => "alltoall",
        },
        algorithm: (c.kind == CollectiveKind::AllReduceRing).then_some("ring"),
        hosts: c
            .hosts
            .iter()
            .map(|h| o.scenario.run.hosts[*h].name.clone())
            .collect(),
        size_bytes: c.size,
        chunk_bytes: c.chunk,
        iterations_requested: c.iterations,
        completed_iterations: completed as u64,
        bus_factor: factor,
        iterations: per_iteration,
        time_ps,
        algbw_bps: at(1.0).map(|b| b.p50),
        busbw_bps: at(factor).map(|b| b.p50),
        algbw_at_bps: at(1.0),
        busbw_at_bps: at(factor),
        retransmitted_packets: qps.iter().map(|t| t.retransmitted_packets).sum::<u64>() + segments,
        timeouts: qps.iter().map(|t| t.timeouts).sum(),
        naks: qps.iter().map(|t| t.naks_sent).sum(),
        qp_errors: qps.iter().filter(|t| t.qp_error_ps.is_some()).count() as u64,
    }
}
