//! `Switch`: parser, match-action stages and traffic manager as one sans-IO state machine.
//!
//! An engine drives it with explicit time (docs/architecture.md, "The core"):
//!
//! ```text
//! sw.receive(port, packet, now);                 // last bit of a frame arrived on `port`
//! sw.poll_transmit(port, now) -> Option<Packet>  // frame to start on `port` now (PFC first)
//! sw.poll_timeout() -> Option<Time>              // earliest time something can happen
//! sw.handle_timeout(now);                        // PFC refresh, watchdog polls
//! ```
//!
//! The switch models each transmitter: `poll_transmit` returns a frame only when the port's
//! previous frame has finished serializing (`(len + 20) × 8` bit times), so both the
//! simulator and the TAP engine get line-rate shaping from the same code.

mod deadlines;
mod egress;
mod frames;
mod ingress;
mod pfc_log;
mod trim;
mod waits;

pub use pfc_log::PfcEvent;

use crate::acl::Acl;
use crate::config::{FlowControl, Forwarding, SwitchConfig};
use crate::counters::{Ledger, QueueCounters};
use crate::drop_reason::{DropCounters, DropReason};
use crate::forward::{Fdb, Lpm};
use crate::groups::Groups;
use crate::link::cbfc::CbfcSetup;
use crate::link::{LinkLayer, PauseSetup, Unhonoured};
use crate::node::Node;
use crate::packet::Packet;
use crate::port_set::{PortMarks, PortSet};
use deadlines::Deadlines;
use frames::{FrameQueue, FrameStore};
use lossless_buffer_model::mmu::Mmu;
use lossless_buffer_model::scheduler::Scheduler;
use lossless_buffer_model::watchdog::QueueWatchdog;
use lossless_buffer_model::{Rate, Time, PRIORITIES};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// State of one port: its link layer (link, wire, PFC both ways, counters) and the
/// eight egress queues behind it.
#[derive(Debug)]
pub struct Port {
    /// The link layer: link and enable state, busy-until, the pauses the peer asked for,
    /// the XOFF this port holds, frame and PFC counters.
    pub link: LinkLayer,
    queues: [FrameQueue; PRIORITIES],
    /// The queues holding at least one frame (bit = queue): the only ones whose heads the
    /// scheduler and `next_transmit` look at.
    held: u8,
    /// Queues whose dequeue is disabled (bit = queue; SAI's
    /// `SAI_QUEUE_ATTR_PKT_DEQUEUE_ENABLE` off): they keep what they hold and send nothing.
    dequeue_disabled: u8,
    sched: Scheduler,
    /// Per-queue counters.
    pub queue_counters: [QueueCounters; PRIORITIES],
    /// PFC watchdog state per queue.
    pub watchdog: [QueueWatchdog; PRIORITIES],
    /// Per queue, since when it has held frames without starting one: its last start, or
    /// when it last went from empty to holding a frame.
    waiting_since: [Time; PRIORITIES],
}

impl Port {
    /// Frames waiting in queue `q`.
    pub fn queue_len(&self, q: usize) -> usize {
        self.queues[q].len()
    }
    /// Time the transmitter was busy before `t` (at or after the latest `poll_transmit`).
    pub fn busy_time(&self, t: Time) -> Time {
        self.link.tx.busy_time(t)
    }
    /// Priorities this port is holding in XOFF toward its peer.
    pub fn xoff_mask(&self) -> u8 {
        self.link.xoff_mask()
    }
}

enum Forwarder {
    L2(Fdb),
    L3 { lpm: Lpm, groups: Groups },
}

