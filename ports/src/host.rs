//! A host NIC at the end of a link, sans-IO like the switch.
//!
//! Transmit: the host's flows are served round-robin, one frame per flow in turn; a flow
//! whose priority is paused (PFC honoured, with the NIC's response delay) is skipped.
//! PFC frames the NIC generates leave first. Receive: PFC frames reload per-priority pause
//! timers; data frames are counted and, with a bounded receive buffer drained at `drain`,
//! the NIC sends XOFF when the buffer passes `pfc_xoff` and XON below `pfc_xon` (a slow
//! receiver); past the buffer, frames are dropped and counted.

use crate::dcqcn::{DcqcnParams, NotificationPoint, ReactionPoint};
use crate::flow::FlowTx;
use lossless_buffer_model::pfc::{PauseTimers, PfcGenerator};
use lossless_buffer_model::{Bytes, Rate, Time};
use lossless_pipeline::counters::PortCounters;
use lossless_pipeline::parser::{parse, MacControl, L3};
use lossless_pipeline::wire::build::FrameSpec;
use lossless_pipeline::wire::pfc::{pfc_frame, PFC_FRAME_LEN};
use lossless_pipeline::Packet;
use std::collections::VecDeque;

/// BTH opcode of a RoCEv2 congestion notification packet.
pub const OPCODE_CNP: u8 = 0x81;
/// UDP destination port of RoCEv2.
pub const ROCEV2_PORT: u16 = 4791;
/// Length of a CNP frame: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + 16 reserved bytes +
/// ICRC 4 + FCS 4.
pub const CNP_LEN: u32 = 78;

/// Whether the NIC obeys PFC frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PfcMode {
    /// Stop starting frames of a paused priority (an RDMA NIC).
    Honor,
    /// Ignore PFC (a plain Linux host, a test port).
    Ignore,
}

impl lossless_buffer_model::Named for PfcMode {
    const WORDS: &'static [(&'static str, PfcMode)] = &[
        ("honor", PfcMode::Honor),
        ("honour", PfcMode::Honor),
        ("ignore", PfcMode::Ignore),
    ];
}

/// A bounded receive buffer drained at a fixed rate (a slow receiver).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RxBuffer {
    /// Buffer size; frames beyond it are dropped.
    pub size: Bytes,
    /// Drain rate of the host's software.
    pub drain: Rate,
    /// Send XOFF when the buffer holds more than this.
    pub xoff: Bytes,
    /// Send XON when it holds less than this.
    pub xon: Bytes,
}

/// NIC settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NicConfig {
    /// PFC honoured or ignored.
    pub pfc: PfcMode,
    /// How long after a PFC frame arrives the NIC may still start frames.
    pub pfc_response: Time,
    /// Optional bounded receive buffer (None: unlimited, frames consumed at once).
    pub rx_buffer: Option<RxBuffer>,
    /// Priorities the NIC pauses (its own XOFF) and honours pauses for.
    pub pfc_enable: u8,
    /// Quanta carried by the NIC's XOFF frames.
    pub pause_quanta: u16,
    /// DCQCN: rate control of the NIC's RoCEv2 flows (reaction point) and CNPs for the
    /// CE-marked RoCEv2 frames it receives (notification point). None: neither.
    pub dcqcn: Option<DcqcnParams>,
    /// Priority the NIC sends CNPs on (the class its switch gives their DSCP).
    pub cnp_priority: u8,
}

