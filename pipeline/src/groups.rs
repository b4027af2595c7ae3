//! Next-hop groups: how a routed packet picks a member (hash, flowlet, per packet, fixed),
//! and what each group counts (packets and bytes per member, flowlets, reassignments,
//! flow-table overflows).

use crate::config::{Group, GroupMode, NextHop};
use crate::dlb::{self, FlowTable, LoadMeter, Lookup};
use crate::port_set::PortSet;
use lossless_buffer_model::{Rate, Time};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// What a group has done.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupCounters {
    /// Packets sent to each member (index = member).
    pub member_packets: Vec<u64>,
    /// Bytes sent to each member.
    pub member_bytes: Vec<u64>,
    /// Flowlets started (flowlet mode): a new flow, or a flow idle past `idle_time`.
    pub flowlets: u64,
    /// Flowlets that took a different member than the flow's previous flowlet.
    pub reassignments: u64,
    /// Packets of new flows that found the flow table full and fell back to the hash.
    pub table_full: u64,
}

/// The live state of a member as the traffic manager sees it, for its quality.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberState {
    /// The member's link is up.
    pub link_up: bool,
    /// The packet's PFC priority is paused on the member's port.
    pub paused: bool,
    /// Bytes queued on the member's port (future load).
    pub queued_bytes: u64,
}

/// A group and its selection state.
#[derive(Clone, Debug)]
struct GroupState {
    cfg: Group,
    /// Flowlet mode: the flow table and one past-load meter per member.
    table: Option<FlowTable>,
    meters: Vec<LoadMeter>,
    rng: Xoshiro256PlusPlus,
    counters: GroupCounters,
}

/// The groups of a switch.
#[derive(Clone, Debug, Default)]
pub struct Groups {
    groups: Vec<GroupState>,
    /// Hash seed: mixed into the 5-tuple hash so switches do not all pick alike.
    seed: u64,
    /// For each port, the (group, member) meters it feeds.
    metered: Vec<Vec<(u16, u16)>>,
    /// Ports whose link is down: hash, per-packet and fixed groups skip them.
    down: PortSet,
}

