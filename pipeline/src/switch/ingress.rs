//! The ingress half of the switch: a received frame is checked and parsed, classified into
//! a traffic class, PG and queue, looked up in the ACL tables of its port, forwarded (L2 FDB or L3 LPM), admitted by the MMU (XOFF
//! when a lossless PG crosses its limit), marked by WRED at enqueue, and queued; PFC frames
//! received load the port's pause timers.

use super::{Forwarder, PfcEvent, Port, Switch};
use crate::config::{v4_key, RouteTarget};
use crate::drop_reason::DropReason;
use crate::forward::L2Decision;
use crate::groups::MemberState;
use crate::link::{ControlFrame, Heard};
use crate::packet::{IpAt, Packet, Trim};
use crate::parser::{self, Parsed, L3};
use crate::port_set::PortSet;
use crate::wire::edit;
use lossless_buffer_model::mmu::{Mmu, Refusal};
use lossless_buffer_model::watchdog::WatchdogAction;
use lossless_buffer_model::wred::{MarkAt, Verdict};
use lossless_buffer_model::{Bytes, Time};

/// The DSCP, ECN and IP header's place of a parsed frame (none past a deep VLAN stack):
/// what classification, WRED's marks and a receiver's CE count read.
pub(super) fn ip_fields(h: &Parsed) -> (Option<u8>, u8, IpAt) {
    // Past at most two tags, the IP header starts within 22 bytes (fits the u8).
    match h.l3 {
        L3::V4 {
            dscp, ecn, offset, ..
        } if !h.deep_stack => (Some(dscp), ecn, IpAt::V4(offset as u8)),
        L3::V6 {
            dscp, ecn, offset, ..
        } if !h.deep_stack => (Some(dscp), ecn, IpAt::V6(offset as u8)),
        _ => (None, 0, IpAt::None),
    }
}

