//! `acl:` of a switch: tables (SONiC `ACL_TABLE`: type, stage, ports) and their rules
//! (`ACL_RULE`: priority, match fields, actions), resolved into the pipeline's ACL stage
//! with rules in lookup order. A rule's fields must fit its table's type, as SONiC's
//! `L3`/`L3V6`/`L2` tables only carry their own match fields.

use crate::config::diag::{Diag, Diags, Key};
use crate::config::schema::{AclRuleRaw, AclTableRaw, Scalar, Val};
use crate::config::values::line;
use lossless_buffer_model::{Named, PRIORITIES};
use lossless_pipeline::acl::{
    AclAction, AclMatch, AclRule, AclTable, IpType, PacketAction, PortRange, Prefix, Ternary,
};
use lossless_pipeline::config::{v4_key, PortConfig};
use lossless_pipeline::PortSet;
use std::collections::BTreeMap;

type Result<T> = std::result::Result<T, Diag>;

/// SONiC's ACL table types that carry data-plane matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableType {
    /// IPv4 and L2/L4 fields.
    L3,
    /// IPv6 and L2/L4 fields.
    L3V6,
    /// Both families.
    L3V4V6,
    /// MAC, EtherType, VLAN and PCP only.
    L2,
}

impl Named for TableType {
    const WORDS: &'static [(&'static str, TableType)] = &[
        ("L3", TableType::L3),
        ("L3V6", TableType::L3V6),
        ("L3V4V6", TableType::L3V4V6),
        ("L2", TableType::L2),
    ];
}

/// The only stage modelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Ingress,
}

impl Named for Stage {
    const WORDS: &'static [(&'static str, Stage)] =
        &[("ingress", Stage::Ingress), ("INGRESS", Stage::Ingress)];
}

/// The tables of switch `sw` over `ports`, in name order, rules in lookup order.
pub fn resolve(
    d: &Diags,
    sw: &Key,
    tables: &Val<BTreeMap<String, Val<AclTableRaw>>>,
    ports: &[PortConfig],
) -> Result<Vec<AclTable>> {
    let k = sw.at("acl");
    let mut out = Vec::new();
    for (name, t) in &tables.value {
        out.push(table(d, &k.at(name), name, t, ports)?);
    }
    Ok(out)
}

fn table(
    d: &Diags,
    k: &Key,
    name: &str,
    t: &Val<AclTableRaw>,
    ports: &[PortConfig],
) -> Result<AclTable> {
    let kind = d
        .opt_word::<TableType>(&t.value.kind, &k.at("type"))?
        .unwrap_or(TableType::L3V4V6);
    if let Some(s) = &t.value.stage {
        if d.word::<Stage>(s, &k.at("stage")).is_err() {
            return d.error(
                line(s),
                &k.at("stage"),
                format!(
                    "`{}`: only the ingress stage is modelled (ACLs run after classification, before forwarding)",
                    s.value
                ),
            );
        }
    }
    let all = PortSet::first(ports.len());
    let bound = match &t.value.ports {
        Some(list) => port_mask(d, &k.at("ports"), list, ports)?,
        None => all,
    };
    let mut rules = Vec::new();
    for (rname, r) in &t.value.rules {
        rules.push(rule(d, &k.at("rules").at(rname), rname, r, kind, ports)?);
    }
    if rules.is_empty() {
        d.warn(line(t), k, "the table has no rules: it matches nothing");
    }
    let mut table = AclTable {
        name: name.to_string(),
        ports: bound,
        rules,
    };
    table.sort_rules();
    for w in table.rules.windows(2) {
        if w[0].priority == w[1].priority && overlap(&w[0].matches, &w[1].matches) {
            d.warn(
                line(t),
                k,
                format!(
                    "rules `{}` and `{}` share priority {} and may match the same frames: SAI leaves the order undefined; here `{}` (first by name) wins",
                    w[0].name, w[1].name, w[0].priority, w[0].name
                ),
            );
        }
    }
    Ok(table)
}

