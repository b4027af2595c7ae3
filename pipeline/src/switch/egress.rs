//! The egress half of the switch: when each port may start a frame (its transmitter, its
//! queues' pauses, the watchdog), the frame it starts (PFC first, then the scheduler's pick,
//! WRED at dequeue, PCP rewrite), the release of its cells (and XON), and the PFC watchdog.

use super::{Forwarder, PfcEvent, Switch};
use crate::config::FlowControl;
use crate::drop_reason::DropReason;
use crate::link::Sent;
use crate::packet::{Meta, Packet};
use crate::wire::{edit, vlan};
use lossless_buffer_model::watchdog::{Observation, Transition, WatchdogAction};
use lossless_buffer_model::wred::MarkAt;
use lossless_buffer_model::{Time, PRIORITIES};

impl Switch {
    /// Return a dequeued packet's cells: its credits back to the port it came in on (a
    /// CBFC port), XON if its PG now qualifies.
    pub(super) fn release(&mut self, pkt: &Packet) {
        let m = &pkt.meta;
        let (in_port, pg) = (m.in_port as usize, m.pg);
        let freed = self.mmu.release(
            in_port,
            pg as usize,
            m.out_port as usize,
            m.queue as usize,
            m.cells as u32,
        );
        if self.cbfc_ports.contains(in_port) {
            self.ports[in_port].link.drained(m.tc, pkt.len);
            self.touch(in_port);
        }
        if freed.xon {
            let mask = self.pg_pfc[pg as usize];
            self.log(|s| {
                let (shared_bytes, _, _, xon_level_bytes) = s.pg_levels(in_port, pg as usize);
                PfcEvent::XonDecided {
                    at: s.now,
                    port: in_port as u16,
                    pg,
                    priorities: mask,
                    shared_bytes,
                    xon_level_bytes,
                }
            });
            self.ports[in_port].link.send_xon(mask);
            self.touch(in_port);
        }
    }

    pub(super) fn watchdog_action(&self, port: usize, q: usize) -> Option<WatchdogAction> {
        let cfg = self.cfg.qos.pfcwd?;
        self.ports[port].watchdog[q].stormed.then_some(cfg.action)
    }

    /// The PFC priorities whose pause holds queue `q` of `port`: those mapped to it, unless
    /// the watchdog has the queue stormed with an action that ignores pause.
    pub(super) fn pausing_priorities(&self, port: usize, q: usize) -> u8 {
        match self.watchdog_action(port, q) {
            Some(WatchdogAction::Drop | WatchdogAction::Forward) => 0,
            _ => self.queue_pfc[q],
        }
    }

    /// Is queue `q` of `port` held by PFC, given the port's `paused` priorities?
    pub(super) fn queue_paused(&self, port: usize, q: usize, paused: u8) -> bool {
        self.pausing_priorities(port, q) & paused != 0
    }

