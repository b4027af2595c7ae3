//! The ACL stage (SONiC `ACL_TABLE` / `ACL_RULE`, SAI ACL semantics): tables bound to
//! ingress ports, each an ordered list of rules that match header fields ternarily and act
//! on the frame. It runs after classification, before forwarding (docs/architecture.md,
//! *The path of one frame*), so a rule sees the frame as received and its traffic class.
//!
//! Within a table the matching rule of highest `priority` wins (SAI: a larger number is a
//! higher priority); equal priorities are broken by rule name, as the loader sorted them.
//! Tables bound to the same port are looked up in parallel, in name order: each table's
//! winner counts the frame, a drop from any table drops it, and a later table's
//! `set_tc`/`set_dscp` overrides an earlier one's. A frame no rule matches is forwarded.

use crate::parser::{Parsed, L3, L4};
use crate::port_set::PortSet;

/// A field compared under a mask: matches when `field & mask == value & mask`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ternary<T> {
    /// The value sought.
    pub value: T,
    /// Which bits of it count.
    pub mask: T,
}

macro_rules! ternary_for {
    ($($t:ty),*) => {$(
        impl Ternary<$t> {
            /// Exact match on `value`.
            pub const fn exact(value: $t) -> Self {
                Ternary { value, mask: <$t>::MAX }
            }
            /// Whether every bit counts (an exact match).
            pub const fn is_exact(&self) -> bool {
                self.mask == <$t>::MAX
            }
            /// Whether `field` matches.
            pub const fn matches(&self, field: $t) -> bool {
                field & self.mask == self.value & self.mask
            }
        }
    )*};
}
ternary_for!(u8, u16, u32, u64, u128);

/// An inclusive range of L4 ports (SONiC `L4_SRC_PORT_RANGE`), or one port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortRange {
    /// First port matched.
    pub lo: u16,
    /// Last port matched.
    pub hi: u16,
}

impl PortRange {
    /// Whether `port` is in the range.
    pub const fn contains(&self, port: u16) -> bool {
        self.lo <= port && port <= self.hi
    }
}

/// An IP prefix over the 128-bit form routes use (IPv4 mapped into ::ffff:0:0/96).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prefix {
    /// Address bits.
    pub addr: u128,
    /// Prefix length over 128 bits (an IPv4 /24 is 120).
    pub len: u8,
}

impl Prefix {
    /// Whether `addr` (128-bit form) lies inside.
    pub const fn contains(&self, addr: u128) -> bool {
        if self.len == 0 {
            return true;
        }
        let mask = u128::MAX << (128 - self.len as u32);
        addr & mask == self.addr & mask
    }
}

/// SONiC `IP_TYPE` (SAI's ACL IP type): which kinds of frame a rule applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpType {
    /// Every frame.
    Any,
    /// IPv4 or IPv6.
    Ip,
    /// Neither IPv4 nor IPv6.
    NonIp,
    /// IPv4.
    Ipv4Any,
    /// Anything but IPv4.
    NonIpv4,
    /// IPv6.
    Ipv6Any,
    /// Anything but IPv6.
    NonIpv6,
}

impl lossless_buffer_model::Named for IpType {
    const WORDS: &'static [(&'static str, IpType)] = &[
        ("any", IpType::Any),
        ("ip", IpType::Ip),
        ("non_ip", IpType::NonIp),
        ("ipv4any", IpType::Ipv4Any),
        ("non_ipv4", IpType::NonIpv4),
        ("ipv6any", IpType::Ipv6Any),
        ("non_ipv6", IpType::NonIpv6),
    ];
}

/// The match half of a rule: every field given must match (fields left `None` match
/// anything). A field of a layer the frame lacks (an L4 port on a non-UDP/TCP frame, a
/// DSCP on a non-IP frame) does not match.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AclMatch {
    /// Ingress ports the rule applies to, on top of the table's binding.
    pub in_ports: Option<PortSet>,
    /// Source MAC.
    pub src_mac: Option<Ternary<u64>>,
    /// Destination MAC.
    pub dst_mac: Option<Ternary<u64>>,
    /// EtherType after the VLAN tags.
    pub ether_type: Option<Ternary<u16>>,
    /// Outer VLAN id (untagged frames do not match).
    pub vlan_id: Option<Ternary<u16>>,
    /// Outer VLAN PCP (untagged frames do not match).
    pub pcp: Option<Ternary<u8>>,
    /// IPv4 / IPv6 / non-IP.
    pub ip_type: Option<IpType>,
    /// Source address: an IPv4 prefix matches only IPv4 frames, an IPv6 one only IPv6.
    pub src_ip: Option<Prefix>,
    /// Destination address, likewise.
    pub dst_ip: Option<Prefix>,
    /// IP protocol (IPv6: the upper-layer next header).
    pub ip_protocol: Option<Ternary<u8>>,
    /// DSCP as received.
    pub dscp: Option<Ternary<u8>>,
    /// Traffic class from the QoS maps (SONiC `TC`).
    pub tc: Option<Ternary<u8>>,
    /// UDP/TCP source port.
    pub l4_src_port: Option<PortRange>,
    /// UDP/TCP destination port.
    pub l4_dst_port: Option<PortRange>,
    /// RoCEv2 BTH opcode (SONiC `BTH_OPCODE`; frames without a BTH do not match).
    pub bth_opcode: Option<Ternary<u8>>,
}

