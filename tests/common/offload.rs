//! A host that keeps its segmentation offload on, as Linux leaves it: the super-frames it
//! hands its port are counted by the switch as the MTU frames a NIC would have sent.

use super::lab::{Lab, SwitchSpec};
use super::ledger::assert_accounted;
use serde_json::Value;

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Received IP packets that carried CE, as host `i`'s kernel counts them (`IpExt
/// InCEPkts` in /proc/net/netstat, per namespace).
fn ce_packets_received(lab: &Lab, i: usize) -> u64 {
    let o = lab.exec(i, &["cat", "/proc/net/netstat"]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut lines = text.lines().filter(|l| l.starts_with("IpExt:"));
    let (names, values) = (lines.next().unwrap(), lines.next().unwrap());
    let k = names
        .split_whitespace()
        .position(|n| n == "InCEPkts")
        .expect("IpExt InCEPkts");
    values.split_whitespace().nth(k).unwrap().parse().unwrap()
}

/// TCP from a host with TSO on through a 2-port 1G switch on TAP ports (or, with `veth`,
/// interface ports): super-frames are cut, and queues, ECN marks and PFC count MTU
/// segments. Lab `tag`; the caller holds the TAP tests' lock.
pub fn tcp_super_frames_are_counted_in_mtu_segments(tag: &str, veth: bool) {
    // WRED/ECN on the lossy queue 4, marking every ECN-capable frame over 20 KB queued.
    let spec = SwitchSpec {
        qos: ", wred_profiles: {mark: {green_min: 20KB, green_max: 40KB, green_drop_probability: 100, ecn: ecn_all}}, queue_wred: {\"4\": mark}",
        // XOFF once the lossless PG holds 1/128 of the 8 MB pool's free space (≤ 64 KiB).
        pg_lossless: "{pool: ingress_lossless_pool, dynamic_th: -7, xoff: 1.7MB, xon_offset: 16KB}",
        veth,
        ..SwitchSpec::new(2, "1G")
    };
    let mut lab = Lab::with(tag, false, &spec, &[]);
    // A TAP offers its host segmentation offload, a veth has it, and Linux takes it by
    // default.
    let k = lab.exec(0, &["ethtool", "-k", &lab.tap(0)]);
    let features = String::from_utf8_lossy(&k.stdout).into_owned();
    assert!(
        features.contains("tcp-segmentation-offload: on"),
        "{features}"
    );
    for i in 0..2 {
        let o = lab.exec(i, &["sysctl", "-qw", "net.ipv4.tcp_ecn=1"]);
        assert!(o.status.success());
    }
    // DSCP 4 (ECN-capable): marked on queue 4. DSCP 3: lossless, paused at the PG.
    let ce_before = ce_packets_received(&lab, 1);
    let ecn_gbps = lab.iperf3_tcp(0, 1, 5203, 2, &["--tos", "16"]);
    let ce = ce_packets_received(&lab, 1) - ce_before;
    let pfc_gbps = lab.iperf3_tcp(0, 1, 5204, 2, &["--tos", "12"]);
    eprintln!("TSO on: {ecn_gbps:.3} Gbit/s marked, {pfc_gbps:.3} Gbit/s lossless");
    let r = lab.stop_switch();
    assert_accounted(&r);
    let tap = &r["tap"];
    let (cut, segments) = (u(&tap["segmented_frames"]), u(&tap["segments"]));
    // The host handed over super-frames, each cut into several MTU frames.
    assert!(cut > 100, "{tap}");
    assert!(segments >= 4 * cut, "{tap}");
    assert_eq!(u(&tap["oversize_frames"]), 0, "{tap}");
    let sw = &r["switches"][0];
    assert_eq!(sw["drops_by_reason"]["giant"].as_u64().unwrap_or(0), 0);
    // Queues count frames of at most the MTU, the segments among them.
    let q = |k: usize| &sw["ports"][1]["queues"][k];
    let sent = u(&q(3)["tx_packets"]) + u(&q(4)["tx_packets"]);
    assert!(sent >= segments, "{} {}", q(3), q(4));
    for k in [3, 4] {
        assert!(
            u(&q(k)["tx_bytes"]) <= 1518 * u(&q(k)["tx_packets"]),
            "{}",
            q(k)
        );
    }
    // ECN: every frame the switch marked is one CE packet at the receiver.
    let marked = u(&q(4)["ecn_marked"]);
    assert!(marked > 0, "{}", q(4));
    assert_eq!(marked, ce, "marked by the switch = CE packets received");
    // PFC: the lossless PG crossed its threshold and sent XOFF (the host's stack ignores
    // it and fills the headroom); admitted frame by frame, its shared part never held
    // more than the limit (≤ 64 KiB) and one MTU frame's cells.
    let p0 = &sw["ports"][0];
    let pg = &p0["pgs"][3];
    assert!(u(&p0["pfc"]["tx_xoff"][3]) > 0, "{}", p0["pfc"]);
    assert!(u(&pg["headroom_watermark_bytes"]) > 0, "{pg}");
    assert!(u(&pg["shared_watermark_bytes"]) <= 65_536 + 1_536, "{pg}");
    assert_eq!(r["totals"]["lossless_drops"], 0);
}
