//! The text summary of a run, rendered from the JSON report so the two never disagree.
//! Tables follow SONiC's `pfcstat`, `queuestat` and `watermarkstat`; rows that are all zero
//! are left out; `lossless_drops` is always printed because it must be 0. PFC is counted
//! in frames (one frame may carry several priorities); a drop is shown once, where it
//! happened: at an ingress PG (its limit or headroom) or at an egress queue.

use serde_json::Value;
use std::fmt::Write;

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

fn arr8(v: &Value) -> [u64; 8] {
    core::array::from_fn(|i| u(&v[i]))
}

fn fracs8(v: &Value) -> [f64; 8] {
    core::array::from_fn(|i| v[i].as_f64().unwrap_or(0.0))
}

fn time(ps: u64) -> String {
    lossless_buffer_model::Time(ps).to_string()
}

fn gbps(bps: f64) -> String {
    format!("{:.3} Gb/s", bps / 1e9)
}

fn pct(x: f64) -> String {
    format!("{:.2}%", x * 100.0)
}

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

/// Render the report.
pub fn render(r: &Value) -> String {
    let mut o = String::new();
    header(&mut o, r);
    for sw in r["switches"].as_array().into_iter().flatten() {
        switch(&mut o, sw);
    }
    links(&mut o, r);
    deadlocks(&mut o, r);
    flows(&mut o, r);
    hosts(&mut o, r);
    engine(&mut o, r);
    outputs(&mut o, r);
    o
}

fn header(o: &mut String, r: &Value) {
    let sim_ps = u(&r["sim_time_ps"]);
    let wall = r["wall_time_s"].as_f64().unwrap_or(0.0);
    let hops = u(&r["packet_hops"]);
    let _ = writeln!(
        o,
        "{}: {} simulated in {:.2} s wall, {} events, {} packet-hops ({:.2} M packet-hops/s), seed {}",
        s(&r["name"]),
        time(sim_ps),
        wall,
        u(&r["events"]),
        hops,
        if wall > 0.0 { hops as f64 / wall / 1e6 } else { 0.0 },
        u(&r["seed"])
    );
    let (from, to) = (u(&r["measure"]["from_ps"]), u(&r["measure"]["to_ps"]));
    let whole = from == 0 && to == sim_ps;
    let _ = writeln!(
        o,
        "measured over {}–{}{}: throughput, utilisation, pause fractions, latency",
        time(from),
        time(to),
        if whole { " (the whole run)" } else { "" }
    );
    let t = &r["totals"];
    let (tx, rx, fly) = (
        u(&t["pfc_tx_frames"]),
        u(&t["pfc_rx_frames"]),
        u(&t["pfc_in_flight_frames"]),
    );
    let mut pfc = format!("PFC frames tx {tx} rx {rx}");
    if fly > 0 {
        let _ = write!(pfc, ", {fly} in flight at the end");
    }
    let lost = tx.saturating_sub(rx + fly);
    if lost > 0 {
        let _ = write!(pfc, ", {lost} not acted on (see drops)");
    }
    let _ = writeln!(
        o,
        "totals: lossless_drops {}, drops {}, {pfc}, ECN marked {}\n",
        u(&t["lossless_drops"]),
        u(&t["drops"]),
        u(&t["ecn_marked"])
    );
}

fn switch(o: &mut String, sw: &Value) {
    let _ = writeln!(
        o,
        "switch {}: lossless_drops {}",
        s(&sw["name"]),
        u(&sw["lossless_drops"])
    );
    let ports = sw["ports"].as_array().cloned().unwrap_or_default();
    pfcstat(o, &ports);
    utilisation(o, &ports);
    queues(o, &ports);
    pgs(o, &ports);
    let pools: Vec<String> = sw["pools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let mut t = format!(
                "{} {} of {}",
                s(&p["name"]),
                u(&p["watermark_bytes"]),
                u(&p["size_bytes"])
            );
            if u(&p["headroom_size_bytes"]) > 0 {
                let _ = write!(
                    t,
                    " (headroom pool {} of {})",
                    u(&p["headroom_watermark_bytes"]),
                    u(&p["headroom_size_bytes"])
                );
            }
            t
        })
        .collect();
    let _ = writeln!(o, "  Pool watermarks (bytes): {}", pools.join(", "));
    groups(o, sw);
    if let Some(d) = sw["drops_by_reason"].as_object() {
        if !d.is_empty() {
            let items: Vec<String> = d.iter().map(|(k, v)| format!("{k} {}", u(v))).collect();
            let _ = writeln!(o, "  Drops by reason: {}", items.join(", "));
        }
    }
    let _ = writeln!(o);
}

