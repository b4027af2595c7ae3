//! A flow's sender: when its host may start the next frame, and the frame.

use super::{FlowSpec, Limit, Messages, Pattern, RcFlow, Transport, STREAM_DEPTH};
use crate::dcqcn::ReactionPoint;
use crate::rc::Requester;
use lossless_buffer_model::{Rate, Time};
use lossless_pipeline::wire::build::{BuildError, FrameSpec};
use lossless_pipeline::wire::rocev2;
use lossless_pipeline::Packet;

/// Sender state of one flow.
#[derive(Clone, Debug)]
pub struct FlowTx {
    /// Configuration.
    pub spec: FlowSpec,
    template: Vec<u8>,
    /// Where the BTH starts in the template (RoCEv2 flows).
    bth_offset: Option<usize>,
    next_slot: Time,
    /// Frames sent.
    pub tx_packets: u64,
    /// Bytes sent (FCS included).
    pub tx_bytes: u64,
    /// CBR slots skipped because the NIC could not send in them.
    pub skipped_slots: u64,
    /// First bit of the first frame left the NIC.
    pub first_tx: Option<Time>,
    /// DCQCN reaction point of this queue pair (RoCEv2 flows of a DCQCN NIC).
    pub dcqcn: Option<ReactionPoint>,
    /// With DCQCN below line rate: no frame before this (the rate limiter).
    paced_until: Time,
    /// The RC requester of this queue pair (RC flows).
    pub rc: Option<Requester>,
}

impl FlowTx {
    /// Prepare a flow: builds its header template.
    pub fn new(spec: FlowSpec) -> Result<FlowTx, BuildError> {
        let mut template = Vec::new();
        spec.headers.write(&mut template)?;
        let bth_offset = spec.headers.bth.map(|_| template.len() - rocev2::BTH_LEN);
        let rc = match &spec.transport {
            Transport::OpenLoop | Transport::Tcp(_) => None,
            Transport::Rc(f) => {
                let mtu = spec.headers.len.saturating_sub(spec.headers.overhead());
                let start_psn = spec.headers.bth.map_or(0, |(_, _, psn)| psn);
                let mut r = Requester::new(f.config, mtu, start_psn);
                match f.messages {
                    Messages::Count { count, size } => {
                        for _ in 0..count {
                            r.post(size, spec.start);
                        }
                    }
                    Messages::Stream { size } => {
                        for _ in 0..STREAM_DEPTH {
                            r.post(size, spec.start);
                        }
                    }
                    Messages::Posted => {}
                }
                Some(r)
            }
        };
        Ok(FlowTx {
            rc,
            next_slot: spec.start,
            spec,
            template,
            bth_offset,
            tx_packets: 0,
            tx_bytes: 0,
            skipped_slots: 0,
            first_tx: None,
            dcqcn: None,
            paced_until: Time::ZERO,
        })
    }

    /// The queue pair number this flow's frames carry in their BTH (RoCEv2), if any.
    pub fn qp(&self) -> Option<u32> {
        self.spec.headers.bth.map(|(_, qp, _)| qp)
    }

    /// A CNP for this flow's queue pair arrived at `now`: DCQCN cuts its rate.
    pub fn on_cnp(&mut self, now: Time) {
        if let Some(rp) = &mut self.dcqcn {
            rp.on_cnp(now);
        }
    }

    /// An RC acknowledgement for this queue pair arrived at `now`: an ACK (AETH `syndrome`
    /// of the ACK class) of every PSN up to `psn`, or a NAK at `psn`.
    pub fn on_acknowledge(&mut self, syndrome: u8, psn: u32, now: Time) {
        let Some(rc) = &mut self.rc else { return };
        if syndrome >> 5 == 0 {
            rc.on_ack(psn, now);
        } else if syndrome == rocev2::SYNDROME_NAK_PSN_SEQ {
            rc.on_nak(psn, now);
        }
        if let Transport::Rc(RcFlow {
            messages: Messages::Stream { size },
            ..
        }) = self.spec.transport
        {
            while rc.outstanding_messages() < STREAM_DEPTH && rc.error_at.is_none() {
                rc.post(size, now);
            }
        }
    }

