//! One switch's tables: `pfcstat` (frames, XOFF/XON per priority, the Tx timeline, the
//! watchdog's storms, paused time), utilisation, `queuestat`, PG watermarks, pools, the
//! next-hop groups, the ACL rules' counters and the drops by reason.

use super::{pct, time};
use crate::report::model::{PortReport, SwitchReport};
use std::fmt::Write;

/// Render switch `sw`; the window is `window` ps long.
pub(super) fn render(o: &mut String, sw: &SwitchReport, window: f64) {
    let _ = writeln!(
        o,
        "switch {}: lossless_drops {}",
        sw.name, sw.lossless_drops
    );
    let ports = &sw.ports;
    pfcstat(o, ports, false);
    pause(o, ports);
    timeline(o, ports);
    storms(o, ports);
    paused(o, ports, window);
    utilisation(o, ports);
    queues(o, ports, false);
    pgs(o, ports, false);
    super::link::cbfc(o, ports, false);
    super::link::llr(o, ports, false);
    pools(o, sw);
    groups(o, sw);
    acl(o, sw);
    p4(o, sw);
    if !sw.drops_by_reason.is_empty() {
        let items: Vec<String> = sw
            .drops_by_reason
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(o, "  Drops by reason: {}", items.join(", "));
    }
    let _ = writeln!(o);
}

/// One of SONiC's tables alone, for `lossless show`: `pfcstat` (with the pause frames),
/// `queuestat`, or `watermarkstat` (PGs and pools), every port and queue listed, zeros
/// included, as SONiC lists them.
pub(super) fn table(o: &mut String, sw: &SwitchReport, t: super::Table) {
    let _ = writeln!(o, "switch {}", sw.name);
    let before = o.len();
    match t {
        super::Table::Pfc => {
            pfcstat(o, &sw.ports, true);
            pause(o, &sw.ports);
        }
        super::Table::Queue => queues(o, &sw.ports, true),
        super::Table::Watermark => {
            pgs(o, &sw.ports, true);
            pools(o, sw);
        }
        super::Table::Cbfc => super::link::cbfc(o, &sw.ports, true),
        super::Table::Llr => super::link::llr(o, &sw.ports, true),
        super::Table::Trim => trimming(o, &sw.ports),
        super::Table::P4 => p4(o, sw),
        super::Table::Ledger => {}
    }
    if o.len() == before {
        // Say so rather than print nothing: the switch has no port of that kind.
        let none = match t {
            super::Table::Cbfc => "no port speaks CBFC (qos.flow_control: cbfc)",
            super::Table::Llr => "no port speaks LLR (llr:)",
            super::Table::Trim => {
                "no queue trims (trimming:, a queue profile's packet_discard_action: trim)"
            }
            super::Table::P4 => "the switch runs no P4 program (p4:)",
            _ => "nothing to show",
        };
        let _ = writeln!(o, "  {none}");
    }
}

/// Packet trimming per port and queue that trims: frames trimmed, trimmed copies sent
/// and dropped (trim = sent + dropped once the copies have left), SAI's trim counters.
fn trimming(o: &mut String, ports: &[PortReport]) {
    if ports.iter().all(|p| p.trim.is_none()) {
        let _ = writeln!(o, "  the switch does not trim (no `trimming:`)");
        return;
    }
    let _ = writeln!(
        o,
        "  Trimming (SAI_QUEUE_STAT_TRIM_PACKETS, _TX_TRIM_PACKETS, _DROPPED_TRIM_PACKETS)"
    );
    let _ = writeln!(
        o,
        "    {:<12} {:>5} {:>12} {:>12} {:>12}",
        "Port", "Queue", "Trim", "TrimSent", "TrimDrop"
    );
    for p in ports {
        let Some(t) = &p.trim else { continue };
        for q in &p.queues {
            if let Some(qt) = &q.trim {
                let _ = writeln!(
                    o,
                    "    {:<12} {:>5} {:>12} {:>12} {:>12}",
                    p.port,
                    q.queue,
                    qt.0.trim_packets,
                    qt.0.tx_trim_packets,
                    qt.0.dropped_trim_packets
                );
            }
        }
        let t = &t.0;
        let _ = writeln!(
            o,
            "    {:<12} {:>5} {:>12} {:>12} {:>12}",
            p.port, "all", t.trim_packets, t.tx_trim_packets, t.dropped_trim_packets
        );
    }
}