    /// The frame to start on `port` at `now`, if the transmitter is free: a pending PFC
    /// frame first, then the scheduler's pick among ready, unpaused queues.
    pub fn poll_transmit(&mut self, port: usize, now: Time) -> Option<Packet> {
        self.advance(now);
        self.touch(port);
        if !self.ports[port].link.tx.idle_at(now) {
            return None;
        }
        if self.ports[port].link.control_due_by(now) {
            if let Some(pkt) = self.send_control(port, now) {
                return Some(pkt);
            }
        }
        let paused = self.ports[port].link.paused_mask(now);
        let (mut ready, mut lens) = (0u8, [0u32; PRIORITIES]);
        let mut held = self.ports[port].held & !self.ports[port].dequeue_disabled;
        while held != 0 {
            let q = held.trailing_zeros() as usize;
            held &= held - 1;
            let head = self
                .frames
                .front(&self.ports[port].queues[q])
                .expect("held");
            if self.ready_time(head.meta) <= now
                && !self.queue_paused(port, q, paused)
                && self.ports[port].link.may_send(q as u8, head.len)
            {
                ready |= 1 << q;
                lens[q] = head.len;
            }
        }
        let q = self.ports[port].sched.select_ready(ready, &lens)?;
        let mut pkt = self
            .frames
            .pop_front(&mut self.ports[port].queues[q])
            .expect("selected queue has a head");
        if self.ports[port].queues[q].is_empty() {
            self.ports[port].held &= !(1 << q);
            self.ports[port].sched.queue_emptied(q);
        }
        self.release(&pkt);
        if let Some(w) = self.cfg.qos.queue_wred[q] {
            if w.mark_at == MarkAt::Dequeue {
                let depth = self.mmu.queue(port, q).used() * self.mmu.cell();
                if !self.apply_wred(port, q, depth, &mut pkt) {
                    // The transmitter stays free; the engine may poll again at once.
                    self.ledger.dropped_from_queue += 1;
                    return self.poll_transmit(port, now);
                }
            }
        }
        if self.p4.as_ref().is_some_and(|p| p.runs_egress())
            && !self.p4_egress(port, q, now, &mut pkt)
        {
            self.ledger.dropped_from_queue += 1;
            // Its P4 state is gone with the egress that dropped it.
            pkt.meta.flow_hash = 0;
            self.drop_queued(port, DropReason::P4Drop, pkt);
            return self.poll_transmit(port, now);
        }
        // The frame's tag is looked for only where PCP is rewritten.
        if let Some(map) = self.cfg.qos.tc_to_dot1p {
            if let Some(tci) = vlan::outer_tci_offset(&pkt.data) {
                edit::set_pcp(&mut pkt.data, tci, map[pkt.meta.tc as usize]);
            }
        }
        // Never dated back into a pause of the queue's priorities, nor before it was ready.
        let start = self.ports[port]
            .link
            .earliest_start(now, self.queue_pfc[q])
            .max(self.ready_time(&pkt.meta))
            .min(now);
        if !self.ports[port].link.start_data(start, &mut pkt, q as u8) {
            // LLR cannot retry now and its action is `discard`. (A P4 frame's state went
            // with its egress: nothing is kept under its flow hash.)
            self.ledger.dropped_from_queue += 1;
            if self.p4.is_some() {
                pkt.meta.flow_hash = 0;
            }
            self.drop_queued(port, DropReason::LlrTxDiscard, pkt);
            return self.poll_transmit(port, now);
        }
        let p = &mut self.ports[port];
        let qc = &mut p.queue_counters[q];
        qc.tx_packets += 1;
        qc.tx_bytes += pkt.len as u64;
        if let crate::packet::Trim::From(trimmed_on) = pkt.meta.trim {
            p.queue_counters[trimmed_on as usize].trim.tx_trim_packets += 1;
        }
        p.waiting_since[q] = start;
        self.ledger.sent += 1;
        if let Forwarder::L3 { groups, .. } = &mut self.fwd {
            if groups.meters_port(port) {
                groups.record_tx(port, start, pkt.len as u64);
            }
        }
        Some(pkt)
    }

    /// Start `port`'s pending control frame at `now` (logged when logging).
    fn send_control(&mut self, port: usize, now: Time) -> Option<Packet> {
        let buf = crate::buffers::take(crate::wire::pfc::PFC_FRAME_HELD);
        let Sent { mut pkt, request } = self.ports[port].link.poll_control(now, buf)?;
        if let (Some(log), Some(request)) = (&mut self.pfc_log, request) {
            log.push(PfcEvent::Sent {
                at: now,
                port: port as u16,
                enable: request.enable,
                quanta: request.quanta,
                pause: self.cfg.flow_control_of(port) == FlowControl::Pause,
            });
        }
        pkt.meta.rx_time = now;
        Some(pkt)
    }

    /// Earliest time a queued frame may start leaving: its arrival plus the pipeline
    /// latency (kept as a rule, not per frame: a fabric holds hundreds of thousands).
    pub(super) fn ready_time(&self, meta: &Meta) -> Time {
        meta.rx_time + self.cfg.pipeline_latency
    }

    /// Has port `port` nothing queued and its link layer nothing outstanding (what it
    /// may still send is link upkeep: periodic credit updates)?
    pub fn settled(&self, port: usize) -> bool {
        let p = &self.ports[port];
        p.held == 0 && p.link.settled()
    }

    /// Earliest time `poll_transmit(port, t)` could return a frame, given the state now
    /// (a time before the latest `now` seen means "at once").
    pub fn next_transmit(&self, port: usize) -> Option<Time> {
        self.ports[port]
            .link
            .tx
            .next_start(|| self.compute_next_transmit(port))
    }

