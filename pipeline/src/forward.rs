//! Forwarding stages: the VLAN-aware L2 FDB (learning, flooding) and the L3 LPM table with
//! next-hop groups. Keys are integers, never strings.

use crate::config::{Route, RouteTarget};
use lossless_buffer_model::Time;
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

/// A hash map over integer keys with [`IntHasher`].
pub(crate) type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

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

/// One FDB entry: the port, whether it is static, and when a learned one was last seen.
#[derive(Clone, Copy, Debug)]
struct Entry {
    port: u16,
    is_static: bool,
    seen: Time,
}

/// VLAN-aware forwarding database. Learned entries age out `aging` after their MAC was
/// last seen as a source (SONiC's `fdb_aging_time`, 600 s by default; 0 never ages), and
/// a port's learned entries are flushed when its link goes down; static entries stay.
#[derive(Clone, Debug, Default)]
pub struct Fdb {
    map: IntMap<u64, Entry>,
    capacity: usize,
    aging: Time,
    /// Earliest time an entry may have expired (when a sweep can free room).
    next_expiry: Time,
    /// Learn attempts refused because the table was full.
    pub full_misses: u64,
    /// Entries learned or moved.
    pub learned: u64,
    /// Learned entries removed because they aged out.
    pub aged_out: u64,
    /// Learned entries removed because their port's link went down.
    pub flushed: u64,
}

impl Fdb {
    /// A table for up to `capacity` learned entries plus the static ones, learned entries
    /// aging after `aging` (0: never).
    pub fn new(capacity: usize, aging: Time, statics: &[(u16, [u8; 6], u16)]) -> Fdb {
        let mut map = IntMap::default();
        map.reserve(capacity.min(1 << 16) + statics.len());
        for (vid, mac, port) in statics {
            let e = Entry {
                port: *port,
                is_static: true,
                seen: Time::ZERO,
            };
            map.insert(fdb_key(*vid, *mac), e);
        }
        Fdb {
            map,
            capacity: capacity + statics.len(),
            aging,
            ..Fdb::default()
        }
    }

    fn expired(&self, e: &Entry, now: Time) -> bool {
        !e.is_static && self.aging > Time::ZERO && now.saturating_sub(e.seen) >= self.aging
    }

    /// Learn `mac` on `port` in `vid` at `now` (unicast sources only; static entries never
    /// move). A full table first drops the entries that have aged out.
    pub fn learn(&mut self, vid: u16, mac: [u8; 6], port: u16, now: Time) {
        if mac[0] & 1 != 0 {
            return;
        }
        let k = fdb_key(vid, mac);
        if let Some(e) = self.map.get_mut(&k) {
            if !e.is_static {
                if e.port != port {
                    e.port = port;
                    self.learned += 1;
                }
                e.seen = now;
            }
            return;
        }
        if self.map.len() >= self.capacity && self.aging > Time::ZERO && now >= self.next_expiry {
            self.sweep(now);
        }
        if self.map.len() < self.capacity {
            let e = Entry {
                port,
                is_static: false,
                seen: now,
            };
            self.map.insert(k, e);
            self.learned += 1;
        } else {
            self.full_misses += 1;
        }
    }

    /// Remove the learned entries that have aged out by `now`.
    fn sweep(&mut self, now: Time) {
        let before = self.map.len();
        let aging = self.aging;
        self.map
            .retain(|_, e| e.is_static || now.saturating_sub(e.seen) < aging);
        self.aged_out += (before - self.map.len()) as u64;
        self.next_expiry = self
            .map
            .values()
            .filter(|e| !e.is_static)
            .map(|e| e.seen + aging)
            .min()
            .unwrap_or(now + aging);
    }

    /// Where a frame to `mac` in `vid` goes at `now` (an aged-out entry is unknown).
    pub fn lookup(&self, vid: u16, mac: [u8; 6], now: Time) -> L2Decision {
        if mac[0] & 1 != 0 {
            return L2Decision::Flood;
        }
        match self.map.get(&fdb_key(vid, mac)) {
            Some(e) if !self.expired(e, now) => L2Decision::Port(e.port),
            _ => L2Decision::Flood,
        }
    }

