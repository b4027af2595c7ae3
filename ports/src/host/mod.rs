//! A host NIC at the end of a link, sans-IO like the switch, driven through the same
//! [`Node`] interface.
//!
//! Transmit (through the shared [`LinkLayer`]): PFC frames the NIC generates leave first,
//! then CNPs, then the host's flows, round-robin, one frame per flow in turn; a flow whose
//! priority is paused (PFC honoured, with the NIC's response delay) is skipped. Receive:
//! PFC frames reload per-priority pause timers; data frames are counted against the flow
//! they belong to ([`FlowRx`]) and, with a bounded receive buffer drained at `drain`, the
//! NIC sends XOFF when the buffer passes `pfc_xoff` and XON below `pfc_xon` (a slow
//! receiver); past the buffer, frames are dropped and counted.

use crate::collective::Rank;
use crate::dcqcn::{NotificationPoint, ReactionPoint};
use crate::flow::{FlowRx, FlowTx};
pub use crate::nic::{NicConfig, PfcMode, RcAck, RxBuffer};
use crate::rc::Responder;
use crate::tcp::TcpStack;
use lossless_buffer_model::{Rate, Time, WireTimes};
use lossless_pipeline::buffers;
use lossless_pipeline::config::FlowControl;
use lossless_pipeline::drop_reason::DropReason;
use lossless_pipeline::link::cbfc::CbfcSetup;
use lossless_pipeline::link::{LinkLayer, PauseSetup, Unhonoured};
use lossless_pipeline::parser::{parse_into, Parsed, L3, L4};
use lossless_pipeline::wire::rocev2::{
    OPCODE_ACKNOWLEDGE, OPCODE_CNP, OPCODE_SEND_LAST, OPCODE_SEND_ONLY,
};
use lossless_pipeline::{Node, Packet};
use std::collections::VecDeque;

mod ranks;
mod replies;
mod tcp;
#[cfg(test)]
mod tests;

pub use replies::RcSink;

/// An RC packet in the receive buffer, to be acknowledged once the host has placed it.
#[derive(Debug)]
struct Placing {
    /// Where it ends in the buffer's stream of bytes (see `Host::placed`).
    end: u64,
    flow: u32,
    psn: u32,
    payload: u32,
    last: bool,
    /// Its headers (where the acknowledgement goes).
    parsed: Parsed,
}

/// Bytes of TCP frames the NIC takes from the stack ahead of its transmitter (the rest
/// wait in the stack), as byte queue limits keep a Linux NIC's ring short: a frame's
/// latency then counts from here, not from a window's worth of queue in the host.
pub(super) const TCP_RING: u64 = 64 * 1024;

/// What a received frame was.
#[derive(Debug)]
pub enum Received {
    /// A data frame for the host (counted against its flow); `accept` left its parsed
    /// headers where it was told to.
    Data(Packet),
    /// An RC acknowledgement for one of this NIC's queue pairs (its requester moved on);
    /// its buffer is returned for reuse.
    Ack(Vec<u8>),
    /// A PFC frame, acted on or ignored; its buffer is returned for reuse.
    Pfc(Vec<u8>),
    /// Dropped: receive buffer full, or unparseable / other MAC control, or discarded by
    /// link-level retry.
    Dropped(Packet),
    /// Corrupted on the wire: the FCS check failed (counted in `rx_bad_fcs`, and as the
    /// wire's injected loss, not as the host's drop).
    BadFcs(Packet),
    /// A RoCEv2 CNP for one of this NIC's queue pairs (DCQCN cut its rate, if it runs
    /// DCQCN); its buffer is returned for reuse.
    Cnp(Vec<u8>),
}

