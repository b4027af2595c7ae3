//! The time axis every figure shares: the whole recording, from its first sample to its
//! last (the run's end), with long stretches in which nothing changed compressed to a
//! narrow band marked by a break and the time it stood for ("4.29 s idle"), so that the
//! seconds a retransmission timer waits do not squeeze the milliseconds around it to a
//! line. Figures draw in axis units (µs of active time plus a fixed width per break); the
//! ticks and their labels are in real time, placed by this module.

use super::{err, Res};
use crate::sim::recorder::Recording;
use lossless_buffer_model::Time;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

/// A stretch without change is compressed when it is longer than this share of the run…
const GAP_SHARE: f64 = 0.2;
/// …and than this many sampling intervals.
const GAP_INTERVALS: f64 = 50.0;
/// The width of a compressed stretch, as a share of the axis.
const BREAK_SHARE: f64 = 0.04;
/// Ticks per 1000 pixels of axis.
const TICKS_PER_1000PX: f64 = 10.0;

fn us(t: Time) -> f64 {
    t.as_ps() as f64 / 1e6
}

/// A piece of the axis: real time [t0, t1] (µs) drawn over [u0, u1] (axis units).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Piece {
    t0: f64,
    t1: f64,
    u0: f64,
    u1: f64,
    /// A compressed stretch without change.
    broken: bool,
}

/// The time axis of a recording.
#[derive(Clone, Debug)]
pub struct TimeAxis {
    pieces: Vec<Piece>,
    /// Real time at the axis' ends, µs.
    pub lo: f64,
    pub hi: f64,
}

impl TimeAxis {
    /// The axis of `rec` over `lo..hi` µs (its first and last sample).
    pub fn new(rec: &Recording, lo: f64, hi: f64) -> TimeAxis {
        let span = (hi - lo).max(1e-9);
        let interval = us(rec.interval).max(1e-6);
        let mut gaps: Vec<(f64, f64)> = rec
            .gaps
            .iter()
            .map(|(a, b)| (us(*a).max(lo), us(*b).min(hi)))
            .filter(|(a, b)| b - a > GAP_SHARE * span && b - a > GAP_INTERVALS * interval)
            .collect();
        gaps.sort_by(|a, b| a.0.total_cmp(&b.0));
        // Active time is drawn to scale; each break takes BREAK_SHARE of the axis.
        let gap_time: f64 = gaps.iter().map(|(a, b)| b - a).sum();
        let active = (span - gap_time).max(span * 1e-6);
        let breaks = gaps.len() as f64;
        let break_w = if breaks > 0.0 {
            active * BREAK_SHARE / (1.0 - BREAK_SHARE * breaks).max(0.2)
        } else {
            0.0
        };
        let mut pieces = Vec::new();
        let (mut t, mut u) = (lo, lo);
        for (a, b) in gaps {
            if a > t {
                pieces.push(Piece {
                    t0: t,
                    t1: a,
                    u0: u,
                    u1: u + (a - t),
                    broken: false,
                });
                u += a - t;
            }
            pieces.push(Piece {
                t0: a,
                t1: b,
                u0: u,
                u1: u + break_w,
                broken: true,
            });
            u += break_w;
            t = b;
        }
        pieces.push(Piece {
            t0: t,
            t1: hi.max(t),
            u0: u,
            u1: u + (hi - t).max(0.0),
            broken: false,
        });
        TimeAxis { pieces, lo, hi }
    }

    /// The axis' extent in axis units.
    pub fn range(&self) -> std::ops::Range<f64> {
        let last = self.pieces.last().map_or(self.lo + 1e-3, |p| p.u1);
        self.lo..last.max(self.lo + 1e-3)
    }

    /// Has the axis compressed stretches?
    pub fn broken(&self) -> bool {
        self.pieces.iter().any(|p| p.broken)
    }

