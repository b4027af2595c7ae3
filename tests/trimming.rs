//! Packet trimming through `lossless run` and its JSON report, after the sonic-mgmt packet
//! trimming test plan's data-plane cases (TC2 size, TC3 DSCP, TC6 a lossless trim queue,
//! TC7 ACL `disable_trim`, TC13 counters) and the RC receiver's NAK on a trimmed packet.
//! A 3-to-1 incast of greedy 1518-byte frames on lossy queue 1 overflows it; every frame
//! its buffer refuses is trimmed.

mod common;
use common::{expect_config_errors, flow, run, scenario, u};
use serde_json::Value;

/// The incast with `trimming` (a YAML map) and `extra` switch keys.
fn incast(name: &str, trimming: &str, extra: &str, frame: u32) -> std::path::PathBuf {
    scenario(
        &format!("{name}.yaml"),
        &format!(
            "name: {name}\nseed: 1\nduration: 300us\nswitches:\n  - name: s\n    ports: {{count: 4, speed: 100G, cable: 2m, mtu: 9216}}\n    qos: {{trust: dscp, dscp_to_tc: {{default: 1, 3: 3, 4: 4, 48: 6}}, pfc_enable: [3, 4]}}\n    trimming: {trimming}\n{extra}hosts:\n  - {{name: h0, attach: s:Ethernet0}}\n  - {{name: h1, attach: s:Ethernet1}}\n  - {{name: h2, attach: s:Ethernet2}}\n  - {{name: h3, attach: s:Ethernet3}}\nflows:\n  - {{name: a, src: h1, dst: h0, protocol: rocev2, dscp: 1, frame: {frame}B, pattern: greedy}}\n  - {{name: b, src: h2, dst: h0, protocol: rocev2, dscp: 1, frame: {frame}B, pattern: greedy}}\n  - {{name: c, src: h3, dst: h0, protocol: rocev2, dscp: 1, frame: {frame}B, pattern: greedy}}\n"
        ),
    )
}

fn queue(r: &Value, port: usize, q: usize) -> &Value {
    &r["switches"][0]["ports"][port]["queues"][q]
}

/// TC2 and TC13: every refused frame is trimmed to `size` and sent on the trim queue; the
/// counters agree at queue, port and switch, and trim = tx_trim + dropped_trim + queued.
#[test]
fn tc2_tc13_trimmed_size_and_counters() {
    for (frame, size) in [(1518u32, 256u64), (5000, 4084)] {
        let f = incast(
            &format!("tc2-{frame}"),
            &format!("{{size: {size}B, dscp: 48, queue: 6, queues: [1]}}"),
            "",
            frame,
        );
        let r = run(&f, &format!("tc2-{frame}.json"), &[]);
        let (q1, q6) = (queue(&r, 0, 1), queue(&r, 0, 6));
        let trim = u(&q1["trim_packets"]);
        assert!(trim > 100, "{frame}: {trim} trimmed");
        assert_eq!(trim, u(&q1["drop_packets"]), "every refused frame trimmed");
        let sent = u(&q1["tx_trim_packets"]);
        let dropped = u(&q1["dropped_trim_packets"]);
        // The rest are still queued when the run ends.
        assert!(
            sent > 0 && sent + dropped <= trim,
            "{sent} + {dropped} of {trim}"
        );
        // Sent from queue 6, each `size` bytes long.
        assert_eq!(u(&q6["tx_packets"]), sent);
        assert_eq!(u(&q6["tx_bytes"]), sent * size);
        assert_eq!(u(&q6["trim_packets"]), 0);
        let port = &r["switches"][0]["ports"][0]["trim"];
        let sw = &r["switches"][0]["trim"];
        for k in ["trim_packets", "tx_trim_packets", "dropped_trim_packets"] {
            assert_eq!(u(&port[k]), u(&q1[k]), "{k}");
            assert_eq!(u(&sw[k]), u(&q1[k]), "{k}");
        }
        // The receiver sees trimmed frames as such, not as data.
        let got: u64 = ["a", "b", "c"]
            .iter()
            .map(|n| u(&flow(&r, n)["trimmed_packets"]))
            .sum();
        assert!(got > 0 && got <= sent);
    }
}

/// TC3: trimmed frames carry DSCP 48 (the pcap shows them as they leave), untrimmed ones
/// their own; asymmetric: `from_tc` takes the egress port's `tc_to_dscp[5]`.
#[test]
fn tc3_the_trimmed_dscp() {
    let dscps = |r_pcap: &std::path::Path| -> Vec<(u32, u8)> {
        let bytes = std::fs::read(r_pcap).unwrap();
        let mut out = Vec::new();
        let mut at = 24;
        while at + 16 <= bytes.len() {
            let incl = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
            let orig = u32::from_le_bytes(bytes[at + 12..at + 16].try_into().unwrap());
            let f = &bytes[at + 16..at + 16 + incl];
            if f.len() > 15 && f[12..14] == [0x08, 0x00] {
                out.push((orig, f[15] >> 2));
            }
            at += 16 + incl;
        }
        out
    };
    for (trimming, want) in [
        ("{size: 256B, dscp: 48, queue: 6, queues: [1]}", 48u8),
        (
            "{size: 256B, dscp: from_tc, tc: 5, queue: 6, queues: [1]}",
            10,
        ),
    ] {
        let text = std::fs::read_to_string(incast("tc3", trimming, "", 1518)).unwrap();
        let text = if want == 10 {
            text.replace(
                "pfc_enable: [3, 4]}",
                "pfc_enable: [3, 4], tc_to_dscp: {5: 10}}",
            )
        } else {
            text
        };
        let f = scenario(&format!("tc3-{want}.yaml"), &text);
        let dir = common::tmp(&format!("tc3-pcap-{want}"));
        run(
            &f,
            &format!("tc3-{want}.json"),
            &["--pcap-dir", dir.to_str().unwrap()],
        );
        let frames = dscps(&dir.join("s-Ethernet0.pcap"));
        let trimmed: Vec<_> = frames.iter().filter(|(len, _)| *len == 252).collect();
        assert!(!trimmed.is_empty());
        assert!(
            trimmed.iter().all(|(_, d)| *d == want),
            "trimmed DSCP {want}"
        );
        assert!(frames
            .iter()
            .filter(|(len, _)| *len == 1514)
            .all(|(_, d)| *d == 1));
    }
}