/// One host NIC.
#[derive(Debug)]
pub struct Host {
    /// Name.
    pub name: String,
    /// MAC address.
    pub mac: [u8; 6],
    /// The NIC's link layer: link and enable state, busy-until, the pauses the switch asked
    /// for, the XOFF of the receive buffer, frame and PFC counters.
    pub link: LinkLayer,
    /// Wire times of the frames it receives (at its port's line rate), for their flows'
    /// counts.
    rx_wire: WireTimes,
    nic: NicConfig,
    /// The host's flows (sender side).
    pub flows: Vec<FlowTx>,
    /// Flow index of each queue pair, sorted by QP (where a CNP goes).
    qp_flow: Vec<(u32, usize)>,
    rr: usize,
    occupancy: u64,
    occupancy_at: Time,
    /// Bytes that have entered the receive buffer, and left it (drained into the host's
    /// memory), since the start: a frame is placed once `placed` reaches its end.
    admitted: u64,
    placed: u64,
    /// RC packets in the receive buffer, acknowledged once placed (`rc_ack: placed`).
    placing: VecDeque<Placing>,
    /// On a CBFC link with a receive buffer: each frame's credits until the host has
    /// placed it (end offset in `admitted`, channel, length).
    credited: VecDeque<(u64, u8, u32)>,
    /// Frames dropped because the receive buffer was full.
    pub rx_drops: u64,
    /// Peak receive-buffer occupancy in bytes.
    pub rx_watermark: u64,
    /// Frames the NIC dropped for any reason: buffer full, unparseable, 802.3x PAUSE.
    pub dropped: u64,
    /// Data frames of no flow this host receives (a forwarding mistake upstream).
    pub misdelivered: u64,
    /// Receiver statistics of the flows this host receives, sorted by flow id, with the
    /// RC responder of each RC flow.
    receivers: Vec<(u32, FlowRx, Option<RcSink>)>,
    now: Time,
    /// DCQCN notification point: CNPs sent per queue pair.
    pub np: NotificationPoint,
    /// Control frames waiting to be sent before data frames (CNPs, RC ACKs and NAKs), each
    /// with the priority it is queued on.
    control: VecDeque<(u8, Packet)>,
    /// CNPs received for this NIC's queue pairs.
    pub cnps_received: u64,
    /// The host's ranks in collectives, which post messages on its RC flows.
    ranks: Vec<Rank>,
    /// Its TCP stack, when it sends or receives a TCP flow.
    tcp: Option<Box<TcpStack>>,
    /// TCP frames made by the stack, waiting for the transmitter, each with its priority.
    tcp_out: VecDeque<(u8, Packet)>,
    /// When the TCP stack next needs polling.
    tcp_wake: Option<Time>,
}

impl Host {
    /// A host NIC at `speed` with its flows.
    pub fn new(
        name: String,
        mac: [u8; 6],
        speed: Rate,
        nic: NicConfig,
        mut flows: Vec<FlowTx>,
    ) -> Host {
        if let Some(p) = nic.dcqcn {
            for f in flows.iter_mut().filter(|f| f.qp().is_some()) {
                f.dcqcn = Some(ReactionPoint::new(p, speed));
            }
        }
        let mut qp_flow: Vec<(u32, usize)> = flows
            .iter()
            .enumerate()
            .filter_map(|(i, f)| Some((f.qp()?, i)))
            .collect();
        qp_flow.sort_unstable();
        let mut link = LinkLayer::new(
            speed,
            mac,
            PauseSetup {
                mode: nic.flow_control,
                response: nic.pfc_response,
                quanta: nic.pause_quanta,
                honoured: nic.pfc_enable,
                obey: nic.pfc == PfcMode::Honor,
                unhonoured: Unhonoured::Count,
            },
        );
        if nic.flow_control == FlowControl::Cbfc {
            // Until the switch port is known its receiver is taken to be the NIC's twin.
            link.enable_cbfc(nic.cbfc, &nic.cbfc);
        }
        if let Some(l) = nic.llr {
            link.enable_llr(l);
        }
        Host {
            name,
            mac,
            link,
            rx_wire: WireTimes::new(speed),
            nic,
            flows,
            qp_flow,
            rr: 0,
            occupancy: 0,
            occupancy_at: Time::ZERO,
            admitted: 0,
            placed: 0,
            placing: VecDeque::new(),
            credited: VecDeque::new(),
            rx_drops: 0,
            rx_watermark: 0,
            dropped: 0,
            misdelivered: 0,
            receivers: Vec::new(),
            now: Time::ZERO,
            np: NotificationPoint::default(),
            control: VecDeque::new(),
            cnps_received: 0,
            ranks: Vec::new(),
            tcp: None,
            tcp_out: VecDeque::new(),
            tcp_wake: None,
        }
    }