/// A MAC address as the low 48 bits of a u64, for ternary matching.
pub fn mac_bits(mac: [u8; 6]) -> u64 {
    mac.iter().fold(0, |a, b| a << 8 | *b as u64)
}

fn is_v4(a: u128) -> bool {
    a >> 32 == 0xFFFF
}

impl AclMatch {
    /// Whether a frame received on `in_port`, with headers `h` and traffic class `tc`,
    /// matches every field given.
    pub fn matches(&self, in_port: usize, h: &Parsed, tc: u8) -> bool {
        let (l3_src, l3_dst, proto, dscp) = match h.l3 {
            L3::V4 {
                src,
                dst,
                proto,
                dscp,
                ..
            } if !h.deep_stack => (
                Some(crate::config::v4_key(src)),
                Some(crate::config::v4_key(dst)),
                Some(proto),
                Some(dscp),
            ),
            L3::V6 {
                src,
                dst,
                proto,
                dscp,
                ..
            } if !h.deep_stack => (
                Some(u128::from_be_bytes(src)),
                Some(u128::from_be_bytes(dst)),
                Some(proto),
                Some(dscp),
            ),
            _ => (None, None, None, None),
        };
        let (sport, dport) = match h.l4 {
            L4::Udp { src, dst } | L4::Tcp { src, dst } if !h.deep_stack => (Some(src), Some(dst)),
            _ => (None, None),
        };
        let vlan = h.outer_vlan();
        let ip_kind = match l3_src {
            None => 0,
            Some(a) if is_v4(a) => 4,
            Some(_) => 6,
        };
        self.in_ports.is_none_or(|m| m.contains(in_port))
            && self.src_mac.is_none_or(|t| t.matches(mac_bits(h.src)))
            && self.dst_mac.is_none_or(|t| t.matches(mac_bits(h.dst)))
            && self.ether_type.is_none_or(|t| t.matches(h.ethertype))
            && self
                .vlan_id
                .is_none_or(|t| vlan.is_some_and(|v| t.matches(v.vid)))
            && self
                .pcp
                .is_none_or(|t| vlan.is_some_and(|v| t.matches(v.pcp)))
            && self.ip_type.is_none_or(|t| match t {
                IpType::Any => true,
                IpType::Ip => ip_kind != 0,
                IpType::NonIp => ip_kind == 0,
                IpType::Ipv4Any => ip_kind == 4,
                IpType::NonIpv4 => ip_kind != 4,
                IpType::Ipv6Any => ip_kind == 6,
                IpType::NonIpv6 => ip_kind != 6,
            })
            && self
                .src_ip
                .is_none_or(|p| l3_src.is_some_and(|a| is_v4(a) == is_v4(p.addr) && p.contains(a)))
            && self
                .dst_ip
                .is_none_or(|p| l3_dst.is_some_and(|a| is_v4(a) == is_v4(p.addr) && p.contains(a)))
            && self
                .ip_protocol
                .is_none_or(|t| proto.is_some_and(|p| t.matches(p)))
            && self.dscp.is_none_or(|t| dscp.is_some_and(|d| t.matches(d)))
            && self.tc.is_none_or(|t| t.matches(tc))
            && self
                .l4_src_port
                .is_none_or(|r| sport.is_some_and(|p| r.contains(p)))
            && self
                .l4_dst_port
                .is_none_or(|r| dport.is_some_and(|p| r.contains(p)))
            && self
                .bth_opcode
                .is_none_or(|t| h.bth.is_some_and(|b| t.matches(b.opcode)))
    }
}

/// What a matching rule does with the frame (SONiC `PACKET_ACTION`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PacketAction {
    /// Let it through (the rule still counts it).
    #[default]
    Forward,
    /// Drop it (counted as `acl` in the drops by reason).
    Drop,
    /// Let it through, but drop it rather than trim it where its queue trims (SONiC
    /// `DISABLE_TRIM`).
    DisableTrim,
}

