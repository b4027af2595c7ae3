//! The network around the switches: links with traffic, the deadlock indicator, flows,
//! host NICs, the engine's own counters, and the files a run wrote.

use super::{gbps, pct, time};
use crate::report::model::Report;
use std::fmt::Write;

/// Links with traffic in the window, both directions (multi-switch scenarios).
pub(super) fn links(o: &mut String, r: &Report) {
    if r.switches.len() < 2 {
        return;
    }
    let rows: Vec<String> = r
        .links
        .iter()
        .filter(|l| l.a_to_b_utilization + l.b_to_a_utilization > 0.0)
        .map(|l| {
            format!(
                "  {:<22} {:<22} {:>9} {:>9}",
                l.a,
                l.b,
                pct(l.a_to_b_utilization),
                pct(l.b_to_a_utilization)
            )
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(o, "Links with traffic (utilisation in the window)");
    let _ = writeln!(o, "  {:<22} {:<22} {:>9} {:>9}", "a", "b", "a→b", "b→a");
    for row in rows {
        let _ = writeln!(o, "{row}");
    }
    let _ = writeln!(o);
}

/// The deadlock indicator: each cycle, when it formed, fired and cleared.
pub(super) fn deadlocks(o: &mut String, r: &Report) {
    let Some(d) = &r.deadlocks else {
        return;
    };
    if d.found.is_empty() {
        let _ = writeln!(
            o,
            "Deadlock indicator (cycles of paused queues standing {}): none\n",
            time(d.deadlock_time_ps)
        );
        return;
    }
    let _ = writeln!(
        o,
        "PFC DEADLOCK: a cycle of queues, each paused by the next, sent nothing for {}",
        time(d.deadlock_time_ps)
    );
    for x in &d.found {
        let cleared = x.cleared_ps.map_or("never cleared".to_string(), |t| {
            format!("cleared {}", time(t))
        });
        let _ = writeln!(
            o,
            "  {} → (back to the first)\n    formed {}, detected {}, {}",
            x.cycle.join(" → "),
            time(x.formed_ps),
            time(x.detected_ps),
            cleared
        );
    }
    if d.stopped_run {
        let _ = writeln!(
            o,
            "  The run stopped here: it waits for idle, and no watchdog can break this cycle."
        );
    }
    let _ = writeln!(o);
}

/// The LLR stall indicator: each link direction stalled for good.
pub(super) fn llr_stalls(o: &mut String, r: &Report) {
    let Some(l) = &r.llr_stalls else {
        return;
    };
    if l.found.is_empty() {
        let _ = writeln!(
            o,
            "LLR stall indicator (links whose sender replays only on a NACK): none\n"
        );
        return;
    }
    let _ = writeln!(
        o,
        "LLR STALL: a receiver waits for the replay its NACK asked for, and its sender, with no replay timer or data age timeout, never replays"
    );
    for x in &l.found {
        let _ = writeln!(
            o,
            "  {} → {}: waiting since {}, detected {}",
            x.sender,
            x.receiver,
            time(x.since_ps),
            time(x.detected_ps)
        );
    }
    if l.stopped_run {
        let _ = writeln!(
            o,
            "  The run stopped here: it waits for idle, and nothing left in the scenario can end the stall (set llr.replay_timer)."
        );
    }
    let _ = writeln!(o);
}

pub(super) fn flows(o: &mut String, r: &Report) {
    if r.flows.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "Flows (throughput and latency in the window; percentiles to 3 significant digits)"
    );
    let _ = writeln!(
        o,
        "  {:<14} {:<14} {:>10} {:>10} {:>16} {:>12} {:>10} {:>10} {:>10} {:>10} {:>6} {:>7}",
        "flow",
        "src→dst",
        "tx/pkts",
        "rx/pkts",
        "throughput",
        "FCT",
        "lat p50",
        "p99",
        "p99.9",
        "max",
        "CE",
        "reord"
    );
    for f in &r.flows {
        let l = &f.latency_ps;
        let lat = |x: Option<u64>| x.map_or("-".to_string(), time);
        let _ = writeln!(
            o,
            "  {:<14} {:<14} {:>10} {:>10} {:>16} {:>12} {:>10} {:>10} {:>10} {:>10} {:>6} {:>7}",
            f.name,
            format!("{}→{}", f.src, f.dst),
            f.tx_packets,
            f.rx_packets,
            gbps(f.throughput_bps),
            f.fct_ps.map_or("-".to_string(), time),
            lat(l.p50),
            lat(l.p99),
            lat(l.p999),
            lat(l.max),
            f.ce_marked,
            f.reordered
        );
    }
    // FCT counts from the first frame sent: say it where a flow's first frame waited.
    let waited: Vec<String> = r
        .flows
        .iter()
        .filter_map(|f| match (f.fct_ps, f.fct_from_start_ps) {
            (Some(a), Some(b)) if b > a && (b - a) * 100 > a => Some(format!(
                "{} {} (its first frame left {} after its start)",
                f.name,
                time(b),
                time(b - a)
            )),
            _ => None,
        })
        .collect();
    if !waited.is_empty() {
        let _ = writeln!(
            o,
            "  FCT counts from the flow's first frame sent; from its start: {}",
            waited.join(", ")
        );
    }
    // tx/pkts counts frames sent, rx/pkts frames received: say where the difference is.
    let (tx, rx): (u64, u64) = r
        .flows
        .iter()
        .fold((0, 0), |(t, x), f| (t + f.tx_packets, x + f.rx_packets));
    if tx > rx {
        let t = &r.totals;
        let _ = writeln!(
            o,
            "  {} frames sent were not received: {} were still queued in the switches when the run ended, the rest on the wires or lost ({} dropped, {} lost on the wire on purpose, all flows together)",
            tx - rx,
            t.queued_at_end_frames,
            t.drops,
            t.injected_drops
        );
    }
}

pub(super) fn hosts(o: &mut String, r: &Report) {
    let window = r.measure.to_ps.saturating_sub(r.measure.from_ps) as f64;
    let hosts: Vec<String> = r
        .hosts
        .iter()
        .filter(|h| {
            h.paused_ps.iter().any(|x| *x > 0)
                || h.pfc.tx_frames + h.pfc.pause_tx_frames > 0
                || h.rx_drops > 0
        })
        .map(|h| {
            let one = |label: String, f: f64| {
                format!("{label} {} ({})", time((f * window).round() as u64), pct(f))
            };
            let f = h.paused_fraction;
            // A global PAUSE (or PFC on every priority at once) holds all eight alike.
            let paused: Vec<String> = if f[0] > 0.0 && f.iter().all(|x| *x == f[0]) {
                vec![one("every priority".into(), f[0])]
            } else {
                (0..8)
                    .filter(|i| f[*i] > 0.0)
                    .map(|i| one(format!("prio {i}"), f[i]))
                    .collect()
            };
            format!(
                "  {:<12} paused in the window: {}; {} frames sent: {}; rx drops: {}",
                h.name,
                if paused.is_empty() {
                    "-".into()
                } else {
                    paused.join(", ")
                },
                if h.pfc.pause_tx_frames > 0 {
                    "PAUSE"
                } else {
                    "PFC"
                },
                h.pfc.tx_frames + h.pfc.pause_tx_frames,
                h.rx_drops,
            )
        })
        .collect();
    if !hosts.is_empty() {
        let _ = writeln!(o, "\nHosts");
        for h in hosts {
            let _ = writeln!(o, "{h}");
        }
    }
}

pub(super) fn engine(o: &mut String, r: &Report) {
    let Some(e) = &r.engine else {
        return;
    };
    let extra: Vec<String> = [
        ("unconnected_drops", e.unconnected_drops),
        ("link_down_drops", e.link_down_drops),
        ("host_drops", e.host_drops),
        ("misdelivered", e.misdelivered),
        ("stalls", e.stalls),
    ]
    .iter()
    .filter(|(_, n)| *n > 0)
    .map(|(k, n)| format!("{k} {n}"))
    .collect();
    if !extra.is_empty() {
        let _ = writeln!(o, "\nEngine: {}", extra.join(", "));
    }
}

/// Where each output file went.
pub(super) fn outputs(o: &mut String, r: &Report) {
    let Some(out) = &r.outputs else {
        return;
    };
    let mut lines: Vec<String> = out
        .pcap
        .iter()
        .map(|f| format!("  pcap: {}", f.display()))
        .collect();
    if let Some(c) = &out.timeseries {
        lines.push(format!("  time series: {}", c.display()));
    }
    if let Some(c) = &out.pfc_log {
        lines.push(format!("  PFC event log: {}", c.display()));
    }
    if out.timeseries_cut {
        lines.push(format!(
            "  the time series stopped at {} rows (its cap): sample less often, or fewer ports",
            crate::config::topology::outputs::MAX_TIMESERIES_ROWS
        ));
    }
    for d in &out.created_dirs {
        lines.push(format!("  created directory {}", d.display()));
    }
    if !lines.is_empty() {
        let _ = writeln!(o, "\nOutputs");
        for l in lines {
            let _ = writeln!(o, "{l}");
        }
    }
}
