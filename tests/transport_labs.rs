//! The transport labs' guides, checked: docs/labs/lossy-vs-lossless.md,
//! allreduce-one-loss.md and allreduce-ecmp-vs-flowlet.md. Each expected value is derived
//! as the guide derives it.

mod common;

use common::{f, root, run, scenario, u};
use serde_json::Value;
use std::path::PathBuf;

/// The local ACK timeout NCCL sets: 4.096 µs × 2^20.
const RTO_PS: u64 = 4_096_000 << 20;

/// 1086-byte frames (IB MTU 1024) on the wire at 100G: 1106 bytes.
const W1K: u64 = 1106 * 80;
/// 4158-byte frames (IB MTU 4096): 4178 bytes.
const W4K: u64 = 4178 * 80;
/// An ACK on the wire.
const A: u64 = 86 * 80;

fn lab(name: &str) -> PathBuf {
    root().join("configs/labs").join(name)
}

fn text(name: &str) -> String {
    std::fs::read_to_string(lab(name)).unwrap()
}

fn go(name: &str, text: &str) -> Value {
    run(
        &scenario(&format!("{name}.yaml"), text),
        &format!("{name}.json"),
        &[],
    )
}

fn flows(r: &Value) -> &Vec<Value> {
    r["flows"].as_array().unwrap()
}

#[test]
fn lossless_incast_completes_when_the_receivers_link_has_carried_it_all() {
    let r = run(&lab("lossy-vs-lossless.yaml"), "lvl-on.json", &[]);
    assert_eq!(u(&r["totals"]["drops"]), 0);
    // 8 × (1953 full frames + one of 128 bytes of payload, 210 on the wire).
    let busy = 8 * (1953 * W1K + 210 * 80);
    for fl in flows(&r) {
        let t = &fl["transport"];
        assert_eq!(u(&t["retransmitted_packets"]), 0);
        let fct = u(&fl["fct_ps"]);
        assert!(fct >= busy && fct <= busy + 2_000_000, "{fct} vs {busy}");
        // An eighth of 1024/1106 of 100G each.
        let share = 100e9 * 1024.0 / 1106.0 / 8.0;
        assert!((f(&t["goodput_bps"]) / share - 1.0).abs() < 0.002);
    }
}

#[test]
fn lossy_incast_waits_for_the_ack_timeout_where_a_tail_was_lost() {
    let t = text("lossy-vs-lossless.yaml").replace("pfc_enable: [3, 4]", "pfc_enable: []");
    let r = go("lvl-off", &t);
    assert!(u(&r["totals"]["drops"]) > 0);
    assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
    let mut stalled = 0;
    for fl in flows(&r) {
        let tr = &fl["transport"];
        let fct = u(&fl["fct_ps"]);
        assert_eq!(u(&tr["delivered_bytes"]), 2_000_000);
        if u(&tr["timeouts"]) > 0 {
            // The timer, armed by the last ACK of progress, plus the resent tail.
            assert!(fct > RTO_PS && fct < RTO_PS + 2_000_000_000, "{fct}");
            stalled += 1;
        } else {
            assert!(fct < 2_000_000_000, "{fct}");
            assert!(u(&tr["naks_received"]) >= 1 || u(&tr["retransmitted_packets"]) == 0);
        }
    }
    assert!(stalled >= 1);
    // Why go-back-N resends the rest of a message: the packet that reveals a hole waits
    // through the full queue, longer than a sender takes to send its whole message.
    // The buffer counts 256-byte cells, five to a 1086-byte frame: 7,112,448 bytes of cells
    // are 5,556 frames, 491.6 µs of them at 88.48 ns each (docs/labs/lossy-vs-lossless.md).
    let q = u(&r["switches"][0]["ports"][0]["queues"][3]["watermark_bytes"]);
    assert_eq!(q, 7_112_448);
    let frames = q / 1_280;
    assert_eq!(frames, 5_556);
    let queue_delay_ps = frames * W1K;
    assert_eq!(queue_delay_ps, 491_594_880);
    assert!(queue_delay_ps > 1954 * W1K, "{queue_delay_ps}");
    let worst = flows(&r)
        .iter()
        .map(|f| u(&f["latency_ps"]["max"]))
        .max()
        .unwrap();
    assert!(
        (491_500_000..492_000_000).contains(&worst),
        "the last frame waited the queue out: {worst}"
    );
}

