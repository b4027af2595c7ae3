//! Reports a reader can trust, through the CLI and the JSON contract: latency percentiles
//! inside [min, max], a measurement window, PFC counted in frames, each drop shown once,
//! PFC frames in flight, per-switch MACs, what `check` says about headroom and delay, where
//! output files went, and the errors for a zero duration and odd rate units.

mod common;

use common::{f, lossless, named, root, run, scenario, tmp, u};
use serde_json::Value;

fn flows(r: &Value) -> &Vec<Value> {
    r["flows"].as_array().unwrap()
}

#[test]
fn latency_percentiles_stay_between_min_and_max() {
    for lab in ["line-rate", "incast-pfc", "hol-blocking", "ecn-marking"] {
        let r = run(
            &root().join(format!("configs/labs/{lab}.yaml")),
            &format!("lat-{lab}.json"),
            &[],
        );
        for fl in flows(&r) {
            let l = &fl["latency_ps"];
            let v: Vec<u64> = ["min", "p50", "p99", "p999", "max"]
                .iter()
                .map(|k| u(&l[*k]))
                .collect();
            assert!(v.windows(2).all(|w| w[0] <= w[1]), "{lab}: {l}");
        }
    }
    // Every frame of the line-rate lab sees 766,080 ps; hdrhistogram alone would say
    // 766,463 (its bucket's top) for the percentiles.
    let r = run(
        &root().join("configs/labs/line-rate.yaml"),
        "lat-lr.json",
        &[],
    );
    let l = &r["flows"][0]["latency_ps"];
    for k in ["min", "p50", "p99", "p999", "max"] {
        assert_eq!(u(&l[k]), 766_080, "{k}");
    }
}

fn incast_text() -> String {
    std::fs::read_to_string(root().join("configs/labs/incast-pfc.yaml")).unwrap()
}