/// Whether two rules' fields could both hold for one frame (a cheap check: only the
/// fields that pin an exact value are compared).
fn overlap(a: &AclMatch, b: &AclMatch) -> bool {
    fn same<T: PartialEq + Copy>(x: Option<T>, y: Option<T>) -> bool {
        match (x, y) {
            (Some(x), Some(y)) => x == y,
            _ => true,
        }
    }
    let prefixes = |x: Option<Prefix>, y: Option<Prefix>| match (x, y) {
        (Some(x), Some(y)) => {
            let l = x.len.min(y.len);
            Prefix {
                addr: x.addr,
                len: l,
            }
            .contains(y.addr)
        }
        _ => true,
    };
    same(a.ip_protocol, b.ip_protocol)
        && same(a.ether_type, b.ether_type)
        && same(a.dscp, b.dscp)
        && same(a.l4_dst_port, b.l4_dst_port)
        && same(a.l4_src_port, b.l4_src_port)
        && prefixes(a.src_ip, b.src_ip)
        && prefixes(a.dst_ip, b.dst_ip)
}

fn port_mask(
    d: &Diags,
    k: &Key,
    list: &Val<Vec<Val<String>>>,
    ports: &[PortConfig],
) -> Result<PortSet> {
    let mut m = PortSet::EMPTY;
    for p in &list.value {
        match ports.iter().position(|c| c.name == p.value) {
            Some(i) => m.insert(i),
            None => {
                return d.error(
                    line(p),
                    k,
                    format!(
                        "unknown port `{}` (ports are {}…{})",
                        p.value,
                        ports[0].name,
                        ports[ports.len() - 1].name
                    ),
                )
            }
        }
    }
    Ok(m)
}

