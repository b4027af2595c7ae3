//! A host NIC at the end of a link, sans-IO like the switch.
//!
//! Transmit: the host's flows are served round-robin, one frame per flow in turn; a flow
//! whose priority is paused (PFC honoured, with the NIC's response delay) is skipped.
//! PFC frames the NIC generates leave first. Receive: PFC frames reload per-priority pause
//! timers; data frames are counted and, with a bounded receive buffer drained at `drain`,
//! the NIC sends XOFF when the buffer passes `pfc_xoff` and XON below `pfc_xon` (a slow
//! receiver); past the buffer, frames are dropped and counted.

use crate::flow::FlowTx;
use lossless_buffer_model::pfc::{PauseTimers, PfcGenerator};
use lossless_buffer_model::{Bytes, Rate, Time};
use lossless_pipeline::counters::PortCounters;
use lossless_pipeline::parser::{parse, MacControl};
use lossless_pipeline::wire::pfc::{pfc_frame, PFC_FRAME_LEN};
use lossless_pipeline::Packet;

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
}

impl Host {
    /// A host NIC at `speed` with its flows.
    pub fn new(
        name: String,
        mac: [u8; 6],
        speed: Rate,
        nic: NicConfig,
        flows: Vec<FlowTx>,
    ) -> Host {
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
            None => {
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
            self.counters.tx_packets += 1;
            self.counters.tx_bytes += pkt.len as u64;
            let wire = self.speed.wire_time(pkt.len as u64);
            self.busy_until = start + wire;
            self.counters.tx_busy += wire;
            return Some(pkt);
        }
        None
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
        if let (Some(rx), true) = (self.nic.rx_buffer, self.pfc.xoff_mask() != 0) {
            // When the drain brings the buffer under the XON level.
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