    /// The axis position of real time `t` µs.
    pub fn u(&self, t: f64) -> f64 {
        let p = self
            .pieces
            .iter()
            .find(|p| t <= p.t1)
            .or(self.pieces.last())
            .expect("an axis has a piece");
        if p.t1 <= p.t0 {
            return p.u0;
        }
        p.u0 + (t.clamp(p.t0, p.t1) - p.t0) / (p.t1 - p.t0) * (p.u1 - p.u0)
    }

    /// The axis position of `t`.
    pub fn at(&self, t: Time) -> f64 {
        self.u(us(t))
    }

    /// In ms when the run is longer than 10 ms, else µs.
    pub fn in_ms(&self) -> bool {
        self.hi - self.lo > 10_000.0
    }

    /// The axis' unit.
    pub fn unit(&self) -> &'static str {
        if self.in_ms() {
            "ms"
        } else {
            "µs"
        }
    }

    /// `t` µs in the axis' unit, for a label; with `step` µs between ticks, as many
    /// decimals as tell neighbouring ticks apart.
    pub fn label(&self, t: f64, step: f64) -> String {
        let scale = if self.in_ms() { 1e3 } else { 1.0 };
        let (v, step) = (t / scale, step / scale);
        let decimals = (-(step.log10().floor())).clamp(0.0, 9.0) as usize;
        let text = format!("{v:.decimals$}");
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            text
        }
    }

    /// Ticks (µs, and the step between them): round numbers in each drawn piece, about
    /// [`TICKS_PER_1000PX`] per 1000 pixels of `width_px`.
    fn ticks(&self, width_px: f64) -> Vec<(f64, f64)> {
        let total = self.range().end - self.range().start;
        let mut out = Vec::new();
        for p in self.pieces.iter().filter(|p| !p.broken) {
            let share = (p.u1 - p.u0) / total.max(1e-12);
            let n = (share * width_px / 1000.0 * TICKS_PER_1000PX).max(1.0);
            let step = nice_step((p.t1 - p.t0).max(1e-9) / n);
            let mut x = (p.t0 / step).ceil() * step;
            while x <= p.t1 + step * 1e-9 {
                out.push((x, step));
                x += step;
            }
        }
        out
    }

    /// Draw the ticks and labels under `chart`'s plotting area, and each break: a band
    /// across the plot with the time it stands for, and a double slash on the axis.
    pub fn draw<DB: DrawingBackend>(
        &self,
        chart: &mut ChartContext<DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
        y0: f64,
        y1: f64,
    ) -> Res<()> {
        let (w_px, _) = chart.plotting_area().dim_in_pixel();
        let font = ("sans-serif", 12).into_font();
        for p in self.pieces.iter().filter(|p| p.broken) {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(p.u0, y0), (p.u1, y1)],
                    RGBColor(225, 225, 225).filled(),
                )))
                .map_err(err)?;
            let idle = Time((p.t1 - p.t0) as u64 * 1_000_000);
            let mid = (p.u0 + p.u1) / 2.0;
            chart
                .draw_series(std::iter::once(Text::new(
                    format!("{} idle", short_time(idle)),
                    (mid, y1),
                    ("sans-serif", 11)
                        .into_font()
                        .transform(FontTransform::Rotate90)
                        .color(&RGBColor(80, 80, 80)),
                )))
                .map_err(err)?;
        }
        let area = chart.plotting_area().strip_coord_spec();
        let (_, h_px) = area.dim_in_pixel();
        let base = chart.plotting_area().get_base_pixel();
        let ticks = self.ticks(w_px as f64);
        let parent = chart.plotting_area();
        for (t, step) in ticks {
            let (x, _) = parent.map_coordinate(&(self.u(t), y0));
            let x = x - base.0;
            area.draw(&PathElement::new(
                vec![(x, h_px as i32 - 5), (x, h_px as i32)],
                BLACK.stroke_width(1),
            ))
            .map_err(err)?;
            let label = self.label(t, step);
            let half = (label.len() as i32 * 7) / 2;
            area.draw(&Text::new(label, (x - half, h_px as i32 + 4), font.clone()))
                .map_err(err)?;
        }
        for p in self.pieces.iter().filter(|p| p.broken) {
            for u in [p.u0, p.u1] {
                let (x, _) = parent.map_coordinate(&(u, y0));
                let x = x - base.0;
                area.draw(&PathElement::new(
                    vec![(x - 4, h_px as i32 + 5), (x + 4, h_px as i32 - 5)],
                    BLACK.stroke_width(2),
                ))
                .map_err(err)?;
            }
        }
        Ok(())
    }
}