/// Pool watermarks, with the shared headroom pools'.
fn pools(o: &mut String, sw: &SwitchReport) {
    let pools: Vec<String> = sw
        .pools
        .iter()
        .map(|p| {
            let name = match p.slice {
                Some(k) => format!("{}[slice {k}]", p.name),
                None => p.name.clone(),
            };
            let mut t = format!("{name} {} of {}", p.watermark_bytes, p.size_bytes);
            if p.headroom_size_bytes > 0 {
                let _ = write!(
                    t,
                    " (headroom pool {} of {})",
                    p.headroom_watermark_bytes, p.headroom_size_bytes
                );
            }
            t
        })
        .collect();
    let _ = writeln!(o, "  Pool watermarks (bytes): {}", pools.join(", "));
}

/// Next-hop groups: each member's share of the group's bytes in the window, the balance,
/// and the flowlet counters.
fn groups(o: &mut String, sw: &SwitchReport) {
    if sw.groups.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "  Next-hop groups (share of bytes in the window; balance = busiest member / mean)"
    );
    for g in &sw.groups {
        let total: u64 = g.members.iter().map(|m| m.window_bytes).sum();
        let shares: Vec<String> = g
            .members
            .iter()
            .map(|m| {
                let x = if total > 0 {
                    m.window_bytes as f64 / total as f64
                } else {
                    0.0
                };
                format!("{} {}", m.port, pct(x))
            })
            .collect();
        let balance = g.balance.map_or("-".to_string(), |b| format!("{b:.2}"));
        let mut line = format!(
            "    {} ({}): {}; balance {balance}",
            g.name,
            g.mode,
            shares.join(", ")
        );
        if g.mode == "flowlet" {
            let _ = write!(
                line,
                "; flowlets {}, reassigned {}, table full {}",
                g.flowlets, g.reassignments, g.table_full
            );
        }
        let _ = writeln!(o, "{line}");
    }
}

/// The P4 program: its tables' entries, hits and misses, and its counters and registers
/// that moved.
fn p4(o: &mut String, sw: &SwitchReport) {
    let Some(p) = &sw.p4 else {
        return;
    };
    let _ = writeln!(
        o,
        "  P4 program {} (queue depths in {})",
        p.program, p.queue_depth
    );
    let _ = writeln!(
        o,
        "    {:<32} {:>8} {:>12} {:>12}",
        "Table", "Entries", "Hits", "Misses"
    );
    for t in &p.tables {
        let _ = writeln!(
            o,
            "    {:<32} {:>8} {:>12} {:>12}",
            t.name, t.entries, t.hits, t.misses
        );
        if let Some(c) = &t.direct_counter {
            let shown: Vec<String> = t
                .entry_counts
                .iter()
                .map(|(i, n, b)| format!("[{i}] {n} pkts {b} B"))
                .collect();
            let _ = writeln!(
                o,
                "      direct counter {c} (entries in the order added): {}",
                if shown.is_empty() {
                    "no hits".to_string()
                } else {
                    shown.join(", ")
                }
            );
        }
    }
    for (name, cells) in &p.counters {
        let shown: Vec<String> = cells
            .iter()
            .map(|(i, n, b)| format!("[{i}] {n} pkts {b} B"))
            .collect();
        let _ = writeln!(o, "    counter {name}: {}", shown.join(", "));
    }
    for (name, cells) in &p.registers {
        let shown: Vec<String> = cells.iter().map(|(i, v)| format!("[{i}] {v}")).collect();
        let _ = writeln!(o, "    register {name}: {}", shown.join(", "));
    }
    if p.out_of_range > 0 {
        let _ = writeln!(
            o,
            "    {} counter or register indices past their array's end (ignored)",
            p.out_of_range
        );
    }
}

/// ACL rules with their counters, as SONiC's `aclshow -a` lists them.
fn acl(o: &mut String, sw: &SwitchReport) {
    if sw.acl.is_empty() {
        return;
    }
    let _ = writeln!(o, "  ACL rules (aclshow -a; lookup order)");
    let _ = writeln!(
        o,
        "    {:<16} {:<16} {:>7} {:<8} {:>12} {:>14}",
        "Rule", "Table", "Prio", "Action", "Packets", "Bytes"
    );
    for r in &sw.acl {
        let _ = writeln!(
            o,
            "    {:<16} {:<16} {:>7} {:<8} {:>12} {:>14}",
            r.rule, r.table, r.priority, r.action, r.packets, r.bytes
        );
    }
}

