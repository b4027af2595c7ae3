//! DCQCN (Zhu et al., SIGCOMM 2015) at the NIC: the reaction point's rate machine of a
//! sending queue pair, and the notification point's CNP pacing at a receiver.
//!
//! Reaction point, with current rate R_C, target rate R_T and α:
//! * on a CNP: R_T ← R_C; R_C ← R_C·(1 − α/2); α ← (1 − g)·α + g; the timer and byte
//!   counters restart from 0;
//! * every `alpha_timer` without a CNP: α ← (1 − g)·α;
//! * each time the rate timer expires (every `rate_timer`) or the byte counter passes
//!   `byte_counter` bytes sent, that counter (T or BC) counts one and the rate increases:
//!   - fast recovery while both T and BC are below F: R_C ← (R_T + R_C)/2;
//!   - additive increase once one of them reaches F: R_T ← R_T + R_AI, then as above;
//!   - hyper increase once both have: R_T ← R_T + R_HAI, then as above.
//!
//! R_C and R_T stay between `min_rate` and the line rate. Until its first CNP a flow runs
//! at line rate and its timers are idle.

use lossless_buffer_model::{Rate, Time};

/// DCQCN parameters (the paper's values by default, see [`DcqcnParams::paper`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcqcnParams {
    /// α gain g.
    pub g: f64,
    /// α decays by (1 − g) after this long without a CNP (K, 55 µs).
    pub alpha_timer: Time,
    /// Rate-increase timer period (T, 55 µs).
    pub rate_timer: Time,
    /// Rate-increase byte counter (B, 10 MB).
    pub byte_counter: u64,
    /// Fast-recovery steps (F, 5).
    pub fast_recovery: u32,
    /// Additive increase step R_AI (40 Mb/s).
    pub rai: Rate,
    /// Hyper increase step R_HAI.
    pub rhai: Rate,
    /// Lowest rate a cut may reach.
    pub min_rate: Rate,
    /// Notification point: at most one CNP per queue pair per this interval (N, 50 µs).
    pub cnp_interval: Time,
    /// DSCP of the CNPs the notification point sends (48: traffic class 6 in SONiC's map).
    pub cnp_dscp: u8,
}

// `g` is checked to be in (0, 1] where parameters are read, never NaN: equality is total.
impl Eq for DcqcnParams {}

impl DcqcnParams {
    /// The SIGCOMM 2015 paper's values: g = 1/256, K = T = 55 µs, B = 10 MB, F = 5,
    /// R_AI = 40 Mb/s, CNPs at most every 50 µs. The paper does not fix R_HAI; 10 × R_AI
    /// (400 Mb/s) here. Cuts stop at 100 Mb/s.
    pub fn paper() -> DcqcnParams {
        DcqcnParams {
            g: 1.0 / 256.0,
            alpha_timer: Time::from_us(55),
            rate_timer: Time::from_us(55),
            byte_counter: 10_000_000,
            fast_recovery: 5,
            rai: Rate::mbps(40),
            rhai: Rate::mbps(400),
            min_rate: Rate::mbps(100),
            cnp_interval: Time::from_us(50),
            cnp_dscp: 48,
        }
    }
}

impl Default for DcqcnParams {
    /// The paper's values ([`DcqcnParams::paper`]).
    fn default() -> Self {
        DcqcnParams::paper()
    }
}

/// The reaction point of one sending queue pair.
#[derive(Clone, Debug, PartialEq)]
pub struct ReactionPoint {
    p: DcqcnParams,
    line: f64,
    /// Current rate R_C, bit/s.
    rc: f64,
    /// Target rate R_T, bit/s.
    rt: f64,
    /// α.
    alpha: f64,
    /// Rate-timer expirations since the last CNP.
    t: u32,
    /// Byte-counter expirations since the last CNP.
    bc: u32,
    /// Bytes sent toward the next byte-counter expiration.
    bytes: u64,
    /// Next α decay and next rate-timer expiration (None until the first CNP).
    next_alpha: Option<Time>,
    next_rate: Option<Time>,
    /// CNPs received.
    pub cnps: u64,
}

