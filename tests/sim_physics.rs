//! `lossless run` against expectations derived on paper (docs/physics.md), through the CLI and
//! the JSON contract.

mod common;

use common::{flow, root, run, scenario, tmp, u};
use serde_json::Value;

#[test]
fn one_100g_flow_of_1518_byte_frames_runs_at_8_127_mpps() {
    let r = run(
        &root().join("configs/labs/line-rate.yaml"),
        "line-rate.json",
        &[],
    );
    let f = &r["flows"][0];
    let seconds = u(&f["rx_bytes"]) as f64 * 8.0 / f["throughput_bps"].as_f64().unwrap();
    let mpps = u(&f["rx_packets"]) as f64 / seconds / 1e6;
    assert!((mpps - 8.127).abs() / 8.127 < 0.001, "{mpps} Mpps");
    let gbps = f["throughput_bps"].as_f64().unwrap() / 1e9;
    assert!((gbps - 98.70).abs() < 0.01, "{gbps}");
    assert_eq!(u(&r["totals"]["drops"]), 0);
    assert_eq!(u(&r["totals"]["pfc_tx_frames"]), 0);
    assert_eq!(u(&r["totals"]["pfc_rx_frames"]), 0);
    // First frame: 2 × 10 ns propagation + 2 × 123.04 ns serialization + 500 ns pipeline.
    assert_eq!(
        u(&f["latency_ps"]["min"]),
        2 * 10_000 + 2 * 123_040 + 500_000
    );
    // Nothing queues behind a single flow: every frame sees the same latency.
    assert_eq!(u(&f["latency_ps"]["max"]), 766_080);
}

#[test]
fn first_frame_latency_is_exact_for_other_speeds_and_cables() {
    // 25G, 30 m cables, 9000-byte frames, 1 µs pipeline: 2·150 ns + 2·(9020·8/25G) + 1 µs.
    let s = scenario(
        "lat.yaml",
        "# latency\nswitches:\n  - name: s\n    ports: {count: 2, speed: 25G, cable: 30m}\n    pipeline_latency: 1us\n\
         hosts:\n  - {name: a, attach: s:Ethernet0}\n  - {name: b, attach: s:Ethernet1}\n\
         flows:\n  - {name: f, src: a, dst: b, frame: 9000B, packets: 1}\n",
    );
    let r = run(&s, "lat.json", &[]);
    let ser = 9020 * 8 * 40; // ps at 25G: 40 ps per bit
    assert_eq!(
        u(&r["flows"][0]["latency_ps"]["min"]),
        2 * 150_000 + 2 * ser + 1_000_000
    );
    // A finite flow has a completion time: here the same as its only frame's latency.
    assert_eq!(
        u(&r["flows"][0]["fct_ps"]),
        2 * 150_000 + 2 * ser + 1_000_000
    );
}

#[test]
fn incast_3_to_1_on_a_lossless_priority_is_fair_and_lossless() {
    let r = run(
        &root().join("configs/labs/incast-pfc.yaml"),
        "incast.json",
        &["--pcap-dir", tmp("incast-pcap").to_str().unwrap()],
    );
    assert_eq!(u(&r["totals"]["drops"]), 0);
    assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
    let third = 98.70e9 / 3.0;
    for f in r["flows"].as_array().unwrap() {
        let t = f["throughput_bps"].as_f64().unwrap();
        assert!((t - third).abs() / third < 0.02, "{}: {t}", f["name"]);
    }
    let ports = r["switches"][0]["ports"].as_array().unwrap();
    let xoff: u64 = ports
        .iter()
        .map(|p| {
            p["pfc"]["tx_xoff"]
                .as_array()
                .unwrap()
                .iter()
                .map(u)
                .sum::<u64>()
        })
        .sum();
    assert!(xoff > 0);
    // Dynamic threshold with α = 1 and 3 PGs filling together: α·S/(1 + 3α) = 4 MB each.
    for p in &ports[1..4] {
        let wm = u(&p["pgs"][3]["shared_watermark_bytes"]) as f64;
        assert!((wm - 4.0e6).abs() / 4.0e6 < 0.01, "{wm}");
    }
}