/// pfcstat: frames, then xoff/xon per priority, received and sent.
fn pfcstat(o: &mut String, ports: &[PortReport], all: bool) {
    for dir in ["Rx", "Tx"] {
        let rows: Vec<_> = ports
            .iter()
            .filter_map(|p| {
                let c = &p.pfc;
                let (n, xoff, xon) = match dir {
                    "Rx" => (c.rx_frames, &c.rx_xoff, &c.rx_xon),
                    _ => (c.tx_frames, &c.tx_xoff, &c.tx_xon),
                };
                (all || n > 0).then_some((&p.port, n, xoff, xon))
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(o, "  PFC {dir}: frames, then xoff/xon per priority");
        // Columns as wide as the widest cell, with a space between any two.
        let cell = |a: &[u64; 8], b: &[u64; 8], i: usize| format!("{}/{}", a[i], b[i]);
        let width = rows
            .iter()
            .flat_map(|(_, _, a, b)| (0..8).map(|i| cell(a, b, i).len() + 1))
            .max()
            .unwrap_or(0)
            .max(13);
        let _ = writeln!(
            o,
            "    {:<12} {:>9} {}",
            "Port",
            "Frames",
            (0..8)
                .map(|i| format!("{:>width$}", format!("PFC{i}")))
                .collect::<String>()
        );
        for (port, n, a, b) in rows {
            let _ = writeln!(
                o,
                "    {:<12} {:>9} {}",
                port,
                n,
                (0..8)
                    .map(|i| format!("{:>width$}", cell(a, b, i)))
                    .collect::<String>()
            );
        }
    }
}

/// 802.3x PAUSE frames per port (ports that speak PAUSE instead of PFC).
fn pause(o: &mut String, ports: &[PortReport]) {
    let rows: Vec<String> = ports
        .iter()
        .filter(|p| p.pfc.pause_tx_frames + p.pfc.pause_rx_frames > 0)
        .map(|p| {
            format!(
                "    {:<12} tx {:>9} rx {:>9}",
                p.port, p.pfc.pause_tx_frames, p.pfc.pause_rx_frames
            )
        })
        .collect();
    if !rows.is_empty() {
        let _ = writeln!(o, "  802.3x PAUSE frames (the whole link, every priority)");
        for r in rows {
            let _ = writeln!(o, "{r}");
        }
    }
}

/// When each port first paused its peer, and last resumed it.
fn timeline(o: &mut String, ports: &[PortReport]) {
    let sent: Vec<String> = ports
        .iter()
        .flat_map(|p| {
            (0..8).filter_map(move |i| {
                let xoff = p.pfc.first_tx_xoff_ps[i]?;
                let xon = p.pfc.last_tx_xon_ps[i]
                    .filter(|x| *x >= xoff)
                    .map_or("none".to_string(), time);
                Some(format!(
                    "    {:<12} prio {i}: first XOFF {}, last XON {}",
                    p.port,
                    time(xoff),
                    xon
                ))
            })
        })
        .collect();
    if !sent.is_empty() {
        let _ = writeln!(
            o,
            "  PFC Tx timeline: when each port first paused its peer, and last resumed it"
        );
        for line in sent {
            let _ = writeln!(o, "{line}");
        }
    }
}

/// The PFC watchdog's stormed queues.
fn storms(o: &mut String, ports: &[PortReport]) {
    let storms: Vec<String> = ports
        .iter()
        .flat_map(|p| {
            p.pfcwd.iter().map(move |w| {
                let restored = w
                    .last_restored_ps
                    .map_or("still stormed at the end".to_string(), |t| {
                        format!("last restored {}", time(t))
                    });
                format!(
                    "    {:<12} queue {}: {} storm(s), first detected {}, {}; {} restoration(s), {} frames dropped",
                    p.port,
                    w.queue,
                    w.storms,
                    w.first_storm_ps.map_or("-".to_string(), time),
                    restored,
                    w.restorations,
                    w.dropped_packets,
                )
            })
        })
        .collect();
    if !storms.is_empty() {
        let _ = writeln!(o, "  PFC watchdog: stormed queues");
        for line in storms {
            let _ = writeln!(o, "{line}");
        }
    }
}

/// Time each port was paused by the PFC it received in the window (`window` ps long).
fn paused(o: &mut String, ports: &[PortReport], window: f64) {
    let paused: Vec<_> = ports
        .iter()
        .filter(|p| p.pfc.rx_pause_fraction.iter().any(|x| *x > 0.0))
        .collect();
    if paused.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "  Paused by received PFC in the window: time (fraction of the window)"
    );
    for p in paused {
        let f = &p.pfc.rx_pause_fraction;
        let cells: Vec<String> = (0..8)
            .filter(|i| f[*i] > 0.0)
            .map(|i| {
                let t = time((f[i] * window).round() as u64);
                format!("prio {i}: {t} ({})", pct(f[i]))
            })
            .collect();
        let _ = writeln!(o, "    {:<12} {}", p.port, cells.join(", "));
    }
}

fn utilisation(o: &mut String, ports: &[PortReport]) {
    let busy: Vec<String> = ports
        .iter()
        .filter(|p| p.tx_utilization > 0.0)
        .map(|p| format!("{} {}", p.port, pct(p.tx_utilization)))
        .collect();
    if !busy.is_empty() {
        let _ = writeln!(o, "  Tx utilisation (window): {}", busy.join(", "));
    }
}

/// queuestat: egress queues, with the drops that happened there.
fn queues(o: &mut String, ports: &[PortReport], all: bool) {
    // On a switch that trims, SONiC's queuestat columns for it too.
    let trims = ports.iter().any(|p| p.trim.is_some());
    let _ = writeln!(o, "  Egress queues (non-idle; drops at the queue)");
    let mut head = format!(
        "    {:<12} {:>4} {:>12} {:>14} {:>10} {:>12} {:>10} {:>12}",
        "Port", "TxQ", "Tx/pkts", "Tx/bytes", "Drop/pkts", "Drop/bytes", "ECN/pkts", "Watermark"
    );
    if trims {
        let _ = write!(
            head,
            " {:>10} {:>14} {:>14}",
            "Trim/pkts", "TrimSent/pkts", "TrimDrop/pkts"
        );
    }
    let _ = writeln!(o, "{head}");
    for p in ports {
        for q in &p.queues {
            if !all && q.tx_packets + q.drop_packets + q.watermark_bytes == 0 {
                continue;
            }
            let mut row = format!(
                "    {:<12} {:>4} {:>12} {:>14} {:>10} {:>12} {:>10} {:>12}",
                p.port,
                format!("UC{}", q.queue),
                q.tx_packets,
                q.tx_bytes,
                q.drop_packets,
                q.drop_bytes,
                q.ecn_marked,
                q.watermark_bytes
            );
            if let Some(t) = &q.trim {
                let t = &t.0;
                let _ = write!(
                    row,
                    " {:>10} {:>14} {:>14}",
                    t.trim_packets, t.tx_trim_packets, t.dropped_trim_packets
                );
            }
            let _ = writeln!(o, "{row}");
        }
    }
    if trims {
        let rows: Vec<String> = ports
            .iter()
            .filter_map(|p| p.trim.as_ref().map(|t| (p, &t.0)))
            .filter(|(_, t)| all || t.trim_packets > 0)
            .map(|(p, t)| {
                format!(
                    "{} trim {}, sent {}, dropped {}",
                    p.port, t.trim_packets, t.tx_trim_packets, t.dropped_trim_packets
                )
            })
            .collect();
        if !rows.is_empty() {
            let _ = writeln!(
                o,
                "  Trimmed per port (TRIM_PKTS, TRIM_TX_PKTS, TRIM_DRP_PKTS): {}",
                rows.join("; ")
            );
        }
    }
}

/// watermarkstat for PGs, with the drops that happened at ingress.
fn pgs(o: &mut String, ports: &[PortReport], all: bool) {
    let rows: Vec<String> = ports
        .iter()
        .flat_map(|p| p.pgs.iter().map(move |g| (p, g)))
        .filter(|(_, g)| {
            all || g.shared_watermark_bytes + g.headroom_watermark_bytes + g.drop_packets > 0
        })
        .map(|(p, g)| {
            format!(
                "    {:<12} {:>4} {:>16} {:>18} {:>10}",
                p.port,
                format!("PG{}", g.pg),
                g.shared_watermark_bytes,
                g.headroom_watermark_bytes,
                g.drop_packets
            )
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(o, "  Ingress PGs (watermarks; drops at ingress)");
    let _ = writeln!(
        o,
        "    {:<12} {:>4} {:>16} {:>18} {:>10}",
        "Port", "PG", "Shared/bytes", "Headroom/bytes", "Drop/pkts"
    );
    for row in rows {
        let _ = writeln!(o, "{row}");
    }
}
