//! The answers of the beyond-PFC lab guides (docs/labs/cbfc-vs-pfc.md,
//! docs/labs/llr-lossy-link.md, docs/labs/trimming.md), each checked on
//! the shipped lab file (edited only as the guide's questions say).

mod common;
use common::{f, flow, lossless, port, root, run, scenario, sweep_rows, u};
use serde_json::Value;

/// The shipped lab with each `(from, to)` replaced once.
fn lab(name: &str, edits: &[(&str, &str)]) -> std::path::PathBuf {
    let mut text =
        std::fs::read_to_string(root().join(format!("configs/labs/{name}.yaml"))).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "`{from}` not in the lab");
        text = text.replacen(from, to, 1);
    }
    let file = format!(
        "{name}-{}.yaml",
        edits.iter().map(|e| e.1.len()).sum::<usize>()
    );
    scenario(&file, &text)
}

fn gbps(r: &Value, name: &str) -> f64 {
    f(&flow(r, name)["throughput_bps"]) / 1e9
}

fn near(got: f64, want: f64, rel: f64, what: &str) {
    assert!(
        (got - want).abs() <= want * rel,
        "{what}: {got}, want {want} ± {}%",
        rel * 100.0
    );
}

#[test]
fn cbfc_vs_pfc_answers() {
    // 1. What each protocol needs on a 100 m cable.
    let shipped = root().join("configs/labs/cbfc-vs-pfc.yaml");
    let o = lossless(&["check", shipped.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert!(
        out.contains("line rate needs 392 credits per VC (129-byte frames, the costliest per wire byte; 240 for MTU frames): a credit is back 2.259us")
    );
    let pfc_file = lab(
        "cbfc-vs-pfc",
        &[("flow_control: cbfc", "flow_control: pfc")],
    );
    let o = lossless(&["check", pfc_file.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("minimum headroom for 1518-byte frames: 42.4KB"),
        "{out}"
    );
    assert!(
        out.contains("applies: the larger, 471 cells = 120.6KB"),
        "{out}"
    );

    // 2 and 3. Rates, queue and latency under each.
    let pfc = run(&pfc_file, "lab-pfc.json", &[]);
    let cbfc = run(&shipped, "lab-cbfc.json", &[]);
    for r in [&pfc, &cbfc] {
        assert_eq!(u(&r["totals"]["drops"]), 0);
        for name in ["b", "c"] {
            near(gbps(r, name), 98.70 / 3.0, 0.02, name);
        }
        let a = gbps(r, "a");
        assert!((32.0..33.0).contains(&a), "a: {a}");
        near(gbps(r, "victim"), 98.70 - a, 0.01, "victim");
    }
    // PFC: three PGs at αS/(1 + 3α) each, α = 1/8, S = 24 MB.
    let x = 24e6 / 8.0 / (1.0 + 3.0 / 8.0);
    let q = |r: &Value| u(&port(r, 0, "Ethernet0")["queues"][3]["watermark_bytes"]);
    near(q(&pfc) as f64, 3.0 * x, 0.01, "PFC queue");
    let lat = f(&flow(&pfc, "b")["latency_ps"]["p50"]) / 1e6;
    near(
        lat,
        q(&pfc) as f64 / 1536.0 * 0.12304 + 1.746,
        0.01,
        "PFC latency (µs)",
    );
    // CBFC: at most 85 frames of six cells per ingress port.
    let cq = q(&cbfc);
    assert!(
        (3 * 80 * 1536..=3 * 85 * 1536).contains(&cq),
        "CBFC queue {cq}"
    );
    // 235 to 241 frames ahead (about 79 a port), at 123.04 ns each, plus the 1.75 µs path.
    for name in ["a", "b", "c"] {
        let l = &flow(&cbfc, name)["latency_ps"];
        let (lo, hi) = (f(&l["min"]) / 1e6, f(&l["max"]) / 1e6);
        assert!(
            lo >= 235.0 * 0.12304 + 1.746 - 0.1 && hi <= 241.0 * 0.12304 + 1.746 + 0.1,
            "{name}: {lo}–{hi} µs"
        );
    }
    near(
        f(&flow(&cbfc, "b")["latency_ps"]["p50"]) / 1e6,
        31.0,
        0.01,
        "CBFC median latency",
    );
    for p in ["Ethernet1", "Ethernet2", "Ethernet3"] {
        let v = &port(&cbfc, 0, p)["cbfc"]["vcs"][0];
        assert_eq!(u(&v["vc"]), 3);
        assert!(u(&v["receiver_credits_held_watermark"]) <= 1024);
    }

    // 4. 2 km cables.
    let far = run(
        &lab("cbfc-vs-pfc", &[("cable: 100m", "cable: 2000m")]),
        "lab-cbfc-2km.json",
        &[],
    );
    near(
        gbps(&far, "victim"),
        85.0 * 1518.0 * 8.0 / 21_258.7,
        0.01,
        "victim at 2 km",
    );
    let to_h0 = 85.0 * 1518.0 * 8.0 / 20_758.7;
    for name in ["a", "b", "c"] {
        near(gbps(&far, name), to_h0 / 3.0, 0.02, name);
    }
    assert_eq!(u(&far["totals"]["drops"]), 0);
    let far_pfc = run(
        &lab(
            "cbfc-vs-pfc",
            &[
                ("cable: 100m", "cable: 2000m"),
                ("flow_control: cbfc", "flow_control: pfc"),
            ],
        ),
        "lab-pfc-2km.json",
        &[],
    );
    assert_eq!(u(&far_pfc["totals"]["lossless_drops"]), 0);
    let sum: f64 = ["a", "b", "c"].iter().map(|n| gbps(&far_pfc, n)).sum();
    near(sum, 98.70, 0.01, "PFC at 2 km, h0's link");
    // The shares move: a down, b and c up, victim takes what a leaves of h1's link.
    near(gbps(&far_pfc, "a"), 30.4, 0.01, "a under PFC at 2 km");
    near(gbps(&far_pfc, "b"), 34.2, 0.01, "b under PFC at 2 km");
    near(
        gbps(&far_pfc, "victim"),
        68.5,
        0.01,
        "victim under PFC at 2 km",
    );
    near(
        gbps(&far_pfc, "victim") + gbps(&far_pfc, "a"),
        98.70,
        0.005,
        "h1's link under PFC at 2 km",
    );

    // 5. A lossy link with and without CC_Updates (the last 2 ms of the run).
    let lossy = |cc: &str| {
        let (duration, from) = match cc {
            "cc_interval: 256us" => ("duration: 10ms", "measure: {from: 8ms}"),
            _ => ("duration: 20ms", "measure: {from: 18ms}"),
        };
        lab(
            "cbfc-vs-pfc",
            &[
                ("cc_interval: 256us", cc),
                ("duration: 2ms", duration),
                ("measure: {from: 1ms}", from),
                (
                    "{name: h1, attach: tor:Ethernet1}",
                    "{name: h1, attach: tor:Ethernet1, frame_error_rate: 0.01}",
                ),
            ],
        )
    };
    let with_cc = run(&lossy("cc_interval: 256us"), "lab-cc.json", &[]);
    assert_eq!(u(&with_cc["totals"]["lossless_drops"]), 0);
    assert!(u(&with_cc["totals"]["injected_drops"]) > 500);
    near(
        gbps(&with_cc, "victim"),
        66.0,
        0.02,
        "victim with CC_Updates",
    );
    assert!(gbps(&with_cc, "a") > 31.0);
    let without = run(&lossy("cc_interval: 250ms"), "lab-no-cc.json", &[]);
    assert_eq!(gbps(&without, "a"), 0.0);
    assert_eq!(gbps(&without, "victim"), 0.0);
    let last = |name: &str| u(&flow(&without, name)["last_rx_ps"]) as f64 / 1e9;
    near(last("victim"), 1.52, 0.01, "victim's last frame, ms");
    near(last("a"), 15.51, 0.01, "a's last frame, ms");
    near(gbps(&without, "b"), 98.70 / 2.0, 0.01, "b without h1");
    assert_eq!(u(&without["totals"]["drops"]), 0);

    // 6. One credit limit for the port: victim sends one frame for each of a's.
    let per_port = run(
        &lab(
            "cbfc-vs-pfc",
            &[("cc_interval: 256us}", "cc_interval: 256us, mode: per_port}")],
        ),
        "lab-per-port.json",
        &[],
    );
    near(
        gbps(&per_port, "victim"),
        gbps(&per_port, "a"),
        0.01,
        "victim = a",
    );
    near(gbps(&per_port, "victim"), 32.0, 0.02, "victim per port");
    assert_eq!(u(&per_port["totals"]["drops"]), 0);
}

#[test]
fn llr_lossy_link_answers() {
    // 1. The replay buffer and timer each port gets.
    let shipped = root().join("configs/labs/llr-lossy-link.yaml");
    let o = lossless(&["check", shipped.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert!(
        out.contains("LLR: replay buffer 249 frames / 30.0KB, replay timer 3.324us"),
        "{out}"
    );
    assert!(out.contains("a frame's copy is freed 1.662us after it leaves"));
    // 2–4. Clean, with LLR, without.
    let iter = |r: &Value, p: &str| u(&r["collectives"][0]["time_ps"][p]) as f64 / 1e9;
    let lat_max = |r: &Value| {
        r["flows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| u(&f["latency_ps"]["max"]))
            .max()
            .unwrap() as f64
            / 1e6
    };
    let clean = run(
        &lab(
            "llr-lossy-link",
            &[("frame_error_rate: 1e-4", "frame_error_rate: 0")],
        ),
        "llr-lab-clean.json",
        &[],
    );
    near(iter(&clean, "p99"), 1.16014, 0.0001, "clean iteration, ms");
    near(iter(&clean, "p50"), 1.16014, 0.0001, "clean iteration, ms");
    near(lat_max(&clean), 1.19, 0.01, "clean latency, µs");
    let on = run(&shipped, "llr-lab-on.json", &[]);
    let ar = &on["collectives"][0];
    assert_eq!(u(&ar["retransmitted_packets"]), 0);
    assert_eq!(u(&ar["timeouts"]), 0);
    assert_eq!(u(&on["totals"]["injected_drops"]), 225);
    near(iter(&on, "p50"), 1.161, 0.0005, "LLR p50, ms");
    near(iter(&on, "p99"), 1.1628, 0.0005, "LLR p99, ms");
    near(lat_max(&on), 2.53, 0.02, "LLR latency max, µs");
    let off = run(
        &lab("llr-lossy-link", &[("enabled: true", "enabled: false")]),
        "llr-lab-off.json",
        &[],
    );
    let ar = &off["collectives"][0];
    assert_eq!(u(&ar["retransmitted_packets"]), 809);
    assert_eq!(u(&off["totals"]["injected_drops"]), 117);
    near(iter(&off, "p50"), 1.1629, 0.0005, "no LLR p50, ms");
    near(iter(&off, "p99"), 1.1708, 0.0005, "no LLR p99, ms");
    near(lat_max(&off), 1.22, 0.02, "no LLR latency max, µs");
    // 5. At 1e-5.
    let low = |en: &str, n: &str| {
        run(
            &lab(
                "llr-lossy-link",
                &[
                    ("frame_error_rate: 1e-4", "frame_error_rate: 1e-5"),
                    ("enabled: true", en),
                ],
            ),
            n,
            &[],
        )
    };
    let (low_on, low_off) = (
        low("enabled: true", "llr-lab-low-on.json"),
        low("enabled: false", "llr-lab-low-off.json"),
    );
    assert_eq!(u(&low_on["totals"]["injected_drops"]), 24);
    assert_eq!(u(&low_off["totals"]["injected_drops"]), 13);
    assert_eq!(u(&low_off["collectives"][0]["retransmitted_packets"]), 96);
    near(iter(&low_on, "p99"), 1.1609, 0.0005, "1e-5 LLR p99");
    near(iter(&low_off, "p99"), 1.1610, 0.0005, "1e-5 no LLR p99");
    // 3 and 5. ACKs per data frame, and what their ordered sets take of the line.
    let hosts = on["hosts"].as_array().unwrap();
    let frames: u64 = hosts.iter().map(|h| u(&h["tx_packets"])).sum();
    let acks: u64 = on["switches"][0]["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| u(&p["llr"]["tx_ack_ctl_os"]))
        .sum();
    near(acks as f64 / frames as f64, 0.89, 0.01, "ACKs per frame");
    let wire: u64 = hosts
        .iter()
        .map(|h| u(&h["tx_bytes"]) + 20 * u(&h["tx_packets"]))
        .sum();
    let host_acks: u64 = hosts.iter().map(|h| u(&h["llr"]["tx_ack_ctl_os"])).sum();
    near(
        8.0 * host_acks as f64 / wire as f64 * 100.0,
        0.19,
        0.03,
        "ACK overhead, %",
    );
    // 7. drops 154: frames discarded behind a bad one, each replayed.
    assert_eq!(u(&on["totals"]["drops"]), 154);
    let d = &on["switches"][0]["drops_by_reason"];
    assert_eq!(u(&d["llr_discard"]), 91);
    assert_eq!(u(&on["engine"]["host_drops"]), 63);
    assert_eq!(u(&d["bad_fcs"]), 120);
    // 8. 1e-3: LLR holds; RC alone waits for its 4.296 s timeout.
    let high = |en: &str, n: &str| {
        run(
            &lab(
                "llr-lossy-link",
                &[
                    ("frame_error_rate: 1e-4", "frame_error_rate: 1e-3"),
                    ("enabled: true", en),
                ],
            ),
            n,
            &[],
        )
    };
    let (high_on, high_off) = (
        high("enabled: true", "llr-lab-high-on.json"),
        high("enabled: false", "llr-lab-high-off.json"),
    );
    near(iter(&high_on, "max"), 1.174, 0.001, "1e-3 LLR slowest, ms");
    assert_eq!(u(&high_on["collectives"][0]["retransmitted_packets"]), 15);
    assert_eq!(
        u(&high_off["collectives"][0]["retransmitted_packets"]),
        12_479
    );
    near(
        iter(&high_off, "max"),
        4_296.0,
        0.001,
        "1e-3 no LLR slowest, ms",
    );
    // 1e-2: one replay FLUSHes and leaves RC a timeout; three hold.
    let replays = |n: &str| {
        run(
            &lab(
                "llr-lossy-link",
                &[
                    ("frame_error_rate: 1e-4", "frame_error_rate: 1e-2"),
                    (
                        "llr: {enabled: true}",
                        &format!("llr: {{enabled: true, max_replay_count: {n}}}"),
                    ),
                ],
            ),
            &format!("llr-lab-1e-2-{n}.json"),
            &[],
        )
    };
    let flushes = |r: &Value| -> u64 {
        let sw: u64 = r["switches"][0]["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| u(&p["llr"]["tx_flush"]))
            .sum();
        let h: u64 = r["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| u(&h["llr"]["tx_flush"]))
            .sum();
        sw + h
    };
    let one = replays("1");
    assert_eq!(flushes(&one), 118);
    assert_eq!(u(&one["collectives"][0]["retransmitted_packets"]), 4_276);
    near(
        iter(&one, "max"),
        4_296.2,
        0.001,
        "1e-2, one replay, slowest, ms",
    );
    let three = replays("3");
    assert_eq!(flushes(&three), 0);
    assert_eq!(u(&three["collectives"][0]["retransmitted_packets"]), 0);
    near(
        iter(&three, "p50"),
        1.218,
        0.001,
        "1e-2, three replays, p50, ms",
    );
    near(
        iter(&three, "max"),
        1.231,
        0.001,
        "1e-2, three replays, slowest, ms",
    );
}

#[test]
fn trimming_answers() {
    let shipped = root().join("configs/labs/trimming.yaml");
    let metrics = [
        "max(flows.*.fct_ps)",
        "min(flows.*.fct_ps)",
        "sum(flows.*.transport.retransmitted_packets)",
        "sum(flows.*.transport.retransmitted_bytes)",
        "sum(flows.*.transport.timeouts)",
        "sum(flows.*.transport.naks_received)",
        "totals.drops",
        "totals.pfc_tx_frames",
    ];
    let rows = sweep_rows(&shipped, "flows.f1.dscp=3,8,1", &metrics, "trim-lab.json");
    let m = |row: &Value, k: &str| u(&row["metrics"][k]);
    let tail_ms = |row: &Value| m(row, metrics[0]) as f64 / 1e9;
    // 1. PFC: h0's link busy 1.3825 ms, plus the first packet's path and the last ACK.
    let (pfc, drop, trim) = (&rows[0], &rows[1], &rows[2]);
    let frames_ms = 8.0 * (1953.0 * 1106.0 + 210.0) * 8.0 / 100e9 * 1e3;
    near(frames_ms, 1.3825, 0.0001, "h0's link, ms");
    near(tail_ms(pfc), frames_ms + 0.0012, 0.0005, "PFC tail, ms");
    assert_eq!(m(pfc, metrics[3]), 0);
    assert_eq!(m(pfc, "totals.drops"), 0);
    assert!(m(pfc, "totals.pfc_tx_frames") > 0);
    // 2. Drops: a flow that lost its tail waits for the 4.295 s local ACK timeout.
    assert_eq!(m(drop, "totals.drops"), 8374);
    assert_eq!(m(drop, metrics[4]), 2);
    near(tail_ms(drop), 4_295.0, 0.0005, "drop tail, ms");
    assert!(tail_ms(drop) > 4_294.967);
    // 3. Trimming: each trimmed packet re-sent once, no timeout; h0's link carries every
    // packet whole once plus each trimmed copy's 128 + 20 bytes.
    let trimmed = m(trim, "totals.drops");
    assert_eq!(trimmed, 12_225);
    assert_eq!(m(trim, metrics[2]), trimmed);
    assert_eq!(m(trim, metrics[4]), 0);
    let headers_ms = trimmed as f64 * 148.0 * 8.0 / 100e9 * 1e3;
    near(headers_ms, 0.1447, 0.001, "trimmed copies on h0's link, ms");
    near(
        tail_ms(trim),
        frames_ms + headers_ms + 0.0012,
        0.0005,
        "trim tail, ms",
    );
    let r = run(&shipped, "trim-lab-one.json", &[]);
    let q = |i: usize| &port(&r, 0, "Ethernet0")["queues"][i];
    assert_eq!(u(&q(1)["tx_packets"]), 8 * 1954, "each packet whole once");
    assert_eq!(u(&q(1)["trim_packets"]), trimmed);
    assert_eq!(u(&q(5)["tx_packets"]), trimmed);
    assert_eq!(u(&q(5)["tx_bytes"]), trimmed * 128);
    for i in 1..=8 {
        let t = &flow(&r, &format!("f{i}"))["transport"];
        assert_eq!(u(&t["out_of_order"]), 0);
        assert_eq!(u(&t["duplicates"]), 0);
        // 5. Two NAKs a flow.
        assert_eq!(u(&t["naks_received"]), 2, "f{i}");
    }
    // 6. Selective: one NAK and one re-send per trimmed packet, and a later tail.
    let rows = sweep_rows(
        &shipped,
        "flows.f1.rc.recovery=go_back_n,selective",
        &metrics,
        "trim-lab-sel.json",
    );
    let sel = &rows[1];
    assert_eq!(m(&rows[0], metrics[0]), m(trim, metrics[0]));
    let sel_trimmed = m(sel, "totals.drops");
    assert_eq!(sel_trimmed, 9_287);
    assert_eq!(m(sel, metrics[5]), sel_trimmed);
    assert_eq!(m(sel, metrics[2]), sel_trimmed);
    assert_eq!(m(sel, metrics[4]), 0);
    near(tail_ms(sel), 2.101, 0.001, "selective tail, ms");
    // 7. Trimming costs PFC's tail +10.5 %, and beats drops 2,800 times over.
    near(tail_ms(trim) / tail_ms(pfc), 1.105, 0.002, "trim / PFC");
    assert!(tail_ms(drop) / tail_ms(trim) > 2_800.0);
    // 4. Queue 1 peaks at 5,556 frames of five 256-byte cells (491.6 µs of frames), queue
    // 5 at 4,695 copies of one cell.
    assert_eq!(u(&q(1)["watermark_bytes"]), 5_556 * 1_280);
    assert_eq!(u(&q(5)["watermark_bytes"]), 4_695 * 256);
    near(5_556.0 * 1106.0 * 8.0 / 100e3, 491.6, 0.0005, "queue 1, µs");
    let lossy = run(
        &lab("trimming", &[("dscp: 1, frame", "dscp: 8, frame")]),
        "trim-lab-drops.json",
        &[],
    );
    let worst = lossy["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| u(&f["latency_ps"]["max"]))
        .max()
        .unwrap();
    near(
        worst as f64 / 1e6,
        491.8,
        0.001,
        "largest one-way latency, µs",
    );

    // 8. A strict-priority trim queue of 256-byte copies: a livelock of trims, NAKs and
    // re-sends; five flows crawl home in about 294 ms, three lose a hole at ingress and
    // end after a 4.295 s timeout; the run still ends.
    let strict = run(
        &lab(
            "trimming",
            &[
                (
                    "qos: {pfc_enable: [3, 4]}",
                    "qos: {pfc_enable: [3, 4], scheduler: {\"5\": {type: strict}}}",
                ),
                ("size: 128B", "size: 256B"),
            ],
        ),
        "trim-lab-strict.json",
        &[],
    );
    let d = &strict["switches"][0]["drops_by_reason"];
    assert!(u(&d["ingress_limit"]) > 100_000, "{d}");
    let flows = strict["flows"].as_array().unwrap();
    let naks: u64 = flows
        .iter()
        .map(|f| u(&f["transport"]["naks_received"]))
        .sum();
    assert!(naks > 1_000_000, "{naks} NAKs");
    let fcts: Vec<u64> = flows.iter().map(|f| u(&f["fct_ps"])).collect();
    let crawled = fcts
        .iter()
        .filter(|&&t| (250_000_000_000..350_000_000_000).contains(&t))
        .count();
    let timed_out = fcts.iter().filter(|&&t| t > 4_295_000_000_000).count();
    assert_eq!((crawled, timed_out), (5, 3), "{fcts:?}");
    let q1 = u(&port(&strict, 0, "Ethernet0")["queues"][1]["tx_packets"]);
    assert!(q1 < 30_000, "queue 1 forwarded {q1} whole frames");
}