impl Switch {
    /// A frame's last bit arrived on `port` at `now`.
    pub fn receive(&mut self, port: usize, mut pkt: Packet, now: Time) {
        self.advance(now);
        self.ledger.received += 1;
        let p = &mut self.ports[port].link.tx;
        // A control ordered set is line time, not a frame: its protocol counts it.
        if !pkt.meta.class.is_ordered_set() {
            p.counters.rx_packets += 1;
            p.counters.rx_bytes += pkt.len as u64;
        }
        if !p.link_up {
            return self.drop_received(DropReason::PortDown, pkt);
        }
        let checked = self.ports[port].link.arrive(&pkt, now);
        if self.ports[port].link.llr().is_some() {
            // A NACK, or an ACK, may now be due.
            self.touch(port);
        }
        if let Err(r) = checked {
            return self.drop_received(r, pkt);
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
        // A port that speaks CBFC or LLR reads EtherType 0x88B5 as its link's messages;
        // on any other port it is data.
        match self.ports[port].link.read_link_control(&pkt.data) {
            None => {}
            Some(Ok(frame)) => return self.receive_control(port, frame, pkt, now),
            Some(Err(r)) => return self.drop_received(r, pkt),
        }
        if self.p4.is_some() {
            return self.receive_p4(port, pkt, now);
        }
        let mut parsed = Parsed::default();
        // Only an ACL rule reads the BTH's fields; without one they are checked, not kept.
        let acl = self.acl.applies_to(port);
        let checked = if acl {
            parser::parse_into(&pkt.data, len, &mut parsed)
        } else {
            parser::parse_for_forwarding(&pkt.data, len, &mut parsed)
        };
        if let Err(r) = checked {
            return self.drop_received(r, pkt);
        }
        if let Some(frame) = parsed.control {
            return self.receive_control(port, frame, pkt, now);
        }
        self.classify(port, &parsed, &mut pkt, now);
        if acl && !self.apply_acl(port, &parsed, &mut pkt) {
            return self.drop_received(DropReason::Acl, pkt);
        }
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
            Forwarder::L3 { lpm, groups } => {
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
                // The 5-tuple hash picks a group member; only routed frames need it. No
                // switch rewrites the 5-tuple, so a hash an earlier switch worked out (never
                // 0 unless the hash itself is) is the one this frame hashes to.
                if pkt.meta.flow_hash == 0 {
                    pkt.meta.flow_hash = parsed.flow_hash();
                }
                let nh = match lpm.lookup(key) {
                    Some(RouteTarget::NextHop(nh)) => Some(nh),
                    Some(RouteTarget::Group(g)) => {
                        let (ports, mmu) = (&self.ports, &self.mmu);
                        let prios = self.queue_pfc[pkt.meta.queue as usize];
                        groups.pick(g, pkt.meta.flow_hash, pkt.len, now, |port| {
                            member_state(ports, mmu, port as usize, prios, now)
                        })
                    }
                    None => None,
                };
                let Some(nh) = nh else {
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

    /// A data frame through the switch's P4 program's ingress: dropped, or sent to the
    /// port and traffic class the program chose (the switch's QoS maps classify it when
    /// the program sets no priority), its bytes as the program left them.
    fn receive_p4(&mut self, port: usize, mut pkt: Packet, now: Time) {
        let p4 = self.p4.as_mut().expect("a P4 switch");
        let (verdict, carried) = p4.model.ingress_in_place(
            &mut pkt.data,
            &mut pkt.len,
            port as u16,
            crate::p4::micros(now),
        );
        let classifies = p4.classifies;
        let (out, priority) = match verdict {
            lossless_p4::Verdict::Drop => return self.drop_received(DropReason::P4Drop, pkt),
            lossless_p4::Verdict::Multicast { .. } => {
                return self.drop_received(DropReason::P4Multicast, pkt)
            }
            lossless_p4::Verdict::Forward {
                port: out,
                priority,
            } => (out as usize, priority),
        };
        if out >= self.ports.len() {
            return self.drop_received(DropReason::P4BadPort, pkt);
        }
        // The switch's parser finds the DSCP, PCP and IP header for its QoS maps and for
        // WRED's marks; a frame it cannot read is classified by its port's defaults.
        let mut parsed = Parsed::default();
        let _ = parser::parse_for_forwarding(&pkt.data, pkt.len, &mut parsed);
        self.classify(port, &parsed, &mut pkt, now);
        if classifies {
            let q = &self.cfg.qos;
            let tc = priority & 7;
            pkt.meta.tc = tc;
            pkt.meta.pg = q.tc_to_pg[tc as usize];
            pkt.meta.queue = q.tc_to_queue[tc as usize];
        }
        let p4 = self.p4.as_mut().expect("a P4 switch");
        pkt.meta.flow_hash = p4.keep(carried, pkt.meta.flow_hash);
        self.ledger.forwarded += 1;
        self.enqueue(out, pkt);
    }

    /// Classify: traffic class from DSCP or PCP, then PG and queue; fill metadata.
    pub(super) fn classify(&self, port: usize, h: &Parsed, pkt: &mut Packet, now: Time) {
        let q = &self.cfg.qos;
        let tag = h.outer_vlan().map(|v| (v.pcp, v.dei));
        let (dscp, ecn, ip) = ip_fields(h);
        let tc = q.classify_tagged(dscp, tag);
        let m = &mut pkt.meta;
        m.in_port = port as u16;
        m.tc = tc;
        m.pg = q.tc_to_pg[tc as usize];
        m.queue = q.tc_to_queue[tc as usize];
        m.rx_time = now;
        m.ip = ip;
        m.ecn = ecn;
        m.trim = Trim::Eligible;
    }

    /// The ACL stage for a classified frame: count it, re-class it or rewrite its DSCP.
    /// Returns false when a rule drops it.
    fn apply_acl(&mut self, port: usize, h: &Parsed, pkt: &mut Packet) -> bool {
        let v = self.acl.apply(port, h, pkt.meta.tc, pkt.len);
        if v.drop {
            return false;
        }
        if v.no_trim {
            pkt.meta.trim = Trim::Disabled;
        }
        if let Some(tc) = v.set_tc {
            let q = &self.cfg.qos;
            let m = &mut pkt.meta;
            m.tc = tc;
            m.pg = q.tc_to_pg[tc as usize];
            m.queue = q.tc_to_queue[tc as usize];
        }
        if let Some(dscp) = v.set_dscp {
            match pkt.meta.ip {
                IpAt::V4(o) => edit::ipv4_set_dscp(&mut pkt.data[o as usize..], dscp),
                IpAt::V6(o) => edit::ipv6_set_dscp(&mut pkt.data[o as usize..], dscp),
                IpAt::None => {}
            }
        }
        true
    }

    pub(super) fn flood(&mut self, in_port: usize, pkt: Packet) {
        let targets: PortSet = (0..self.ports.len())
            .filter(|&o| o != in_port && self.ports[o].link.tx.link_up)
            .collect();
        let Some(last) = targets.iter().last() else {
            return self.drop_received(DropReason::SamePort, pkt);
        };
        self.ledger.forwarded += 1;
        for o in targets.iter().filter(|&o| o != last) {
            let mut data = crate::buffers::take(pkt.data.len());
            data.extend_from_slice(&pkt.data);
            let copy = Packet {
                data,
                len: pkt.len,
                meta: pkt.meta,
                hop: crate::packet::Hop::PLAIN,
            };
            self.enqueue(o, copy);
        }
        self.enqueue(last, pkt);
    }

    /// Buffer admission, WRED at enqueue, and queueing toward `out`.
    pub(super) fn enqueue(&mut self, out: usize, mut pkt: Packet) {
        let (in_port, pg, q) = (
            pkt.meta.in_port as usize,
            pkt.meta.pg as usize,
            pkt.meta.queue as usize,
        );
        pkt.meta.out_port = out as u16;
        self.ledger.copies += 1;
        if !self.ports[out].link.tx.link_up {
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
                // A lossless PG (PFC) or a credited channel (CBFC) must never drop.
                let credited = self.cbfc_ports.contains(in_port)
                    && self.cfg.ports[in_port].cbfc.is_credited_tc(pkt.meta.tc);
                if self.mmu.pg(in_port, pg).lossless || credited {
                    self.lossless_drops += 1;
                }
                // A queue that trims sends a cut copy of what it refuses.
                let copy = (r != Refusal::HeadroomFull && self.trims(out, q, &pkt))
                    .then(|| self.trimmed_copy(out, q, &pkt));
                // Ingress refusals are the PG's drops (the MMU counts them there); only an
                // egress refusal is the queue's.
                self.ledger.refused += 1;
                let copy = copy.map(|mut c| {
                    // A trimmed copy keeps no P4 state: egress reads its headers afresh.
                    if self.p4.as_ref().is_some_and(|p| p.runs_egress()) {
                        c.meta.flow_hash = 0;
                    }
                    c
                });
                if r != Refusal::EgressLimit {
                    if let Some(p4) = &mut self.p4 {
                        p4.discard(pkt.meta.flow_hash);
                    }
                }
                match r {
                    Refusal::IngressLimit => self.drop_frame(DropReason::IngressLimit, pkt),
                    Refusal::HeadroomFull => self.drop_frame(DropReason::HeadroomFull, pkt),
                    Refusal::EgressLimit => self.drop_queued(out, DropReason::EgressLimit, pkt),
                }
                if let Some(c) = copy {
                    self.ports[out].queue_counters[q].trim.trim_packets += 1;
                    self.ledger.copies += 1;
                    self.enqueue(out, c);
                    // `enqueue` counted the copy once more: it is one copy.
                    self.ledger.copies -= 1;
                }
                return;
            }
        };
        pkt.meta.cells = admitted.cells as u16;
        if self.cbfc_ports.contains(in_port) {
            // Stored: the credits of a frame on a credited channel are held until it leaves.
            self.ports[in_port].link.stored(pkt.meta.tc, pkt.len);
        }
        if admitted.xoff {
            self.send_xoff(in_port, pg as u8, admitted.cells as u64);
        }
        if let Some(w) = self.cfg.qos.queue_wred[q] {
            if w.mark_at == MarkAt::Enqueue {
                let depth =
                    (self.mmu.queue(out, q).used() - admitted.cells as u64) * self.mmu.cell();
                if !self.apply_wred(out, q, depth, &mut pkt) {
                    self.ledger.refused += 1;
                    return;
                }
            }
        }
        self.ledger.queued += 1;
        if let Some(p4) = &mut self.p4 {
            // What the frame found in its queue, for the program's egress.
            let before = self.mmu.queue(out, q).used() - admitted.cells as u64;
            let depth = match p4.depth_unit {
                crate::p4::DepthUnit::Packets => self.ports[out].queues[q].len() as u64,
                crate::p4::DepthUnit::Cells => before,
                crate::p4::DepthUnit::Bytes => before * self.mmu.cell(),
            };
            p4.queued(pkt.meta.flow_hash, depth);
        }
        let port = &mut self.ports[out];
        if port.queues[q].is_empty() {
            port.waiting_since[q] = pkt.meta.rx_time;
            port.held |= 1 << q;
            // The frame is the queue's new head: the port's next start may be sooner. Behind
            // a head, it changes nothing `next_transmit` reads (heads, pauses, the wire).
            self.touch(out);
        }
        self.frames.push_back(&mut self.ports[out].queues[q], pkt);
    }

    /// Run WRED on `pkt` (queued or about to be) at queue depth `depth` bytes. Returns false
    /// when the packet was dropped (its cells released).
    pub(super) fn apply_wred(
        &mut self,
        out: usize,
        q: usize,
        depth: u64,
        pkt: &mut Packet,
    ) -> bool {
        let w = self.cfg.qos.queue_wred[q].expect("queue has WRED");
        let lossless = self
            .mmu
            .pg(pkt.meta.in_port as usize, pkt.meta.pg as usize)
            .lossless;
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

    pub(super) fn mark_ce(&mut self, pkt: &mut Packet) {
        match pkt.meta.ip {
            IpAt::V4(o) => edit::ipv4_mark_ce(&mut pkt.data[o as usize..]),
            IpAt::V6(o) => edit::ipv6_mark_ce(&mut pkt.data[o as usize..]),
            IpAt::None => {}
        }
        pkt.meta.ecn = edit::ECN_CE;
    }

    /// Turn XOFF on for the priorities of (`port`, `pg`), whose crossing frame took `cells`:
    /// the PFC frame leaves ahead of all queues.
    pub(super) fn send_xoff(&mut self, port: usize, pg: u8, cells: u64) {
        let mask = self.pg_pfc[pg as usize];
        if mask != 0 {
            self.log(|s| {
                let (shared_bytes, headroom_bytes, _, _) = s.pg_levels(port, pg as usize);
                // The limit the crossing frame was tested against: with its cells counted.
                let limit_bytes = s.mmu.pg_limit_with_bytes(port, pg as usize, cells);
                PfcEvent::XoffDecided {
                    at: s.now,
                    port: port as u16,
                    pg,
                    priorities: mask,
                    shared_bytes,
                    headroom_bytes,
                    limit_bytes,
                }
            });
            self.ports[port].link.send_xoff(mask);
            self.touch(port);
        }
    }

    /// A control frame arrived on `port`: the port's link layer takes it (consumed) or
    /// refuses it (dropped, counted by reason).
    pub(super) fn receive_control(
        &mut self,
        port: usize,
        frame: ControlFrame,
        pkt: Packet,
        now: Time,
    ) {
        self.touch(port);
        match self.ports[port].link.receive_control(now, frame) {
            Err(reason) => self.drop_received(reason, pkt),
            Ok(heard) => {
                self.ledger.consumed += 1;
                let effect_at = now + self.cfg.qos.pfc_response;
                let (enable, quanta, pause) = match heard {
                    Heard::Pfc { enable, quanta } => (enable, quanta, false),
                    Heard::Pause { quanta } => (0xFF, [quanta; 8], true),
                    Heard::Credit | Heard::Retry => return crate::buffers::give(pkt.data),
                };
                self.log(|_| PfcEvent::Received {
                    at: now,
                    port: port as u16,
                    enable,
                    quanta,
                    effect_at,
                    pause,
                });
                crate::buffers::give(pkt.data);
            }
        }
    }
}

/// What DLB sees of a member port: link, pause of the packet's PFC priorities `prios`, and
/// bytes queued there.
fn member_state(ports: &[Port], mmu: &Mmu, port: usize, prios: u8, now: Time) -> MemberState {
    let link = &ports[port].link;
    MemberState {
        link_up: link.tx.link_up,
        paused: link.paused_mask(now) & prios != 0,
        queued_bytes: mmu.port_queued_bytes(port),
    }
}
