//! The fabric labs (configs/labs/leaf-spine.yaml, pause-spreading.yaml, deadlock.yaml):
//! each test asserts what the lab's comment claims, numbers derived there on paper.

mod common;

use common::{f, named, root, run, scenario, u};
use serde_json::Value;

/// The lab file with every `mode: flowlet ` of its groups replaced by `mode`.
fn leaf_spine(mode: &str) -> Value {
    let text = std::fs::read_to_string(root().join("configs/labs/leaf-spine.yaml")).unwrap();
    assert_eq!(
        text.matches("mode: flowlet ").count(),
        2,
        "both leaves' groups"
    );
    let text = text.replace("mode: flowlet ", &format!("mode: {mode} "));
    let file = scenario(&format!("leaf-spine-{mode}.yaml"), &text);
    run(&file, &format!("leaf-spine-{mode}.json"), &[])
}

fn aggregate_gbps(r: &Value) -> f64 {
    r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| f(&x["throughput_bps"]))
        .sum::<f64>()
        / 1e9
}

fn reordered(r: &Value) -> Vec<u64> {
    r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| u(&x["reordered"]))
        .collect()
}

fn leaf1_group(r: &Value) -> &Value {
    &named(&r["switches"], "leaf1")["groups"][0]
}

fn member_packets(g: &Value) -> Vec<u64> {
    g["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| u(&m["packets"]))
        .collect()
}

/// Latency of a flow alone on its path: 4 × 123.04 ns + 3 × 500 ns + (4 + 2·L) m × 5 ns.
fn path_latency_ps(spine_cable_m: u64) -> u64 {
    4 * 123_040 + 3 * 500_000 + (4 + 2 * spine_cable_m) * 5_000
}

#[test]
fn leaf_spine_hash_collides_two_elephants_on_one_uplink() {
    let r = leaf_spine("hash");
    let g = leaf1_group(&r);
    assert_eq!(g["mode"], "hash");
    // Two elephants share one uplink, one uplink is idle: which ones depends on the hash,
    // so only the shape is asserted. A shared uplink gives each of its two flows half of
    // 98.70 Gb/s; a flow alone on its spine arrives exactly one path latency after it left.
    let p = member_packets(g);
    assert_eq!(p.iter().filter(|n| **n == 0).count(), 1, "{p:?}");
    let flows = &r["flows"];
    let rate = |x: &Value| f(&x["throughput_bps"]) / 1e9;
    let (shared, alone): (Vec<&Value>, Vec<&Value>) = flows
        .as_array()
        .unwrap()
        .iter()
        .partition(|x| rate(x) < 98.70 * 0.75);
    assert_eq!((shared.len(), alone.len()), (2, 2));
    for x in &shared {
        assert!((rate(x) - 98.70 / 2.0).abs() < 0.1, "{x}");
    }
    let paths: Vec<u64> = [2, 30, 60, 100].map(path_latency_ps).to_vec();
    for x in &alone {
        assert!((rate(x) - 98.70).abs() < 0.1, "{x}");
        assert!(paths.contains(&u(&x["latency_ps"]["max"])), "{x}");
    }
    let agg = aggregate_gbps(&r);
    assert!((agg - 296.1).abs() < 0.3, "{agg}");
    assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
    // The colliding senders are paused; the others never.
    let hosts = &r["hosts"];
    for x in flows.as_array().unwrap() {
        let src = x["src"].as_str().unwrap();
        let paused = f(&named(hosts, src)["paused_fraction"][3]) > 0.0;
        assert_eq!(paused, shared.contains(&x), "{src}");
    }
    // docs/labs/leaf-spine.md, answers 2–3. The shared uplink's queue is what PFC allows:
    // leaf1's two PGs at α·S/(1 + 2α) each (24 MB, α = 1/8), in frames of 6 cells; a frame
    // behind it waits that many wire times, plus its path (0.5 %).
    let pg = 24e6 / 8.0 / (1.0 + 2.0 / 8.0);
    let queued_ps = 2.0 * pg / 1536.0 * 123_040.0 + path_latency_ps(2) as f64;
    for x in &shared {
        let max = u(&x["latency_ps"]["max"]) as f64;
        assert!((max - queued_ps).abs() < 0.005 * queued_ps, "{x}");
    }
    // Balance counts bytes steered: from e2's start (100 µs) the shared uplink is steered
    // two line rates until its PGs are full (each grows by half a 1536 B frame per frame
    // time), then one. Over the 300 µs–1 ms window, against one line rate for each of the
    // two other busy members (1 %).
    let full_us = 100.0 + pg / (0.5 * 1536.0 / 123.04) / 1e3;
    let busy = 2.0 * (full_us - 300.0) + (1000.0 - full_us);
    let share = busy / (busy + 2.0 * 700.0);
    let balance = f(&g["balance"]);
    assert!(
        (balance - 4.0 * share).abs() < 0.01 * 4.0 * share,
        "{balance} vs {}",
        4.0 * share
    );
    assert!(balance > 4.0 / 3.0);
    assert_eq!(reordered(&r), [0, 0, 0, 0]);
}

#[test]
fn leaf_spine_flowlets_give_each_elephant_its_own_spine() {
    let hash = aggregate_gbps(&leaf_spine("hash"));
    let r = leaf_spine("flowlet");
    let g = leaf1_group(&r);
    assert_eq!(g["mode"], "flowlet");
    assert_eq!(
        (
            u(&g["flowlets"]),
            u(&g["reassignments"]),
            u(&g["table_full"])
        ),
        (4, 0, 0)
    );
    assert!(member_packets(g).iter().all(|p| *p > 0));
    assert!((f(&g["balance"]) - 1.0).abs() < 0.01, "{}", g["balance"]);
    let agg = aggregate_gbps(&r);
    assert!((agg - 4.0 * 98.70).abs() < 0.4, "{agg}");
    assert!(agg >= 1.2 * hash, "flowlet {agg} vs hash {hash}");
    assert_eq!(reordered(&r), [0, 0, 0, 0]);
    assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
    assert_eq!(u(&r["totals"]["pfc_tx_frames"]), 0);
    // Each flow alone on one of the four paths: the four path latencies, once each.
    let mut lats: Vec<u64> = r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| u(&x["latency_ps"]["max"]))
        .collect();
    lats.sort();
    let want: Vec<u64> = [2, 30, 60, 100].map(path_latency_ps).to_vec();
    assert_eq!(lats, want);
}