/// Next-hop groups: each member's share of the group's bytes in the window, the balance,
/// and the flowlet counters.
fn groups(o: &mut String, sw: &Value) {
    let groups = sw["groups"].as_array().cloned().unwrap_or_default();
    if groups.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "  Next-hop groups (share of bytes in the window; balance = busiest member / mean)"
    );
    for g in &groups {
        let members = g["members"].as_array().cloned().unwrap_or_default();
        let total: u64 = members.iter().map(|m| u(&m["window_bytes"])).sum();
        let shares: Vec<String> = members
            .iter()
            .map(|m| {
                let x = if total > 0 {
                    u(&m["window_bytes"]) as f64 / total as f64
                } else {
                    0.0
                };
                format!("{} {}", s(&m["port"]), pct(x))
            })
            .collect();
        let balance = g["balance"]
            .as_f64()
            .map_or("-".to_string(), |b| format!("{b:.2}"));
        let mut line = format!(
            "    {} ({}): {}; balance {balance}",
            s(&g["name"]),
            s(&g["mode"]),
            shares.join(", ")
        );
        if s(&g["mode"]) == "flowlet" {
            let _ = write!(
                line,
                "; flowlets {}, reassigned {}, table full {}",
                u(&g["flowlets"]),
                u(&g["reassignments"]),
                u(&g["table_full"])
            );
        }
        let _ = writeln!(o, "{line}");
    }
}