/// TC6: the trim queue may be a lossless one (queue 4): trimmed frames leave from it and
/// none is dropped there.
#[test]
fn tc6_a_lossless_trim_queue() {
    let f = incast(
        "tc6",
        "{size: 256B, dscp: 4, queue: 4, queues: [1]}",
        "",
        1518,
    );
    let r = run(&f, "tc6.json", &[]);
    let q1 = queue(&r, 0, 1);
    assert!(u(&q1["trim_packets"]) > 100);
    assert_eq!(u(&queue(&r, 0, 4)["tx_packets"]), u(&q1["tx_trim_packets"]));
    assert_eq!(u(&q1["dropped_trim_packets"]), 0);
    assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
}

/// TC7: an ACL rule `disable_trim` on h1's address: h1's refused frames are dropped, not
/// trimmed; the others' are trimmed.
#[test]
fn tc7_acl_disable_trim() {
    let f = incast(
        "tc7",
        "{size: 256B, dscp: 48, queue: 6, queues: [1]}",
        "    acl:\n      T:\n        type: L3\n        rules:\n          NOTRIM: {priority: 10, src_ip: 198.18.0.2/32, packet_action: disable_trim}\n",
        1518,
    );
    let r = run(&f, "tc7.json", &[]);
    assert!(flow(&r, "a")
        .get("trimmed_packets")
        .is_none_or(|v| u(v) == 0));
    assert!(u(&flow(&r, "b")["trimmed_packets"]) > 0);
    let q1 = queue(&r, 0, 1);
    assert!(u(&q1["drop_packets"]) > u(&q1["trim_packets"]));
    let rule = &r["switches"][0]["acl"][0];
    assert!(u(&rule["packets"]) > 0, "{rule}");
}

/// An RC receiver hears of every trimmed packet: with trimming, every flow of an incast
/// of RC messages on a lossy class is done in about the time the link needs (1.38 ms of
/// frames, plus the trimmed copies), with NAKs and no local ACK timeout, where plain drops
/// leave the flows that lost their tail waiting 4.295 s (docs/labs/lossy-vs-lossless.md).
/// docs/labs/trimming.md derives the same incast's numbers.
#[test]
fn rc_recovers_from_trimming_with_naks() {
    let text = std::fs::read_to_string(common::root().join("configs/labs/lossy-vs-lossless.yaml"))
        .unwrap()
        .replace(
            "    qos: {pfc_enable: [3, 4]}     # [] makes priority 3 lossy",
            "    qos: {pfc_enable: [4]}\n    trimming: {size: 128B, dscp: 4, queue: 4, queues: [3]}",
        );
    let r = run(&scenario("trim-rc.yaml", &text), "trim-rc.json", &[]);
    let q3 = queue(&r, 0, 3);
    assert!(u(&q3["trim_packets"]) > 1000);
    for i in 1..=8 {
        let fl = flow(&r, &format!("f{i}"));
        let fct = u(&fl["fct_ps"]);
        assert!(fct < 2_000_000_000, "f{i}: {fct} ps");
        assert_eq!(u(&fl["transport"]["timeouts"]), 0, "{fl}");
        assert!(u(&fl["transport"]["naks_received"]) > 0, "{fl}");
    }
}

#[test]
fn bad_trimming_names_the_file_line_key_and_rule() {
    let sw = |t: &str, qos: &str| {
        format!("switches:\n  - name: s\n    ports: {{count: 2}}\n    qos: {{pfc_enable: [3, 4]{qos}}}\n    trimming: {t}\n")
    };
    expect_config_errors(&[
        (
            sw("{size: 64B, dscp: 48, queue: 6}", ""),
            "s.trimming.size",
            "a trimmed frame keeps its headers",
        ),
        (
            sw("{dscp: 64, queue: 6}", ""),
            "s.trimming.dscp",
            "outside 0–63",
        ),
        (
            sw("{dscp: from_tc, queue: 6}", ""),
            "s.trimming.tc",
            "needs `tc`",
        ),
        (
            sw("{dscp: from_tc, tc: 5, queue: 6, queues: [1]}", ""),
            "s.trimming.dscp",
            "has none",
        ),
        (
            sw("{dscp: 48, queue: sometimes}", ""),
            "s.trimming.queue",
            "0–7 or dynamic",
        ),
        (
            sw("{dscp: 48, queue: 6, queues: [3]}", ""),
            "s.trimming.queues",
            "trimming on a lossless queue",
        ),
    ]);
}
