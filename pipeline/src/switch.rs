//! `Switch`: parser, match-action stages and traffic manager as one sans-IO state machine.
//!
//! An engine drives it with explicit time (design §2):
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

use crate::config::{v4_key, Forwarding, SwitchConfig};
use crate::counters::{Ledger, PortCounters, QueueCounters};
use crate::drop_reason::{DropCounters, DropReason};
use crate::forward::{Fdb, L2Decision, Lpm};
use crate::packet::{IpAt, Packet};
use crate::parser::{self, MacControl, Parsed, L3};
use crate::wire::{edit, pfc as pfc_wire};
use lossless_buffer_model::mmu::{Mmu, Refusal};
use lossless_buffer_model::pfc::{PauseTimers, PfcGenerator};
use lossless_buffer_model::scheduler::Scheduler;
use lossless_buffer_model::watchdog::{Observation, QueueWatchdog, Transition, WatchdogAction};
use lossless_buffer_model::wred::{MarkAt, Verdict};
use lossless_buffer_model::{Bytes, Time, PRIORITIES};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::cell::Cell;
use std::collections::VecDeque;

/// Initial capacity of each egress queue (frames); grows only past it.
const QUEUE_CAPACITY: usize = 1024;
/// Spare frame buffers kept for reuse.
const SPARE_BUFFERS: usize = 256;

/// State of one port.
#[derive(Debug)]
pub struct Port {
    /// Link is up (frames can arrive and leave).
    pub link_up: bool,
    /// Transmitter enabled (`tx: disable` holds frames in the queues).
    pub tx_enabled: bool,
    /// The frame being sent finishes at this time.
    pub busy_until: Time,
    queues: [VecDeque<Packet>; PRIORITIES],
    sched: Scheduler,
    /// Pause timers set by PFC frames received on this port.
    pub pause: PauseTimers,
    pfc: PfcGenerator,
    /// Frame, byte and PFC counters.
    pub counters: PortCounters,
    /// Per-queue counters.
    pub queue_counters: [QueueCounters; PRIORITIES],
    /// PFC watchdog state per queue.
    pub watchdog: [QueueWatchdog; PRIORITIES],
}

impl Port {
    /// Frames waiting in queue `q`.
    pub fn queue_len(&self, q: usize) -> usize {
        self.queues[q].len()
    }
    /// Time the transmitter was busy before `t` (at or after the latest `poll_transmit`).
    pub fn busy_time(&self, t: Time) -> Time {
        self.counters.busy_before(t, self.busy_until)
    }
    /// Priorities this port is holding in XOFF toward its peer.
    pub fn xoff_mask(&self) -> u8 {
        self.pfc.xoff_mask()
    }
}

enum Forwarder {
    L2(Fdb),
    L3(Lpm),
}

/// A switch: pipeline + traffic manager, driven by an engine with explicit time.
pub struct Switch {
    cfg: SwitchConfig,
    ports: Vec<Port>,
    mmu: Mmu,
    fwd: Forwarder,
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
    spare: Vec<Vec<u8>>,
    /// Cached `next_transmit` per port; None when something changed since.
    tx_cache: Vec<Cell<Option<Option<Time>>>>,
    /// How far back a late `poll_transmit` may date a backlogged frame's start (0 = exact).
    catch_up: Time,
}

