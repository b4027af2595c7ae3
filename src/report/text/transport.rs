//! The reliable transports' tables: per RC flow, goodput against what was re-sent, NAKs,
//! timeouts and message completion times; a QP that errored out says so.

use super::{gbps, time};
use crate::report::model::Report;
use std::fmt::Write;

pub(super) fn rc(o: &mut String, r: &Report) {
    let rows: Vec<_> = r
        .flows
        .iter()
        .filter_map(|f| f.transport.as_ref().map(|t| (f, t)))
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\nRC transport (goodput: unique payload delivered in order, over the same interval as throughput)"
    );
    let _ = writeln!(
        o,
        "  {:<14} {:>10} {:>16} {:>10} {:>12} {:>6} {:>8} {:>9} {:>10} {:>10} {:>10}",
        "flow",
        "recovery",
        "goodput",
        "retx/pkts",
        "retx/bytes",
        "NAKs",
        "timeouts",
        "messages",
        "msg p50",
        "p99",
        "max"
    );
    for (f, t) in rows {
        let fct = |x: fn(&crate::report::model::Percentiles) -> u64| {
            t.message_fct_ps.as_ref().map_or("-".into(), |p| time(x(p)))
        };
        let _ = writeln!(
            o,
            "  {:<14} {:>10} {:>16} {:>10} {:>12} {:>6} {:>8} {:>9} {:>10} {:>10} {:>10}",
            f.name,
            t.recovery,
            gbps(t.goodput_bps),
            t.retransmitted_packets,
            t.retransmitted_bytes,
            t.naks_sent,
            t.timeouts,
            t.messages_completed,
            fct(|p| p.p50),
            fct(|p| p.p99),
            fct(|p| p.max),
        );
        if let Some(at) = t.qp_error_ps {
            let _ = writeln!(
                o,
                "  {:<14} QP ERROR at {}: the retries ran out; {} message(s) never completed",
                "",
                time(at),
                t.messages_outstanding
            );
        }
    }
}

/// The TCP flows' table: goodput, what was sent again, RTT.
pub(super) fn tcp(o: &mut String, r: &Report) {
    let rows: Vec<_> = r
        .flows
        .iter()
        .filter_map(|f| f.tcp.as_ref().map(|t| (f, t)))
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\nTCP (smoltcp; goodput: bytes the receiver read, over the same interval as throughput; retx counted at the sender's NIC)"
    );
    let _ = writeln!(
        o,
        "  {:<14} {:>6} {:>6} {:>16} {:>10} {:>10} {:>12} {:>10} {:>10} {:>10}",
        "flow",
        "cc",
        "mss",
        "goodput",
        "segments",
        "retx/segs",
        "retx/bytes",
        "rtt p50",
        "p99",
        "max"
    );
    for (f, t) in rows {
        let rtt = |x: fn(&crate::report::model::Percentiles) -> u64| {
            t.rtt_ps.as_ref().map_or("-".into(), |p| time(x(p)))
        };
        let _ = writeln!(
            o,
            "  {:<14} {:>6} {:>6} {:>16} {:>10} {:>10} {:>12} {:>10} {:>10} {:>10}",
            f.name,
            t.congestion,
            t.mss,
            gbps(t.goodput_bps),
            t.segments,
            t.retransmitted_segments,
            t.retransmitted_bytes,
            rtt(|p| p.p50),
            rtt(|p| p.p99),
            rtt(|p| p.max),
        );
    }
}
