//! The `check` plan's ACL lines: each table's binding and its rules in lookup order, with
//! what they match and do, so that the winner for a frame can be read off top to bottom.

use lossless_buffer_model::Named;
use lossless_pipeline::acl::{AclMatch, AclRule, AclTable, PortRange, Prefix, Ternary};
use lossless_pipeline::config::PortConfig;
use lossless_pipeline::PortSet;
use std::fmt::Write;

/// The lines for one switch's tables (empty without any).
pub fn render(tables: &[AclTable], ports: &[PortConfig]) -> String {
    let mut o = String::new();
    for t in tables {
        let _ = writeln!(
            o,
            "  acl table {} on {}: {} rule(s), highest priority first (no match: forward)",
            t.name,
            port_list(t.ports, ports),
            t.rules.len()
        );
        for r in &t.rules {
            let _ = writeln!(
                o,
                "    {:>6}  {:<16} {} → {}",
                r.priority,
                r.name,
                match_text(&r.matches, ports),
                action_text(r)
            );
        }
    }
    o
}

fn port_list(set: PortSet, ports: &[PortConfig]) -> String {
    if set == PortSet::first(ports.len()) {
        return "every port".into();
    }
    let names: Vec<&str> = set
        .iter()
        .filter_map(|i| ports.get(i))
        .map(|p| p.name.as_str())
        .collect();
    names.join(",")
}

fn ternary<T>(name: &str, t: Ternary<T>, exact: bool, hex: bool) -> String
where
    T: Copy + std::fmt::LowerHex + std::fmt::Display,
{
    let v = if hex {
        format!("{:#x}", t.value)
    } else {
        t.value.to_string()
    };
    if exact {
        format!("{name} {v}")
    } else {
        format!("{name} {v}/{:#x}", t.mask)
    }
}

fn prefix_text(p: Prefix) -> String {
    if p.addr >> 32 == 0xFFFF && p.len >= 96 {
        let a = std::net::Ipv4Addr::from((p.addr as u32).to_be_bytes());
        format!("{a}/{}", p.len - 96)
    } else {
        format!("{}/{}", std::net::Ipv6Addr::from(p.addr), p.len)
    }
}

fn range_text(name: &str, r: PortRange) -> String {
    if r.lo == r.hi {
        format!("{name} {}", r.lo)
    } else {
        format!("{name} {}-{}", r.lo, r.hi)
    }
}

fn mac_text(name: &str, t: Ternary<u64>) -> String {
    let m = |x: u64| {
        (0..6)
            .rev()
            .map(|i| format!("{:02x}", (x >> (8 * i)) & 0xFF))
            .collect::<Vec<_>>()
            .join(":")
    };
    if t.mask & 0xFFFF_FFFF_FFFF == 0xFFFF_FFFF_FFFF {
        format!("{name} {}", m(t.value))
    } else {
        format!("{name} {}/{}", m(t.value), m(t.mask))
    }
}

fn match_text(m: &AclMatch, ports: &[PortConfig]) -> String {
    let mut f = Vec::new();
    if let Some(p) = m.in_ports {
        f.push(format!("in_ports {}", port_list(p, ports)));
    }
    if let Some(t) = m.src_mac {
        f.push(mac_text("src_mac", t));
    }
    if let Some(t) = m.dst_mac {
        f.push(mac_text("dst_mac", t));
    }
    if let Some(t) = m.ether_type {
        f.push(ternary("ether_type", t, t.is_exact(), true));
    }
    if let Some(t) = m.vlan_id {
        f.push(ternary("vlan_id", t, t.is_exact(), false));
    }
    if let Some(t) = m.pcp {
        f.push(ternary("pcp", t, t.is_exact(), false));
    }
    if let Some(t) = m.ip_type {
        f.push(format!("ip_type {}", t.word()));
    }
    if let Some(p) = m.src_ip {
        f.push(format!("src {}", prefix_text(p)));
    }
    if let Some(p) = m.dst_ip {
        f.push(format!("dst {}", prefix_text(p)));
    }
    if let Some(t) = m.ip_protocol {
        f.push(ternary("ip_protocol", t, t.is_exact(), false));
    }
    if let Some(t) = m.dscp {
        f.push(ternary("dscp", t, t.is_exact(), false));
    }
    if let Some(t) = m.tc {
        f.push(ternary("tc", t, t.is_exact(), false));
    }
    if let Some(r) = m.l4_src_port {
        f.push(range_text("l4_src_port", r));
    }
    if let Some(r) = m.l4_dst_port {
        f.push(range_text("l4_dst_port", r));
    }
    if let Some(t) = m.bth_opcode {
        f.push(ternary("bth_opcode", t, t.is_exact(), true));
    }
    if f.is_empty() {
        "any frame".into()
    } else {
        f.join(", ")
    }
}

fn action_text(r: &AclRule) -> String {
    let mut a = vec![r.action.packet.word().to_string()];
    if let Some(tc) = r.action.set_tc {
        a.push(format!("set_tc {tc}"));
    }
    if let Some(d) = r.action.set_dscp {
        a.push(format!("set_dscp {d}"));
    }
    a.join(", ")
}