/// A switch: pipeline + traffic manager, driven by an engine with explicit time.
pub struct Switch {
    cfg: SwitchConfig,
    ports: Vec<Port>,
    mmu: Mmu,
    fwd: Forwarder,
    acl: Acl,
    rng: Xoshiro256PlusPlus,
    drops: DropCounters,
    lossless_drops: u64,
    ecn_marked: u64,
    ledger: Ledger,
    /// Latest time the engine has shown us.
    now: Time,
    /// PFC-enabled priorities of each queue's traffic.
    queue_pfc: [u8; PRIORITIES],
    /// PFC-enabled priorities of each PG's traffic (what XOFF/XON of the PG speaks for).
    pg_pfc: [u8; PRIORITIES],
    next_watchdog_poll: Option<Time>,
    /// Every frame the egress queues hold (each queue is a list through it).
    frames: FrameStore,
    /// Ports whose transmit or PFC deadline may have changed since `tx_due`/`pfc_due` last
    /// saw them.
    dirty: PortMarks,
    /// Each port's `next_transmit`, as of its last refresh.
    tx_due: Deadlines,
    /// Each port's PFC refresh deadline, as of its last refresh.
    pfc_due: Deadlines,
    /// PFC events since the engine last took them (None: not logging).
    pfc_log: Option<Vec<PfcEvent>>,
    /// Ports that speak CBFC: their received frames' credits are counted.
    cbfc_ports: PortSet,
    /// The P4 program in front of the traffic manager, if the switch runs one.
    p4: Option<Box<crate::p4::P4Stage>>,
}

impl Switch {
    /// Build a switch from a validated configuration.
    ///
    /// # Panics
    /// With more than [`PortSet::MAX`] ports (the loader refuses those).
    pub fn new(cfg: SwitchConfig) -> Switch {
        let cfg_p4 = cfg.p4.clone();
        let quanta = cfg.qos.pause_quanta;
        let n_ports = cfg.ports.len();
        // The loader refuses more (its MAX_PORTS): a port set holds that many.
        assert!(
            n_ports <= PortSet::MAX,
            "a switch has at most {} ports, not {n_ports}",
            PortSet::MAX
        );
        let mut cbfc_ports = PortSet::EMPTY;
        let ports = (0..n_ports)
            .map(|i| {
                let p = &cfg.ports[i];
                let mode = cfg.flow_control_of(i);
                let mut link = LinkLayer::new(
                    p.speed,
                    p.mac,
                    PauseSetup {
                        mode,
                        response: cfg.qos.pfc_response,
                        quanta,
                        honoured: cfg.qos.pfc_honoured(),
                        obey: true,
                        unhonoured: Unhonoured::Drop,
                    },
                );
                if mode == FlowControl::Cbfc {
                    // Until the peer is known its receiver is taken to be this port's twin.
                    link.enable_cbfc(p.cbfc, &p.cbfc);
                    cbfc_ports.insert(i);
                }
                if let Some(l) = p.llr {
                    link.enable_llr(l);
                }
                Port {
                    link,
                    queues: [FrameQueue::default(); PRIORITIES],
                    held: 0,
                    dequeue_disabled: 0,
                    sched: Scheduler::new(cfg.qos.scheduler),
                    queue_counters: Default::default(),
                    watchdog: Default::default(),
                    waiting_since: [Time::ZERO; PRIORITIES],
                }
            })
            .collect();
        let mmu = Mmu::new(
            cfg.cell,
            cfg.pools.clone(),
            &cfg.pg_profiles,
            &cfg.queue_profiles,
        )
        .with_behaviour(cfg.mmu)
        .with_slices(&cfg.slices)
        .with_port_headroom(&cfg.port_headroom);
        let fwd = match &cfg.forwarding {
            Forwarding::L2 {
                static_fdb,
                fdb_size,
                fdb_aging,
            } => Forwarder::L2(Fdb::new(*fdb_size, *fdb_aging, static_fdb)),
            Forwarding::L3 { routes, groups } => {
                let speeds: Vec<_> = cfg.ports.iter().map(|p| p.speed).collect();
                Forwarder::L3 {
                    lpm: Lpm::new(routes),
                    groups: Groups::new(groups.clone(), &speeds, cfg.seed),
                }
            }
        };
        let queue_pfc =
            core::array::from_fn(|q| cfg.qos.priorities_of_queue(q as u8) & cfg.qos.pfc_honoured());
        let pg_pfc = core::array::from_fn(|g| cfg.qos.priorities_of_pg(g as u8));
        let acl = Acl::new(cfg.acl.clone());
        Switch {
            rng: Xoshiro256PlusPlus::seed_from_u64(cfg.seed),
            acl,
            next_watchdog_poll: cfg.qos.pfcwd.map(|w| w.polling_interval),
            frames: FrameStore::default(),
            cfg,
            ports,
            mmu,
            fwd,
            drops: DropCounters::default(),
            lossless_drops: 0,
            ecn_marked: 0,
            ledger: Ledger::default(),
            now: Time::ZERO,
            queue_pfc,
            pg_pfc,
            dirty: PortMarks::first(n_ports),
            tx_due: Deadlines::new(n_ports),
            pfc_due: Deadlines::new(n_ports),
            pfc_log: None,
            p4: cfg_p4
                .as_ref()
                .map(|s| Box::new(crate::p4::P4Stage::new(s))),
            cbfc_ports,
        }
    }

