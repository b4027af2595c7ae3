//! Programs the project wrote (BMv2 JSON laid out as p4c lays it out for v1model), each
//! run on frames whose outcome is derived by hand: the verdict (port, traffic class or
//! drop) and the bytes that leave.

mod common;

use common::*;
use lossless_p4::program::{ActionCall, Value};
use lossless_p4::tables::{Entry, KeyMatch, Target};
use lossless_p4::v1model::{InFlight, Queueing, Verdict};
use lossless_p4::V1Model;
use serde_json::json;

const A: [u8; 6] = [0x02, 0, 0, 0, 0, 0xaa];
const B: [u8; 6] = [0x02, 0, 0, 0, 0, 0xbb];
const C: [u8; 6] = [0x02, 0, 0, 0, 0, 0xcc];

fn mac(m: [u8; 6]) -> Value {
    m.iter().fold(0, |v, &b| (v << 8) | b as Value)
}

/// Add an entry to table `table` running `action` with `data`.
fn add(
    sw: &mut V1Model,
    table: &str,
    key: Vec<KeyMatch>,
    priority: i64,
    action: &str,
    data: Vec<Value>,
) {
    let p = &sw.program;
    let t = p.table(table).expect("table");
    let a = p.action(action).expect("action");
    sw.tables
        .add(
            p,
            t,
            Entry {
                key,
                priority,
                action: Target::Action(ActionCall { action: a, data }),
            },
        )
        .unwrap();
}

/// Parser and ingress for a whole `frame` received on `port` at time 0.
fn ingress(sw: &mut V1Model, frame: &[u8], port: u16) -> (Verdict, InFlight) {
    sw.ingress(frame, frame.len(), port, 0)
}

/// The frame out of egress on `port` (no queueing), or None if egress dropped it.
fn through(sw: &mut V1Model, frame: &[u8], port: u16) -> (Verdict, Option<Vec<u8>>) {
    let (v, mut f) = sw.ingress(frame, frame.len(), port, 0);
    let out_port = match v {
        Verdict::Forward { port, .. } => port,
        _ => return (v, None),
    };
    let mut out = Vec::new();
    let kept = sw.egress(
        &mut f,
        frame,
        frame.len(),
        out_port,
        Queueing::default(),
        &mut out,
    );
    (v, kept.then_some(out))
}

/// L2 forwarding by a table on the destination MAC: a known MAC goes to its port, the
/// frame unchanged; an unknown one is dropped by the default action.
#[test]
fn l2_forwarding_by_table() {
    let mut p = Prog::default();
    p.actions.push(action(
        1,
        "MyIngress.forward",
        &[("port", 9)],
        vec![assign(f("standard_metadata", "egress_spec"), param(0))],
    ));
    p.actions
        .push(action(2, "MyIngress.drop", &[], vec![mark_to_drop()]));
    p.ingress = (
        Some("MyIngress.dmac".into()),
        vec![table(
            "MyIngress.dmac",
            0,
            &[("exact", "ethernet", "dstAddr")],
            &[("MyIngress.forward", 1), ("MyIngress.drop", 2)],
            (2, vec![]),
            None,
        )],
        vec![],
    );
    let mut sw = V1Model::new(p.load());
    add(
        &mut sw,
        "dmac",
        vec![KeyMatch::Exact(mac(B))],
        0,
        "forward",
        vec![3],
    );
    add(
        &mut sw,
        "dmac",
        vec![KeyMatch::Exact(mac(C))],
        0,
        "forward",
        vec![7],
    );
    let frame = eth(B, A, 0x88b5, &[1, 2, 3, 4]);
    let (v, out) = through(&mut sw, &frame, 1);
    assert_eq!(
        v,
        Verdict::Forward {
            port: 3,
            priority: 0
        }
    );
    assert_eq!(out.unwrap(), frame);
    assert_eq!(
        through(&mut sw, &eth(C, A, 0x0800, &[]), 1).0,
        Verdict::Forward {
            port: 7,
            priority: 0
        }
    );
    assert_eq!(
        through(&mut sw, &eth(A, B, 0x0800, &[]), 1).0,
        Verdict::Drop
    );
    let t = sw.program.table("dmac").unwrap();
    assert_eq!(
        (
            sw.tables.states[t.0 as usize].hits,
            sw.tables.states[t.0 as usize].misses
        ),
        (2, 1)
    );
}

