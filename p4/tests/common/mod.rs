//! BMv2 JSON programs written for the tests, piece by piece as p4c lays them out for
//! v1model (the same keys, the same shapes), and frames to run through them.

#![allow(dead_code)]

use serde_json::{json, Value};

/// v1model's standard_metadata type, as p4c declares it.
pub fn standard_metadata_type() -> Value {
    json!({"name": "standard_metadata", "id": 1, "fields": [
        ["ingress_port", 9, false], ["egress_spec", 9, false], ["egress_port", 9, false],
        ["instance_type", 32, false], ["packet_length", 32, false],
        ["enq_timestamp", 32, false], ["enq_qdepth", 19, false],
        ["deq_timedelta", 32, false], ["deq_qdepth", 19, false],
        ["ingress_global_timestamp", 48, false], ["egress_global_timestamp", 48, false],
        ["mcast_grp", 16, false], ["egress_rid", 16, false], ["checksum_error", 1, false],
        ["parser_error", 32, false], ["priority", 3, false], ["_padding", 3, false]
    ]})
}

pub fn ethernet_type() -> Value {
    json!({"name": "ethernet_t", "id": 2, "fields": [
        ["dstAddr", 48, false], ["srcAddr", 48, false], ["etherType", 16, false]]})
}

pub fn ipv4_type() -> Value {
    json!({"name": "ipv4_t", "id": 3, "fields": [
        ["version", 4, false], ["ihl", 4, false], ["diffserv", 6, false], ["ecn", 2, false],
        ["totalLen", 16, false], ["identification", 16, false], ["flags", 3, false],
        ["fragOffset", 13, false], ["ttl", 8, false], ["protocol", 8, false],
        ["hdrChecksum", 16, false], ["srcAddr", 32, false], ["dstAddr", 32, false]]})
}

/// p4c's error constants.
pub fn errors() -> Value {
    json!([
        ["NoError", 0],
        ["PacketTooShort", 1],
        ["NoMatch", 2],
        ["StackOutOfBounds", 3],
        ["HeaderTooShort", 4],
        ["ParserTimeout", 5],
        ["ParserInvalidArgument", 6]
    ])
}

pub fn f(h: &str, field: &str) -> Value {
    json!({"type": "field", "value": [h, field]})
}

pub fn hex(v: u128) -> Value {
    json!({"type": "hexstr", "value": format!("0x{v:x}")})
}

pub fn param(i: u32) -> Value {
    json!({"type": "runtime_data", "value": i})
}

pub fn local(i: u32) -> Value {
    json!({"type": "local", "value": i})
}

/// An operation, wrapped as p4c wraps one in an operand.
pub fn op(o: &str, l: Value, r: Value) -> Value {
    json!({"type": "expression", "value": {"op": o, "left": l, "right": r}})
}

/// A unary operation.
pub fn op1(o: &str, r: Value) -> Value {
    json!({"type": "expression", "value": {"op": o, "left": null, "right": r}})
}

/// A boolean from data, as p4c writes a condition on a field.
pub fn d2b(v: Value) -> Value {
    op1("d2b", v)
}

/// `dst = src` as p4c writes an assignment (the right side wrapped twice when an
/// expression).
pub fn assign(dst: Value, src: Value) -> Value {
    let src = if src["type"] == "expression" {
        json!({"type": "expression", "value": src})
    } else {
        src
    };
    json!({"op": "assign", "parameters": [dst, src]})
}

pub fn prim(o: &str, params: Vec<Value>) -> Value {
    json!({"op": o, "parameters": params})
}

pub fn mark_to_drop() -> Value {
    prim(
        "mark_to_drop",
        vec![json!({"type": "header", "value": "standard_metadata"})],
    )
}

/// An action of JSON id `id`.
pub fn action(id: u32, name: &str, params: &[(&str, u32)], body: Vec<Value>) -> Value {
    let rd: Vec<Value> = params
        .iter()
        .map(|(n, w)| json!({"name": n, "bitwidth": w}))
        .collect();
    json!({"name": name, "id": id, "runtime_data": rd, "primitives": body})
}

