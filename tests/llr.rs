//! Link-level retry through `lossless run` and its JSON report: the SONiC scale-up test
//! standard's LLR cases that need a network (LLR-02 and 04 end to end, 07 line rate over
//! 500 m, 09 the frame-size sweep, 10 LLR next to plain links), the frame errors a plain
//! link now counts as `rx_bad_fcs`, and the config errors. The cases about the link's
//! own state machine (LLR-01…06, 08) are in pipeline/tests/llr.rs, with the property
//! test. Expectations are derived first from docs/physics.md, "Link-level retry".

mod common;
use common::{expect_config_errors, f, flow, lossless, port, run, scenario, u};

/// One switch of `ports` 100G ports with `cable`, LLR as `llr` (a YAML line or empty),
/// `extra` appended.
fn one_switch(name: &str, ports: usize, cable: &str, llr: &str, extra: &str) -> String {
    format!(
        "name: {name}\nseed: 1\nswitches:\n  - name: s\n    ports: {{count: {ports}, speed: 100G, cable: {cable}}}\n    qos: {{trust: dscp, dscp_to_tc: {{default: 1, 3: 3, 4: 4}}, pfc_enable: [3, 4]}}\n{llr}{extra}"
    )
}

fn hosts(n: usize, rate: &str) -> String {
    let mut s = String::from("hosts:\n");
    for i in 0..n {
        s += &format!("  - {{name: h{i}, attach: s:Ethernet{i}, frame_error_rate: {rate}}}\n");
    }
    s
}

/// LLR-02 end to end: `drop: 1` loses h1's next frame whole. The switch's receiver sees
/// the gap at the frame after it, sends one NACK, h1 replays from the lost frame, and all
/// 100 frames reach h0; without LLR the flow is one short.
#[test]
fn llr_02_a_frame_lost_on_the_cable_is_replayed() {
    let body = format!(
        "{}flows:\n  - {{name: a, src: h1, dst: h0, protocol: rocev2, dscp: 3, frame: 1000B, packets: 100}}\nevents:\n  - {{at: 2us, port: h1, drop: 1}}\n",
        hosts(2, "0")
    );
    let on = run(
        &scenario(
            "llr02-on.yaml",
            &one_switch("llr02", 2, "2m", "    llr: {}\n", &body),
        ),
        "llr02-on.json",
        &[],
    );
    assert_eq!(u(&flow(&on, "a")["rx_packets"]), 100);
    let l = &port(&on, 0, "Ethernet1")["llr"];
    assert_eq!(u(&l["tx_nack_ctl_os"]), 1);
    assert_eq!(u(&l["rx_replay"]), 1);
    assert!(u(&l["rx_missing_seq"]) >= 1);
    assert_eq!(u(&l["rx_expected_seq_good"]), 100);
    assert_eq!(l["tx_state"], "advance");
    assert_eq!(on["totals"]["injected_drops"], 1);
    let off = run(
        &scenario("llr02-off.yaml", &one_switch("llr02", 2, "2m", "", &body)),
        "llr02-off.json",
        &[],
    );
    assert_eq!(u(&flow(&off, "a")["rx_packets"]), 99);
    assert!(port(&off, 0, "Ethernet1").get("llr").is_none());
}