    /// The P4 program the switch runs, with its tables, counters and registers.
    pub fn p4(&self) -> Option<&crate::p4::P4Stage> {
        self.p4.as_deref()
    }

    /// The configuration this switch was built from.
    pub fn config(&self) -> &SwitchConfig {
        &self.cfg
    }

    /// Port states and counters.
    pub fn ports(&self) -> &[Port] {
        &self.ports
    }

    /// Buffer accounting (pools, PGs, queues, watermarks).
    pub fn mmu(&self) -> &Mmu {
        &self.mmu
    }

    /// The ACL stage: its tables and each rule's counters.
    pub fn acl(&self) -> &Acl {
        &self.acl
    }

    /// Frames dropped, by reason.
    pub fn drops(&self) -> &DropCounters {
        &self.drops
    }

    /// Frames of lossless PGs dropped by the MMU: must stay 0 in a well-built fabric.
    pub fn lossless_drops(&self) -> u64 {
        self.lossless_drops
    }

    /// Frames marked CE.
    pub fn ecn_marked(&self) -> u64 {
        self.ecn_marked
    }

    /// Where every received frame went.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// Frames waiting in egress queues now.
    pub fn queued_frames(&self) -> u64 {
        self.ports
            .iter()
            .flat_map(|p| p.queues.iter())
            .map(|q| q.len() as u64)
            .sum()
    }

    /// The L2 forwarding database (None in L3 mode).
    pub fn fdb(&self) -> Option<&Fdb> {
        match &self.fwd {
            Forwarder::L2(f) => Some(f),
            Forwarder::L3 { .. } => None,
        }
    }

    /// The next-hop groups and their counters (None in L2 mode).
    pub fn groups(&self) -> Option<&Groups> {
        match &self.fwd {
            Forwarder::L2(_) => None,
            Forwarder::L3 { groups, .. } => Some(groups),
        }
    }

    /// Let a late `poll_transmit` date a backlogged frame's start up to `window` into the
    /// past (never before the transmitter was free or the frame was ready), so a wall-clock
    /// engine that wakes late sends a short burst instead of losing line rate. The virtual-
    /// time engine polls exactly and leaves this at 0.
    pub fn set_catch_up(&mut self, window: Time) {
        for p in &mut self.ports {
            p.link.tx.set_catch_up(window);
        }
    }

    /// Something about `port`'s transmit side changed: recompute `next_transmit` next time.
    fn touch(&self, port: usize) {
        self.ports[port].link.tx.touch();
        self.dirty.mark(port);
    }

    /// Bring the deadline trees up to date for every touched port.
    fn refresh_deadlines(&mut self) {
        let mut words = self.dirty.take_words();
        while words != 0 {
            let i = words.trailing_zeros() as usize;
            words &= words - 1;
            let mut bits = self.dirty.take_word(i);
            while bits != 0 {
                let port = i * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let tx = self.next_transmit(port);
                self.tx_due.set(port, tx);
                self.pfc_due.set(port, self.ports[port].link.poll_timeout());
            }
        }
    }

