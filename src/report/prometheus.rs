//! A report in Prometheus' text exposition format (version 0.0.4), for `lossless tap
//! --metrics`: SONiC's counters under `lossless_*` names — PFC frames per port and
//! priority (`pfcstat`), queue counters and watermarks (`queuestat`, `watermarkstat`), PG
//! and pool watermarks, drops by reason, per-port rx/tx and the TAP engine's ledger of
//! frames read and written. Counters end in `_total`; watermarks and sizes are gauges.
//! Rendered from the same [`Report`] as the JSON, so a scrape and `/json` agree.

use crate::report::model::{Report, SwitchReport};
use lossless_pipeline::counter_group::{CounterGroup, Kind};
use std::fmt::Write;

/// One metric family being written: its samples follow its HELP and TYPE lines.
struct Family<'a> {
    out: &'a mut String,
    name: std::borrow::Cow<'static, str>,
}

impl<'a> Family<'a> {
    fn new(
        out: &'a mut String,
        name: impl Into<std::borrow::Cow<'static, str>>,
        kind: &str,
        help: &str,
    ) -> Family<'a> {
        let name = name.into();
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        Family { out, name }
    }

    fn sample(&mut self, labels: &[(&str, &str)], value: impl std::fmt::Display) {
        self.sample_of("", labels, value);
    }

    /// A sample of the family's series `<name><suffix>` (a histogram's `_bucket`, `_sum`,
    /// `_count`).
    fn sample_of(&mut self, suffix: &str, labels: &[(&str, &str)], value: impl std::fmt::Display) {
        let _ = write!(self.out, "{}{suffix}", self.name);
        if !labels.is_empty() {
            let l: Vec<String> = labels
                .iter()
                .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
                .collect();
            let _ = write!(self.out, "{{{}}}", l.join(","));
        }
        let _ = writeln!(self.out, " {value}");
    }
}

/// A label value with `\`, `"` and newlines escaped.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The whole exposition of `r`.
pub fn render(r: &Report) -> String {
    let mut o = String::new();
    Family::new(
        &mut o,
        "lossless_uptime_seconds",
        "gauge",
        "Time served (lossless tap) or simulated.",
    )
    .sample(&[], r.sim_time_ps as f64 / 1e12);
    ports(&mut o, &r.switches);
    pfc(&mut o, &r.switches);
    queues(&mut o, &r.switches);
    pgs(&mut o, &r.switches);
    pools(&mut o, &r.switches);
    drops(&mut o, &r.switches);
    acl(&mut o, &r.switches);
    cbfc(&mut o, &r.switches);
    llr(&mut o, &r.switches);
    trimming(&mut o, &r.switches);
    tap(&mut o, r);
    o
}

/// One family per counter of group `G`: `lossless_<prefix>_<key>`, `_total` on counters,
/// the help from the group's description with the SAI name.
fn group_families<G: CounterGroup>(
    o: &mut String,
    prefix: &str,
    samples: &[(Vec<(&str, String)>, &G)],
) {
    for (i, d) in G::DEFS.iter().enumerate() {
        let (kind, suffix) = match d.kind {
            Kind::Counter => ("counter", "_total"),
            Kind::Gauge => ("gauge", ""),
        };
        let help = format!("{} ({})", d.help, d.sai);
        let mut fam = Family::new(
            o,
            format!("lossless_{prefix}_{}{suffix}", d.key),
            kind,
            &help,
        );
        for (labels, g) in samples {
            let l: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
            fam.sample(&l, g.value(i));
        }
    }
}

/// Packet trimming per queue (`lossless_queue_*trim*`), port and switch, on switches
/// that trim; nothing when none does.
fn trimming(o: &mut String, sws: &[SwitchReport]) {
    let (mut queues, mut ports, mut switches) = (Vec::new(), Vec::new(), Vec::new());
    for sw in sws {
        let Some(t) = &sw.trim else { continue };
        switches.push((vec![("switch", sw.name.clone())], &t.0));
        for p in &sw.ports {
            let labels = vec![("switch", sw.name.clone()), ("port", p.port.clone())];
            for q in &p.queues {
                if let Some(t) = &q.trim {
                    let mut l = labels.clone();
                    l.push(("queue", q.queue.to_string()));
                    queues.push((l, &t.0));
                }
            }
            if let Some(t) = &p.trim {
                ports.push((labels, &t.0));
            }
        }
    }
    if !switches.is_empty() {
        group_families(o, "queue", &queues);
        group_families(o, "port", &ports);
        group_families(o, "switch", &switches);
    }
}