    /// NIC settings.
    pub fn nic(&self) -> &NicConfig {
        &self.nic
    }

    /// Line rate of the NIC's link.
    pub fn speed(&self) -> Rate {
        self.link.tx.speed()
    }

    /// Count the frames of flow `id` this host receives in `rx`; an RC flow (`rc`) also
    /// gets a responder that acknowledges what arrives.
    pub fn add_receiver(&mut self, id: u32, rx: FlowRx, rc: Option<RcSink>) {
        let at = self.receivers.partition_point(|(i, ..)| *i < id);
        self.receivers.insert(at, (id, rx, rc));
    }

    /// Let every receiver count bits over their wire time for times up to `horizon` back
    /// ([`FlowRx::bits_by`], what plots need).
    pub fn track_wire_time(&mut self, horizon: Time) {
        for (_, rx, _) in &mut self.receivers {
            rx.track_wire_time(horizon);
        }
    }

    /// Receiver statistics of flow `id`, if this host receives it.
    pub fn receiver(&self, id: u32) -> Option<&FlowRx> {
        let i = self
            .receivers
            .binary_search_by_key(&id, |(i, ..)| *i)
            .ok()?;
        Some(&self.receivers[i].1)
    }

    /// The RC responder of flow `id`, if this host receives it over RC.
    pub fn responder(&self, id: u32) -> Option<&Responder> {
        let i = self
            .receivers
            .binary_search_by_key(&id, |(i, ..)| *i)
            .ok()?;
        self.receivers[i].2.as_ref().map(|s| &s.responder)
    }

    /// Let a late `poll_transmit` date a frame's start up to `window` into the past — never
    /// before the transmitter was free, the flow's slot, or the end of a pause of its
    /// priority — so that a wall-clock engine that wakes late sends a short burst instead of
    /// losing slots. The virtual-time engine polls exactly and leaves this at 0.
    pub fn set_catch_up(&mut self, window: Time) {
        self.link.tx.set_catch_up(window);
    }

    fn drain_to(&mut self, now: Time) {
        if let Some(rx) = self.nic.rx_buffer {
            if now > self.occupancy_at {
                let drained = rx
                    .drain
                    .bytes_in(now - self.occupancy_at)
                    .min(self.occupancy);
                self.occupancy -= drained;
                self.placed += drained;
                self.occupancy_at = now;
            }
        }
    }

    /// When the first RC packet waiting in the receive buffer will be placed (None: none
    /// waits, or the host does not read).
    fn next_placed(&self) -> Option<Time> {
        let head = self.placing.front()?;
        let rx = self.nic.rx_buffer?;
        if rx.drain.bps() == 0 {
            return None;
        }
        let left = head.end.saturating_sub(self.placed);
        Some(self.occupancy_at + rx.drain.time_for_bytes_ceil(left))
    }

    /// Acknowledge the RC packets the host has placed by `now`.
    fn place(&mut self, now: Time) {
        self.drain_to(now);
        while self.placing.front().is_some_and(|p| p.end <= self.placed) {
            let p = self.placing.pop_front().expect("checked");
            self.respond(p.flow, p.psn, p.payload, p.last, &p.parsed, now);
        }
    }

    /// Receive-buffer occupancy in bytes at `now`.
    pub fn occupancy(&mut self, now: Time) -> u64 {
        self.drain_to(now);
        self.occupancy
    }

    /// Receive-buffer occupancy in bytes at `now` (at or after the latest frame), without
    /// moving the NIC's own clock.
    pub fn occupancy_at(&self, now: Time) -> u64 {
        match self.nic.rx_buffer {
            Some(rx) if now > self.occupancy_at => self
                .occupancy
                .saturating_sub(rx.drain.bytes_in(now - self.occupancy_at)),
            _ => self.occupancy,
        }
    }

