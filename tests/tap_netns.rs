//! `lossless tap` between real hosts: network namespaces joined by the switch's TAP devices,
//! forwarding and PFC. Each test but the throughput measurement runs with a busy loop on
//! every core (see `common/lab.rs` for the rules every lab follows).

mod common;

use common::lab::{prerequisites, Lab, SwitchSpec};
use common::ledger::assert_accounted;
use serde_json::Value;
use std::time::Duration;

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn tx_xoff(r: &Value) -> u64 {
    r["switches"][0]["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| u(&p["pfc"]["tx_xoff"][3]))
        .sum()
}

#[test]
#[ignore = "needs root, /dev/net/tun and iproute2, iputils-ping, iperf3, ethtool, util-linux (scripts/test)"]
fn hundred_pings_through_the_tap_switch_lose_nothing() {
    let _serial = prerequisites();
    let mut lab = Lab::with_hosts("p", 2, "1G", "2us");
    assert_eq!(lab.ping(0, 1, 100, "0.01"), 0.0);
    let r = lab.stop_switch();
    assert_eq!(r["totals"]["lossless_drops"], 0);
    assert!(u(&r["switches"][0]["ports"][0]["rx_packets"]) >= 100);
    assert_accounted(&r);
}

#[test]
#[ignore = "needs root, /dev/net/tun and iproute2, iputils-ping, iperf3, ethtool, util-linux (scripts/test)"]
fn iperf3_tcp_through_1g_shaped_ports_runs_near_1g() {
    let _serial = prerequisites();
    let mut lab = Lab::with_hosts("s", 2, "1G", "2us");
    let gbps = lab.iperf3_tcp(0, 1, 5201, 3, &[]);
    eprintln!("iperf3 TCP through 1G-shaped ports, CPU hog on every core: {gbps:.3} Gbit/s");
    // A 1G-shaped port carries TCP near its rate: 0.85–0.95 on this 2-core VM under the
    // hog most runs, 0.84 seen in CI on a clean clone (the wall-clock switch falling
    // behind now and then costs TCP a retransmission). The bound is one a working
    // path holds on a busy machine; `lossless bench tap` measures the speed.
    assert!((0.7..=1.0).contains(&gbps), "{gbps} Gbit/s");
    assert_accounted(&lab.stop_switch());
}

#[test]
#[ignore = "needs root, /dev/net/tun and iproute2, iputils-ping, iperf3, ethtool, util-linux (scripts/test)"]
fn gen_senders_share_a_1g_port_losslessly_on_a_busy_machine() {
    let _serial = prerequisites();
    let mut lab = Lab::with_hosts("g", 3, "1G", "2us");
    // Let the switch learn everyone (no flooding when the load starts): one reply means
    // it has seen both ends. Not every ping need come back: under the hog, CI once lost
    // the first of three (its ARP request went unanswered for ping's 1 s wait, which ARP
    // retries only after); what this test checks is the load that follows.
    for i in 1..3 {
        assert!(lab.ping(0, i, 3, "0.05") < 100.0, "no reply from host {i}");
    }
    let gens: Vec<usize> = (1..3)
        .map(|i| {
            lab.gen(
                i,
                &[
                    "--dscp",
                    "3",
                    "--rate",
                    "1G",
                    "--link-speed",
                    "1G",
                    "--duration",
                    "3s",
                ],
            )
        })
        .collect();
    let summaries: Vec<Value> = gens
        .into_iter()
        .map(|k| serde_json::from_str(&lab.wait(k, Duration::from_secs(20))).unwrap())
        .collect();
    let r = lab.stop_switch();
    assert!(tx_xoff(&r) > 0, "the switch sent XOFF");
    assert_eq!(r["totals"]["lossless_drops"], 0, "{r}");
    // Before the switch, the TAPs' rings: on an idle machine they drop nothing. Under the
    // hog on this 2-core VM, about one run in three loses 1–5 % of the senders' frames
    // there (3,159, 7,122 and 11,556 of ~245,000 seen, with reader threads; the pipeline
    // thread now reads the rings itself): the wall-clock switch stops for tens to 150 ms, which no headroom
    // of the simulated switch covers (it dropped nothing, asserted above). The losses track
    // the VM's vCPU steal (the 11,556, ~140 ms of the offered load, came in a run with 200 ms
    // of steal on one core). So the bound is a fraction, not zero: a switch that stopped
    // reading a port would lose far more.
    let read = u(&r["tap"]["read_frames"]);
    let ring_drops = u(&r["tap"]["kernel_ring_drops"]);
    eprintln!(
        "TAP ring drops: {ring_drops} of {} frames sent",
        read + ring_drops
    );
    assert!(ring_drops * 8 <= read, "{}", r["tap"]);
    for s in &summaries {
        // PFC frames captured on the sender's side, and half of the 1G egress each.
        assert!(u(&s["pfc_rx_frames"]) > 0, "{s}");
        let line_rate = s["line_rate_bps"].as_f64().unwrap() / 1e9;
        eprintln!(
            "gen on {}: {line_rate:.3} Gbit/s (line rate), paused {} ps",
            s["iface"], s["paused_ps"][3]
        );
        assert!((line_rate - 0.5).abs() <= 0.05, "{line_rate} Gbit/s: {s}");
    }
    assert_accounted(&r);
}

#[test]
#[ignore = "needs root, /dev/net/tun and iproute2, iputils-ping, iperf3, ethtool, util-linux (scripts/test)"]
fn iperf3_udp_senders_ignore_pfc_and_the_lossless_priority_drops() {
    let _serial = prerequisites();
    // 100M ports: two iperf3 -u senders congest the egress even when the hog slows them.
    let spec = SwitchSpec::new(3, "100M");
    let mut lab = Lab::with("u", true, &spec, &[]);
    let servers: Vec<usize> = (1..3)
        .map(|i| {
            lab.spawn(
                0,
                &[
                    "iperf3",
                    "-s",
                    "-1",
                    "-B",
                    &Lab::ip(0),
                    "-p",
                    &(5300 + i).to_string(),
                ],
            )
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let clients: Vec<usize> = (1..3)
        .map(|i| {
            lab.spawn(
                i,
                &[
                    "iperf3",
                    "-u",
                    "-b",
                    "200M",
                    "-l",
                    "1472",
                    "--tos",
                    "0x0c",
                    "-t",
                    "2",
                    "-c",
                    &Lab::ip(0),
                    "-p",
                    &(5300 + i).to_string(),
                ],
            )
        })
        .collect();
    for k in clients.into_iter().chain(servers) {
        lab.wait(k, Duration::from_secs(20));
    }
    let r = lab.stop_switch();
    assert!(tx_xoff(&r) > 0, "PFC frames are sent: {r}");
    assert!(
        u(&r["totals"]["lossless_drops"]) > 0,
        "Linux ignores PFC: lossless drops follow"
    );
    assert_accounted(&r);
}

#[test]
#[ignore = "needs root, /dev/net/tun and iproute2, iputils-ping, iperf3, ethtool, util-linux (scripts/test)"]
fn injected_pfc_stops_priority_3_toward_a_host_and_xon_resumes_it() {
    let _serial = prerequisites();
    let mut lab = Lab::with_hosts("f", 3, "1G", "2us");
    for i in 1..3 {
        lab.ping(0, i, 2, "0.05");
    }
    let bin = env!("CARGO_BIN_EXE_lossless");
    let tap0 = lab.tap(0);
    // Host 0 pauses priority 3 for 2 s (65535 quanta at 1G = 3.4 ms, refreshed every 1 ms).
    let storm = lab.spawn(
        0,
        &[
            bin,
            "send-pfc",
            "--iface",
            &tap0,
            "--prio",
            "3",
            "--quanta",
            "65535",
            "--count",
            "2000",
            "--interval",
            "1ms",
        ],
    );
    std::thread::sleep(Duration::from_millis(100));
    let g3 = lab.gen(1, &["--dscp", "3", "--rate", "200M", "--duration", "1s"]);
    let g0 = lab.gen(2, &["--dscp", "0", "--rate", "200M", "--duration", "1s"]);
    let s3: Value = serde_json::from_str(&lab.wait(g3, Duration::from_secs(20))).unwrap();
    let s0: Value = serde_json::from_str(&lab.wait(g0, Duration::from_secs(20))).unwrap();
    // Priority 3 toward host 0 stopped: its sender was held back by the switch's XOFF.
    assert!(u(&s3["pfc_rx_frames"]) > 0);
    let paused3 = u(&s3["paused_ps"][3]) as f64 / 1e12;
    assert!(paused3 > 0.5, "priority-3 sender paused {paused3} s of 1 s");
    // Priority 0 (DSCP 0 → TC 1) kept flowing at its rate.
    let rate0 = s0["line_rate_bps"].as_f64().unwrap() / 1e9;
    assert!((rate0 - 0.2).abs() < 0.03, "{rate0}");
    lab.wait(storm, Duration::from_secs(10));
    // XON: priority 3 resumes and what waited is delivered.
    let xon = lab.exec(
        0,
        &[
            bin, "send-pfc", "--iface", &tap0, "--prio", "3", "--quanta", "0",
        ],
    );
    assert!(xon.status.success());
    std::thread::sleep(Duration::from_millis(300));
    let r = lab.stop_switch();
    let p0 = &r["switches"][0]["ports"][0];
    assert!(u(&p0["pfc"]["rx_xoff"][3]) >= 1000);
    assert!(u(&p0["pfc"]["rx_xon"][3]) >= 1);
    // Every priority-3 frame that reached the switch was delivered after the XON. Frames the
    // kernel dropped in the sender's TAP ring never reached it: on an idle machine there are
    // none; under the hog on this 2-core VM a run now and then loses some there (597 of
    // 2,538 seen once in CI) while the wall-clock switch falls behind. They are counted
    // (`assert_accounted` checks the ledger), bounded here, and never the switch's drops.
    let ring_drops = u(&r["tap"]["ports"][1]["kernel"]["host_tx_dropped"]);
    eprintln!("priority-3 frames lost in the sender's TAP ring: {ring_drops}");
    assert!(ring_drops * 3 <= u(&s3["frames"]), "{}", r["tap"]);
    assert_eq!(
        u(&p0["queues"][3]["tx_packets"]) + ring_drops,
        u(&s3["frames"]),
        "every priority-3 frame the switch received was delivered after the XON: {}",
        r["tap"]
    );
    assert_eq!(r["totals"]["lossless_drops"], 0);
    assert_accounted(&r);
}

/// `lossless bench tap`: the unshaped switch next to a plain TAP copy loop and a Linux
/// bridge, in one run. Prints the figures; asserts only that each path carried TCP, the
/// flood and pings, that the ratios are the quotients, and that nothing is left behind.
#[test]
#[ignore = "needs root, /dev/net/tun and iproute2, iputils-ping, iperf3, ethtool, util-linux (scripts/test)"]
fn bench_tap_measures_the_switch_next_to_a_copy_loop_and_a_bridge() {
    let _serial = prerequisites();
    let out = std::env::temp_dir().join(format!("bench-tap-{}.json", std::process::id()));
    let o = common::lossless(&[
        "bench",
        "tap",
        "--seconds",
        "2",
        "--json",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    eprintln!("{}", String::from_utf8_lossy(&o.stdout));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let _ = std::fs::remove_file(&out);
    let paths = r["paths"].as_array().unwrap();
    let names: Vec<&str> = paths.iter().map(|p| p["path"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "lossless tap",
            "lossless tap (veth)",
            "copy loop",
            "linux bridge"
        ]
    );
    for p in paths {
        for k in ["tcp_gbps", "flood_mpps", "ping_avg_us", "ping_min_us"] {
            assert!(p[k].as_f64().unwrap() > 0.0, "{k}: {p}");
        }
        // With the hosts' offloads on, every path carries TCP (a veth port too: it takes
        // the hosts' super-frames and cuts them).
        assert!(p["tcp_offloads_gbps"].as_f64().unwrap() > 0.0, "{p}");
    }
    let f = |v: &Value| v.as_f64().unwrap();
    let (sw, copy) = (&paths[0], &paths[2]);
    assert!((f(&r["vs_copy_loop"][0]) - f(&sw["tcp_gbps"]) / f(&copy["tcp_gbps"])).abs() < 1e-9);
    let listed = String::from_utf8_lossy(
        &std::process::Command::new("ip")
            .args(["netns", "list"])
            .output()
            .unwrap()
            .stdout,
    )
    .to_string();
    assert!(
        !listed.contains("lbs")
            && !listed.contains("lbv")
            && !listed.contains("lbc")
            && !listed.contains("lbb"),
        "{listed}"
    );
}

#[test]
#[ignore = "needs root, /dev/net/tun and iproute2, iputils-ping, iperf3, ethtool, util-linux (scripts/test)"]
fn tcp_with_segmentation_offload_on_is_counted_in_mtu_segments() {
    let _serial = prerequisites();
    common::offload::tcp_super_frames_are_counted_in_mtu_segments("so", false);
}