#[test]
fn ipv4_lpm_rewrites_macs_decrements_ttl_and_updates_the_checksum() {
    let mut sw = V1Model::new(router().load());
    add(
        &mut sw,
        "ipv4_lpm",
        vec![KeyMatch::Lpm(0x0a00_0000, 8)],
        0,
        "ipv4_forward",
        vec![mac(B), 1],
    );
    add(
        &mut sw,
        "ipv4_lpm",
        vec![KeyMatch::Lpm(0x0a01_0000, 16)],
        0,
        "ipv4_forward",
        vec![mac(C), 2],
    );
    let payload = [0xde, 0xad, 0xbe, 0xef];
    let frame = eth(
        A,
        [2, 0, 0, 0, 0, 1],
        0x0800,
        &ipv4([10, 0, 0, 1], [10, 1, 2, 3], 64, 0, &payload),
    );
    let (v, out) = through(&mut sw, &frame, 5);
    // 10.1.2.3 is in both prefixes: the /16 wins.
    assert_eq!(
        v,
        Verdict::Forward {
            port: 2,
            priority: 0
        }
    );
    let want = eth(
        C,
        A,
        0x0800,
        &ipv4([10, 0, 0, 1], [10, 1, 2, 3], 63, 0, &payload),
    );
    assert_eq!(out.unwrap(), want);
    let (v, out) = through(
        &mut sw,
        &eth(A, C, 0x0800, &ipv4([10, 0, 0, 1], [10, 2, 0, 1], 1, 0, &[])),
        5,
    );
    assert_eq!(
        v,
        Verdict::Forward {
            port: 1,
            priority: 0
        }
    );
    let out = out.unwrap();
    assert_eq!(out[14 + 8], 0, "TTL 1 - 1");
    assert_eq!(
        checksum(&out[14..34]),
        0,
        "the header sums to 0 with its new checksum"
    );
    // Outside both prefixes: the default action drops it.
    assert_eq!(
        through(
            &mut sw,
            &eth(A, C, 0x0800, &ipv4([10, 0, 0, 1], [11, 0, 0, 1], 9, 0, &[])),
            5
        )
        .0,
        Verdict::Drop
    );
    // Not IPv4: the table is not applied, egress_spec stays 0, and the frame goes to
    // port 0 unchanged (what v1model does with a frame no action placed).
    let arp = eth(A, C, 0x0806, &[0; 28]);
    assert_eq!(
        through(&mut sw, &arp, 5),
        (
            Verdict::Forward {
                port: 0,
                priority: 0
            },
            Some(arp)
        )
    );
}

/// A header whose checksum is wrong sets `checksum_error`; one cut short stops the parser
/// with `PacketTooShort`; an EtherType no transition takes, with no default, `NoMatch`.
#[test]
fn parser_and_checksum_errors_reach_standard_metadata() {
    let mut p = router();
    // start selects only IPv4: no default.
    p.states[0] = state(
        "start",
        0,
        vec![extract("ethernet")],
        vec![f("ethernet", "etherType")],
        &[(Some(("0x0800", None)), Some("parse_ipv4"))],
    );
    // A program whose actions never read checksum_error is not checked (nothing it does
    // could differ): the field stays 0.
    let mut unread = V1Model::new(p.load());
    let mut bad = ipv4([10, 0, 0, 1], [10, 1, 2, 3], 64, 0, &[]);
    bad[10] ^= 0xff;
    let (_, fl) = ingress(&mut unread, &eth(A, B, 0x0800, &bad), 0);
    assert_eq!(
        fl.phv.fields[unread.program.std.checksum_error.0 as usize],
        0
    );
    // One that reads it (an action copying it to a register) is.
    p.register_arrays
        .push(json!({"name": "MyIngress.bad_sums", "id": 0, "size": 1, "bitwidth": 1}));
    p.actions.push(action(
        9,
        "MyIngress.note_checksum",
        &[],
        vec![prim(
            "register_write",
            vec![
                json!({"type": "register_array", "value": "MyIngress.bad_sums"}),
                hex(0),
                f("standard_metadata", "checksum_error"),
            ],
        )],
    ));
    let mut sw = V1Model::new(p.load());
    let std = sw.program.std;
    let read = |f: &lossless_p4::v1model::InFlight, x: lossless_p4::program::FieldId| {
        f.phv.fields[x.0 as usize]
    };
    let mut bad = ipv4([10, 0, 0, 1], [10, 1, 2, 3], 64, 0, &[]);
    bad[10] ^= 0xff;
    let (_, fl) = ingress(&mut sw, &eth(A, B, 0x0800, &bad), 0);
    assert_eq!(
        (read(&fl, std.checksum_error), read(&fl, std.parser_error)),
        (1, 0)
    );
    let (_, fl) = ingress(
        &mut sw,
        &eth(A, B, 0x0800, &[0x45, 0, 0, 20, 0, 0, 0, 0, 64, 17]),
        0,
    );
    assert_eq!(read(&fl, std.parser_error), 1, "PacketTooShort");
    assert!(fl.phv.is_valid(
        sw.program
            .headers
            .iter()
            .position(|h| h.name == "ethernet")
            .map(|i| lossless_p4::program::HeaderId(i as u32))
            .unwrap()
    ));
    let (_, fl) = ingress(&mut sw, &eth(A, B, 0x86dd, &[0; 40]), 0);
    assert_eq!(read(&fl, std.parser_error), 2, "NoMatch");
}

