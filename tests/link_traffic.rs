//! CBFC and LLR carry whatever the hosts send: IPv6 frames (classified by the traffic
//! class's DSCP) and TCP connections, as well as RoCEv2 over IPv4; LLR protects only the
//! traffic classes eligible for it (`llr.tcs`); a tag's DEI picks the class through
//! `qos.dei_to_tc` (SAI's {PCP, DEI} → TC map).
//!
//! One switch, 100G, 2 m cables, h1 → h0 unless said; frames of 1000 bytes cost
//! ceil(1000 / 128) = 8 credits of 128 bytes.

mod common;
use common::{flow, port, run, scenario, u};
use serde_json::Value;

/// The scenario: the switch's `link` lines (qos and the link protocol), `hosts`' extra
/// keys for h1, `flows` and `events` lines.
fn case(name: &str, link: &str, flows: &str, events: &str) -> Value {
    let text = format!(
        "name: {name}\nseed: 1\nswitches:\n  - name: s\n    ports: {{count: 2, speed: 100G, cable: 2m}}\n{link}hosts:\n  - {{name: h0, attach: s:Ethernet0}}\n  - {{name: h1, attach: s:Ethernet1}}\nflows:\n{flows}{events}"
    );
    run(
        &scenario(&format!("{name}.yaml"), &text),
        &format!("{name}.json"),
        &[],
    )
}

const CBFC: &str =
    "    qos: {trust: dscp, dscp_to_tc: {default: 1, 3: 3}, pfc_enable: [3], flow_control: cbfc}\n";
const LLR: &str =
    "    qos: {trust: dscp, dscp_to_tc: {default: 1, 3: 3}, pfc_enable: [3]}\n    llr: {}\n";
const PLAIN: &str = "    qos: {trust: dscp, dscp_to_tc: {default: 1, 3: 3}, pfc_enable: [3]}\n";

