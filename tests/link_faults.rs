//! Faults on the wire chosen by events (`lose`, `corrupt`): the cases of the UE LLR and
//! CBFC test plans that drop one control message (a CF_Update, a CC_Update, an LLR ACK,
//! NACK or INIT) or corrupt one chosen frame, with what the protocol must do about it,
//! derived from docs/physics.md ("Credit-based flow control", "Link-level retry").
//!
//! Every case: one switch, 100G, 2 m cables, h1 sends 100 frames of 1000 bytes to h0 on
//! priority 3 (each costs ceil(1000 / 128) = 8 credits of 128 bytes under CBFC).

mod common;
use common::{flow, port, run, scenario, u};
use serde_json::Value;

/// The scenario: `link` the switch's link-protocol lines, `extra` top-level keys and
/// `events` the event lines.
fn case(name: &str, link: &str, extra: &str, events: &str) -> Value {
    let text = format!(
        "name: {name}\nseed: 1\n{extra}switches:\n  - name: s\n    ports: {{count: 2, speed: 100G, cable: 2m}}\n{link}hosts:\n  - {{name: h0, attach: s:Ethernet0}}\n  - {{name: h1, attach: s:Ethernet1}}\nflows:\n  - {{name: a, src: h1, dst: h0, protocol: rocev2, dscp: 3, frame: 1000B, packets: 100}}\nevents:\n{events}"
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

/// The CBFC counters of VC 3 in a `cbfc` report section.
fn vc3(cbfc: &Value) -> &Value {
    cbfc["vcs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["vc"] == 3)
        .unwrap()
}

/// A lost CF_Update is healed by the next: it carries the absolute freed count. The
/// switch's sender toward h0 gets every one of its 800 credits back and holds none, and
/// hears one CF_Update fewer than h0 sent.
#[test]
fn a_lost_cf_update_is_healed_by_the_next() {
    let r = case(
        "fault-cf",
        CBFC,
        "",
        "  - {at: 0ns, port: h0, lose: {frames: cf_update}}\n",
    );
    let e0 = &port(&r, 0, "Ethernet0")["cbfc"];
    let v = vc3(e0);
    assert_eq!(u(&v["sender_credits_consumed"]), 800);
    assert_eq!(u(&v["sender_credits_freed"]), 800);
    assert_eq!(u(&v["sender_credits_used"]), 0);
    let h0 = &r["hosts"][0]["cbfc"];
    assert_eq!(u(&e0["cf_update_rx"]) + 1, u(&h0["cf_update_tx"]));
    assert_eq!(u(&r["totals"]["injected_drops"]), 1);
    assert_eq!(u(&flow(&r, "a")["rx_packets"]), 100);
}

/// A corrupted data frame never reaches h0's buffer, so its 8 credits would leak at the
/// switch's sender; the CC_Update (every 256 µs, the first at 256 µs) brings them back.
/// With the first CC_Update lost they stay out until the second, at 512 µs: at 400 µs the
/// sender still holds 8 credits (none once the first CC_Update is heard), at 700 µs none.
#[test]
fn a_lost_cc_update_leaves_lost_credits_out_until_the_next() {
    let corrupt = "  - {at: 0ns, port: s:Ethernet0, corrupt: {frames: data}}\n";
    let lose_cc = "  - {at: 0ns, port: s:Ethernet0, lose: {frames: cc_update}}\n";
    for (duration, lose, held, cc_heard) in [
        ("400us", true, 8, 0),
        ("400us", false, 0, 1),
        ("700us", true, 0, 1),
        ("700us", false, 0, 2),
    ] {
        let events = if lose {
            format!("{corrupt}{lose_cc}")
        } else {
            corrupt.to_string()
        };
        let r = case(
            &format!("fault-cc-{duration}-{lose}"),
            CBFC,
            &format!("duration: {duration}\n"),
            &events,
        );
        let e0 = &port(&r, 0, "Ethernet0")["cbfc"];
        let v = vc3(e0);
        let at = format!("{duration}, first CC_Update lost: {lose}");
        assert_eq!(u(&v["sender_credits_consumed"]), 800, "{at}");
        assert_eq!(u(&v["sender_credits_used"]), held, "{at}");
        let h0 = &r["hosts"][0];
        assert_eq!(u(&h0["cbfc"]["cc_update_rx"]), cc_heard, "{at}");
        assert_eq!(u(&h0["rx_bad_fcs"]), 1, "{at}");
        let rx = vc3(&h0["cbfc"]);
        assert_eq!(u(&rx["receiver_credits_freed"]), 800 - held, "{at}");
        assert_eq!(u(&flow(&r, "a")["rx_packets"]), 99, "{at}");
    }
}

/// LLR's ACKs are cumulative: when h0's first ACK is lost the next frees the switch's
/// copies too. Every frame arrives, nothing is replayed, and the switch hears one ACK fewer
/// than h0 sent.
#[test]
fn a_lost_llr_ack_is_covered_by_the_next() {
    let r = case(
        "fault-ack",
        LLR,
        "",
        "  - {at: 0ns, port: h0, lose: {frames: llr_ack}}\n",
    );
    let e0 = &port(&r, 0, "Ethernet0")["llr"];
    let h0 = &r["hosts"][0]["llr"];
    assert_eq!(u(&e0["rx_ack_ctl_os"]) + 1, u(&h0["tx_ack_ctl_os"]));
    assert_eq!(u(&e0["tx_replay"]), 0);
    assert_eq!(u(&flow(&r, "a")["rx_packets"]), 100);
}

/// A link down 1 µs, longer than `pcs_lost_timeout` (100 ns), flushes both ends, which
/// initialise again; h1's first INIT is lost, so h1 sends it again after its INIT interval
/// (the replay timer) and the switch's port hears only the second: h1 sends 2 INITs, the
/// switch hears 1, each end's INIT is echoed once, and both end advancing.
#[test]
fn a_lost_llr_init_is_sent_again() {
    let r = case(
        "fault-init",
        "    qos: {trust: dscp, dscp_to_tc: {default: 1, 3: 3}, pfc_enable: [3]}\n    llr: {pcs_lost_timeout: 100ns}\n",
        "",
        "  - {at: 3us, port: s:Ethernet1, link: down}\n  - {at: 4us, port: s:Ethernet1, link: up}\n  - {at: 0ns, port: h1, lose: {frames: llr_init}}\n",
    );
    let sw = &port(&r, 0, "Ethernet1")["llr"];
    let h1 = &r["hosts"][1]["llr"];
    assert_eq!(u(&h1["tx_init_ctl_os"]), 2);
    assert_eq!(u(&sw["rx_init_ctl_os"]), 1);
    assert_eq!(u(&sw["tx_init_ctl_os"]), 1);
    assert_eq!(u(&h1["rx_init_ctl_os"]), 1);
    assert_eq!(u(&sw["tx_init_echo_ctl_os"]), 1);
    assert_eq!(u(&h1["rx_init_echo_ctl_os"]), 1);
    assert_eq!((u(&sw["tx_flush"]), u(&h1["tx_flush"])), (1, 1));
    assert_eq!(sw["tx_state"], "advance");
    assert_eq!(h1["tx_state"], "advance");
}

/// A corrupted frame arrives: the switch's MAC counts it in `rx_bad_fcs`. h1's 3rd frame
/// is corrupted, and the 50th and 51st (`frames: any`: h1 sends data only). Without LLR all
/// three are dropped as `bad_fcs` and 97 arrive. With LLR each bad frame the receiver was
/// waiting for sends a NACK and is replayed: the 3rd, and the 50th; the 51st arrives while
/// the receiver waits for the 50th's replay, so it is discarded without a second NACK and
/// comes back in that replay. All 100 arrive, after 2 NACKs.
#[test]
fn a_corrupted_frame_arrives_bad_and_llr_brings_it_back() {
    let events = "  - {at: 0ns, port: h1, corrupt: {frames: data, nth: 3}}\n  - {at: 0ns, port: h1, corrupt: {frames: any, nth: 50, count: 2}}\n";
    let plain = "    qos: {trust: dscp, dscp_to_tc: {default: 1, 3: 3}, pfc_enable: [3]}\n";
    let r = case("fault-corrupt", plain, "", events);
    let e1 = port(&r, 0, "Ethernet1");
    assert_eq!(u(&e1["rx_bad_fcs"]), 3);
    assert_eq!(u(&r["switches"][0]["drops_by_reason"]["bad_fcs"]), 3);
    assert_eq!(u(&r["totals"]["injected_drops"]), 3);
    assert_eq!(u(&flow(&r, "a")["rx_packets"]), 97);
    let r = case("fault-corrupt-llr", LLR, "", events);
    let e1 = port(&r, 0, "Ethernet1");
    assert_eq!(u(&e1["rx_bad_fcs"]), 3);
    assert_eq!(u(&e1["llr"]["rx_expected_seq_bad"]), 2);
    assert_eq!(u(&e1["llr"]["tx_nack_ctl_os"]), 2);
    assert_eq!(u(&flow(&r, "a")["rx_packets"]), 100);
}

/// A lost pause frame is a lossless drop: in the 3-to-1 incast of incast-pfc, the XOFF the
/// switch sends h1 when its PG crosses the limit is the one that stops h1 before the
/// headroom fills; lost, h1 goes on until the headroom overflows (the XOFF comes again
/// only at its refresh, half a pause later). Under PFC and under 802.3x PAUSE alike:
/// no drop without the fault, `headroom_full` drops with it.
#[test]
fn a_lost_pause_frame_overflows_the_headroom() {
    let lab = std::fs::read_to_string(common::root().join("configs/labs/incast-pfc.yaml"))
        .unwrap()
        .replace("duration: 2ms", "duration: 1ms");
    for fc in ["pfc", "pause"] {
        let text = lab.replace(
            "      pfc_enable: [3, 4]\n",
            &format!("      pfc_enable: [3, 4]\n      flow_control: {fc}\n"),
        );
        let clean = run(
            &scenario(&format!("fault-{fc}-clean.yaml"), &text),
            &format!("fault-{fc}-clean.json"),
            &[],
        );
        assert_eq!(u(&clean["totals"]["lossless_drops"]), 0, "{fc}");
        let text = format!(
            "{text}events:\n  - {{at: 0ns, port: tor:Ethernet1, lose: {{frames: {fc}}}}}\n"
        );
        let r = run(
            &scenario(&format!("fault-{fc}.yaml"), &text),
            &format!("fault-{fc}.json"),
            &[],
        );
        assert_eq!(u(&r["totals"]["injected_drops"]), 1, "{fc}");
        let d = &r["switches"][0]["drops_by_reason"];
        assert!(u(&d["headroom_full"]) > 0, "{fc}: {d}");
        assert_eq!(u(&r["totals"]["lossless_drops"]), u(&d["headroom_full"]));
    }
}

/// Bad fault settings name their key and rule.
#[test]
fn bad_faults_name_the_key_and_rule() {
    let base = "switches:\n  - name: s\n    ports: {count: 2}\nevents:\n";
    common::expect_config_errors(&[
        (
            format!("{base}  - {{at: 0ns, port: s:Ethernet0, lose: {{frames: llr_nak}}}}\n"),
            "events[0].lose.frames",
            "`llr_nak`: expected data, cf_update, cc_update, llr_ack, llr_nack, llr_init, llr_init_echo, pfc, pause or any",
        ),
        (
            format!("{base}  - {{at: 0ns, port: s:Ethernet0, corrupt: {{nth: 0}}}}\n"),
            "events[0].corrupt.nth",
            "is outside",
        ),
        (
            format!("{base}  - {{at: 0ns, port: s:Ethernet0, corrupt: {{count: 0}}, drop: 1}}\n"),
            "events[0]",
            "an event does exactly one of",
        ),
    ]);
}