/// A simple table: key (match kind, header, field), actions (names, JSON ids), the
/// default action's id and data, next node after every action.
pub fn table(
    name: &str,
    id: u32,
    key: &[(&str, &str, &str)],
    actions: &[(&str, u32)],
    default: (u32, Vec<&str>),
    next: Option<&str>,
) -> Value {
    let k: Vec<Value> = key
        .iter()
        .map(|(m, h, fl)| json!({"match_type": m, "name": format!("hdr.{h}.{fl}"), "target": [h, fl], "mask": null}))
        .collect();
    let kind = if key.iter().any(|k| k.0 == "ternary" || k.0 == "range") {
        "ternary"
    } else if key.iter().any(|k| k.0 == "lpm") {
        "lpm"
    } else {
        "exact"
    };
    let names: Vec<&str> = actions.iter().map(|a| a.0).collect();
    let ids: Vec<u32> = actions.iter().map(|a| a.1).collect();
    let mut next_tables = serde_json::Map::new();
    for n in &names {
        next_tables.insert(n.to_string(), json!(next));
    }
    json!({
        "name": name, "id": id, "key": k, "match_type": kind, "type": "simple",
        "max_size": 1024, "with_counters": false, "support_timeout": false,
        "direct_meters": null, "action_ids": ids, "actions": names,
        "base_default_next": next, "next_tables": next_tables,
        "default_entry": {"action_id": default.0, "action_const": false,
                          "action_data": default.1, "action_entry_const": false}
    })
}

pub fn conditional(name: &str, id: u32, e: Value, t: Option<&str>, fl: Option<&str>) -> Value {
    json!({"name": name, "id": id, "expression": e["value"].clone(), "true_next": t, "false_next": fl})
}

/// One transition of a parse state: `Some((value, mask))` or `None` for the default, and
/// the next state (`None` ends parsing).
pub type Transition<'a> = (Option<(&'a str, Option<&'a str>)>, Option<&'a str>);

/// A parse state: its ops, select key and transitions ((value, mask) or default → next).
pub fn state(
    name: &str,
    id: u32,
    ops: Vec<Value>,
    key: Vec<Value>,
    transitions: &[Transition],
) -> Value {
    let ts: Vec<Value> = transitions
        .iter()
        .map(|(v, next)| match v {
            Some((value, mask)) => {
                json!({"type": "hexstr", "value": value, "mask": mask, "next_state": next})
            }
            None => json!({"type": "default", "value": null, "mask": null, "next_state": next}),
        })
        .collect();
    json!({"name": name, "id": id, "parser_ops": ops, "transition_key": key, "transitions": ts})
}

pub fn extract(h: &str) -> Value {
    json!({"op": "extract", "parameters": [{"type": "regular", "value": h}]})
}

/// A whole program: header types (standard_metadata added first), header instances
/// (name, type, metadata), parse states from `start`, deparser order, actions, ingress and
/// egress (first node, tables, conditionals), and the rest.
pub struct Prog {
    pub header_types: Vec<Value>,
    pub headers: Vec<(String, String, bool)>,
    pub states: Vec<Value>,
    pub start: String,
    pub deparse: Vec<String>,
    pub actions: Vec<Value>,
    pub ingress: (Option<String>, Vec<Value>, Vec<Value>),
    pub egress: (Option<String>, Vec<Value>, Vec<Value>),
    pub header_stacks: Vec<Value>,
    pub calculations: Vec<Value>,
    pub checksums: Vec<Value>,
    pub counter_arrays: Vec<Value>,
    pub register_arrays: Vec<Value>,
    /// The ingress pipeline's action profiles.
    pub action_profiles: Vec<Value>,
}

impl Default for Prog {
    fn default() -> Self {
        Prog {
            header_types: vec![ethernet_type()],
            headers: vec![("ethernet".into(), "ethernet_t".into(), false)],
            states: vec![state(
                "start",
                0,
                vec![extract("ethernet")],
                vec![],
                &[(None, None)],
            )],
            start: "start".into(),
            deparse: vec!["ethernet".into()],
            actions: vec![action(0, "NoAction", &[], vec![])],
            ingress: (None, vec![], vec![]),
            egress: (None, vec![], vec![]),
            header_stacks: vec![],
            calculations: vec![],
            checksums: vec![],
            counter_arrays: vec![],
            register_arrays: vec![],
            action_profiles: vec![],
        }
    }
}