/// A channel's counters in a `cbfc` section.
fn vc(cbfc: &Value, n: u64) -> &Value {
    cbfc["vcs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["vc"] == n)
        .unwrap()
}

/// 100 RoCEv2 frames over IPv6 with DSCP 3 in the traffic class: the switch classifies
/// them into TC 3, so VC 3 carries their 800 credits both ways (h1 → switch, switch →
/// h0), all returned; under LLR the 3rd, corrupted, is NACKed and replayed, and all 100
/// arrive.
#[test]
fn ipv6_frames_ride_cbfc_and_llr() {
    let f = "  - {name: a, src: h1, dst: h0, protocol: rocev2, ip: v6, dscp: 3, frame: 1000B, packets: 100}\n";
    let r = case("traffic-v6-cbfc", CBFC, f, "");
    let rx = vc(&port(&r, 0, "Ethernet1")["cbfc"], 3);
    assert_eq!(u(&rx["receiver_credits_consumed"]), 800);
    assert_eq!(u(&rx["receiver_credits_freed"]), 800);
    let tx = vc(&port(&r, 0, "Ethernet0")["cbfc"], 3);
    assert_eq!(u(&tx["sender_credits_consumed"]), 800);
    assert_eq!(u(&tx["sender_credits_used"]), 0);
    assert_eq!(u(&flow(&r, "a")["rx_packets"]), 100);
    let r = case(
        "traffic-v6-llr",
        LLR,
        f,
        "events:\n  - {at: 0ns, port: h1, corrupt: {frames: data, nth: 3}}\n",
    );
    let l = &port(&r, 0, "Ethernet1")["llr"];
    assert_eq!(u(&l["rx_expected_seq_bad"]), 1);
    assert_eq!(u(&l["tx_nack_ctl_os"]), 1);
    assert_eq!(u(&flow(&r, "a")["rx_packets"]), 100);
    assert_eq!(u(&port(&r, 0, "Ethernet0")["queues"][3]["tx_packets"]), 100);
}

/// A TCP connection (1 MB, DSCP 3) over CBFC: its segments and its ACKs each take VC 3's
/// credits one way (the segments far more), every credit comes back, every byte arrives.
/// Over LLR a corrupted segment is replayed on the hop and TCP never sees it lost (no
/// retransmission); without LLR TCP re-sends it.
#[test]
fn tcp_rides_cbfc_and_llr_hides_a_corrupted_segment_from_it() {
    let f = "  - {name: t, src: h1, dst: h0, protocol: tcp, dscp: 3, size: 1MB}\n";
    let r = case("traffic-tcp-cbfc", CBFC, f, "");
    let data = vc(&port(&r, 0, "Ethernet1")["cbfc"], 3);
    let acks = vc(&port(&r, 0, "Ethernet0")["cbfc"], 3);
    assert!(u(&data["receiver_credits_consumed"]) > 10 * u(&acks["receiver_credits_consumed"]));
    assert!(u(&acks["receiver_credits_consumed"]) > 0);
    assert_eq!(
        u(&vc(&port(&r, 0, "Ethernet0")["cbfc"], 3)["sender_credits_used"]),
        0
    );
    assert_eq!(u(&flow(&r, "t")["tcp"]["delivered_bytes"]), 1_000_000);
    let bad = "events:\n  - {at: 0ns, port: h1, corrupt: {frames: data, nth: 20}}\n";
    let r = case("traffic-tcp-llr", LLR, f, bad);
    assert_eq!(u(&port(&r, 0, "Ethernet1")["rx_bad_fcs"]), 1);
    assert_eq!(u(&port(&r, 0, "Ethernet1")["llr"]["tx_nack_ctl_os"]), 1);
    let t = &flow(&r, "t")["tcp"];
    assert_eq!(u(&t["delivered_bytes"]), 1_000_000);
    assert_eq!(u(&t["retransmitted_segments"]), 0);
    let r = case("traffic-tcp-plain", PLAIN, f, bad);
    let t = &flow(&r, "t")["tcp"];
    assert_eq!(u(&t["delivered_bytes"]), 1_000_000);
    assert_eq!(u(&t["retransmitted_segments"]), 1);
}

/// `llr.tcs: [3]`: only TC 3's frames are numbered and replayed. h1 sends 50 frames on
/// DSCP 3 from 0 and 50 on DSCP 1 (TC 1) from 50 µs on (each flow takes 8.16 µs, so they
/// do not mix); the 10th and the 60th data frames h1 sends are corrupted. TC 3's is NACKed
/// and replayed, all 50 arrive; TC 1's went out plain and is lost, 49 arrive (both bad
/// frames count as `bad_fcs` drops at the MAC); h1's LLR numbered only TC 3's 50 frames.
#[test]
fn llr_protects_only_the_eligible_classes() {
    let flows = "  - {name: a, src: h1, dst: h0, protocol: rocev2, dscp: 3, frame: 1000B, packets: 50}\n  - {name: b, src: h1, dst: h0, protocol: rocev2, dscp: 1, frame: 1000B, packets: 50, start: 50us}\n";
    let r = case(
        "traffic-llr-tcs",
        "    qos: {trust: dscp, dscp_to_tc: {default: 1, 3: 3}, pfc_enable: [3]}\n    llr: {tcs: [3]}\n",
        flows,
        "events:\n  - {at: 0ns, port: h1, corrupt: {frames: data, nth: 10}}\n  - {at: 0ns, port: h1, corrupt: {frames: data, nth: 60}}\n",
    );
    assert_eq!(u(&flow(&r, "a")["rx_packets"]), 50);
    assert_eq!(u(&flow(&r, "b")["rx_packets"]), 49);
    let e1 = port(&r, 0, "Ethernet1");
    assert_eq!(u(&e1["rx_bad_fcs"]), 2);
    assert_eq!(u(&e1["llr"]["tx_nack_ctl_os"]), 1);
    // Both bad frames are dropped at the MAC; TC 3's comes back in the replay.
    assert_eq!(u(&r["switches"][0]["drops_by_reason"]["bad_fcs"]), 2);
    assert_eq!(u(&r["hosts"][1]["llr"]["tx_ok"]), 50);
}

/// A tag's DEI picks the class through `dei_to_tc`: two frames (of an experimental
/// EtherType, 0x88B6, so only the tag classifies them) with PCP 3 injected on
/// Ethernet0 of a switch that trusts 802.1p, one drop eligible (DEI 1) — `dei_to_tc: {3:
/// 1}` sends it to TC 1 (queue 1), the other to TC 3 (queue 3). Without the map both go to
/// queue 3.
#[test]
fn the_dei_bit_picks_the_class_through_dei_to_tc() {
    let inject = |name: &str, qos: &str| {
        let text = format!(
            "name: {name}\nduration: 10us\nswitches:\n  - name: s\n    ports: {{count: 2}}\n    qos: {{trust: dot1p, pfc_enable: [3]{qos}}}\nevents:\n  - {{at: 1us, port: s:Ethernet0, inject: {{hex: \"020000000002 020000000001 8100 6001 88b6\", len: 64}}}}\n  - {{at: 2us, port: s:Ethernet0, inject: {{hex: \"020000000002 020000000001 8100 7001 88b6\", len: 64}}}}\n"
        );
        run(
            &scenario(&format!("{name}.yaml"), &text),
            &format!("{name}.json"),
            &[],
        )
    };
    let r = inject("traffic-dei", ", dei_to_tc: {3: 1}");
    let q = &port(&r, 0, "Ethernet1")["queues"];
    assert_eq!((u(&q[3]["tx_packets"]), u(&q[1]["tx_packets"])), (1, 1));
    let r = inject("traffic-no-dei", "");
    let q = &port(&r, 0, "Ethernet1")["queues"];
    assert_eq!((u(&q[3]["tx_packets"]), u(&q[1]["tx_packets"])), (2, 0));
}

/// An IPv6 flow is refused where this model speaks IPv4 only.
#[test]
fn ipv6_flows_are_refused_where_only_ipv4_runs() {
    let sw = "switches:\n  - name: s\n    ports: {count: 2}\nhosts:\n  - {name: h0, attach: s:Ethernet0}\n  - {name: h1, attach: s:Ethernet1}\nflows:\n";
    common::expect_config_errors(&[
        (
            format!("{sw}  - {{name: a, src: h1, dst: h0, protocol: tcp, ip: v6, size: 1MB}}\n"),
            "flows.a.ip",
            "TCP hosts speak IPv4 here",
        ),
        (
            format!("{sw}  - {{name: a, src: h1, dst: h0, protocol: rocev2, ip: v6, transport: rc, size: 1MB}}\n"),
            "flows.a.ip",
            "RC queue pairs run over IPv4 here",
        ),
        (
            format!("{sw}  - {{name: a, src: h1, dst: h0, ip: v5}}\n"),
            "flows.a.ip",
            "expected v4 or v6",
        ),
    ]);
}
