//! The fabric run on several threads (`--threads`), with the same outcome as on one.
//!
//! The switches are split into shares of consecutive switches of about equal work (ports
//! and hosts), each host going with the switch it is cabled to, so only switch-to-switch
//! links cross between shares (with more threads than switches, each switch runs alone and
//! the hosts in the shares left, so their links cross too). A frame sent at `t` over such a link lands at the earliest
//! at `t` + the shortest thing on its wire (an 8-byte control ordered set) + the cable's
//! propagation: the *lookahead*. So from the earliest event pending anywhere, `m`, every
//! share can handle its own events before `m` + lookahead without waiting for another's
//! frames: nothing sent in that window lands inside it. The shares run such windows side
//! by side, then meet at a barrier, hand over the frames sent across, and begin the next.
//! Each node sees exactly the events it would see on one thread, in the same canonical
//! order (`lossless_engine::key`), so the outcome is byte-identical for every thread
//! count. The run's own events (scheduled events, samples, checks) happen between such
//! stretches, with the whole fabric at one instant.

use super::cabling::{NodeId, Peer};
use super::network::ordered_set_time;
use super::share::{Fabric, Handoff, Placement, Share, Subset};
use super::{Go, HostNode, SwitchNode, Tick};
use crate::config::{Sampling, Scenario};
use lossless_buffer_model::{Time, WireTimes};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{Condvar, Mutex, MutexGuard};

/// Below this lookahead, `auto` runs on one thread: windows this short are mostly barrier.
pub const AUTO_MIN_LOOKAHEAD: Time = Time(100_000);
/// Below this many switches, `auto` runs on one thread: too little work per window.
pub const AUTO_MIN_SWITCHES: usize = 16;

/// Below this, the run's own events (samples, `--plot`, checks) come so often that `auto`
/// runs on one thread: the threads start anew after each (~0.1 ms of wall time apiece).
pub const AUTO_MIN_STRETCH: Time = Time(10_000_000);

/// How many threads a run takes when `--threads` is not given: one per core for a fabric
/// of at least [`AUTO_MIN_SWITCHES`] switches whose links between shares give at least
/// [`AUTO_MIN_LOOKAHEAD`] (a fat tree's 1 µs links), when the run's periodic events
/// (`every`: the shortest period of its samples and checks) are at least
/// [`AUTO_MIN_STRETCH`] apart; else one.
pub fn auto(switches: &[SwitchNode], hosts: &[HostNode], every: Option<Time>) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores < 2
        || switches.len() < AUTO_MIN_SWITCHES
        || every.is_some_and(|e| e < AUTO_MIN_STRETCH)
    {
        return 1;
    }
    match plan(switches, hosts, cores).lookahead {
        Some(l) if l >= AUTO_MIN_LOOKAHEAD => cores,
        _ => 1,
    }
}

/// Why `threads` threads cannot make this run faster than one, if they cannot (the same
/// rules as [`auto`], said in words): too few switches to share, links between the
/// shares too short for windows worth a barrier, the run's own events too close, or a
/// machine of one core.
pub fn why_no_gain(
    switches: &[SwitchNode],
    hosts: &[HostNode],
    every: Option<Time>,
    threads: usize,
) -> Option<String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores < 2 {
        return Some("this machine has one core".into());
    }
    if switches.len() < AUTO_MIN_SWITCHES {
        return Some(format!(
            "its fabric has {} switch{} (threads pay off from {AUTO_MIN_SWITCHES}: with fewer, each window holds less work than the threads' meeting costs)",
            switches.len(),
            if switches.len() == 1 { "" } else { "es" }
        ));
    }
    if let Some(e) = every.filter(|e| *e < AUTO_MIN_STRETCH) {
        return Some(format!(
            "its samples or checks come every {e} and the threads start anew at each (they pay off from {AUTO_MIN_STRETCH} apart)"
        ));
    }
    match plan(switches, hosts, threads).lookahead {
        Some(l) if l < AUTO_MIN_LOOKAHEAD => Some(format!(
            "the shortest link between its shares takes {l}, so its windows are mostly the threads' meeting (threads pay off from {AUTO_MIN_LOOKAHEAD})"
        )),
        _ => None,
    }
}

