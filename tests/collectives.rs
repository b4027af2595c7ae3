//! Collectives over RC between simulated hosts, through `lossless run` and its JSON: a ring
//! AllReduce of 8 hosts lands on the iteration time derived from the wire (and within 2 %
//! of the textbook ideal), an all-to-all on its ideal, one lost packet in the middle of a
//! step costs go-back-N's resend, a lost last packet of an iteration costs the local ACK
//! timeout, and the config's rules.

mod common;

use common::{f, run, scenario, u};
use serde_json::Value;

/// 100G ports with the default 9216-byte MTU: the IB path MTU is 4096, a full frame 4158
/// bytes, 4178 on the wire.
const W: u64 = 4178 * 80;
/// An ACK on the wire (66 + 20 bytes).
const A: u64 = 86 * 80;
/// Two 2 m cables and the switch's 500 ns pipeline.
const HOPS: u64 = 2 * 10_000 + 500_000;
/// 8 MB over 8 ranks: 1,000,000-byte steps, 245 packets (244 of 4096 and one of 576).
const CHUNK: u64 = 1_000_000;
const PACKETS: u64 = 245;
const LAST_WIRE: u64 = (576 + 62 + 20) * 80;
/// ACKs a step's receiver sends back: one per 8 packets, and one at the message's end.
const ACKS: u64 = 31;

fn lab(kind: &str, extra_coll: &str, tail: &str) -> String {
    let mut s = String::from(
        "name: coll\nswitches:\n  - name: sw\n    ports: {count: 8, speed: 100G, cable: 2m}\nhosts:\n",
    );
    for i in 0..8 {
        s += &format!("  - {{name: h{i}, attach: 'sw:Ethernet{i}'}}\n");
    }
    s += &format!(
        "collectives:\n  - {{name: c, kind: {kind}, hosts: [h0, h1, h2, h3, h4, h5, h6, h7], size: 8MB, iterations: 3, dscp: 3{extra_coll}}}\n{tail}"
    );
    s
}

fn go(name: &str, text: &str) -> Value {
    run(
        &scenario(&format!("{name}.yaml"), text),
        &format!("{name}.json"),
        &[],
    )
}

/// A step from its post to the last bit of its last packet at the next rank: 244 full
/// packets back to back; the short last one catches up with its predecessor in the switch
/// and leaves behind it (245 wire times), then takes its own; cables and pipeline.
fn step_data() -> u64 {
    PACKETS * W + LAST_WIRE + HOPS
}

/// An ACK's way back to the sender: two serialisations, cables, pipeline.
fn ack_path() -> u64 {
    2 * A + HOPS
}

/// One ring iteration, derived: 14 steps, each delayed by the ACKs its sender sends for
/// what it receives meanwhile (control frames go first): 30 coalesced ones, and the end
/// ACK of the step before (queued at the moment the step is posted) — all but the first
/// step of the iteration; then the ACK of the last step's end comes back.
fn ring_iteration() -> u64 {
    14 * step_data() + (14 * ACKS - 1) * A + ack_path()
}

#[test]
fn a_ring_allreduce_of_8_lands_on_its_derived_time() {
    let r = go("ring", &lab("allreduce", "", ""));
    let c = &r["collectives"][0];
    assert_eq!(c["kind"], "allreduce");
    assert_eq!(c["algorithm"], "ring");
    assert_eq!(u(&c["chunk_bytes"]), CHUNK);
    assert_eq!(u(&c["completed_iterations"]), 3);
    for it in c["iterations"].as_array().unwrap() {
        assert_eq!(u(&it["time_ps"]), ring_iteration());
    }
    // The textbook ideal: 2(N−1)/N × size at the RC goodput rate, plus a packet's store
    // and forward per step and the last ACK. Within 2 %.
    let goodput = 100e9 * 4096.0 / 4178.0;
    let ideal_ps = 1.75 * 8e6 * 8.0 / goodput * 1e12 + 14.0 * (W + HOPS) as f64 + ack_path() as f64;
    let t = u(&c["time_ps"]["p50"]) as f64;
    assert!((t / ideal_ps - 1.0).abs() < 0.02, "{t} vs {ideal_ps}");
    // nccl-tests' bandwidths.
    let algbw = 8e6 * 8.0 / (t * 1e-12);
    assert!((f(&c["algbw_bps"]) - algbw).abs() < 1.0);
    assert!((f(&c["busbw_bps"]) - algbw * 1.75).abs() < 1.0);
    assert_eq!(u(&c["retransmitted_packets"]), 0);
    // Each QP is a flow of the report.
    assert_eq!(r["flows"][3]["name"], "c:h3>h4");
    assert_eq!(u(&r["flows"][3]["transport"]["messages_completed"]), 42);
}