impl lossless_buffer_model::Named for PacketAction {
    const WORDS: &'static [(&'static str, PacketAction)] = &[
        ("forward", PacketAction::Forward),
        ("drop", PacketAction::Drop),
        ("disable_trim", PacketAction::DisableTrim),
    ];
}

/// The action half of a rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AclAction {
    /// Forward or drop.
    pub packet: PacketAction,
    /// Re-class the frame: its PG and queue follow the new class (SAI `SET_TC`).
    pub set_tc: Option<u8>,
    /// Rewrite the IP DSCP (SAI `SET_DSCP`; the class already chosen stays).
    pub set_dscp: Option<u8>,
}

/// One rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AclRule {
    /// Rule name (SONiC `ACL_RULE` key after the table name).
    pub name: String,
    /// Larger wins.
    pub priority: u32,
    /// What it matches.
    pub matches: AclMatch,
    /// What it does.
    pub action: AclAction,
}

/// One table: its binding and its rules, highest priority first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AclTable {
    /// Table name (SONiC `ACL_TABLE` key).
    pub name: String,
    /// Ingress ports it is bound to.
    pub ports: PortSet,
    /// Rules in lookup order: priority descending, then name.
    pub rules: Vec<AclRule>,
}

impl AclTable {
    /// Put the rules in lookup order (priority descending, then name).
    pub fn sort_rules(&mut self) {
        self.rules
            .sort_by(|a, b| b.priority.cmp(&a.priority).then(a.name.cmp(&b.name)));
    }

    /// Index of the rule that wins for a frame on `in_port` with headers `h` and class
    /// `tc`, if the table is bound to the port and a rule matches.
    pub fn lookup(&self, in_port: usize, h: &Parsed, tc: u8) -> Option<usize> {
        if !self.ports.contains(in_port) {
            return None;
        }
        self.rules
            .iter()
            .position(|r| r.matches.matches(in_port, h, tc))
    }
}

/// Packets and bytes one rule matched (SONiC `aclshow`'s counters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RuleCounters {
    /// Frames matched.
    pub packets: u64,
    /// Their bytes, FCS included.
    pub bytes: u64,
}

/// The stage: every table, their rules' counters, and the ports any table is bound to.
#[derive(Clone, Debug, Default)]
pub struct Acl {
    tables: Vec<AclTable>,
    counters: Vec<Vec<RuleCounters>>,
    bound: PortSet,
}

/// What the stage decided for one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Drop the frame.
    pub drop: bool,
    /// New traffic class.
    pub set_tc: Option<u8>,
    /// New DSCP.
    pub set_dscp: Option<u8>,
    /// Never trim it.
    pub no_trim: bool,
}

impl Acl {
    /// The stage over `tables` (each with its rules already in lookup order).
    pub fn new(tables: Vec<AclTable>) -> Acl {
        let counters = tables
            .iter()
            .map(|t| vec![RuleCounters::default(); t.rules.len()])
            .collect();
        let bound = tables.iter().fold(PortSet::EMPTY, |m, t| m.union(t.ports));
        Acl {
            tables,
            counters,
            bound,
        }
    }

    /// Whether any table is bound to `port` (else the stage is skipped).
    pub fn applies_to(&self, port: usize) -> bool {
        self.bound.contains(port)
    }

    /// Look a frame of `len` bytes up in every table bound to `in_port`, count it against
    /// each table's winning rule, and say what to do.
    pub fn apply(&mut self, in_port: usize, h: &Parsed, tc: u8, len: u32) -> Verdict {
        let mut v = Verdict::default();
        for (t, table) in self.tables.iter().enumerate() {
            let Some(r) = table.lookup(in_port, h, tc) else {
                continue;
            };
            let c = &mut self.counters[t][r];
            c.packets += 1;
            c.bytes += len as u64;
            let a = table.rules[r].action;
            v.drop |= a.packet == PacketAction::Drop;
            v.no_trim |= a.packet == PacketAction::DisableTrim;
            v.set_tc = a.set_tc.or(v.set_tc);
            v.set_dscp = a.set_dscp.or(v.set_dscp);
        }
        v
    }

    /// The tables, rules in lookup order.
    pub fn tables(&self) -> &[AclTable] {
        &self.tables
    }