fn rule(
    d: &Diags,
    k: &Key,
    name: &str,
    r: &Val<AclRuleRaw>,
    kind: TableType,
    ports: &[PortConfig],
) -> Result<AclRule> {
    let f = &r.value;
    let priority = match &f.priority {
        Some(p) => d.int_in(p, &k.at("priority"), 0, 999_999, "")? as u32,
        None => {
            return d.error(
                line(r),
                &k.at("priority"),
                "a rule needs a priority (0–999999; larger wins)",
            )
        }
    };
    let fits = |given: bool, field: &str, allowed: bool| -> Result<()> {
        if given && !allowed {
            return d.error(
                line(r),
                &k.at(field),
                format!(
                    "a table of type {} has no `{field}` field (L3: IPv4, L3V6: IPv6, L3V4V6: both, L2: MAC, EtherType, VLAN, PCP)",
                    kind.word()
                ),
            );
        }
        Ok(())
    };
    let ip = kind != TableType::L2;
    let v4 = matches!(kind, TableType::L3 | TableType::L3V4V6);
    let v6 = matches!(kind, TableType::L3V6 | TableType::L3V4V6);
    fits(f.src_ip.is_some(), "src_ip", v4)?;
    fits(f.dst_ip.is_some(), "dst_ip", v4)?;
    fits(f.src_ipv6.is_some(), "src_ipv6", v6)?;
    fits(f.dst_ipv6.is_some(), "dst_ipv6", v6)?;
    for (given, field) in [
        (f.ip_protocol.is_some(), "ip_protocol"),
        (f.next_header.is_some(), "next_header"),
        (f.dscp.is_some(), "dscp"),
        (f.l4_src_port.is_some(), "l4_src_port"),
        (f.l4_dst_port.is_some(), "l4_dst_port"),
        (f.l4_src_port_range.is_some(), "l4_src_port_range"),
        (f.l4_dst_port_range.is_some(), "l4_dst_port_range"),
        (f.bth_opcode.is_some(), "bth_opcode"),
        (f.set_dscp.is_some(), "set_dscp"),
    ] {
        fits(given, field, ip)?;
    }
    if f.ip_protocol.is_some() && f.next_header.is_some() {
        return d.error(
            line(r),
            &k.at("next_header"),
            "give `ip_protocol` or `next_header`, not both (they are one field)",
        );
    }
    if f.src_ip.is_some() && f.src_ipv6.is_some() || f.dst_ip.is_some() && f.dst_ipv6.is_some() {
        return d.error(
            line(r),
            k,
            "a frame is IPv4 or IPv6: a rule gives `src_ip`/`dst_ip` or `src_ipv6`/`dst_ipv6`",
        );
    }
    let l4 = |one: &Option<Val<Scalar>>, range: &Option<Val<String>>, field: &str| {
        port_range(d, k, one, range, field)
    };
    let matches = AclMatch {
        in_ports: f
            .in_ports
            .as_ref()
            .map(|l| port_mask(d, &k.at("in_ports"), l, ports))
            .transpose()?,
        src_mac: f
            .src_mac
            .as_ref()
            .map(|v| mac_ternary(d, v, &k.at("src_mac")))
            .transpose()?,
        dst_mac: f
            .dst_mac
            .as_ref()
            .map(|v| mac_ternary(d, v, &k.at("dst_mac")))
            .transpose()?,
        ether_type: ternary(d, &f.ether_type, &k.at("ether_type"), 0xFFFF)?.map(|t| Ternary {
            value: t.value as u16,
            mask: t.mask as u16,
        }),
        vlan_id: ternary(d, &f.vlan_id, &k.at("vlan_id"), 4095)?.map(|t| Ternary {
            value: t.value as u16,
            mask: t.mask as u16,
        }),
        pcp: small(d, &f.pcp, &k.at("pcp"), 7)?,
        ip_type: d
            .opt_word::<IpTypeWord>(&f.ip_type, &k.at("ip_type"))?
            .map(|w| w.0),
        src_ip: prefix(d, &f.src_ip, &k.at("src_ip"), false)?.or(prefix(
            d,
            &f.src_ipv6,
            &k.at("src_ipv6"),
            true,
        )?),
        dst_ip: prefix(d, &f.dst_ip, &k.at("dst_ip"), false)?.or(prefix(
            d,
            &f.dst_ipv6,
            &k.at("dst_ipv6"),
            true,
        )?),
        ip_protocol: small(d, &f.ip_protocol, &k.at("ip_protocol"), 255)?.or(small(
            d,
            &f.next_header,
            &k.at("next_header"),
            255,
        )?),
        dscp: small(d, &f.dscp, &k.at("dscp"), 63)?,
        tc: small(d, &f.tc, &k.at("tc"), PRIORITIES as u64 - 1)?,
        l4_src_port: l4(&f.l4_src_port, &f.l4_src_port_range, "l4_src_port")?,
        l4_dst_port: l4(&f.l4_dst_port, &f.l4_dst_port_range, "l4_dst_port")?,
        bth_opcode: small(d, &f.bth_opcode, &k.at("bth_opcode"), 255)?,
    };
    let action = AclAction {
        packet: d
            .opt_word::<PacketAction>(&f.packet_action, &k.at("packet_action"))?
            .unwrap_or_default(),
        set_tc: f
            .set_tc
            .as_ref()
            .map(|v| d.small(v, &k.at("set_tc"), PRIORITIES as i64 - 1))
            .transpose()?,
        set_dscp: f
            .set_dscp
            .as_ref()
            .map(|v| d.small(v, &k.at("set_dscp"), 63))
            .transpose()?,
    };
    if action.packet == PacketAction::Drop && (action.set_tc.is_some() || action.set_dscp.is_some())
    {
        d.warn(
            line(r),
            k,
            "a dropping rule's set_tc / set_dscp never take effect",
        );
    }
    Ok(AclRule {
        name: name.to_string(),
        priority,
        matches,
        action,
    })
}

/// `ip_type` words as the file writes them (lower case; SONiC's upper case too).
#[derive(Clone, Copy, Debug, PartialEq)]
struct IpTypeWord(IpType);

