//! The pipeline thread's turns, timed: a stall detector. A turn is one round of the
//! wall-clock switch (wait, read the ports, run the switch, write). Between turns the
//! thread waits as long as it asked — until the switch's next deadline or a frame's
//! arrival, at most 50 ms — or longer when the machine did not run it: a host stall (a
//! virtual CPU taken away, a busy machine), which stretches the software cable as a slow
//! switch would not. The longest gap between turns, a histogram of the gaps, and how far a
//! wait overran what was asked tell the two apart.

use crate::report::model::{TurnGapBucket, TurnsReport};
use std::time::{Duration, Instant};

/// Upper bounds of the gap histogram's buckets, µs (then one bucket for longer gaps).
pub const GAP_BUCKETS_US: [u64; 6] = [10, 100, 1_000, 10_000, 100_000, 1_000_000];
/// A wait that overran what was asked by this much or more counts as a stall.
pub const STALL: Duration = Duration::from_millis(1);

/// Turn timing of one `lossless tap` run.
#[derive(Clone, Debug, Default)]
pub struct Turns {
    count: u64,
    last: Option<Instant>,
    gap_max: Duration,
    gap_sum: Duration,
    /// Turns per bucket of [`GAP_BUCKETS_US`], the last for longer gaps.
    histogram: [u64; GAP_BUCKETS_US.len() + 1],
    overslept_max: Duration,
    stalls: u64,
}

impl Turns {
    /// A turn starts at `now`: the gap since the previous one is counted.
    pub fn begin(&mut self, now: Instant) {
        self.count += 1;
        if let Some(last) = self.last {
            let gap = now.saturating_duration_since(last);
            self.gap_max = self.gap_max.max(gap);
            self.gap_sum += gap;
            let us = gap.as_micros() as u64;
            let bucket = GAP_BUCKETS_US
                .iter()
                .position(|&le| us <= le)
                .unwrap_or(GAP_BUCKETS_US.len());
            self.histogram[bucket] += 1;
        }
        self.last = Some(now);
    }

    /// The wait before a turn, asked for `asked`, took `took` (less when a frame came).
    pub fn waited(&mut self, asked: Duration, took: Duration) {
        let over = took.saturating_sub(asked);
        self.overslept_max = self.overslept_max.max(over);
        if over >= STALL {
            self.stalls += 1;
        }
    }

    /// Turns taken.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The report's `tap.turns`.
    pub fn report(&self) -> TurnsReport {
        let mut buckets: Vec<TurnGapBucket> = GAP_BUCKETS_US
            .iter()
            .zip(&self.histogram)
            .map(|(&le, &turns)| TurnGapBucket {
                le_us: Some(le),
                turns,
            })
            .collect();
        buckets.push(TurnGapBucket {
            le_us: None,
            turns: self.histogram[GAP_BUCKETS_US.len()],
        });
        TurnsReport {
            turns: self.count,
            gap_max_us: self.gap_max.as_micros() as u64,
            gap_sum_us: self.gap_sum.as_micros() as u64,
            gap_histogram: buckets,
            overslept_max_us: self.overslept_max.as_micros() as u64,
            stalls: self.stalls,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_fall_in_their_buckets_and_oversleeping_counts_as_stalls() {
        let t0 = Instant::now();
        let mut t = Turns::default();
        for us in [0, 5, 10, 11, 300_000] {
            t.begin(t0 + Duration::from_micros(us));
        }
        // Gaps: 5, 5, 1 and 299,989 µs.
        t.waited(Duration::from_micros(100), Duration::from_micros(20));
        t.waited(Duration::from_millis(1), Duration::from_millis(1));
        t.waited(Duration::from_micros(100), Duration::from_millis(300));
        let r = t.report();
        assert_eq!(r.turns, 5);
        assert_eq!(r.gap_max_us, 299_989);
        assert_eq!(r.gap_sum_us, 300_000);
        let counts: Vec<u64> = r.gap_histogram.iter().map(|b| b.turns).collect();
        assert_eq!(counts, [3, 0, 0, 0, 0, 1, 0]);
        assert_eq!(r.gap_histogram.last().unwrap().le_us, None);
        assert_eq!(r.overslept_max_us, 299_900);
        assert_eq!(r.stalls, 1);
    }
}
