//! Traffic generators and receivers.
//!
//! A [`FlowTx`] decides when its host may start the next frame (greedy, constant bit rate
//! that does not accumulate missed slots, on/off) and builds it from a header template
//! (real Ethernet/IPv4/UDP/BTH headers; payload never materialized). A [`FlowRx`] counts
//! what arrives: packets, bytes, reordering, one-way latency (hdrhistogram) and completion.

use crate::dcqcn::ReactionPoint;
use hdrhistogram::Histogram;
use lossless_buffer_model::{Rate, Time};
use lossless_pipeline::wire::build::{BuildError, FrameSpec};
use lossless_pipeline::wire::rocev2;
use lossless_pipeline::Packet;
use std::collections::VecDeque;

/// When a flow offers traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Always backlogged: sends whenever its NIC lets it.
    Greedy,
    /// One frame per slot at `rate` (wire time included); slots missed while paused or busy
    /// are skipped and counted, not made up later.
    Cbr {
        /// Offered rate (line-rate bits: frame + preamble + IFG).
        rate: Rate,
    },
    /// Alternating `on` and `off` periods from the flow's start; while on, CBR at `rate`
    /// (or greedy without a rate).
    OnOff {
        /// On period.
        on: Time,
        /// Off period.
        off: Time,
        /// Rate while on (None: greedy).
        rate: Option<Rate>,
    },
}

/// How much a flow sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Until `stop` or the end of the run.
    Unbounded,
    /// Bytes of frames (FCS included); the last frame may be shorter.
    Bytes(u64),
    /// Frames.
    Packets(u64),
}

/// A flow as configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    /// Name for reports.
    pub name: String,
    /// Flow id carried in packet metadata (1-based; 0 marks frames of no flow).
    pub id: u32,
    /// Header template: addresses, DSCP/ECN, VLAN, ports, BTH (PSN rewritten per frame).
    pub headers: FrameSpec,
    /// Priority the sending NIC queues it on (honours PFC for this priority).
    pub priority: u8,
    /// Offered pattern.
    pub pattern: Pattern,
    /// Volume.
    pub limit: Limit,
    /// First frame no earlier than this.
    pub start: Time,
    /// No frame starts at or after this.
    pub stop: Option<Time>,
}

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
}

