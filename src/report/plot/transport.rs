//! The reliable transports: `transport.svg`, the packets each RC queue pair had re-sent by
//! each sample, a panel per queue pair (a step where go-back-N went back, a long flat
//! stretch where it waited for its timer), with a line at every collective iteration's
//! end; and `iterations.svg`, each collective iteration's time against its number, the
//! iterations in which packets were re-sent marked.

use super::{
    err, figure, lines_laid_out, num, palette, us, with_legend, Ctx, Entry, Figure, Iteration,
    Layout, Marks, Res, Series, Stroke,
};
use plotters::prelude::*;

/// Queue pairs drawn one by one; the rest are summed into one panel.
const DRAWN: usize = 8;
/// Height of a queue pair's panel.
const QP_H: u32 = 150;
/// An iteration this many times the median is drawn at the top edge, its time written.
const OUTLIER: f64 = 10.0;

const ITERATION_END: RGBColor = RGBColor(128, 0, 160);
const RESENT: RGBColor = RGBColor(220, 0, 0);

/// The iteration-end lines.
fn iteration_marks(cx: &Ctx) -> Vec<(f64, RGBColor)> {
    cx.marks
        .collectives
        .iter()
        .flat_map(|(_, its)| its.iter().map(move |it| (us(it.end), ITERATION_END)))
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

pub(super) fn resent(cx: &Ctx, f: &Figure) -> Res<Option<String>> {
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
    let points = |v: &[u64]| -> Vec<(f64, f64)> {
        times
            .iter()
            .zip(v)
            .map(|(t, n)| (us(*t), *n as f64))
            .collect()
    };
    let mut series: Vec<Series> = qps
        .iter()
        .take(DRAWN)
        .map(|(n, v)| {
            (
                format!("{n} (re-sent {})", v.last().unwrap_or(&0)),
                points(v),
            )
        })
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
        let names: Vec<&str> = rest.iter().map(|(n, _)| n.as_str()).collect();
        series.push((
            format!("{} others summed: {}", rest.len(), names.join(", ")),
            points(&sum),
        ));
    }
    let marks = iteration_marks(cx);
    let layout = Layout {
        per_panel: 1,
        panel_h: QP_H,
        color: &|_, _| palette(0),
    };
    lines_laid_out(cx, f, &series, &[], "packets re-sent", &marks, &layout)
}

pub(super) fn iterations(cx: &Ctx, f: &Figure) -> Res<Option<String>> {
    let colls: Vec<&(String, Vec<Iteration>)> = cx
        .marks
        .collectives
        .iter()
        .filter(|(_, its)| !its.is_empty())
        .collect();
    if colls.is_empty() {
        return Ok(None);
    }
    let n = colls.len();
    figure(f, 340 * n as u32, |area| {
        for (panel, (name, its)) in area.split_evenly((n, 1)).iter().zip(&colls) {
            iteration_panel(panel, name, its)?;
        }
        Ok(true)
    })
}

/// One collective's iterations: time (ms) against iteration number. The y axis spans the
/// ordinary iterations, so that microseconds show on a millisecond iteration; one more than
/// [`OUTLIER`] times the median is drawn at the top edge as a triangle with its time.
fn iteration_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    name: &str,
    its: &[Iteration],
) -> Res<()> {
    let ms: Vec<f64> = its.iter().map(|it| it.took.as_ps() as f64 / 1e9).collect();
    let lossy: Vec<bool> = its.iter().map(|it| it.resent > 0).collect();
    let mut sorted = ms.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let ordinary: Vec<f64> = ms
        .iter()
        .copied()
        .filter(|m| *m <= median * OUTLIER)
        .collect();
    let (lo, hi) = ordinary
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), m| (a.min(*m), b.max(*m)));
    let pad = ((hi - lo) * 0.15).max(hi.abs() * 1e-4).max(1e-9);
    let (y0, y1) = (lo - pad, hi + pad * 2.0);
    let mut entries: Vec<Entry> = vec![
        ("an iteration".into(), palette(0), Stroke::Solid),
        (
            "packets were re-sent in it (a loss)".into(),
            RESENT,
            Stroke::Solid,
        ),
    ];
    if ordinary.len() < ms.len() {
        entries.push((
            format!("beyond {OUTLIER}× the median: at the top, its time written"),
            RESENT,
            Stroke::Dashed,
        ));
    }
    let plot = with_legend(area, &entries)?;
    let count = ms.len() as f64;
    let digits = decimals(y1 - y0);
    let mut chart = ChartBuilder::on(&plot)
        .caption(
            format!(
                "{name}: {} iterations, median {} ms",
                ms.len(),
                fmt(median, digits)
            ),
            ("sans-serif", 14),
        )
        .margin(8)
        .margin_right(16)
        .x_label_area_size(34)
        .y_label_area_size(80)
        .build_cartesian_2d(0.5..count + 0.5, y0..y1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("iteration")
        .y_desc("iteration time, ms")
        .x_labels((ms.len() + 1).min(20))
        .x_label_formatter(&|v| {
            if (v - v.round()).abs() < 1e-9 && *v >= 1.0 {
                num(*v)
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|v| fmt(*v, digits))
        .draw()
        .map_err(err)?;
    let pts: Vec<(f64, f64)> = ms
        .iter()
        .enumerate()
        .map(|(k, m)| ((k + 1) as f64, m.min(y1)))
        .collect();
    chart
        .draw_series(LineSeries::new(pts.clone(), palette(0).stroke_width(1)))
        .map_err(err)?;
    for (k, (&(x, y), m)) in pts.iter().zip(&ms).enumerate() {
        let color = if lossy[k] { RESENT } else { palette(0) };
        if *m > median * OUTLIER {
            chart
                .draw_series(std::iter::once(TriangleMarker::new(
                    (x, y),
                    8,
                    color.filled(),
                )))
                .map_err(err)?;
            chart
                .draw_series(std::iter::once(Text::new(
                    format!("{} ms", fmt(*m, 3)),
                    (x, y1 - (y1 - y0) * 0.04),
                    ("sans-serif", 12).into_font().color(&RESENT),
                )))
                .map_err(err)?;
        } else {
            chart
                .draw_series(std::iter::once(Circle::new((x, y), 5, color.filled())))
                .map_err(err)?;
        }
    }
    Ok(())
}

/// Decimals that tell apart values `span` ms apart (at least 3).
fn decimals(span: f64) -> usize {
    if span <= 0.0 {
        return 3;
    }
    ((-span.log10()).ceil() as i64 + 2).clamp(3, 7) as usize
}

fn fmt(v: f64, digits: usize) -> String {
    format!("{v:.digits$}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn labels_tell_microseconds_apart_on_milliseconds() {
        // 2.7 µs on 1.165 ms: a range of about 0.003 ms needs 5 decimals.
        assert_eq!(super::decimals(0.0035), 5);
        assert_eq!(super::fmt(1.16523, 5), "1.16523");
        assert_eq!(super::decimals(2.0), 3);
    }
}