    fn advance(&mut self, now: Time) {
        if now > self.now {
            self.now = now;
        }
    }

    fn drop_frame(&mut self, reason: DropReason, pkt: Packet) {
        if let crate::packet::Trim::From(q) = pkt.meta.trim {
            // A trimmed copy dropped in its turn: counted on the queue that trimmed it.
            self.ports[pkt.meta.out_port as usize].queue_counters[q as usize]
                .trim
                .dropped_trim_packets += 1;
        }
        self.drops.count(reason);
        crate::buffers::give(pkt.data);
    }

    /// Drop a frame before forwarding has chosen any egress for it.
    fn drop_received(&mut self, reason: DropReason, pkt: Packet) {
        self.ledger.dropped_on_receive += 1;
        self.drop_frame(reason, pkt);
    }

    /// Count a drop against the egress queue it was headed for (what a P4 program kept
    /// for the frame goes with it).
    fn drop_queued(&mut self, out: usize, reason: DropReason, pkt: Packet) {
        if let Some(p4) = &mut self.p4 {
            p4.discard(pkt.meta.flow_hash);
        }
        let qc = &mut self.ports[out].queue_counters[pkt.meta.queue as usize];
        qc.drop_packets += 1;
        qc.drop_bytes += pkt.len as u64;
        self.drop_frame(reason, pkt);
    }

    /// Act on everything due at `now`: internal deadlines (PFC refresh, watchdog polls),
    /// then every frame a port may start by `now`, handed to `emit(port, frame)` in port
    /// order (one per port and call in virtual time; a catch-up burst in wall-clock time).
    /// The engines drive the switch with this and `receive`.
    pub fn poll_due(&mut self, now: Time, emit: &mut dyn FnMut(usize, Packet)) {
        // What `poll_timeout() <= now` decides, without taking the minimum of all three:
        // internal deadlines need `handle_timeout`; a port due alone needs only the clock.
        self.refresh_deadlines();
        let due = |t: Option<Time>| t.is_some_and(|t| t <= now);
        if due(self.next_watchdog_poll) || due(self.pfc_due.earliest()) {
            self.handle_timeout(now);
        } else if due(self.tx_due.earliest()) {
            self.advance(now);
        }
        // Ports in order, visiting only those due (a port served may make a later one due).
        let mut from = 0;
        loop {
            self.refresh_deadlines();
            let Some(port) = self.tx_due.first_due(from, now) else {
                break;
            };
            while self.next_transmit(port).is_some_and(|t| t <= now) {
                match self.poll_transmit(port, now) {
                    Some(pkt) => emit(port, pkt),
                    None => break,
                }
            }
            from = port + 1;
        }
    }

    /// Earliest internal deadline: a port able to start a frame, a PFC refresh, a watchdog
    /// poll. Costs a tree update per port touched since the last call, not a scan.
    pub fn poll_timeout(&mut self) -> Option<Time> {
        self.refresh_deadlines();
        // `Time::MAX` stands for "none" in the trees; no deadline is ever that late.
        let t = (self.tx_due.earliest_or_max())
            .min(self.pfc_due.earliest_or_max())
            .min(self.next_watchdog_poll.unwrap_or(Time::MAX));
        (t != Time::MAX).then_some(t)
    }

    /// Act on deadlines due at `now`: queue PFC refreshes, poll the watchdog.
    pub fn handle_timeout(&mut self, now: Time) {
        self.advance(now);
        self.refresh_deadlines();
        let mut from = 0;
        while let Some(i) = self.pfc_due.first_due(from, now) {
            if self.ports[i].link.handle_timeout(now) {
                self.touch(i);
            }
            from = i + 1;
        }
        if let (Some(cfg), Some(t)) = (self.cfg.qos.pfcwd, self.next_watchdog_poll) {
            if now >= t {
                self.poll_watchdog(now);
                self.next_watchdog_poll = Some(now + cfg.polling_interval);
            }
        }
    }