impl Switch {
    /// Build a switch from a validated configuration.
    pub fn new(cfg: SwitchConfig) -> Switch {
        let quanta = cfg.qos.pause_quanta;
        let n_ports = cfg.ports.len();
        let ports = cfg
            .ports
            .iter()
            .map(|p| Port {
                link_up: true,
                tx_enabled: true,
                busy_until: Time::ZERO,
                queues: core::array::from_fn(|_| VecDeque::with_capacity(QUEUE_CAPACITY)),
                sched: Scheduler::new(cfg.qos.scheduler),
                pause: PauseTimers::new(p.speed, cfg.qos.pfc_response),
                pfc: PfcGenerator::new(p.speed, quanta),
                counters: PortCounters::default(),
                queue_counters: Default::default(),
                watchdog: Default::default(),
            })
            .collect();
        let mmu = Mmu::new(
            cfg.cell,
            cfg.pools.clone(),
            &cfg.pg_profiles,
            &cfg.queue_profiles,
        );
        let fwd = match &cfg.forwarding {
            Forwarding::L2 {
                static_fdb,
                fdb_size,
                fdb_aging,
            } => Forwarder::L2(Fdb::new(*fdb_size, *fdb_aging, static_fdb)),
            Forwarding::L3 { routes, groups } => Forwarder::L3(Lpm::new(routes, groups.clone())),
        };
        let queue_pfc =
            core::array::from_fn(|q| cfg.qos.priorities_of_queue(q as u8) & cfg.qos.pfc_enable);
        let pg_pfc = core::array::from_fn(|g| cfg.qos.priorities_of_pg(g as u8));
        Switch {
            rng: Xoshiro256PlusPlus::seed_from_u64(cfg.seed),
            next_watchdog_poll: cfg.qos.pfcwd.map(|w| w.polling_interval),
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
            spare: Vec::with_capacity(SPARE_BUFFERS),
            tx_cache: vec![Cell::new(None); n_ports],
            catch_up: Time::ZERO,
        }
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
    /// Frames (flood copies counted each) admitted into an egress queue.
    pub fn enqueued(&self) -> u64 {
        self.ledger.queued
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
            Forwarder::L3(_) => None,
        }
    }

    /// Let a late `poll_transmit` date a backlogged frame's start up to `window` into the
    /// past (never before the transmitter was free or the frame was ready), so a wall-clock
    /// engine that wakes late sends a short burst instead of losing line rate. The virtual-
    /// time engine polls exactly and leaves this at 0.
    pub fn set_catch_up(&mut self, window: Time) {
        self.catch_up = window;
    }

    /// When a frame polled at `now` starts, given the port was free at `free` and the frame
    /// ready at `ready`.
    fn start_time(&self, now: Time, free: Time, ready: Time) -> Time {
        if self.catch_up == Time::ZERO {
            now
        } else {
            now.saturating_sub(self.catch_up)
                .max(free)
                .max(ready)
                .min(now)
        }
    }

    /// Give back a frame buffer the engine no longer needs (avoids allocation later).
    pub fn recycle(&mut self, mut buf: Vec<u8>) {
        if self.spare.len() < SPARE_BUFFERS {
            buf.clear();
            self.spare.push(buf);
        }
    }

    /// Something about `port`'s transmit side changed: recompute `next_transmit` next time.
    fn touch(&self, port: usize) {
        self.tx_cache[port].set(None);
    }

    fn advance(&mut self, now: Time) {
        if now > self.now {
            self.now = now;
        }
    }

    fn drop_frame(&mut self, reason: DropReason, pkt: Packet) {
        self.drops.count(reason);
        self.recycle(pkt.data);
    }

    /// Drop a frame before forwarding has chosen any egress for it.
    fn drop_received(&mut self, reason: DropReason, pkt: Packet) {
        self.ledger.dropped_on_receive += 1;
        self.drop_frame(reason, pkt);
    }

