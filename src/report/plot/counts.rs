//! Counts: `ecn.svg` (the share of frames each WRED queue marked CE), `drops.svg` (frames
//! dropped by switch and reason, in all; lossless drops in red), `groups.svg` (the
//! bytes each next-hop group member carried, as Gb/s), `credits.svg` (the credits each
//! CBFC sender holds on a channel, against the limit its peer gave) and `llr.svg` (the
//! NACKs each LLR port sent and the frames it replayed, in all). Marks and group bytes are counted
//! at an instant (a frame's dequeue, its forwarding), so they are shown over a window of
//! samples ([`super::rates::window_starts`]) rather than per sample.

use super::rates::windowed_points;
use super::{lines, lines_laid_out, palette, us, Ctx, Figure, Layout, Res, Series};
use crate::sim::recorder::Recording;
use plotters::style::RGBColor;

/// For each sample i, `f(i, j)` with j the first sample of its window, at its time (µs).
fn windowed(rec: &Recording, n: usize, f: impl Fn(usize, usize) -> f64) -> Vec<(f64, f64)> {
    windowed_points(rec, n, |i| Some(us(rec.times[i])), f)
}

pub(super) fn ecn(cx: &Ctx, f: &Figure) -> Res<Option<String>> {
    let rec = cx.rec;
    let series: Vec<Series> = rec
        .marks
        .iter()
        .filter(|m| m.marked.last().is_some_and(|x| *x > 0))
        .map(|m| {
            let share = windowed(rec, m.tx.len(), |i, j| {
                let sent = m.tx[i].saturating_sub(m.tx[j]);
                let marked = m.marked[i].saturating_sub(m.marked[j]);
                if sent > 0 {
                    marked as f64 / sent as f64 * 100.0
                } else {
                    0.0
                }
            });
            (format!("{} q{}", m.port, m.queue), share)
        })
        .collect();
    lines(cx, f, &series, &[], "% of frames marked CE", &[])
}

pub(super) fn drops(cx: &Ctx, f: &Figure) -> Res<Option<String>> {
    let rec = cx.rec;
    let mut series: Vec<Series> = Vec::new();
    // Lossless drops first, on the first panel.
    let mut kept: Vec<_> = rec.drops.iter().filter(|d| d.frames.any()).collect();
    kept.sort_by_key(|d| d.reason != "lossless");
    for d in kept {
        let pts = (0..rec.times.len())
            .map(|i| (us(rec.times[i]), d.frames.at(i) as f64))
            .collect();
        let label = if d.reason == "lossless" {
            format!("{}: LOSSLESS (any reason)", d.node)
        } else {
            format!("{}: {}", d.node, d.reason)
        };
        series.push((label, pts));
    }
    // Lossless drops (which must stay 0) in red, the others in the palette's turn.
    let layout = Layout {
        per_panel: super::PER_PANEL,
        panel_h: super::LINES_H,
        color: &|i, name| {
            if name.contains("LOSSLESS") {
                RGBColor(220, 0, 0)
            } else {
                // Every colour but the palette's red, kept for lossless drops.
                palette([0, 2, 3, 4, 5][i % 5] + 6 * (i / 5 % 2))
            }
        },
    };
    lines_laid_out(cx, f, &series, &[], "frames dropped, in all", &[], &layout)
}

pub(super) fn groups(cx: &Ctx, f: &Figure) -> Res<Option<String>> {
    let rec = cx.rec;
    let mut series: Vec<Series> = Vec::new();
    for g in rec
        .groups
        .iter()
        .filter(|g| g.members.iter().any(|m| m.1.any()))
    {
        for (port, bytes) in g.members.iter().filter(|m| m.1.any()) {
            let rate = windowed(rec, rec.times.len(), |i, j| {
                let dt = (rec.times[i] - rec.times[j]).as_ps() as f64 / 1e12;
                let db = bytes.at(i).saturating_sub(bytes.at(j)) as f64;
                if dt > 0.0 {
                    db * 8.0 / dt / 1e9
                } else {
                    0.0
                }
            });
            series.push((format!("{} → {port}", g.name), rate));
        }
    }
    lines(cx, f, &series, &[], "Gbit/s steered", &[])
}

/// The credits each credited channel's sender holds, a panel per channel that held any,
/// with its limit (dashed).
pub(super) fn credits(cx: &Ctx, f: &Figure) -> Res<Option<String>> {
    let rec = cx.rec;
    let kept: Vec<_> = rec.credits.iter().filter(|c| c.used.any()).collect();
    if kept.is_empty() {
        return Ok(None);
    }
    let mut panels = Vec::new();
    for c in kept {
        let pts = (0..rec.times.len())
            .map(|i| (us(rec.times[i]), c.used.at(i) as f64))
            .collect();
        panels.push((
            vec![(format!("{} VC {}: in use", c.port, c.vc), pts)],
            vec![(format!("limit {}", c.limit), c.limit as f64)],
        ));
    }
    super::panels_of_lines(cx, f, &panels, "credits")
}

/// LLR over time: per port that sent a NACK or replayed a frame, both counts in all.
pub(super) fn llr(cx: &Ctx, f: &Figure) -> Res<Option<String>> {
    let rec = cx.rec;
    let mut series: Vec<Series> = Vec::new();
    for l in rec.llr.iter().filter(|l| l.nacks.any() || l.replayed.any()) {
        for (what, s) in [("NACKs sent", &l.nacks), ("frames replayed", &l.replayed)] {
            let pts = (0..rec.times.len())
                .map(|i| (us(rec.times[i]), s.at(i) as f64))
                .collect();
            series.push((format!("{}: {what}", l.port), pts));
        }
    }
    lines(cx, f, &series, &[], "in all", &[])
}
