//! Counts: `ecn.svg` (the share of frames each WRED queue marked CE), `drops.svg` (frames
//! dropped by switch and reason, in all; lossless drops in red) and `groups.svg` (each
//! next-hop group member's share of the bytes its group steered). Marks and group bytes
//! are counted at an instant (a frame's dequeue, its forwarding), so they are shown over a
//! sliding window of samples rather than per sample.

use super::{lines, one, us, Ctx, RatePoint, Res};
use crate::sim::recorder::Recording;

/// Samples in the sliding window: 1/100 of the recording, at least one interval.
fn window(n: usize) -> usize {
    (n / 100).max(1)
}

/// The sliding window as time, for captions.
pub(super) fn window_text(rec: &Recording) -> String {
    match rec.times.as_slice() {
        [a, b, ..] => {
            let w = window(rec.times.len()) as u64;
            format!("{}", lossless_buffer_model::Time((*b - *a).as_ps() * w))
        }
        _ => "sample".into(),
    }
}

/// For each sample i, `f(i, j)` with j the sample one [`window`] before it.
fn sliding(n: usize, f: impl Fn(usize, usize) -> f64) -> Vec<f64> {
    let w = window(n);
    (0..n).map(|i| f(i, i.saturating_sub(w))).collect()
}

fn at_times(rec: &Recording, v: Vec<f64>) -> Vec<RatePoint> {
    rec.times.iter().map(|t| us(*t)).zip(v).collect()
}

pub(super) fn ecn(cx: &Ctx) -> Res<Option<String>> {
    let rec = cx.rec;
    let series: Vec<(String, Vec<RatePoint>)> = rec
        .marks
        .iter()
        .filter(|m| m.marked.last().is_some_and(|x| *x > 0))
        .map(|m| {
            let share = sliding(m.tx.len().min(rec.times.len()), |i, j| {
                let sent = m.tx[i].saturating_sub(m.tx[j]);
                let marked = m.marked[i].saturating_sub(m.marked[j]);
                if sent > 0 {
                    marked as f64 / sent as f64 * 100.0
                } else {
                    0.0
                }
            });
            (format!("{} q{}", m.port, m.queue), at_times(rec, share))
        })
        .collect();
    if series.is_empty() || rec.times.len() < 2 {
        return Ok(None);
    }
    one(420, |area| {
        lines(cx, area, &series, &[], "% of frames marked CE")?;
        Ok(true)
    })
}

pub(super) fn drops(cx: &Ctx) -> Res<Option<String>> {
    let rec = cx.rec;
    let mut series: Vec<(String, Vec<RatePoint>)> = Vec::new();
    // Lossless drops first, so they take the first colour: red.
    let mut kept: Vec<_> = rec.drops.iter().filter(|d| d.frames.any()).collect();
    kept.sort_by_key(|d| d.reason != "lossless");
    for d in kept {
        let v = (0..rec.times.len())
            .map(|i| d.frames.at(i) as f64)
            .collect();
        let label = if d.reason == "lossless" {
            format!("{}: LOSSLESS (any reason)", d.node)
        } else {
            format!("{}: {}", d.node, d.reason)
        };
        series.push((label, at_times(rec, v)));
    }
    if series.is_empty() || rec.times.len() < 2 {
        return Ok(None);
    }
    one(420, |area| {
        lines(cx, area, &series, &[], "frames dropped, in all")?;
        Ok(true)
    })
}

pub(super) fn groups(cx: &Ctx) -> Res<Option<String>> {
    let rec = cx.rec;
    let mut series: Vec<(String, Vec<RatePoint>)> = Vec::new();
    for g in rec
        .groups
        .iter()
        .filter(|g| g.members.iter().any(|m| m.1.any()))
    {
        let n = rec.times.len();
        for (port, bytes) in &g.members {
            let share = sliding(n, |i, j| {
                let total: u64 = g
                    .members
                    .iter()
                    .map(|(_, b)| b.at(i).saturating_sub(b.at(j)))
                    .sum();
                let mine = bytes.at(i).saturating_sub(bytes.at(j));
                if total > 0 {
                    mine as f64 / total as f64 * 100.0
                } else {
                    0.0
                }
            });
            series.push((format!("{} → {port}", g.name), at_times(rec, share)));
        }
    }
    if series.is_empty() || rec.times.len() < 2 {
        return Ok(None);
    }
    one(420, |area| {
        lines(cx, area, &series, &[], "% of the group's bytes")?;
        Ok(true)
    })
}