    /// Post a message of `bytes` payload bytes at `now` (RC flows whose messages are posted
    /// from outside).
    pub fn post(&mut self, bytes: u64, now: Time) {
        if let Some(rc) = &mut self.rc {
            rc.post(bytes, now);
        }
    }

    /// When the RC local ACK timer fires, if armed.
    pub fn rc_deadline(&self) -> Option<Time> {
        self.rc.as_ref().and_then(Requester::deadline)
    }

    /// The RC local ACK timer may have fired by `now`.
    pub fn on_timer(&mut self, now: Time) {
        if let Some(rc) = &mut self.rc {
            rc.on_timeout(now);
        }
    }

    /// Frame length of a packet carrying `payload` bytes.
    fn frame_len(&self, payload: u32) -> u32 {
        (self.spec.headers.overhead() + payload).max(self.spec.headers.min_len())
    }

    /// Length of the next frame, or None when the flow has nothing to send (RC: until an
    /// acknowledgement, a timeout or a new message).
    pub fn next_len(&self) -> Option<u32> {
        if matches!(self.spec.transport, Transport::Tcp(_)) {
            // The host's TCP stack makes this flow's frames.
            return None;
        }
        if let Some(rc) = &self.rc {
            return rc.next_packet().map(|p| self.frame_len(p.payload));
        }
        let full = self.spec.headers.len;
        match self.spec.limit {
            Limit::Unbounded => Some(full),
            Limit::Packets(n) => (self.tx_packets < n).then_some(full),
            Limit::Bytes(b) => {
                let left = b.saturating_sub(self.tx_bytes);
                if left == 0 {
                    None
                } else {
                    // The last frame carries what is left, but never less than the headers.
                    Some((left.min(full as u64) as u32).max(self.spec.headers.min_len()))
                }
            }
        }
    }

    /// Has the flow sent all it will ever send (as of `now`)? An RC flow: every message
    /// acknowledged (or its QP in error), and none to come. A TCP flow's generator never
    /// sends (its host's stack says when it is done).
    pub fn finished(&self, now: Time) -> bool {
        if self.spec.stop.is_some_and(|s| now >= s) {
            return true;
        }
        match (&self.rc, &self.spec.transport) {
            (Some(rc), Transport::Rc(f)) => {
                rc.error_at.is_some()
                    || (rc.idle() && !matches!(f.messages, Messages::Stream { .. }))
            }
            _ => self.next_len().is_none(),
        }
    }

    /// Earliest time ≥ `now` at which the pattern allows the next frame, ignoring pause
    /// and the NIC's transmitter; None if the flow is done (for good).
    pub fn ready_at(&self, now: Time) -> Option<Time> {
        self.next_len()?;
        let t = match self.spec.pattern {
            Pattern::Greedy => now.max(self.spec.start),
            Pattern::Cbr { .. } => now.max(self.next_slot),
            Pattern::OnOff { on, off, rate } => {
                let base = match rate {
                    Some(_) => now.max(self.next_slot),
                    None => now.max(self.spec.start),
                };
                let period = on + off;
                let phase = Time((base - self.spec.start).as_ps() % period.as_ps().max(1));
                if phase < on {
                    base
                } else {
                    base + (period - phase)
                }
            }
        };
        let t = match &self.dcqcn {
            Some(rp) if rp.limited() => t.max(self.paced_until),
            _ => t,
        };
        match self.spec.stop {
            Some(s) if t >= s => None,
            _ => Some(t),
        }
    }