/// LLR-04 end to end, and a plain link's FCS count: h1's cable corrupts 1 % of frames each
/// way. Every corrupted frame arrives and fails the FCS check where it lands, so the
/// ports' and hosts' `rx_bad_fcs` add up to the injected count. With LLR every data frame
/// still arrives once (2,000 of 2,000) and the switch's LLR counters agree with its
/// `rx_bad_fcs`; without it the flow loses what was corrupted toward the switch.
#[test]
fn llr_04_corrupted_frames_are_counted_and_replayed() {
    let body = "hosts:\n  - {name: h0, attach: s:Ethernet0}\n  - {name: h1, attach: s:Ethernet1, frame_error_rate: 0.01}\nflows:\n  - {name: a, src: h1, dst: h0, protocol: rocev2, dscp: 3, frame: 1000B, packets: 2000}\n";
    for llr in ["    llr: {}\n", ""] {
        let r = run(
            &scenario("llr04.yaml", &one_switch("llr04", 2, "2m", llr, body)),
            "llr04.json",
            &[],
        );
        let injected = u(&r["totals"]["injected_drops"]);
        assert!(injected > 5, "1 % of ~2,000 frames");
        let sw_bad: u64 = r["switches"][0]["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| u(&p["rx_bad_fcs"]))
            .sum();
        let host_bad: u64 = r["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| u(&h["rx_bad_fcs"]))
            .sum();
        assert_eq!(
            sw_bad + host_bad,
            injected,
            "every corrupted frame is counted once"
        );
        let rx = u(&flow(&r, "a")["rx_packets"]);
        let p1 = port(&r, 0, "Ethernet1");
        if llr.is_empty() {
            assert_eq!(rx, 2000 - u(&p1["rx_bad_fcs"]));
            assert!(rx < 2000);
        } else {
            assert_eq!(rx, 2000, "LLR loses nothing");
            let l = &p1["llr"];
            assert_eq!(u(&l["rx_bad"]), u(&p1["rx_bad_fcs"]));
            assert!(u(&l["rx_expected_seq_bad"]) >= 1);
            assert_eq!(u(&l["rx_expected_seq_good"]), 2000);
            assert_eq!(u(&l["tx_flush"]), 0);
            assert_eq!(u(&port(&r, 0, "Ethernet0")["llr"]["tx_ok"]), 2000);
        }
    }
}

/// LLR-07 (and CBFC-12's twin): over 500 m (2.5 µs each way) a stream of MTU frames and
/// then one of 64-byte frames keep line rate with the replay buffer `lossless` sizes by
/// default (what `check` says line rate needs), losing nothing; with a quarter of it the
/// sender idles waiting for ACKs and the rate falls to about a quarter.
#[test]
fn llr_07_the_default_replay_buffer_keeps_line_rate_over_500m() {
    for (frame, tag) in [("9216B", "mtu"), ("64B", "min")] {
        let body = format!(
            "duration: 200us\nmeasure: {{from: 100us}}\n{}flows:\n  - {{name: a, src: h1, dst: h0, protocol: rocev2, dscp: 3, frame: {frame}, pattern: greedy}}\n",
            hosts(2, "0")
        );
        let rate = |llr: &str, n: &str| {
            let r = run(
                &scenario(
                    &format!("llr07-{tag}-{n}.yaml"),
                    &one_switch("llr07", 2, "500m", llr, &body),
                ),
                &format!("llr07-{tag}-{n}.json"),
                &[],
            );
            assert_eq!(r["totals"]["drops"], 0);
            f(&flow(&r, "a")["throughput_bps"])
        };
        let plain = rate("", "plain");
        let with = rate("    llr: {}\n", "llr");
        assert!(with >= 0.995 * plain, "{frame}: {with} with LLR vs {plain}");
        // The need at 500 m with MTU frames of 9,216 bytes: 2 × 737.6 ns (two MTU frames) +
        // 2 × 2.5 µs + 163.84 ns (2,048 B) + 0.64 ns = 6.64 µs → 83,004 B + 9,216.
        if tag == "mtu" {
            let quarter = rate("    llr: {max_outstanding_bytes: 23KB}\n", "quarter");
            assert!(
                quarter < 0.35 * plain && quarter > 0.2 * plain,
                "{quarter} vs {plain}"
            );
        }
    }
}

/// LLR-09: the standard's frame-size sweep (64…9216 ± 1) over a cable corrupting 0.5 % of
/// frames: every frame of every size arrives once, no FLUSH.
#[test]
fn llr_09_every_frame_size_survives_errors() {
    let mut sizes = vec![65u64];
    for s in [128u64, 256, 512, 1518, 2048, 4096] {
        sizes.extend([s - 1, s, s + 1]);
    }
    sizes.extend([9215, 64, 9216]);
    for len in sizes {
        let body = format!(
            "{}flows:\n  - {{name: a, src: h1, dst: h0, protocol: rocev2, dscp: 3, frame: {len}B, packets: 300}}\n",
            hosts(2, "0.005")
        );
        let r = run(
            &scenario(
                &format!("llr09-{len}.yaml"),
                &one_switch("llr09", 2, "2m", "    llr: {}\n", &body),
            ),
            &format!("llr09-{len}.json"),
            &[],
        );
        assert_eq!(u(&flow(&r, "a")["rx_packets"]), 300, "{len} B");
        for p in ["Ethernet0", "Ethernet1"] {
            assert_eq!(u(&port(&r, 0, p)["llr"]["tx_flush"]), 0, "{len} B");
        }
    }
}

/// LLR-10: LLR on two ports, plain links on two others, every cable corrupting 0.2 %. The
/// flow over LLR links loses nothing; the flow over plain links loses about 0.2 % per
/// hop; their median latencies differ by the replays alone (a few per thousand frames),
/// so they are within 1 %.
#[test]
fn llr_10_llr_and_plain_links_side_by_side() {
    let body = format!(
        "{}flows:\n  - {{name: llr, src: h1, dst: h0, protocol: rocev2, dscp: 3, frame: 1000B, packets: 5000, pattern: cbr, rate: 50G}}\n  - {{name: plain, src: h3, dst: h2, protocol: rocev2, dscp: 3, frame: 1000B, packets: 5000, pattern: cbr, rate: 50G}}\n",
        hosts(4, "0.002")
    );
    let r = run(
        &scenario(
            "llr10.yaml",
            &one_switch(
                "llr10",
                4,
                "2m",
                "    llr: {ports: [Ethernet0, Ethernet1]}\n",
                &body,
            ),
        ),
        "llr10.json",
        &[],
    );
    assert_eq!(u(&flow(&r, "llr")["rx_packets"]), 5000);
    let plain = u(&flow(&r, "plain")["rx_packets"]);
    // 2 hops × 0.2 % of 5,000: about 20 lost.
    assert!((4960..5000).contains(&plain), "{plain}");
    assert!(port(&r, 0, "Ethernet2").get("llr").is_none());
    let p50 = |n: &str| f(&flow(&r, n)["latency_ps"]["p50"]);
    assert!(
        (p50("llr") - p50("plain")).abs() < 0.01 * p50("plain"),
        "{} vs {}",
        p50("llr"),
        p50("plain")
    );
}

/// One switch, LLR on, 500 frames from h1 to h0 (the scenario the reporting tests read).
fn llr_show_scenario() -> std::path::PathBuf {
    let body = format!(
        "{}flows:\n  - {{name: a, src: h1, dst: h0, protocol: rocev2, dscp: 3, frame: 1000B, packets: 500}}\n",
        hosts(2, "0.01")
    );
    scenario(
        "llr-show.yaml",
        &one_switch("llrshow", 2, "2m", "    llr: {}\n", &body),
    )
}

/// The JSON report of running `file` to the end.
fn report_of(file: &std::path::Path) -> lossless::report::model::Report {
    use lossless::sim::{RunOptions, Sim};
    let l = lossless::config::load(file).unwrap();
    let mut sim = Sim::new(l.scenario, &RunOptions::default()).unwrap();
    sim.run(|_| lossless::sim::Go::On).unwrap();
    lossless::report::json::report(&sim.outcome())
}

/// The LLR families and `rx_bad_fcs` are a valid Prometheus exposition, by Prometheus's
/// own linter.
#[test]
#[ignore = "needs promtool (Debian package prometheus; scripts/test)"]
fn the_llr_exposition_passes_promtool() {
    let r = report_of(&llr_show_scenario());
    common::needs::promtool_check(&lossless::report::prometheus::render(&r));
}

/// The report's text has the LLR table, Prometheus the `lossless_llr_*` families and the
/// ports' `rx_bad_fcs`, `lossless show llr` every counter, and
/// `check` the replay buffer line rate needs.
#[test]
fn llr_shows_in_the_text_the_metrics_and_check() {
    let file = llr_show_scenario();
    let o = lossless(&["run", file.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("LLR ports (SAI_PORT_STAT_LLR_*"), "{text}");
    let r = report_of(&file);
    let m = lossless::report::prometheus::render(&r);
    for fam in [
        "lossless_llr_tx_ok_total{switch=\"s\",port=\"Ethernet0\"} 500",
        "# TYPE lossless_llr_rx_replay_total counter",
        "(SAI_PORT_STAT_LLR_RX_EXPECTED_SEQ_BAD)",
        "# TYPE lossless_port_rx_bad_fcs_total counter",
    ] {
        assert!(m.contains(fam), "{fam} not in the exposition");
    }
    let table = lossless::report::text::table(&r, lossless::report::text::Table::Llr);
    assert!(
        table.contains("rx_expected_seq_bad") && table.contains("SAI_PORT_STAT_LLR_TX_OK"),
        "{table}"
    );
    let o = lossless(&["check", file.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("line rate needs a replay buffer of"), "{out}");
}

/// Bad LLR settings name the key and the rule.
#[test]
fn bad_llr_settings_are_errors() {
    let sw = |llr: &str| one_switch("bad", 2, "2m", llr, &hosts(2, "0"));
    expect_config_errors(&[
        (
            sw("    llr: {max_outstanding_bytes: 4KB}\n"),
            "s.llr.max_outstanding_bytes",
            "holds less than one 9216-byte frame",
        ),
        (
            sw("    llr: {max_outstanding_frames: 0}\n"),
            "s.llr.max_outstanding_frames",
            "outstanding frames",
        ),
        (
            sw("    llr: {max_outstanding_frames: 600000}\n"),
            "s.llr.max_outstanding_frames",
            "524288",
        ),
        (
            sw("    llr: {replay_timer: 70us}\n"),
            "s.llr.replay_timer",
            "0 (off) to 65,535 ns",
        ),
        (
            sw("    llr: {ctlos_spacing: 100B}\n"),
            "s.llr.ctlos_spacing",
            "400 B to 16 KiB",
        ),
        (
            sw("    llr: {max_replay_count: 0}\n"),
            "s.llr.max_replay_count",
            "replay count",
        ),
        (
            sw("    llr: {ports: [Ethernet7]}\n"),
            "s.llr.ports[0]",
            "unknown port `Ethernet7`",
        ),
        (
            sw("    llr: {init_action: hold}\n"),
            "s.llr.init_action",
            "best_effort",
        ),
    ]);
    // One end of a switch-to-switch link speaks LLR, the other does not.
    let two = "name: bad\nseed: 1\nswitches:\n  - {name: a, ports: {count: 1, speed: 100G}, llr: {}}\n  - {name: b, ports: {count: 1, speed: 100G}}\nlinks:\n  - {a: a:Ethernet0, b: b:Ethernet0}\n";
    expect_config_errors(&[(
        two.to_string(),
        "links[0]",
        "both ends of a link speak llr or neither",
    )]);
    // LLR on a port `lossless tap` serves with a TAP.
    let tap = "name: bad\nseed: 1\nswitches:\n  - name: s\n    ports: [{tap: ll0}, {tap: ll1}]\n    llr: {ports: [Ethernet1]}\n";
    expect_config_errors(&[(
        tap.to_string(),
        "s.llr.ports",
        "port Ethernet1 speaks LLR but `lossless tap` serves it with tap `ll1`",
    )]);
    // An interface with a host behind it, and a port named twice over.
    let iface = "name: bad\nseed: 1\nswitches:\n  - name: s\n    ports: [{iface: eth1}, {iface: eth2}]\n    llr: {}\n";
    expect_config_errors(&[
        (
            iface.to_string(),
            "s.llr.ports",
            "(an interface with another lossless switch behind it is named with `link:`)",
        ),
        (
            iface.replace("{iface: eth2}", "{iface: eth2, link: eth3}"),
            "s.ports[1]",
            "give one of `tap`",
        ),
    ]);
}

/// A `link:` port (another `lossless tap` switch behind a veth) may speak LLR and CBFC; its
/// replay buffer and timer follow the software cable (src/cable.rs), not a 2 m one.
#[test]
fn a_link_port_speaks_llr_and_cbfc_sized_for_its_software_cable() {
    let f = scenario(
        "llr-link.yaml",
        "name: link\nswitches:\n  - name: s\n    ports:\n      - {iface: eth1, speed: 1G, mtu: 1518}\n      - {link: eth9, speed: 1G, mtu: 1518, flow_control: cbfc}\n    llr: {ports: [Ethernet1]}\n",
    );
    let o = lossless(&["check", f.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // 2 × (1024 ring slots + 43 frames in the read queue + 3 in hand) frames of 1518 B;
    // 2 × (1024 + 1092 + 3) of 64 B; the timer twice the software round trip (4 × 6.4 ms).
    assert_eq!(2 * (1024 + 43 + 3) * 1518, 3_248_520);
    assert!(
        out.contains("LLR: replay buffer 4238 frames / 3248.5KB, replay timer 51.2ms"),
        "{out}"
    );
    assert!(out.contains("CBFC: credits of 128 B"), "{out}");
}

/// A `link:` port's replay timer may be set anywhere up to its software cable's default
/// (51.2 ms), where a port cabled as hardware takes SONiC's 0–65,535 ns; above the default
/// it is refused, saying both bounds. Its CBFC falls silent at idle by default.
#[test]
fn a_link_ports_replay_timer_goes_up_to_its_cables_default() {
    let text = |timer: &str| {
        format!("name: link\nswitches:\n  - name: s\n    ports:\n      - {{iface: eth1, speed: 1G, mtu: 1518}}\n      - {{link: eth9, speed: 1G, mtu: 1518, flow_control: cbfc}}\n    llr: {{ports: [Ethernet1], replay_timer: {timer}}}\n")
    };
    let f = scenario("llr-link-10ms.yaml", &text("10ms"));
    let o = lossless(&["check", f.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("replay timer 10ms"), "{out}");
    assert!(out.contains("idle updates on_demand"), "{out}");
    let f = scenario("llr-link-60ms.yaml", &text("60ms"));
    let o = lossless(&["check", f.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("llr-link-60ms.yaml:7") && err.contains("s.llr.replay_timer"),
        "{err}"
    );
    assert!(
        err.contains("65,535 ns (SONiC)") && err.contains("up to 51.2ms"),
        "{err}"
    );
    // A port cabled as hardware keeps SONiC's bound, and says where more is allowed.
    let f = scenario(
        "llr-hw-10ms.yaml",
        &text("10ms")
            .replace("{link: eth9, ", "{")
            .replace("{iface: eth1, ", "{"),
    );
    let o = lossless(&["check", f.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("port Ethernet1 is cabled as hardware is") && err.contains("`link:` port"),
        "{err}"
    );
}

/// Below what line rate needs, `check` warns, naming the port and the numbers.
#[test]
fn a_small_replay_buffer_is_warned_about() {
    let f = scenario(
        "llr-small.yaml",
        &one_switch(
            "small",
            2,
            "500m",
            "    llr: {max_outstanding_bytes: 20KB, replay_timer: 1us}\n",
            &hosts(2, "0"),
        ),
    );
    let o = lossless(&["check", f.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("line rate needs a replay buffer of"), "{err}");
    assert!(err.contains("ports Ethernet0, Ethernet1"), "{err}");
    assert!(err.contains("the replay timer fires before them"), "{err}");
}

/// A lost last frame: nothing follows it to show the gap, so the receiver never NACKs;
/// the sender's replay timer (by default twice the ACK round trip: 3.3 µs at 100G, 2 m,
/// MTU 9216) sends it again. Without LLR the frame is simply gone.
#[test]
fn a_lost_last_frame_comes_back_with_the_replay_timer() {
    // 100 frames of 1,000 B from 0, one every 81.6 ns: the last starts at 8.0784 µs.
    let body = format!(
        "{}flows:\n  - {{name: a, src: h1, dst: h0, protocol: rocev2, dscp: 3, frame: 1000B, packets: 100}}\nevents:\n  - {{at: 8.05us, port: h1, drop: 1}}\n",
        hosts(2, "0")
    );
    let on = run(
        &scenario(
            "llr-tail.yaml",
            &one_switch("tail", 2, "2m", "    llr: {}\n", &body),
        ),
        "llr-tail.json",
        &[],
    );
    let a = flow(&on, "a");
    assert_eq!(u(&a["rx_packets"]), 100);
    let l = &port(&on, 0, "Ethernet1")["llr"];
    assert_eq!(
        u(&l["tx_nack_ctl_os"]),
        0,
        "no frame after the gap, no NACK"
    );
    assert_eq!(u(&l["rx_expected_seq_good"]), 100);
    let timer = u(&l["replay_timer_ps"]);
    assert!((3_000_000..3_700_000).contains(&timer), "{timer}");
    // The last frame arrives a replay timer late (give or take a frame).
    let clean = run(
        &scenario(
            "llr-tail-clean.yaml",
            &one_switch(
                "tail",
                2,
                "2m",
                "    llr: {}\n",
                &body.replace("events:\n  - {at: 8.05us, port: h1, drop: 1}\n", ""),
            ),
        ),
        "llr-tail-clean.json",
        &[],
    );
    let late = u(&a["fct_ps"]) - u(&flow(&clean, "a")["fct_ps"]);
    assert!(
        late > timer / 2 && late < timer + 2_000_000,
        "{late} vs timer {timer}"
    );
    let off = run(
        &scenario("llr-tail-off.yaml", &one_switch("tail", 2, "2m", "", &body)),
        "llr-tail-off.json",
        &[],
    );
    assert_eq!(u(&flow(&off, "a")["rx_packets"]), 99);
}

/// A port whose LLR has no replay timer (and no data age timeout) replays only when a NACK
/// reaches it: `check` warns, naming the key, and a run that loses the NACK ends, the stall
/// reported. h1 sends 1000-byte frames back to back (81.6 ns each at 100G, 2 m cables:
/// 10 ns); `drop: 1` at 2 µs loses frame 25 (it starts at 25 × 81.6 = 2,040 ns), so the
/// switch sees the gap when frame 26 is in, at 27 × 81.6 + 10 = 2,213.2 ns, and NACKs at
/// once; the `lose` event loses that NACK. The indicator looks every half of the longest
/// answer, 2 × (10 ns + the wire time of a 16 KiB frame, 1,312.32 ns) = 2,644.64 ns; the
/// first look at or after 2,213.2 + 2,644.64 = 4,857.84 ns is the fourth, at 5,289.28 ns,
/// where the run (waiting for idle, nothing left in the scenario) stops. Only the 25
/// frames before the lost one reached h0.
#[test]
fn a_lost_nack_without_a_replay_timer_is_warned_of_and_ends_the_run_as_a_stall() {
    let body = format!(
        "{}flows:\n  - {{name: a, src: h1, dst: h0, protocol: rocev2, dscp: 3, frame: 1000B, packets: 100}}\nevents:\n  - {{at: 2us, port: h1, drop: 1}}\n  - {{at: 0ns, port: s:Ethernet1, lose: {{frames: llr_nack}}}}\n",
        hosts(2, "0")
    );
    let file = scenario(
        "llr-stall.yaml",
        &one_switch("llrstall", 2, "2m", "    llr: {replay_timer: 0ns}\n", &body),
    );
    let o = lossless(&["check", file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("llr-stall.yaml:7: s.llr.replay_timer: 0 turns the replay timer off")
            && err.contains("a lost NACK"),
        "{err}"
    );
    // Bounded: before the indicator, this run never ended.
    let json = common::tmp("llr-stall.json");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(["run", file.to_str().unwrap(), "--quiet", "--json"])
        .arg(&json)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the run did not end within 120 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(status.success());
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let s = &r["llr_stalls"];
    assert_eq!(s["stopped_run"], true, "{s}");
    let found = s["found"].as_array().unwrap();
    assert_eq!(found.len(), 1, "{s}");
    assert_eq!(found[0]["sender"], "h1");
    assert_eq!(found[0]["receiver"], "s:Ethernet1");
    assert_eq!(u(&found[0]["since_ps"]), 2_213_200);
    assert_eq!(u(&found[0]["detected_ps"]), 5_289_280);
    assert_eq!(u(&r["sim_time_ps"]), 5_289_280);
    assert_eq!(u(&flow(&r, "a")["rx_packets"]), 25);
    assert_eq!(port(&r, 0, "Ethernet1")["llr"]["rx_state"], "nack_sent");
}

/// A corrupted last frame still arrives (bad): the receiver NACKs it at once and the sender
/// replays it, no timer needed. h1 sends 10 frames of 1000 bytes (81.6 ns each at 100G,
/// 2 m cables: 10 ns). Clean, the last reaches h0 at 1,417.6 ns. Corrupted, it arrives bad
/// at the switch; the NACK (an 8-byte ordered set, 0.64 ns) crosses back (10 ns), h1 replays
/// the frame (81.6 ns) over the cable (10 ns): 102.24 ns later, 1,519.84 ns. Lost whole, no
/// NACK comes: the replay timer (3.324 µs) sends it again.
#[test]
fn a_corrupted_last_frame_is_nacked_at_once() {
    let last = |name: &str, events: &str| {
        let body = format!(
            "{}flows:\n  - {{name: a, src: h1, dst: h0, protocol: rocev2, dscp: 3, frame: 1000B, packets: 10}}\n{events}",
            hosts(2, "0")
        );
        let r = run(
            &scenario(
                &format!("{name}.yaml"),
                &one_switch(name, 2, "2m", "    llr: {}\n", &body),
            ),
            &format!("{name}.json"),
            &[],
        );
        assert_eq!(u(&flow(&r, "a")["rx_packets"]), 10, "{name}");
        u(&flow(&r, "a")["last_rx_ps"])
    };
    let clean = last("llr-last-clean", "");
    assert_eq!(clean, 1_417_600);
    let bad = last(
        "llr-last-bad",
        "events:\n  - {at: 0ns, port: h1, corrupt: {frames: data, nth: 10}}\n",
    );
    assert_eq!(bad - clean, 102_240);
    let lost = last(
        "llr-last-lost",
        "events:\n  - {at: 0ns, port: h1, lose: {frames: data, nth: 10}}\n",
    );
    assert!(lost - clean > 3_324_480, "{}", lost - clean);
    assert!(lost - clean < 3_324_480 + 100_000, "{}", lost - clean);
}