/// DSCP → traffic class: the top three bits of the DSCP become `priority`, which the
/// switch's queues act on; in egress, a frame queued behind 10 or more is marked CE when
/// ECN-capable (as the P4 tutorials' `ecn` exercise does), its checksum updated.
#[test]
fn dscp_sets_the_priority_and_egress_marks_ce_from_the_queue_depth() {
    let mut p = router();
    let n = p.actions.len() as u32;
    p.actions.push(action(
        n,
        "MyIngress.set_priority",
        &[],
        vec![assign(
            f("standard_metadata", "priority"),
            op("&", op(">>", f("ipv4", "diffserv"), hex(3)), hex(7)),
        )],
    ));
    p.actions.push(action(
        n + 1,
        "MyEgress.mark_ecn",
        &[],
        vec![assign(f("ipv4", "ecn"), hex(3))],
    ));
    p.ingress.1.push(table(
        "tbl_set_priority",
        1,
        &[],
        &[("MyIngress.set_priority", n)],
        (n, vec![]),
        None,
    ));
    // After the LPM table, the priority.
    p.ingress.1[0]["base_default_next"] = json!("tbl_set_priority");
    for a in ["MyIngress.ipv4_forward", "MyIngress.drop", "NoAction"] {
        p.ingress.1[0]["next_tables"][a] = json!("tbl_set_priority");
    }
    let ect = op(
        "or",
        op("==", f("ipv4", "ecn"), hex(1)),
        op("==", f("ipv4", "ecn"), hex(2)),
    );
    let deep = op(">=", f("standard_metadata", "enq_qdepth"), hex(10));
    p.egress = (
        Some("node_9".into()),
        vec![table(
            "tbl_mark_ecn",
            2,
            &[],
            &[("MyEgress.mark_ecn", n + 1)],
            (n + 1, vec![]),
            None,
        )],
        vec![conditional(
            "node_9",
            1,
            op("and", ect, deep),
            Some("tbl_mark_ecn"),
            None,
        )],
    );
    let mut sw = V1Model::new(p.load());
    add(
        &mut sw,
        "ipv4_lpm",
        vec![KeyMatch::Lpm(0x0a00_0000, 8)],
        0,
        "ipv4_forward",
        vec![mac(B), 4],
    );
    // DSCP 26 (AF31), ECT(0): tos 26 << 2 | 2.
    let frame = eth(
        A,
        C,
        0x0800,
        &ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64, 26 << 2 | 2, &[]),
    );
    for (depth, tos) in [(9, 26 << 2 | 2), (10, 26 << 2 | 3)] {
        let (v, mut fl) = sw.ingress(&frame, frame.len(), 1, 0);
        assert_eq!(
            v,
            Verdict::Forward {
                port: 4,
                priority: 3
            }
        );
        let mut out = Vec::new();
        let q = Queueing {
            enq_qdepth: depth,
            ..Queueing::default()
        };
        assert!(sw.egress(&mut fl, &frame, frame.len(), 4, q, &mut out));
        assert_eq!(out[15], tos, "queue depth {depth}");
        assert_eq!(checksum(&out[14..34]), 0);
    }
}