/// The one-loss lab without its event.
fn clean_ring() -> String {
    let t = text("allreduce-one-loss.yaml");
    let i = t.find("\nevents:").unwrap();
    t[..i + 1].to_string()
}

fn iterations(r: &Value) -> Vec<(u64, u64)> {
    r["collectives"][0]["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (u(&i["time_ps"]), u(&i["retransmitted_packets"])))
        .collect()
}

/// The ring's ideal, with its latencies: 1.75 × 8 MB at the goodput rate, a packet's store
/// and forward per step (a serialisation, 2 cables, the pipeline), and two more hops for
/// each of the 4 crossings on the critical path.
fn ring_ideal_ps() -> f64 {
    let goodput = 100e9 * 4096.0 / 4178.0;
    let transfer = 1.75 * 8e6 * 8.0 / goodput * 1e12;
    let hop = (W4K + 500_000 + 10_000) as f64;
    transfer + 14.0 * (hop + 10_000.0) + 4.0 * 2.0 * hop
}

#[test]
fn a_clean_ring_iteration_is_within_2_percent_of_its_ideal() {
    let r = go("ar-clean", &clean_ring());
    let its = iterations(&r);
    assert_eq!(its.len(), 5);
    for (t, resent) in its {
        assert_eq!(resent, 0);
        let ratio = t as f64 / ring_ideal_ps();
        assert!((1.0..1.02).contains(&ratio), "{t}: {ratio}");
    }
}

#[test]
fn one_loss_in_a_step_costs_go_back_n_a_few_packets() {
    let r = run(&lab("allreduce-one-loss.yaml"), "ar-mid.json", &[]);
    let c = &r["collectives"][0];
    assert_eq!(u(&c["timeouts"]), 0);
    assert_eq!(u(&c["naks"]), 1);
    let its = iterations(&r);
    let (t2, resent) = its[1];
    // The hole's wire time, the next packet's path, the NAK's way back; one frame more if
    // h2 is sending when it queues the NAK.
    let back = W4K + (2 * W4K + 520_000) + (2 * A + 520_000);
    let least = back.div_ceil(W4K);
    assert!((least..=least + 1).contains(&resent), "{resent} vs {least}");
    // The iteration is longer by about the resent wire time (the clean ones vary by the
    // ACKs they interleave: within 434 of them).
    let clean = its[2].0;
    let extra = t2 - clean;
    assert!(extra + 434 * A >= (resent - 1) * W4K, "{extra}");
    assert!(extra <= (resent + 2) * W4K + 434 * A, "{extra}");
}

#[test]
fn a_lost_tail_stalls_every_rank_for_the_ack_timeout() {
    let t = text("allreduce-one-loss.yaml").replace("{at: 1800us,", "{at: 2330us,");
    let r = go("ar-tail", &t);
    let c = &r["collectives"][0];
    assert_eq!(u(&c["timeouts"]), 1);
    assert_eq!(u(&c["naks"]), 0);
    // 245 = 30 × 8 + 5: the packets after the last coalesced ACK go again.
    assert_eq!(u(&c["retransmitted_packets"]), 245 - 30 * 8);
    let its = iterations(&r);
    let t2 = its[1].0;
    assert!(t2 > RTO_PS && t2 < RTO_PS + 2_000_000_000, "{t2}");
    assert_eq!(u(&c["time_ps"]["max"]), t2);
    for (i, (t, _)) in its.iter().enumerate().filter(|(i, _)| *i != 1) {
        assert!((*t as f64) < ring_ideal_ps() * 1.02, "iteration {i}: {t}");
    }
    assert!((u(&c["time_ps"]["p50"]) as f64) < ring_ideal_ps() * 1.02);
    // Iteration 3 is a little shorter than the clean ones: while h0 waited for its timer,
    // the other ranks ran ahead into it as far as the ring let them (h1 one step, r3
    // seven), so part of its per-step store-and-forward latency was paid before it began.
    let (t3, t4) = (its[2].0, its[3].0);
    assert!(t3 < t4 && t4 - t3 < 19_000_000, "{t3} vs {t4}");
}

/// Queue pairs on the busiest uplink of a leaf: its bytes over a queue pair's (a quarter
/// of what the four uplinks carried; the ACK-only ones are a rounding error).
fn busiest_uplink_share(r: &Value, leaf: usize) -> u64 {
    let members = r["switches"][leaf]["groups"][0]["members"]
        .as_array()
        .unwrap();
    let bytes: Vec<f64> = members.iter().map(|m| f(&m["bytes"])).collect();
    let per_qp = bytes.iter().sum::<f64>() / 4.0;
    (bytes.iter().cloned().fold(0.0, f64::max) / per_qp).round() as u64
}

#[test]
fn a_hash_collision_sets_the_ring_and_flowlets_lift_it() {
    let t = text("allreduce-ecmp-vs-flowlet.yaml");
    let hash = go("dlb-hash", &t.replace("mode: flowlet", "mode: hash"));
    let k = busiest_uplink_share(&hash, 0).max(busiest_uplink_share(&hash, 1));
    assert!(k >= 2, "the shipped seed collides");
    let goodput = 100e9 * 4096.0 / 4178.0;
    let c = &hash["collectives"][0];
    let busbw = f(&c["busbw_bps"]);
    assert!(
        (busbw / (goodput / k as f64) - 1.0).abs() < 0.005,
        "{busbw}, k = {k}"
    );
    assert_eq!(u(&c["retransmitted_packets"]), 0);
    let flowlet = run(
        &lab("allreduce-ecmp-vs-flowlet.yaml"),
        "dlb-flowlet.json",
        &[],
    );
    let c = &flowlet["collectives"][0];
    assert!(f(&c["busbw_bps"]) > 2.0 * busbw);
    assert!(f(&c["busbw_bps"]) < goodput);
    // Nothing dropped; every re-send answers a reordering.
    assert_eq!(u(&flowlet["totals"]["drops"]), 0);
    assert!(u(&c["naks"]) > 0 && u(&c["retransmitted_packets"]) > 0);
    for leaf in 0..2 {
        let g = &flowlet["switches"][leaf]["groups"][0];
        assert!(f(&g["balance"]) < 1.1);
        assert!(u(&g["reassignments"]) > 0);
    }
}

#[test]
fn the_plots_show_re_sends_and_every_iteration() {
    let dir = common::tmp("ar-plot");
    let _ = std::fs::remove_dir_all(&dir);
    let file = lab("allreduce-one-loss.yaml");
    let o = common::lossless(&[
        "run",
        file.to_str().unwrap(),
        "--quiet",
        "--plot",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let transport = std::fs::read_to_string(dir.join("transport.svg")).unwrap();
    let iterations = std::fs::read_to_string(dir.join("iterations.svg")).unwrap();
    // The one queue pair that re-sent, by name; a line at each of the 5 iterations' ends.
    assert!(transport.contains("ar:h1&gt;h2"));
    assert!(
        !transport.contains("ar:h0&gt;h1"),
        "a queue pair that re-sent nothing"
    );
    assert_eq!(transport.matches("#8000A0").count(), 5);
    // One marker per iteration against its number, the one with the loss in red.
    assert_eq!(iterations.matches("<circle").count(), 5);
    let red = iterations
        .split("<circle")
        .skip(1)
        .filter(|c| c[..c.find("/>").unwrap()].contains("#DC0000"))
        .count();
    assert_eq!(red, 1, "iteration 2 re-sent packets");
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(page.contains("RC re-sends") && page.contains("Collectives: each iteration"));
}

#[test]
fn tcp_incast_lossless_completes_on_time_and_lossy_waits_for_the_rto() {
    // MSS 1460 of 1538 bytes of wire: the goodput ceiling.
    let ceiling = 100e9 * 1460.0 / 1538.0;
    let on = run(&lab("tcp-incast.yaml"), "ti-on.json", &[]);
    assert_eq!(u(&on["totals"]["drops"]), 0);
    let incast: Vec<&Value> = flows(&on).iter().filter(|f| f["dst"] == "h0").collect();
    let last = incast.iter().map(|f| u(&f["fct_ps"])).max().unwrap();
    let all = 64e6 * 8.0 / ceiling * 1e12;
    assert!(
        last as f64 >= all && (last as f64) < all * 1.002,
        "{last} vs {all}"
    );
    let victim_on = f(&common::flow(&on, "victim")["tcp"]["goodput_bps"]);
    assert!(u(&on["totals"]["pfc_tx_frames"]) > 0);
    let t = text("tcp-incast.yaml").replace("pfc_enable: [3, 4]", "pfc_enable: []");
    let off = go("ti-off", &t);
    assert!(u(&off["totals"]["drops"]) > 0);
    for fl in flows(&off).iter().filter(|f| f["dst"] == "h0") {
        // smoltcp's RTO floor, 1 s (RFC 6298), then the repair.
        let fct = u(&fl["fct_ps"]);
        assert!(fct > 1_000_000_000_000 && fct < 1_010_000_000_000, "{fct}");
        assert!(u(&fl["tcp"]["retransmitted_segments"]) > 0);
        assert_eq!(u(&fl["tcp"]["delivered_bytes"]), 8_000_000);
    }
    // The lossy victim shares h1's NIC with t1 (a frame each in turn) until t1 has lost
    // its tail, then runs alone at the ceiling: between half of it and all of it.
    let victim_off = f(&common::flow(&off, "victim")["tcp"]["goodput_bps"]);
    assert!(
        victim_off > 0.5 * ceiling && victim_off <= ceiling,
        "{victim_off}"
    );
    // PFC's price: the victim pauses with t1 on h1's link.
    assert!(victim_on < 0.3 * victim_off, "{victim_on} vs {victim_off}");
    // Every segment a sender sends is a whole MSS but its last (and re-sends): no segments
    // of the few bytes a congestion window counted in bytes grows by an ACK.
    for fl in flows(&off).iter().chain(flows(&on)) {
        let t = &fl["tcp"];
        let new = u(&t["segments"]) - u(&t["retransmitted_segments"]);
        let whole = 8_000_000u64.div_ceil(1460);
        assert!(
            new <= whole,
            "{}: {new} new segments for {whole} of data",
            fl["name"]
        );
    }
}

#[test]
fn only_a_narrow_window_at_the_iterations_end_is_fatal() {
    // The guide's sweep: the loss's time at 20 ns steps over the 3 µs before iteration 2
    // ends. The losses that wait for the timer form one window (h1's last packet to its
    // last ACK), well under one step (83 µs) and far from the 1.165 ms of the iteration.
    let clean = go("ar-window-clean", &clean_ring());
    let end = u(&clean["collectives"][0]["iterations"][1]["end_ps"]);
    let values: Vec<String> = (0..150)
        .map(|i| format!("{}ps", end - 3_000_000 + i * 20_000))
        .collect();
    let rows = common::sweep_rows(
        &lab("allreduce-one-loss.yaml"),
        &format!("events.0.at={}", values.join(",")),
        &["collectives.0.timeouts"],
        "ar-window.json",
    );
    let fatal: Vec<usize> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| u(&r["metrics"]["collectives.0.timeouts"]) > 0)
        .map(|(i, _)| i)
        .collect();
    assert!(!fatal.is_empty());
    let (first, last) = (fatal[0], *fatal.last().unwrap());
    assert_eq!(fatal.len(), last - first + 1, "one window: {fatal:?}");
    let width_ps = (fatal.len() as u64) * 20_000;
    assert!((W4K..2_000_000).contains(&width_ps), "{width_ps}");
}

#[test]
fn check_reads_the_transports_back() {
    let o = common::lossless(&["check", lab("allreduce-one-loss.yaml").to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    // 8 MB over 8 ranks: 14 steps of 1 MB, 4096-byte packets (MTU 9216), 8 queue pairs.
    for part in [
        "collective ar: allreduce/ring of 8 ranks (h0 → h1 → h2 → h3 → r0 → r1 → r2 → r3 → h0)",
        "14 message(s) of 1MB per connection; 8 connections over RC: 4096-byte payload",
        "local ACK timeout 4.295s, 7 retries",
        "loss: at 1.8ms the next 1 data frame(s) host h1 sends are lost",
    ] {
        assert!(out.contains(part), "`{part}` not in {out}");
    }
    let o = common::lossless(&["check", lab("tcp-incast.yaml").to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("flow victim h1→h9: TCP cubic, 8MB (MSS 1460"),
        "{out}"
    );
}
