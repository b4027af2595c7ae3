//! The ACL stage through the CLI and the JSON contract: overlapping prefixes at different
//! priorities pick the rule SONiC's (SAI's) priority order picks, a drop rule's frames are
//! counted as `acl` drops and never queued, `set_tc` moves frames to the new class's queue,
//! `set_dscp` rewrites the frames that leave (read back from the pcap), and each rule's
//! counters equal the frames the paper assignment gives it.

mod common;

use common::{run, scenario, tmp, u};
use pcap_file::pcap::PcapReader;
use serde_json::Value;

/// h1 (198.18.1.1), h2 (198.18.1.2) and h3 (198.18.2.3) send to h0 through one switch:
/// - a: h1, DSCP 3, UDP → 5000, 100 frames of 1000 B
/// - b: h2, DSCP 3, UDP → 6000, 50 frames of 500 B
/// - c: h3, DSCP 0, UDP → 7000, 30 frames of 300 B
///
/// Table DATAACL (every port), three rules whose source prefixes nest:
/// - WIDE   (priority 100) 198.18.0.0/16, forward: only c falls through to it (30)
/// - DROP   (priority 200) 198.18.1.0/24 and L4 port 6000, drop: b (50)
/// - NARROW (priority 300) 198.18.1.1/32, set_tc 4: a (100), now queue 4
///
/// Table REMARK, bound to Ethernet3 only: DSCP 0 → set_dscp 46 (c's 30 frames).
const TEXT: &str = "\
name: acl
duration: 1ms
switches:
  - name: tor
    ports: {count: 4, speed: 100G}
    acl:
      DATAACL:
        type: L3
        rules:
          WIDE: {priority: 100, src_ip: 198.18.0.0/16}
          DROP: {priority: 200, src_ip: 198.18.1.0/24, ip_protocol: 17, l4_dst_port: 6000, packet_action: drop}
          NARROW: {priority: 300, src_ip: 198.18.1.1/32, set_tc: 4}
      REMARK:
        ports: [Ethernet3]
        rules:
          TO_EF: {priority: 10, dscp: 0, set_dscp: 46}
hosts:
  - {name: h0, attach: tor:Ethernet0, ip: 198.18.0.10}
  - {name: h1, attach: tor:Ethernet1, ip: 198.18.1.1}
  - {name: h2, attach: tor:Ethernet2, ip: 198.18.1.2}
  - {name: h3, attach: tor:Ethernet3, ip: 198.18.2.3}
flows:
  - {name: a, src: h1, dst: h0, dscp: 3, dst_port: 5000, frame: 1000, packets: 100}
  - {name: b, src: h2, dst: h0, dscp: 3, dst_port: 6000, frame: 500, packets: 50}
  - {name: c, src: h3, dst: h0, dscp: 0, dst_port: 7000, frame: 300, packets: 30}
outputs: {pcap: {ports: [tor:Ethernet0]}}
";

fn rule<'a>(r: &'a Value, table: &str, name: &str) -> &'a Value {
    r["switches"][0]["acl"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["table"] == table && x["rule"] == name)
        .unwrap_or_else(|| panic!("no {table}|{name}"))
}

#[test]
fn overlapping_prefixes_pick_the_highest_priority_rule_and_count_it() {
    let dir = tmp("acl-pcap");
    let r = run(
        &scenario("acl.yaml", TEXT),
        "acl.json",
        &["--pcap-dir", dir.to_str().unwrap()],
    );
    let counts = |t: &str, n: &str| {
        let x = rule(&r, t, n);
        (u(&x["packets"]), u(&x["bytes"]))
    };
    assert_eq!(counts("DATAACL", "NARROW"), (100, 100_000));
    assert_eq!(counts("DATAACL", "DROP"), (50, 25_000));
    assert_eq!(counts("DATAACL", "WIDE"), (30, 9_000));
    assert_eq!(counts("REMARK", "TO_EF"), (30, 9_000));
    // Lookup order in the report: priority descending.
    let order: Vec<&str> = r["switches"][0]["acl"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["table"] == "DATAACL")
        .map(|x| x["rule"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["NARROW", "DROP", "WIDE"]);
    assert_eq!(rule(&r, "DATAACL", "DROP")["action"], "drop");

    let sw = &r["switches"][0];
    assert_eq!(u(&sw["drops_by_reason"]["acl"]), 50);
    assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
    let q = |i: usize| u(&sw["ports"][0]["queues"][i]["tx_packets"]);
    // a re-classed to TC 4 → queue 4; b dropped, so queue 3 carries nothing; c on TC 1.
    assert_eq!((q(3), q(4), q(1)), (0, 100, 30));
    assert_eq!(u(&common::flow(&r, "b")["rx_packets"]), 0);
    assert_eq!(u(&common::flow(&r, "a")["rx_packets"]), 100);

    // What left on Ethernet0: c's frames carry DSCP 46, a's still DSCP 3 (set_tc keeps the
    // header), every IPv4 checksum still valid.
    let mut rd =
        PcapReader::new(std::fs::File::open(dir.join("tor-Ethernet0.pcap")).unwrap()).unwrap();
    let (mut ef, mut three) = (0, 0);
    while let Some(p) = rd.next_packet() {
        let p = p.unwrap();
        let ip = etherparse::Ipv4HeaderSlice::from_slice(&p.data[14..]).unwrap();
        let h = ip.to_header();
        assert_eq!(h.header_checksum, h.calc_header_checksum());
        match ip.dcp().value() {
            46 => ef += 1,
            3 => three += 1,
            d => panic!("DSCP {d} left Ethernet0"),
        }
    }
    assert_eq!((ef, three), (30, 100));
}

#[test]
fn check_prints_the_rules_in_lookup_order() {
    let o = common::lossless(&["check", scenario("acl-check.yaml", TEXT).to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let at = |s: &str| out.find(s).unwrap_or_else(|| panic!("`{s}` not in\n{out}"));
    assert!(
        at("NARROW") < at("DROP") && at("DROP") < at("WIDE"),
        "{out}"
    );
    assert!(out.contains("set_dscp 46"), "{out}");
}