#[test]
fn an_all_to_all_lands_on_its_ideal() {
    let r = go("a2a", &lab("alltoall", "", ""));
    let c = &r["collectives"][0];
    assert_eq!(c["kind"], "alltoall");
    assert!(c["algorithm"].is_null());
    assert_eq!(u(&c["completed_iterations"]), 3);
    // Each rank sends 7 blocks of size/8 and receives 7; every link carries (N−1)/N of the
    // buffer at the RC goodput rate.
    let goodput = 100e9 * 4096.0 / 4178.0;
    let ideal_ps = 7.0 * CHUNK as f64 * 8.0 / goodput * 1e12;
    for it in c["iterations"].as_array().unwrap() {
        let t = u(&it["time_ps"]) as f64;
        assert!(t > ideal_ps && t < ideal_ps * 1.02, "{t} vs {ideal_ps}");
    }
    let algbw = f(&c["algbw_bps"]);
    assert!((f(&c["busbw_bps"]) - algbw * 0.875).abs() < 1.0);
}

#[test]
fn one_loss_in_a_step_costs_the_packets_behind_it() {
    // h3 loses one packet in its first step: the next packet shows the hole to h4, whose
    // NAK comes back after the packets h3 started meanwhile; go-back-N sends them again.
    let r = go(
        "ring-one-loss",
        &lab(
            "allreduce",
            "",
            "events:\n  - {at: 40us, port: h3, drop: 1}\n",
        ),
    );
    let c = &r["collectives"][0];
    let its = c["iterations"].as_array().unwrap();
    let resent = u(&its[0]["retransmitted_packets"]);
    // In flight behind the hole when the NAK is back: the next packet's wire time and path,
    // the NAK's path, and up to one frame h4's NIC is sending when it queues the NAK.
    let back = W + (W + W + HOPS) + ack_path();
    let least = back.div_ceil(W);
    assert!(resent >= least && resent <= least + 1, "{resent}, {least}");
    assert_eq!(u(&c["retransmitted_packets"]), resent);
    assert_eq!(u(&c["timeouts"]), 0);
    assert_eq!(u(&c["naks"]), 1);
    // The ring waits for h3's step: the iteration is longer by about the resent packets'
    // wire time. The next ones are clean, but the ranks are no longer in step: the ACKs
    // they interleave with their data fall differently (within one step's ACKs), and a
    // step may find its NIC sending a frame (at most one data frame's wire time).
    let t0 = u(&its[0]["time_ps"]);
    assert!(t0 >= ring_iteration() + resent * W - W, "{t0}");
    assert!(t0 <= ring_iteration() + (resent + 2) * W, "{t0}");
    let t1 = u(&its[1]["time_ps"]);
    assert!(
        t1.abs_diff(ring_iteration()) <= ACKS * A + W,
        "{t1} vs {}",
        ring_iteration()
    );
    assert_eq!(u(&its[1]["retransmitted_packets"]), 0);
}

#[test]
fn a_lost_last_packet_of_an_iteration_stalls_it_for_the_ack_timeout() {
    // The last packet of h3's last step of iteration 2: nothing follows it on the QP (h3
    // starts iteration 3 only once that step is acknowledged), so no NAK; the ring waits
    // for h3's local ACK timeout, 1 ms here.
    let step = step_data() + ACKS * A;
    let b0 = ring_iteration();
    let b13 = b0 + (step_data() + (ACKS - 1) * A) + 12 * step;
    let last_start = b13 + ACKS * A + (PACKETS - 1) * W;
    let r = go(
        "ring-tail-loss",
        &lab(
            "allreduce",
            ", rc: {rto: 1ms}",
            &format!(
                "events:\n  - {{at: {}ps, port: h3, drop: 1}}\n",
                last_start - 1
            ),
        ),
    );
    let c = &r["collectives"][0];
    assert_eq!(u(&c["timeouts"]), 1);
    assert_eq!(u(&c["naks"]), 0);
    let its = c["iterations"].as_array().unwrap();
    let t1 = u(&its[1]["time_ps"]);
    // The timer was last re-armed by the ACK of packet 240 (coalesced), about five
    // packets before the lost one left; it fires 1 ms later and the tail is sent again.
    assert!(t1 > ring_iteration() + 1_000_000_000 - 10 * W, "{t1}");
    assert!(t1 < ring_iteration() + 1_000_000_000 + 10 * W, "{t1}");
    assert_eq!(u(&its[0]["time_ps"]), ring_iteration());
    // After it the ranks are out of step: within one step's ACKs of the clean time.
    assert!(u(&its[2]["time_ps"]).abs_diff(ring_iteration()) <= ACKS * A);
    // The slowest iteration says so; the median does not.
    assert_eq!(u(&c["time_ps"]["max"]), t1);
    assert!(u(&c["time_ps"]["p50"]).abs_diff(ring_iteration()) <= ACKS * A);
}