    /// A frame's last bit arrived on `port` at `now`.
    pub fn receive(&mut self, port: usize, mut pkt: Packet, now: Time) {
        self.advance(now);
        self.ledger.received += 1;
        let p = &mut self.ports[port];
        p.counters.rx_packets += 1;
        p.counters.rx_bytes += pkt.len as u64;
        if !p.link_up {
            return self.drop_received(DropReason::PortDown, pkt);
        }
        let len = pkt.len;
        if pkt.data.len() as u64 + 4 > len as u64 {
            return self.drop_received(DropReason::BadLength, pkt);
        }
        if len < 64 {
            return self.drop_received(DropReason::Runt, pkt);
        }
        if len > self.cfg.ports[port].mtu {
            return self.drop_received(DropReason::Giant, pkt);
        }
        let parsed = match parser::parse(&pkt.data, len) {
            Ok(h) => h,
            Err(r) => return self.drop_received(r, pkt),
        };
        if let Some(mc) = parsed.mac_control {
            return self.receive_mac_control(port, mc, pkt, now);
        }
        self.classify(port, &parsed, &mut pkt, now);
        match &mut self.fwd {
            Forwarder::L2(fdb) => {
                let vid = parsed.outer_vlan().map_or(0, |v| v.vid);
                fdb.learn(vid, parsed.src, port as u16, now);
                match fdb.lookup(vid, parsed.dst, now) {
                    L2Decision::Port(out) if out as usize == port => {
                        self.drop_received(DropReason::SamePort, pkt)
                    }
                    L2Decision::Port(out) => {
                        self.ledger.forwarded += 1;
                        self.enqueue(out as usize, pkt)
                    }
                    L2Decision::Flood => self.flood(port, pkt),
                }
            }
            Forwarder::L3(lpm) => {
                let (key, ok) = match parsed.l3 {
                    L3::V4 { offset, dst, .. } => (
                        v4_key(dst),
                        edit::ipv4_decrement_ttl(&mut pkt.data[offset as usize..]),
                    ),
                    L3::V6 { offset, dst, .. } => (
                        u128::from_be_bytes(dst),
                        edit::ipv6_decrement_hop_limit(&mut pkt.data[offset as usize..]),
                    ),
                    L3::None => return self.drop_received(DropReason::NotIp, pkt),
                };
                // The 5-tuple hash picks a group member; only routed frames need it.
                pkt.meta.flow_hash = parsed.flow_hash();
                let Some(nh) = lpm.lookup(key, pkt.meta.flow_hash) else {
                    return self.drop_received(DropReason::NoRoute, pkt);
                };
                if !ok {
                    return self.drop_received(DropReason::TtlExpired, pkt);
                }
                let src = self.cfg.ports[nh.port as usize].mac;
                edit::set_macs(&mut pkt.data, nh.mac, src);
                self.ledger.forwarded += 1;
                self.enqueue(nh.port as usize, pkt);
            }
        }
    }

    /// Classify: traffic class from DSCP or PCP, then PG and queue; fill metadata.
    fn classify(&self, port: usize, h: &Parsed, pkt: &mut Packet, now: Time) {
        let q = &self.cfg.qos;
        let pcp = h.outer_vlan().map(|v| v.pcp);
        let (dscp, ecn, ip) = match h.l3 {
            L3::V4 {
                dscp, ecn, offset, ..
            } if !h.deep_stack => (Some(dscp), ecn, IpAt::V4(offset)),
            L3::V6 {
                dscp, ecn, offset, ..
            } if !h.deep_stack => (Some(dscp), ecn, IpAt::V6(offset)),
            _ => (None, 0, IpAt::None),
        };
        let tc = q.classify(dscp, pcp);
        let m = &mut pkt.meta;
        m.in_port = port as u16;
        m.tc = tc;
        m.pg = q.tc_to_pg[tc as usize];
        m.queue = q.tc_to_queue[tc as usize];
        m.rx_time = now;
        m.ready_time = now + self.cfg.pipeline_latency;
        m.ip = ip;
        m.ecn = ecn;
    }

    fn flood(&mut self, in_port: usize, pkt: Packet) {
        let targets: u64 = (0..self.ports.len())
            .filter(|&o| o != in_port && self.ports[o].link_up)
            .fold(0, |m, o| m | 1 << o);
        if targets == 0 {
            return self.drop_received(DropReason::SamePort, pkt);
        }
        self.ledger.forwarded += 1;
        let last = 63 - targets.leading_zeros() as usize;
        for o in 0..last {
            if targets & (1 << o) != 0 {
                let mut data = self.spare.pop().unwrap_or_default();
                data.extend_from_slice(&pkt.data);
                let copy = Packet {
                    data,
                    len: pkt.len,
                    meta: pkt.meta,
                };
                self.enqueue(o, copy);
            }
        }
        self.enqueue(last, pkt);
    }