    /// Forget the learned entries toward `port` (its link went down).
    pub fn flush_port(&mut self, port: u16) {
        let before = self.map.len();
        self.map.retain(|_, e| e.is_static || e.port != port);
        self.flushed += (before - self.map.len()) as u64;
    }

    /// Entries in the table (static and learned, aged-out ones not yet swept included).
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Learned entries in force at `now`.
    pub fn learned_entries(&self, now: Time) -> usize {
        self.map
            .values()
            .filter(|e| !e.is_static && !self.expired(e, now))
            .count()
    }

    /// True when the table holds no entry.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// Longest-prefix-match table over 128-bit keys (IPv4 mapped into ::ffff:0:0/96), one exact
/// table per prefix length present, searched longest first.
#[derive(Clone, Debug, Default)]
pub struct Lpm {
    /// (prefix length, its routes), longest first.
    tables: Vec<(u8, Prefixes)>,
}

/// The routes of one prefix length. A length with a single route (a default route, most
/// often) is one compare, not a hash probe.
#[derive(Clone, Debug)]
enum Prefixes {
    /// The only prefix of this length, already masked.
    One(u128, RouteTarget),
    /// Masked prefix → target.
    Many(IntMap<u128, RouteTarget>),
}

impl Prefixes {
    fn get(&self, masked: u128) -> Option<RouteTarget> {
        match self {
            Prefixes::One(p, t) => (*p == masked).then_some(*t),
            Prefixes::Many(m) => m.get(&masked).copied(),
        }
    }
}

fn mask(len: u8) -> u128 {
    if len == 0 {
        0
    } else {
        u128::MAX << (128 - len as u32)
    }
}

impl Lpm {
    /// Build from routes (a later route for the same prefix replaces an earlier one).
    pub fn new(routes: &[Route]) -> Lpm {
        let mut maps: Vec<(u8, IntMap<u128, RouteTarget>)> = Vec::new();
        for r in routes {
            let pos = match maps.iter().position(|(l, _)| *l == r.len) {
                Some(i) => i,
                None => {
                    maps.push((r.len, IntMap::default()));
                    maps.len() - 1
                }
            };
            maps[pos].1.insert(r.prefix & mask(r.len), r.target);
        }
        maps.sort_by_key(|t| core::cmp::Reverse(t.0));
        let tables = maps
            .into_iter()
            .map(|(len, m)| {
                let table = match m.iter().next() {
                    Some((p, t)) if m.len() == 1 => Prefixes::One(*p, *t),
                    _ => Prefixes::Many(m),
                };
                (len, table)
            })
            .collect();
        Lpm { tables }
    }

