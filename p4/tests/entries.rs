//! Entries from the control plane's two forms — `simple_switch_CLI` commands and the P4
//! tutorials' runtime JSON — give the switch the same tables, and what is wrong in them is
//! named by line (or entry), table, key field or parameter, and rule.

mod common;

use common::*;
use lossless_p4::entries::{apply, cli, runtime_json};
use lossless_p4::v1model::Verdict;
use lossless_p4::V1Model;

const CLI: &str = "\
# the router of the tutorials' basic exercise, switch s1
table_set_default ipv4_lpm drop
table_add ipv4_lpm ipv4_forward 10.0.1.1/32 => 08:00:00:00:01:11 1
table_add MyIngress.ipv4_lpm MyIngress.ipv4_forward 10.0.2.0/24 => 08:00:00:00:02:00 2   # a prefix
";

const RUNTIME: &str = r#"{
  "target": "bmv2",
  "p4info": "build/basic.p4.p4info.txt",
  "bmv2_json": "build/basic.json",
  "table_entries": [
    {"table": "MyIngress.ipv4_lpm", "default_action": true, "action_name": "MyIngress.drop", "action_params": {}},
    {"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": ["10.0.1.1", 32]},
     "action_name": "MyIngress.ipv4_forward", "action_params": {"dstAddr": "08:00:00:00:01:11", "port": 1}},
    {"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": ["10.0.2.0", 24]},
     "action_name": "MyIngress.ipv4_forward", "action_params": {"dstAddr": "08:00:00:00:02:00", "port": 2}}
  ]
}"#;

fn switch_with(commands: Vec<(String, lossless_p4::entries::Command)>) -> V1Model {
    let mut sw = V1Model::new(router().load());
    apply(
        &sw.program,
        &mut sw.tables,
        &mut sw.externs.registers,
        commands,
    )
    .unwrap();
    sw
}

#[test]
fn cli_commands_and_runtime_json_give_the_same_forwarding() {
    let p = router().load();
    let a = switch_with(cli(&p, "s1-commands.txt", CLI).unwrap());
    let b = switch_with(runtime_json(&p, "s1-runtime.json", RUNTIME).unwrap());
    for mut sw in [a, b] {
        let to = |sw: &mut V1Model, dst: [u8; 4]| {
            let frame = eth(
                [2; 6],
                [4; 6],
                0x0800,
                &ipv4([10, 0, 9, 9], dst, 64, 0, &[]),
            );
            sw.ingress(&frame, frame.len(), 7, 0).0
        };
        assert_eq!(
            to(&mut sw, [10, 0, 1, 1]),
            Verdict::Forward {
                port: 1,
                priority: 0
            }
        );
        assert_eq!(
            to(&mut sw, [10, 0, 2, 77]),
            Verdict::Forward {
                port: 2,
                priority: 0
            }
        );
        assert_eq!(to(&mut sw, [10, 0, 3, 1]), Verdict::Drop);
        let t = sw.program.table("ipv4_lpm").unwrap();
        assert_eq!(sw.tables.entries(t).len(), 2);
    }
}