/// The shortest period of the run's own periodic events (time-series samples, `--plot`
/// samples every `record`, deadlock checks at an eighth of `deadlock_time`), each of which
/// starts the threads anew; None: it has none.
pub fn shortest_period(s: &Scenario, record: Option<Time>) -> Option<Time> {
    let series = match s.run.outputs.timeseries.as_ref().map(|t| t.sample) {
        Some(Sampling::Every(i)) => Some(i),
        _ => None,
    };
    let checks = (!s.run.links.is_empty()).then(|| Time(s.run.deadlock_time.as_ps() / 8));
    [record, series, checks].into_iter().flatten().min()
}

/// Which node runs where.
pub(super) struct Plan {
    pub placement: Placement,
    /// Each share's nodes, in global order.
    pub shares: Vec<Vec<NodeId>>,
    /// How far past the earliest pending event every share may run (None: one share, or
    /// no link between shares).
    pub lookahead: Option<Time>,
}

/// Split `switches` and `hosts` into at most `threads` shares: consecutive switches of
/// about equal work, each host with its switch; with more threads than switches, each
/// switch alone and the hosts, in consecutive groups, in the shares left.
pub(super) fn plan(switches: &[SwitchNode], hosts: &[HostNode], threads: usize) -> Plan {
    let n = switches.len();
    let nodes = n + hosts.len();
    let threads = threads.clamp(1, nodes.max(1));
    // Each node's share before the empty ones are dropped, by node number.
    let mut share_of: Vec<usize> = Vec::with_capacity(nodes);
    if threads > n {
        share_of.extend(0..n);
        let (groups, count) = (threads - n, hosts.len().max(1));
        share_of.extend((0..hosts.len()).map(|h| n + h * groups / count));
    } else {
        // The work of a switch: its ports and the hosts cabled to it.
        let mut weight: Vec<usize> = switches.iter().map(|s| s.peers.len() + 1).collect();
        for h in hosts {
            if let NodeId::Switch(s) = h.peer.node {
                weight[s as usize] += 1;
            }
        }
        let total = weight.iter().sum::<usize>().max(1);
        // Switch s goes to the share its weight's middle falls in.
        let mut before = 0;
        for w in &weight {
            share_of.push((((before * 2 + w) * threads) / (total * 2)).min(threads - 1));
            before += w;
        }
        for h in hosts {
            let p = match h.peer.node {
                NodeId::Switch(s) => share_of[s as usize],
                NodeId::Host(_) => 0,
            };
            share_of.push(p);
        }
    }
    // Number the shares that got a node, in the order of their first node.
    let mut renumber = vec![u32::MAX; threads];
    let mut shares: Vec<Vec<NodeId>> = Vec::new();
    let mut placement = Placement {
        of: Vec::with_capacity(nodes),
    };
    for (i, &p) in share_of.iter().enumerate() {
        if renumber[p] == u32::MAX {
            renumber[p] = shares.len() as u32;
            shares.push(Vec::new());
        }
        let p = renumber[p];
        let id = if i < n {
            NodeId::Switch(i as u32)
        } else {
            NodeId::Host((i - n) as u32)
        };
        placement.of.push((p, shares[p as usize].len() as u32));
        shares[p as usize].push(id);
    }
    if shares.is_empty() {
        shares.push(Vec::new());
    }
    // The shortest way across: a link whose ends are in different shares, either way.
    let mut lookahead: Option<Time> = None;
    let mut across = |from: usize, wire: &WireTimes, peer: &Peer| {
        if placement.of[from].0 != placement.of[peer.node.number(n)].0 {
            let t = ordered_set_time(wire) + peer.propagation;
            lookahead = Some(lookahead.map_or(t, |l| l.min(t)));
        }
    };
    for (s, node) in switches.iter().enumerate() {
        for (port, peer) in node.peers.iter().enumerate() {
            if let Some(peer) = peer {
                across(s, &node.wires[port], peer);
            }
        }
    }
    for (h, host) in hosts.iter().enumerate() {
        across(n + h, &host.wire, &host.peer);
    }
    Plan {
        placement,
        shares,
        lookahead,
    }
}

