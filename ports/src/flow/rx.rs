//! A flow's receiver: what arrives, when, and how late.

use hdrhistogram::Histogram;
use lossless_buffer_model::Time;
use lossless_pipeline::Packet;
use std::collections::VecDeque;

/// Latencies above this (about 2.8 hours of virtual time) are recorded as this.
const LATENCY_MAX_PS: u64 = 10_000_000_000_000_000;

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
    /// Trimmed frames received (a switch cut their payload): not in `rx_packets`.
    pub trimmed: u64,
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
    /// last bit arrived in the window. Counts are 32-bit (half the memory of 64: a flow's
    /// histogram spans ~20 k buckets once latencies reach milliseconds); one bucket would
    /// saturate only past 4.29 billion frames of one latency.
    pub latency: Histogram<u32>,
    /// With [`FlowRx::track_wire_time`]: the recent frames, to count bits over wire time.
    wire: Option<WireClock>,
    /// RC: payload bytes delivered in order, once each (whole run).
    pub delivered_bytes: u64,
    /// RC: of those, the ones delivered inside the window.
    window_delivered_bytes: u64,
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

/// Finest step the latency histogram tells apart, ps. Above 2¹⁹ ps (524 ns) its steps are
/// those of 3 significant digits from 1 ps (the same buckets, so the same percentiles);
/// below, half a nanosecond. Starting at 1 ps would take twice the buckets for a flow whose
/// latencies reach a millisecond (86 KB instead of 49 KB: most of a fabric's memory).
const LATENCY_STEP_PS: u64 = 512;

/// An empty latency histogram: 3 significant digits, [`LATENCY_STEP_PS`] at the bottom,
/// growing as larger values come (see [`record_latency`]).
fn latency_histogram() -> Histogram<u32> {
    let mut h = Histogram::new_with_bounds(LATENCY_STEP_PS, 2 * LATENCY_STEP_PS, 3)
        .expect("valid bounds and significant digits");
    h.auto(true);
    h
}

/// Count one latency of `v` ps. When that grows the histogram, it is copied into an array of
/// exactly its size: hdrhistogram grows through `Vec::resize`, which doubles the array's
/// room when one bucket is added, and these arrays are most of a large fabric's memory. A
/// copy is a memcpy, once per added bucket; the counts are untouched.
fn record_latency(h: &mut Histogram<u32>, v: u64) {
    let buckets = h.distinct_values();
    if h.record(v).is_err() {
        // Only a count overflowing u32 gets here: the bucket stays full.
        h.saturating_record(v);
    }
    if h.distinct_values() != buckets {
        *h = h.clone();
    }
}

impl FlowRx {
    /// A receiver measuring throughput and latency over `[from, to]`.
    pub fn new(from: Time, to: Time) -> FlowRx {
        FlowRx {
            rx_packets: 0,
            rx_bytes: 0,
            reordered: 0,
            trimmed: 0,
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
            latency: latency_histogram(),
            wire: None,
            delivered_bytes: 0,
            window_delivered_bytes: 0,
        }
    }

    /// RC: `bytes` of payload were delivered in order at `now` (what goodput counts).
    pub fn record_delivered(&mut self, bytes: u64, now: Time) {
        self.delivered_bytes += bytes;
        let (from, to) = self.window;
        if now >= from && now <= to {
            self.window_delivered_bytes += bytes;
        }
    }

    /// RC goodput in bits/s: unique payload delivered in order inside the window, over the
    /// same interval as [`Self::throughput_bps`].
    pub fn goodput_bps(&self, running_at: Option<Time>) -> f64 {
        match self.interval(running_at) {
            Some(t) if t.as_ps() > 0 => self.window_delivered_bytes as f64 * 8.0 / t.as_secs_f64(),
            _ => 0.0,
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

    /// Count a frame of this flow whose last bit arrived at `now`, `wire` after its first
    /// (its wire time at the link's speed).
    pub fn record(&mut self, pkt: &Packet, now: Time, wire: Time) {
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
        record_latency(&mut self.latency, lat.as_ps().clamp(1, LATENCY_MAX_PS));
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
mod histogram_tests {
    use super::*;

    /// From 2¹⁹ ps up, the coarser-bottomed histogram answers every percentile exactly as
    /// one from 1 ps does; below, within one step.
    #[test]
    fn the_latency_histogram_matches_one_from_1_ps_above_524_ns() {
        let mut fine: Histogram<u32> = Histogram::new(3).expect("valid");
        let (mut ours, mut low) = (latency_histogram(), latency_histogram());
        let mut fine_low: Histogram<u32> = Histogram::new(3).expect("valid");
        // hdrhistogram growing by itself, from the same bottom: the same buckets.
        let mut grown: Histogram<u32> =
            Histogram::new_with_bounds(LATENCY_STEP_PS, 2 * LATENCY_STEP_PS, 3).expect("valid");
        grown.auto(true);
        let mut x = 5u64;
        for _ in 0..50_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = (1 << 19) + (x >> 20) % 3_000_000_000; // 524 ns … 3 ms
            fine.record(v).expect("auto-resizing");
            record_latency(&mut ours, v);
            grown.record(v).expect("auto-resizing");
            let small = (x >> 40) % (1 << 19);
            fine_low.record(small).expect("auto-resizing");
            record_latency(&mut low, small);
        }
        for q in [0.0, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0] {
            assert_eq!(
                ours.value_at_quantile(q),
                fine.value_at_quantile(q),
                "q {q}"
            );
            assert_eq!(ours.value_at_quantile(q), grown.value_at_quantile(q));
            let (a, b) = (low.value_at_quantile(q), fine_low.value_at_quantile(q));
            assert!(a.abs_diff(b) < LATENCY_STEP_PS, "q {q}: {a} vs {b}");
        }
        assert_eq!(ours.len(), fine.len());
        assert_eq!(
            ours.distinct_values(),
            grown.distinct_values(),
            "as many buckets"
        );
        assert_eq!((ours.min(), ours.max()), (grown.min(), grown.max()));
    }
}
