//! ACL_TABLE and ACL_RULE → `acl:`. Tables of the data-plane types (L3, L3V6, L3V4V6, L2)
//! at the ingress stage, bound to kept ports, are imported with their rules; SONiC's field
//! names map to the scenario's lower-case ones. A rule that matches on or acts with a field
//! the model lacks (TCP_FLAGS, ICMP types, inner headers, mirroring, redirects) is left out,
//! and said so: matching without the field would widen it. A rule of a table that does not
//! exist is an error.

use super::db::{at, Entry};
use super::{val, Ctx};
use crate::config::diag::Diag;
use crate::config::schema::{AclRuleRaw, AclTableRaw, Scalar, Val};
use serde_saphyr::Spanned;
use std::collections::BTreeMap;

type Result<T> = std::result::Result<T, Diag>;

type Tables = Option<Val<BTreeMap<String, Val<AclTableRaw>>>>;

/// The ACL tables bound to kept ports, with their rules.
pub fn resolve(cx: &Ctx) -> Result<Tables> {
    let db = cx.db();
    let empty = BTreeMap::new();
    let tables = db.acl_table.as_ref().map_or(&empty, |t| &t.value);
    let mut out: BTreeMap<String, Val<AclTableRaw>> = BTreeMap::new();
    for (name, e) in tables {
        if let Some(t) = table(cx, name, e) {
            out.insert(name.clone(), t);
        }
    }
    if let Some(rules) = &db.acl_rule {
        for (k, e) in &rules.value {
            let key = format!("ACL_RULE.{k}");
            let Some((t, r)) = k.split_once('|') else {
                return Err(cx.error(at(e), &key, "a key is `TABLE|RULE`"));
            };
            if !tables.contains_key(t) {
                return Err(cx.error(at(e), &key, format!("table `{t}` is not in ACL_TABLE")));
            }
            let Some(table) = out.get_mut(t) else {
                continue; // a table not imported (its type, stage or ports)
            };
            if let Some(rule) = rule(cx, &key, e)? {
                table.value.rules.insert(r.to_string(), rule);
            }
        }
    }
    Ok((!out.is_empty()).then(|| {
        let anchor = db.acl_table.as_ref().expect("tables come from ACL_TABLE");
        val(out, anchor)
    }))
}

/// An ACL_TABLE entry, if the model imports it.
fn table(cx: &Ctx, name: &str, e: &Spanned<Entry>) -> Option<Val<AclTableRaw>> {
    let f = |n: &str| e.value.get(n);
    let kind = f("type").map_or(String::new(), |t| t.value.text().to_ascii_uppercase());
    if !matches!(kind.as_str(), "L3" | "L3V6" | "L3V4V6" | "L2") {
        cx.unused("ACL_TABLE", &format!("{name} (type {kind})"));
        return None;
    }
    let stage = f("stage").map_or("ingress".to_string(), |s| {
        s.value.text().to_ascii_lowercase()
    });
    if stage != "ingress" {
        cx.unused("ACL_TABLE", &format!("{name} (stage {stage})"));
        return None;
    }
    let ports_field = f("ports").or(f("ports@"));
    let ports: Vec<String> = ports_field
        .map(|p| p.value.items())
        .unwrap_or_default()
        .into_iter()
        .filter(|p| cx.keeps(p))
        .collect();
    let Some(pf) = ports_field.filter(|_| !ports.is_empty()) else {
        cx.unused("ACL_TABLE", &format!("{name} (bound to no kept port)"));
        return None;
    };
    cx.unused_fields(
        "ACL_TABLE",
        &e.value,
        &["type", "stage", "ports", "ports@", "policy_desc"],
    );
    Some(val(
        AclTableRaw {
            kind: f("type").map(|t| val(kind.clone(), t)),
            stage: Some(val("ingress".to_string(), e)),
            ports: Some(val(ports.into_iter().map(|p| val(p, pf)).collect(), pf)),
            rules: BTreeMap::new(),
        },
        e,
    ))
}

/// An ACL_RULE entry with the scenario's keys, or None (said why) when it uses a field the
/// model lacks.
fn rule(cx: &Ctx, key: &str, e: &Spanned<Entry>) -> Result<Option<Val<AclRuleRaw>>> {
    let mut r = AclRuleRaw::default();
    let s = |v: &Spanned<super::db::Field>| val(v.value.text(), v);
    let n = |v: &Spanned<super::db::Field>| super::scalar(v);
    for (field, v) in &e.value {
        match field.as_str() {
            "PRIORITY" => {
                r.priority = Some(val(cx.int("ACL_RULE", key, field, v)?, v));
            }
            "PACKET_ACTION" => {
                let a = v.value.text().to_ascii_uppercase();
                match a.as_str() {
                    "FORWARD" | "DROP" => r.packet_action = Some(val(a.to_ascii_lowercase(), v)),
                    _ => return skip(cx, key, e, &format!("PACKET_ACTION {a}")),
                }
            }
            "DSCP_ACTION" => r.set_dscp = Some(val(cx.int("ACL_RULE", key, field, v)?, v)),
            "SRC_IP" => r.src_ip = Some(s(v)),
            "DST_IP" => r.dst_ip = Some(s(v)),
            "SRC_IPV6" => r.src_ipv6 = Some(s(v)),
            "DST_IPV6" => r.dst_ipv6 = Some(s(v)),
            "IP_PROTOCOL" => r.ip_protocol = Some(n(v)),
            "NEXT_HEADER" => r.next_header = Some(n(v)),
            "L4_SRC_PORT" => r.l4_src_port = Some(n(v)),
            "L4_DST_PORT" => r.l4_dst_port = Some(n(v)),
            "L4_SRC_PORT_RANGE" => r.l4_src_port_range = Some(s(v)),
            "L4_DST_PORT_RANGE" => r.l4_dst_port_range = Some(s(v)),
            "ETHER_TYPE" => r.ether_type = Some(n(v)),
            "DSCP" => r.dscp = Some(n(v)),
            "TC" => r.tc = Some(n(v)),
            "VLAN_ID" => r.vlan_id = Some(n(v)),
            "PCP" => r.pcp = Some(val(Scalar::Str(v.value.text()), v)),
            "IP_TYPE" => r.ip_type = Some(val(v.value.text().to_ascii_lowercase(), v)),
            "SRC_MAC" => r.src_mac = Some(s(v)),
            "DST_MAC" => r.dst_mac = Some(s(v)),
            "BTH_OPCODE" => r.bth_opcode = Some(val(Scalar::Str(v.value.text()), v)),
            "IN_PORTS" => {
                let kept: Vec<Val<String>> = v
                    .value
                    .items()
                    .into_iter()
                    .filter(|p| cx.keeps(p))
                    .map(|p| val(p, v))
                    .collect();
                if kept.is_empty() {
                    cx.unused("ACL_RULE", &format!("{key} (IN_PORTS: no kept port)"));
                    return Ok(None);
                }
                r.in_ports = Some(val(kept, v));
            }
            other => return skip(cx, key, e, other),
        }
    }
    Ok(Some(val(r, e)))
}

fn skip(cx: &Ctx, key: &str, e: &Spanned<Entry>, what: &str) -> Result<Option<Val<AclRuleRaw>>> {
    cx.warn(
        at(e),
        key,
        format!("{what} is not modelled: the rule is left out (matching without it would catch more frames than SONiC's)"),
    );
    Ok(None)
}