/// CBFC: port counters (`lossless_cbfc_*`) and credited channels' (`lossless_cbfc_vc_*`),
/// on ports that speak it; nothing when none does.
fn cbfc(o: &mut String, sws: &[SwitchReport]) {
    let mut ports = Vec::new();
    let mut vcs = Vec::new();
    for sw in sws {
        for p in &sw.ports {
            let Some(c) = &p.cbfc else { continue };
            let labels = vec![("switch", sw.name.clone()), ("port", p.port.clone())];
            for v in &c.vcs {
                let mut l = labels.clone();
                l.push(("vc", v.vc.to_string()));
                vcs.push((l, &v.counters.0));
            }
            ports.push((labels, &c.counters.0));
        }
    }
    if !ports.is_empty() {
        group_families(o, "cbfc", &ports);
        group_families(o, "cbfc_vc", &vcs);
    }
}

/// LLR: port counters (`lossless_llr_*`) on ports that speak it; nothing when none does.
fn llr(o: &mut String, sws: &[SwitchReport]) {
    let mut ports = Vec::new();
    for sw in sws {
        for p in &sw.ports {
            if let Some(l) = &p.llr {
                let labels = vec![("switch", sw.name.clone()), ("port", p.port.clone())];
                ports.push((labels, &l.counters.0));
            }
        }
    }
    if !ports.is_empty() {
        group_families(o, "llr", &ports);
    }
}

/// A per-port counter of every switch.
fn per_port(
    o: &mut String,
    sws: &[SwitchReport],
    name: &'static str,
    help: &str,
    f: fn(&crate::report::model::PortReport) -> u64,
) {
    let mut fam = Family::new(o, name, "counter", help);
    for sw in sws {
        for p in &sw.ports {
            fam.sample(&[("switch", &sw.name), ("port", &p.port)], f(p));
        }
    }
}

fn ports(o: &mut String, sws: &[SwitchReport]) {
    per_port(
        o,
        sws,
        "lossless_port_rx_packets_total",
        "Frames the port received.",
        |p| p.rx_packets,
    );
    per_port(
        o,
        sws,
        "lossless_port_rx_bytes_total",
        "Bytes the port received.",
        |p| p.rx_bytes,
    );
    per_port(
        o,
        sws,
        "lossless_port_rx_bad_fcs_total",
        "Frames the port received whose FCS check failed (corrupted on the wire).",
        |p| p.rx_bad_fcs,
    );
    per_port(
        o,
        sws,
        "lossless_port_tx_packets_total",
        "Frames the port sent, PFC included.",
        |p| p.tx_packets,
    );
    per_port(
        o,
        sws,
        "lossless_port_tx_bytes_total",
        "Bytes the port sent.",
        |p| p.tx_bytes,
    );
    let mut fam = Family::new(
        o,
        "lossless_port_link_up",
        "gauge",
        "1 while the port's link is up.",
    );
    for sw in sws {
        for p in &sw.ports {
            fam.sample(
                &[("switch", &sw.name), ("port", &p.port)],
                u8::from(p.link_up),
            );
        }
    }
}

/// A per-(port, priority) PFC series.
fn per_priority(
    o: &mut String,
    sws: &[SwitchReport],
    name: &'static str,
    help: &str,
    f: fn(&crate::report::model::PfcReport, usize) -> u64,
) {
    let mut fam = Family::new(o, name, "counter", help);
    for sw in sws {
        for p in &sw.ports {
            for prio in 0..lossless_buffer_model::PRIORITIES {
                let pr = prio.to_string();
                fam.sample(
                    &[("switch", &sw.name), ("port", &p.port), ("priority", &pr)],
                    f(&p.pfc, prio),
                );
            }
        }
    }
}