    /// Buffer admission, WRED at enqueue, and queueing toward `out`.
    fn enqueue(&mut self, out: usize, mut pkt: Packet) {
        let (in_port, pg, q) = (
            pkt.meta.in_port as usize,
            pkt.meta.pg as usize,
            pkt.meta.queue as usize,
        );
        pkt.meta.out_port = out as u16;
        self.touch(out);
        self.ledger.copies += 1;
        if !self.ports[out].link_up {
            self.ledger.refused += 1;
            return self.drop_queued(out, DropReason::PortDown, pkt);
        }
        if self.watchdog_action(out, q) == Some(WatchdogAction::Drop) {
            self.ports[out].watchdog[q].dropped_packets += 1;
            self.ledger.refused += 1;
            return self.drop_queued(out, DropReason::Watchdog, pkt);
        }
        let admitted = match self.mmu.admit(in_port, pg, out, q, pkt.len as u64) {
            Ok(a) => a,
            Err(r) => {
                if self.mmu.pgs[in_port * PRIORITIES + pg].lossless {
                    self.lossless_drops += 1;
                }
                // Ingress refusals are the PG's drops (the MMU counts them there); only an
                // egress refusal is the queue's.
                self.ledger.refused += 1;
                return match r {
                    Refusal::IngressLimit => self.drop_frame(DropReason::IngressLimit, pkt),
                    Refusal::HeadroomFull => self.drop_frame(DropReason::HeadroomFull, pkt),
                    Refusal::EgressLimit => self.drop_queued(out, DropReason::EgressLimit, pkt),
                };
            }
        };
        pkt.meta.cells = admitted.cells;
        if admitted.xoff {
            self.send_xoff(in_port, pg as u8);
        }
        if let Some(w) = self.cfg.qos.queue_wred[q] {
            if w.mark_at == MarkAt::Enqueue {
                let depth = (self.mmu.queues[out * PRIORITIES + q].used() - admitted.cells as u64)
                    * self.mmu.cell();
                if !self.apply_wred(out, q, depth, &mut pkt) {
                    self.ledger.refused += 1;
                    return;
                }
            }
        }
        self.ledger.queued += 1;
        self.ports[out].queues[q].push_back(pkt);
    }

    /// Run WRED on `pkt` (queued or about to be) at queue depth `depth` bytes. Returns false
    /// when the packet was dropped (its cells released).
    fn apply_wred(&mut self, out: usize, q: usize, depth: u64, pkt: &mut Packet) -> bool {
        let w = self.cfg.qos.queue_wred[q].expect("queue has WRED");
        let lossless =
            self.mmu.pgs[pkt.meta.in_port as usize * PRIORITIES + pkt.meta.pg as usize].lossless;
        let ect = pkt.meta.ecn != 0;
        match w.decide(pkt.meta.color, Bytes(depth), ect, lossless, &mut self.rng) {
            Verdict::Pass => true,
            Verdict::Mark => {
                self.mark_ce(pkt);
                self.ports[out].queue_counters[q].ecn_marked += 1;
                self.ecn_marked += 1;
                true
            }
            Verdict::Drop => {
                let p = core::mem::take(pkt);
                self.release(&p);
                self.ports[out].queue_counters[q].wred_drops += 1;
                self.drop_queued(out, DropReason::Wred, p);
                false
            }
        }
    }

    fn mark_ce(&mut self, pkt: &mut Packet) {
        match pkt.meta.ip {
            IpAt::V4(o) => edit::ipv4_mark_ce(&mut pkt.data[o as usize..]),
            IpAt::V6(o) => edit::ipv6_mark_ce(&mut pkt.data[o as usize..]),
            IpAt::None => {}
        }
        pkt.meta.ecn = edit::ECN_CE;
    }

    /// Count a drop against the egress queue it was headed for.
    fn drop_queued(&mut self, out: usize, reason: DropReason, pkt: Packet) {
        let qc = &mut self.ports[out].queue_counters[pkt.meta.queue as usize];
        qc.drop_packets += 1;
        qc.drop_bytes += pkt.len as u64;
        self.drop_frame(reason, pkt);
    }

