//! A P4 program (p4c's BMv2 JSON) in front of the traffic manager, through `lossless run`:
//! the shipped router forwards the incast exactly as the fixed pipeline does (same PFC,
//! same deliveries, nothing dropped), rewrites what its actions say on the wire, drops what
//! its table misses, and a bad program, entries file or option is refused naming the file,
//! the place in it and the rule (docs/p4.md).

mod common;

use common::{root, run, scenario, tmp, u};
use serde_json::Value;
use std::path::Path;

/// The shipped incast scenario with its P4 lines replaced by `p4`, written beside copies of
/// the shipped program (so `program:` and `entries:` resolve as in configs/p4/).
fn p4_scenario(name: &str, p4: &str, entries: &str) -> std::path::PathBuf {
    let dir = tmp(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        root().join("configs/p4/router.json"),
        dir.join("router.json"),
    )
    .unwrap();
    std::fs::write(dir.join("entries.txt"), entries).unwrap();
    let text = std::fs::read_to_string(root().join("configs/p4/incast-router.yaml")).unwrap();
    let shipped = "    p4: {program: router.json, entries: router-entries.txt}\n";
    assert_eq!(text.matches(shipped).count(), 1);
    let file = dir.join("scenario.yaml");
    std::fs::write(&file, text.replace(shipped, p4)).unwrap();
    file
}

/// The shipped entries with each next hop's MAC changed to 02:00:00:00:aa:0N.
fn entries_with_macs() -> String {
    std::fs::read_to_string(root().join("configs/p4/router-entries.txt"))
        .unwrap()
        .replace("=> 02:00:00:00:00:0", "=> 02:00:00:00:aa:0")
}

/// The frames of a classic pcap file.
fn pcap_frames(path: &Path) -> Vec<Vec<u8>> {
    let b = std::fs::read(path).unwrap();
    // Microsecond or nanosecond timestamps, little-endian.
    assert!(
        matches!(b[..4], [0xd4, 0xc3, 0xb2, 0xa1] | [0x4d, 0x3c, 0xb2, 0xa1]),
        "{}",
        path.display()
    );
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= b.len() {
        let caplen = u32::from_le_bytes(b[at + 8..at + 12].try_into().unwrap()) as usize;
        out.push(b[at + 16..at + 16 + caplen].to_vec());
        at += 16 + caplen;
    }
    out
}

/// The ones' complement sum check of an IPv4 header: 0 when its checksum is right.
fn ipv4_check(h: &[u8]) -> u16 {
    let mut s: u32 = h
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]) as u32)
        .sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

fn drops(sw: &Value, reason: &str) -> u64 {
    sw["drops_by_reason"][reason].as_u64().unwrap_or(0)
}

