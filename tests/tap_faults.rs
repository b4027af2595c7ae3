//! `lossless tap` losing nothing silently: hosts that go away or set their link down, a
//! switch stopped or frozen mid-run, a host flooding the others, signals and closed pipes,
//! tools run under `nsenter`, and the FDB's aging and flushing. Every test runs with a
//! busy loop on every core and checks that the JSON accounts for every frame read.

mod common;

use common::lab::{must, prerequisites, Lab, SwitchSpec};
use common::ledger::assert_accounted;
use serde_json::Value;
use std::io::BufRead;
use std::time::Duration;

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn tap_port(r: &Value, i: usize) -> &Value {
    &r["tap"]["ports"][i]
}

#[test]
#[ignore = "needs root, /dev/net/tun and iproute2, iputils-ping, iperf3, ethtool, util-linux (scripts/test)"]
fn deleting_one_namespace_leaves_the_others_served_and_sigterm_stops_cleanly() {
    let _serial = prerequisites();
    let mut lab = Lab::with_hosts("d", 3, "1G", "2us");
    let flood = lab.spawn(
        0,
        &["ping", "-c", "400", "-i", "0.005", "-W", "1", &Lab::ip(1)],
    );
    std::thread::sleep(Duration::from_millis(300));
    // Delete host 2's namespace (and with it its TAP) while traffic flows.
    lab.delete_host(2);
    lab.wait(flood, Duration::from_secs(20));
    assert_eq!(
        lab.ping(0, 1, 50, "0.01"),
        0.0,
        "the others are still served"
    );
    let r = lab.stop_switch();
    assert_eq!(r["tap"]["ports_gone"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(tap_port(&r, 2)["state"], "gone");
    assert_eq!(r["switches"][0]["ports"][2]["link_up"], false);
    assert_accounted(&r);
}

#[test]
#[ignore = "needs root, /dev/net/tun and iproute2, iputils-ping, iperf3, ethtool, util-linux (scripts/test)"]
fn a_downed_link_is_counted_probed_and_served_again_and_its_fdb_entries_flushed() {
    let _serial = prerequisites();
    let mut lab = Lab::with_hosts("l", 2, "1G", "2us");
    assert_eq!(lab.ping(0, 1, 3, "0.05"), 0.0);
    lab.set_host_link(1, "down");
    assert_eq!(lab.ping(0, 1, 5, "0.05"), 100.0);
    lab.set_host_link(1, "up");
    // The engine asks the host's side every 100 ms whether the link is up again.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(lab.ping(0, 1, 20, "0.05"), 0.0, "served again");
    let r = lab.stop_switch();
    let t1 = tap_port(&r, 1);
    assert!(u(&t1["write_errors"]) > 0, "{t1}");
    assert!(u(&r["tap"]["link_changes"]) >= 2, "{}", r["tap"]);
    assert_eq!(t1["state"], "up");
    // Host 1's MAC, learned on port 1, was flushed when the link went down.
    assert!(
        u(&r["switches"][0]["fdb"]["flushed"]) >= 1,
        "{}",
        r["switches"][0]["fdb"]
    );
    assert_accounted(&r);
}

#[test]
#[ignore = "needs root, /dev/net/tun and iproute2, iputils-ping, iperf3, ethtool, util-linux (scripts/test)"]
fn a_tap_deleted_while_its_link_is_down_stays_gone() {
    let _serial = prerequisites();
    let mut lab = Lab::with_hosts("z", 3, "1G", "2us");
    assert_eq!(lab.ping(0, 1, 2, "0.05"), 0.0);
    lab.set_host_link(1, "down");
    lab.ping(0, 1, 3, "0.05");
    lab.delete_host(1);
    // Several probe periods: the engine finds the TAP gone, not "up again".
    std::thread::sleep(Duration::from_millis(500));
    lab.ping(0, 1, 5, "0.05");
    assert_eq!(lab.ping(0, 2, 10, "0.02"), 0.0);
    let r = lab.stop_switch();
    assert_eq!(tap_port(&r, 1)["state"], "gone", "{}", r["tap"]);
    assert_eq!(r["switches"][0]["ports"][1]["link_up"], false);
    // The first failed write marked the link down (and flushed host 1's MAC); nothing was
    // written into the dead TAP after that, though pings kept coming (flooded elsewhere).
    assert!(u(&tap_port(&r, 1)["write_errors"]) <= 2, "{}", r["tap"]);
    assert_accounted(&r);
}

#[test]
#[ignore = "needs root, /dev/net/tun and iproute2, iputils-ping, iperf3, ethtool, util-linux (scripts/test)"]
fn stopping_mid_run_accounts_every_frame_read_and_lets_the_writers_finish() {
    let _serial = prerequisites();
    // 100M ports: two 1G senders keep the queues full when the switch is told to stop.
    let spec = SwitchSpec::new(3, "100M");
    let mut lab = Lab::with("x", true, &spec, &[]);
    let gens: Vec<usize> = (1..3)
        .map(|i| lab.gen(i, &["--dscp", "0", "--rate", "1G", "--duration", "5s"]))
        .collect();
    std::thread::sleep(Duration::from_millis(800));
    let r = lab.stop_switch();
    for k in gens {
        lab.wait(k, Duration::from_secs(20));
    }
    assert!(u(&r["tap"]["read_frames"]) > 10_000, "{}", r["tap"]);
    assert_accounted(&r);
}

#[test]
#[ignore = "needs root, /dev/net/tun and iproute2, iputils-ping, iperf3, ethtool, util-linux (scripts/test)"]
fn frames_lost_in_a_taps_kernel_ring_are_counted_from_the_kernels_counters() {
    let _serial = prerequisites();
    let mut lab = Lab::with_hosts("k", 2, "1G", "2us");
    let g = lab.gen(1, &["--dscp", "0", "--rate", "1G", "--duration", "1s"]);
    std::thread::sleep(Duration::from_millis(200));
    // Freeze the switch for 300 ms: 24,000 frames at 1G meet a 1024-frame ring.
    lab.signal_switch("STOP");
    std::thread::sleep(Duration::from_millis(300));
    lab.signal_switch("CONT");
    let s: Value = serde_json::from_str(&lab.wait(g, Duration::from_secs(20))).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let r = lab.stop_switch();
    let t1 = tap_port(&r, 1);
    let lost = u(&t1["kernel"]["host_tx_dropped"]);
    assert!(lost > 10_000, "{t1}");
    assert_eq!(u(&r["tap"]["kernel_ring_drops"]), lost);
    // Every frame gen sent was read by the switch or lost in the ring.
    assert_eq!(u(&s["frames"]), u(&t1["read_frames"]) + lost, "{s} {t1}");
    // The stall detector saw the freeze: a gap between turns of about 300 ms (a wait is
    // at most 50 ms), in the histogram's 100 ms–1 s bucket or above.
    let turns = &r["tap"]["turns"];
    assert_eq!(u(&turns["turns"]), u(&r["events"]), "{turns}");
    assert!(u(&turns["gap_max_us"]) >= 250_000, "{turns}");
    let long: u64 = turns["gap_histogram"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["le_us"].as_u64().is_none_or(|le| le >= 1_000_000))
        .map(|b| u(&b["turns"]))
        .sum();
    assert!(long >= 1, "{turns}");
    assert_eq!(
        u(&turns["stalls"]) > 0,
        u(&turns["overslept_max_us"]) >= 1_000,
        "{turns}"
    );
    assert_accounted(&r);
}

#[test]
#[ignore = "needs root, /dev/net/tun and iproute2, iputils-ping, iperf3, ethtool, util-linux (scripts/test)"]
fn a_host_flooding_its_port_does_not_hold_up_the_others() {
    let _serial = prerequisites();
    let spec = SwitchSpec::new(4, "100G");
    let mut lab = Lab::with("o", true, &spec, &[]);
    assert_eq!(lab.ping(2, 3, 2, "0.05"), 0.0);
    // Host 1 sends 64-byte frames as fast as it can toward the sink behind port 0.
    let flood = lab.gen(
        1,
        &[
            "--dscp",
            "0",
            "--rate",
            "100G",
            "--link-speed",
            "100G",
            "--frame",
            "64",
            "--duration",
            "3s",
        ],
    );
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        lab.ping(2, 3, 100, "0.01"),
        0.0,
        "hosts 2 and 3 are served meanwhile"
    );
    lab.wait(flood, Duration::from_secs(20));
    let r = lab.stop_switch();
    assert!(u(&tap_port(&r, 1)["read_frames"]) > 50_000, "{}", r["tap"]);
    // A round reads at most 64 KiB of a port (then the frame that reaches it): the read
    // queue the headroom of a TAP port counts on.
    let deepest = u(&r["tap"]["max_read_queue_bytes"]);
    assert!(deepest > 0 && deepest < 65_536 + 1_514, "{}", r["tap"]);
    assert_accounted(&r);
}

#[test]
#[ignore = "needs root, /dev/net/tun and iproute2, iputils-ping, iperf3, ethtool, util-linux (scripts/test)"]
fn gen_and_send_pfc_find_their_interface_under_nsenter_and_reject_bad_input() {
    let _serial = prerequisites();
    let mut lab = Lab::with_hosts("n", 2, "1G", "2us");
    // nsenter switches the network namespace but not the mounts: /sys still shows the
    // namespace it was mounted in, where this TAP is not.
    let netns = format!("--net=/var/run/netns/{}", lab.ns(1));
    let (tap1, dst) = (
        lab.tap(1),
        format!("{}/{}", common::lab::SINK_MAC, Lab::ip(0)),
    );
    let bin = env!("CARGO_BIN_EXE_lossless");
    let o = common::lab::sh(&[
        "nsenter",
        &netns,
        bin,
        "gen",
        "--iface",
        &tap1,
        "--dst",
        &dst,
        "--rate",
        "10M",
        "--duration",
        "200ms",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(u(&s["frames"]) > 100, "{s}");
    let o = common::lab::sh(&[
        "nsenter", &netns, bin, "send-pfc", "--iface", &tap1, "--prio", "3",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for (iface, frame, expect) in [
        ("../x", "1518", "not an interface name"),
        (tap1.as_str(), "20000", "frames on"),
        (tap1.as_str(), "63", "64–1518 bytes"),
    ] {
        let o = common::lab::sh(&[
            "nsenter",
            &netns,
            bin,
            "gen",
            "--iface",
            iface,
            "--dst",
            &dst,
            "--frame",
            frame,
            "--duration",
            "100ms",
        ]);
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && e.contains(expect),
            "{iface} {frame}: {e}"
        );
    }
    let r = lab.stop_switch();
    assert!(u(&r["switches"][0]["ports"][1]["pfc"]["rx_xoff"][3]) >= 1);
    assert_accounted(&r);
}

#[test]
#[ignore = "needs root, /dev/net/tun and iproute2, iputils-ping, iperf3, ethtool, util-linux (scripts/test)"]
fn a_closed_stdout_sighup_and_ctrl_c_all_end_with_the_report() {
    let _serial = prerequisites();
    let spec = SwitchSpec::new(2, "1G");
    // `--stats 100ms | head -1`: the switch loses its stdout, keeps serving, and still
    // writes its report when stopped, here by SIGHUP.
    let mut lab = Lab::with("h", true, &spec, &["--stats", "100ms"]);
    let out = lab.switch.as_mut().unwrap().stdout.take().unwrap();
    let mut out = std::io::BufReader::new(out);
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert!(first.starts_with("lossless tap:"), "{first}");
    // The first stats line, with the stall detector's longest gap so far.
    let mut stats = String::new();
    out.read_line(&mut stats).unwrap();
    assert!(stats.starts_with("t=0."), "{stats}");
    assert!(stats.contains("| longest turn gap "), "{stats}");
    assert!(stats.contains(" ms, stalls "), "{stats}");
    drop(out);
    // (the pipe is closed)
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(lab.ping(0, 1, 5, "0.02"), 0.0);
    let r = lab.stop_switch_with("HUP");
    assert!(u(&r["tap"]["read_frames"]) >= 5);
    assert_accounted(&r);
    drop(lab);

    // gen stopped by SIGINT still prints its summary.
    let mut lab = Lab::with_hosts("i", 2, "1G", "2us");
    let g = lab.gen(1, &["--dscp", "0", "--rate", "100M", "--duration", "30s"]);
    std::thread::sleep(Duration::from_millis(500));
    must(&["kill", "-INT", &lab.proc(g).id().to_string()]);
    let s: Value = serde_json::from_str(&lab.wait(g, Duration::from_secs(10))).unwrap();
    assert_eq!(s["stopped_early"], true, "{s}");
    assert!(u(&s["frames"]) > 1000, "{s}");
    lab.stop_switch();

    // A zero stats period is refused.
    let o = common::lab::sh(&[
        env!("CARGO_BIN_EXE_lossless"),
        "tap",
        "x.yaml",
        "--stats",
        "0",
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("a period needs to be above 0"));
}

#[test]
#[ignore = "needs root, /dev/net/tun and iproute2, iputils-ping, iperf3, ethtool, util-linux (scripts/test)"]
fn learned_fdb_entries_age_out() {
    let _serial = prerequisites();
    let spec = SwitchSpec {
        forwarding: ", fdb_aging: 1s",
        ..SwitchSpec::new(2, "1G")
    };
    let mut lab = Lab::with("a", true, &spec, &[]);
    assert_eq!(lab.ping(0, 1, 3, "0.05"), 0.0);
    std::thread::sleep(Duration::from_millis(1_500));
    let r = lab.stop_switch();
    let fdb = &r["switches"][0]["fdb"];
    assert_eq!(u(&fdb["learned_entries"]), 0, "both hosts aged out: {fdb}");
    assert_accounted(&r);
}