fn pfc(o: &mut String, sws: &[SwitchReport]) {
    per_priority(
        o,
        sws,
        "lossless_pfc_tx_frames_total",
        "PFC frames sent for the priority, XOFF and XON (pfcstat Tx).",
        |p, i| p.tx_xoff[i] + p.tx_xon[i],
    );
    per_priority(
        o,
        sws,
        "lossless_pfc_rx_frames_total",
        "PFC frames received for the priority, XOFF and XON (pfcstat Rx).",
        |p, i| p.rx_xoff[i] + p.rx_xon[i],
    );
    per_priority(
        o,
        sws,
        "lossless_pfc_tx_xoff_total",
        "PFC frames sent pausing the priority.",
        |p, i| p.tx_xoff[i],
    );
    per_priority(
        o,
        sws,
        "lossless_pfc_tx_xon_total",
        "PFC frames sent resuming the priority.",
        |p, i| p.tx_xon[i],
    );
    per_priority(
        o,
        sws,
        "lossless_pfc_rx_xoff_total",
        "PFC frames received pausing the priority.",
        |p, i| p.rx_xoff[i],
    );
    per_priority(
        o,
        sws,
        "lossless_pfc_rx_xon_total",
        "PFC frames received resuming the priority.",
        |p, i| p.rx_xon[i],
    );
    let mut fam = Family::new(
        o,
        "lossless_pfc_rx_pause_seconds_total",
        "counter",
        "Time the priority's egress was paused by PFC received.",
    );
    for sw in sws {
        for p in &sw.ports {
            for (prio, ps) in p.pfc.rx_pause_ps.iter().enumerate() {
                let pr = prio.to_string();
                fam.sample(
                    &[("switch", &sw.name), ("port", &p.port), ("priority", &pr)],
                    *ps as f64 / 1e12,
                );
            }
        }
    }
}

