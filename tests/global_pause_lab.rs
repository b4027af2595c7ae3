//! The global-pause lab (docs/labs/global-pause.md): 802.3x PAUSE against PFC, and the
//! square wave a FIFO replays under PFC. Every expected value is derived below from the
//! default buffer plan (S = 24 MB, α = 1/8) and the frame size.

mod common;

use common::{f, named, root, sweep_rows, tmp, u};
use serde_json::Value;

/// Gb/s of 1518-byte frames on a 100G link.
const LINE: f64 = 1518.0 / 1538.0 * 100.0;
/// The lossless pool's shared size and its dynamic threshold.
const S: f64 = 24e6;
const ALPHA: f64 = 1.0 / 8.0;

fn lab() -> std::path::PathBuf {
    root().join("configs/labs/global-pause.yaml")
}

/// The lab once with PFC and once with PAUSE: its flows, hosts, ports and totals. Run once
/// per test process (the tests run in parallel and would otherwise write one file at once).
fn both_runs() -> (Value, Value) {
    static RUNS: std::sync::OnceLock<(Value, Value)> = std::sync::OnceLock::new();
    RUNS.get_or_init(sweep_both).clone()
}

fn sweep_both() -> (Value, Value) {
    let metrics = ["flows", "hosts", "switches.tor.ports", "totals"];
    let rows = sweep_rows(
        &lab(),
        "switches.tor.qos.flow_control=pfc,pause",
        &metrics,
        "global-pause.json",
    );
    assert_eq!(
        (rows[0]["value"].as_str(), rows[1]["value"].as_str()),
        (Some("pfc"), Some("pause"))
    );
    (rows[0]["metrics"].clone(), rows[1]["metrics"].clone())
}

fn gbps(run: &Value, flow: &str) -> f64 {
    f(&named(&run["flows"], flow)["throughput_bps"]) / 1e9
}

/// Answer 1 on paper: h1 sends `a` at half rate, so the FIFO toward h0 takes 1:2:2 and
/// sends on 1/5, 2/5, 2/5. h2's PG grows by 0.6 frames of 1536 B per 123.04 ns and crosses
/// α·(S − X) with X = 2.5x (in whole cells); h1's grows by 0.3 and crosses later, at the
/// three-PG limit. Returns (h2's crossing level, t1, t2) with times in µs.
fn first_xoffs() -> (f64, f64, f64) {
    let fast = 0.6 * 1536.0 / 123.04; // B/ns
    let x = ALPHA * S / (1.0 + 2.5 * ALPHA);
    let cells = (x / 256.0).floor() * 256.0;
    let y = ALPHA * S / (1.0 + 3.0 * ALPHA);
    (cells, cells / fast / 1e3, y / (fast / 2.0) / 1e3)
}

