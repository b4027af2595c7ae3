//! RoCEv2 RC between simulated hosts, through `lossless run` and its JSON: the goodput
//! ceiling, what one lost packet costs with go-back-N (derived from the path's timing), a
//! lost last packet that waits for the local ACK timeout, a QP that runs out of retries,
//! and the config's rules for RC keys and loss injection.

mod common;

use common::{f, lossless, scenario, u};
use serde_json::Value;

/// 100G, 1086-byte frames: 1024 bytes of payload (IB MTU 1024) + 62 of headers.
const FRAME: u64 = 1086;
const PAYLOAD: u64 = 1024;
/// One frame on the wire at 100G, ps: (1086 + 20) × 8 bits / 100 Gb/s.
const WIRE_PS: u64 = (FRAME + 20) * 80;

fn lab(flow: &str, extra: &str) -> String {
    format!(
        "name: rc\nduration: 20ms\nswitches:\n  - name: sw\n    ports: {{count: 2, speed: 100G, cable: 2m, mtu: 1518}}\n\
         hosts:\n  - {{name: h0, attach: sw:Ethernet0}}\n  - {{name: h1, attach: sw:Ethernet1}}\n\
         flows:\n  - {{name: f, src: h1, dst: h0, protocol: rocev2, dscp: 3, frame: {FRAME}B, transport: rc, {flow}}}\n{extra}"
    )
}

fn run(name: &str, text: &str) -> Value {
    common::run(
        &scenario(&format!("{name}.yaml"), text),
        &format!("{name}.json"),
        &[],
    )
}

fn transport(r: &Value) -> &Value {
    &r["flows"][0]["transport"]
}

/// One way through the switch for a data frame: two serialisations, two 2 m cables, the
/// 500 ns pipeline.
fn data_path_ps() -> u64 {
    2 * WIRE_PS + 2 * 10_000 + 500_000
}

/// When the last packet of a message that starts at 0 reaches the far host. It carries
/// what is left over, so it is shorter than the one before it and catches up with it:
/// it leaves the switch when its predecessor has, one full wire time after the two were
/// back to back, and then takes its own wire time.
fn last_arrival_ps(size: u64) -> u64 {
    let packets = size.div_ceil(PAYLOAD);
    let rest = size - (packets - 1) * PAYLOAD;
    packets * WIRE_PS + (rest + FRAME - PAYLOAD + 20) * 80 + 2 * 10_000 + 500_000
}

/// The same for an ACK or NAK (66 bytes, 86 on the wire).
fn ack_path_ps() -> u64 {
    2 * 86 * 80 + 2 * 10_000 + 500_000
}

#[test]
fn one_flow_reaches_the_goodput_ceiling() {
    let r = run("rc-clean", &lab("size: 10MB", ""));
    let t = transport(&r);
    // Payload over payload + headers + preamble and gap, of line rate.
    let ceiling = 100e9 * PAYLOAD as f64 / (FRAME + 20) as f64;
    let g = f(&t["goodput_bps"]);
    assert!(
        g >= 0.95 * ceiling && g <= ceiling * 1.0001,
        "{g} vs {ceiling}"
    );
    assert_eq!(u(&t["retransmitted_packets"]), 0);
    assert_eq!(u(&t["delivered_bytes"]), 10_000_000);
    assert_eq!(u(&t["messages_completed"]), 1);
    assert_eq!(t["kind"], "rc");
    // Done when the last packet (the 640 bytes left over) is acknowledged: its arrival and
    // the ACK's way back.
    let last = last_arrival_ps(10_000_000) + ack_path_ps();
    assert_eq!(u(&r["flows"][0]["fct_ps"]), last);
    assert_eq!(u(&r["totals"]["injected_drops"]), 0);
}

#[test]
fn go_back_n_resends_the_packets_in_flight_behind_one_loss() {
    let r = run(
        "rc-one-loss",
        &lab("size: 10MB", "events:\n  - {at: 20us, port: h1, drop: 1}\n"),
    );
    let t = transport(&r);
    // The packet after the hole reaches h0 one wire time later plus the path; h0's NAK
    // comes back over the ACK path. Every packet h1 starts before the NAK is back is sent
    // again, with the hole.
    let nak_back = WIRE_PS + data_path_ps() + ack_path_ps();
    let behind = nak_back.div_ceil(WIRE_PS) - 1;
    assert_eq!(u(&t["naks_sent"]), 1);
    assert_eq!(u(&t["naks_received"]), 1);
    assert_eq!(u(&t["out_of_order"]), behind);
    assert_eq!(u(&t["retransmitted_packets"]), behind + 1);
    assert_eq!(u(&t["retransmitted_bytes"]), (behind + 1) * PAYLOAD);
    assert_eq!(u(&t["timeouts"]), 0);
    assert_eq!(u(&t["delivered_bytes"]), 10_000_000);
    assert_eq!(u(&r["totals"]["injected_drops"]), 1);
    assert_eq!(u(&r["links"][1]["a_to_b_injected_drops"]), 1);
    // The lost time is the resent packets' wire time.
    let clean = last_arrival_ps(10_000_000) + ack_path_ps();
    assert_eq!(u(&r["flows"][0]["fct_ps"]), clean + (behind + 1) * WIRE_PS);
}