/// Links with traffic in the window, both directions (multi-switch scenarios).
fn links(o: &mut String, r: &Value) {
    if r["switches"].as_array().map_or(0, Vec::len) < 2 {
        return;
    }
    let rows: Vec<String> = r["links"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| {
            let ab = l["a_to_b_utilization"].as_f64().unwrap_or(0.0);
            let ba = l["b_to_a_utilization"].as_f64().unwrap_or(0.0);
            (ab + ba > 0.0).then(|| {
                format!(
                    "  {:<22} {:<22} {:>9} {:>9}",
                    s(&l["a"]),
                    s(&l["b"]),
                    pct(ab),
                    pct(ba)
                )
            })
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
fn deadlocks(o: &mut String, r: &Value) {
    let d = &r["deadlocks"];
    if d.is_null() {
        return;
    }
    let found = d["found"].as_array().cloned().unwrap_or_default();
    if found.is_empty() {
        let _ = writeln!(
            o,
            "Deadlock indicator (cycles of paused queues standing {}): none\n",
            time(u(&d["deadlock_time_ps"]))
        );
        return;
    }
    let _ = writeln!(
        o,
        "PFC DEADLOCK: a cycle of queues, each paused by the next, sent nothing for {}",
        time(u(&d["deadlock_time_ps"]))
    );
    for x in &found {
        let cycle: Vec<&str> = x["cycle"].as_array().unwrap().iter().map(s).collect();
        let cleared = x["cleared_ps"]
            .as_u64()
            .map_or("never cleared".to_string(), |t| {
                format!("cleared {}", time(t))
            });
        let _ = writeln!(
            o,
            "  {} → (back to the first)\n    formed {}, detected {}, {}",
            cycle.join(" → "),
            time(u(&x["formed_ps"])),
            time(u(&x["detected_ps"])),
            cleared
        );
    }
    if d["stopped_run"].as_bool() == Some(true) {
        let _ = writeln!(
            o,
            "  The run stopped here: it waits for idle, and no watchdog can break this cycle."
        );
    }
    let _ = writeln!(o);
}

/// pfcstat: frames, then xoff/xon per priority; then paused time per priority.
fn pfcstat(o: &mut String, ports: &[Value]) {
    for (dir, frames, keys) in [
        ("Rx", "rx_frames", ["rx_xoff", "rx_xon"]),
        ("Tx", "tx_frames", ["tx_xoff", "tx_xon"]),
    ] {
        let rows: Vec<_> = ports
            .iter()
            .filter(|p| u(&p["pfc"][frames]) > 0)
            .map(|p| {
                let a = arr8(&p["pfc"][keys[0]]);
                let b = arr8(&p["pfc"][keys[1]]);
                (s(&p["port"]).to_string(), u(&p["pfc"][frames]), a, b)
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(o, "  PFC {dir}: frames, then xoff/xon per priority");
        let _ = writeln!(
            o,
            "    {:<12} {:>9} {}",
            "Port",
            "Frames",
            (0..8)
                .map(|i| format!("{:>13}", format!("PFC{i}")))
                .collect::<String>()
        );
        for (port, n, a, b) in rows {
            let _ = writeln!(
                o,
                "    {:<12} {:>9} {}",
                port,
                n,
                (0..8)
                    .map(|i| format!("{:>13}", format!("{}/{}", a[i], b[i])))
                    .collect::<String>()
            );
        }
    }
    let sent: Vec<String> = ports
        .iter()
        .flat_map(|p| {
            let pfc = &p["pfc"];
            (0..8).filter_map(move |i| {
                let xoff = pfc["first_tx_xoff_ps"][i].as_u64()?;
                let xon = pfc["last_tx_xon_ps"][i]
                    .as_u64()
                    .filter(|x| *x >= xoff)
                    .map_or("none".to_string(), time);
                Some(format!(
                    "    {:<12} prio {i}: first XOFF {}, last XON {}",
                    s(&p["port"]),
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
    let storms: Vec<String> = ports
        .iter()
        .flat_map(|p| {
            let port = s(&p["port"]).to_string();
            p["pfcwd"].as_array().into_iter().flatten().map(move |w| {
                let restored = w["last_restored_ps"]
                    .as_u64()
                    .map_or("still stormed at the end".to_string(), |t| {
                        format!("last restored {}", time(t))
                    });
                format!(
                    "    {:<12} queue {}: {} storm(s), first detected {}, {}; {} restoration(s), {} frames dropped",
                    port,
                    w["queue"],
                    w["storms"],
                    w["first_storm_ps"].as_u64().map_or("-".to_string(), time),
                    restored,
                    w["restorations"],
                    w["dropped_packets"],
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
    let paused: Vec<_> = ports
        .iter()
        .filter_map(|p| {
            let a = arr8(&p["pfc"]["rx_pause_ps"]);
            let f = fracs8(&p["pfc"]["rx_pause_fraction"]);
            a.iter()
                .any(|x| *x > 0)
                .then(|| (s(&p["port"]).to_string(), a, f))
        })
        .collect();
    if !paused.is_empty() {
        let _ = writeln!(
            o,
            "  Paused by received PFC: time in the run (fraction of the window)"
        );
        for (port, a, f) in paused {
            let cells: Vec<String> = (0..8)
                .filter(|i| a[*i] > 0)
                .map(|i| format!("prio {i}: {} ({})", time(a[i]), pct(f[i])))
                .collect();
            let _ = writeln!(o, "    {:<12} {}", port, cells.join(", "));
        }
    }
}

fn utilisation(o: &mut String, ports: &[Value]) {
    let busy: Vec<String> = ports
        .iter()
        .filter_map(|p| {
            let x = p["tx_utilization"].as_f64().unwrap_or(0.0);
            (x > 0.0).then(|| format!("{} {}", s(&p["port"]), pct(x)))
        })
        .collect();
    if !busy.is_empty() {
        let _ = writeln!(o, "  Tx utilisation (window): {}", busy.join(", "));
    }
}

/// queuestat: egress queues, with the drops that happened there.
fn queues(o: &mut String, ports: &[Value]) {
    let _ = writeln!(o, "  Egress queues (non-idle; drops at the queue)");
    let _ = writeln!(
        o,
        "    {:<12} {:>4} {:>12} {:>14} {:>10} {:>12} {:>10} {:>12}",
        "Port", "TxQ", "Tx/pkts", "Tx/bytes", "Drop/pkts", "Drop/bytes", "ECN/pkts", "Watermark"
    );
    for p in ports {
        for q in p["queues"].as_array().into_iter().flatten() {
            if u(&q["tx_packets"]) + u(&q["drop_packets"]) + u(&q["watermark_bytes"]) == 0 {
                continue;
            }
            let _ = writeln!(
                o,
                "    {:<12} {:>4} {:>12} {:>14} {:>10} {:>12} {:>10} {:>12}",
                s(&p["port"]),
                format!("UC{}", u(&q["queue"])),
                u(&q["tx_packets"]),
                u(&q["tx_bytes"]),
                u(&q["drop_packets"]),
                u(&q["drop_bytes"]),
                u(&q["ecn_marked"]),
                u(&q["watermark_bytes"])
            );
        }
    }
}

/// watermarkstat for PGs, with the drops that happened at ingress.
fn pgs(o: &mut String, ports: &[Value]) {
    let mut rows = Vec::new();
    for p in ports {
        for g in p["pgs"].as_array().into_iter().flatten() {
            if u(&g["shared_watermark_bytes"])
                + u(&g["headroom_watermark_bytes"])
                + u(&g["drop_packets"])
                > 0
            {
                rows.push(format!(
                    "    {:<12} {:>4} {:>16} {:>18} {:>10}",
                    s(&p["port"]),
                    format!("PG{}", u(&g["pg"])),
                    u(&g["shared_watermark_bytes"]),
                    u(&g["headroom_watermark_bytes"]),
                    u(&g["drop_packets"])
                ));
            }
        }
    }
    if !rows.is_empty() {
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
}

fn flows(o: &mut String, r: &Value) {
    let flows = r["flows"].as_array().cloned().unwrap_or_default();
    if flows.is_empty() {
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
    for f in &flows {
        let l = &f["latency_ps"];
        let lat = |k: &str| l[k].as_u64().map_or("-".to_string(), time);
        let _ = writeln!(
            o,
            "  {:<14} {:<14} {:>10} {:>10} {:>16} {:>12} {:>10} {:>10} {:>10} {:>10} {:>6} {:>7}",
            s(&f["name"]),
            format!("{}→{}", s(&f["src"]), s(&f["dst"])),
            u(&f["tx_packets"]),
            u(&f["rx_packets"]),
            gbps(f["throughput_bps"].as_f64().unwrap_or(0.0)),
            f["fct_ps"].as_u64().map_or("-".to_string(), time),
            lat("p50"),
            lat("p99"),
            lat("p999"),
            lat("max"),
            u(&f["ce_marked"]),
            u(&f["reordered"])
        );
    }
}

fn hosts(o: &mut String, r: &Value) {
    let hosts: Vec<String> = r["hosts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| {
            let p = arr8(&h["paused_ps"]);
            let f = fracs8(&h["paused_fraction"]);
            let sent = u(&h["pfc"]["tx_frames"]);
            let drops = u(&h["rx_drops"]);
            (p.iter().any(|x| *x > 0) || sent > 0 || drops > 0).then(|| {
                let paused: Vec<String> = (0..8)
                    .filter(|i| p[*i] > 0)
                    .map(|i| format!("prio {i} {} ({})", time(p[i]), pct(f[i])))
                    .collect();
                format!(
                    "  {:<12} paused: {}; PFC frames sent: {sent}; rx drops: {drops}",
                    s(&h["name"]),
                    if paused.is_empty() {
                        "-".into()
                    } else {
                        paused.join(", ")
                    },
                )
            })
        })
        .collect();
    if !hosts.is_empty() {
        let _ = writeln!(o, "\nHosts");
        for h in hosts {
            let _ = writeln!(o, "{h}");
        }
    }
}

fn engine(o: &mut String, r: &Value) {
    let e = &r["engine"];
    let extra: Vec<String> = [
        "unconnected_drops",
        "link_down_drops",
        "host_drops",
        "misdelivered",
        "stalls",
    ]
    .iter()
    .filter(|k| u(&e[**k]) > 0)
    .map(|k| format!("{k} {}", u(&e[*k])))
    .collect();
    if !extra.is_empty() {
        let _ = writeln!(o, "\nEngine: {}", extra.join(", "));
    }
}

/// Where each output file went.
fn outputs(o: &mut String, r: &Value) {
    let Some(out) = r["outputs"].as_object() else {
        return;
    };
    let mut lines = Vec::new();
    if let Some(p) = out.get("pcap").and_then(Value::as_array) {
        for f in p {
            lines.push(format!("  pcap: {}", s(f)));
        }
    }
    if let Some(c) = out.get("timeseries").and_then(Value::as_str) {
        lines.push(format!("  time series: {c}"));
    }
    if let Some(c) = out.get("pfc_log").and_then(Value::as_str) {
        lines.push(format!("  PFC event log: {c}"));
    }
    if !lines.is_empty() {
        let _ = writeln!(o, "\nOutputs");
        for l in lines {
            let _ = writeln!(o, "{l}");
        }
    }
}