#[test]
fn first_xoffs_come_where_the_shared_limit_says() {
    let (pfc, _) = both_runs();
    let (cells, t1, t2) = first_xoffs();
    let ports = pfc["switches.tor.ports"].as_array().unwrap();
    let first_us = |i: usize| u(&ports[i]["pfc"]["first_tx_xoff_ps"][3]) as f64 / 1e6;
    for i in [2, 3] {
        assert!(
            (first_us(i) - t1).abs() < 0.003 * t1,
            "{} vs {t1}",
            first_us(i)
        );
        let pg = ports[i]["pgs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["pg"] == 3)
            .unwrap();
        assert_eq!(u(&pg["shared_watermark_bytes"]) as f64, cells, "{pg}");
    }
    assert!(
        (first_us(1) - t2).abs() < 0.003 * t2,
        "{} vs {t2}",
        first_us(1)
    );
}

#[test]
fn pause_stops_the_lossy_flow_with_the_paused_one() {
    let (pfc, pause) = both_runs();
    // One frame in the 1 ms window, in Gb/s.
    let frame = 1518.0 * 8.0 / 1e6;
    for run in [&pfc, &pause] {
        // Answer 2: h0's link is full and shared per ingress port, a third each (1.5 %).
        let sum: f64 = ["a", "b", "c"].iter().map(|x| gbps(run, x)).sum();
        assert!((sum - LINE).abs() < 0.001 * LINE, "{sum}");
        for x in ["a", "b", "c"] {
            let t = gbps(run, x);
            assert!((t - LINE / 3.0).abs() < 0.015 * LINE / 3.0, "{x}: {t}");
        }
        assert_eq!(u(&run["totals"]["lossless_drops"]), 0);
    }
    // Answer 3. PFC: v takes what a leaves of h1's link.
    let (a, v) = (gbps(&pfc, "a"), gbps(&pfc, "v"));
    assert!((a + v - LINE).abs() < 0.001 * LINE, "{a} + {v}");
    // Answer 4. PAUSE: v goes only when a may, alternating with it: the same, within a
    // few frames (where the window's edges and the pauses cut the alternation: three in
    // this run); and a is what it was with PFC.
    let (a2, v2) = (gbps(&pause, "a"), gbps(&pause, "v"));
    assert!((a2 - v2).abs() <= 4.0 * frame, "{a2} vs {v2}");
    assert!((a2 - a).abs() <= 2.0 * frame, "{a2} vs {a}");
    // Answer 5. PFC frames only with PFC, PAUSE frames only with PAUSE, on the three incast
    // ports; h1 paused on priority 3 alone, or on all eight alike.
    let ports = pfc["switches.tor.ports"].as_array().unwrap();
    let pause_ports = pause["switches.tor.ports"].as_array().unwrap();
    for i in 1..4 {
        assert_eq!(u(&ports[i]["pfc"]["pause_tx_frames"]), 0);
        assert!(u(&ports[i]["pfc"]["tx_frames"]) > 0);
        assert_eq!(u(&pause_ports[i]["pfc"]["tx_frames"]), 0);
        assert!(u(&pause_ports[i]["pfc"]["pause_tx_frames"]) > 0);
    }
    assert_eq!(u(&pause["totals"]["pfc_tx_frames"]), 0);
    let h1 = |run: &Value| named(&run["hosts"], "h1")["paused_fraction"].clone();
    let (p, q) = (h1(&pfc), h1(&pause));
    for prio in 0..8 {
        assert_eq!(f(&p[prio]) > 0.0, prio == 3, "PFC, prio {prio}");
        assert_eq!(f(&q[prio]), f(&q[3]), "PAUSE, prio {prio}");
    }
    assert!(f(&q[3]) > 0.0);
    // h4's link carries v: its utilisation is v's rate on the wire.
    let util = |ps: &[Value]| f(&ps[4]["tx_utilization"]) * 100.0 * 1518.0 / 1538.0;
    assert!(
        (util(ports) - v).abs() < 0.002 * v,
        "{} vs {v}",
        util(ports)
    );
    assert!((util(pause_ports) - v2).abs() < 0.002 * v2);
}

#[test]
fn the_fifo_replays_the_first_mix_as_a_square_wave() {
    // Answer 2. Held at their limits, the senders send what leaves the FIFO for them: the
    // mix of one queue delay earlier, so the first t2 repeats. Phase 1 (to t1): 1:2:2.
    // Phase 2 (t1 to t2): h2 and h3 follow a limit that falls by α/(1 + 2α) of h1's growth
    // (0.3 frames per frame time), so they arrive at 0.37, a at 0.5. Phase 1 takes 2.5·t1
    // to send, phase 2 1.24·(t2 − t1); what the queue holds at t2 is the period. At h0:
    // phase 2 from 2.5·t1 for 1.24·(t2 − t1), then phase 1 for what of it arrived after t2.
    let (_, t1, t2) = first_xoffs();
    let b2 = 0.4 - ALPHA / (1.0 + 2.0 * ALPHA) * 0.3;
    let (n1, n2) = (2.5, 0.5 + 2.0 * b2);
    let (len1, len2) = (n1 * t1, n2 * (t2 - t1));
    let period = len1 + len2 - t2;
    let margin = 20.0;
    let high = (len1 + margin, len1 + len2 - margin);
    let low = (len1 + len2 + margin, len1 + len2 + (len1 - t2) - margin);
    let window = |(from, to): (f64, f64)| {
        format!(
            "{{from: {}ps, to: {}ps}}",
            (from * 1e6) as u64,
            (to * 1e6) as u64
        )
    };
    let arg = format!(
        "measure={},{},{}",
        window((1000.0, 8000.0)),
        window(high),
        window(low)
    );
    let out = tmp("global-pause-wave.json");
    let o = common::lossless(&[
        "run",
        lab().to_str().unwrap(),
        "--quiet",
        "--duration",
        "8ms",
        "--sweep",
        &arg,
        "--metric",
        "flows",
        "--json",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let waves: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let rows = waves["rows"].as_array().unwrap();
    let rate = |i: usize, x: &str| gbps(&rows[i]["metrics"], x);
    // The queue delay is the period: every frame of `a` waits it, plus the empty path.
    let a = named(&rows[0]["metrics"]["flows"], "a");
    let lat_us = u(&a["latency_ps"]["p50"]) as f64 / 1e6;
    assert!(
        (lat_us - (period + 0.766)).abs() < 0.005 * period,
        "{lat_us} vs {period}"
    );
    // Over many periods a third each; inside one phase, that phase's shares (1 %).
    for x in ["a", "b", "c"] {
        let t = rate(0, x);
        assert!(
            (t - LINE / 3.0).abs() < 0.005 * LINE / 3.0,
            "1–8 ms, {x}: {t}"
        );
    }
    let level = |i: usize, x: &str, share: f64| {
        let (t, want) = (rate(i, x), share * LINE);
        assert!(
            (t - want).abs() < 0.01 * want,
            "window {i}, {x}: {t} vs {want}"
        );
    };
    level(1, "a", 0.5 / n2);
    level(1, "b", b2 / n2);
    level(2, "a", 0.5 / n1);
    level(2, "b", 1.0 / n1);
}