#[test]
fn selective_repeat_resends_only_the_hole() {
    let r = run(
        "rc-selective",
        &lab(
            "size: 10MB, rc: {recovery: selective}",
            "events:\n  - {at: 20us, port: h1, drop: 1}\n",
        ),
    );
    let t = transport(&r);
    assert_eq!(t["recovery"], "selective");
    assert_eq!(u(&t["retransmitted_packets"]), 1);
    assert_eq!(u(&t["delivered_bytes"]), 10_000_000);
}

#[test]
fn a_lost_last_packet_waits_for_the_local_ack_timeout() {
    // Ten packets; the event comes while the ninth is on the wire, so the tenth (the last)
    // is lost: no later packet can reveal the hole, nothing is NAKed. The ninth arrived
    // but was never acknowledged (an ACK every 8, and the tenth asked for the next), so
    // go-back-N resends both and h0 sees the ninth twice.
    let at_ps = 8 * WIRE_PS + WIRE_PS / 2;
    let r = run(
        "rc-last-lost",
        &lab(
            "size: 10KiB, rc: {rto: 1ms}",
            &format!("events:\n  - {{at: {at_ps}ps, port: h1, drop: 1}}\n"),
        ),
    );
    let t = transport(&r);
    assert_eq!(u(&t["naks_sent"]), 0);
    assert_eq!(u(&t["timeouts"]), 1);
    assert_eq!(u(&t["retransmitted_packets"]), 2);
    assert_eq!(u(&t["duplicates"]), 1);
    // The timer was armed when the first packet left (t = 0) and re-armed by each ACK of
    // progress: the last ACK before the loss covers packets 0–7 (an ACK every 8).
    let ack8 = 7 * WIRE_PS + data_path_ps() + ack_path_ps();
    let resent = ack8 + 1_000_000_000;
    let done = resent + WIRE_PS + data_path_ps() + ack_path_ps();
    assert_eq!(u(&r["flows"][0]["fct_ps"]), done);
}