/// Counters and registers: each frame counted on its ingress port's counter (packets and
/// bytes), and its length written to that port's register.
#[test]
fn counters_and_registers_keep_per_port_state() {
    let mut p = Prog::default();
    p.counter_arrays
        .push(json!({"name": "MyIngress.port_frames", "id": 0, "is_direct": false, "size": 8}));
    p.register_arrays
        .push(json!({"name": "MyIngress.last_len", "id": 0, "size": 8, "bitwidth": 32}));
    p.actions.push(action(
        1,
        "MyIngress.account",
        &[],
        vec![
            prim(
                "count",
                vec![
                    json!({"type": "counter_array", "value": "MyIngress.port_frames"}),
                    f("standard_metadata", "ingress_port"),
                ],
            ),
            prim(
                "register_write",
                vec![
                    json!({"type": "register_array", "value": "MyIngress.last_len"}),
                    f("standard_metadata", "ingress_port"),
                    f("standard_metadata", "packet_length"),
                ],
            ),
        ],
    ));
    p.ingress = (
        Some("tbl_account".into()),
        vec![table(
            "tbl_account",
            0,
            &[],
            &[("MyIngress.account", 1)],
            (1, vec![]),
            None,
        )],
        vec![],
    );
    let mut sw = V1Model::new(p.load());
    for (port, len) in [(2u16, 60usize), (2, 100), (5, 1514)] {
        ingress(&mut sw, &eth(A, B, 0x0800, &vec![0; len - 14]), port);
    }
    let c = sw.program.counter("port_frames").unwrap();
    assert_eq!(sw.externs.counters[c][2], (2, 160));
    assert_eq!(sw.externs.counters[c][5], (1, 1514));
    let r = sw.program.register("last_len").unwrap();
    assert_eq!(
        (sw.externs.registers[r][2], sw.externs.registers[r][5]),
        (100, 1514)
    );
    // Port 9 is past the arrays' 8 entries: ignored and counted, never a panic.
    ingress(&mut sw, &eth(A, B, 0x0800, &[0; 46]), 9);
    assert_eq!(sw.externs.out_of_range, 2);
    // A simulated frame holds only its first bytes: its length (9,000 bytes with FCS,
    // 8,996 without) is what the program counts and reads, not the bytes held.
    let mut held = eth(A, B, 0x0800, &[0; 50]);
    let mut len = 9000;
    sw.ingress_in_place(&mut held, &mut len, 3, 0);
    assert_eq!(sw.externs.counters[c][3], (1, 8996));
    assert_eq!(sw.externs.registers[r][3], 8996);
    assert_eq!(len, 9000);
}

/// Source routing over a header stack (the P4 tutorials' `source_routing` exercise): the
/// parser extracts entries until one has its bottom-of-stack bit; ingress forwards to the
/// first entry's port and pops it, so the next hop reads the next.
#[test]
fn a_header_stack_is_parsed_popped_and_deparsed() {
    let mut p = Prog::default();
    p.header_types.push(
        json!({"name": "srcRoute_t", "id": 3, "fields": [["bos", 1, false], ["port", 15, false]]}),
    );
    for i in 0..4 {
        p.headers
            .push((format!("srcRoutes[{i}]"), "srcRoute_t".into(), false));
    }
    p.header_stacks.push(json!({"name": "srcRoutes", "id": 0, "header_type": "srcRoute_t", "size": 4, "header_ids": [3, 4, 5, 6]}));
    p.states = vec![
        state(
            "start",
            0,
            vec![extract("ethernet")],
            vec![f("ethernet", "etherType")],
            &[
                (Some(("0x1234", None)), Some("parse_srcRouting")),
                (None, None),
            ],
        ),
        state(
            "parse_srcRouting",
            1,
            vec![json!({"op": "extract", "parameters": [{"type": "stack", "value": "srcRoutes"}]})],
            vec![json!({"type": "stack_field", "value": ["srcRoutes", "bos"]})],
            &[
                (Some(("0x01", None)), None),
                (None, Some("parse_srcRouting")),
            ],
        ),
    ];
    p.deparse = vec![
        "ethernet".into(),
        "srcRoutes[0]".into(),
        "srcRoutes[1]".into(),
        "srcRoutes[2]".into(),
        "srcRoutes[3]".into(),
    ];
    p.actions.push(action(
        1,
        "MyIngress.srcRoute_nhop",
        &[],
        vec![
            assign(
                f("standard_metadata", "egress_spec"),
                f("srcRoutes[0]", "port"),
            ),
            prim(
                "pop",
                vec![
                    json!({"type": "header_stack", "value": "srcRoutes"}),
                    hex(1),
                ],
            ),
        ],
    ));
    p.actions
        .push(action(2, "MyIngress.drop", &[], vec![mark_to_drop()]));
    p.ingress = (
        Some("node_2".into()),
        vec![
            table(
                "tbl_nhop",
                0,
                &[],
                &[("MyIngress.srcRoute_nhop", 1)],
                (1, vec![]),
                None,
            ),
            table(
                "tbl_drop",
                1,
                &[],
                &[("MyIngress.drop", 2)],
                (2, vec![]),
                None,
            ),
        ],
        vec![conditional(
            "node_2",
            0,
            d2b(f("srcRoutes[0]", "$valid$")),
            Some("tbl_nhop"),
            Some("tbl_drop"),
        )],
    );
    let mut sw = V1Model::new(p.load());
    // Hops to ports 2, 3, then 4 (bottom of stack), then the payload.
    let frame = eth(
        A,
        B,
        0x1234,
        &[0x00, 0x02, 0x00, 0x03, 0x80, 0x04, 0xde, 0xad],
    );
    let (v, out) = through(&mut sw, &frame, 1);
    assert_eq!(
        v,
        Verdict::Forward {
            port: 2,
            priority: 0
        }
    );
    assert_eq!(
        out.unwrap(),
        eth(A, B, 0x1234, &[0x00, 0x03, 0x80, 0x04, 0xde, 0xad])
    );
    // Five entries: the fifth does not fit the stack of four.
    let (_, fl) = ingress(
        &mut sw,
        &eth(A, B, 0x1234, &[0, 2, 0, 3, 0, 4, 0, 5, 0x80, 6]),
        1,
    );
    assert_eq!(
        fl.phv.fields[sw.program.std.parser_error.0 as usize], 3,
        "StackOutOfBounds"
    );
    // No source route: dropped.
    assert_eq!(
        through(&mut sw, &eth(A, B, 0x0800, &[0; 46]), 1).0,
        Verdict::Drop
    );
}