#[test]
fn leaf_spine_packet_spraying_balances_and_reorders() {
    let r = leaf_spine("per_packet");
    let g = leaf1_group(&r);
    assert!(f(&g["balance"]) < 1.05, "{}", g["balance"]);
    assert!(
        reordered(&r).iter().all(|n| *n > 1000),
        "{:?}",
        reordered(&r)
    );
    assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
    let p99 = u(&named(&r["flows"], "e0")["latency_ps"]["p99"]);
    assert!(p99 > 2 * path_latency_ps(100), "{p99}");
}

#[test]
fn leaf_spine_flowlets_started_together_collide_and_reorder() {
    let text = std::fs::read_to_string(root().join("configs/labs/leaf-spine.yaml")).unwrap();
    let together: String = text
        .lines()
        .map(|l| match l.find(", start: ") {
            Some(i) if l.starts_with("  - {name: e") => format!("{}}}\n", &l[..i]),
            _ => format!("{l}\n"),
        })
        .collect();
    assert_eq!(together.matches(", start: ").count(), 0);
    let r = run(
        &scenario("leaf-spine-together.yaml", &together),
        "leaf-spine-together.json",
        &[],
    );
    // Every member is band 0 for the four first packets: flows collide, PFC pauses
    // them, a pause longer than idle_time starts a new flowlet that lands elsewhere and
    // overtakes the queue it left.
    assert!(u(&r["totals"]["pfc_tx_frames"]) > 0);
    assert!(u(&leaf1_group(&r)["reassignments"]) > 0);
    assert!(reordered(&r).iter().sum::<u64>() > 0, "{:?}", reordered(&r));
    assert!(aggregate_gbps(&r) < 4.0 * 98.70 - 1.0);
    assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
}