    // Kept out of line: `next_transmit` is called far more often than it computes, and
    // its cached path should not pay this function's register saves.
    #[inline(never)]
    fn compute_next_transmit(&self, port: usize) -> Option<Time> {
        let p = &self.ports[port];
        let free = p.link.tx.free_from(self.now)?;
        let mut best = p.link.control_due().map(|t| t.max(free));
        if best == Some(free) {
            return best;
        }
        let mut held = p.held & !p.dequeue_disabled;
        while held != 0 {
            let q = held.trailing_zeros() as usize;
            held &= held - 1;
            let head = self.frames.front(&p.queues[q]).expect("held");
            // Without credits for its head a queue waits for a CF_Update, not a time.
            if !p.link.may_send(q as u8, head.len) {
                continue;
            }
            let ready = self.ready_time(head.meta);
            let start = p
                .link
                .first_start(free, self.pausing_priorities(port, q), |t| {
                    Some(t.max(ready))
                });
            best = match (best, start) {
                (Some(b), Some(s)) => Some(b.min(s)),
                (b, s) => b.or(s),
            };
        }
        best
    }

    pub(super) fn poll_watchdog(&mut self, now: Time) {
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
                    .map(|pr| p.link.counters().pfc.rx_xoff[pr])
                    .sum();
                let paused_time = (0..PRIORITIES)
                    .filter(|pr| prios & (1 << pr) != 0)
                    .map(|pr| p.link.paused_time(pr, now))
                    .max()
                    .unwrap_or(Time::ZERO);
                let obs = Observation {
                    has_packets: !p.queues[q].is_empty(),
                    tx_packets: p.queue_counters[q].tx_packets,
                    pause_frames,
                    paused_time,
                };
                let change = p.watchdog[q].poll(&cfg, now, obs);
                if change.is_some() {
                    // Whether the queue obeys pause changed: its next start may have too.
                    self.touch(port);
                }
                if change == Some(Transition::StormDetected) && cfg.action == WatchdogAction::Drop {
                    self.flush_queue(port, q, DropReason::Watchdog);
                }
            }
        }
    }

    /// The switch's P4 program's egress for `pkt`, leaving queue `q` of `port` at `now`:
    /// its bytes rewritten as the program leaves them; false when the program drops it.
    fn p4_egress(&mut self, port: usize, q: usize, now: Time, pkt: &mut Packet) -> bool {
        let deq_depth = {
            let p4 = self.p4.as_ref().expect("a P4 switch");
            let left = self.mmu.queue(port, q).used();
            match p4.depth_unit {
                crate::p4::DepthUnit::Packets => self.ports[port].queues[q].len() as u64,
                crate::p4::DepthUnit::Cells => left,
                crate::p4::DepthUnit::Bytes => left * self.mmu.cell(),
            }
        };
        let enq = self.ready_time(&pkt.meta).min(now);
        let p4 = self.p4.as_mut().expect("a P4 switch");
        let kept = p4.take(pkt.meta.flow_hash);
        let (carried, flow_hash, enq_depth) = match kept {
            Some((c, h, d)) => (Some(c), h, d),
            None => (None, 0, 0),
        };
        pkt.meta.flow_hash = flow_hash;
        let qm = crate::p4::queueing(enq, enq_depth, now, deq_depth);
        let kept = p4
            .model
            .egress_in_place(carried, &mut pkt.data, &mut pkt.len, port as u16, qm);
        if kept {
            // What the frame's metadata says of its IP header follows the bytes egress
            // wrote (a CE mark the program set is the receiver's to count).
            let mut h = crate::parser::Parsed::default();
            let _ = crate::parser::parse_for_forwarding(&pkt.data, pkt.len, &mut h);
            let (_, ecn, ip) = super::ingress::ip_fields(&h);
            pkt.meta.ecn = ecn;
            pkt.meta.ip = ip;
        }
        kept
    }

    /// Discard everything in queue `q` of `port`, releasing its cells.
    pub(super) fn flush_queue(&mut self, port: usize, q: usize, reason: DropReason) {
        self.touch(port);
        while let Some(pkt) = self.frames.pop_front(&mut self.ports[port].queues[q]) {
            self.release(&pkt);
            self.ledger.dropped_from_queue += 1;
            if reason == DropReason::Watchdog {
                self.ports[port].watchdog[q].dropped_packets += 1;
            }
            self.drop_queued(port, reason, pkt);
        }
        self.ports[port].held &= !(1 << q);
        self.ports[port].sched.queue_emptied(q);
    }
}