#[test]
fn a_measurement_window_leaves_out_the_start_and_n_senders_sum_to_line_rate() {
    let text = incast_text().replace("duration: 2ms", "duration: 2ms\nmeasure: {from: 500us}");
    let s = scenario("incast-window.yaml", &text);
    let r = run(&s, "incast-window.json", &[]);
    assert_eq!(u(&r["measure"]["from_ps"]), 500_000_000);
    assert_eq!(u(&r["measure"]["to_ps"]), 2_000_000_000);
    // Three flows into one 100G port of 1518-byte frames: 98.70 Gb/s between them.
    let sum: f64 = flows(&r).iter().map(|x| f(&x["throughput_bps"])).sum();
    let line = 100e9 * 1518.0 / 1538.0;
    assert!(sum <= line * (1.0 + 1e-9), "{sum} > {line}");
    assert!(sum > line * 0.9999, "{sum}");
    // The port toward the receiver is busy the whole window.
    let util = f(&r["switches"][0]["ports"][0]["tx_utilization"]);
    assert!((util - 1.0).abs() < 1e-6, "{util}");
    // The text report states the window.
    let o = lossless(&["run", s.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("measured over 500us–2ms"), "{text}");
}

#[test]
fn the_measurement_window_must_lie_inside_the_run() {
    let base = incast_text();
    let line = base
        .lines()
        .position(|l| l.starts_with("duration:"))
        .unwrap()
        + 2;
    for (window, rule) in [
        (
            "{from: 1ms, to: 1ms}",
            "measure.to: 1ms is not after measure.from 1ms",
        ),
        (
            "{to: 3ms}",
            "measure.to: 3ms is after the end of the run (2ms)",
        ),
        (
            "{from: 2ms}",
            "measure.from: 2ms is at or after the end of the run (2ms)",
        ),
    ] {
        let s = scenario(
            "bad-window.yaml",
            &base.replace(
                "duration: 2ms",
                &format!("duration: 2ms\nmeasure: {window}"),
            ),
        );
        let o = lossless(&["check", s.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success());
        assert!(
            err.contains(&format!("bad-window.yaml:{line}: {rule}")),
            "{err}"
        );
    }
}

/// h1 sends at 100G into h0, whose NIC drains 40G and sends PFC for both lossless
/// priorities (3 and 4) in each frame.
fn slow_receiver(extra_switch: &str) -> String {
    format!(
        "# slow receiver\nduration: 1ms\nswitches:\n  - name: s\n    ports: {{count: 2, mtu: 1518{extra_switch}}}\n\
         hosts:\n  - {{name: h0, attach: s:Ethernet0, nic: {{rx_buffer: 256KiB, drain: 40G, pfc_xoff: 128KiB, pfc_xon: 64KiB}}}}\n  - {{name: h1, attach: s:Ethernet1}}\n\
         flows:\n  - {{name: f, src: h1, dst: h0, dscp: 3, pattern: greedy}}\n"
    )
}

#[test]
fn pfc_is_counted_in_frames_in_text_and_json() {
    let s = scenario("frames.yaml", &slow_receiver(""));
    let r = run(&s, "frames.json", &[]);
    let h0 = named(&r["hosts"], "h0");
    let frames = u(&h0["pfc"]["tx_frames"]);
    // Each of h0's frames pauses (or resumes) priorities 3 and 4 together.
    let per_prio = u(&h0["pfc"]["tx_xoff"][3]) + u(&h0["pfc"]["tx_xon"][3]);
    assert_eq!(per_prio, frames);
    assert_eq!(u(&h0["pfc"]["tx_xoff"][4]), u(&h0["pfc"]["tx_xoff"][3]));
    let text = String::from_utf8_lossy(&lossless(&["run", s.to_str().unwrap()]).stdout).to_string();
    assert!(
        text.contains(&format!("PFC frames sent: {frames};")),
        "{text}"
    );
    let total = u(&r["totals"]["pfc_tx_frames"]);
    assert!(text.contains(&format!("PFC frames tx {total} ")), "{text}");
}

#[test]
fn pfc_frames_still_on_the_cable_are_shown_in_flight() {
    // 1 km cables (5 µs one way): ending the run at successive microseconds, some ends
    // fall while a PFC frame is on its way; tx − rx is always exactly those in flight.
    let s = scenario("inflight.yaml", &slow_receiver(", cable: 1km"));
    let mut seen = 0;
    for us in (300..500).step_by(2) {
        let r = run(&s, "inflight.json", &["--duration", &format!("{us}us")]);
        let t = &r["totals"];
        let (tx, rx, fly) = (
            u(&t["pfc_tx_frames"]),
            u(&t["pfc_rx_frames"]),
            u(&t["pfc_in_flight_frames"]),
        );
        assert_eq!(tx - rx, fly, "{us} µs: {t}");
        if fly > 0 && seen == 0 {
            let o = lossless(&["run", s.to_str().unwrap(), "--duration", &format!("{us}us")]);
            let text = String::from_utf8_lossy(&o.stdout).to_string();
            assert!(
                text.contains(&format!(
                    "PFC frames tx {tx} rx {rx}, {fly} in flight at the end"
                )),
                "{text}"
            );
        }
        seen += (fly > 0) as u32;
    }
    assert!(seen > 0, "no run ended with a PFC frame on the cable");
}

#[test]
fn an_ingress_drop_is_the_pgs_and_not_also_the_queues() {
    let r = run(
        &root().join("configs/labs/incast-lossy.yaml"),
        "lossy-once.json",
        &[],
    );
    let sw = &r["switches"][0];
    let ingress = u(&sw["drops_by_reason"]["ingress_limit"]);
    assert!(ingress > 0);
    let ports = sw["ports"].as_array().unwrap();
    let pg_drops: u64 = ports
        .iter()
        .flat_map(|p| p["pgs"].as_array().unwrap())
        .map(|g| u(&g["drop_packets"]))
        .sum();
    let queue_drops: u64 = ports
        .iter()
        .flat_map(|p| p["queues"].as_array().unwrap())
        .map(|q| u(&q["drop_packets"]))
        .sum();
    assert_eq!(pg_drops, ingress);
    assert_eq!(queue_drops, 0);
    assert_eq!(u(&r["totals"]["drops"]), ingress);
}

#[test]
fn every_switch_has_its_own_base_mac_and_mac_overrides_it() {
    let s = scenario(
        "macs.yaml",
        "# two switches\nswitches:\n  - name: a\n    ports: {count: 2}\n  - name: b\n    ports: {count: 2}\n\
         \x20 - name: c\n    mac: 02:aa:00:00:01:f0\n    ports: {count: 2}\n",
    );
    let o = lossless(&["check", s.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("switch a: 2 ports (MACs 02:4c:4c:00:00:00 + port index)"),
        "{out}"
    );
    assert!(
        out.contains("switch b: 2 ports (MACs 02:4c:4c:00:01:00 + port index)"),
        "{out}"
    );
    assert!(
        out.contains("switch c: 2 ports (MACs 02:aa:00:00:01:f0 + port index)"),
        "{out}"
    );
    let loaded = lossless::config::load(&s).unwrap();
    assert_eq!(
        loaded.scenario.switches[2].config.ports[1].mac,
        [0x02, 0xaa, 0, 0, 0x01, 0xf1]
    );
    let bad = scenario(
        "mac-mc.yaml",
        "# multicast base\nswitches:\n  - name: a\n    mac: 01:00:5e:00:00:01\n    ports: {count: 2}\n",
    );
    let e =
        String::from_utf8_lossy(&lossless(&["check", bad.to_str().unwrap()]).stderr).to_string();
    assert!(
        e.contains("mac-mc.yaml:4: a.mac: `01:00:5e:00:00:01` is a multicast address"),
        "{e}"
    );
}

#[test]
fn check_prints_the_delay_in_use() {
    let s = scenario(
        "delay.yaml",
        "# delay\nswitches:\n  - name: a\n    ports: {count: 2, delay: 1us}\n",
    );
    let out =
        String::from_utf8_lossy(&lossless(&["check", s.to_str().unwrap()]).stdout).to_string();
    assert!(out.contains("100G, 1us one way (delay 1us)"), "{out}");
}

/// 2-to-1 incast of 64-byte frames on priority 3 whose senders react at the IEEE bound,
/// into a PG with `xoff` of headroom.
fn small_frames(xoff: &str) -> String {
    format!(
        "# small frames\nduration: 200us\nswitches:\n  - name: s\n    ports: {{count: 3, mtu: 1518}}\n\
         \x20   buffer:\n      pools:\n        ingress_lossless_pool: {{type: ingress, size: 2MB}}\n\
         \x20       egress_lossless_pool: {{type: egress, size: 4MB, mode: static}}\n\
         \x20     profiles:\n        pg_lossless: {{pool: ingress_lossless_pool, dynamic_th: 0, xoff: {xoff}, xon_offset: 3KB}}\n\
         \x20       q_lossless: {{pool: egress_lossless_pool, static_th: 4MB}}\n\
         \x20     pg: {{\"3\": pg_lossless}}\n      queue: {{\"3\": q_lossless}}\n    qos: {{pfc_enable: [3]}}\n\
         hosts:\n  - {{name: h0, attach: s:Ethernet0}}\n\
         \x20 - {{name: h1, attach: s:Ethernet1, nic: {{pfc_response: 2.01728us}}}}\n\
         \x20 - {{name: h2, attach: s:Ethernet2, nic: {{pfc_response: 2.01728us}}}}\n\
         flows:\n  - {{name: a, src: h1, dst: h0, dscp: 3, frame: 64B, pattern: greedy}}\n\
         \x20 - {{name: b, src: h2, dst: h0, dscp: 3, frame: 64B, pattern: greedy}}\n"
    )
}

#[test]
fn check_warns_when_headroom_cells_cannot_hold_small_frames_and_says_which_minimum_applies() {
    // 32 KiB holds 128 cells; after XOFF up to 325 frames of 64 bytes may arrive at 100G
    // over 2 m with the IEEE response, one 256-byte cell each (docs/physics.md; see
    // buffer-model's headroom tests for the sum).
    let s = scenario("small32.yaml", &small_frames("32KiB"));
    let o = lossless(&["check", s.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("small32.yaml:11: s.buffer.profiles.pg_lossless.xoff: headroom 32KiB (128 cells of 256B) is below the minimum 83200B (325 cells)")
            && err.contains("after XOFF up to 325 frames of 64 B may arrive"),
        "{err}"
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("applies: the larger, 325 cells = 83.2KB (64-byte frames)"),
        "{out}"
    );
    assert!(
        out.contains("LOW: 128 cells, below the 64-byte-frame minimum of 325"),
        "{out}"
    );
    // And the run loses lossless frames…
    let r = run(&s, "small32.json", &[]);
    assert!(u(&r["totals"]["lossless_drops"]) > 0);
    // …which the cell minimum (325 cells) does not.
    let s = scenario("small83.yaml", &small_frames("83200B"));
    let o = lossless(&["check", s.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stderr).is_empty(), "no warning");
    let r = run(&s, "small83.json", &[]);
    assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
}

#[test]
fn pcap_dir_without_outputs_pcap_captures_every_port_and_the_report_lists_the_files() {
    let dir = tmp("pcap-all");
    let s = root().join("configs/labs/line-rate.yaml");
    let r = run(&s, "pcap-all.json", &["--pcap-dir", dir.to_str().unwrap()]);
    let files: Vec<&str> = r["outputs"]["pcap"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    for (fname, port) in files.iter().zip(["Ethernet0", "Ethernet1"]) {
        assert!(fname.ends_with(&format!("-{port}.pcap")), "{fname}");
        assert!(std::fs::metadata(fname).unwrap().len() > 1000, "{fname}");
    }
    let text = String::from_utf8_lossy(
        &lossless(&[
            "run",
            s.to_str().unwrap(),
            "--pcap-dir",
            dir.to_str().unwrap(),
        ])
        .stdout,
    )
    .to_string();
    assert!(text.contains(&format!("pcap: {}", files[0])), "{text}");
}

#[test]
fn a_zero_duration_is_an_error() {
    let s = root().join("configs/labs/line-rate.yaml");
    let o = lossless(&["run", s.to_str().unwrap(), "--duration", "0"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("a run needs a length above 0"));
    let z = scenario(
        "zero.yaml",
        "# zero\nduration: 0ns\nswitches:\n  - name: a\n    ports: {count: 2}\n",
    );
    let o = lossless(&["check", z.to_str().unwrap()]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("zero.yaml:2: duration: a run needs a length above 0"),
        "{e}"
    );
}

#[test]
fn rate_units_are_accepted_in_every_common_form_or_the_error_lists_them() {
    for speed in ["100G", "100Gb", "100Gbps", "100Gb/s", "100Gbit/s"] {
        let s = scenario(
            "rate.yaml",
            &format!("# rate\nswitches:\n  - name: a\n    ports: {{count: 2, speed: {speed}}}\n"),
        );
        let o = lossless(&["check", s.to_str().unwrap()]);
        assert!(
            o.status.success(),
            "{speed}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(String::from_utf8_lossy(&o.stdout).contains(": 100G, 10ns one way"));
    }
    let s = scenario(
        "rate-bad.yaml",
        "# rate\nswitches:\n  - name: a\n    ports: {count: 2, speed: 100GB}\n",
    );
    let e = String::from_utf8_lossy(&lossless(&["check", s.to_str().unwrap()]).stderr).to_string();
    assert!(
        e.contains("rate-bad.yaml:4: a.ports.speed: `100GB` is not a rate in bits per second such as 100G, 100Gb, 100Gbps, 100Gb/s or 100Gbit/s"),
        "{e}"
    );
}

/// The TAP switch's text report opens with what it did in wall time — frames read,
/// forwarded and written — not with the simulator's packet-hops (which it has none of).
#[test]
fn a_tap_report_opens_with_frames_not_packet_hops() {
    use lossless::report::model::TapReport;
    use lossless::sim::{RunOptions, Sim};
    let scenario = lossless::config::load(&root().join("configs/labs/line-rate.yaml"))
        .unwrap()
        .scenario;
    let opts = RunOptions {
        duration: Some(lossless_buffer_model::Time::from_us(20)),
        ..RunOptions::default()
    };
    let mut sim = Sim::new(scenario, &opts).unwrap();
    sim.run(|_| lossless::sim::Go::On).unwrap();
    let mut r = lossless::report::json::report(&sim.outcome());
    let forwarded = r.switches[0].ledger.forwarded;
    assert!(forwarded > 100);
    r.packet_hops = None;
    r.tap = Some(TapReport {
        read_frames: 1_300_000,
        written_frames: 1_299_990,
        write_errors: 0,
        write_overruns: 0,
        queued_at_exit: 0,
        unread_at_exit: 0,
        kernel_ring_drops: 0,
        oversize_frames: 0,
        segmented_frames: 0,
        segments: 0,
        host_rx_drops: 0,
        ports: Vec::new(),
        ports_gone: Vec::new(),
        max_read_queue_bytes: 0,
        link_changes: 0,
        reattached: 0,
        realtime: false,
        turns: Default::default(),
    });
    let text = lossless::report::text::render(&r);
    let first = text.lines().next().unwrap();
    assert!(
        first.contains(&format!(
            "1300000 frames read, {forwarded} forwarded, 1299990 written"
        )),
        "{first}"
    );
    assert!(!first.contains("packet-hops"), "{first}");
}

/// A flow's tx/pkts above its rx/pkts with nothing dropped is said for what it is: in the
/// incast at 2 ms, 7,819 frames were sent and not received, 7,817 of them still queued in
/// the switch (6.57 MB in h0's queue at 1,536 bytes of cells each is 4,275 frames, the
/// rest in the PGs' share of the same queue), the other 2 on the 2 m wires (a 1518-byte
/// frame takes 123.04 ns, a cable 10 ns: at most one a link direction).
#[test]
fn frames_sent_and_not_received_are_accounted_for() {
    let r = run(
        &root().join("configs/labs/incast-pfc.yaml"),
        "queued-at-end.json",
        &[],
    );
    let (tx, rx) = r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .fold((0, 0), |(t, x), f| {
            (t + u(&f["tx_packets"]), x + u(&f["rx_packets"]))
        });
    let queued = u(&r["totals"]["queued_at_end_frames"]);
    assert_eq!(u(&r["totals"]["drops"]), 0);
    assert!(queued > 0 && queued <= tx - rx, "{queued} of {}", tx - rx);
    assert!(tx - rx - queued <= 4, "on the wires: {}", tx - rx - queued);
    let o = lossless(&[
        "run",
        root()
            .join("configs/labs/incast-pfc.yaml")
            .to_str()
            .unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(&format!(
            "{} frames sent were not received: {queued} were still queued in the switches",
            tx - rx
        )),
        "{text}"
    );
}

/// `show cbfc` (and llr, trim) of a switch that has no such port says so.
#[test]
fn a_table_of_nothing_says_so() {
    use lossless::report::text::{table, Table};
    let l = lossless::config::load(&root().join("configs/labs/incast-pfc.yaml")).unwrap();
    let opts = lossless::sim::RunOptions {
        duration: Some(lossless_buffer_model::Time::from_us(10)),
        ..lossless::sim::RunOptions::default()
    };
    let mut sim = lossless::sim::Sim::new(l.scenario, &opts).unwrap();
    sim.run(|_| lossless::sim::Go::On).unwrap();
    let r = lossless::report::json::report(&sim.outcome());
    assert!(table(&r, Table::Cbfc).contains("switch tor\n  no port speaks CBFC"));
    assert!(table(&r, Table::Llr).contains("no port speaks LLR"));
    assert!(table(&r, Table::Trim).contains("the switch does not trim"));
}
