//! Action profiles and selectors (ECMP): an indirect table's entries name members of its
//! action profile or groups of its selector; a group's member is the one the selector's
//! hash of the frame picks, `hash % size` among the members in the order of their
//! handles, as BMv2 picks it. The expected ports are derived from CRC-16/ARC of the
//! packed inputs (source then destination address), independently of the lookup.

mod common;

use common::*;
use lossless_p4::entries::{apply, cli};
use lossless_p4::hash::crc16_arc;
use lossless_p4::v1model::Verdict;
use lossless_p4::V1Model;
use serde_json::json;

/// The router with its LPM table made an `indirect_ws` table over a selector hashing the
/// IPv4 source and destination with crc16; a member sets the egress port.
fn ecmp() -> Prog {
    let mut p = router();
    p.actions.push(action(
        3,
        "MyIngress.set_nhop",
        &[("port", 9)],
        vec![assign(f("standard_metadata", "egress_spec"), param(0))],
    ));
    let mut t = table(
        "MyIngress.ecmp",
        0,
        &[("lpm", "ipv4", "dstAddr")],
        &[("MyIngress.set_nhop", 3), ("MyIngress.drop", 1)],
        (1, vec![]),
        None,
    );
    t["type"] = json!("indirect_ws");
    t["action_profile"] = json!("MyIngress.ecmp_selector");
    t.as_object_mut().unwrap().remove("default_entry");
    // p4c lists the selector's fields in the key too, as `selector` matches.
    t["key"]
        .as_array_mut()
        .unwrap()
        .push(json!({"match_type": "selector", "name": "hdr.ipv4.srcAddr", "target": ["ipv4", "srcAddr"], "mask": null}));
    p.ingress = (
        Some("node_2".into()),
        vec![t],
        vec![conditional(
            "node_2",
            0,
            d2b(f("ipv4", "$valid$")),
            Some("MyIngress.ecmp"),
            None,
        )],
    );
    p.action_profiles.push(json!({
        "name": "MyIngress.ecmp_selector", "id": 0, "max_size": 64,
        "selector": {"algo": "crc16", "input": [
            {"type": "field", "value": ["ipv4", "srcAddr"]},
            {"type": "field", "value": ["ipv4", "dstAddr"]}
        ]}
    }));
    p
}

/// Members 0–3 send to ports 1–4; group 0 holds all four, added out of order; 10/8 goes
/// to the group, 192.168/16 to member 2 alone.
const ENTRIES: &str = "\
act_prof_create_member ecmp_selector set_nhop 1
act_prof_create_member ecmp_selector set_nhop 2
act_prof_create_member ecmp_selector set_nhop 3
act_prof_create_member ecmp_selector set_nhop 4
act_prof_create_group ecmp_selector
act_prof_add_member_to_group ecmp_selector 3 0
act_prof_add_member_to_group ecmp_selector 0 0
act_prof_add_member_to_group ecmp_selector 2 0
act_prof_add_member_to_group ecmp_selector 1 0
table_indirect_add_with_group ecmp 10.0.0.0/8 => 0
table_indirect_add ecmp 192.168.0.0/16 => 2
";

fn switch(entries: &str) -> Result<V1Model, String> {
    let mut sw = V1Model::new(ecmp().load());
    let c = cli(&sw.program, "ecmp.txt", entries).map_err(|e| e.to_string())?;
    apply(&sw.program, &mut sw.tables, &mut sw.externs.registers, c).map_err(|e| e.to_string())?;
    Ok(sw)
}

fn port(sw: &mut V1Model, src: [u8; 4], dst: [u8; 4]) -> Verdict {
    let frame = eth([2; 6], [4; 6], 0x0800, &ipv4(src, dst, 64, 0, &[]));
    sw.ingress(&frame, frame.len(), 0, 0).0
}

