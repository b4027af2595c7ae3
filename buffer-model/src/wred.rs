//! WRED / ECN marking per queue (SONiC `WRED_PROFILE`).
//!
//! For queue depth q (bytes): p = 0 at q ≤ min; p = max_prob·(q − min)/(max − min) up to
//! max; p = 1 above max. A hit marks ECT packets CE where ECN is enabled for their colour,
//! drops non-ECT packets where WRED is enabled for their colour, and never drops lossless
//! traffic (it only marks).

use crate::units::Bytes;
use rand_core::Rng;

/// Packet colour (set by policers/ACLs; green unless something says otherwise).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Color {
    /// In profile.
    #[default]
    Green,
    /// Exceeding.
    Yellow,
    /// Violating.
    Red,
}

/// Drop/mark probability at Kmax, %, of a colour whose profile does not say.
pub const DEFAULT_MAX_PROBABILITY: u8 = 100;

/// When the marking decision is taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MarkAt {
    /// On arrival, against the queue depth the packet finds.
    #[default]
    Enqueue,
    /// On departure, against the depth the packet leaves behind (faster feedback).
    Dequeue,
}

impl crate::named::Named for MarkAt {
    const WORDS: &'static [(&'static str, MarkAt)] =
        &[("enqueue", MarkAt::Enqueue), ("dequeue", MarkAt::Dequeue)];
}

/// One colour's RED curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Curve {
    /// Kmin: no marking at or below this depth.
    pub min: Bytes,
    /// Kmax: everything is hit above this depth.
    pub max: Bytes,
    /// Pmax in percent (0–100), reached at `max`.
    pub max_probability: u8,
}

impl Curve {
    /// Hit probability at depth `q` as (numerator, denominator) in exact integers.
    fn probability(&self, q: u64) -> (u128, u128) {
        let (min, max) = (self.min.get(), self.max.get());
        if q <= min {
            (0, 1)
        } else if q > max {
            (1, 1)
        } else {
            (
                self.max_probability as u128 * (q - min) as u128,
                100 * (max - min).max(1) as u128,
            )
        }
    }

    /// Hit probability at depth `q` as a float (for reports and tests).
    pub fn probability_f64(&self, q: Bytes) -> f64 {
        let (n, d) = self.probability(q.get());
        n as f64 / d as f64
    }
}

/// A colour's settings in a profile.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ColorPolicy {
    /// The RED curve, if configured for this colour.
    pub curve: Option<Curve>,
    /// Drop non-ECT packets on a hit (SONiC `wred_<colour>_enable`).
    pub wred: bool,
    /// Mark ECT packets CE on a hit (from the profile's `ecn` mode).
    pub ecn: bool,
}

/// A queue's WRED/ECN profile.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WredProfile {
    /// Green, yellow, red.
    pub colors: [ColorPolicy; 3],
    /// Decide at enqueue or dequeue.
    pub mark_at: MarkAt,
}

/// What WRED does to one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Leave it alone.
    Pass,
    /// Set ECN to CE.
    Mark,
    /// Drop it (never for lossless traffic).
    Drop,
}

impl WredProfile {
    /// Decide for a packet of `color` at queue depth `depth`; `ect` tells whether it is ECN
    /// capable (ECT(0), ECT(1) or CE), `lossless` whether it belongs to a lossless class.
    pub fn decide<R: Rng + ?Sized>(
        &self,
        color: Color,
        depth: Bytes,
        ect: bool,
        lossless: bool,
        rng: &mut R,
    ) -> Verdict {
        let policy = &self.colors[color as usize];
        let Some(curve) = policy.curve else {
            return Verdict::Pass;
        };
        let acts = (ect && policy.ecn) || (!ect && policy.wred && !lossless);
        if !acts {
            return Verdict::Pass;
        }
        let (num, den) = curve.probability(depth.get());
        if num == 0 {
            return Verdict::Pass;
        }
        let hit = num >= den || (rng.next_u32() as u128) * den < num << 32;
        match (hit, ect && policy.ecn) {
            (false, _) => Verdict::Pass,
            (true, true) => Verdict::Mark,
            (true, false) => Verdict::Drop,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn profile(pmax: u8) -> WredProfile {
        let mut p = WredProfile::default();
        p.colors[0] = ColorPolicy {
            curve: Some(Curve {
                min: Bytes(100_000),
                max: Bytes(400_000),
                max_probability: pmax,
            }),
            wred: false,
            ecn: true,
        };
        p
    }

    fn marked_fraction(p: &WredProfile, depth: u64) -> f64 {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let n = 200_000;
        let m = (0..n)
            .filter(|_| p.decide(Color::Green, Bytes(depth), true, true, &mut rng) == Verdict::Mark)
            .count();
        m as f64 / n as f64
    }

    #[test]
    fn ecn_curve_at_min_midpoint_and_max() {
        let p = profile(20);
        assert_eq!(
            marked_fraction(&p, 100_000),
            0.0,
            "at Kmin nothing is marked"
        );
        let mid = marked_fraction(&p, 250_000);
        assert!((mid - 0.10).abs() < 0.005, "midpoint ≈ Pmax/2: {mid}");
        let at_max = marked_fraction(&p, 400_000);
        assert!((at_max - 0.20).abs() < 0.005, "at Kmax ≈ Pmax: {at_max}");
        assert_eq!(marked_fraction(&p, 400_001), 1.0, "above Kmax everything");
        let curve = p.colors[0].curve.unwrap();
        assert_eq!(curve.probability_f64(Bytes(250_000)), 0.1);
    }

    #[test]
    fn non_ect_dropped_only_where_wred_enabled_and_never_lossless() {
        let mut p = profile(100);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let deep = Bytes(1_000_000);
        assert_eq!(
            p.decide(Color::Green, deep, false, false, &mut rng),
            Verdict::Pass
        );
        p.colors[0].wred = true;
        assert_eq!(
            p.decide(Color::Green, deep, false, false, &mut rng),
            Verdict::Drop
        );
        assert_eq!(
            p.decide(Color::Green, deep, false, true, &mut rng),
            Verdict::Pass
        );
        assert_eq!(
            p.decide(Color::Yellow, deep, false, false, &mut rng),
            Verdict::Pass
        );
        assert_eq!(
            p.decide(Color::Green, deep, true, true, &mut rng),
            Verdict::Mark
        );
    }
}