impl Named for IpTypeWord {
    const WORDS: &'static [(&'static str, IpTypeWord)] = &[
        ("any", IpTypeWord(IpType::Any)),
        ("ip", IpTypeWord(IpType::Ip)),
        ("non_ip", IpTypeWord(IpType::NonIp)),
        ("ipv4any", IpTypeWord(IpType::Ipv4Any)),
        ("non_ipv4", IpTypeWord(IpType::NonIpv4)),
        ("ipv6any", IpTypeWord(IpType::Ipv6Any)),
        ("non_ipv6", IpTypeWord(IpType::NonIpv6)),
        ("ANY", IpTypeWord(IpType::Any)),
        ("IP", IpTypeWord(IpType::Ip)),
        ("NON_IP", IpTypeWord(IpType::NonIp)),
        ("IPV4ANY", IpTypeWord(IpType::Ipv4Any)),
        ("NON_IPV4", IpTypeWord(IpType::NonIpv4)),
        ("IPV6ANY", IpTypeWord(IpType::Ipv6Any)),
        ("NON_IPV6", IpTypeWord(IpType::NonIpv6)),
    ];
}

/// A number: decimal or `0x` hex.
fn number(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// A ternary field: `v` or `v/mask`, each at most `max`.
fn ternary(d: &Diags, v: &Option<Val<Scalar>>, k: &Key, max: u64) -> Result<Option<Ternary<u64>>> {
    let Some(v) = v else { return Ok(None) };
    let text = v.value.to_string();
    let parsed = match text.split_once('/') {
        Some((a, m)) => number(a).zip(number(m)),
        None => number(&text).map(|a| (a, max)),
    };
    match parsed {
        Some((value, mask)) if value <= max && mask <= max => Ok(Some(Ternary {
            value,
            mask: if mask == max { u64::MAX } else { mask },
        })),
        _ => d.error(
            line(v),
            k,
            format!("`{text}`: expected a number up to {max} (or 0x hex), optionally `value/mask`"),
        ),
    }
}

/// A ternary field of at most 8 bits.
fn small(d: &Diags, v: &Option<Val<Scalar>>, k: &Key, max: u64) -> Result<Option<Ternary<u8>>> {
    Ok(ternary(d, v, k, max)?.map(|t| Ternary {
        value: t.value as u8,
        mask: t.mask as u8,
    }))
}

fn mac_ternary(d: &Diags, v: &Val<String>, k: &Key) -> Result<Ternary<u64>> {
    let bits = |s: &str| -> Option<u64> {
        let parts: Vec<&str> = s.split(':').collect();
        if parts.len() != 6 {
            return None;
        }
        parts.iter().try_fold(0u64, |a, p| {
            (p.len() == 2)
                .then(|| u8::from_str_radix(p, 16).ok())
                .flatten()
                .map(|b| a << 8 | b as u64)
        })
    };
    let parsed = match v.value.split_once('/') {
        Some((a, m)) => bits(a).zip(bits(m)),
        None => bits(&v.value).map(|a| (a, 0xFFFF_FFFF_FFFF)),
    };
    match parsed {
        Some((value, mask)) => Ok(Ternary { value, mask }),
        None => d.error(
            line(v),
            k,
            format!(
                "`{}`: expected a MAC such as 02:00:00:00:00:01, optionally `mac/mask`",
                v.value
            ),
        ),
    }
}

/// `198.18.1.0/24` (IPv4 keys) or `2001:db8::/32` (IPv6 keys); a bare address is a host.
fn prefix(d: &Diags, v: &Option<Val<String>>, k: &Key, six: bool) -> Result<Option<Prefix>> {
    let Some(v) = v else { return Ok(None) };
    let (addr, len) = match v.value.split_once('/') {
        Some((a, l)) => (a, l.parse::<u8>().ok()),
        None => (v.value.as_str(), Some(if six { 128 } else { 32 })),
    };
    let parsed = if six {
        addr.parse::<std::net::Ipv6Addr>()
            .ok()
            .zip(len.filter(|l| *l <= 128))
            .map(|(a, l)| Prefix {
                addr: u128::from(a),
                len: l,
            })
    } else {
        addr.parse::<std::net::Ipv4Addr>()
            .ok()
            .zip(len.filter(|l| *l <= 32))
            .map(|(a, l)| Prefix {
                addr: v4_key(a.octets()),
                len: 96 + l,
            })
    };
    match parsed {
        Some(p) => Ok(Some(p)),
        None => d.error(
            line(v),
            k,
            format!(
                "`{}` is not an {} prefix such as {}",
                v.value,
                if six { "IPv6" } else { "IPv4" },
                if six {
                    "2001:db8::/32"
                } else {
                    "198.18.1.0/24"
                }
            ),
        ),
    }
}

/// An L4 port from `field` (one port) or `field_range` (`lo-hi`), not both.
fn port_range(
    d: &Diags,
    k: &Key,
    one: &Option<Val<Scalar>>,
    range: &Option<Val<String>>,
    field: &str,
) -> Result<Option<PortRange>> {
    match (one, range) {
        (Some(_), Some(r)) => d.error(
            line(r),
            &k.at(&format!("{field}_range")),
            format!("give `{field}` or `{field}_range`, not both"),
        ),
        (Some(p), None) => match number(&p.value.to_string()).filter(|n| *n <= 65535) {
            Some(n) => Ok(Some(PortRange {
                lo: n as u16,
                hi: n as u16,
            })),
            None => d.error(
                line(p),
                &k.at(field),
                format!("`{}`: a port is 0–65535", p.value),
            ),
        },
        (None, Some(r)) => {
            let parsed = r.value.split_once('-').and_then(|(a, b)| {
                let (lo, hi) = (number(a)?, number(b)?);
                (lo <= hi && hi <= 65535).then_some(PortRange {
                    lo: lo as u16,
                    hi: hi as u16,
                })
            });
            match parsed {
                Some(p) => Ok(Some(p)),
                None => d.error(
                    line(r),
                    &k.at(&format!("{field}_range")),
                    format!(
                        "`{}`: expected `lo-hi` with lo ≤ hi ≤ 65535, e.g. 1024-2047",
                        r.value
                    ),
                ),
            }
        }
        (None, None) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use lossless_pipeline::acl::PacketAction;

    fn acl(a: &str) -> Result<Vec<lossless_pipeline::acl::AclTable>, crate::config::ConfigError> {
        let text = format!("switches:\n  - name: s\n    ports: {{count: 3}}\n    acl: {a}\n");
        parse("a.yaml", "a", &text).map(|l| l.scenario.switches[0].config.acl.clone())
    }

    #[test]
    fn rules_are_put_in_lookup_order_and_bound_to_their_ports() {
        let t = acl("{T: {ports: [Ethernet1], rules: {A: {priority: 10, packet_action: drop, src_ip: 198.18.0.0/16}, B: {priority: 20, dscp: 3, set_tc: 4}}}}").unwrap();
        assert_eq!(t[0].ports, [1].into_iter().collect());
        assert_eq!(t[0].rules[0].name, "B");
        assert_eq!(t[0].rules[1].action.packet, PacketAction::Drop);
        assert_eq!(t[0].rules[0].action.set_tc, Some(4));
    }

    #[test]
    fn bad_rules_name_the_key_and_the_rule() {
        let e = |a: &str| acl(a).unwrap_err().to_string();
        assert!(e("{T: {rules: {A: {dscp: 3}}}}")
            .contains("s.acl.T.rules.A.priority: a rule needs a priority"));
        assert!(
            e("{T: {type: L3, rules: {A: {priority: 1, src_ipv6: \"::/0\"}}}}")
                .contains("type L3 has no `src_ipv6`")
        );
        assert!(e("{T: {rules: {A: {priority: 1, src_ip: 198.18.0.0/33}}}}")
            .contains("not an IPv4 prefix"));
        assert!(e("{T: {rules: {A: {priority: 1, l4_dst_port_range: 9-3}}}}").contains("lo ≤ hi"));
        assert!(e("{T: {ports: [Ethernet9], rules: {}}}").contains("unknown port `Ethernet9`"));
        assert!(e("{T: {stage: egress, rules: {}}}").contains("only the ingress stage"));
        assert!(e("{T: {rules: {A: {priority: 1, dscp: 64}}}}").contains("s.acl.T.rules.A.dscp"));
        assert!(
            e("{T: {rules: {A: {priority: 1, packet_action: redirect}}}}")
                .contains("forward, drop or disable_trim")
        );
    }
}