    /// What the NIC makes of a frame whose last bit arrived at `now`: PFC acted on, a CNP
    /// handed to DCQCN, a data frame buffered (XOFF past `pfc_xoff`) or dropped. The
    /// cached next start is dropped only where the sending side changed (a pause, an
    /// acknowledged or rate-cut flow, a reply or CNP queued, an XOFF): a frame a sink only
    /// counts leaves it as it was. The frame's headers are parsed into `parsed` (written
    /// in place: the NIC parses every frame).
    pub fn accept(&mut self, pkt: Packet, now: Time, parsed: &mut Parsed) -> Received {
        self.now = self.now.max(now);
        self.link.tx.counters.rx_packets += 1;
        self.link.tx.counters.rx_bytes += pkt.len as u64;
        match self.link.arrive(&pkt, now) {
            Ok(()) => {}
            Err(DropReason::BadFcs) => return Received::BadFcs(pkt),
            Err(_) => return Received::Dropped(pkt),
        }
        let control = match self.link.read_link_control(&pkt.data) {
            Some(Ok(frame)) => Some(frame),
            Some(Err(_)) => return Received::Dropped(pkt),
            None => {
                if parse_into(&pkt.data, pkt.len, parsed).is_err() {
                    return Received::Dropped(pkt);
                }
                parsed.control.take()
            }
        };
        let parsed = &*parsed;
        match control {
            Some(frame) => match self.link.receive_control(now, frame) {
                Ok(_) => Received::Pfc(pkt.data),
                Err(_) => Received::Dropped(pkt),
            },
            None if parsed.bth.is_some_and(|b| b.opcode == OPCODE_ACKNOWLEDGE) => {
                let b = parsed.bth.expect("checked");
                if let (Some((syndrome, _)), Ok(i)) = (
                    b.aeth,
                    self.qp_flow.binary_search_by_key(&b.dest_qp, |(q, _)| *q),
                ) {
                    let f = self.qp_flow[i].1;
                    self.flows[f].on_acknowledge(syndrome, b.psn, now);
                    self.link.tx.touch();
                }
                Received::Ack(pkt.data)
            }
            None if parsed.bth.is_some_and(|b| b.opcode == OPCODE_CNP) => {
                let qp = parsed.bth.map_or(0, |b| b.dest_qp);
                self.cnps_received += 1;
                if let Ok(i) = self.qp_flow.binary_search_by_key(&qp, |(q, _)| *q) {
                    let f = self.qp_flow[i].1;
                    self.flows[f].on_cnp(now);
                    self.link.tx.touch();
                }
                Received::Cnp(pkt.data)
            }
            None => {
                if let (
                    Some(p),
                    Some(b),
                    L3::V4 {
                        ecn: 3, src, dst, ..
                    },
                ) = (self.nic.dcqcn, parsed.bth, parsed.l3)
                {
                    if self.np.marked(b.dest_qp, now, p.cnp_interval) {
                        self.queue_cnp(parsed.src, dst, src, b.dest_qp, p.cnp_dscp, now);
                    }
                }
                if let Some(rx) = self.nic.rx_buffer {
                    self.drain_to(now);
                    if self.occupancy + pkt.len as u64 > rx.size.get() {
                        self.rx_drops += 1;
                        return Received::Dropped(pkt);
                    }
                    self.occupancy += pkt.len as u64;
                    self.admitted += pkt.len as u64;
                    if self.link.cbfc().is_some() {
                        // Credits held until the host has placed the frame.
                        let vc = pkt.meta.queue;
                        self.link.stored(vc, pkt.len);
                        self.credited.push_back((self.admitted, vc, pkt.len));
                    }
                    self.rx_watermark = self.rx_watermark.max(self.occupancy);
                    if self.occupancy > rx.xoff.get() && self.link.xoff_mask() == 0 {
                        self.link.send_xoff(self.nic.pfc_enable);
                    }
                } else if self.link.cbfc().is_some() {
                    // Consumed as it arrives: its credits are free at once.
                    let vc = pkt.meta.queue;
                    self.link.stored(vc, pkt.len);
                    self.link.drained(vc, pkt.len);
                }
                Received::Data(pkt)
            }
        }
    }

