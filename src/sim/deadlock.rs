//! The PFC deadlock indicator: a cycle of waits across switches. A wait is an egress queue
//! (switch, port, queue) that holds frames, is paused by PFC from the switch cabled to that
//! port, and has started nothing for `deadlock_time`; it waits on every stuck queue of
//! that peer holding frames that came in over the same link through a PG that pauses the
//! queue's priorities (those frames keep the peer's PG in XOFF). A cycle in that graph can
//! only be broken from outside (a watchdog, a link going down, a lossy hop dropping).
//!
//! The engine calls [`DeadlockWatch::check`] every `deadlock_time / 8`, and every
//! `deadlock_time / 1000` while a deadlock stands, so the clearing time is known to 0.1 %.

use super::cabling::NodeId;
use super::SwitchNode;
use lossless_buffer_model::{Time, PRIORITIES};

/// One wait of a cycle: egress queue `queue` of port `port` of switch `switch` (indices).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Wait {
    /// Switch index.
    pub switch: usize,
    /// Port index.
    pub port: usize,
    /// Egress queue.
    pub queue: usize,
}

/// A deadlock the indicator found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deadlock {
    /// The cycle, from its smallest wait: each queue is paused by the switch of the next.
    pub cycle: Vec<Wait>,
    /// Since when no queue of the cycle has started a frame (the latest of their waits'
    /// starts): the cycle stood from here.
    pub formed: Time,
    /// When the indicator fired: `formed + deadlock_time`.
    pub detected: Time,
    /// When some queue of the cycle moved again or emptied (to within a check), if it did.
    pub cleared: Option<Time>,
}

/// The indicator's state over a run.
#[derive(Clone, Debug)]
pub struct DeadlockWatch {
    time: Time,
    found: Vec<Deadlock>,
    /// Indices into `found` of the deadlocks that stand.
    active: Vec<usize>,
    /// The earliest time a cycle seen at the last check would have stood `deadlock_time`.
    due: Option<Time>,
}

impl DeadlockWatch {
    /// An indicator that fires once a cycle has stood for `deadlock_time`.
    pub fn new(deadlock_time: Time) -> DeadlockWatch {
        DeadlockWatch {
            time: deadlock_time,
            found: Vec::new(),
            active: Vec::new(),
            due: None,
        }
    }

    /// When to check next after a check at `now`: at the latest after an eighth of
    /// `deadlock_time` (a thousandth while a deadlock stands), and exactly when a cycle
    /// seen now would have stood `deadlock_time`.
    pub fn next_check(&self, now: Time) -> Time {
        let step = if self.active.is_empty() {
            self.time.as_ps() / 8
        } else {
            self.time.as_ps() / 1000
        };
        let regular = now + Time(step.max(1));
        self.due
            .filter(|t| *t > now)
            .map_or(regular, |t| t.min(regular))
    }

    /// Every deadlock found, in the order found.
    pub fn found(&self) -> &[Deadlock] {
        &self.found
    }

    /// Does a deadlock stand now?
    pub fn standing(&self) -> bool {
        !self.active.is_empty()
    }

    /// Look for deadlocks at `now`; returns true when a new one was found.
    pub fn check(&mut self, now: Time, switches: &[SwitchNode]) -> bool {
        let graph = WaitGraph::of(now, switches);
        // A standing deadlock clears when any of its waits is gone.
        let mut still = Vec::new();
        for &i in &self.active {
            let d = &mut self.found[i];
            if graph.holds(&d.cycle, d.formed) {
                still.push(i);
            } else {
                d.cleared = Some(now);
            }
        }
        self.active = still;
        let mut new = false;
        self.due = None;
        for cycle in graph.cycles() {
            let formed = cycle
                .iter()
                .map(|w| graph.since[graph.index(*w).expect("cycle of waits")])
                .max()
                .expect("a cycle has waits");
            if now < formed + self.time {
                let t = formed + self.time;
                self.due = Some(self.due.map_or(t, |d| d.min(t)));
                continue;
            }
            if self.active.iter().any(|&i| self.found[i].cycle == cycle) {
                continue;
            }
            self.found.push(Deadlock {
                cycle,
                formed,
                detected: formed + self.time,
                cleared: None,
            });
            self.active.push(self.found.len() - 1);
            new = true;
        }
        new
    }
}

/// The stuck queues of the fabric at one instant and who waits on whom.
struct WaitGraph {
    waits: Vec<Wait>,
    /// Per wait, since when it has been stuck.
    since: Vec<Time>,
    /// Per wait, the waits it waits on.
    on: Vec<Vec<usize>>,
}