/// Where the shares' threads wait for each other between windows. A window is short (a
/// few microseconds of work), so a thread that arrives first spins a little, then yields,
/// and only then sleeps (a sleep and a wake-up cost more than most windows). Unlike
/// `std::sync::Barrier` it can be called off: a share whose thread panics (a bug in a
/// model) calls it off, so that the others return instead of waiting for ever, and the
/// panic reaches the caller.
struct Rendezvous {
    /// Threads arrived in this round.
    arrived: AtomicUsize,
    /// The round's number: it moves on when the last thread arrives.
    round: AtomicU64,
    off: AtomicBool,
    /// Sleepers wait here for the round to move on.
    sleep: Mutex<()>,
    woken: Condvar,
    threads: usize,
}

/// The rendezvous was called off.
struct CalledOff;

/// Looks at the round before yielding the core.
const SPINS: u32 = 256;
/// Yields of the core before sleeping.
const YIELDS: u32 = 64;

impl Rendezvous {
    fn new(threads: usize) -> Rendezvous {
        Rendezvous {
            arrived: AtomicUsize::new(0),
            round: AtomicU64::new(0),
            off: AtomicBool::new(false),
            sleep: Mutex::new(()),
            woken: Condvar::new(),
            threads,
        }
    }

    fn lock(&self) -> MutexGuard<'_, ()> {
        self.sleep
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Wait until every thread is here.
    fn wait(&self) -> Result<(), CalledOff> {
        // The round cannot move on before this thread arrives.
        let round = self.round.load(Acquire);
        if self.arrived.fetch_add(1, AcqRel) + 1 == self.threads {
            self.arrived.store(0, Relaxed);
            let _sleepers = self.lock();
            self.round.store(round + 1, Release);
            self.woken.notify_all();
            return Ok(());
        }
        let moved = || self.round.load(Acquire) != round;
        for i in 0..SPINS + YIELDS {
            if moved() {
                return Ok(());
            }
            if self.off.load(Acquire) {
                return Err(CalledOff);
            }
            if i < SPINS {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        let mut sleepers = self.lock();
        while !moved() && !self.off.load(Acquire) {
            sleepers = self
                .woken
                .wait(sleepers)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        if moved() {
            Ok(())
        } else {
            Err(CalledOff)
        }
    }

    /// Nobody waits any longer.
    fn call_off(&self) {
        self.off.store(true, Release);
        let _sleepers = self.lock();
        self.woken.notify_all();
    }
}

/// What the shares share during a stretch: the barrier, each share's earliest pending
/// event, the frames handed across (`mail[from × shares + to]`) and the caller's stop.
struct Rounds {
    barrier: Rendezvous,
    next: Vec<AtomicU64>,
    mail: Vec<Mutex<Vec<Handoff>>>,
    stop: AtomicBool,
    shares: usize,
    lookahead: Time,
    limit: Time,
}

/// Run every share's events before `limit`, window by window, one thread per share (the
/// caller's for the first, which also calls `tick` now and then). Returns whether to go
/// on, and the time every share has reached.
#[allow(clippy::too_many_arguments)]
pub(super) fn advance(
    shares: &mut [Share],
    switches: &mut [SwitchNode],
    hosts: &mut [HostNode],
    fabric: Fabric<'_>,
    lookahead: Time,
    limit: Time,
    end: Option<Time>,
    tick: &mut dyn FnMut(Tick) -> Go,
) -> (Go, Time) {
    let count = shares.len();
    let mut nodes: Vec<Subset> = (0..count).map(|_| Subset::default()).collect();
    let n = switches.len();
    for (s, node) in switches.iter_mut().enumerate() {
        nodes[fabric.placement.of[s].0 as usize].switches.push(node);
    }
    for (h, node) in hosts.iter_mut().enumerate() {
        nodes[fabric.placement.of[n + h].0 as usize]
            .hosts
            .push(node);
    }
    let rounds = Rounds {
        barrier: Rendezvous::new(count),
        next: (0..count).map(|_| AtomicU64::new(u64::MAX)).collect(),
        mail: (0..count * count).map(|_| Mutex::new(Vec::new())).collect(),
        stop: AtomicBool::new(false),
        shares: count,
        lookahead,
        limit,
    };
    std::thread::scope(|scope| {
        let mut pairs = shares.iter_mut().zip(nodes);
        let (first, mut first_nodes) = pairs.next().expect("at least one share");
        for (share, mut nodes) in pairs {
            let rounds = &rounds;
            std::thread::Builder::new()
                .name(format!("share-{}", share.index))
                .spawn_scoped(scope, move || {
                    guarded(rounds, || {
                        work(share, &mut nodes, fabric, rounds, &mut |_| Go::On, end)
                    });
                })
                .expect("a thread for a share of the fabric");
        }
        guarded(&rounds, || {
            work(first, &mut first_nodes, fabric, &rounds, tick, end)
        })
    })
}

/// Run `f` (one share's [`work`]); if it panics, call the rendezvous off before the panic
/// goes on.
fn guarded<T>(r: &Rounds, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(t) => t,
        Err(panic) => {
            r.barrier.call_off();
            resume_unwind(panic)
        }
    }
}

/// One share's part of [`advance`]: deliver what was handed over, say when its next event
/// is, and at the barrier agree on the window; run it; hand over what crosses; meet again.
fn work(
    share: &mut Share,
    nodes: &mut Subset,
    fabric: Fabric<'_>,
    r: &Rounds,
    tick: &mut dyn FnMut(Tick) -> Go,
    end: Option<Time>,
) -> (Go, Time) {
    let me = share.index as usize;
    let mut reached = Time::ZERO;
    let mut ticked = share.stats.events >> 16;
    let mut go = Go::On;
    loop {
        for from in (0..r.shares).filter(|f| *f != me) {
            let handed = std::mem::take(&mut *r.mail[from * r.shares + me].lock().expect("mail"));
            for h in handed {
                share.deliver(h);
            }
        }
        let next = share.queue.next_time().map_or(u64::MAX, |t| t.0);
        r.next[me].store(next, Relaxed);
        if share.stats.events >> 16 != ticked {
            ticked = share.stats.events >> 16;
            if tick(Tick { now: reached, end }) == Go::Stop {
                r.stop.store(true, Relaxed);
            }
        }
        if r.barrier.wait().is_err() {
            break;
        }
        if r.stop.load(Relaxed) {
            go = Go::Stop;
            break;
        }
        let m = r
            .next
            .iter()
            .map(|n| n.load(Relaxed))
            .min()
            .unwrap_or(u64::MAX);
        if m >= r.limit.0 {
            break;
        }
        reached = Time(m);
        let window = Time(m.saturating_add(r.lookahead.0)).min(r.limit);
        share.run_until(window, nodes, fabric, false);
        for to in 0..r.shares {
            if !share.outbox[to].is_empty() {
                r.mail[me * r.shares + to]
                    .lock()
                    .expect("mail")
                    .append(&mut share.outbox[to]);
            }
        }
        if r.barrier.wait().is_err() {
            break;
        }
    }
    (go, reached)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::build;
    use crate::sim::cabling::Cabling;
    use lossless_pipeline::Node;

    /// A scenario of `switches` switches in a line (Ethernet3 to the next one's Ethernet4),
    /// a few extra links (Ethernet5), hosts on Ethernet0..2, the speed, cables and delays
    /// drawn from `x`.
    fn fabric(switches: usize, mut x: u64) -> String {
        let mut next = move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 33
        };
        // Both ends of a link run at one speed: one for the fabric.
        let speed = ["25G", "100G", "400G"][next() as usize % 3];
        let mut t = String::from("name: t\nduration: 1ms\nswitches:\n");
        for s in 0..switches {
            let cable = 1 + next() % 300;
            t += &format!(
                "  - name: s{s}\n    ports: {{count: 6, speed: {speed}, cable: {cable}m}}\n"
            );
        }
        t += "links:\n";
        for s in 1..switches {
            let delay = next() % 2000;
            t += &format!(
                "  - {{a: s{}:Ethernet3, b: s{s}:Ethernet4, delay: {delay}ns}}\n",
                s - 1
            );
        }
        let mut spare: Vec<usize> = (0..switches).collect();
        while spare.len() >= 2 && next() % 3 != 0 {
            let a = spare.swap_remove(next() as usize % spare.len());
            let b = spare.swap_remove(next() as usize % spare.len());
            let cable = next() % 100;
            t += &format!("  - {{a: s{a}:Ethernet5, b: s{b}:Ethernet5, cable: {cable}m}}\n");
        }
        let mut hosts = String::new();
        for s in 0..switches {
            for p in 0..next() % 4 {
                hosts += &format!(
                    "  - {{name: h{s}_{p}, attach: s{s}:Ethernet{p}, ip: 198.18.{s}.{}}}\n",
                    p + 1
                );
            }
        }
        if !hosts.is_empty() {
            t += "hosts:\n";
            t += &hosts;
        }
        t
    }

    /// On fabrics of 1 to 7 switches and 1 to 10 threads, the plan against what a brute
    /// force says: every node placed once, in global order within its share, no share
    /// empty, no more shares than threads; with no more threads than switches, each
    /// share a run of consecutive switches with their hosts; and the lookahead the least,
    /// over every link direction between two shares, of 8 bytes at the sender's speed plus
    /// the cable.
    #[test]
    fn shares_and_lookahead_follow_a_brute_force_model() {
        for seed in 0..60u64 {
            let switches = 1 + seed as usize % 7;
            let text = fabric(switches, seed + 1);
            let scenario = crate::config::parse("t.yaml", "t", &text)
                .unwrap_or_else(|e| panic!("{e}\n{text}"))
                .scenario;
            let cabling = Cabling::of(&scenario);
            let sw = build::switches(&scenario, 1, &cabling);
            let hosts = build::hosts(&scenario, 1, &cabling);
            let nodes = sw.len() + hosts.len();
            for threads in 1..=10 {
                let p = plan(&sw, &hosts, threads);
                let ctx = format!("seed {seed}, {threads} threads:\n{text}");
                assert!(p.shares.len() <= threads.max(1), "{ctx}");
                assert!(p.shares.iter().all(|s| !s.is_empty()), "{ctx}");
                assert_eq!(p.placement.of.len(), nodes, "{ctx}");
                let mut seen = vec![false; nodes];
                for (i, share) in p.shares.iter().enumerate() {
                    let numbers: Vec<usize> = share.iter().map(|n| n.number(sw.len())).collect();
                    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{ctx}");
                    for (local, &n) in numbers.iter().enumerate() {
                        assert_eq!(p.placement.of[n], (i as u32, local as u32), "{ctx}");
                        assert!(!seen[n], "{ctx}");
                        seen[n] = true;
                    }
                }
                assert!(seen.iter().all(|s| *s), "{ctx}");
                let share = |n: usize| p.placement.of[n].0;
                if threads <= sw.len() {
                    assert!((1..sw.len()).all(|s| share(s - 1) <= share(s)), "{ctx}");
                    for (h, host) in hosts.iter().enumerate() {
                        let at = host.peer.node.number(sw.len());
                        assert_eq!(share(sw.len() + h), share(at), "{ctx}");
                    }
                }
                let mut least: Option<Time> = None;
                let mut cross = |a: usize, b: usize, bps: u64, prop: Time| {
                    if share(a) != share(b) {
                        let t = Time((8 * 8 * 1_000_000_000_000u64).div_ceil(bps)) + prop;
                        least = Some(least.map_or(t, |l| l.min(t)));
                    }
                };
                for (s, node) in sw.iter().enumerate() {
                    for (port, peer) in node.peers.iter().enumerate() {
                        if let Some(peer) = peer {
                            let bps = node.sw.port_speed(port).bps();
                            cross(s, peer.node.number(sw.len()), bps, peer.propagation);
                        }
                    }
                }
                for (h, host) in hosts.iter().enumerate() {
                    let bps = host.host.speed().bps();
                    let far = host.peer.node.number(sw.len());
                    cross(sw.len() + h, far, bps, host.peer.propagation);
                }
                assert_eq!(p.lookahead, least, "{ctx}");
            }
        }
    }
}