impl ReactionPoint {
    /// A queue pair on a link of `line` rate, at line rate, α = 1.
    pub fn new(p: DcqcnParams, line: Rate) -> ReactionPoint {
        let line = line.bps() as f64;
        ReactionPoint {
            p,
            line,
            rc: line,
            rt: line,
            alpha: 1.0,
            t: 0,
            bc: 0,
            bytes: 0,
            next_alpha: None,
            next_rate: None,
            cnps: 0,
        }
    }

    /// Current rate R_C, bit/s.
    pub fn rate_bps(&self) -> f64 {
        self.rc
    }

    /// Target rate R_T, bit/s.
    pub fn target_bps(&self) -> f64 {
        self.rt
    }

    /// α.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Is the flow held below line rate?
    pub fn limited(&self) -> bool {
        self.rc < self.line
    }

    fn clamp(&self, r: f64) -> f64 {
        r.clamp(self.p.min_rate.bps() as f64, self.line)
    }

    /// Apply the timers that expired by `now`, in time order.
    pub fn advance(&mut self, now: Time) {
        loop {
            let next = match (self.next_alpha, self.next_rate) {
                (Some(a), Some(r)) => a.min(r),
                (Some(a), None) => a,
                (None, Some(r)) => r,
                (None, None) => return,
            };
            if next > now {
                return;
            }
            if self.next_alpha == Some(next) {
                self.alpha *= 1.0 - self.p.g;
                self.next_alpha = Some(next + self.p.alpha_timer);
            } else {
                self.t += 1;
                self.increase();
                self.next_rate = self.limited().then_some(next + self.p.rate_timer);
                if !self.limited() {
                    // Back at line rate: nothing left to recover; α keeps decaying.
                    self.t = 0;
                    self.bc = 0;
                }
            }
        }
    }

    /// A CNP for this queue pair arrived at `now`.
    pub fn on_cnp(&mut self, now: Time) {
        self.advance(now);
        self.cnps += 1;
        self.rt = self.rc;
        self.rc = self.clamp(self.rc * (1.0 - self.alpha / 2.0));
        self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g;
        self.t = 0;
        self.bc = 0;
        self.bytes = 0;
        self.next_alpha = Some(now + self.p.alpha_timer);
        self.next_rate = Some(now + self.p.rate_timer);
    }

    /// `bytes` were sent at `now` (the byte counter).
    pub fn on_sent(&mut self, now: Time, bytes: u64) {
        self.advance(now);
        if !self.limited() {
            return;
        }
        self.bytes += bytes;
        while self.bytes >= self.p.byte_counter && self.limited() {
            self.bytes -= self.p.byte_counter;
            self.bc += 1;
            self.increase();
        }
    }

    /// One rate-increase event (after T or BC counted it).
    fn increase(&mut self) {
        let f = self.p.fast_recovery;
        if self.t >= f && self.bc >= f {
            self.rt = self.clamp(self.rt + self.p.rhai.bps() as f64);
        } else if self.t >= f || self.bc >= f {
            self.rt = self.clamp(self.rt + self.p.rai.bps() as f64);
        }
        self.rc = self.clamp((self.rt + self.rc) / 2.0);
    }
}

/// The notification point of a receiver: one CNP per queue pair per `cnp_interval` at most.
#[derive(Clone, Debug, Default)]
pub struct NotificationPoint {
    last: std::collections::BTreeMap<u32, Time>,
    /// CNPs generated.
    pub sent: u64,
}