    /// A data frame of flow `id` arrived at `now`: counted, and answered by its RC
    /// responder (if any).
    fn deliver(&mut self, pkt: Packet, parsed: &Parsed, now: Time) {
        let id = pkt.meta.flow;
        let Ok(i) = self.receivers.binary_search_by_key(&id, |(i, ..)| *i) else {
            self.misdelivered += 1;
            buffers::give(pkt.data);
            return;
        };
        if id == 0 {
            self.misdelivered += 1;
            buffers::give(pkt.data);
            return;
        }
        let (_, rx, sink) = &mut self.receivers[i];
        if parsed.cut {
            // Trimmed on the way: headers without their payload. Not data; an RC
            // responder answers it as a loss at once.
            rx.trimmed += 1;
            let reply = match (sink.as_mut(), parsed.bth) {
                (Some(sink), Some(b)) => sink
                    .responder
                    .on_trimmed(b.psn)
                    .map(|r| (r, (sink.ack_dscp, sink.ack_priority))),
                _ => None,
            };
            if let Some((r, class)) = reply {
                let qp = parsed.bth.map_or(0, |b| b.dest_qp);
                self.queue_reply(parsed, qp, r, class, now);
            }
            buffers::give(pkt.data);
            return;
        }
        rx.record(&pkt, now, self.rx_wire.of(pkt.len as u64));
        if let (Some(sink), Some(b)) = (sink, parsed.bth) {
            let payload = pkt.len.saturating_sub(sink.overhead);
            let last = matches!(b.opcode, OPCODE_SEND_LAST | OPCODE_SEND_ONLY);
            match self.nic.rx_buffer {
                // Through a receive buffer the host drains: acknowledged once placed.
                Some(buf) if buf.rc_ack == RcAck::Placed => self.placing.push_back(Placing {
                    end: self.admitted,
                    flow: id,
                    psn: b.psn,
                    payload,
                    last,
                    parsed: parsed.clone(),
                }),
                _ => self.respond(id, b.psn, payload, last, parsed, now),
            }
        }
        buffers::give(pkt.data);
    }

    /// Flow `id`'s RC responder takes packet `psn` (`payload` bytes, the last of its
    /// message or not), and answers it (an ACK or NAK, queued) as it says.
    fn respond(&mut self, id: u32, psn: u32, payload: u32, last: bool, parsed: &Parsed, now: Time) {
        let Ok(i) = self.receivers.binary_search_by_key(&id, |(i, ..)| *i) else {
            return;
        };
        let (_, rx, sink) = &mut self.receivers[i];
        let Some(sink) = sink else { return };
        let d = sink.responder.on_packet(psn, payload, last);
        rx.record_delivered(d.bytes, now);
        let qp = parsed.bth.map_or(0, |b| b.dest_qp);
        let reply = d.reply.map(|r| (r, (sink.ack_dscp, sink.ack_priority)));
        if let Some((r, sink)) = reply {
            self.queue_reply(parsed, qp, r, sink, now);
        }
    }

    /// Has the NIC no data to send and its link layer nothing outstanding (what it may
    /// still send is link upkeep: periodic credit updates)?
    pub fn settled(&self) -> bool {
        self.link.settled() && self.next_data_start(self.now).is_none()
    }

    /// Earliest time a frame could start, given the state now.
    pub fn next_transmit(&self) -> Option<Time> {
        self.link.tx.next_start(|| self.compute_next_transmit())
    }

    // Kept out of line: `next_transmit` is called far more often than it computes, and
    // its cached path should not pay this function's register saves.
    #[inline(never)]
    fn compute_next_transmit(&self) -> Option<Time> {
        let free = self.link.tx.free_from(self.now)?;
        let link_control = self.link.control_due().map(|t| t.max(free));
        if link_control == Some(free) {
            return link_control;
        }
        let best = self.next_data_start(free);
        match (link_control, best) {
            (Some(c), Some(b)) => Some(c.min(b)),
            (c, b) => c.or(b),
        }
    }