    /// Return a dequeued packet's cells; send XON if its PG now qualifies.
    fn release(&mut self, pkt: &Packet) {
        let m = &pkt.meta;
        let (in_port, pg) = (m.in_port as usize, m.pg);
        if self.mmu.release(
            in_port,
            pg as usize,
            m.out_port as usize,
            m.queue as usize,
            m.cells,
        ) {
            let mask = self.pg_pfc[pg as usize];
            self.ports[in_port].pfc.send_xon(mask);
            self.touch(in_port);
        }
    }

    /// Turn XOFF on for the priorities of (`port`, `pg`): the frame leaves ahead of all queues.
    fn send_xoff(&mut self, port: usize, pg: u8) {
        let mask = self.pg_pfc[pg as usize];
        if mask != 0 {
            self.ports[port].pfc.send_xoff(mask);
            self.touch(port);
        }
    }

    fn receive_mac_control(&mut self, port: usize, mc: MacControl, pkt: Packet, now: Time) {
        self.touch(port);
        match mc {
            MacControl::Pause { .. } => self.drop_received(DropReason::Pause8023xIgnored, pkt),
            MacControl::Pfc { enable, quanta } => {
                let enable = enable & self.cfg.qos.pfc_enable;
                if enable == 0 {
                    return self.drop_received(DropReason::PfcNotEnabled, pkt);
                }
                self.ledger.consumed += 1;
                let p = &mut self.ports[port];
                p.pause.receive(now, enable, &quanta);
                p.counters.count_pfc_received(enable, &quanta);
                self.recycle(pkt.data);
            }
        }
    }

    fn watchdog_action(&self, port: usize, q: usize) -> Option<WatchdogAction> {
        let cfg = self.cfg.qos.pfcwd?;
        self.ports[port].watchdog[q].stormed.then_some(cfg.action)
    }

    /// Is queue `q` of `port` held by PFC, given the port's `paused` priorities?
    fn queue_paused(&self, port: usize, q: usize, paused: u8) -> bool {
        if self.queue_pfc[q] & paused == 0 {
            return false;
        }
        !matches!(
            self.watchdog_action(port, q),
            Some(WatchdogAction::Drop | WatchdogAction::Forward)
        )
    }

    /// The frame to start on `port` at `now`, if the transmitter is free: a pending PFC
    /// frame first, then the scheduler's pick among ready, unpaused queues.
    pub fn poll_transmit(&mut self, port: usize, now: Time) -> Option<Packet> {
        self.advance(now);
        self.touch(port);
        let p = &self.ports[port];
        if !p.link_up || !p.tx_enabled || p.busy_until > now {
            return None;
        }
        let speed = self.cfg.ports[port].speed;
        if let Some(req) = self.ports[port].pfc.take_frame(now) {
            let buf = self.spare.pop().unwrap_or_default();
            let p = &mut self.ports[port];
            p.counters.count_pfc_sent(req.enable, &req.quanta);
            // PFC frames are never dated back: they answer the state now.
            let wire = speed.wire_time(pfc_wire::PFC_FRAME_LEN as u64);
            p.busy_until = now + wire;
            p.counters.tx_busy += wire;
            let mut pkt =
                pfc_wire::pfc_frame(buf, self.cfg.ports[port].mac, req.enable, &req.quanta);
            pkt.meta.rx_time = now;
            pkt.meta.ready_time = now;
            return Some(pkt);
        }
        let paused = self.ports[port].pause.paused_mask(now);
        let ready: [Option<u32>; PRIORITIES] = core::array::from_fn(|q| {
            let head = self.ports[port].queues[q].front()?;
            (head.meta.ready_time <= now && !self.queue_paused(port, q, paused)).then_some(head.len)
        });
        let q = self.ports[port].sched.select(|q| ready[q])?;
        let mut pkt = self.ports[port].queues[q]
            .pop_front()
            .expect("selected queue has a head");
        if self.ports[port].queues[q].is_empty() {
            self.ports[port].sched.queue_emptied(q);
        }
        self.release(&pkt);
        if let Some(w) = self.cfg.qos.queue_wred[q] {
            if w.mark_at == MarkAt::Dequeue {
                let depth = self.mmu.queues[port * PRIORITIES + q].used() * self.mmu.cell();
                if !self.apply_wred(port, q, depth, &mut pkt) {
                    // The transmitter stays free; the engine may poll again at once.
                    self.ledger.dropped_from_queue += 1;
                    return self.poll_transmit(port, now);
                }
            }
        }
        if let (Some(map), Some(tci)) = (self.cfg.qos.tc_to_dot1p, vlan_tci_offset(&pkt.data)) {
            edit::set_pcp(&mut pkt.data, tci, map[pkt.meta.tc as usize]);
        }
        let mut free = self.ports[port].busy_until;
        if self.catch_up > Time::ZERO {
            // Never date a frame back into a pause of its queue's priorities.
            let prios = self.queue_pfc[q];
            for pr in (0..PRIORITIES).filter(|pr| prios & (1 << pr) != 0) {
                free = free.max(self.ports[port].pause.unpaused_since(pr, now));
            }
        }
        let start = self.start_time(now, free, pkt.meta.ready_time);
        let p = &mut self.ports[port];
        let qc = &mut p.queue_counters[q];
        qc.tx_packets += 1;
        qc.tx_bytes += pkt.len as u64;
        p.counters.tx_packets += 1;
        p.counters.tx_bytes += pkt.len as u64;
        let wire = speed.wire_time(pkt.len as u64);
        p.busy_until = start + wire;
        p.counters.tx_busy += wire;
        self.ledger.sent += 1;
        Some(pkt)
    }