/// What the interpreter does not run is refused at load, naming it and its place; so is
/// JSON that is not a program, and a field no header has.
#[test]
fn unsupported_constructs_and_bad_json_are_refused_by_place() {
    let mut p = Prog::default();
    p.actions.push(action(
        1,
        "MyIngress.clone_it",
        &[],
        vec![prim("clone_ingress_pkt_to_egress", vec![hex(5)])],
    ));
    let e = lossless_p4::load(&p.json().to_string()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "actions[1].primitives[0]: clone_ingress_pkt_to_egress is not supported"
    );
    let mut p = Prog::default();
    p.actions.push(action(
        1,
        "MyIngress.typo",
        &[],
        vec![assign(f("ethernet", "dstAdr"), hex(1))],
    ));
    let e = lossless_p4::load(&p.json().to_string()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "actions[1].primitives[0].parameters[0].value: header `ethernet` has no field `dstAdr`"
    );
    let mut j = Prog::default().json();
    j["meter_arrays"] = json!([{"name": "m", "id": 0}]);
    assert_eq!(
        lossless_p4::load(&j.to_string()).unwrap_err().to_string(),
        "meter_arrays[0]: a meter is not supported"
    );
    let mut j = Prog::default().json();
    j["__meta__"]["version"] = json!([3, 0]);
    assert!(lossless_p4::load(&j.to_string())
        .unwrap_err()
        .to_string()
        .starts_with("__meta__.version: format [3,0]"));
    let e = lossless_p4::load("{\"header_types\": [").unwrap_err();
    assert!(e.to_string().contains("not JSON"), "{e}");
    let mut j = Prog::default().json();
    j["headers"]
        .as_array_mut()
        .unwrap()
        .retain(|h| h["name"] != "standard_metadata");
    assert!(lossless_p4::load(&j.to_string())
        .unwrap_err()
        .to_string()
        .contains("not a v1model program"));
}

/// Entries the table cannot hold are refused saying why.
#[test]
fn bad_entries_are_refused_saying_why() {
    let mut sw = V1Model::new(router().load());
    let p = &sw.program;
    let t = p.table("ipv4_lpm").unwrap();
    let fwd = p.action("ipv4_forward").unwrap();
    let call = |data: Vec<Value>| ActionCall { action: fwd, data };
    let cases = [
        (vec![KeyMatch::Exact(1)], call(vec![1, 1]), "matched Lpm"),
        (vec![KeyMatch::Lpm(1, 33)], call(vec![1, 1]), "32 bits wide"),
        (
            vec![KeyMatch::Lpm(1, 8)],
            call(vec![1]),
            "takes 2 parameters, 1 given",
        ),
        (
            vec![KeyMatch::Lpm(1, 8)],
            call(vec![1, 512]),
            "parameter 1 of action MyIngress.ipv4_forward is 9 bits wide",
        ),
    ];
    for (key, action, why) in cases {
        let e = sw
            .tables
            .add(
                p,
                t,
                Entry {
                    key,
                    priority: 0,
                    action: Target::Action(action),
                },
            )
            .unwrap_err();
        assert!(e.to_string().contains(why), "{e}");
    }
    // The same key twice.
    let entry = Entry {
        key: vec![KeyMatch::Lpm(0x0a00_0000, 8)],
        priority: 0,
        action: Target::Action(call(vec![1, 1])),
    };
    sw.tables.add(p, t, entry.clone()).unwrap();
    let e = sw.tables.add(p, t, entry).unwrap_err();
    assert!(
        e.to_string().contains("already has an entry with this key"),
        "{e}"
    );
}