#[test]
fn the_same_incast_without_pfc_drops() {
    let r = run(
        &root().join("configs/labs/incast-lossy.yaml"),
        "lossy.json",
        &[],
    );
    assert!(u(&r["totals"]["drops"]) > 0);
    assert_eq!(u(&r["totals"]["pfc_tx_frames"]), 0);
    assert!(u(&r["switches"][0]["drops_by_reason"]["ingress_limit"]) > 0);
    assert_eq!(
        u(&r["totals"]["lossless_drops"]),
        0,
        "nothing lossless to drop"
    );
}

#[test]
fn headroom_too_small_shows_lossless_drops() {
    let r = run(
        &root().join("configs/labs/headroom-too-small.yaml"),
        "headroom.json",
        &[],
    );
    assert!(u(&r["totals"]["lossless_drops"]) > 0);
    // 8 KiB = 32 cells; 1518-byte frames take 6 cells: 5 fit (7680 B), the 6th drops.
    let pg = r["switches"][0]["ports"][1]["pgs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["pg"] == 3)
        .expect("PG 3 of Ethernet1");
    assert_eq!(u(&pg["headroom_watermark_bytes"]), 5 * 6 * 256);
    // With the headroom raised to the computed minimum (30.1 KB), the same run is lossless.
    let text = std::fs::read_to_string(root().join("configs/labs/headroom-too-small.yaml"))
        .unwrap()
        .replace("xoff: 8KiB", "xoff: 30144B");
    let r = run(&scenario("hr-ok.yaml", &text), "hr-ok.json", &[]);
    assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
}

#[test]
fn hol_blocking_slows_the_victim_to_the_congested_rate() {
    let r = run(
        &root().join("configs/labs/hol-blocking.yaml"),
        "hol.json",
        &[],
    );
    let flows = r["flows"].as_array().unwrap();
    let rate = |n: &str| {
        flows.iter().find(|f| f["name"] == n).unwrap()["throughput_bps"]
            .as_f64()
            .unwrap()
            / 1e9
    };
    let (a, v) = (rate("a"), rate("v"));
    // Per-port fair PFC: a gets a third of 1518/1538 × 100G; v, alternating with a at h1's
    // NIC, the same, instead of the 65.8 Gb/s a leaves on h1's link.
    let third = 100.0 * 1518.0 / 1538.0 / 3.0;
    assert!((a - third).abs() < 0.5, "congested {a} vs {third}");
    assert!((v - third).abs() < 0.5, "victim {v} vs {third}");
    assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
}

#[test]
fn same_seed_gives_identical_json_and_pcap() {
    let file = root().join("configs/labs/incast-pfc.yaml");
    let (d1, d2) = (tmp("det1"), tmp("det2"));
    let mut a = run(
        &file,
        "det1.json",
        &["--duration", "300us", "--pcap-dir", d1.to_str().unwrap()],
    );
    let mut b = run(
        &file,
        "det2.json",
        &["--duration", "300us", "--pcap-dir", d2.to_str().unwrap()],
    );
    // Everything but the wall time and the output paths (d1 vs d2) is the same.
    for r in [&mut a, &mut b] {
        r["wall_time_s"] = Value::Null;
        r["outputs"] = Value::Null;
    }
    assert_eq!(a, b);
    let pa = std::fs::read(d1.join("tor-Ethernet1.pcap")).unwrap();
    let pb = std::fs::read(d2.join("tor-Ethernet1.pcap")).unwrap();
    assert!(pa.len() > 1000);
    assert_eq!(pa, pb);
}

#[test]
fn every_shipped_config_runs() {
    let mut files = Vec::new();
    let mut stack = vec![root().join("configs")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "yaml") {
                files.push(p);
            }
        }
    }
    for (i, f) in files.iter().enumerate() {
        let r = run(
            f,
            &format!("cfg{i}.json"),
            &[
                "--duration",
                "100us",
                "--pcap-dir",
                tmp("cfg-pcap").to_str().unwrap(),
            ],
        );
        assert_eq!(u(&r["sim_time_ps"]), 100_000_000, "{}", f.display());
        assert_eq!(u(&r["engine"]["stalls"]), 0, "{}", f.display());
    }
}