impl Prog {
    pub fn json(&self) -> Value {
        let mut types = vec![
            json!({"name": "scalars_0", "id": 0, "fields": []}),
            standard_metadata_type(),
        ];
        types.extend(self.header_types.iter().cloned());
        let mut headers = vec![
            json!({"name": "scalars", "id": 0, "header_type": "scalars_0", "metadata": true}),
            json!({"name": "standard_metadata", "id": 1, "header_type": "standard_metadata", "metadata": true}),
        ];
        for (i, (n, t, m)) in self.headers.iter().enumerate() {
            headers.push(json!({"name": n, "id": i + 2, "header_type": t, "metadata": m}));
        }
        let pipe = |name: &str,
                    p: &(Option<String>, Vec<Value>, Vec<Value>),
                    id: u32,
                    profiles: &[Value]| {
            json!({"name": name, "id": id, "init_table": p.0, "tables": p.1,
                   "action_profiles": profiles, "conditionals": p.2})
        };
        json!({
            "header_types": types,
            "headers": headers,
            "header_stacks": self.header_stacks,
            "header_union_types": [], "header_unions": [], "header_union_stacks": [],
            "field_lists": [],
            "errors": errors(),
            "enums": [],
            "parsers": [{"name": "parser", "id": 0, "init_state": self.start, "parse_states": self.states}],
            "parse_vsets": [],
            "deparsers": [{"name": "deparser", "id": 0, "order": self.deparse, "primitives": []}],
            "meter_arrays": [],
            "counter_arrays": self.counter_arrays,
            "register_arrays": self.register_arrays,
            "calculations": self.calculations,
            "learn_lists": [],
            "actions": self.actions,
            "pipelines": [
                pipe("ingress", &self.ingress, 0, &self.action_profiles),
                pipe("egress", &self.egress, 1, &[])
            ],
            "checksums": self.checksums,
            "force_arith": [],
            "extern_instances": [],
            "field_aliases": [],
            "program": "test.p4",
            "__meta__": {"version": [2, 23], "compiler": "lossless tests (by hand)"}
        })
    }

    pub fn load(&self) -> lossless_p4::Program {
        lossless_p4::load(&self.json().to_string()).unwrap_or_else(|e| panic!("{e}"))
    }
}

/// An Ethernet frame to `dst` from `src` of `ethertype` with `payload`.
pub fn eth(dst: [u8; 6], src: [u8; 6], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&dst);
    v.extend_from_slice(&src);
    v.extend_from_slice(&ethertype.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

/// An IPv4 header (20 bytes, correct checksum) from `src` to `dst` with `ttl` and `tos`,
/// and `payload` after it.
pub fn ipv4(src: [u8; 4], dst: [u8; 4], ttl: u8, tos: u8, payload: &[u8]) -> Vec<u8> {
    let total = (20 + payload.len()) as u16;
    let mut h = vec![0x45, tos];
    h.extend_from_slice(&total.to_be_bytes());
    h.extend_from_slice(&[0x12, 0x34, 0x40, 0x00, ttl, 17, 0, 0]);
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    let c = checksum(&h);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    h.extend_from_slice(payload);
    h
}

/// RFC 1071, written again here so the tests do not check the crate against itself.
pub fn checksum(b: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in b.chunks(2) {
        s += u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0));
    }
    while s > 0xFFFF {
        s = (s & 0xFFFF) + (s >> 16);
    }
    !(s as u16)
}

