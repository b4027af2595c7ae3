//! TCP between simulated hosts on smoltcp, through `lossless run` and its JSON: one flow
//! reaches its goodput ceiling MSS/(MSS + 78) of line rate, all bytes arrive once, the
//! same file and seed give the same JSON, and the config's rules for TCP flows.

mod common;

use common::{f, run, scenario, u};

fn lab(mtu: u32, flow: &str) -> String {
    format!(
        "name: tcp\nswitches:\n  - name: sw\n    ports: {{count: 3, speed: 100G, cable: 2m, mtu: {mtu}}}\n\
         hosts:\n  - {{name: h0, attach: sw:Ethernet0}}\n  - {{name: h1, attach: sw:Ethernet1}}\n  - {{name: h2, attach: sw:Ethernet2}}\n\
         flows:\n  - {{name: t, src: h1, dst: h0, protocol: tcp, dscp: 3, {flow}}}\n"
    )
}

#[test]
fn one_flow_reaches_its_goodput_ceiling() {
    for (mtu, cc) in [(1518u32, "cubic"), (9216, "reno"), (9216, "none")] {
        let r = run(
            &scenario(
                &format!("tcp-{mtu}-{cc}.yaml"),
                &lab(mtu, &format!("size: 50MB, tcp: {{congestion: {cc}}}")),
            ),
            &format!("tcp-{mtu}-{cc}.json"),
            &[],
        );
        let t = &r["flows"][0]["tcp"];
        // MSS: the IP MTU (frame MTU less 18 bytes of Ethernet and FCS) less 40.
        let mss = (mtu - 18 - 40) as f64;
        assert_eq!(u(&t["mss"]), mss as u64);
        assert_eq!(t["congestion"], cc);
        // Each segment: MSS + 40 + 18 + 20 bytes of preamble and gap on the wire.
        let ceiling = 100e9 * mss / (mss + 78.0);
        let g = f(&t["goodput_bps"]);
        assert!(
            g >= 0.95 * ceiling && g <= ceiling,
            "{mtu} {cc}: {g} vs {ceiling}"
        );
        assert_eq!(u(&t["delivered_bytes"]), 50_000_000);
        assert_eq!(u(&t["retransmitted_segments"]), 0);
        assert!(u(&r["flows"][0]["fct_ps"]) > 0);
        assert_eq!(u(&r["totals"]["drops"]), 0);
        // No RTT is below the empty path both ways: a segment's two serialisations, two
        // 2 m cables and the 500 ns pipeline, then the ACK's (a 64-byte frame); with one
        // flow on an idle path the shortest comes within a few ACK times of a full
        // segment's.
        let path = |frame: u64| 2 * (frame + 20) * 80 + 20_000 + 500_000;
        let min = u(&t["rtt_ps"]["min"]);
        assert!(min >= path(64) + path(64), "{mtu} {cc}: {min}");
        assert!(
            min <= path(mtu as u64) + path(64) + 4 * 84 * 80,
            "{mtu} {cc}: {min}"
        );
    }
}

#[test]
fn the_same_file_and_seed_give_the_same_json() {
    // Two senders into one port on a lossy priority: drops, retransmissions, timeouts.
    let text = lab(
        1518,
        "size: 4MB}\n  - {name: u, src: h2, dst: h0, protocol: tcp, size: 4MB",
    )
    .replace("dscp: 3, size: 4MB}", "dscp: 0, size: 4MB}");
    let file = scenario("tcp-same.yaml", &text);
    let a = run(&file, "tcp-same-a.json", &[]);
    let b = run(&file, "tcp-same-b.json", &[]);
    assert_eq!(a["flows"], b["flows"]);
    assert_eq!(a["switches"], b["switches"]);
    assert_eq!(a["sim_time_ps"], b["sim_time_ps"]);
}

#[test]
fn tcp_keys_are_checked() {
    let base = lab(1518, "size: 10MB");
    let cases = [
        (
            base.replace(", size: 10MB", ""),
            "flows.t.size",
            "sends `size` bytes",
        ),
        (
            base.replace("size: 10MB", "size: 10MB, frame: 1000B"),
            "flows.t.frame",
            "MSS",
        ),
        (
            base.replace("size: 10MB", "size: 10MB, pattern: cbr, rate: 10G"),
            "flows.t.pattern",
            "congestion control",
        ),
        (
            base.replace("size: 10MB", "size: 10MB, transport: rc"),
            "flows.t.transport",
            "its own transport",
        ),
        (
            base.replace("size: 10MB", "size: 10MB, tcp: {congestion: bbr}"),
            "flows.t.tcp.congestion",
            "cubic",
        ),
        (
            base.replace("size: 10MB", "size: 10MB, tcp: {buffer: 10B}"),
            "flows.t.tcp.buffer",
            "1KiB–1GiB",
        ),
        (
            base.replace("protocol: tcp", "protocol: udp")
                .replace("size: 10MB", "size: 10MB, tcp: {congestion: reno}"),
            "flows.t.tcp",
            "only TCP flows",
        ),
    ];
    common::expect_config_errors(&cases);
}