impl WaitGraph {
    fn of(now: Time, switches: &[SwitchNode]) -> WaitGraph {
        let mut waits = Vec::new();
        let mut since = Vec::new();
        for (s, n) in switches.iter().enumerate() {
            for (port, peer) in n.peers.iter().enumerate() {
                // Only a queue toward another switch can be part of a cycle.
                if !matches!(peer, Some(p) if matches!(p.node, NodeId::Switch(_))) {
                    continue;
                }
                for queue in 0..PRIORITIES {
                    if let Some(t) = n.sw.queue_stuck_since(port, queue, now) {
                        waits.push(Wait {
                            switch: s,
                            port,
                            queue,
                        });
                        since.push(t);
                    }
                }
            }
        }
        let on = waits
            .iter()
            .map(|w| {
                let n = &switches[w.switch];
                let Some(peer) = n.peers[w.port] else {
                    return Vec::new();
                };
                let NodeId::Switch(ps) = peer.node else {
                    return Vec::new();
                };
                let prios = n.sw.queue_priorities(w.queue);
                let psw = &switches[ps as usize].sw;
                waits
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| {
                        v.switch == ps as usize
                            && psw.queue_holds_from(v.port, v.queue, peer.port as usize, prios)
                    })
                    .map(|(j, _)| j)
                    .collect()
            })
            .collect();
        WaitGraph { waits, since, on }
    }

    fn index(&self, w: Wait) -> Option<usize> {
        self.waits.iter().position(|x| *x == w)
    }

    /// Do all of `cycle`'s waits and links still stand, stuck since no later than `formed`?
    fn holds(&self, cycle: &[Wait], formed: Time) -> bool {
        let idx: Option<Vec<usize>> = cycle.iter().map(|w| self.index(*w)).collect();
        let Some(idx) = idx else { return false };
        idx.iter().all(|&i| self.since[i] <= formed)
            && (0..idx.len()).all(|k| self.on[idx[k]].contains(&idx[(k + 1) % idx.len()]))
    }

    /// Elementary cycles, one per strongly connected set found by depth-first search,
    /// each rotated to start at its smallest wait.
    fn cycles(&self) -> Vec<Vec<Wait>> {
        let n = self.waits.len();
        let mut out: Vec<Vec<Wait>> = Vec::new();
        // 0 unvisited, 1 on the stack, 2 done.
        let mut state = vec![0u8; n];
        let mut stack: Vec<usize> = Vec::new();
        for root in 0..n {
            if state[root] == 0 {
                self.dfs(root, &mut state, &mut stack, &mut out);
            }
        }
        out
    }

    fn dfs(&self, u: usize, state: &mut [u8], stack: &mut Vec<usize>, out: &mut Vec<Vec<Wait>>) {
        state[u] = 1;
        stack.push(u);
        for &v in &self.on[u] {
            match state[v] {
                0 => self.dfs(v, state, stack, out),
                1 => {
                    let from = stack.iter().position(|x| *x == v).expect("on the stack");
                    let mut cycle: Vec<Wait> =
                        stack[from..].iter().map(|i| self.waits[*i]).collect();
                    let min = (0..cycle.len())
                        .min_by_key(|k| cycle[*k])
                        .expect("non-empty");
                    cycle.rotate_left(min);
                    if !out.contains(&cycle) {
                        out.push(cycle);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state[u] = 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(switch: usize) -> Wait {
        Wait {
            switch,
            port: 0,
            queue: 3,
        }
    }

    #[test]
    fn a_ring_of_waits_is_one_cycle_from_its_smallest_wait() {
        let g = WaitGraph {
            waits: vec![w(2), w(0), w(1), w(3)],
            since: vec![Time(5), Time(7), Time(6), Time(1)],
            // 2 → 0 → 1 → 2, and 3 → 2 (a tail into the ring).
            on: vec![vec![1], vec![2], vec![0], vec![0]],
        };
        assert_eq!(g.cycles(), vec![vec![w(0), w(1), w(2)]]);
        assert!(g.holds(&[w(0), w(1), w(2)], Time(7)));
        assert!(
            !g.holds(&[w(0), w(1), w(2)], Time(6)),
            "w(0) stuck only from 7"
        );
        assert!(!g.holds(&[w(0), w(2), w(1)], Time(7)), "wrong direction");
    }

    #[test]
    fn a_chain_is_no_cycle() {
        let g = WaitGraph {
            waits: vec![w(0), w(1), w(2)],
            since: vec![Time(0); 3],
            on: vec![vec![1], vec![2], vec![]],
        };
        assert!(g.cycles().is_empty());
    }

    /// Against brute force on random graphs: a cycle is reported exactly when some wait
    /// reaches itself, and every reported cycle is one (distinct waits, each waiting on the
    /// next).
    #[test]
    fn cycles_are_found_exactly_when_there_are_some() {
        let mut x = 99u64;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 33
        };
        for _ in 0..2_000 {
            let n = 1 + next() as usize % 7;
            let on: Vec<Vec<usize>> = (0..n)
                .map(|_| (0..n).filter(|_| next() % 4 == 0).collect())
                .collect();
            let g = WaitGraph {
                waits: (0..n).map(w).collect(),
                since: vec![Time::ZERO; n],
                on: on.clone(),
            };
            // Brute force: can i reach itself?
            let reaches_itself = |i: usize| {
                let mut seen = vec![false; n];
                let mut stack = on[i].clone();
                while let Some(u) = stack.pop() {
                    if u == i {
                        return true;
                    }
                    if !std::mem::replace(&mut seen[u], true) {
                        stack.extend(&on[u]);
                    }
                }
                false
            };
            let any = (0..n).any(reaches_itself);
            let found = g.cycles();
            assert_eq!(!found.is_empty(), any, "{on:?}");
            for c in &found {
                let idx: Vec<usize> = c.iter().map(|x| x.switch).collect();
                let mut sorted = idx.clone();
                sorted.sort();
                sorted.dedup();
                assert_eq!(sorted.len(), idx.len(), "distinct waits: {c:?}");
                for k in 0..idx.len() {
                    assert!(
                        on[idx[k]].contains(&idx[(k + 1) % idx.len()]),
                        "{c:?} in {on:?}"
                    );
                }
                assert!(g.holds(c, Time::ZERO));
            }
        }
    }
}