/// The IPv4 router of the P4 tutorials' `basic` exercise: LPM on the destination, the
/// next hop's MAC written, TTL decremented (p4c writes `ttl - 1` as `(ttl + 0xff) & 0xff`)
/// and the header checksum updated.
pub fn router() -> Prog {
    let mut p = Prog::default();
    p.header_types.push(ipv4_type());
    p.headers.push(("ipv4".into(), "ipv4_t".into(), false));
    p.states = vec![
        state(
            "start",
            0,
            vec![extract("ethernet")],
            vec![f("ethernet", "etherType")],
            &[(Some(("0x0800", None)), Some("parse_ipv4")), (None, None)],
        ),
        state(
            "parse_ipv4",
            1,
            vec![extract("ipv4")],
            vec![],
            &[(None, None)],
        ),
    ];
    p.deparse = vec!["ethernet".into(), "ipv4".into()];
    p.actions
        .push(action(1, "MyIngress.drop", &[], vec![mark_to_drop()]));
    p.actions.push(action(
        2,
        "MyIngress.ipv4_forward",
        &[("dstAddr", 48), ("port", 9)],
        vec![
            assign(f("standard_metadata", "egress_spec"), param(1)),
            assign(f("ethernet", "srcAddr"), f("ethernet", "dstAddr")),
            assign(f("ethernet", "dstAddr"), param(0)),
            assign(
                f("ipv4", "ttl"),
                op("&", op("+", f("ipv4", "ttl"), hex(0xff)), hex(0xff)),
            ),
        ],
    ));
    p.ingress = (
        Some("node_2".into()),
        vec![table(
            "MyIngress.ipv4_lpm",
            0,
            &[("lpm", "ipv4", "dstAddr")],
            &[
                ("MyIngress.ipv4_forward", 2),
                ("MyIngress.drop", 1),
                ("NoAction", 0),
            ],
            (1, vec![]),
            None,
        )],
        vec![conditional(
            "node_2",
            0,
            d2b(f("ipv4", "$valid$")),
            Some("MyIngress.ipv4_lpm"),
            None,
        )],
    );
    let inputs: Vec<serde_json::Value> = [
        "version",
        "ihl",
        "diffserv",
        "ecn",
        "totalLen",
        "identification",
        "flags",
        "fragOffset",
        "ttl",
        "protocol",
        "srcAddr",
        "dstAddr",
    ]
    .iter()
    .map(|x| json!({"type": "field", "value": ["ipv4", x]}))
    .collect();
    p.calculations
        .push(json!({"name": "calc", "id": 0, "algo": "csum16", "input": inputs}));
    let cond = d2b(f("ipv4", "$valid$"));
    p.checksums.push(json!({"name": "cksum", "id": 0, "target": ["ipv4", "hdrChecksum"], "type": "generic", "calculation": "calc", "verify": true, "update": false, "if_cond": cond["value"]}));
    p.checksums.push(json!({"name": "cksum_0", "id": 1, "target": ["ipv4", "hdrChecksum"], "type": "generic", "calculation": "calc", "verify": false, "update": true, "if_cond": cond["value"]}));
    p
}

/// The router with an egress that marks CE on an ECN-capable frame whose queue held at
/// least K when it was queued: table `MyEgress.ecn_mark` matches
/// `standard_metadata.enq_qdepth` by range (`table_add ecn_mark mark_ecn K->524287 => 1`),
/// so K comes with the entries, in the unit the switch gives depths in.
pub fn ecn_router() -> Prog {
    let mut p = router();
    let n = p.actions.len() as u32;
    p.actions.push(action(
        n,
        "MyEgress.mark_ecn",
        &[],
        vec![assign(f("ipv4", "ecn"), hex(3))],
    ));
    let mut t = table(
        "MyEgress.ecn_mark",
        1,
        &[("range", "standard_metadata", "enq_qdepth")],
        &[("MyEgress.mark_ecn", n), ("NoAction", 0)],
        (0, vec![]),
        None,
    );
    t["key"][0]["name"] = json!("standard_metadata.enq_qdepth");
    let ect = op("!=", f("ipv4", "ecn"), hex(0));
    p.egress = (
        Some("node_ecn".into()),
        vec![t],
        vec![conditional(
            "node_ecn",
            1,
            op("and", d2b(f("ipv4", "$valid$")), ect),
            Some("MyEgress.ecn_mark"),
            None,
        )],
    );
    p
}