    /// The first time at or after `free` a data frame could start: a control frame of the
    /// host's, a TCP segment, or a flow's next frame.
    #[inline(always)]
    fn next_data_start(&self, free: Time) -> Option<Time> {
        let mut best: Option<Time> = None;
        let mut consider = |t: Time| best = Some(best.map_or(t, |b| b.min(t)));
        if !(self.control.is_empty() && self.tcp_out.is_empty()) {
            for (p, pkt) in self.control.iter().chain(&self.tcp_out) {
                if self.link.may_send(*p, pkt.len) {
                    consider(self.link.resume_at(1 << p, free));
                }
            }
        }
        for f in &self.flows {
            // Without credits for its next frame a flow waits for a CF_Update.
            if !self.credits_for(f) {
                continue;
            }
            if let Some(t) = self
                .link
                .first_start(free, 1 << f.spec.priority, |t| f.ready_at(t))
            {
                consider(t);
            }
        }
        best
    }

    /// The frame to start at `now`, if the transmitter is free.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        self.now = self.now.max(now);
        self.link.tx.touch();
        if !self.link.tx.idle_at(now) {
            return None;
        }
        if self.link.control_due_by(now) {
            let buf = buffers::take(lossless_pipeline::wire::pfc::PFC_FRAME_HELD);
            if let Some(sent) = self.link.poll_control(now, buf) {
                return Some(sent.pkt);
            }
        }
        let paused = self.link.paused_mask(now);
        // The oldest control frame whose priority may send.
        if let Some(i) = first_sendable(&self.control, paused, &self.link) {
            let (p, mut pkt) = self.control.remove(i).expect("found");
            if !self.link.start_data(now, &mut pkt, p) {
                self.tx_discarded(pkt);
                return self.poll_transmit(now);
            }
            return Some(pkt);
        }
        // Then the TCP stack's frames, oldest first.
        if let Some(i) = first_sendable(&self.tcp_out, paused, &self.link) {
            let (p, mut pkt) = self.tcp_out.remove(i).expect("found");
            let sent = self.link.start_data(now, &mut pkt, p);
            self.refill_tcp(now);
            if !sent {
                self.tx_discarded(pkt);
                return self.poll_transmit(now);
            }
            return Some(pkt);
        }
        // Round robin from the flow after the last one served (`rr` < n; no division).
        let n = self.flows.len();
        let mut i = self.rr;
        for _ in 0..n {
            if i >= n {
                i = 0;
            }
            let f = &self.flows[i];
            if paused & (1 << f.spec.priority) == 0
                && f.ready_at(now) == Some(now)
                && self.credits_for(f)
            {
                let start = self.start_time(now, i);
                let buf = buffers::take(self.flows[i].header_len());
                let mut pkt = self.flows[i].take(start, buf);
                self.rr = if i + 1 == n { 0 } else { i + 1 };
                if !self
                    .link
                    .start_data(start, &mut pkt, self.flows[i].spec.priority)
                {
                    self.tx_discarded(pkt);
                    return self.poll_transmit(now);
                }
                return Some(pkt);
            }
            i += 1;
        }
        None
    }

    /// A frame LLR dropped instead of sending (initialising or flushed, action
    /// `discard`): lost as a wire loss would lose it.
    fn tx_discarded(&mut self, pkt: Packet) {
        buffers::give(pkt.data);
    }

    /// Has the link credits for flow `f`'s next frame (always, without CBFC)?
    #[inline]
    fn credits_for(&self, f: &FlowTx) -> bool {
        !self.link.gates_data()
            || f.next_len()
                .is_some_and(|l| self.link.may_send(f.spec.priority, l))
    }

    /// When the first frame's credits waiting in the receive buffer are freed (its bytes
    /// placed): None when none wait or the host does not read.
    fn next_credit_free(&self) -> Option<Time> {
        let (end, ..) = *self.credited.front()?;
        let rx = self.nic.rx_buffer?;
        if rx.drain.bps() == 0 {
            return None;
        }
        let left = end.saturating_sub(self.placed);
        Some(self.occupancy_at + rx.drain.time_for_bytes_ceil(left))
    }

    /// Free the credits of the frames whose bytes the host has placed by now.
    fn free_placed_credits(&mut self) {
        while let Some(&(end, vc, len)) = self.credited.front().filter(|c| c.0 <= self.placed) {
            self.credited.pop_front();
            self.link.drained(vc, len);
            let _ = end;
        }
    }

    /// When flow `i`'s frame polled at `now` starts: `now`, or with a catch-up window the
    /// earliest time in it that the transmitter, the flow's pattern and its priority's
    /// pauses allow.
    #[inline]
    fn start_time(&self, now: Time, i: usize) -> Time {
        let f = &self.flows[i];
        let lo = self.link.earliest_start(now, 1 << f.spec.priority);
        if lo == now {
            return now;
        }
        f.ready_at(lo).filter(|t| *t <= now).unwrap_or(now)
    }

    /// Next internal deadline: XON of the receive buffer, PFC refresh, the next frame.
    pub fn poll_timeout(&self) -> Option<Time> {
        let mut best = self.link.poll_timeout();
        // While XOFF is held, the drain (if any) brings the buffer under the XON level.
        let draining = self
            .nic
            .rx_buffer
            .filter(|rx| rx.drain.bps() > 0 && self.link.xoff_mask() != 0);
        if let Some(rx) = draining {
            let above = (self.occupancy + 1).saturating_sub(rx.xon.get());
            let t = self.occupancy_at + rx.drain.time_for_bytes_ceil(above);
            best = Some(best.map_or(t, |b| b.min(t)));
        }
        if let Some(t) = self.next_transmit() {
            best = Some(best.map_or(t, |b| b.min(t)));
        }
        if let Some(t) = self.next_placed() {
            best = Some(best.map_or(t, |b| b.min(t)));
        }
        if let Some(t) = self.next_credit_free() {
            best = Some(best.map_or(t, |b| b.min(t)));
        }
        // RC local ACK timers, ranks that have yet to start, the TCP stack's timers.
        let timers = self
            .flows
            .iter()
            .filter_map(FlowTx::rc_deadline)
            .chain(self.tcp_wake);
        for t in timers.chain(self.ranks.iter().filter_map(Rank::wake_at)) {
            best = Some(best.map_or(t, |b| b.min(t)));
        }
        best
    }

    /// Act on deadlines due at `now`: PFC refresh, XON of the receive buffer, RC local ACK
    /// timeouts.
    pub fn handle_timeout(&mut self, now: Time) {
        self.now = self.now.max(now);
        self.link.handle_timeout(now);
        for f in &mut self.flows {
            if f.rc_deadline().is_some_and(|t| t <= now) {
                f.on_timer(now);
                self.link.tx.touch();
            }
        }
        let rank_due = self
            .ranks
            .iter()
            .any(|r| r.wake_at().is_some_and(|t| t <= now));
        // A rank that posts on TCP connections needs the stack run to send.
        if rank_due && self.progress_ranks(now) && self.tcp.is_some() {
            self.run_tcp(None, now);
        }
        if self.tcp_wake.is_some_and(|t| t <= now) {
            self.run_tcp(None, now);
        }
        if let Some(rx) = self.nic.rx_buffer {
            self.drain_to(now);
            if self.link.xoff_mask() != 0 && self.occupancy < rx.xon.get() {
                self.link.send_xon(self.nic.pfc_enable);
            }
            if self.credited.front().is_some_and(|c| c.0 <= self.placed) {
                self.free_placed_credits();
            }
            if self.placing.front().is_some_and(|p| p.end <= self.placed) {
                self.place(now);
                self.link.tx.touch();
                self.progress_ranks(now);
            }
        }
    }

    /// From `now` on, the host's software drains its receive buffer at `rate` (0: it
    /// stops reading, so the NIC holds its XOFF and refreshes it: a pause storm). No-op
    /// without a receive buffer.
    pub fn set_drain(&mut self, rate: Rate, now: Time) {
        self.drain_to(now);
        self.occupancy_at = self.occupancy_at.max(now);
        if let Some(rx) = &mut self.nic.rx_buffer {
            rx.drain = rate;
        }
        self.link.tx.touch();
    }

    /// The switch port's receiver has the credits `peer` gives (CBFC's link init); no-op
    /// on a NIC without CBFC.
    pub fn set_peer_credits(&mut self, peer: &CbfcSetup) {
        if self.link.cbfc().is_some() {
            self.link.enable_cbfc(self.nic.cbfc, peer);
        }
    }

    /// Bring the link up or down; down forgets the pauses the peer had asked for.
    pub fn set_link(&mut self, up: bool, now: Time) {
        self.link.set_link(up, now);
    }

    /// Enable or disable the transmitter (frames wait while disabled).
    pub fn set_tx_enabled(&mut self, enabled: bool) {
        self.link.tx.set_enabled(enabled);
    }

    /// Time priority `p` has been paused up to `now`.
    pub fn paused_time(&self, p: usize, now: Time) -> Time {
        self.link.paused_time(p, now)
    }

    /// Time the transmitter was busy before `t` (at or after the latest `poll_transmit`).
    pub fn busy_time(&self, t: Time) -> Time {
        self.link.tx.busy_time(t)
    }

    /// Have all flows sent everything they will send, and every rank started? (A rank
    /// that has started posts as messages arrive; while it waits, its peers are busy.)
    pub fn flows_done(&self, now: Time) -> bool {
        self.flows.iter().all(|f| f.finished(now))
            && self.ranks.iter().all(|r| r.wake_at().is_none())
            && self.tcp.as_ref().is_none_or(|t| t.done())
            && self.tcp_out.is_empty()
    }
}