#[test]
fn a_qp_whose_retries_run_out_errors_and_says_so() {
    let text = lab(
        "size: 10KiB, rc: {rto: 10us, retry_count: 2}",
        "events:\n  - {at: 0ps, port: h1, drop: 1000}\n",
    );
    let r = run("rc-error", &text);
    let t = transport(&r);
    // Sent at 0; timeouts at 10, 20 and 30 µs: the third finds the retries spent.
    assert_eq!(u(&t["timeouts"]), 3);
    assert_eq!(u(&t["qp_error_ps"]), 30_000_000);
    assert_eq!(u(&t["messages_outstanding"]), 1);
    assert!(r["flows"][0]["fct_ps"].is_null());
    let file = scenario("rc-error-text.yaml", &text);
    let o = lossless(&["run", file.to_str().unwrap(), "--duration", "1ms"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("QP ERROR at 30us: the retries ran out; 1 message(s) never completed"),
        "{out}"
    );
}

#[test]
fn a_frame_error_rate_loses_frames_at_that_rate() {
    // 1 % of frames on h1's link, both ways: about 1 % of the data frames (and of the
    // ACKs and NAKs), all recovered. A responder NAKs a sequence error once; if that NAK
    // is lost, only the requester's timeout sends the packets again (IB's local ACK
    // timeout, 4.295 s by default): 50 µs here, so the transfer ends within the run.
    let r = run(
        "rc-fer",
        &lab("size: 10MB, rc: {rto: 50us}", "").replace(
            "{name: h1, attach: sw:Ethernet1}",
            "{name: h1, attach: sw:Ethernet1, frame_error_rate: 0.01}",
        ),
    );
    let t = transport(&r);
    assert_eq!(u(&t["delivered_bytes"]), 10_000_000);
    let lost = u(&r["links"][1]["a_to_b_injected_drops"]) as f64;
    let sent = u(&r["flows"][0]["tx_packets"]) as f64;
    // Binomial: within 4 standard deviations of 1 %.
    let sd = (sent * 0.01 * 0.99).sqrt();
    assert!((lost - 0.01 * sent).abs() < 4.0 * sd, "{lost} of {sent}");
    assert!(u(&t["retransmitted_packets"]) >= lost as u64);
    assert!(
        u(&r["links"][1]["b_to_a_injected_drops"]) > 0,
        "ACKs are lost too"
    );
    // Same file and seed, same run.
    let again = run(
        "rc-fer",
        &lab("size: 10MB, rc: {rto: 50us}", "").replace(
            "{name: h1, attach: sw:Ethernet1}",
            "{name: h1, attach: sw:Ethernet1, frame_error_rate: 0.01}",
        ),
    );
    assert_eq!(r["flows"], again["flows"]);
}

#[test]
fn rc_and_loss_keys_are_checked() {
    let base = lab("size: 10MB", "");
    let cases = [
        (
            base.replace("size: 10MB", "size: 10MB, rc: {rto: 0s}"),
            "flows.f.rc.rto",
            "the local ACK timeout is above 0",
        ),
        (
            base.replace("size: 10MB", "size: 10MB, rc: {retry_count: 8}"),
            "flows.f.rc.retry_count",
            "the retry count is 3 bits, 0–7",
        ),
        (
            base.replace("protocol: rocev2", "protocol: udp"),
            "flows.f.transport",
            "RC runs over RoCEv2",
        ),
        (
            base.replace("transport: rc, size: 10MB", "messages: 3"),
            "flows.f.messages",
            "only RC flows have this",
        ),
        (
            base.replace("size: 10MB", "size: 10MB, messages: 2"),
            "flows.f.messages",
            "not both",
        ),
        (
            base.replace("size: 10MB", "packets: 10"),
            "flows.f.packets",
            "an RC flow sends messages",
        ),
        (
            base.replace("size: 10MB", "size: 10MB, rc: {recovery: fast}"),
            "flows.f.rc.recovery",
            "go_back_n",
        ),
        (
            base.clone() + "events:\n  - {at: 1us, port: 'sw:Ethernet9', drop: 1}\n",
            "events[0].port",
            "Ethernet9",
        ),
        (
            base.clone() + "events:\n  - {at: 1us, port: h1, drop: 0}\n",
            "events[0].drop",
            "N is 1 or more",
        ),
        (
            base.replace(
                "{name: h1, attach: sw:Ethernet1}",
                "{name: h1, attach: sw:Ethernet1, frame_error_rate: 1.5}",
            ),
            "hosts[1].frame_error_rate",
            "a probability in [0, 1)",
        ),
    ];
    common::expect_config_errors(&cases);
}

/// An RC flow into a host whose software reads its NIC's buffer at 25 Gb/s behind a 100G
/// link: an RNIC acknowledges what it has placed in memory, so the flow completes when
/// the host has drained its last packet, not when that packet reached the buffer.
#[test]
fn a_slow_receiver_acknowledges_what_it_has_placed() {
    let slow = |ack: &str| {
        let nic = format!("{{rx_buffer: 256KiB, drain: 25G{ack}}}");
        let t = lab("size: 1MB", "").replace(
            "  - {name: h0, attach: sw:Ethernet0}",
            &format!("  - {{name: h0, attach: sw:Ethernet0, nic: {nic}}}"),
        );
        run(&format!("rc-slow{}", ack.len()), &t)
    };
    let placed = slow("");
    let arrived = slow(", rc_ack: arrived");
    let fct = |r: &Value| u(&r["flows"][0]["fct_ps"]);
    // On paper: 977 packets (976 of 1024 bytes, one of 576) are 1,060,574 frame bytes; the
    // host drains them at 25 Gb/s from the first one's arrival (the buffer never empties:
    // 100G in, 25G out, PFC keeping it between its XON and XOFF levels), so the last is
    // placed 339.38 µs after that; its ACK then takes the path back.
    let bytes = 976 * FRAME + (576 + FRAME - PAYLOAD);
    let drain_ps = bytes * 8 * 1000 / 25;
    let first = 2 * WIRE_PS + 2 * 10_000 + 500_000;
    let want = first + drain_ps + ack_path_ps();
    let got = fct(&placed);
    assert!(
        got.abs_diff(want) < want / 500,
        "FCT {got} ps, on paper {want} ps"
    );
    // Acknowledged on arrival, the flow looks done while up to a buffer's worth still
    // waits to be read: earlier by at least the XON level's drain time.
    assert!(
        fct(&arrived) + 10_000_000 < got,
        "{} vs {got}",
        fct(&arrived)
    );
    assert_eq!(u(&placed["totals"]["drops"]), 0);
}