#[test]
fn timeseries_csv_shows_queue_pg_and_pause_state() {
    let csv = tmp("ts.csv");
    let text = std::fs::read_to_string(root().join("configs/labs/incast-pfc.yaml"))
        .unwrap()
        .replace(
            "timeseries: {interval: 10us}",
            &format!("timeseries: {{interval: 100us, csv: {}}}", csv.display()),
        );
    let r = run(&scenario("ts.yaml", &text), "ts.json", &[]);
    assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
    let data = std::fs::read_to_string(&csv).unwrap();
    let mut lines = data.lines();
    assert_eq!(
        lines.next(),
        Some("time_ps,node,port,prio,queue_bytes,pg_shared_bytes,pg_headroom_bytes,paused,xoff")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    // 2 ms / 100 µs = 21 samples (0 … 2 ms) × (4 ports + 4 hosts) × 8 priorities.
    assert_eq!(rows.len(), 21 * 8 * 8);
    // At 1 ms the egress queue toward h0 is deep and the senders are held in XOFF.
    let at = |node: &str, port: &str, prio: &str| {
        rows.iter()
            .find(|r| r[0] == "1000000000" && r[1] == node && r[2] == port && r[3] == prio)
            .unwrap()
            .clone()
    };
    assert!(at("tor", "Ethernet0", "3")[4].parse::<u64>().unwrap() > 1_000_000);
    assert!(at("tor", "Ethernet1", "3")[5].parse::<u64>().unwrap() > 1_000_000);
    let paused_hosts = ["h1", "h2", "h3"]
        .iter()
        .filter(|h| {
            rows.iter()
                .any(|r| r[1] == **h && r[3] == "3" && r[7] == "1")
        })
        .count();
    assert_eq!(paused_hosts, 3);
}

#[test]
fn a_slow_receiver_sends_pfc_and_is_drained_losslessly() {
    // h1 sends at 100G into h0, whose software drains only 40G: h0's NIC pauses the switch,
    // the switch's queue fills, and PFC propagates back to h1. Nothing is lost.
    let s = scenario(
        "slow.yaml",
        "# slow receiver\nduration: 1ms\nswitches:\n  - name: s\n    ports: {count: 2, mtu: 1518}\n\
         hosts:\n  - {name: h0, attach: s:Ethernet0, nic: {rx_buffer: 256KiB, drain: 40G, pfc_xoff: 128KiB, pfc_xon: 64KiB}}\n  - {name: h1, attach: s:Ethernet1}\n\
         flows:\n  - {name: f, src: h1, dst: h0, dscp: 3, pattern: greedy}\n",
    );
    let r = run(&s, "slow.json", &[]);
    let h0 = r["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == "h0")
        .unwrap();
    assert!(u(&h0["pfc"]["tx_xoff"][3]) > 0, "the NIC paused the switch");
    assert_eq!(u(&h0["rx_drops"]), 0);
    assert!(u(&h0["rx_buffer_watermark_bytes"]) <= 256 * 1024);
    assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
    assert!(u(&r["switches"][0]["ports"][0]["pfc"]["rx_xoff"][3]) > 0);
    // In the long run the receiver gets what it drains.
    let t = r["flows"][0]["throughput_bps"].as_f64().unwrap() / 1e9;
    assert!(t > 38.0 && t < 46.0, "{t} Gb/s");
}

/// A run without `duration` waits for idle, and frames held behind a disabled transmitter
/// are not idle while an event that releases them is still to come. h1 sends ten 1518-byte
/// frames (100G, 2 m cables: each takes (1518 + 20) × 8 bit = 123.04 ns of wire with its
/// preamble and gap, and 10 ns of cable); Ethernet0 toward h0 is disabled from 0 to 20 µs.
/// All ten arrive back to back from 20 µs on, and the run ends as the tenth is in:
/// 20 µs + 10 × 123.04 ns + 10 ns = 21.2404 µs (docs/physics.md: a frame is received at
/// the end of its wire time).
#[test]
fn a_run_waiting_for_idle_waits_for_the_event_that_enables_a_transmitter() {
    let s = scenario(
        "txwait.yaml",
        "# tx wait\nswitches:\n  - name: s\n    ports: {count: 2, speed: 100G, cable: 2m, mtu: 1518}\n\
         hosts:\n  - {name: h0, attach: s:Ethernet0}\n  - {name: h1, attach: s:Ethernet1}\n\
         flows:\n  - {name: f, src: h1, dst: h0, dscp: 3, frame: 1518B, packets: 10}\n\
         events:\n  - {at: 0ns, port: s:Ethernet0, tx: disable}\n  - {at: 20us, port: s:Ethernet0, tx: enable}\n",
    );
    let r = run(&s, "txwait.json", &[]);
    let f = &r["flows"][0];
    assert_eq!(u(&f["rx_packets"]), 10, "{f}");
    assert_eq!(u(&r["totals"]["drops"]), 0);
    assert_eq!(
        u(&r["sim_time_ps"]),
        21_240_400,
        "the run ends as the tenth is in"
    );
    assert_eq!(u(&f["last_rx_ps"]), 21_240_400);
}

/// One egress queue disabled (`tx: disable` with `queue: 3`), the port's others going on:
/// h1 sends ten 1518-byte frames on DSCP 3 (queue 3) and ten on DSCP 1 (queue 1) toward h0,
/// and Ethernet0's queue 3 is held from 0 to 20 µs. Queue 1's frames leave at once and are
/// all in long before 20 µs; queue 3's leave back to back from 20 µs on, so the last is in
/// at 20 µs + 10 × 123.04 ns + 10 ns = 21.2404 µs, where the run ends.
#[test]
fn one_disabled_egress_queue_holds_its_frames_and_the_others_go_on() {
    let s = scenario(
        "qdisable.yaml",
        "# queue disable\nswitches:\n  - name: s\n    ports: {count: 2, speed: 100G, cable: 2m, mtu: 1518}\n\
         hosts:\n  - {name: h0, attach: s:Ethernet0}\n  - {name: h1, attach: s:Ethernet1}\n\
         flows:\n  - {name: held, src: h1, dst: h0, dscp: 3, frame: 1518B, packets: 10}\n\
         \x20 - {name: free, src: h1, dst: h0, dscp: 1, frame: 1518B, packets: 10}\n\
         events:\n  - {at: 0ns, port: s:Ethernet0, tx: disable, queue: 3}\n  - {at: 20us, port: s:Ethernet0, tx: enable, queue: 3}\n",
    );
    let r = run(&s, "qdisable.json", &[]);
    let held = &r["flows"][0];
    let free = &r["flows"][1];
    assert_eq!((u(&held["rx_packets"]), u(&free["rx_packets"])), (10, 10));
    assert!(u(&free["last_rx_ps"]) < 5_000_000, "{free}");
    assert_eq!(u(&held["last_rx_ps"]), 21_240_400);
    assert_eq!(u(&r["sim_time_ps"]), 21_240_400);
    let q = &r["switches"][0]["ports"][0]["queues"];
    assert_eq!((u(&q[3]["tx_packets"]), u(&q[1]["tx_packets"])), (10, 10));
}

#[test]
fn tx_disable_holds_frames_and_link_down_drops_them() {
    let base =
        "# events\nduration: 100us\nswitches:\n  - name: s\n    ports: {count: 2, mtu: 1518}\n\
                hosts:\n  - {name: h0, attach: s:Ethernet0}\n  - {name: h1, attach: s:Ethernet1}\n\
                flows:\n  - {name: f, src: h1, dst: h0, dscp: 3, pattern: cbr, rate: 10G}\n";
    // Transmitter off from 10 µs to 60 µs: frames wait (lossless), PFC holds the sender
    // once the PG passes its limit (it does not here: 50 µs × 10G = 62.5 KB).
    let s = scenario("txoff.yaml", &format!("{base}events:\n  - {{at: 10us, port: s:Ethernet0, tx: disable}}\n  - {{at: 60us, port: s:Ethernet0, tx: enable}}\n"));
    let r = run(&s, "txoff.json", &[]);
    let f = &r["flows"][0];
    assert_eq!(u(&r["totals"]["drops"]), 0);
    // Everything sent arrives (at most the last frame is still on its way at 100 µs).
    assert!(u(&f["tx_packets"]) - u(&f["rx_packets"]) <= 1);
    assert!(
        u(&f["latency_ps"]["max"]) > 50_000_000,
        "a frame waited the 50 µs out"
    );
    assert!(u(&r["switches"][0]["ports"][0]["queues"][3]["watermark_bytes"]) > 50_000);
    // Link down from 10 µs to 60 µs: what is queued or in flight is lost, then traffic resumes.
    let s = scenario("linkdown.yaml", &format!("{base}events:\n  - {{at: 10us, port: s:Ethernet0, link: down}}\n  - {{at: 60us, port: s:Ethernet0, link: up}}\n"));
    let r = run(&s, "linkdown.json", &[]);
    let f = &r["flows"][0];
    assert!(u(&f["rx_packets"]) < u(&f["tx_packets"]));
    assert!(u(&r["totals"]["drops"]) > 0);
    // 10G CBR of 1518 B frames is one frame per 1.2304 µs: ~8 before 10 µs, ~32 after 60 µs.
    let rx = u(&f["rx_packets"]);
    assert!(
        (38..=42).contains(&rx),
        "traffic resumed after the link came back: {rx}"
    );
    // Lost = sent − received, but for at most one frame still on the wire at the end.
    let lost =
        u(&r["switches"][0]["drops_by_reason"]["port_down"]) + u(&r["engine"]["link_down_drops"]);
    assert!(
        (u(&f["tx_packets"]) - rx).abs_diff(lost) <= 1,
        "lost {lost}"
    );
}

#[test]
fn injected_raw_frames_are_parsed_and_counted() {
    // A runt and an IPv4 frame with IHL 4, injected as hex: each lands on its drop reason.
    let s = scenario(
        "hex.yaml",
        "# inject hex\nduration: 10us\nswitches:\n  - name: s\n    ports: {count: 2}\n\
         events:\n  - {at: 1us, port: s:Ethernet0, inject: {hex: \"ffffffffffff020000000001 0800 4500\"}}\n\
         \x20 - {at: 2us, port: s:Ethernet0, inject: {hex: \"020000000002020000000001080044000064000040004011000000000000000000000000\", len: 128}}\n",
    );
    let r = run(&s, "hex.json", &[]);
    let d = &r["switches"][0]["drops_by_reason"];
    assert_eq!(u(&d["runt"]), 1);
    assert_eq!(u(&d["ipv4_bad_ihl"]), 1);
}

#[test]
fn ecn_marks_ect_frames_instead_of_dropping_them() {
    let r = run(
        &root().join("configs/labs/ecn-marking.yaml"),
        "ecn.json",
        &[],
    );
    assert_eq!(u(&r["totals"]["drops"]), 0);
    let marked = u(&r["totals"]["ecn_marked"]);
    assert!(marked > 0);
    let ce: u64 = r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| u(&f["ce_marked"]))
        .sum();
    // Every mark is seen by a receiver (marking at dequeue: marked frames are on their way).
    assert!(
        ce > 0 && ce <= marked && marked - ce < 10,
        "marked {marked}, received CE {ce}"
    );
    let q = &r["switches"][0]["ports"][0]["queues"][3];
    assert_eq!(u(&q["ecn_marked"]), marked);
    // The senders do not react: the queue sits far above Kmax (400 KB), where every frame
    // is marked; only the climb through the ramp goes partly unmarked.
    assert!(u(&q["watermark_bytes"]) > 2_000_000, "{q}");
    let share = marked as f64 / u(&q["tx_packets"]) as f64;
    assert!(share > 0.95, "{share}");
}

#[test]
fn a_pfc_storm_trips_the_watchdog_which_drops_and_restores() {
    // h1 sends to h0 on priority 3 while "h0" (injected frames) keeps the port paused for
    // 3 ms; the watchdog (detection 1 ms, restoration 1 ms) drops the stuck queue, then
    // restores it 1 ms after the storm ends, and traffic flows again.
    let mut events = String::from("events:\n");
    let mut t = 100u64;
    while t < 3_000 {
        events.push_str(&format!(
            "  - {{at: {t}us, port: s:Ethernet0, inject: {{pfc: {{3: 65535}}}}}}\n"
        ));
        t += 100;
    }
    let s = scenario(
        "storm.yaml",
        &format!(
            "# storm\nduration: 6ms\nswitches:\n  - name: s\n    ports: {{count: 2, mtu: 1518}}\n\
             \x20   qos: {{pfc_enable: [3], pfcwd: {{action: drop, detection_time: 1ms, restoration_time: 1ms, polling_interval: 100us}}}}\n\
             hosts:\n  - {{name: h0, attach: s:Ethernet0}}\n  - {{name: h1, attach: s:Ethernet1}}\n\
             flows:\n  - {{name: f, src: h1, dst: h0, dscp: 3, pattern: cbr, rate: 10G}}\n{events}"
        ),
    );
    let r = run(&s, "storm.json", &[]);
    let p0 = &r["switches"][0]["ports"][0];
    let wd = &p0["pfcwd"][0];
    assert_eq!(u(&wd["queue"]), 3);
    assert_eq!(u(&wd["storms"]), 1);
    assert_eq!(u(&wd["restorations"]), 1);
    assert!(u(&wd["dropped_packets"]) > 0);
    assert_eq!(
        u(&r["switches"][0]["drops_by_reason"]["pfc_watchdog"]),
        u(&wd["dropped_packets"])
    );
    // After restoration (≈ 4 ms) the flow is delivered again: ~2 ms at 10G ≈ 1600 frames.
    let f = &r["flows"][0];
    assert!(u(&f["rx_packets"]) > 1500, "{f}");
}

/// A switch of 256 ports (Tomahawk 5's count) runs: a host on every port, each sending to
/// the next (a ring), at a quarter of the line rate; every flow gets its rate across all
/// 256 ports, and an ACL table bound to the last port sees only its frames.
#[test]
fn a_256_port_switch_runs() {
    let mut text = String::from(
        "name: big\nseed: 1\nduration: 100us\nswitches:\n  - name: s\n    ports: {count: 256, speed: 100G, cable: 2m}\n    forwarding: {mode: l3}\n    acl:\n      last: {type: L3, ports: [Ethernet200, Ethernet255], rules: {count: {priority: 1, in_ports: [Ethernet255]}}}\nhosts:\n",
    );
    for i in 0..256 {
        text += &format!(
            "  - {{name: h{i}, attach: s:Ethernet{i}, ip: 198.18.{}.{}}}\n",
            i / 200,
            i % 200 + 1
        );
    }
    text += "flows:\n";
    for i in 0..256 {
        text += &format!(
            "  - {{name: f{i}, src: h{i}, dst: h{}, frame: 1518B, pattern: cbr, rate: 25G}}\n",
            (i + 1) % 256
        );
    }
    let f = scenario("big-256.yaml", &text);
    let r = run(&f, "big-256.json", &[]);
    assert_eq!(r["switches"][0]["ports"].as_array().unwrap().len(), 256);
    assert_eq!(u(&r["totals"]["drops"]), 0);
    for i in [0, 63, 64, 127, 128, 255] {
        let fl = flow(&r, &format!("f{i}"));
        let gbps = fl["throughput_bps"].as_f64().unwrap() / 1e9;
        assert!((gbps - 25.0).abs() < 1.0, "f{i}: {gbps} Gb/s");
    }
    // The rule counts exactly what arrived on Ethernet255 (f255's frames).
    let acl = &r["switches"][0]["acl"][0];
    let counted = u(&acl["packets"]);
    assert_eq!(
        counted,
        u(&r["switches"][0]["ports"][255]["rx_packets"]),
        "{acl}"
    );
    assert!(counted > 100);
}
