//! Forwarding stages: the VLAN-aware L2 FDB (learning, flooding) and the L3 LPM table with
//! next-hop groups. Keys are integers, never strings.

use crate::config::{Group, GroupMode, NextHop, Route, RouteTarget};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Multiply-shift hasher for integer keys (FDB lookups run per packet).
#[derive(Default, Clone, Copy)]
pub struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(*b as u64);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29);
    }
    fn write_u128(&mut self, n: u128) {
        self.write_u64(n as u64);
        self.write_u64((n >> 64) as u64);
    }
}

type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

fn fdb_key(vid: u16, mac: [u8; 6]) -> u64 {
    let mut k = [0u8; 8];
    k[..2].copy_from_slice(&vid.to_be_bytes());
    k[2..].copy_from_slice(&mac);
    u64::from_be_bytes(k)
}

/// Result of an L2 lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum L2Decision {
    /// Known unicast destination on this port.
    Port(u16),
    /// Broadcast, multicast or unknown unicast: flood.
    Flood,
}

/// VLAN-aware forwarding database.
#[derive(Clone, Debug, Default)]
pub struct Fdb {
    map: IntMap<u64, (u16, bool)>,
    capacity: usize,
    /// Learn attempts refused because the table was full.
    pub full_misses: u64,
    /// Entries learned or moved.
    pub learned: u64,
}

impl Fdb {
    /// A table for up to `capacity` learned entries plus the static ones.
    pub fn new(capacity: usize, statics: &[(u16, [u8; 6], u16)]) -> Fdb {
        let mut map = IntMap::default();
        map.reserve(capacity.min(1 << 16) + statics.len());
        for (vid, mac, port) in statics {
            map.insert(fdb_key(*vid, *mac), (*port, true));
        }
        Fdb {
            map,
            capacity: capacity + statics.len(),
            ..Fdb::default()
        }
    }

    /// Learn `mac` on `port` in `vid` (unicast sources only; static entries never move).
    pub fn learn(&mut self, vid: u16, mac: [u8; 6], port: u16) {
        if mac[0] & 1 != 0 {
            return;
        }
        let k = fdb_key(vid, mac);
        let room = self.map.len() < self.capacity;
        match self.map.get_mut(&k) {
            Some((p, is_static)) => {
                if !*is_static && *p != port {
                    *p = port;
                    self.learned += 1;
                }
            }
            None if room => {
                self.map.insert(k, (port, false));
                self.learned += 1;
            }
            None => self.full_misses += 1,
        }
    }

    /// Where a frame to `mac` in `vid` goes.
    pub fn lookup(&self, vid: u16, mac: [u8; 6]) -> L2Decision {
        if mac[0] & 1 != 0 {
            return L2Decision::Flood;
        }
        match self.map.get(&fdb_key(vid, mac)) {
            Some((p, _)) => L2Decision::Port(*p),
            None => L2Decision::Flood,
        }
    }

    /// Entries in the table.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when the table holds no entry.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// Longest-prefix-match table over 128-bit keys (IPv4 mapped into ::ffff:0:0/96), one exact
/// map per prefix length present, searched longest first.
#[derive(Clone, Debug, Default)]
pub struct Lpm {
    /// (prefix length, prefix → target), longest first.
    tables: Vec<(u8, IntMap<u128, RouteTarget>)>,
    groups: Vec<Group>,
    rr: Vec<usize>,
}

fn mask(len: u8) -> u128 {
    if len == 0 {
        0
    } else {
        u128::MAX << (128 - len as u32)
    }
}

impl Lpm {
    /// Build from routes and groups.
    pub fn new(routes: &[Route], groups: Vec<Group>) -> Lpm {
        let mut tables: Vec<(u8, IntMap<u128, RouteTarget>)> = Vec::new();
        for r in routes {
            let pos = match tables.iter().position(|(l, _)| *l == r.len) {
                Some(i) => i,
                None => {
                    tables.push((r.len, IntMap::default()));
                    tables.len() - 1
                }
            };
            tables[pos].1.insert(r.prefix & mask(r.len), r.target);
        }
        tables.sort_by_key(|t| core::cmp::Reverse(t.0));
        let rr = vec![0; groups.len()];
        Lpm { tables, groups, rr }
    }

    /// The next hop for `dst` with flow hash `hash`, if a route matches.
    pub fn lookup(&mut self, dst: u128, hash: u32) -> Option<NextHop> {
        let target = self
            .tables
            .iter()
            .find_map(|(len, t)| t.get(&(dst & mask(*len))).copied())?;
        match target {
            RouteTarget::NextHop(nh) => Some(nh),
            RouteTarget::Group(g) => {
                let g = g as usize;
                let group = &self.groups[g];
                let n = group.members.len();
                if n == 0 {
                    return None;
                }
                let i = match group.mode {
                    GroupMode::Hash => hash as usize % n,
                    GroupMode::Fixed => 0,
                    GroupMode::PerPacket => {
                        let i = self.rr[g] % n;
                        self.rr[g] = (i + 1) % n;
                        i
                    }
                };
                Some(group.members[i])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::v4_key;

    #[test]
    fn fdb_learns_moves_and_floods_unknown() {
        let mut f = Fdb::new(2, &[(0, [2, 0, 0, 0, 0, 9], 3)]);
        let a = [2, 0, 0, 0, 0, 1];
        assert_eq!(f.lookup(0, a), L2Decision::Flood);
        f.learn(0, a, 1);
        assert_eq!(f.lookup(0, a), L2Decision::Port(1));
        assert_eq!(f.lookup(7, a), L2Decision::Flood, "VLAN-aware");
        f.learn(0, a, 2);
        assert_eq!(f.lookup(0, a), L2Decision::Port(2));
        f.learn(0, [2, 0, 0, 0, 0, 9], 0);
        assert_eq!(
            f.lookup(0, [2, 0, 0, 0, 0, 9]),
            L2Decision::Port(3),
            "static stays"
        );
        f.learn(0, [2, 0, 0, 0, 0, 2], 0);
        f.learn(0, [2, 0, 0, 0, 0, 3], 0);
        assert_eq!(f.full_misses, 1);
        assert_eq!(f.lookup(0, [0xFF; 6]), L2Decision::Flood);
    }

    #[test]
    fn lpm_prefers_longest_prefix_and_hashes_groups() {
        let nh = |port| NextHop { port, mac: [0; 6] };
        let routes = [
            Route {
                prefix: v4_key([198, 18, 0, 0]),
                len: 96 + 15,
                target: RouteTarget::NextHop(nh(1)),
            },
            Route {
                prefix: v4_key([198, 18, 1, 0]),
                len: 96 + 24,
                target: RouteTarget::Group(0),
            },
        ];
        let groups = vec![Group {
            name: "g".into(),
            mode: GroupMode::Hash,
            members: vec![nh(2), nh(3)],
        }];
        let mut l = Lpm::new(&routes, groups);
        assert_eq!(l.lookup(v4_key([198, 18, 5, 5]), 0).unwrap().port, 1);
        assert_eq!(l.lookup(v4_key([198, 18, 1, 5]), 0).unwrap().port, 2);
        assert_eq!(l.lookup(v4_key([198, 18, 1, 5]), 1).unwrap().port, 3);
        assert!(l.lookup(v4_key([10, 0, 0, 1]), 0).is_none());
    }
}