    /// Slots of the grid `a, a + iv, …` before `b` that the pattern offers: all of them, or
    /// for an on/off flow those in its on periods.
    fn offered_slots(&self, a: Time, b: Time, iv: Time) -> u64 {
        let iv = iv.as_ps().max(1);
        let Pattern::OnOff { on, off, .. } = self.spec.pattern else {
            return b.saturating_sub(a).as_ps() / iv;
        };
        let (start, period) = (self.spec.start.as_ps(), (on + off).as_ps().max(1));
        let (a, b) = (a.as_ps().max(start), b.as_ps());
        // Grid points below x, counted from a.
        let below = |x: u64| x.saturating_sub(a).div_ceil(iv);
        let mut n = 0;
        let mut p = (a - start) / period;
        while start + p * period < b {
            let lo = (start + p * period).max(a);
            let hi = (start + p * period + on.as_ps()).min(b);
            if hi > lo {
                n += below(hi) - below(lo);
            }
            p += 1;
        }
        n
    }

    pub(super) fn slot_interval(&self, rate: Rate) -> Time {
        rate.wire_time(self.spec.headers.len as u64)
    }

    /// Bytes of headers each of this flow's frames holds (the room its buffers need).
    pub fn header_len(&self) -> usize {
        self.template.len()
    }

    /// Build the next frame into `buf` (reused; room for [`FlowTx::header_len`] bytes, as
    /// `buffers::take` gives) at `now`; `now` must be ≥ `ready_at`.
    pub fn take(&mut self, now: Time, mut buf: Vec<u8>) -> Packet {
        let len = self.next_len().expect("take() on a finished flow");
        let rate = match self.spec.pattern {
            Pattern::Cbr { rate }
            | Pattern::OnOff {
                rate: Some(rate), ..
            } => Some(rate),
            _ => None,
        };
        if let Some(rate) = rate {
            // Non-accumulating: slots that passed unused are skipped and counted (those of
            // an on/off flow's off periods were never offered: they are not counted).
            let iv = self.slot_interval(rate);
            let missed = (now.saturating_sub(self.next_slot)).as_ps() / iv.as_ps().max(1);
            let passed = self.next_slot + Time(iv.as_ps() * missed);
            self.skipped_slots += self.offered_slots(self.next_slot, passed, iv);
            self.next_slot += Time(iv.as_ps() * (missed + 1));
        }
        let plan = self.rc.as_ref().and_then(Requester::next_packet);
        buf.clear();
        buf.extend_from_slice(&self.template);
        if len != self.spec.headers.len {
            // A shorter last frame: fix the IPv4 and UDP length fields.
            let spec = FrameSpec {
                len,
                ..self.spec.headers
            };
            spec.write(&mut buf).expect("len ≥ min_len");
        }
        let seq = match (self.bth_offset, plan) {
            (Some(o), Some(p)) => {
                rocev2::set_psn(&mut buf, o, p.psn as u32);
                rocev2::set_opcode(&mut buf, o, p.opcode);
                rocev2::set_ack_req(&mut buf, o, p.last);
                if let Some(rc) = &mut self.rc {
                    rc.on_sent(&p, now);
                }
                p.psn
            }
            (Some(o), None) => {
                rocev2::set_psn(&mut buf, o, self.tx_packets as u32);
                self.tx_packets
            }
            (None, _) => self.tx_packets,
        };
        if let Some(rp) = &mut self.dcqcn {
            rp.on_sent(now, len as u64);
            if rp.limited() {
                // The next frame leaves one frame time at the current rate later.
                let bits = (len as f64 + 20.0) * 8.0;
                self.paced_until = now + Time((bits * 1e12 / rp.rate_bps()).round() as u64);
            }
        }
        let mut pkt = Packet::new(buf, len);
        pkt.meta.flow = self.spec.id;
        pkt.meta.seq = seq;
        pkt.meta.sent_at = now;
        self.tx_packets += 1;
        self.tx_bytes += len as u64;
        self.first_tx.get_or_insert(now);
        pkt
    }
}