/// The oldest frame of `queue` whose priority is not `paused` and that the link has
/// credits for.
#[inline]
fn first_sendable(queue: &VecDeque<(u8, Packet)>, paused: u8, link: &LinkLayer) -> Option<usize> {
    if queue.is_empty() {
        return None;
    }
    queue
        .iter()
        .position(|(p, pkt)| paused & (1 << p) == 0 && link.may_send(*p, pkt.len))
}

impl Node for Host {
    fn receive(&mut self, _port: usize, pkt: Packet, now: Time) {
        let mut parsed = Parsed::default();
        match self.accept(pkt, now, &mut parsed) {
            Received::Data(pkt) if self.tcp.is_some() && matches!(parsed.l4, L4::Tcp { .. }) => {
                self.deliver_tcp(pkt, now);
            }
            Received::Data(pkt) => {
                self.deliver(pkt, &parsed, now);
                self.progress_ranks(now);
            }
            Received::Ack(buf) => {
                buffers::give(buf);
                self.progress_ranks(now);
            }
            Received::Pfc(buf) | Received::Cnp(buf) => buffers::give(buf),
            Received::Dropped(pkt) => {
                self.dropped += 1;
                buffers::give(pkt.data);
            }
            Received::BadFcs(pkt) => buffers::give(pkt.data),
        }
    }

    fn poll_due(&mut self, now: Time, emit: &mut dyn FnMut(usize, Packet)) {
        self.handle_timeout(now);
        while self.next_transmit().is_some_and(|t| t <= now) {
            match self.poll_transmit(now) {
                Some(pkt) => emit(0, pkt),
                None => break,
            }
        }
    }

    fn poll_timeout(&mut self) -> Option<Time> {
        Host::poll_timeout(self)
    }

    /// `poll_timeout` reads the transmitter's kept next start (dropped by every change to
    /// the sending side, RC timers included, and computed again by `poll_timeout`), and
    /// besides it the receive buffer's drain, the ranks' and the TCP stack's timers. A host
    /// with none of those three whose next start is still kept answers as before.
    fn deadline_unchanged(&self) -> bool {
        self.link.tx.next_start_kept()
            && self.nic.rx_buffer.is_none()
            && self.ranks.is_empty()
            && self.tcp.is_none()
    }

    fn port_speed(&self, _port: usize) -> Rate {
        self.speed()
    }

    fn set_link(&mut self, _port: usize, up: bool, now: Time) {
        Host::set_link(self, up, now);
    }
}