#[test]
fn a_ring_allreduce_over_tcp_lands_on_its_ideal() {
    // smoltcp connections instead of RC queue pairs: MSS 9158 (9216-byte frames), 9236
    // bytes of wire a segment.
    let r = go("ring-tcp", &lab("allreduce", ", transport: tcp", ""));
    let c = &r["collectives"][0];
    assert_eq!(u(&c["completed_iterations"]), 3);
    assert_eq!(u(&c["retransmitted_packets"]), 0);
    let seg = (9236 * 80) as f64;
    let goodput = 100e9 * 9158.0 / 9236.0;
    // The transfer at the goodput rate and, per step, a full segment's store and forward.
    let ideal = 1.75 * 8e6 * 8.0 / goodput * 1e12 + 14.0 * (seg + HOPS as f64);
    for it in c["iterations"].as_array().unwrap() {
        let t = u(&it["time_ps"]) as f64;
        // The first iteration also opens the connections and slow-starts.
        assert!(t >= ideal && t < ideal * 1.02, "{t} vs {ideal}");
    }
    assert!(r["flows"][0]["tcp"]["mss"] == 9158);
}

#[test]
fn the_text_report_has_an_nccl_tests_table() {
    let file = scenario("ring-text.yaml", &lab("allreduce", "", ""));
    let o = common::lossless(&["run", file.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("Collectives ("), "{out}");
    assert!(out.contains("allreduce/ring"), "{out}");
    assert!(out.contains("iteration 3"), "{out}");
}

#[test]
fn collective_keys_are_checked() {
    let base = lab("allreduce", "", "");
    let cases = [
        (
            base.replace("hosts: [h0, h1,", "hosts: [h0, h9, h1,"),
            "collectives.c.hosts",
            "unknown host `h9`",
        ),
        (
            base.replace("hosts: [h0, h1, h2, h3, h4, h5, h6, h7]", "hosts: [h0]"),
            "collectives.c.hosts",
            "at least 2 ranks",
        ),
        (
            base.replace("hosts: [h0, h1,", "hosts: [h0, h0, h1,"),
            "collectives.c.hosts",
            "listed twice",
        ),
        (
            base.replace("kind: allreduce", "kind: broadcast"),
            "collectives.c.kind",
            "allreduce",
        ),
        (
            base.replace("kind: allreduce", "kind: alltoall, algorithm: ring"),
            "collectives.c.algorithm",
            "only an allreduce",
        ),
        (
            base.replace("iterations: 3", "iterations: 0"),
            "collectives.c.iterations",
            "at least 1",
        ),
        (
            base.replace("size: 8MB", "size: 4B"),
            "collectives.c.size",
            "at least 1 byte",
        ),
        (
            base.replace("dscp: 3", "dscp: 3, rc: {rto: 0s}"),
            "collectives.c.rc.rto",
            "above 0",
        ),
        (
            base.replace("dscp: 3", "dscp: 3, frame: 10000B"),
            "collectives.c.frame",
            "64–9216",
        ),
        (
            base.replace("dscp: 3", "dscp: 3, transport: udp"),
            "collectives.c.transport",
            "tcp",
        ),
        (
            base.replace("dscp: 3", "dscp: 3, transport: tcp, rc: {rto: 1ms}"),
            "collectives.c.rc",
            "not for TCP",
        ),
        (
            base.replace("dscp: 3", "dscp: 3, tcp: {congestion: reno}"),
            "collectives.c.tcp",
            "only a `transport: tcp` collective",
        ),
    ];
    common::expect_config_errors(&cases);
}