/// A round step (1, 2 or 5 × 10^k) near `raw`.
fn nice_step(raw: f64) -> f64 {
    let k = 10f64.powf(raw.log10().floor());
    let m = raw / k;
    let f = if m < 1.5 {
        1.0
    } else if m < 3.5 {
        2.0
    } else if m < 7.5 {
        5.0
    } else {
        10.0
    };
    f * k
}

/// A span for a break's label: "4.29 s", "380 ms", "75 µs".
fn short_time(t: Time) -> String {
    let s = t.as_ps() as f64 / 1e12;
    if s >= 1.0 {
        format!("{} s", super::num(s))
    } else if s >= 1e-3 {
        format!("{} ms", super::num(s * 1e3))
    } else {
        format!("{} µs", super::num(s * 1e6))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(gaps: &[(u64, u64)], interval_us: u64) -> Recording {
        Recording {
            interval: Time::from_us(interval_us),
            gaps: gaps
                .iter()
                .map(|(a, b)| (Time::from_us(*a), Time::from_us(*b)))
                .collect(),
            ..Recording::default()
        }
    }

    #[test]
    fn a_long_idle_stretch_is_compressed_and_the_rest_keeps_its_scale() {
        // 2.3 ms of activity, 4.29 s idle, 2 ms of activity.
        let r = rec(&[(2_300, 4_296_000)], 1);
        let a = TimeAxis::new(&r, 0.0, 4_298_000.0);
        assert!(a.broken());
        // Active time to scale: 2.3 ms and 2 ms.
        assert!((a.u(2_300.0) - 2_300.0).abs() < 1e-6);
        let after = a.u(4_296_000.0);
        assert!((a.u(4_298_000.0) - after - 2_000.0).abs() < 1e-6);
        // The break is 4 % of the axis.
        let total = a.range().end - a.range().start;
        assert!(((after - 2_300.0) / total - BREAK_SHARE).abs() < 1e-9);
        // Monotonic everywhere.
        let mut last = f64::MIN;
        for k in 0..=1000 {
            let u = a.u(4_298_000.0 * k as f64 / 1000.0);
            assert!(u >= last);
            last = u;
        }
        // Short stretches are not compressed.
        let a = TimeAxis::new(&rec(&[(100, 120)], 1), 0.0, 1_000.0);
        assert!(!a.broken());
        assert_eq!(a.u(500.0), 500.0);
    }

    #[test]
    fn ticks_are_round_and_within_the_active_pieces() {
        let r = rec(&[(2_300, 4_296_000)], 1);
        let a = TimeAxis::new(&r, 0.0, 4_298_000.0);
        let ticks: Vec<f64> = a.ticks(860.0).into_iter().map(|t| t.0).collect();
        assert!(
            ticks.iter().all(|t| *t <= 2_300.0 || *t >= 4_296_000.0),
            "{ticks:?}"
        );
        assert!(
            ticks.contains(&0.0) && ticks.contains(&4_296_000.0),
            "{ticks:?}"
        );
        // Labels in ms with the decimals their step needs.
        assert_eq!(a.label(4_296_020.0, 20.0), "4296.02");
        assert_eq!(a.label(4_296_000.0, 200.0), "4296");
        assert_eq!(nice_step(0.37), 0.5);
        assert_eq!(nice_step(230.0), 200.0);
        assert_eq!(short_time(Time::from_ms(4290)), "4.3 s");
    }
}