    /// Where the longest matching route sends `dst`, if one matches.
    pub fn lookup(&self, dst: u128) -> Option<RouteTarget> {
        self.tables
            .iter()
            .find_map(|(len, t)| t.get(dst & mask(*len)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{v4_key, NextHop};

    const T0: Time = Time::ZERO;

    #[test]
    fn fdb_learns_moves_and_floods_unknown() {
        let mut f = Fdb::new(2, Time::ZERO, &[(0, [2, 0, 0, 0, 0, 9], 3)]);
        let a = [2, 0, 0, 0, 0, 1];
        assert_eq!(f.lookup(0, a, T0), L2Decision::Flood);
        f.learn(0, a, 1, T0);
        assert_eq!(f.lookup(0, a, T0), L2Decision::Port(1));
        assert_eq!(f.lookup(7, a, T0), L2Decision::Flood, "VLAN-aware");
        f.learn(0, a, 2, T0);
        assert_eq!(f.lookup(0, a, T0), L2Decision::Port(2));
        f.learn(0, [2, 0, 0, 0, 0, 9], 0, T0);
        assert_eq!(
            f.lookup(0, [2, 0, 0, 0, 0, 9], T0),
            L2Decision::Port(3),
            "static stays"
        );
        f.learn(0, [2, 0, 0, 0, 0, 2], 0, T0);
        f.learn(0, [2, 0, 0, 0, 0, 3], 0, T0);
        assert_eq!(f.full_misses, 1);
        assert_eq!(f.lookup(0, [0xFF; 6], T0), L2Decision::Flood);
    }

    #[test]
    fn learned_entries_age_out_and_make_room_static_ones_stay() {
        let aging = Time::from_ms(600);
        let st = [2, 0, 0, 0, 0, 9];
        let mut f = Fdb::new(2, aging, &[(0, st, 3)]);
        let (a, b, c) = ([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 3]);
        f.learn(0, a, 1, Time::ZERO);
        f.learn(0, b, 2, Time::from_ms(100));
        // Seen again at 500 ms: a's age restarts.
        f.learn(0, a, 1, Time::from_ms(500));
        assert_eq!(f.lookup(0, b, Time::from_ms(699)), L2Decision::Port(2));
        assert_eq!(
            f.lookup(0, b, Time::from_ms(700)),
            L2Decision::Flood,
            "aged out"
        );
        assert_eq!(f.lookup(0, a, Time::from_ms(1099)), L2Decision::Port(1));
        // The table is full (2 learned) until a sweep removes b.
        f.learn(0, c, 4, Time::from_ms(800));
        assert_eq!((f.aged_out, f.full_misses), (1, 0));
        assert_eq!(f.lookup(0, c, Time::from_ms(800)), L2Decision::Port(4));
        assert_eq!(f.learned_entries(Time::from_ms(800)), 2);
        assert_eq!(
            f.lookup(0, st, Time::from_ms(1_000_000)),
            L2Decision::Port(3)
        );
    }

    #[test]
    fn a_ports_learned_entries_are_flushed_when_its_link_goes_down() {
        let mut f = Fdb::new(8, Time::ZERO, &[(0, [2, 0, 0, 0, 0, 9], 1)]);
        f.learn(0, [2, 0, 0, 0, 0, 1], 1, T0);
        f.learn(0, [2, 0, 0, 0, 0, 2], 1, T0);
        f.learn(0, [2, 0, 0, 0, 0, 3], 2, T0);
        f.flush_port(1);
        assert_eq!(f.flushed, 2);
        assert_eq!(f.lookup(0, [2, 0, 0, 0, 0, 1], T0), L2Decision::Flood);
        assert_eq!(f.lookup(0, [2, 0, 0, 0, 0, 3], T0), L2Decision::Port(2));
        assert_eq!(
            f.lookup(0, [2, 0, 0, 0, 0, 9], T0),
            L2Decision::Port(1),
            "static"
        );
    }

    /// Against the definition: of the routes that match, the longest (the last given for
    /// one prefix), over random tables mixing lengths with one route and with many.
    #[test]
    fn lpm_agrees_with_a_scan_of_every_route() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..200 {
            let lens = [0u8, 96, 96 + 8, 96 + 16, 96 + 24, 96 + 32, 64, 128];
            let routes: Vec<Route> = (0..1 + next() % 12)
                .map(|i| {
                    let len = lens[(next() % lens.len() as u64) as usize];
                    // Few distinct addresses, so prefixes overlap and repeat.
                    let prefix = if next() % 2 == 0 {
                        v4_key([198, 18, (next() % 3) as u8, (next() % 3) as u8])
                    } else {
                        ((next() % 3) as u128) << 120 | (next() % 3) as u128
                    };
                    Route {
                        prefix,
                        len,
                        target: RouteTarget::Group(i as u16),
                    }
                })
                .collect();
            let l = Lpm::new(&routes);
            for _ in 0..50 {
                let dst = if next() % 2 == 0 {
                    v4_key([198, 18, (next() % 4) as u8, (next() % 4) as u8])
                } else {
                    ((next() % 4) as u128) << 120 | (next() % 4) as u128
                };
                let want = routes
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| dst & mask(r.len) == r.prefix & mask(r.len))
                    .max_by_key(|(i, r)| (r.len, *i))
                    .map(|(_, r)| r.target);
                assert_eq!(l.lookup(dst), want, "{dst:x} in {routes:?}");
            }
        }
    }

    #[test]
    fn lpm_prefers_the_longest_prefix() {
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
        let l = Lpm::new(&routes);
        assert_eq!(
            l.lookup(v4_key([198, 18, 5, 5])),
            Some(RouteTarget::NextHop(nh(1)))
        );
        assert_eq!(
            l.lookup(v4_key([198, 18, 1, 5])),
            Some(RouteTarget::Group(0))
        );
        assert_eq!(l.lookup(v4_key([10, 0, 0, 1])), None);
    }
}