/// A direct counter (`with_counters`) counts, per entry, the frames that hit it and their
/// bytes (without FCS); a miss counts on no entry.
#[test]
fn a_direct_counter_counts_each_entrys_hits() {
    let mut p = router();
    p.ingress.1[0]["with_counters"] = json!(true);
    p.counter_arrays.push(
        json!({"name": "MyIngress.lpm_hits", "id": 0, "is_direct": true,
        "binding": "MyIngress.ipv4_lpm", "size": 1024}),
    );
    let mut sw = V1Model::new(p.load());
    let t = sw.program.table("ipv4_lpm").unwrap();
    assert_eq!(
        sw.program.tables[t.0 as usize].direct_counter.as_deref(),
        Some("MyIngress.lpm_hits")
    );
    assert!(
        sw.program.counters.is_empty(),
        "no indexed array of its own"
    );
    let fwd = sw.program.action("ipv4_forward").unwrap();
    for (net, len) in [([10, 0, 1, 0], 24), ([10, 0, 0, 0], 8)] {
        let e = Entry {
            key: vec![KeyMatch::Lpm(u32::from_be_bytes(net) as Value, len)],
            priority: 0,
            action: Target::Action(ActionCall {
                action: fwd,
                data: vec![0x0200_0000_0001, 1],
            }),
        };
        sw.tables.add(&sw.program, t, e).unwrap();
    }
    let send = |sw: &mut V1Model, dst: [u8; 4], payload: usize| {
        let f = eth(
            A,
            B,
            0x0800,
            &ipv4([1, 1, 1, 1], dst, 64, 0, &vec![0; payload]),
        );
        ingress(sw, &f, 0);
        f.len() as u64
    };
    let a = send(&mut sw, [10, 0, 1, 7], 0) + send(&mut sw, [10, 0, 1, 8], 100);
    let b = send(&mut sw, [10, 9, 9, 9], 50);
    send(&mut sw, [11, 0, 0, 1], 0);
    assert_eq!(sw.tables.counts(t), &[(2, a), (1, b)]);
}

/// The switch's path rewrites a frame in place (only the fields the program changed, when
/// the headers keep their layout) and gives the bytes the whole deparser gives.
#[test]
fn the_in_place_rewrite_gives_the_deparsers_bytes() {
    let mut sw = V1Model::new(router().load());
    let fwd = sw.program.action("ipv4_forward").unwrap();
    let t = sw.program.table("ipv4_lpm").unwrap();
    let e = Entry {
        key: vec![KeyMatch::Lpm(0x0a00_0000, 8)],
        priority: 0,
        action: Target::Action(ActionCall {
            action: fwd,
            data: vec![0x0200_0000_00aa, 2],
        }),
    };
    sw.tables.add(&sw.program, t, e).unwrap();
    for i in 0..64u8 {
        let ip = ipv4(
            [198, 18, 0, i],
            [10, i, 1, 2],
            i.wrapping_mul(5),
            i,
            &vec![i; i as usize],
        );
        let frame = eth([2, 0, 0, 0, 0, i], B, 0x0800, &ip);
        let (v, whole) = through(&mut sw, &frame, 1);
        let mut held = frame.clone();
        let mut len = frame.len() as u32 + 4;
        let (v2, carried) = sw.ingress_in_place(&mut held, &mut len, 1, 0);
        assert_eq!(v, v2);
        let port = match v2 {
            Verdict::Forward { port, .. } => port,
            _ => continue,
        };
        assert!(sw.egress_in_place(
            Some(carried),
            &mut held,
            &mut len,
            port,
            Queueing::default()
        ));
        assert_eq!(Some(held), whole, "frame {i}");
    }
}