#[test]
fn a_group_spreads_flows_by_the_selectors_hash_and_a_member_pins_them() {
    let mut sw = switch(ENTRIES).unwrap();
    let mut per_port = [0u32; 5];
    for i in 0..400u32 {
        let src = [198, 18, (i >> 8) as u8, i as u8];
        let dst = [10, 1, 2, 3];
        let mut packed = src.to_vec();
        packed.extend_from_slice(&dst);
        // Members in handle order 0, 1, 2, 3 → ports 1, 2, 3, 4.
        let want = 1 + (crc16_arc(&packed) % 4) as u16;
        assert_eq!(
            port(&mut sw, src, dst),
            Verdict::Forward {
                port: want,
                priority: 0
            },
            "{src:?}"
        );
        per_port[want as usize] += 1;
        // The same flow always takes the same member.
        assert_eq!(
            port(&mut sw, src, dst),
            Verdict::Forward {
                port: want,
                priority: 0
            }
        );
    }
    // CRC-16 is linear: over consecutive sources its two low bits take two values here
    // (200 flows each on ports 1 and 2), as they would in BMv2. More than one member is
    // used, and the counts are what the hash says.
    assert!(
        per_port[1..].iter().filter(|&&n| n > 0).count() >= 2,
        "{per_port:?}"
    );
    // A member entry: every flow to 192.168/16 leaves by member 2's port, 3.
    for i in 0..20u8 {
        assert_eq!(
            port(&mut sw, [198, 18, 0, i], [192, 168, 1, i]),
            Verdict::Forward {
                port: 3,
                priority: 0
            }
        );
    }
    // A miss with no default set runs nothing: egress_spec stays 0, as BMv2's EMPTY.
    assert_eq!(
        port(&mut sw, [198, 18, 0, 1], [172, 16, 0, 1]),
        Verdict::Forward {
            port: 0,
            priority: 0
        }
    );
    // With a default member, the miss takes it.
    let mut sw = switch(&format!("{ENTRIES}table_indirect_set_default ecmp 1\n")).unwrap();
    assert_eq!(
        port(&mut sw, [198, 18, 0, 1], [172, 16, 0, 1]),
        Verdict::Forward {
            port: 2,
            priority: 0
        }
    );
}

#[test]
fn wrong_uses_of_profiles_are_refused_saying_why() {
    let err = |extra: &str| switch(&format!("{ENTRIES}{extra}\n")).unwrap_err();
    let e = err("table_add ecmp set_nhop 10.2.0.0/16 => 1");
    assert!(
        e.contains("ecmp.txt:12") && e.contains("is indirect"),
        "{e}"
    );
    let e = err("table_indirect_add ecmp 10.3.0.0/16 => 7");
    assert!(e.contains("has no member 7"), "{e}");
    let e = err("table_indirect_add_with_group ecmp 10.3.0.0/16 => 1");
    assert!(e.contains("has no group 1"), "{e}");
    let e = err("act_prof_add_member_to_group ecmp_selector 1 0");
    assert!(e.contains("already in group 0"), "{e}");
    let e = err("act_prof_create_member ecmp_selector ipv4_forward 1 2");
    assert!(e.contains("has no action `ipv4_forward`"), "{e}");
    let e = err("act_prof_create_member nowhere set_nhop 1");
    assert!(e.contains("no action profile `nowhere`"), "{e}");
    // A profile without a selector has members only.
    let mut p = ecmp();
    p.action_profiles[0]
        .as_object_mut()
        .unwrap()
        .remove("selector");
    p.ingress.1[0]["type"] = json!("indirect");
    let prog = p.load();
    let mut sw = V1Model::new(prog);
    let c = cli(
        &sw.program,
        "m.txt",
        "act_prof_create_group ecmp_selector\n",
    )
    .unwrap();
    let e = apply(&sw.program, &mut sw.tables, &mut sw.externs.registers, c)
        .unwrap_err()
        .to_string();
    assert!(e.contains("m.txt:1") && e.contains("no selector"), "{e}");
    // And a table whose type and profile disagree is refused at load, by place.
    let mut p = ecmp();
    p.ingress.1[0]["type"] = json!("indirect");
    let e = lossless_p4::load(&p.json().to_string())
        .unwrap_err()
        .to_string();
    assert!(e.contains("pipelines[0].tables[0].type"), "{e}");
}