impl FlowTx {
    /// Prepare a flow: builds its header template.
    pub fn new(spec: FlowSpec) -> Result<FlowTx, BuildError> {
        let mut template = Vec::new();
        spec.headers.write(&mut template)?;
        let bth_offset = spec.headers.bth.map(|_| template.len() - rocev2::BTH_LEN);
        Ok(FlowTx {
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

    /// Length of the next frame, or None when the flow has sent everything.
    fn next_len(&self) -> Option<u32> {
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

    /// Has the flow sent all it will ever send (as of `now`)?
    pub fn finished(&self, now: Time) -> bool {
        self.next_len().is_none() || self.spec.stop.is_some_and(|s| now >= s)
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

    fn slot_interval(&self, rate: Rate) -> Time {
        rate.wire_time(self.spec.headers.len as u64)
    }

    /// Build the next frame into `buf` (reused) at `now`; `now` must be ≥ `ready_at`.
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
        if let Some(o) = self.bth_offset {
            rocev2::set_psn(&mut buf, o, self.tx_packets as u32);
        }
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
        pkt.meta.seq = self.tx_packets;
        pkt.meta.sent_at = now;
        self.tx_packets += 1;
        self.tx_bytes += len as u64;
        self.first_tx.get_or_insert(now);
        pkt
    }
}

/// Receiver statistics of one flow.
///
/// Counts (`rx_packets`, `rx_bytes`, reordering, CE, first and last arrival) cover the whole
/// run; throughput and latency cover the measurement window given at construction (the
/// whole run by default).
#[derive(Clone, Debug)]
pub struct FlowRx {
    /// Frames received.
    pub rx_packets: u64,
    /// Bytes received (FCS included).
    pub rx_bytes: u64,
    /// Frames that arrived with a lower sequence number than one already seen.
    pub reordered: u64,
    /// Frames marked CE on the way.
    pub ce_marked: u64,
    /// Last bit of the first frame received.
    pub first_rx: Option<Time>,
    /// Last bit of the latest frame received.
    pub last_rx: Option<Time>,
    /// The longest wait between two frames of the flow (last bit to last bit): when it
    /// began (the earlier frame's arrival) and how long it lasted. A victim of a pause
    /// shows its stall here.
    pub longest_gap: Option<(Time, Time)>,
    highest_seq: Option<u64>,
    /// The measurement window `[from, to]`.
    window: (Time, Time),
    /// Frame bits received inside the window: a frame straddling an edge counts for the
    /// part of its wire time inside.
    window_bits: f64,
    /// First bit of the first frame received.
    first_bit: Option<Time>,
    /// Exact smallest one-way latency in the window (the histogram keeps 3 significant
    /// digits).
    pub latency_min: Option<Time>,
    /// Exact largest one-way latency in the window.
    pub latency_max: Option<Time>,
    /// One-way latency (first bit sent → last bit received) in picoseconds, of frames whose
    /// last bit arrived in the window.
    pub latency: Histogram<u64>,
    /// With [`FlowRx::track_wire_time`]: the recent frames, to count bits over wire time.
    wire: Option<WireClock>,
}

/// The frames of the last `horizon` of arrivals (first bit, last bit, bits), and the bits
/// of all earlier ones: enough to say how many bits had arrived by any time at most
/// `horizon` before the latest arrival, each frame's bits spread over its wire time.
#[derive(Clone, Debug)]
struct WireClock {
    horizon: Time,
    settled: u64,
    recent: VecDeque<(Time, Time, u64)>,
}

impl Default for FlowRx {
    fn default() -> Self {
        FlowRx::new(Time::ZERO, Time::MAX)
    }
}

impl FlowRx {
    /// A receiver measuring throughput and latency over `[from, to]`.
    pub fn new(from: Time, to: Time) -> FlowRx {
        FlowRx {
            rx_packets: 0,
            rx_bytes: 0,
            reordered: 0,
            ce_marked: 0,
            first_rx: None,
            last_rx: None,
            longest_gap: None,
            highest_seq: None,
            window: (from, to),
            window_bits: 0.0,
            first_bit: None,
            latency_min: None,
            latency_max: None,
            // 1 ps to 10^16 ps (about 2.8 hours of virtual time), 3 significant digits.
            latency: Histogram::new_with_bounds(1, 10_000_000_000_000_000, 3)
                .expect("valid bounds"),
            wire: None,
        }
    }

    /// Keep what [`FlowRx::bits_by`] needs for times up to `horizon` before the latest
    /// arrival (a frame's wire time at most: the largest frame of the link).
    pub fn track_wire_time(&mut self, horizon: Time) {
        self.wire = Some(WireClock {
            horizon,
            settled: 0,
            recent: VecDeque::new(),
        });
    }

    /// Frame bits received by `t`, each frame's bits spread evenly over its wire time, so
    /// that the bits between two times never exceed what the link can carry in between.
    /// Exact for `t` no more than the tracking horizon before the latest arrival (frames
    /// still on the wire at `t` end within it); 0 without [`FlowRx::track_wire_time`].
    pub fn bits_by(&self, t: Time) -> f64 {
        let Some(w) = &self.wire else { return 0.0 };
        let partial: f64 = w
            .recent
            .iter()
            .map(|&(first, last, bits)| {
                if last <= t {
                    bits as f64
                } else if first < t {
                    bits as f64 * (t - first).as_ps() as f64 / (last - first).as_ps() as f64
                } else {
                    0.0
                }
            })
            .sum();
        w.settled as f64 + partial
    }

    /// Count a frame of this flow whose last bit arrived at `now` over a link of `speed`.
    pub fn record(&mut self, pkt: &Packet, now: Time, speed: Rate) {
        let m = &pkt.meta;
        self.rx_packets += 1;
        self.rx_bytes += pkt.len as u64;
        self.first_rx.get_or_insert(now);
        if let Some(last) = self.last_rx {
            let gap = now.saturating_sub(last);
            if self.longest_gap.is_none_or(|(_, g)| gap > g) {
                self.longest_gap = Some((last, gap));
            }
        }
        self.last_rx = Some(now);
        match self.highest_seq {
            Some(h) if m.seq < h => self.reordered += 1,
            _ => self.highest_seq = Some(m.seq),
        }
        if m.ecn == 3 {
            self.ce_marked += 1;
        }
        let (from, to) = self.window;
        let wire = speed.wire_time(pkt.len as u64);
        let first_bit = now.saturating_sub(wire);
        self.first_bit.get_or_insert(first_bit);
        if let Some(w) = &mut self.wire {
            w.recent.push_back((first_bit, now, pkt.len as u64 * 8));
            while let Some(&(_, last, bits)) = w.recent.front() {
                if last + w.horizon > now {
                    break;
                }
                w.settled += bits;
                w.recent.pop_front();
            }
        }
        let (a, b) = (first_bit.max(from), now.min(to));
        if a < b {
            let bits = pkt.len as f64 * 8.0;
            self.window_bits += if a == first_bit && b == now {
                bits
            } else {
                bits * (b - a).as_ps() as f64 / wire.as_ps() as f64
            };
        }
        if now < from || now > to {
            return;
        }
        let lat = now.saturating_sub(m.sent_at);
        self.latency_min = Some(self.latency_min.map_or(lat, |x| x.min(lat)));
        self.latency_max = Some(self.latency_max.map_or(lat, |x| x.max(lat)));
        // Saturates at the histogram's top instead of failing on absurd values.
        self.latency.saturating_record(lat.as_ps().max(1));
    }

    /// Receive interval, first bit of the first frame to last bit of the last one (so N
    /// back-to-back frames span exactly N wire times), clipped to the window. A flow still
    /// running when the window closed at `t` (`running_at = Some(t)`) is measured to `t`,
    /// so that N flows sharing a link sum to at most its rate.
    pub fn interval(&self, running_at: Option<Time>) -> Option<Time> {
        let (from, to) = self.window;
        let last = match running_at {
            Some(t) => t,
            None => self.last_rx?,
        };
        let (a, b) = (self.first_bit?.max(from), last.min(to));
        (a < b).then(|| b - a)
    }

    /// Average rate in bits/s of frame bytes received over the whole window, up to `end`
    /// (the run's end when the window has none): unlike [`Self::throughput_bps`], the time
    /// the flow received nothing counts, so a stalled or deadlocked flow shows here.
    pub fn window_rate_bps(&self, end: Time) -> f64 {
        let (from, to) = self.window;
        let span = to.min(end).saturating_sub(from);
        if span.as_ps() == 0 {
            return 0.0;
        }
        self.window_bits / span.as_secs_f64()
    }

    /// Throughput in bits/s of frame bytes received in the window over [`Self::interval`].
    pub fn throughput_bps(&self, running_at: Option<Time>) -> f64 {
        match self.interval(running_at) {
            Some(t) if t.as_ps() > 0 => self.window_bits / t.as_secs_f64(),
            _ => 0.0,
        }
    }

    /// Latency at quantile `q` (hdrhistogram, 3 significant digits) clamped to the exact
    /// smallest and largest values, so that min ≤ p50 ≤ p99 ≤ max always holds.
    pub fn latency_at(&self, q: f64) -> Option<Time> {
        let (min, max) = (self.latency_min?, self.latency_max?);
        Some(Time(self.latency.value_at_quantile(q)).clamp(min, max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lossless_pipeline::wire::rocev2::OPCODE_SEND_ONLY;

    fn spec(pattern: Pattern, limit: Limit) -> FlowSpec {
        FlowSpec {
            name: "f".into(),
            id: 0,
            headers: FrameSpec {
                src_mac: [2, 0, 0, 0, 0, 1],
                dst_mac: [2, 0, 0, 0, 0, 2],
                vlan: None,
                src_ip: [198, 18, 0, 1],
                dst_ip: [198, 18, 0, 2],
                dscp: 3,
                ecn: 2,
                src_port: 1,
                dst_port: 2,
                bth: Some((OPCODE_SEND_ONLY, 1, 0)),
                len: 1518,
            },
            priority: 3,
            pattern,
            limit,
            start: Time::ZERO,
            stop: None,
        }
    }

    #[test]
    fn cbr_skips_missed_slots_without_catching_up() {
        let mut f = FlowTx::new(spec(
            Pattern::Cbr {
                rate: Rate::gbps(10),
            },
            Limit::Unbounded,
        ))
        .unwrap();
        let iv = Rate::gbps(10).wire_time(1518);
        assert_eq!(f.ready_at(Time::ZERO), Some(Time::ZERO));
        f.take(Time::ZERO, Vec::new());
        assert_eq!(f.ready_at(Time::ZERO), Some(iv));
        // Paused for 10 slots: the flow sends once, then resumes the grid.
        let late = Time(iv.as_ps() * 11 + 5);
        f.take(late, Vec::new());
        assert_eq!(f.skipped_slots, 10);
        assert_eq!(f.ready_at(late), Some(Time(iv.as_ps() * 12)));
    }

    #[test]
    fn byte_limit_shortens_the_last_frame_and_psn_increments() {
        let mut f = FlowTx::new(spec(Pattern::Greedy, Limit::Bytes(3000))).unwrap();
        let a = f.take(Time::ZERO, Vec::new());
        let b = f.take(Time::ZERO, Vec::new());
        assert_eq!((a.len, b.len), (1518, 1482));
        assert!(f.finished(Time::ZERO));
        let p = lossless_pipeline::parser::parse(&b.data, b.len).unwrap();
        assert_eq!(p.bth.unwrap().psn, 1);
    }

    #[test]
    fn bits_count_over_their_wire_time() {
        let speed = Rate::gbps(100);
        let wire = speed.wire_time(1518); // 123.04 ns
        let mut rx = FlowRx::default();
        rx.track_wire_time(wire);
        let mut f = FlowTx::new(spec(Pattern::Greedy, Limit::Unbounded)).unwrap();
        // Back to back: frame k's last bit at (k + 1) wire times.
        for k in 1..=4u64 {
            let pkt = f.take(Time::ZERO, Vec::new());
            rx.record(&pkt, Time(wire.as_ps() * k), speed);
        }
        let bits = 1518.0 * 8.0;
        let at = |x: f64| rx.bits_by(Time((x * wire.as_ps() as f64) as u64));
        // Within the horizon: 3.5 frames by 3.5 wire times; never more than the link.
        assert!((at(3.5) - 3.5 * bits).abs() < 1e-6);
        assert!((at(4.0) - 4.0 * bits).abs() < 1e-6);
        // Any interval carries at most its length at line rate of frame bits.
        let (a, b) = (at(3.2), at(3.9));
        assert!(b - a <= 0.7 * bits + 1e-6, "{}", b - a);
    }

    #[test]
    fn onoff_counts_only_the_slots_of_its_on_periods() {
        // 10 µs on, 30 µs off at a rate of one slot per 1 µs (so 10 slots per on period).
        let rate = Rate(((1518 + 20) * 8) as u64 * 1_000_000);
        let mut f = FlowTx::new(spec(
            Pattern::OnOff {
                on: Time::from_us(10),
                off: Time::from_us(30),
                rate: Some(rate),
            },
            Limit::Unbounded,
        ))
        .unwrap();
        assert_eq!(f.slot_interval(rate), Time::from_us(1));
        // Every slot of the first on period used, then the next frame at the next on start.
        for k in 0..10 {
            f.take(Time::from_us(k), Vec::new());
        }
        let next = f.ready_at(Time::from_us(10)).unwrap();
        assert_eq!(next, Time::from_us(40));
        f.take(next, Vec::new());
        assert_eq!(f.skipped_slots, 0, "off-period slots are not missed slots");
        // Held from 41 µs to 45.5 µs (a pause): slots 41–44 are missed, 45 is late.
        f.take(Time(45_500_000), Vec::new());
        assert_eq!(f.skipped_slots, 4);
    }

    #[test]
    fn onoff_waits_for_the_next_on_period() {
        let f = FlowTx::new(spec(
            Pattern::OnOff {
                on: Time::from_us(10),
                off: Time::from_us(30),
                rate: None,
            },
            Limit::Unbounded,
        ))
        .unwrap();
        assert_eq!(f.ready_at(Time::from_us(5)), Some(Time::from_us(5)));
        assert_eq!(f.ready_at(Time::from_us(15)), Some(Time::from_us(40)));
    }
}