#[test]
fn bad_commands_name_the_line_the_table_the_key_and_the_rule() {
    let p = router().load();
    let cases = [
        ("table_add ipv4_lpm ipv4_forward 10.0.1.1 => 08:00:00:00:01:11 1", "t.txt:1: table MyIngress.ipv4_lpm, key hdr.ipv4.dstAddr: an LPM key is VALUE/LENGTH, not `10.0.1.1`"),
        ("\n\ntable_add ipv4_lpm ipv4_forward 10.0.1.1/40 => 08:00:00:00:01:11 1", "t.txt:3: table MyIngress.ipv4_lpm, key hdr.ipv4.dstAddr: a /40 prefix of a 32-bit field"),
        ("table_add ipv4_lpm ipv4_forward 10.0.1.1/32 => 08:00:00:00:01:11 512", "t.txt:1: table MyIngress.ipv4_lpm: parameter port: 512 does not fit 9 bits"),
        ("table_add ipv4_lpm ipv4_forward 10.0.1.1/32 => 1", "t.txt:1: table MyIngress.ipv4_lpm: action MyIngress.ipv4_forward takes 2 parameters (dstAddr, port), 1 given"),
        ("table_add ipv4_lmp drop 10.0.1.1/32 =>", "t.txt:1: no table `ipv4_lmp` (tables: MyIngress.ipv4_lpm)"),
        ("table_add ipv4_lpm forward 10.0.1.1/32 =>", "t.txt:1: table MyIngress.ipv4_lpm has no action `forward` (it runs MyIngress.ipv4_forward, MyIngress.drop, NoAction)"),
        ("mc_mgrp_create 1", "t.txt:1: `mc_mgrp_create` is not supported (table_add, table_set_default, table_indirect_add, table_indirect_add_with_group, table_indirect_set_default, table_indirect_set_default_with_group, act_prof_create_member, act_prof_create_group, act_prof_add_member_to_group and register_write are)"),
    ];
    for (text, want) in cases {
        let e = cli(&p, "t.txt", text).unwrap_err();
        assert_eq!(e.to_string(), want);
    }
    // Entries that read fine but the table refuses: the line that added it.
    let cmds = cli(
        &p,
        "t.txt",
        "table_add ipv4_lpm drop 10.0.0.0/8 =>\ntable_add ipv4_lpm drop 10.0.0.0/8 =>",
    )
    .unwrap();
    let mut sw = V1Model::new(router().load());
    let e = apply(&sw.program, &mut sw.tables, &mut sw.externs.registers, cmds).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.txt:2: table MyIngress.ipv4_lpm already has an entry with this key"
    );
    let bad = RUNTIME.replace("\"port\": 2", "\"prot\": 2");
    let e = runtime_json(&p, "r.json", &bad).unwrap_err();
    assert_eq!(e.to_string(), "r.json: table_entries[2]: table MyIngress.ipv4_lpm: action MyIngress.ipv4_forward needs parameter `port`");
    let bad = RUNTIME.replace(
        "hdr.ipv4.dstAddr\": [\"10.0.2.0\"",
        "hdr.ipv4.srcAddr\": [\"10.0.2.0\"",
    );
    let e = runtime_json(&p, "r.json", &bad).unwrap_err();
    assert_eq!(e.to_string(), "r.json: table_entries[2]: table MyIngress.ipv4_lpm: the match needs key field `hdr.ipv4.dstAddr`");
}

/// A prefix's bits past its length are not part of its key: 10.0.2.7/24 is 10.0.2.0/24,
/// refused beside it, and found by what it covers.
#[test]
fn an_lpm_key_is_its_prefix() {
    let p = router().load();
    let dup = format!("{CLI}table_add ipv4_lpm ipv4_forward 10.0.2.7/24 => 08:00:00:00:02:07 3\n");
    let mut sw = V1Model::new(router().load());
    let e = apply(
        &sw.program,
        &mut sw.tables,
        &mut sw.externs.registers,
        cli(&p, "s1.txt", &dup).unwrap(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("s1.txt:5") && e.contains("already has an entry with this key"),
        "{e}"
    );
    let mut sw = switch_with(
        cli(
            &p,
            "s1.txt",
            "table_add ipv4_lpm ipv4_forward 10.0.3.9/24 => 08:00:00:00:03:00 3\n",
        )
        .unwrap(),
    );
    let frame = eth(
        [2; 6],
        [4; 6],
        0x0800,
        &ipv4([10, 0, 9, 9], [10, 0, 3, 200], 64, 0, &[]),
    );
    assert_eq!(
        sw.ingress(&frame, frame.len(), 7, 0).0,
        Verdict::Forward {
            port: 3,
            priority: 0
        }
    );
}
