//! The ACL stage against a brute-force reference: random tables of rules with nested source
//! prefixes, DSCP and port-range matches and colliding priorities, random frames; every
//! frame must be counted by the rule the reference picks (the matching rule of highest
//! priority, the first by name among equals — SONiC's order, made deterministic), and the
//! verdict must be the union of the tables' winners.

use lossless_pipeline::acl::{
    Acl, AclAction, AclMatch, AclRule, AclTable, PacketAction, PortRange, Prefix, Ternary,
};
use lossless_pipeline::config::v4_key;
use lossless_pipeline::parser::parse;
use lossless_pipeline::wire::build::FrameSpec;
use proptest::prelude::*;

/// A rule as plain numbers: (name, priority, source prefix (addr, len), DSCP, port range,
/// drop, set_tc).
#[derive(Clone, Debug)]
struct RefRule {
    name: String,
    priority: u32,
    src: Option<(u32, u8)>,
    dscp: Option<u8>,
    dport: Option<(u16, u16)>,
    drop: bool,
    set_tc: Option<u8>,
}

impl RefRule {
    fn matches(&self, src: u32, dscp: u8, dport: u16) -> bool {
        let src_ok = self.src.is_none_or(|(a, len)| {
            len == 0 || (src >> (32 - len as u32)) == (a >> (32 - len as u32))
        });
        src_ok
            && self.dscp.is_none_or(|d| d == dscp)
            && self.dport.is_none_or(|(lo, hi)| lo <= dport && dport <= hi)
    }

    fn to_rule(&self) -> AclRule {
        AclRule {
            name: self.name.clone(),
            priority: self.priority,
            matches: AclMatch {
                src_ip: self.src.map(|(a, len)| Prefix {
                    addr: v4_key(a.to_be_bytes()),
                    len: 96 + len,
                }),
                dscp: self.dscp.map(Ternary::<u8>::exact),
                l4_dst_port: self.dport.map(|(lo, hi)| PortRange { lo, hi }),
                ..AclMatch::default()
            },
            action: AclAction {
                packet: if self.drop {
                    PacketAction::Drop
                } else {
                    PacketAction::Forward
                },
                set_tc: self.set_tc,
                set_dscp: None,
            },
        }
    }
}

/// The reference winner: scan every rule, keep the best (priority up, then name down).
fn winner(rules: &[RefRule], src: u32, dscp: u8, dport: u16) -> Option<&RefRule> {
    let mut best: Option<&RefRule> = None;
    for r in rules.iter().filter(|r| r.matches(src, dscp, dport)) {
        best = match best {
            Some(b) if b.priority > r.priority || (b.priority == r.priority && b.name < r.name) => {
                Some(b)
            }
            _ => Some(r),
        };
    }
    best
}

fn rule_strategy() -> impl Strategy<Value = RefRule> {
    (
        0u32..4,
        prop::option::of((0u32..16, 0u8..=32)),
        prop::option::of(0u8..4),
        prop::option::of((0u16..8, 0u16..8)),
        any::<bool>(),
        prop::option::of(0u8..8),
    )
        .prop_map(|(priority, src, dscp, dport, drop, set_tc)| RefRule {
            name: String::new(),
            priority,
            // Addresses in 198.18.0.0/28: prefixes of every length nest and overlap there.
            src: src.map(|(a, len)| (0xC612_0000 | a, len)),
            dscp,
            // Ports 5000–5007 (clear of RoCEv2's 4791).
            dport: dport.map(|(a, b)| (5000 + a.min(b), 5000 + a.max(b))),
            drop,
            set_tc,
        })
}

fn frame(src: u32, dscp: u8, dport: u16) -> Vec<u8> {
    let spec = FrameSpec {
        src_mac: [2, 0, 0, 0, 0, 1],
        dst_mac: [2, 0, 0, 0, 0, 2],
        vlan: None,
        src_ip: src.to_be_bytes(),
        dst_ip: [198, 18, 9, 9],
        ipv6: false,
        dscp,
        ecn: 0,
        src_port: 1000,
        dst_port: dport,
        bth: None,
        len: 128,
    };
    let mut out = Vec::new();
    spec.write(&mut out).unwrap();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn every_frame_is_counted_by_the_reference_winner(
        tables in prop::collection::vec(prop::collection::vec(rule_strategy(), 0..8), 1..3),
        frames in prop::collection::vec((0u32..16, 0u8..4, 0u16..8), 1..40),
    ) {
        // Names in an order unrelated to generation: ties must be broken by name, not by
        // position.
        let tables: Vec<Vec<RefRule>> = tables
            .into_iter()
            .map(|rules| {
                let n = rules.len();
                rules
                    .into_iter()
                    .enumerate()
                    .map(|(i, mut r)| {
                        r.name = format!("R{}", (i * 5 + 3) % n.max(1) + 10 * i);
                        r
                    })
                    .collect()
            })
            .collect();
        let mut acl = Acl::new(
            tables
                .iter()
                .enumerate()
                .map(|(i, rules)| {
                    let mut t = AclTable {
                        name: format!("T{i}"),
                        ports: [0].into_iter().collect(),
                        rules: rules.iter().map(RefRule::to_rule).collect(),
                    };
                    t.sort_rules();
                    t
                })
                .collect(),
        );
        let mut expected: Vec<std::collections::BTreeMap<String, u64>> =
            vec![Default::default(); tables.len()];
        for (a, dscp, dport) in frames {
            let src = 0xC612_0000 | a;
            let bytes = frame(src, dscp, dport + 5000);
            let h = parse(&bytes, 128).unwrap();
            let v = acl.apply(0, &h, 0, 128);
            let (mut drop, mut tc) = (false, None);
            for (t, rules) in tables.iter().enumerate() {
                if let Some(w) = winner(rules, src, dscp, dport + 5000) {
                    *expected[t].entry(w.name.clone()).or_default() += 1;
                    drop |= w.drop;
                    tc = w.set_tc.or(tc);
                }
            }
            prop_assert_eq!(v.drop, drop);
            prop_assert_eq!(v.set_tc, tc);
            // A frame on a port no table is bound to is never looked at.
            prop_assert_eq!(acl.apply(1, &h, 0, 128), Default::default());
        }
        for (t, table) in acl.tables().iter().enumerate() {
            for (r, rule) in table.rules.iter().enumerate() {
                let want = expected[t].get(&rule.name).copied().unwrap_or(0);
                prop_assert_eq!(acl.counters(t, r).packets, want, "{}|{}", table.name, rule.name);
            }
        }
    }
}