/// SplitMix64's increment (2^64 / φ): consecutive multiples of it, spread, are unrelated.
pub const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's finaliser: spreads the bits of `z` over the whole word (seeds of random
/// streams drawn from one run seed: a group's, a link direction's).
pub fn spread(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One SplitMix64 step from `x`: spreads the bits of `x` over the whole word.
fn mix(x: u64) -> u64 {
    spread(x.wrapping_add(GOLDEN_GAMMA))
}

/// Is member `m`'s port in the `down` set?
#[inline(always)]
fn is_down(down: &PortSet, m: &NextHop) -> bool {
    down.contains(m.port as usize)
}

impl Groups {
    /// The groups of a switch whose ports run at `speeds`, hashing with `seed`.
    pub fn new(groups: Vec<Group>, speeds: &[Rate], seed: u64) -> Groups {
        let mut metered = vec![Vec::new(); speeds.len()];
        let groups = groups
            .into_iter()
            .enumerate()
            .map(|(gi, cfg)| {
                let n = cfg.members.len();
                let (table, meters) = match cfg.flowlet {
                    Some(f) => {
                        let meters = cfg
                            .members
                            .iter()
                            .enumerate()
                            .map(|(mi, m)| {
                                metered[m.port as usize].push((gi as u16, mi as u16));
                                LoadMeter::new(speeds[m.port as usize], f.sampling_interval)
                            })
                            .collect();
                        (Some(FlowTable::new(f.max_flows, f.idle_time)), meters)
                    }
                    None => (None, Vec::new()),
                };
                GroupState {
                    cfg,
                    table,
                    meters,
                    rng: Xoshiro256PlusPlus::seed_from_u64(mix(seed ^ (gi as u64) << 32)),
                    counters: GroupCounters {
                        member_packets: vec![0; n],
                        member_bytes: vec![0; n],
                        ..GroupCounters::default()
                    },
                }
            })
            .collect();
        Groups {
            groups,
            seed,
            metered,
            down: PortSet::EMPTY,
        }
    }

    /// The member of group `g` for a packet of `len` bytes with 5-tuple hash `hash`,
    /// arriving at `now`; `state(port)` is the live state of a member's port (read only
    /// when a flowlet starts).
    pub fn pick(
        &mut self,
        g: u16,
        hash: u32,
        len: u32,
        now: Time,
        state: impl Fn(u16) -> MemberState,
    ) -> Option<NextHop> {
        let seed = self.seed;
        let group = self.groups.get_mut(g as usize)?;
        let n = group.cfg.members.len();
        if n == 0 {
            return None;
        }
        let down = &self.down;
        let hashed = || (mix(hash as u64 ^ seed) >> 32) as usize % n;
        let i = match group.cfg.mode {
            GroupMode::Hash => group.failover(hashed(), hash, down),
            GroupMode::Fixed => group
                .cfg
                .members
                .iter()
                .position(|m| !is_down(down, m))
                .unwrap_or(0),
            GroupMode::PerPacket => {
                let i = ((group.rng.next_u32() as u64 * n as u64) >> 32) as usize;
                group.failover(i, hash, down)
            }
            GroupMode::Flowlet => match group.flowlet(hash, now, &state) {
                Some(i) => i,
                None => group.failover(hashed(), hash, down),
            },
        };
        group.counters.member_packets[i] += 1;
        group.counters.member_bytes[i] += len as u64;
        Some(group.cfg.members[i])
    }

    /// A frame of `bytes` started on `port` at `now` (past load of the members on it).
    pub fn record_tx(&mut self, port: usize, now: Time, bytes: u64) {
        for &(g, m) in &self.metered[port] {
            self.groups[g as usize].meters[m as usize].record(now, bytes);
        }
    }

    /// `port`'s link went up or down. Down: flows on members there start a new flowlet
    /// elsewhere, and other modes stop choosing the member until it is up again.
    pub fn set_link(&mut self, port: usize, up: bool) {
        if port >= PortSet::MAX {
            return;
        }
        if up {
            self.down.remove(port);
            return;
        }
        self.down.insert(port);
        for &(g, m) in &self.metered[port] {
            if let Some(t) = &mut self.groups[g as usize].table {
                t.evict_member(m);
            }
        }
    }

    /// Groups, in configuration order: name, mode, members and counters.
    pub fn iter(&self) -> impl Iterator<Item = (&Group, &GroupCounters)> {
        self.groups.iter().map(|g| (&g.cfg, &g.counters))
    }

    /// Is any group metering `port` (does a transmit there need `record_tx`)?
    pub fn meters_port(&self, port: usize) -> bool {
        self.metered.get(port).is_some_and(|m| !m.is_empty())
    }
}

impl GroupState {
    /// Member `i`, or when its link is down one of the members that are up, chosen by
    /// `hash` (only the flows of a down member move, as with resilient hashing); `i` when
    /// every member is down.
    fn failover(&self, i: usize, hash: u32, down: &PortSet) -> usize {
        let members = &self.cfg.members;
        if !is_down(down, &members[i]) {
            return i;
        }
        let up = members.iter().filter(|m| !is_down(down, m)).count();
        if up == 0 {
            return i;
        }
        let k = (mix(hash as u64) >> 32) as usize % up;
        members
            .iter()
            .enumerate()
            .filter(|(_, m)| !is_down(down, m))
            .nth(k)
            .map_or(i, |(j, _)| j)
    }

    /// Flowlet mode: the member for this packet, or None to fall back to the hash.
    fn flowlet(
        &mut self,
        hash: u32,
        now: Time,
        state: &impl Fn(u16) -> MemberState,
    ) -> Option<usize> {
        let table = self.table.as_mut().expect("flowlet group has a table");
        let previous = match table.lookup(hash, now) {
            Lookup::Continue(m) => return Some(m as usize),
            Lookup::Full => {
                self.counters.table_full += 1;
                return None;
            }
            Lookup::NewFlowlet(prev) => prev,
        };
        let i = self.best_member(now, state);
        self.counters.flowlets += 1;
        if previous.is_some_and(|p| p as usize != i) {
            self.counters.reassignments += 1;
        }
        self.table
            .as_mut()
            .expect("flowlet group has a table")
            .assign(hash, i as u16, now);
        Some(i)
    }

    /// The member of the best quality band, ties broken at random.
    fn best_member(&mut self, now: Time, state: &impl Fn(u16) -> MemberState) -> usize {
        let mut best = u8::MAX;
        let mut ties = 0u32;
        let mut pick = 0;
        for (i, m) in self.cfg.members.iter().enumerate() {
            let s = state(m.port);
            let b = quality(&self.meters[i], &s, now);
            if b < best {
                best = b;
                ties = 1;
                pick = i;
            } else if b == best {
                // Reservoir sampling: each tied member is equally likely.
                ties += 1;
                if (self.rng.next_u32() as u64 * ties as u64) >> 32 == 0 {
                    pick = i;
                }
            }
        }
        pick
    }
}

/// A member's quality band: the worse of its past-load and future-load bands; a paused
/// member is worse than any load, a down one worst.
pub fn quality(meter: &LoadMeter, s: &MemberState, now: Time) -> u8 {
    if !s.link_up {
        return dlb::BAND_DOWN;
    }
    if s.paused {
        return dlb::BAND_PAUSED;
    }
    let cap = meter.capacity();
    dlb::band(meter.past(now), cap).max(dlb::band(s.queued_bytes as f64, cap))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FlowletConfig;

    fn nh(port: u16) -> NextHop {
        NextHop { port, mac: [0; 6] }
    }

    fn group(mode: GroupMode, ports: &[u16]) -> Group {
        Group {
            name: "g".into(),
            mode,
            members: ports.iter().map(|p| nh(*p)).collect(),
            flowlet: (mode == GroupMode::Flowlet).then_some(FlowletConfig {
                idle_time: Time::from_us(10),
                max_flows: 512,
                sampling_interval: Time::from_us(16),
            }),
        }
    }

    const UP: MemberState = MemberState {
        link_up: true,
        paused: false,
        queued_bytes: 0,
    };

    #[test]
    fn hash_depends_on_the_seed_and_is_stable() {
        let speeds = [Rate::gbps(100); 4];
        let picks = |seed| {
            let mut g = Groups::new(vec![group(GroupMode::Hash, &[0, 1, 2, 3])], &speeds, seed);
            (0..64u32)
                .map(|h| g.pick(0, h, 100, Time::ZERO, |_| UP).unwrap().port)
                .collect::<Vec<_>>()
        };
        assert_eq!(picks(1), picks(1));
        assert_ne!(picks(1), picks(2));
        // All members used over 64 hashes.
        let p = picks(1);
        assert!((0..4).all(|m| p.contains(&m)));
    }

    #[test]
    fn a_new_flowlet_takes_the_least_loaded_member_and_stays_there() {
        let speeds = [Rate::gbps(100); 3];
        let mut g = Groups::new(vec![group(GroupMode::Flowlet, &[0, 1, 2])], &speeds, 1);
        // Port 0 has 60 KB queued (band 2 of 200 KB), port 1 is paused, port 2 is idle.
        let state = |p: u16| MemberState {
            link_up: true,
            paused: p == 1,
            queued_bytes: if p == 0 { 60_000 } else { 0 },
        };
        let t0 = Time::ZERO;
        assert_eq!(g.pick(0, 5, 1000, t0, state).unwrap().port, 2);
        // Within the flowlet the member holds even when it becomes the worst.
        let busy = |p: u16| MemberState {
            link_up: true,
            paused: false,
            queued_bytes: if p == 2 { 1_000_000 } else { 0 },
        };
        assert_eq!(g.pick(0, 5, 1000, Time::from_us(5), busy).unwrap().port, 2);
        // After an idle gap the flow moves.
        let p = g.pick(0, 5, 1000, Time::from_us(16), busy).unwrap().port;
        assert_ne!(p, 2);
        let (_, c) = g.iter().next().unwrap();
        assert_eq!((c.flowlets, c.reassignments), (2, 1));
        assert_eq!(c.member_packets.iter().sum::<u64>(), 3);
        assert_eq!(c.member_bytes[2], 2000);
    }

    #[test]
    fn past_load_steers_new_flowlets_off_a_busy_member() {
        let speeds = [Rate::gbps(100); 2];
        let mut g = Groups::new(vec![group(GroupMode::Flowlet, &[0, 1])], &speeds, 3);
        // Member 0 sent at line rate for 64 µs.
        let mut t = Time::ZERO;
        while t < Time::from_us(64) {
            g.record_tx(0, t, 1518);
            t += Rate::gbps(100).wire_time(1518);
        }
        for h in 0..20 {
            assert_eq!(g.pick(0, h, 100, t, |_| UP).unwrap().port, 1, "flow {h}");
        }
    }

    #[test]
    fn down_members_are_avoided_and_paused_ones_only_when_all_are() {
        let speeds = [Rate::gbps(100); 2];
        let mut g = Groups::new(vec![group(GroupMode::Flowlet, &[0, 1])], &speeds, 1);
        let down0 = |p: u16| MemberState {
            link_up: p != 0,
            paused: true,
            queued_bytes: 0,
        };
        for h in 0..10 {
            assert_eq!(g.pick(0, h, 100, Time::ZERO, down0).unwrap().port, 1);
        }
    }

    #[test]
    fn hash_fails_over_only_the_flows_of_a_down_member() {
        let speeds = [Rate::gbps(100); 4];
        let mut g = Groups::new(vec![group(GroupMode::Hash, &[0, 1, 2, 3])], &speeds, 9);
        let picks = |g: &mut Groups| {
            (0..200u32)
                .map(|h| g.pick(0, h, 100, Time::ZERO, |_| UP).unwrap().port)
                .collect::<Vec<_>>()
        };
        let before = picks(&mut g);
        g.set_link(2, false);
        let during = picks(&mut g);
        for (b, d) in before.iter().zip(&during) {
            assert_ne!(*d, 2);
            if *b != 2 {
                assert_eq!(b, d, "a flow on an up member stays");
            }
        }
        // The moved flows spread over the three up members.
        let moved: Vec<u16> = before
            .iter()
            .zip(&during)
            .filter(|(b, _)| **b == 2)
            .map(|(_, d)| *d)
            .collect();
        assert!([0, 1, 3].iter().all(|m| moved.contains(m)), "{moved:?}");
        g.set_link(2, true);
        assert_eq!(picks(&mut g), before);
        // Fixed takes the first member that is up.
        let mut f = Groups::new(vec![group(GroupMode::Fixed, &[0, 1])], &speeds, 9);
        f.set_link(0, false);
        assert_eq!(f.pick(0, 1, 100, Time::ZERO, |_| UP).unwrap().port, 1);
    }
}