    /// Counters of rule `rule` (lookup order) of table `table`.
    pub fn counters(&self, table: usize, rule: usize) -> RuleCounters {
        self.counters[table][rule]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::{parse, Parsed};
    use crate::wire::build::FrameSpec;

    /// The parsed headers of a 100-byte UDP frame from `src` to `dst`, ports 1000 → `dport`.
    fn udp(src: [u8; 4], dst: [u8; 4], dport: u16) -> Parsed {
        let spec = FrameSpec {
            src_mac: [2, 0, 0, 0, 0, 1],
            dst_mac: [2, 0, 0, 0, 0, 2],
            vlan: None,
            src_ip: src,
            dst_ip: dst,
            ipv6: false,
            dscp: 0,
            ecn: 0,
            src_port: 1000,
            dst_port: dport,
            bth: None,
            len: 100,
        };
        let mut out = Vec::new();
        spec.write(&mut out).unwrap();
        parse(&out, 100).unwrap()
    }

    fn rule(name: &str, priority: u32, m: AclMatch, packet: PacketAction) -> AclRule {
        AclRule {
            name: name.into(),
            priority,
            matches: m,
            action: AclAction {
                packet,
                ..AclAction::default()
            },
        }
    }

    fn v4(a: [u8; 4], len: u8) -> Prefix {
        Prefix {
            addr: crate::config::v4_key(a),
            len: 96 + len,
        }
    }

    #[test]
    fn the_highest_priority_match_wins_whatever_the_order_given() {
        let h = udp([198, 18, 1, 7], [198, 18, 2, 9], 5000);
        let wide = AclMatch {
            src_ip: Some(v4([198, 18, 0, 0], 16)),
            ..AclMatch::default()
        };
        let narrow = AclMatch {
            src_ip: Some(v4([198, 18, 1, 0], 24)),
            ..AclMatch::default()
        };
        let mut t = AclTable {
            name: "T".into(),
            ports: [0].into_iter().collect(),
            rules: vec![
                rule("WIDE", 10, wide, PacketAction::Drop),
                rule("NARROW", 20, narrow, PacketAction::Forward),
            ],
        };
        t.sort_rules();
        assert_eq!(t.rules[t.lookup(0, &h, 0).unwrap()].name, "NARROW");
        // Not bound to port 1.
        assert_eq!(t.lookup(1, &h, 0), None);
        // The lower-priority rule wins once the narrow one no longer matches.
        let h2 = udp([198, 18, 3, 1], [198, 18, 2, 9], 5000);
        assert_eq!(t.rules[t.lookup(0, &h2, 0).unwrap()].name, "WIDE");
    }

    #[test]
    fn fields_of_a_missing_layer_never_match() {
        let h = udp([198, 18, 1, 7], [198, 18, 2, 9], 53);
        let m = |f: fn(&mut AclMatch)| {
            let mut m = AclMatch::default();
            f(&mut m);
            m.matches(0, &h, 0)
        };
        assert!(m(|m| m.l4_dst_port = Some(PortRange { lo: 50, hi: 60 })));
        assert!(!m(|m| m.l4_dst_port = Some(PortRange { lo: 54, hi: 60 })));
        // Untagged: a VLAN match fails; no BTH on port 53.
        assert!(!m(|m| m.vlan_id = Some(Ternary::<u16>::exact(0))));
        assert!(!m(|m| m.bth_opcode = Some(Ternary { value: 0, mask: 0 })));
        // An IPv6 prefix never matches an IPv4 frame, even ::/0.
        assert!(!m(|m| m.src_ip = Some(Prefix { addr: 0, len: 0 })));
        assert!(m(|m| m.ip_type = Some(IpType::Ipv4Any)));
        assert!(!m(|m| m.ip_type = Some(IpType::NonIp)));
        assert!(m(|m| m.ip_protocol = Some(Ternary::<u8>::exact(17))));
        // Ternary: protocol 17 = 0b10001 matches 0b00001 under mask 0b00001.
        assert!(m(|m| m.ip_protocol = Some(Ternary { value: 1, mask: 1 })));
        assert!(m(|m| m.ether_type = Some(Ternary::<u16>::exact(0x0800))));
    }

    #[test]
    fn parallel_tables_each_count_and_any_drop_drops() {
        let h = udp([198, 18, 1, 7], [198, 18, 2, 9], 53);
        let any = AclMatch::default();
        let a = AclTable {
            name: "A".into(),
            ports: [0].into_iter().collect(),
            rules: vec![AclRule {
                action: AclAction {
                    set_tc: Some(5),
                    ..AclAction::default()
                },
                ..rule("R", 1, any, PacketAction::Forward)
            }],
        };
        let b = AclTable {
            name: "B".into(),
            ports: [0].into_iter().collect(),
            rules: vec![rule("R", 1, any, PacketAction::Drop)],
        };
        let mut acl = Acl::new(vec![a, b]);
        let v = acl.apply(0, &h, 0, 100);
        assert!(v.drop);
        assert_eq!(v.set_tc, Some(5));
        assert_eq!(acl.counters(0, 0).bytes, 100);
        assert_eq!(acl.counters(1, 0).packets, 1);
        assert!(!acl.applies_to(1));
    }
}
