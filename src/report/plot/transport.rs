//! The reliable transports over time: `transport.svg`, the packets each RC queue pair had
//! re-sent by each sample (a step where go-back-N went back, a long flat stretch where a
//! queue pair waited for its timer), and `iterations.svg`, each collective iteration's
//! time drawn at its end. Both carry a line at every iteration's end.

use super::{lines_marked, one, us, Ctx, Marks, RatePoint, Res};
use lossless_buffer_model::Time;
use plotters::style::RGBColor;

/// Queue pairs drawn one by one; the rest are summed into one line.
const DRAWN: usize = 8;

/// The iteration-end lines.
fn iteration_marks(cx: &Ctx) -> Vec<(f64, RGBColor)> {
    let purple = RGBColor(128, 0, 160);
    cx.marks
        .collectives
        .iter()
        .flat_map(|(_, its)| its.iter().map(move |(end, _)| (us(*end), purple)))
        .collect()
}

/// The captions' note on the lines, when there are any.
pub(super) fn iteration_caption(marks: &Marks) -> &'static str {
    if marks.collectives.iter().any(|(_, its)| !its.is_empty()) {
        "; purple lines: a collective iteration ended"
    } else {
        ""
    }
}

pub(super) fn resent(cx: &Ctx) -> Res<Option<String>> {
    let times = &cx.rec.times;
    let mut qps: Vec<&(String, Vec<u64>)> = cx
        .rec
        .resent
        .iter()
        .filter(|(_, v)| v.last().is_some_and(|x| *x > 0))
        .collect();
    if qps.is_empty() || times.len() < 2 {
        return Ok(None);
    }
    // The queue pairs that re-sent most, by name within equal counts.
    qps.sort_by(|a, b| b.1.last().cmp(&a.1.last()).then(a.0.cmp(&b.0)));
    let points = |v: &[u64]| -> Vec<RatePoint> {
        times
            .iter()
            .zip(v)
            .map(|(t, n)| (us(*t), *n as f64))
            .collect()
    };
    let mut series: Vec<(String, Vec<RatePoint>)> = qps
        .iter()
        .take(DRAWN)
        .map(|(n, v)| (n.clone(), points(v)))
        .collect();
    if qps.len() > DRAWN {
        let rest = &qps[DRAWN..];
        let sum: Vec<u64> = (0..times.len())
            .map(|i| {
                rest.iter()
                    .map(|(_, v)| v.get(i).copied().unwrap_or(0))
                    .sum()
            })
            .collect();
        series.push((format!("{} others, summed", rest.len()), points(&sum)));
    }
    let marks = iteration_marks(cx);
    one(420, |area| {
        lines_marked(cx, area, &series, &[], "packets re-sent", &marks)?;
        Ok(true)
    })
}

pub(super) fn iterations(cx: &Ctx) -> Res<Option<String>> {
    let series: Vec<(String, Vec<RatePoint>)> = cx
        .marks
        .collectives
        .iter()
        .filter(|(_, its)| !its.is_empty())
        .map(|(name, its)| {
            let pts = its
                .iter()
                .map(|(end, took)| (us(*end), ms(*took)))
                .collect();
            (name.clone(), pts)
        })
        .collect();
    if series.is_empty() {
        return Ok(None);
    }
    let marks = iteration_marks(cx);
    one(420, |area| {
        lines_marked(cx, area, &series, &[], "iteration time (ms)", &marks)?;
        Ok(true)
    })
}

fn ms(t: Time) -> f64 {
    t.as_ps() as f64 / 1e9
}