/// A per-queue series (`kind` counter or gauge).
fn per_queue(
    o: &mut String,
    sws: &[SwitchReport],
    (name, kind, help): (&'static str, &str, &str),
    f: fn(&crate::report::model::QueueReport) -> u64,
) {
    let mut fam = Family::new(o, name, kind, help);
    for sw in sws {
        for p in &sw.ports {
            for q in &p.queues {
                let qi = q.queue.to_string();
                fam.sample(
                    &[("switch", &sw.name), ("port", &p.port), ("queue", &qi)],
                    f(q),
                );
            }
        }
    }
}

fn queues(o: &mut String, sws: &[SwitchReport]) {
    per_queue(
        o,
        sws,
        (
            "lossless_queue_tx_packets_total",
            "counter",
            "Frames the egress queue sent (queuestat).",
        ),
        |q| q.tx_packets,
    );
    per_queue(
        o,
        sws,
        (
            "lossless_queue_tx_bytes_total",
            "counter",
            "Bytes the egress queue sent.",
        ),
        |q| q.tx_bytes,
    );
    per_queue(
        o,
        sws,
        (
            "lossless_queue_drop_packets_total",
            "counter",
            "Frames dropped at the egress queue.",
        ),
        |q| q.drop_packets,
    );
    per_queue(
        o,
        sws,
        (
            "lossless_queue_ecn_marked_total",
            "counter",
            "Frames the queue marked CE.",
        ),
        |q| q.ecn_marked,
    );
    per_queue(
        o,
        sws,
        (
            "lossless_queue_watermark_bytes",
            "gauge",
            "Peak occupancy of the queue (watermarkstat).",
        ),
        |q| q.watermark_bytes,
    );
    per_queue(
        o,
        sws,
        (
            "lossless_queue_shared_watermark_bytes",
            "gauge",
            "Peak shared-buffer occupancy of the queue.",
        ),
        |q| q.shared_watermark_bytes,
    );
}

/// A per-PG series (`kind` counter or gauge).
fn per_pg(
    o: &mut String,
    sws: &[SwitchReport],
    (name, kind, help): (&'static str, &str, &str),
    f: fn(&crate::report::model::PgReport) -> u64,
) {
    let mut fam = Family::new(o, name, kind, help);
    for sw in sws {
        for p in &sw.ports {
            for g in &p.pgs {
                let gi = g.pg.to_string();
                fam.sample(
                    &[("switch", &sw.name), ("port", &p.port), ("pg", &gi)],
                    f(g),
                );
            }
        }
    }
}

fn pgs(o: &mut String, sws: &[SwitchReport]) {
    per_pg(
        o,
        sws,
        (
            "lossless_pg_shared_watermark_bytes",
            "gauge",
            "Peak shared-buffer use of the ingress priority group.",
        ),
        |g| g.shared_watermark_bytes,
    );
    per_pg(
        o,
        sws,
        (
            "lossless_pg_headroom_watermark_bytes",
            "gauge",
            "Peak headroom use of the ingress priority group (nonzero only after XOFF).",
        ),
        |g| g.headroom_watermark_bytes,
    );
    per_pg(
        o,
        sws,
        (
            "lossless_pg_drop_packets_total",
            "counter",
            "Frames the priority group refused at ingress.",
        ),
        |g| g.drop_packets,
    );
}

fn pools(o: &mut String, sws: &[SwitchReport]) {
    type Field = fn(&crate::report::model::PoolReport) -> u64;
    let series: [(&'static str, &str, Field); 4] = [
        (
            "lossless_pool_size_bytes",
            "Shared size of the buffer pool.",
            |p| p.size_bytes,
        ),
        (
            "lossless_pool_watermark_bytes",
            "Peak shared use of the buffer pool.",
            |p| p.watermark_bytes,
        ),
        (
            "lossless_pool_headroom_size_bytes",
            "Size of the pool's shared headroom pool (0: none).",
            |p| p.headroom_size_bytes,
        ),
        (
            "lossless_pool_headroom_watermark_bytes",
            "Peak use of the pool's shared headroom pool.",
            |p| p.headroom_watermark_bytes,
        ),
    ];
    for (name, help, f) in series {
        let mut fam = Family::new(o, name, "gauge", help);
        for sw in sws {
            for p in &sw.pools {
                let slice = p.slice.unwrap_or(0).to_string();
                fam.sample(
                    &[("switch", &sw.name), ("pool", &p.name), ("slice", &slice)],
                    f(p),
                );
            }
        }
    }
}

fn drops(o: &mut String, sws: &[SwitchReport]) {
    let mut fam = Family::new(
        o,
        "lossless_drops_total",
        "counter",
        "Frames the switch dropped, by reason.",
    );
    for sw in sws {
        for (reason, n) in &sw.drops_by_reason {
            fam.sample(&[("switch", &sw.name), ("reason", reason)], n);
        }
    }
    let mut fam = Family::new(
        o,
        "lossless_lossless_drops_total",
        "counter",
        "Frames of lossless priority groups the MMU dropped (0 on a healthy lossless fabric).",
    );
    for sw in sws {
        fam.sample(&[("switch", &sw.name)], sw.lossless_drops);
    }
}

/// Each ACL rule's packets and bytes (SONiC's ACL counters).
fn acl(o: &mut String, sws: &[SwitchReport]) {
    if sws.iter().all(|s| s.acl.is_empty()) {
        return;
    }
    for (name, help, bytes) in [
        (
            "lossless_acl_packets_total",
            "Frames an ACL rule matched (as its table's winner).",
            false,
        ),
        (
            "lossless_acl_bytes_total",
            "Bytes (FCS included) of the frames an ACL rule matched.",
            true,
        ),
    ] {
        let mut fam = Family::new(o, name, "counter", help);
        for sw in sws {
            for r in &sw.acl {
                let labels = [
                    ("switch", sw.name.as_str()),
                    ("table", r.table.as_str()),
                    ("rule", r.rule.as_str()),
                ];
                fam.sample(&labels, if bytes { r.bytes } else { r.packets });
            }
        }
    }
}

/// The TAP engine's ledger per port: frames read, written, failed, overrun, too long,
/// lost in a full ring.
fn tap(o: &mut String, r: &Report) {
    let Some(t) = &r.tap else { return };
    type Field = fn(&crate::report::model::TapPortReport) -> u64;
    let series: [(&'static str, &str, Field); 8] = [
        (
            "lossless_tap_read_frames_total",
            "Frames read from the port's device.",
            |p| p.read_frames,
        ),
        (
            "lossless_tap_written_frames_total",
            "Frames written to the port's device.",
            |p| p.written_frames,
        ),
        (
            "lossless_tap_write_errors_total",
            "Frames that could not be written (link down, device gone).",
            |p| p.write_errors,
        ),
        (
            "lossless_tap_write_overruns_total",
            "Frames dropped on a full writer queue.",
            |p| p.write_overruns,
        ),
        (
            "lossless_tap_oversize_frames_total",
            "Frames from an interface too long to read whole (super-frames over 64 KB), dropped.",
            |p| p.oversize_frames,
        ),
        (
            "lossless_tap_segmented_frames_total",
            "Super-frames a host handed over with segmentation offload, cut into frames.",
            |p| p.segmented_frames,
        ),
        (
            "lossless_tap_segments_total",
            "Frames cut from super-frames, each received by the switch port.",
            |p| p.segments,
        ),
        (
            "lossless_tap_ring_drops_total",
            "Frames the host sent into a full ring (TAP or socket).",
            |p| p.kernel.map_or(0, |k| k.host_tx_dropped),
        ),
    ];
    let sw = r.switches.first().map_or("", |s| s.name.as_str());
    for (name, help, f) in series {
        let mut fam = Family::new(o, name, "counter", help);
        for p in &t.ports {
            let dev = p.tap.as_deref().or(p.iface.as_deref()).unwrap_or("");
            fam.sample(&[("switch", sw), ("port", &p.port), ("device", dev)], f(p));
        }
    }
    Family::new(
        o,
        "lossless_tap_link_changes_total",
        "counter",
        "Times a port's link went down or came back.",
    )
    .sample(&[("switch", sw)], t.link_changes);
    Family::new(
        o,
        "lossless_tap_reattached_total",
        "counter",
        "Times an interface port that was gone was attached again (an interface of its name appeared).",
    )
    .sample(&[("switch", sw)], t.reattached);
    Family::new(
        o,
        "lossless_tap_queued_frames",
        "gauge",
        "Frames in the switch's queues now.",
    )
    .sample(&[("switch", sw)], t.queued_at_exit);
    turns(o, sw, &t.turns);
}

/// The stall detector: gaps between the pipeline thread's turns, as a histogram in
/// seconds, the longest gap and wait overrun, and the stalls.
fn turns(o: &mut String, sw: &str, t: &crate::report::model::TurnsReport) {
    let seconds = |us: u64| us as f64 / 1e6;
    let mut fam = Family::new(
        o,
        "lossless_tap_turn_gap_seconds",
        "histogram",
        "Time between the starts of two turns of the pipeline thread (wait, read, switch, write).",
    );
    let mut below = 0;
    for b in &t.gap_histogram {
        below += b.turns;
        let le = b
            .le_us
            .map_or("+Inf".to_string(), |us| seconds(us).to_string());
        fam.sample_of("_bucket", &[("switch", sw), ("le", &le)], below);
    }
    fam.sample_of("_sum", &[("switch", sw)], seconds(t.gap_sum_us));
    fam.sample_of("_count", &[("switch", sw)], below);
    Family::new(
        o,
        "lossless_tap_turn_gap_max_seconds",
        "gauge",
        "Longest time between two turns of the pipeline thread (a wait is at most 50 ms: longer is a host stall).",
    )
    .sample(&[("switch", sw)], seconds(t.gap_max_us));
    Family::new(
        o,
        "lossless_tap_overslept_max_seconds",
        "gauge",
        "Longest a wait of the pipeline thread ran past what it asked for (the machine did not run it).",
    )
    .sample(&[("switch", sw)], seconds(t.overslept_max_us));
    Family::new(
        o,
        "lossless_tap_stalls_total",
        "counter",
        "Waits of the pipeline thread that ran 1 ms or more past what they asked for.",
    )
    .sample(&[("switch", sw)], t.stalls);
}

#[cfg(test)]
mod tests {
    #[test]
    fn label_values_are_escaped() {
        assert_eq!(super::escape(r#"a"b\c"#), r#"a\"b\\c"#);
        assert_eq!(super::escape("x\ny"), "x\\ny");
    }
}