#[test]
fn the_router_program_forwards_the_incast_as_the_fixed_pipeline_does() {
    let fixed = run(
        &root().join("configs/labs/incast-pfc.yaml"),
        "p4-fixed.json",
        &[],
    );
    let p4 = run(
        &root().join("configs/p4/incast-router.yaml"),
        "p4-router.json",
        &[],
    );
    // Same deliveries per flow, same PFC frames per port and priority, nothing dropped:
    // the program chose the same ports the FDB would, and the TM under it is the same.
    for (a, b) in fixed["flows"]
        .as_array()
        .unwrap()
        .iter()
        .zip(p4["flows"].as_array().unwrap())
    {
        assert_eq!(a["rx_packets"], b["rx_packets"], "{}", a["name"]);
        assert_eq!(a["fct_ps"], b["fct_ps"], "{}", a["name"]);
    }
    let (sf, sp) = (&fixed["switches"][0], &p4["switches"][0]);
    for (a, b) in sf["ports"]
        .as_array()
        .unwrap()
        .iter()
        .zip(sp["ports"].as_array().unwrap())
    {
        assert_eq!(a["pfc"], b["pfc"]);
    }
    assert!(u(&sp["ports"][0]["pfc"]["rx_xoff"][3]) == 0);
    assert!(sp["ports"][1]["pfc"]["tx_xoff"][3].as_u64().unwrap() > 0);
    assert_eq!(sp["drops_by_reason"], serde_json::json!({}));
    // Every data frame the switch received hit the LPM table (each /32 is an entry).
    let t = &sp["p4"]["tables"][0];
    assert_eq!(t["name"], "MyIngress.ipv4_lpm");
    assert_eq!(u(&t["entries"]), 4);
    assert_eq!(u(&t["misses"]), 0);
    let sent: u64 = p4["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| u(&f["rx_packets"]))
        .sum();
    assert!(u(&t["hits"]) >= sent, "{t} {sent}");
    assert_eq!(sp["p4"]["queue_depth"], "packets");
}

#[test]
fn the_program_rewrites_macs_and_ttl_on_the_wire() {
    let file = p4_scenario(
        "p4-rewrite",
        "    p4: {program: router.json, entries: entries.txt}\n",
        &entries_with_macs(),
    );
    let pcaps = tmp("p4-rewrite/pcap");
    let r = run(
        &file,
        "p4-rewrite.json",
        &["--duration", "30us", "--pcap-dir", pcaps.to_str().unwrap()],
    );
    let mut seen = 0;
    for (port, sent_in) in [(0, false), (1, true)] {
        for f in pcap_frames(&pcaps.join(format!("tor-Ethernet{port}.pcap"))) {
            if f.len() < 34 || f[12..14] != [0x08, 0x00] {
                continue; // PFC frames
            }
            let ip = &f[14..34];
            assert_eq!(ipv4_check(ip), 0, "checksum of {ip:02x?}");
            if sent_in {
                // As h1 sent it, toward the switch.
                if ip[12..16] == [198, 18, 0, 2] {
                    assert_eq!(ip[8], 64);
                }
            } else {
                // As the program wrote it: next hop's MAC, the old destination as source.
                assert_eq!(f[..6], [2, 0, 0, 0, 0xaa, 1]);
                assert_eq!(f[6..12], [2, 0, 0, 0, 0, 1]);
                assert_eq!(ip[8], 63);
                seen += 1;
            }
        }
    }
    assert!(seen > 10, "{seen} frames to h0");
    assert!(u(&r["flows"][0]["rx_packets"]) > 0);
}

#[test]
fn without_entries_the_table_misses_and_every_frame_is_dropped_by_the_program() {
    let file = p4_scenario("p4-empty", "    p4: {program: router.json}\n", "");
    let r = run(&file, "p4-empty.json", &["--duration", "50us"]);
    let sw = &r["switches"][0];
    let t = &sw["p4"]["tables"][0];
    assert_eq!(u(&t["entries"]), 0);
    assert_eq!(u(&t["hits"]), 0);
    let misses = u(&t["misses"]);
    assert!(misses > 0);
    // The program's default action (NoAction) leaves egress_spec at 0 in BMv2... the
    // router's default is `drop`, which marks it: each miss is one p4_drop.
    assert_eq!(drops(sw, "p4_drop"), misses);
    for f in r["flows"].as_array().unwrap() {
        assert_eq!(u(&f["rx_packets"]), 0, "{}", f["name"]);
    }
}

#[test]
fn queue_depth_is_given_in_the_unit_asked_for() {
    for unit in ["packets", "cells", "bytes"] {
        let file = p4_scenario(
            &format!("p4-depth-{unit}"),
            &format!(
                "    p4: {{program: router.json, entries: entries.txt, queue_depth: {unit}}}\n"
            ),
            &entries_with_macs(),
        );
        let r = run(
            &file,
            &format!("p4-depth-{unit}.json"),
            &["--duration", "20us"],
        );
        assert_eq!(r["switches"][0]["p4"]["queue_depth"], unit);
    }
}

/// `lossless check FILE` and its stderr.
fn check(file: &Path) -> (bool, String) {
    let o = common::lossless(&["check", file.to_str().unwrap()]);
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

#[test]
fn bad_programs_entries_and_options_are_refused_naming_file_place_and_rule() {
    let dir = tmp("p4-bad");
    std::fs::create_dir_all(&dir).unwrap();
    let good_entries = entries_with_macs();

    // A program file that is not there.
    let f = p4_scenario(
        "p4-bad/missing",
        "    p4: {program: nowhere.json}\n",
        &good_entries,
    );
    let (ok, err) = check(&f);
    assert!(!ok);
    assert!(err.contains("scenario.yaml:14"), "{err}");
    assert!(err.contains("tor.p4.program"), "{err}");
    assert!(err.contains("nowhere.json"), "{err}");

    // A program with a construct the interpreter refuses: named by its place in the JSON.
    let f = p4_scenario(
        "p4-bad/unsupported",
        "    p4: {program: router.json, entries: entries.txt}\n",
        &good_entries,
    );
    let json = f.parent().unwrap().join("router.json");
    let mut prog: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let actions = prog["actions"].as_array_mut().unwrap();
    let n = actions.len() - 1;
    actions[n]["primitives"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"op": "clone_ingress_pkt_to_egress", "parameters": []}));
    std::fs::write(&json, serde_json::to_string(&prog).unwrap()).unwrap();
    let (ok, err) = check(&f);
    assert!(!ok);
    assert!(err.contains("tor.p4.program"), "{err}");
    assert!(
        err.contains(&format!("actions[{n}].primitives["))
            && err.contains("clone_ingress_pkt_to_egress"),
        "{err}"
    );
    assert!(err.contains("not supported"), "{err}");

    // An entries file with a bad line: its file and line, the table and the rule.
    let bad = format!(
        "{good_entries}table_add ipv4_lpm ipv4_forward 198.18.0.9/40 => 02:00:00:00:00:09 1\n"
    );
    let f = p4_scenario(
        "p4-bad/entries",
        "    p4: {program: router.json, entries: entries.txt}\n",
        &bad,
    );
    let (ok, err) = check(&f);
    assert!(!ok);
    let line = bad.lines().count();
    assert!(err.contains(&format!("entries.txt:{line}")), "{err}");
    assert!(err.contains("ipv4_lpm"), "{err}");

    // A table the program does not have.
    let f = p4_scenario(
        "p4-bad/table",
        "    p4: {program: router.json, entries: entries.txt}\n",
        "table_add no_such_table drop 1 =>\n",
    );
    let (ok, err) = check(&f);
    assert!(!ok);
    assert!(err.contains("entries.txt:1"), "{err}");
    assert!(err.contains("no_such_table"), "{err}");

    // An unknown queue depth unit.
    let f = p4_scenario(
        "p4-bad/unit",
        "    p4: {program: router.json, queue_depth: kilobytes}\n",
        "",
    );
    let (ok, err) = check(&f);
    assert!(!ok);
    assert!(err.contains("tor.p4.queue_depth"), "{err}");
    assert!(
        err.contains("packets") && err.contains("cells") && err.contains("bytes"),
        "{err}"
    );

    // An unknown key under p4.
    let f = p4_scenario(
        "p4-bad/key",
        "    p4: {program: router.json, tables: x}\n",
        "",
    );
    let (ok, err) = check(&f);
    assert!(!ok);
    assert!(err.contains("tables"), "{err}");

    // A P4 switch with the fixed pipeline's forwarding table too.
    let f = scenario(
        "p4-bad-forwarding.yaml",
        &format!(
            "switches:\n  - name: s\n    ports: {{count: 2}}\n    p4: {{program: {}}}\n    forwarding: {{mode: l2}}\n",
            root().join("configs/p4/router.json").display()
        ),
    );
    let (ok, err) = check(&f);
    assert!(!ok);
    assert!(err.contains("s.forwarding"), "{err}");
    assert!(err.contains("P4 program"), "{err}");
}