impl NotificationPoint {
    /// A CE-marked frame of queue pair `qp` arrived at `now`: should a CNP go back?
    pub fn marked(&mut self, qp: u32, now: Time, interval: Time) -> bool {
        match self.last.get(&qp) {
            Some(t) if now < *t + interval => false,
            _ => {
                self.last.insert(qp, now);
                self.sent += 1;
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rp() -> ReactionPoint {
        ReactionPoint::new(DcqcnParams::paper(), Rate::gbps(100))
    }

    const G: f64 = 1.0 / 256.0;

    #[test]
    fn a_cnp_cuts_by_half_alpha_and_raises_alpha() {
        let mut r = rp();
        r.on_cnp(Time::ZERO);
        // α = 1: R_C = 100G × (1 − 1/2) = 50G, R_T = 100G; α = (1 − g)·1 + g = 1.
        assert_eq!(
            (r.rate_bps(), r.target_bps(), r.alpha()),
            (50e9, 100e9, 1.0)
        );
        // α decays once per 55 µs without a CNP: two decays by 110 µs.
        r.advance(Time::from_us(110));
        assert!((r.alpha() - (1.0 - G) * (1.0 - G)).abs() < 1e-12);
        // The next CNP cuts by α/2 of the rate at that moment, and R_T takes that rate.
        let before = r.rate_bps();
        let a = r.alpha();
        r.on_cnp(Time::from_us(110));
        assert!((r.rate_bps() - before * (1.0 - a / 2.0)).abs() < 1e-3);
        assert_eq!(r.target_bps(), before);
        assert!((r.alpha() - ((1.0 - G) * a + G)).abs() < 1e-12);
    }

    #[test]
    fn fast_recovery_then_additive_then_hyper_increase() {
        let p = DcqcnParams::paper();
        let mut r = rp();
        r.on_cnp(Time::ZERO); // R_C 50G, R_T 100G
                              // Five timer expirations (T = 1..5): fast recovery halves the gap each time, but the
                              // fifth already counts T = 5 ≥ F: additive, R_T + 40 Mb/s (clamped at line rate).
        let mut rc = 50e9;
        for k in 1..=4 {
            r.advance(Time::from_us(55 * k));
            rc = (100e9 + rc) / 2.0;
            assert!((r.rate_bps() - rc).abs() < 1.0, "step {k}");
            assert_eq!(r.target_bps(), 100e9);
        }
        // From a lower target, the additive step shows: cut again, then count.
        let mut r = ReactionPoint::new(p, Rate::gbps(100));
        r.on_cnp(Time::ZERO);
        r.on_cnp(Time::from_us(1)); // R_T = 50G, R_C = 25G (α stays 1 − tiny)
        let (mut rc, mut rt) = (r.rate_bps(), r.target_bps());
        let t0 = Time::from_us(1);
        for k in 1..=7u64 {
            r.advance(t0 + Time::from_us(55 * k));
            if k >= 5 {
                rt += 40e6; // T ≥ F, BC < F: additive
            }
            rc = (rt + rc) / 2.0;
            assert!((r.target_bps() - rt).abs() < 1.0, "R_T at step {k}");
            assert!((r.rate_bps() - rc).abs() < 1.0, "R_C at step {k}");
        }
        // The byte counter: each 10 MB sent is an event of its own. T = 7 ≥ F, so BC = 1..4
        // are additive; at BC = 5 both have reached F: hyper, R_T + 400 Mb/s.
        let now = t0 + Time::from_us(55 * 7);
        for bc in 1..=5 {
            r.on_sent(now, 10_000_000);
            rt += if bc < 5 { 40e6 } else { 400e6 };
            rc = (rt + rc) / 2.0;
            assert!((r.target_bps() - rt).abs() < 1.0, "R_T at BC = {bc}");
            assert!((r.rate_bps() - rc).abs() < 1.0, "R_C at BC = {bc}");
        }
        // And the next timer event too.
        r.advance(now + Time::from_us(55));
        assert!((r.target_bps() - (rt + 400e6)).abs() < 1.0);
        assert!((r.rate_bps() - (rt + 400e6 + rc) / 2.0).abs() < 1.0);
    }

    #[test]
    fn rates_stay_between_the_floor_and_line_rate() {
        let mut r = rp();
        for k in 0..200 {
            r.on_cnp(Time::from_us(k));
        }
        assert_eq!(r.rate_bps(), 100e6);
        let mut r = rp();
        r.on_cnp(Time::ZERO);
        r.advance(Time::from_ms(100));
        assert_eq!(r.rate_bps(), 100e9);
        assert!(!r.limited());
    }

    #[test]
    fn one_cnp_per_queue_pair_per_interval() {
        let mut np = NotificationPoint::default();
        let iv = Time::from_us(50);
        assert!(np.marked(7, Time::ZERO, iv));
        assert!(!np.marked(7, Time::from_us(49), iv));
        assert!(np.marked(8, Time::from_us(49), iv), "another QP");
        assert!(np.marked(7, Time::from_us(50), iv));
        assert_eq!(np.sent, 3);
    }
}