    /// Act on everything due at `now`: internal deadlines (PFC refresh, watchdog polls),
    /// then every frame a port may start by `now`, handed to `emit(port, frame)` in port
    /// order (one per port and call in virtual time; a catch-up burst in wall-clock time).
    /// The engines drive the switch with this and `receive`.
    pub fn poll_due(&mut self, now: Time, mut emit: impl FnMut(usize, Packet)) {
        if self.poll_timeout().is_some_and(|t| t <= now) {
            self.handle_timeout(now);
        }
        for port in 0..self.ports.len() {
            while self.next_transmit(port).is_some_and(|t| t <= now) {
                match self.poll_transmit(port, now) {
                    Some(pkt) => emit(port, pkt),
                    None => break,
                }
            }
        }
    }

    /// Earliest time `poll_transmit(port, t)` could return a frame, given the state now
    /// (a time before the latest `now` seen means "at once").
    pub fn next_transmit(&self, port: usize) -> Option<Time> {
        if let Some(t) = self.tx_cache[port].get() {
            return t;
        }
        let t = self.compute_next_transmit(port);
        self.tx_cache[port].set(Some(t));
        t
    }

    fn compute_next_transmit(&self, port: usize) -> Option<Time> {
        let p = &self.ports[port];
        if !p.link_up || !p.tx_enabled {
            return None;
        }
        let free = p.busy_until.max(self.now);
        if p.pfc.has_pending() {
            return Some(free);
        }
        let mut best: Option<Time> = None;
        for q in 0..PRIORITIES {
            let Some(head) = p.queues[q].front() else {
                continue;
            };
            let mut t = head.meta.ready_time.max(free);
            // Until none of the queue's priorities is paused (frames still pending may
            // extend or end a pause).
            loop {
                let paused = p.pause.paused_mask(t);
                if !self.queue_paused(port, q, paused) {
                    break;
                }
                let prios = self.queue_pfc[q] & paused;
                t = (0..PRIORITIES)
                    .filter(|pr| prios & (1 << pr) != 0)
                    .map(|pr| p.pause.resume_at(pr, t))
                    .max()
                    .unwrap_or(t);
            }
            best = Some(best.map_or(t, |b| b.min(t)));
        }
        best
    }