#[test]
#[ignore = "needs root, /dev/net/tun and iproute2, iputils-ping, iperf3, ethtool, util-linux (scripts/test)"]
fn a_tap_switch_routes_real_pings_through_the_program() {
    use common::lab::{prerequisites, Lab, SwitchSpec};
    let _serial = prerequisites();
    // Host i is 198.18.0.(i+1) with MAC 02:00:00:00:01:0(i+1), set once its namespace
    // exists; the program's entries route each /32 to its port and write that MAC.
    let dir = tmp("p4-tap");
    std::fs::create_dir_all(&dir).unwrap();
    let mac = |i: usize| format!("02:00:00:00:01:0{}", i + 1);
    let entries = dir.join("entries.txt");
    std::fs::write(
        &entries,
        format!(
            "table_set_default ipv4_lpm drop\n\
             table_add ipv4_lpm ipv4_forward 198.18.0.1/32 => {} 0\n\
             table_add ipv4_lpm ipv4_forward 198.18.0.2/32 => {} 1\n",
            mac(0),
            mac(1)
        ),
    )
    .unwrap();
    let p4 = format!(
        "{{program: {}, entries: {}}}",
        root().join("configs/p4/router.json").display(),
        entries.display()
    );
    let spec = SwitchSpec {
        p4: &p4,
        ..SwitchSpec::new(2, "1G")
    };
    let addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let mut lab = Lab::with("p4", false, &spec, &["--metrics", &addr]);
    for i in 0..2 {
        let o = lab.exec(
            i,
            &["ip", "link", "set", "dev", &lab.tap(i), "address", &mac(i)],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // The program routes IPv4 only: each host knows the other's MAC (as the P4
        // tutorials' hosts do), no ARP.
        let peer = 1 - i;
        let o = lab.exec(
            i,
            &[
                "ip",
                "neigh",
                "replace",
                &Lab::ip(peer),
                "lladdr",
                &mac(peer),
                "dev",
                &lab.tap(i),
                "nud",
                "permanent",
            ],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = lab.exec(
        0,
        &["ping", "-c", "5", "-i", "0.05", "-W", "2", &Lab::ip(1)],
    );
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{out}");
    // Through one router hop each way: the reply left host 1 with TTL 64.
    assert_eq!(out.matches("ttl=63").count(), 5, "{out}");
    // `lossless show p4` reads the running switch's tables (the endpoint answers within
    // a few seconds of start; tried for at most 10 s).
    let mut shown = String::new();
    for _ in 0..100 {
        let o = common::lossless(&["show", "p4", "--from", &addr]);
        shown = String::from_utf8_lossy(&o.stdout).to_string();
        if o.status.success() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let row = shown
        .lines()
        .find(|l| l.contains("MyIngress.ipv4_lpm"))
        .unwrap_or_else(|| panic!("{shown}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cols[1], "2", "{shown}");
    assert!(cols[2].parse::<u64>().unwrap() >= 10, "{shown}");
    let r = lab.stop_switch();
    let t = &r["switches"][0]["p4"]["tables"][0];
    // Five requests and five replies hit; anything else the hosts sent (IPv6 is off) missed.
    assert!(u(&t["hits"]) >= 10, "{t}");
    assert_eq!(drops(&r["switches"][0], "p4_drop"), u(&t["misses"]), "{r}");
}

#[test]
fn the_ecn_program_marks_the_same_frames_in_packets_and_in_cells() {
    // The shipped scenario: CE once the egress queue held 20 frames. Every frame but the
    // first ones the queue held fewer than 20 for is marked, and the receivers count the
    // marks the program wrote (the egress's bytes, not the switch's WRED).
    let packets = run(
        &root().join("configs/p4/ecn-incast.yaml"),
        "p4-ecn-packets.json",
        &[],
    );
    // The same threshold in cells: 1,518-byte frames take 6 cells of 256 bytes each, so
    // a queue of 20 frames is one of 120 cells, and the same frames are marked.
    let dir = tmp("p4-ecn-cells");
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["ecn-router.json", "ecn-entries-cells.txt"] {
        std::fs::copy(root().join("configs/p4").join(f), dir.join(f)).unwrap();
    }
    let text = std::fs::read_to_string(root().join("configs/p4/ecn-incast.yaml"))
        .unwrap()
        .replace(
            "entries: ecn-entries-packets.txt, queue_depth: packets",
            "entries: ecn-entries-cells.txt, queue_depth: cells",
        );
    assert!(text.contains("queue_depth: cells"));
    std::fs::write(dir.join("s.yaml"), text).unwrap();
    let cells = run(&dir.join("s.yaml"), "p4-ecn-cells.json", &[]);
    let marks = |r: &Value| -> Vec<(u64, u64)> {
        r["flows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (u(&f["rx_packets"]), u(&f["ce_marked"])))
            .collect()
    };
    assert_eq!(marks(&packets), marks(&cells));
    let t = |r: &Value| r["switches"][0]["p4"]["tables"][1].clone();
    assert_eq!(t(&packets), t(&cells));
    let table = t(&packets);
    assert_eq!(table["name"], "MyEgress.ecn_mark");
    // Each frame that hit the mark entry and reached its receiver is counted CE there;
    // the frames that missed (the queue below 20) arrive unmarked.
    let (rx, ce): (u64, u64) = marks(&packets)
        .iter()
        .fold((0, 0), |(a, b), (r, c)| (a + r, b + c));
    assert!(ce > 0 && ce <= u(&table["hits"]), "{ce} {table}");
    assert_eq!(rx - ce, u(&table["misses"]), "{table}");
    // PFC still held the lossless class: nothing dropped.
    assert_eq!(
        packets["switches"][0]["drops_by_reason"],
        serde_json::json!({})
    );
    assert!(u(&packets["switches"][0]["ports"][1]["pfc"]["tx_xoff"][3]) > 0);
}