/// What a received frame was.
#[derive(Debug)]
pub enum Received {
    /// A data frame for the host (the engine counts it against its flow).
    Data(Packet),
    /// A PFC frame, acted on or ignored; its buffer is returned for reuse.
    Pfc(Vec<u8>),
    /// Dropped: receive buffer full, or unparseable / other MAC control.
    Dropped(Packet),
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
    /// Link speed.
    pub speed: Rate,
    nic: NicConfig,
    /// The host's flows (sender side).
    pub flows: Vec<FlowTx>,
    rr: usize,
    /// The transmitter is busy until then.
    pub busy_until: Time,
    /// Transmitter enabled.
    pub tx_enabled: bool,
    /// Link up.
    pub link_up: bool,
    /// Pause timers set by PFC frames received.
    pub pause: PauseTimers,
    pfc: PfcGenerator,
    occupancy: u64,
    occupancy_at: Time,
    /// Frame, byte and PFC counters (same shape as a switch port).
    pub counters: PortCounters,
    /// Frames dropped because the receive buffer was full.
    pub rx_drops: u64,
    /// Peak receive-buffer occupancy in bytes.
    pub rx_watermark: u64,
    spare: Vec<Vec<u8>>,
    now: Time,
    /// How far back a late `poll_transmit` may date a frame (0 = exact).
    catch_up: Time,
    /// DCQCN notification point: CNPs sent per queue pair.
    pub np: NotificationPoint,
    /// CNPs waiting to be sent (before data frames).
    cnps: VecDeque<Packet>,
    /// CNPs received for this NIC's queue pairs.
    pub cnps_received: u64,
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
        Host {
            name,
            mac,
            speed,
            pfc: PfcGenerator::new(speed, nic.pause_quanta),
            nic,
            flows,
            rr: 0,
            busy_until: Time::ZERO,
            tx_enabled: true,
            link_up: true,
            pause: PauseTimers::new(speed, nic.pfc_response),
            occupancy: 0,
            occupancy_at: Time::ZERO,
            counters: PortCounters::default(),
            rx_drops: 0,
            rx_watermark: 0,
            spare: Vec::new(),
            now: Time::ZERO,
            catch_up: Time::ZERO,
            np: NotificationPoint::default(),
            cnps: VecDeque::new(),
            cnps_received: 0,
        }
    }

    /// NIC settings.
    pub fn nic(&self) -> &NicConfig {
        &self.nic
    }

    /// Let a late `poll_transmit` date a frame's start up to `window` into the past — never
    /// before the transmitter was free, the flow's slot, or the end of a pause of its
    /// priority — so that a wall-clock engine that wakes late sends a short burst instead of
    /// losing slots. The virtual-time engine polls exactly and leaves this at 0.
    pub fn set_catch_up(&mut self, window: Time) {
        self.catch_up = window;
    }

    /// Give back a frame buffer for reuse.
    pub fn recycle(&mut self, mut b: Vec<u8>) {
        if self.spare.len() < 64 {
            b.clear();
            self.spare.push(b);
        }
    }

    fn drain_to(&mut self, now: Time) {
        if let Some(rx) = self.nic.rx_buffer {
            if now > self.occupancy_at {
                let drained = rx.drain.bytes_in(now - self.occupancy_at);
                self.occupancy = self.occupancy.saturating_sub(drained);
                self.occupancy_at = now;
            }
        }
    }

    /// Receive-buffer occupancy in bytes at `now`.
    pub fn occupancy(&mut self, now: Time) -> u64 {
        self.drain_to(now);
        self.occupancy
    }

    /// The last bit of `pkt` arrived at `now`.
    pub fn receive(&mut self, pkt: Packet, now: Time) -> Received {
        self.now = self.now.max(now);
        self.counters.rx_packets += 1;
        self.counters.rx_bytes += pkt.len as u64;
        let parsed = match parse(&pkt.data, pkt.len) {
            Ok(p) => p,
            Err(_) => return Received::Dropped(pkt),
        };
        match parsed.mac_control {
            Some(MacControl::Pfc { enable, quanta }) => {
                let enable = enable & self.nic.pfc_enable;
                self.counters.count_pfc_received(enable, &quanta);
                if self.nic.pfc == PfcMode::Honor {
                    self.pause.receive(now, enable, &quanta);
                }
                Received::Pfc(pkt.data)
            }
            Some(MacControl::Pause { .. }) => Received::Dropped(pkt),
            None if parsed.bth.is_some_and(|b| b.opcode == OPCODE_CNP) => {
                let qp = parsed.bth.map_or(0, |b| b.dest_qp);
                self.cnps_received += 1;
                for f in self.flows.iter_mut().filter(|f| f.qp() == Some(qp)) {
                    f.on_cnp(now);
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
                    self.rx_watermark = self.rx_watermark.max(self.occupancy);
                    if self.occupancy > rx.xoff.get() && self.pfc.xoff_mask() == 0 {
                        self.pfc.send_xoff(self.nic.pfc_enable);
                    }
                }
                Received::Data(pkt)
            }
        }
    }

    /// Queue a CNP toward the sender of a CE-marked frame: from `ip` to `peer_ip` at
    /// `peer_mac`, for queue pair `qp`, BECN set.
    fn queue_cnp(
        &mut self,
        peer_mac: [u8; 6],
        ip: [u8; 4],
        peer_ip: [u8; 4],
        qp: u32,
        dscp: u8,
        now: Time,
    ) {
        let spec = FrameSpec {
            src_mac: self.mac,
            dst_mac: peer_mac,
            vlan: None,
            src_ip: ip,
            dst_ip: peer_ip,
            dscp,
            ecn: 0,
            src_port: 49_152,
            dst_port: ROCEV2_PORT,
            bth: Some((OPCODE_CNP, qp, 0)),
            len: CNP_LEN,
        };
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        if spec.write(&mut buf).is_err() {
            return;
        }
        // BECN: bit 6 of the BTH's fifth byte (the BTH ends the written headers).
        let becn = buf.len() - 12 + 4;
        buf[becn] |= 0x40;
        let mut pkt = Packet::new(buf, CNP_LEN);
        pkt.meta.sent_at = now;
        self.cnps.push_back(pkt);
    }

    fn paused_mask(&self, t: Time) -> u8 {
        match self.nic.pfc {
            PfcMode::Honor => self.pause.paused_mask(t),
            PfcMode::Ignore => 0,
        }
    }

    /// Earliest time a frame could start, given the state now.
    pub fn next_transmit(&self) -> Option<Time> {
        if !self.link_up || !self.tx_enabled {
            return None;
        }
        let free = self.busy_until.max(self.now);
        if self.pfc.has_pending() {
            return Some(free);
        }
        let mut best: Option<Time> = None;
        if !self.cnps.is_empty() {
            best = Some(match self.nic.pfc {
                PfcMode::Honor => self.pause.resume_at(self.nic.cnp_priority as usize, free),
                PfcMode::Ignore => free,
            });
        }
        for f in &self.flows {
            // The first time the pattern allows a frame and the priority is not paused.
            let mut t = free;
            let t = loop {
                let Some(ready) = f.ready_at(t) else {
                    break None;
                };
                let resume = match self.nic.pfc {
                    PfcMode::Honor => self.pause.resume_at(f.spec.priority as usize, ready),
                    PfcMode::Ignore => ready,
                };
                if resume == ready {
                    break Some(ready);
                }
                t = resume;
            };
            if let Some(t) = t {
                best = Some(best.map_or(t, |b| b.min(t)));
            }
        }
        best
    }

    /// The frame to start at `now`, if the transmitter is free.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        self.now = self.now.max(now);
        if !self.link_up || !self.tx_enabled || self.busy_until > now {
            return None;
        }
        if let Some(req) = self.pfc.take_frame(now) {
            let buf = self.spare.pop().unwrap_or_default();
            self.counters.count_pfc_sent(req.enable, &req.quanta, now);
            let wire = self.speed.wire_time(PFC_FRAME_LEN as u64);
            self.busy_until = now + wire;
            self.counters.tx_busy += wire;
            return Some(pfc_frame(buf, self.mac, req.enable, &req.quanta));
        }
        let paused = self.paused_mask(now);
        if !self.cnps.is_empty() && paused & (1 << self.nic.cnp_priority) == 0 {
            let pkt = self.cnps.pop_front().expect("a CNP");
            self.start_frame(now, pkt.len);
            return Some(pkt);
        }
        let n = self.flows.len();
        for k in 0..n {
            let i = (self.rr + k) % n;
            let f = &self.flows[i];
            if paused & (1 << f.spec.priority) != 0 || f.ready_at(now) != Some(now) {
                continue;
            }
            let start = self.start_time(now, i);
            let buf = self.spare.pop().unwrap_or_default();
            let pkt = self.flows[i].take(start, buf);
            self.rr = (i + 1) % n;
            self.start_frame(start, pkt.len);
            return Some(pkt);
        }
        None
    }

    /// A data frame (or CNP) of `len` bytes starts at `start`: count it, busy the wire.
    fn start_frame(&mut self, start: Time, len: u32) {
        self.counters.tx_packets += 1;
        self.counters.tx_bytes += len as u64;
        let wire = self.speed.wire_time(len as u64);
        self.busy_until = start + wire;
        self.counters.tx_busy += wire;
    }

    /// When flow `i`'s frame polled at `now` starts: `now`, or with a catch-up window the
    /// earliest time in it that the transmitter, the flow's pattern and its priority's
    /// pauses allow.
    fn start_time(&self, now: Time, i: usize) -> Time {
        if self.catch_up == Time::ZERO {
            return now;
        }
        let f = &self.flows[i];
        let mut lo = now.saturating_sub(self.catch_up).max(self.busy_until);
        if self.nic.pfc == PfcMode::Honor {
            lo = lo.max(self.pause.unpaused_since(f.spec.priority as usize, now));
        }
        f.ready_at(lo).filter(|t| *t <= now).unwrap_or(now)
    }

    /// Next internal deadline: XON of the receive buffer, PFC refresh.
    pub fn poll_timeout(&self) -> Option<Time> {
        let mut best = self.pfc.poll_timeout();
        // While XOFF is held, the drain (if any) brings the buffer under the XON level.
        let draining = self
            .nic
            .rx_buffer
            .filter(|rx| rx.drain.bps() > 0 && self.pfc.xoff_mask() != 0);
        if let Some(rx) = draining {
            let above = (self.occupancy + 1).saturating_sub(rx.xon.get());
            let t = self.occupancy_at + rx.drain.time_for_bytes_ceil(above);
            best = Some(best.map_or(t, |b| b.min(t)));
        }
        if let Some(t) = self.next_transmit() {
            best = Some(best.map_or(t, |b| b.min(t)));
        }
        best
    }

    /// Act on deadlines due at `now`.
    pub fn handle_timeout(&mut self, now: Time) {
        self.now = self.now.max(now);
        self.pfc.handle_timeout(now);
        if let Some(rx) = self.nic.rx_buffer {
            self.drain_to(now);
            if self.pfc.xoff_mask() != 0 && self.occupancy < rx.xon.get() {
                self.pfc.send_xon(self.nic.pfc_enable);
            }
        }
    }

    /// Time the transmitter was busy before `t` (at or after the latest `poll_transmit`).
    pub fn busy_time(&self, t: Time) -> Time {
        self.counters.busy_before(t, self.busy_until)
    }

    /// Act on everything due at `now`: deadlines (XON of the receive buffer, PFC refresh),
    /// then every frame the NIC may start by `now`, handed to `emit` (one per call in
    /// virtual time; a catch-up burst in wall-clock time).
    pub fn poll_due(&mut self, now: Time, mut emit: impl FnMut(Packet)) {
        self.handle_timeout(now);
        while self.next_transmit().is_some_and(|t| t <= now) {
            match self.poll_transmit(now) {
                Some(pkt) => emit(pkt),
                None => break,
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
    }

    /// Bring the link up or down; down forgets the pauses the peer had asked for.
    pub fn set_link(&mut self, up: bool, now: Time) {
        self.link_up = up;
        if !up {
            self.pause.clear(now);
        }
    }

    /// Time priority `p` has been paused up to `now`.
    pub fn paused_time(&self, p: usize, now: Time) -> Time {
        self.pause.paused_total(p, now)
    }

    /// Have all flows sent everything they will send?
    pub fn flows_done(&self, now: Time) -> bool {
        self.flows.iter().all(|f| f.finished(now))
    }
}

#[cfg(test)]
mod dcqcn_tests {
    use super::*;
    use crate::dcqcn::DcqcnParams;
    use crate::flow::{FlowSpec, Limit, Pattern};

    fn nic(dcqcn: bool) -> NicConfig {
        NicConfig {
            pfc: PfcMode::Honor,
            pfc_response: Time::ZERO,
            rx_buffer: None,
            pfc_enable: 1 << 3,
            pause_quanta: 0xFFFF,
            dcqcn: dcqcn.then(DcqcnParams::paper),
            cnp_priority: 6,
        }
    }

    fn flow(ecn: u8) -> FlowTx {
        FlowTx::new(FlowSpec {
            name: "f".into(),
            id: 1,
            headers: FrameSpec {
                src_mac: [2, 0, 0, 0, 0, 1],
                dst_mac: [2, 0, 0, 0, 0, 2],
                vlan: None,
                src_ip: [198, 18, 0, 1],
                dst_ip: [198, 18, 0, 2],
                dscp: 3,
                ecn,
                src_port: 49_152,
                dst_port: ROCEV2_PORT,
                bth: Some((crate::flow::OPCODE_SEND_ONLY, 7, 0)),
                len: 1518,
            },
            priority: 3,
            pattern: Pattern::Greedy,
            limit: Limit::Unbounded,
            start: Time::ZERO,
            stop: None,
        })
        .unwrap()
    }

    #[test]
    fn a_marked_frame_brings_back_one_cnp_that_cuts_the_senders_rate() {
        let mut sender = Host::new(
            "a".into(),
            [2, 0, 0, 0, 0, 1],
            Rate::gbps(100),
            nic(true),
            vec![flow(2)],
        );
        let mut receiver = Host::new(
            "r".into(),
            [2, 0, 0, 0, 0, 2],
            Rate::gbps(100),
            nic(true),
            vec![],
        );
        // A CE-marked frame of queue pair 7 (as the switch would have marked it).
        let mut marked = flow(3);
        let pkt = marked.take(Time::ZERO, Vec::new());
        assert!(matches!(
            receiver.receive(pkt, Time::from_us(1)),
            Received::Data(_)
        ));
        let again = marked.take(Time::from_us(2), Vec::new());
        let _ = receiver.receive(again, Time::from_us(2));
        assert_eq!(receiver.np.sent, 1, "one CNP per 50 µs");
        let cnp = receiver
            .poll_transmit(Time::from_us(2))
            .expect("the CNP goes first");
        assert_eq!(cnp.len, CNP_LEN);
        let p = parse(&cnp.data, cnp.len).unwrap();
        let b = p.bth.unwrap();
        assert_eq!((b.opcode, b.dest_qp, b.becn), (OPCODE_CNP, 7, true));
        assert_eq!(p.dst, [2, 0, 0, 0, 0, 1]);
        assert!(matches!(
            p.l3,
            L3::V4 {
                dscp: 48,
                ecn: 0,
                src: [198, 18, 0, 2],
                dst: [198, 18, 0, 1],
                ..
            }
        ));
        // At the sender: α = 1, so the rate halves.
        assert!(matches!(
            sender.receive(cnp, Time::from_us(3)),
            Received::Cnp(_)
        ));
        let rp = sender.flows[0].dcqcn.as_ref().unwrap();
        assert_eq!((rp.cnps, rp.rate_bps()), (1, 50e9));
        assert_eq!(sender.cnps_received, 1);
        // Paced at 50G: two frames 2 × 123.04 ns apart.
        let t0 = Time::from_us(4);
        let _ = sender.poll_transmit(t0).unwrap();
        assert_eq!(sender.next_transmit(), Some(t0 + Time(246_080)));
    }
}