    /// Earliest internal deadline: a port able to start a frame, a PFC refresh, a watchdog poll.
    pub fn poll_timeout(&self) -> Option<Time> {
        let mut best = self.next_watchdog_poll;
        let mut take = |t: Option<Time>| {
            if let Some(t) = t {
                best = Some(best.map_or(t, |b: Time| b.min(t)));
            }
        };
        for (i, p) in self.ports.iter().enumerate() {
            take(p.pfc.poll_timeout());
            take(self.next_transmit(i));
        }
        best
    }

    /// Act on deadlines due at `now`: queue PFC refreshes, poll the watchdog.
    pub fn handle_timeout(&mut self, now: Time) {
        self.advance(now);
        for (i, p) in self.ports.iter_mut().enumerate() {
            if p.pfc.poll_timeout().is_some_and(|t| t <= now) {
                p.pfc.handle_timeout(now);
                self.tx_cache[i].set(None);
            }
        }
        if let (Some(cfg), Some(t)) = (self.cfg.qos.pfcwd, self.next_watchdog_poll) {
            if now >= t {
                self.poll_watchdog(now);
                self.next_watchdog_poll = Some(now + cfg.polling_interval);
            }
        }
    }

    fn poll_watchdog(&mut self, now: Time) {
        let cfg = self.cfg.qos.pfcwd.expect("watchdog configured");
        for port in 0..self.ports.len() {
            for q in 0..PRIORITIES {
                let prios = self.queue_pfc[q];
                if prios == 0 {
                    continue;
                }
                let p = &mut self.ports[port];
                let pause_frames = (0..PRIORITIES)
                    .filter(|pr| prios & (1 << pr) != 0)
                    .map(|pr| p.counters.pfc.rx_xoff[pr])
                    .sum();
                let obs = Observation {
                    has_packets: !p.queues[q].is_empty(),
                    tx_packets: p.queue_counters[q].tx_packets,
                    pause_frames,
                };
                if p.watchdog[q].poll(&cfg, now, obs) == Some(Transition::StormDetected)
                    && cfg.action == WatchdogAction::Drop
                {
                    self.flush_queue(port, q, DropReason::Watchdog);
                }
            }
        }
    }

    /// Discard everything in queue `q` of `port`, releasing its cells.
    fn flush_queue(&mut self, port: usize, q: usize, reason: DropReason) {
        self.touch(port);
        while let Some(pkt) = self.ports[port].queues[q].pop_front() {
            self.release(&pkt);
            self.ledger.dropped_from_queue += 1;
            if reason == DropReason::Watchdog {
                self.ports[port].watchdog[q].dropped_packets += 1;
            }
            self.drop_queued(port, reason, pkt);
        }
        self.ports[port].sched.queue_emptied(q);
    }

    /// Enable or disable `port`'s transmitter; frames wait in its queues while disabled.
    pub fn set_tx_enabled(&mut self, port: usize, enabled: bool, now: Time) {
        self.advance(now);
        self.touch(port);
        self.ports[port].tx_enabled = enabled;
    }

    /// Bring `port`'s link up or down. Down drops its queued frames and forgets pauses.
    pub fn set_link(&mut self, port: usize, up: bool, now: Time) {
        self.advance(now);
        self.touch(port);
        self.ports[port].link_up = up;
        if !up {
            for q in 0..PRIORITIES {
                self.flush_queue(port, q, DropReason::PortDown);
            }
            self.ports[port].pause.clear(now);
            if let Forwarder::L2(fdb) = &mut self.fwd {
                fdb.flush_port(port as u16);
            }
        }
    }

    /// Time `port` has spent paused on priority `prio` up to `now` (pfcstat pause duration).
    pub fn paused_time(&self, port: usize, prio: usize, now: Time) -> Time {
        self.ports[port].pause.paused_total(prio, now)
    }
}

/// Offset of the outer VLAN tag's TCI, if the frame is tagged.
fn vlan_tci_offset(data: &[u8]) -> Option<usize> {
    let tpid = u16::from_be_bytes([*data.get(12)?, *data.get(13)?]);
    (matches!(tpid, 0x8100 | 0x88A8 | 0x9100) && data.len() >= 16).then_some(14)
}