    /// Enable or disable `port`'s transmitter; frames wait in its queues while disabled.
    pub fn set_tx_enabled(&mut self, port: usize, enabled: bool, now: Time) {
        self.advance(now);
        self.touch(port);
        self.ports[port].link.tx.set_enabled(enabled);
    }

    /// Enable or disable the dequeue of egress queue `queue` of `port` at `now` (the
    /// others go on): a disabled queue keeps its frames and sends none.
    pub fn set_queue_tx_enabled(&mut self, port: usize, queue: usize, enabled: bool, now: Time) {
        self.advance(now);
        self.touch(port);
        let p = &mut self.ports[port];
        if enabled {
            p.dequeue_disabled &= !(1 << queue);
        } else {
            p.dequeue_disabled |= 1 << queue;
        }
    }

    /// Bring `port`'s link up or down. Down drops its queued frames and forgets pauses.
    pub fn set_link(&mut self, port: usize, up: bool, now: Time) {
        self.advance(now);
        self.touch(port);
        self.ports[port].link.set_link(up, now);
        if let Forwarder::L3 { groups, .. } = &mut self.fwd {
            groups.set_link(port, up);
        }
        if !up {
            for q in 0..PRIORITIES {
                self.flush_queue(port, q, DropReason::PortDown);
            }
            match &mut self.fwd {
                Forwarder::L2(fdb) => fdb.flush_port(port as u16),
                Forwarder::L3 { .. } => {}
            }
        }
    }

    /// Start every port's link protocols as a switch that just started does, at `now`:
    /// CBFC's counters from zero with an INIT handshake (generations drawn from
    /// `generation_base`, which should differ from any earlier run's), LLR with its INIT.
    /// A peer that kept running then starts counting again with this switch, instead of
    /// waiting on counts this switch no longer has.
    pub fn start_link_protocols(&mut self, generation_base: u32, now: Time) {
        self.advance(now);
        for port in 0..self.ports.len() {
            let link = &mut self.ports[port].link;
            link.set_generation_base(generation_base ^ (port as u32).rotate_left(16));
            link.restart_cbfc(now);
            link.restart_llr(now);
            self.touch(port);
        }
    }

    /// Port `port`'s peer receiver has the credits `peer` gives (CBFC's link init, as
    /// LLDP or an operator would tell it); no-op on a port without CBFC.
    pub fn set_peer_credits(&mut self, port: usize, peer: &CbfcSetup) {
        if self.cbfc_ports.contains(port) {
            let own = self.cfg.ports[port].cbfc;
            self.ports[port].link.enable_cbfc(own, peer);
            self.touch(port);
        }
    }

    /// Time `port` has spent paused on priority `prio` up to `now` (pfcstat pause duration).
    pub fn paused_time(&self, port: usize, prio: usize, now: Time) -> Time {
        self.ports[port].link.paused_time(prio, now)
    }
}

impl Node for Switch {
    fn receive(&mut self, port: usize, pkt: Packet, now: Time) {
        Switch::receive(self, port, pkt, now);
    }

    fn poll_due(&mut self, now: Time, emit: &mut dyn FnMut(usize, Packet)) {
        Switch::poll_due(self, now, emit);
    }

    fn poll_timeout(&mut self) -> Option<Time> {
        Switch::poll_timeout(self)
    }

    fn set_link(&mut self, port: usize, up: bool, now: Time) {
        Switch::set_link(self, port, up, now);
    }

    /// Every change to what `poll_timeout` reads (a port's transmit or PFC deadline)
    /// marks the port, and `poll_timeout` clears the marks.
    fn deadline_unchanged(&self) -> bool {
        self.dirty.is_empty()
    }

    fn port_speed(&self, port: usize) -> Rate {
        self.cfg.ports[port].speed
    }
}