#[test]
fn same_seed_same_json() {
    let strip = |mut v: Value| {
        v["wall_time_s"] = Value::Null;
        v
    };
    for mode in ["flowlet", "per_packet"] {
        assert_eq!(strip(leaf_spine(mode)), strip(leaf_spine(mode)), "{mode}");
    }
    // Spraying is random: another seed, other choices.
    let text = std::fs::read_to_string(root().join("configs/labs/leaf-spine.yaml"))
        .unwrap()
        .replace("mode: flowlet ", "mode: per_packet ")
        .replace("seed: 2\n", "seed: 3\n");
    let other = run(
        &scenario("leaf-spine-seed3.yaml", &text),
        "leaf-spine-seed3.json",
        &[],
    );
    assert_ne!(
        member_packets(leaf1_group(&other)),
        member_packets(leaf1_group(&leaf_spine("per_packet")))
    );
}

/// The port `port` of switch `sw` in a report.
fn port<'a>(r: &'a Value, sw: &str, port: &str) -> &'a Value {
    r["switches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == sw)
        .unwrap()["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["port"] == port)
        .unwrap_or_else(|| panic!("no {sw}:{port}"))
}

fn first_xoff(r: &Value, sw: &str, p: &str) -> u64 {
    u(&port(r, sw, p)["pfc"]["first_tx_xoff_ps"][3])
}

fn last_xon(r: &Value, sw: &str, p: &str) -> u64 {
    u(&port(r, sw, p)["pfc"]["last_tx_xon_ps"][3])
}

/// configs/labs/pause-spreading.yaml: each number below is the lab comment's.
#[test]
fn pause_spreads_hop_by_hop_at_the_derived_times() {
    let r = run(
        &root().join("configs/labs/pause-spreading.yaml"),
        "pause-spreading.json",
        &[],
    );
    // Picoseconds.
    let t_a = 153_800; // A: 1538 B × 8 / 80G
    let t_v = 67_200; // V: 84 B × 8 / 10G
    let pipeline = 500_000;
    let response = 1_000_000;
    let pfc_frame = 6_720; // 84 B at 100G
    let cable = |m: u64| m * 5_000;
    let jitter = 2 * pfc_frame; // two 64 B victim frames ahead of an A frame at s1
                                // A hop paused from `p` sends XOFF with its `n`th held frame of period `t`.
    let window = |p: u64, n: u64, t: u64| (p - pipeline + (n - 1) * t, p - pipeline + n * t);
    let check = |what: &str, got: u64, (lo, hi): (u64, u64)| {
        assert!(
            got + jitter > lo && got <= hi + jitter,
            "{what}: XOFF at {got} ps, derived ({lo}, {hi}]"
        );
    };
    // The receiver's XOFF at 20 µs takes effect at s3's egress at 21 µs.
    let s3 = first_xoff(&r, "s3", "Ethernet0");
    check("s3 → s2", s3, window(20_000_000 + response, 32, t_a));
    assert!((25_267_800..=25_421_600).contains(&s3), "{s3}");
    let p2 = s3 + pfc_frame + cable(20) + response;
    let s2 = first_xoff(&r, "s2", "Ethernet0");
    check("s2 → s1", s2, window(p2, 31, t_a));
    let p1 = s2 + pfc_frame + cable(100) + response;
    let s1_a = first_xoff(&r, "s1", "Ethernet0");
    check("s1 → hA", s1_a, window(p1, 32, t_a));
    let s1_v = first_xoff(&r, "s1", "Ethernet1");
    check("s1 → hV", s1_v, window(p1, 191, t_v));
    // In order of distance from the sink; and the pauses clear in the opposite order.
    assert!(s3 < s2 && s2 < s1_a && s1_a < s1_v);
    let (x3, x2) = (
        last_xon(&r, "s3", "Ethernet0"),
        last_xon(&r, "s2", "Ethernet0"),
    );
    let (xa, xv) = (
        last_xon(&r, "s1", "Ethernet0"),
        last_xon(&r, "s1", "Ethernet1"),
    );
    assert!(
        141_000_000 < x3 && x3 < x2 && x2 < xa.min(xv),
        "{x3} {x2} {xa} {xv}"
    );
    assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
    assert_eq!(u(&r["totals"]["drops"]), 0);

    // The victim stalls from about when s1 → s2 is paused until s2's XON has come back.
    let v = named(&r["flows"], "V");
    let gap_from = u(&v["longest_gap_from_ps"]);
    let gap_end = gap_from + u(&v["longest_gap_ps"]);
    // Its last frame on the s1 → s2 wire arrives at hW about 1 µs after p1.
    assert!(
        p1 < gap_from && gap_from < p1 + 1_200_000,
        "{gap_from} vs {p1}"
    );
    let resume = x2 + pfc_frame + cable(100) + response;
    assert!(
        resume < gap_end && gap_end < resume + 1_500_000,
        "{gap_end} vs {resume}"
    );
    assert!(u(&v["longest_gap_ps"]) > 100_000_000);
    // It recovers: every frame sent arrives but those still on their way (latency / T_V).
    let (tx, rx) = (u(&v["tx_packets"]), u(&v["rx_packets"]));
    let in_flight = u(&v["latency_ps"]["min"]).div_ceil(t_v) + 1;
    assert!(tx - rx <= in_flight, "V: {tx} sent, {rx} received");
    // hW itself never paused anything.
    assert_eq!(u(&named(&r["hosts"], "hW")["pfc"]["tx_frames"]), 0);
}

/// configs/labs/deadlock.yaml with `edit` applied to its text.
fn deadlock_lab(tag: &str, edit: impl Fn(String) -> String) -> Value {
    let text = std::fs::read_to_string(root().join("configs/labs/deadlock.yaml")).unwrap();
    let file = scenario(&format!("deadlock-{tag}.yaml"), &edit(text));
    run(&file, &format!("deadlock-{tag}.json"), &[])
}

const RING_QOS: &str = "    qos: {pfc_enable: [3, 4]}\n";

fn flow_names() -> [&'static str; 3] {
    ["f13", "f21", "f32"]
}

#[test]
fn deadlock_ring_is_found_named_and_never_clears() {
    let r = deadlock_lab("pfc", |t| t);
    let d = &r["deadlocks"];
    assert_eq!(u(&d["deadlock_time_ps"]), 10_000_000_000);
    let found = d["found"].as_array().unwrap();
    assert_eq!(found.len(), 1, "{d}");
    let x = &found[0];
    assert_eq!(
        x["cycle"],
        serde_json::json!(["s1:Ethernet1 q3", "s2:Ethernet1 q3", "s3:Ethernet1 q3"])
    );
    let formed = u(&x["formed_ps"]);
    // Answers 1–3 (docs/labs/deadlock.md): each Ethernet1 FIFO sends its host's flow at
    // the share h = 1 / (1 + h), the golden ratio's 0.618, and the passing flow at 1 − h.
    // The host PG keeps (1 − 1/(1 + h)) of a 1536 B frame per 123.04 ns and crosses the
    // pool's limit with the Ethernet2 PG at h times its level; the Ethernet2 PG, growing at
    // (h − h/(1 + h)) frames per frame time, crosses later at the two-PG limit: the cycle.
    let h = (5f64.sqrt() - 1.0) / 2.0;
    let (s, alpha) = (24e6, 1.0 / 8.0);
    let frame = 1536.0 / 123.04; // B/ns
    let host_pg = alpha * s / (1.0 + alpha * (1.0 + h));
    let host_xoff_ns = host_pg / ((1.0 - 1.0 / (1.0 + h)) * frame);
    let through_pg = alpha * s / (1.0 + 2.0 * alpha);
    let formed_ns = host_xoff_ns + (through_pg - h * host_pg) / ((h - h / (1.0 + h)) * frame);
    for sw in ["s1", "s2", "s3"] {
        let t = u(&port(&r, sw, "Ethernet0")["pfc"]["first_tx_xoff_ps"][3]) as f64 / 1e3;
        assert!(
            (t - host_xoff_ns).abs() < 0.003 * host_xoff_ns,
            "{sw}: first XOFF {t} ns vs {host_xoff_ns}"
        );
    }
    assert!(
        (formed as f64 / 1e3 - formed_ns).abs() < 0.005 * formed_ns,
        "formed {formed} ps vs {formed_ns} ns"
    );
    // Each flow arrives at the passing share of a link while the ring moves (0.5 %).
    let line = 1518.0 / 1538.0 * 100e9;
    for name in flow_names() {
        let t = common::f(&named(&r["flows"], name)["throughput_bps"]);
        assert!(
            (t - (1.0 - h) * line).abs() < 0.005 * (1.0 - h) * line,
            "{name}: {t}"
        );
    }
    assert_eq!(u(&x["detected_ps"]), formed + 10_000_000_000);
    assert!(x["cleared_ps"].is_null());
    assert_eq!(d["stopped_run"], false);
    assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
    assert_eq!(u(&r["totals"]["drops"]), 0);
    // No flow delivers anything once the cycle stands (its last frames were already past
    // the ring's queues).
    for name in flow_names() {
        let f = named(&r["flows"], name);
        let last = u(&f["last_rx_ps"]);
        assert!(
            last <= formed + 10_000_000,
            "{name}: last frame at {last}, formed {formed}"
        );
        assert!(u(&f["rx_packets"]) > 0);
        // Over the whole 30 ms run it delivered only what came before the cycle formed:
        // at most its throughput × formed / 30 ms.
        let (thr, avg) = (
            common::f(&f["throughput_bps"]),
            common::f(&f["window_rate_bps"]),
        );
        let bound = thr * (formed + 10_000_000) as f64 / 30e9;
        assert!(
            avg > 0.0 && avg <= bound,
            "{name}: {avg} vs {thr} × formed / 30 ms"
        );
    }
    let text = String::from_utf8(
        common::lossless(&[
            "run",
            root().join("configs/labs/deadlock.yaml").to_str().unwrap(),
        ])
        .stdout,
    )
    .unwrap();
    assert!(
        text.contains("PFC DEADLOCK")
            && text.contains("s1:Ethernet1 q3 → s2:Ethernet1 q3 → s3:Ethernet1 q3")
            && text.contains("never cleared"),
        "{text}"
    );
}

#[test]
fn deadlock_ring_without_a_duration_stops_at_the_deadlock() {
    // Finite flows, run until idle: a deadlock means never idle, so the run stops there.
    let r = deadlock_lab("until-idle", |t| {
        t.replace("duration: 30ms\n", "")
            .replace("dscp: 3}", "dscp: 3, packets: 100000}")
    });
    let d = &r["deadlocks"];
    assert_eq!(d["stopped_run"], true);
    let x = &d["found"][0];
    assert_eq!(u(&r["sim_time_ps"]), u(&x["detected_ps"]));
}

#[test]
fn deadlock_ring_with_the_watchdog_resumes_after_detection_and_restoration() {
    let wd = "    qos: {pfc_enable: [3, 4], pfcwd: {action: drop, detection_time: 2ms, restoration_time: 2ms, polling_interval: 200us}}\n";
    let r = deadlock_lab("watchdog", |t| {
        assert_eq!(t.matches(RING_QOS).count(), 3);
        t.replace(RING_QOS, wd)
    });
    assert!(r["deadlocks"]["found"].as_array().unwrap().is_empty());
    // Answer 5: the ring locks `formed` after each (re)start, as without the watchdog; the
    // first poll past that still sees frames leave, the stuck condition counts from it, and
    // detection (D) then restoration (R) follow. The period is that poll's wait + D + R.
    let plain = deadlock_lab("pfc-formed", |t| t);
    let formed = u(&plain["deadlocks"]["found"][0]["formed_ps"]);
    let (poll, d, rest) = (200_000_000u64, 2_000_000_000u64, 2_000_000_000u64);
    let first_poll = formed.div_ceil(poll) * poll;
    let period = first_poll + d + rest;
    let end = u(&r["sim_time_ps"]);
    let want: Vec<[u64; 2]> = (0..)
        .map(|k| k * period + first_poll + d)
        .take_while(|t| *t < end)
        .map(|t| [t, t + rest])
        .collect();
    assert_eq!(want.len(), 6, "storms at 3, 8, …, 28 ms");
    for sw in ["s1", "s2", "s3"] {
        let w = &port(&r, sw, "Ethernet1")["pfcwd"][0];
        assert_eq!(u(&w["queue"]), 3);
        let history: Vec<[u64; 2]> = w["history_ps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| [u(&p[0]), u(&p[1])])
            .collect();
        assert_eq!(history, want, "{sw}");
        assert!(u(&w["dropped_packets"]) > 0);
    }
    // Each flow's longest stall: from its last frame before the lock (about `formed` into
    // the cycle) to its first after restoration, the wait for the poll + D + R, plus a
    // path's latency either way (within 0.5 %).
    let stall = (first_poll - formed + d + rest) as f64;
    for name in flow_names() {
        let gap = u(&named(&r["flows"], name)["longest_gap_ps"]) as f64;
        assert!(
            (gap - stall).abs() < 0.005 * stall,
            "{name}: longest gap {gap} ps vs {stall}"
        );
    }
}

#[test]
fn deadlock_ring_with_one_lossy_hop_keeps_moving() {
    let r = deadlock_lab("lossy-hop", |t| {
        let i = t.find("  - name: s3\n").unwrap();
        let (a, b) = t.split_at(i);
        format!(
            "{a}{}",
            b.replacen(RING_QOS, "    qos: {pfc_enable: [], pfc_asym: on}\n", 1)
        )
    });
    assert!(r["deadlocks"]["found"].as_array().unwrap().is_empty());
    assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
    // s3 drops (lossy) instead of pausing s2; nobody else drops.
    let drops = |sw: &str| {
        r["switches"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == sw)
            .unwrap()["drops_by_reason"]
            .as_object()
            .unwrap()
            .values()
            .map(u)
            .sum::<u64>()
    };
    assert!(drops("s3") > 0);
    assert_eq!(drops("s1") + drops("s2"), 0);
    assert_eq!(port(&r, "s3", "Ethernet2")["pfc"]["tx_frames"], 0);
    // Answer 6: f13 and f32 get about half a link (PFC at s2 and s1 shares each Ethernet1
    // between a host and a passing flow); f21 gets what f32 leaves of s3's Ethernet1,
    // whose tail drops lock it out.
    let line = 1518.0 / 1538.0 * 100e9;
    let rate = |n: &str| common::f(&named(&r["flows"], n)["throughput_bps"]);
    for name in ["f13", "f32"] {
        assert!(
            (rate(name) - line / 2.0).abs() < 0.03 * line / 2.0,
            "{name}: {}",
            rate(name)
        );
    }
    let through_s3 = u(&port(&r, "s3", "Ethernet1")["queues"][3]["tx_packets"]);
    let f21 = u(&named(&r["flows"], "f21")["rx_packets"]);
    assert!(
        f21 * 8 < through_s3,
        "f21 {f21} of {through_s3} frames s3 sent to s1 (about a tenth)"
    );
    assert!(rate("f21") < 0.2 * rate("f32"), "{}", rate("f21"));
    // Its 5.5 Gb/s over the run includes the first 2 ms, before s3's queue first filled;
    // in steady state, 2–30 ms, it gets about 4.0 Gb/s, and less as the run goes on.
    let steady = deadlock_lab("lossy-hop-steady", |t| {
        let i = t.find("  - name: s3\n").unwrap();
        let (a, b) = t.split_at(i);
        let t = format!(
            "{a}{}",
            b.replacen(RING_QOS, "    qos: {pfc_enable: [], pfc_asym: on}\n", 1)
        );
        t.replacen(
            "duration: 30ms\n",
            "duration: 30ms\nmeasure: {from: 2ms}\n",
            1,
        )
    });
    let f21 = common::f(&named(&steady["flows"], "f21")["window_rate_bps"]);
    assert!(f21 > 3.0e9 && f21 < 5.0e9, "f21 in steady state: {f21}");
    assert!(rate("f21") > f21 * 1.3, "{} vs {f21}", rate("f21"));
    // Every flow still delivers at the end of the run, and never stalled for 1 ms.
    let end = u(&r["sim_time_ps"]);
    for name in flow_names() {
        let f = named(&r["flows"], name);
        assert!(u(&f["last_rx_ps"]) + 1_000_000_000 > end, "{name}");
        assert!(u(&f["longest_gap_ps"]) < 1_000_000_000, "{name}");
    }
}
