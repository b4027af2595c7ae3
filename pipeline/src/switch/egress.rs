//! The egress half of the switch: when each port may start a frame (its transmitter, its
//! queues' pauses, the watchdog), the frame it starts (PFC first, then the scheduler's pick,
//! WRED at dequeue, PCP rewrite), the release of its cells (and XON), and the PFC watchdog.

use super::*;

impl Switch {
    /// When a frame polled at `now` starts, given the port was free at `free` and the frame
    /// ready at `ready`.
    pub(super) fn start_time(&self, now: Time, free: Time, ready: Time) -> Time {
        if self.catch_up == Time::ZERO {
            now
        } else {
            now.saturating_sub(self.catch_up)
                .max(free)
                .max(ready)
                .min(now)
        }
    }

    /// Return a dequeued packet's cells; send XON if its PG now qualifies.
    pub(super) fn release(&mut self, pkt: &Packet) {
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
            self.ports[in_port].pfc.send_xon(mask);
            self.touch(in_port);
        }
    }

    pub(super) fn watchdog_action(&self, port: usize, q: usize) -> Option<WatchdogAction> {
        let cfg = self.cfg.qos.pfcwd?;
        self.ports[port].watchdog[q].stormed.then_some(cfg.action)
    }

    /// Is queue `q` of `port` held by PFC, given the port's `paused` priorities?
    pub(super) fn queue_paused(&self, port: usize, q: usize, paused: u8) -> bool {
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
            p.counters.count_pfc_sent(req.enable, &req.quanta, now);
            if let Some(log) = &mut self.pfc_log {
                log.push(PfcEvent::Sent {
                    at: now,
                    port: port as u16,
                    enable: req.enable,
                    quanta: req.quanta,
                });
            }
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
        p.waiting_since[q] = start;
        p.counters.tx_packets += 1;
        p.counters.tx_bytes += pkt.len as u64;
        let wire = speed.wire_time(pkt.len as u64);
        p.busy_until = start + wire;
        p.counters.tx_busy += wire;
        self.ledger.sent += 1;
        if let Forwarder::L3 { groups, .. } = &mut self.fwd {
            if groups.meters_port(port) {
                groups.record_tx(port, start, pkt.len as u64);
            }
        }
        Some(pkt)
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

    pub(super) fn compute_next_transmit(&self, port: usize) -> Option<Time> {
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
                    .map(|pr| p.counters.pfc.rx_xoff[pr])
                    .sum();
                let paused_time = (0..PRIORITIES)
                    .filter(|pr| prios & (1 << pr) != 0)
                    .map(|pr| p.pause.paused_total(pr, now))
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

    /// Discard everything in queue `q` of `port`, releasing its cells.
    pub(super) fn flush_queue(&mut self, port: usize, q: usize, reason: DropReason) {
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
}

/// Offset of the outer VLAN tag's TCI, if the frame is tagged.
fn vlan_tci_offset(data: &[u8]) -> Option<usize> {
    let tpid = u16::from_be_bytes([*data.get(12)?, *data.get(13)?]);
    (matches!(tpid, 0x8100 | 0x88A8 | 0x9100) && data.len() >= 16).then_some(14)
}
