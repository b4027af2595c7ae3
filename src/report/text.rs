//! The text summary of a run, rendered from the JSON report so the two never disagree.
//! Tables follow SONiC's `pfcstat`, `queuestat` and `watermarkstat`; rows that are all zero
//! are left out; `lossless_drops` is always printed because it must be 0.

use serde_json::Value;
use std::fmt::Write;

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

fn arr8(v: &Value) -> [u64; 8] {
    core::array::from_fn(|i| u(&v[i]))
}

fn time(ps: u64) -> String {
    lossless_buffer_model::Time(ps).to_string()
}

fn gbps(bps: f64) -> String {
    format!("{:.3} Gb/s", bps / 1e9)
}

/// Render the report.
pub fn render(r: &Value) -> String {
    let mut o = String::new();
    let sim_ps = u(&r["sim_time_ps"]);
    let wall = r["wall_time_s"].as_f64().unwrap_or(0.0);
    let hops = u(&r["packet_hops"]);
    let _ = writeln!(
        o,
        "{}: {} simulated in {:.2} s wall, {} events, {} packet-hops ({:.2} M packet-hops/s), seed {}",
        r["name"].as_str().unwrap_or(""),
        time(sim_ps),
        wall,
        u(&r["events"]),
        hops,
        if wall > 0.0 { hops as f64 / wall / 1e6 } else { 0.0 },
        u(&r["seed"])
    );
    let t = &r["totals"];
    let _ = writeln!(
        o,
        "totals: lossless_drops {}, drops {}, PFC frames tx {} rx {}, ECN marked {}\n",
        u(&t["lossless_drops"]),
        u(&t["drops"]),
        u(&t["pfc_tx_frames"]),
        u(&t["pfc_rx_frames"]),
        u(&t["ecn_marked"])
    );
    for sw in r["switches"].as_array().into_iter().flatten() {
        let name = sw["name"].as_str().unwrap_or("");
        let _ = writeln!(
            o,
            "switch {name}: lossless_drops {}",
            u(&sw["lossless_drops"])
        );
        let ports = sw["ports"].as_array().cloned().unwrap_or_default();
        // pfcstat
        for (dir, keys) in [("Rx", ["rx_xoff", "rx_xon"]), ("Tx", ["tx_xoff", "tx_xon"])] {
            let rows: Vec<_> = ports
                .iter()
                .filter_map(|p| {
                    let a = arr8(&p["pfc"][keys[0]]);
                    let b = arr8(&p["pfc"][keys[1]]);
                    (a.iter().chain(&b).any(|x| *x > 0))
                        .then(|| (p["port"].as_str().unwrap_or("").to_string(), a, b))
                })
                .collect();
            if rows.is_empty() {
                continue;
            }
            let _ = writeln!(o, "  PFC {dir} (xoff/xon per priority)");
            let _ = writeln!(
                o,
                "    {:<12} {}",
                "Port",
                (0..8)
                    .map(|i| format!("{:>13}", format!("PFC{i}")))
                    .collect::<String>()
            );
            for (port, a, b) in rows {
                let _ = writeln!(
                    o,
                    "    {:<12} {}",
                    port,
                    (0..8)
                        .map(|i| format!("{:>13}", format!("{}/{}", a[i], b[i])))
                        .collect::<String>()
                );
            }
        }
        let paused: Vec<_> = ports
            .iter()
            .filter_map(|p| {
                let a = arr8(&p["pfc"]["rx_pause_ps"]);
                a.iter()
                    .any(|x| *x > 0)
                    .then(|| (p["port"].as_str().unwrap_or("").to_string(), a))
            })
            .collect();
        if !paused.is_empty() {
            let _ = writeln!(o, "  Paused time (received PFC)");
            for (port, a) in paused {
                let cells: Vec<String> = (0..8)
                    .filter(|i| a[*i] > 0)
                    .map(|i| format!("prio {i}: {}", time(a[i])))
                    .collect();
                let _ = writeln!(o, "    {:<12} {}", port, cells.join(", "));
            }
        }
        // queuestat
        let _ = writeln!(o, "  Queues (non-idle)");
        let _ = writeln!(
            o,
            "    {:<12} {:>4} {:>12} {:>14} {:>10} {:>12} {:>10} {:>12}",
            "Port",
            "TxQ",
            "Tx/pkts",
            "Tx/bytes",
            "Drop/pkts",
            "Drop/bytes",
            "ECN/pkts",
            "Watermark"
        );
        for p in &ports {
            for q in p["queues"].as_array().into_iter().flatten() {
                if u(&q["tx_packets"]) + u(&q["drop_packets"]) + u(&q["watermark_bytes"]) == 0 {
                    continue;
                }
                let _ = writeln!(
                    o,
                    "    {:<12} {:>4} {:>12} {:>14} {:>10} {:>12} {:>10} {:>12}",
                    p["port"].as_str().unwrap_or(""),
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
        // watermarkstat (PGs)
        let mut pg_rows = Vec::new();
        for p in &ports {
            for g in p["pgs"].as_array().into_iter().flatten() {
                if u(&g["shared_watermark_bytes"])
                    + u(&g["headroom_watermark_bytes"])
                    + u(&g["drop_packets"])
                    > 0
                {
                    pg_rows.push(format!(
                        "    {:<12} {:>4} {:>16} {:>18} {:>10}",
                        p["port"].as_str().unwrap_or(""),
                        format!("PG{}", u(&g["pg"])),
                        u(&g["shared_watermark_bytes"]),
                        u(&g["headroom_watermark_bytes"]),
                        u(&g["drop_packets"])
                    ));
                }
            }
        }
        if !pg_rows.is_empty() {
            let _ = writeln!(o, "  Ingress PG watermarks");
            let _ = writeln!(
                o,
                "    {:<12} {:>4} {:>16} {:>18} {:>10}",
                "Port", "PG", "Shared/bytes", "Headroom/bytes", "Drop/pkts"
            );
            for row in pg_rows {
                let _ = writeln!(o, "{row}");
            }
        }
        let pools: Vec<String> = sw["pools"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                format!(
                    "{} {} of {}",
                    p["name"].as_str().unwrap_or(""),
                    u(&p["watermark_bytes"]),
                    u(&p["size_bytes"])
                )
            })
            .collect();
        let _ = writeln!(o, "  Pool watermarks (bytes): {}", pools.join(", "));
        if let Some(d) = sw["drops_by_reason"].as_object() {
            if !d.is_empty() {
                let items: Vec<String> = d.iter().map(|(k, v)| format!("{k} {}", u(v))).collect();
                let _ = writeln!(o, "  Drops by reason: {}", items.join(", "));
            }
        }
        let _ = writeln!(o);
    }
    let flows = r["flows"].as_array().cloned().unwrap_or_default();
    if !flows.is_empty() {
        let _ = writeln!(o, "Flows");
        let _ = writeln!(
            o,
            "  {:<14} {:<14} {:>10} {:>10} {:>16} {:>12} {:>10} {:>10} {:>10} {:>10} {:>6}",
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
            "CE"
        );
        for f in &flows {
            let l = &f["latency_ps"];
            let lat = |k: &str| l[k].as_u64().map_or("-".to_string(), time);
            let _ = writeln!(
                o,
                "  {:<14} {:<14} {:>10} {:>10} {:>16} {:>12} {:>10} {:>10} {:>10} {:>10} {:>6}",
                f["name"].as_str().unwrap_or(""),
                format!(
                    "{}→{}",
                    f["src"].as_str().unwrap_or(""),
                    f["dst"].as_str().unwrap_or("")
                ),
                u(&f["tx_packets"]),
                u(&f["rx_packets"]),
                gbps(f["throughput_bps"].as_f64().unwrap_or(0.0)),
                f["fct_ps"].as_u64().map_or("-".to_string(), time),
                lat("p50"),
                lat("p99"),
                lat("p999"),
                lat("max"),
                u(&f["ce_marked"])
            );
        }
    }
    let hosts: Vec<String> = r["hosts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| {
            let p = arr8(&h["paused_ps"]);
            let tx = arr8(&h["pfc"]["tx_xoff"]);
            let drops = u(&h["rx_drops"]);
            (p.iter().chain(&tx).any(|x| *x > 0) || drops > 0).then(|| {
                let paused: Vec<String> = (0..8)
                    .filter(|i| p[*i] > 0)
                    .map(|i| format!("prio {i} {}", time(p[i])))
                    .collect();
                format!(
                    "  {:<12} paused: {}; XOFF sent: {}; rx drops: {drops}",
                    h["name"].as_str().unwrap_or(""),
                    if paused.is_empty() {
                        "-".into()
                    } else {
                        paused.join(", ")
                    },
                    tx.iter().sum::<u64>()
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
    o
}
