//! `pauses.svg`: a row per switch port and lossless priority (paused, holding its peer in
//! XOFF, stormed) and per host priority (paused, sending PFC), with a tick per PFC frame;
//! ticks closer than a few pixels merge into a grey bar instead of painting the row black.
//! Deadlocks: a dashed line where one formed, a solid one where it was detected.

use super::{err, us, with_legend, Ctx, Entry, Figure, Res, Stroke};
use lossless_buffer_model::Time;
use plotters::prelude::*;

/// Ticks closer than this (pixels) are drawn as one bar.
const MERGE_PX: f64 = 3.0;
const DEADLOCK: RGBColor = RGBColor(130, 0, 170);
const STORMED: RGBColor = RGBColor(230, 140, 0);
const MANY: RGBColor = RGBColor(110, 110, 110);

/// Contiguous runs of `true` as (from, to) in µs of real time.
fn runs(times: &[Time], on: impl Fn(usize) -> bool) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, t) in times.iter().enumerate() {
        match (on(i), start) {
            (true, None) => start = Some(us(*t)),
            (false, Some(s)) => {
                out.push((s, us(*t)));
                start = None;
            }
            _ => {}
        }
    }
    if let (Some(s), Some(t)) = (start, times.last()) {
        out.push((s, us(*t)));
    }
    out
}

/// Sample times (µs) at which a cumulative count grew: a PFC frame went by in the sample
/// interval that ended there.
fn ticks(times: &[Time], count: impl Fn(usize) -> u64) -> Vec<f64> {
    (1..times.len())
        .filter(|i| count(*i) > count(i - 1))
        .map(|i| us(times[i]))
        .collect()
}

/// Ticks (µs) as clusters (from, to): a single tick has from == to; ticks within `gap`
/// of the previous one join its cluster.
fn clusters(ticks: &[f64], gap: f64) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    for &t in ticks {
        match out.last_mut() {
            Some(c) if t - c.1 < gap => c.1 = t,
            _ => out.push((t, t)),
        }
    }
    out
}

/// A row of the timeline: label, colour, intervals in µs, PFC frame ticks in µs.
type Row = (String, RGBColor, Vec<(f64, f64)>, Vec<f64>);

fn rows(cx: &Ctx) -> Vec<Row> {
    let rec = cx.rec;
    let mut rows: Vec<Row> = Vec::new();
    // Rows are kept in axis units (a stretch without change compressed).
    let mut push = |label: String, color: RGBColor, runs: Vec<(f64, f64)>, ticks: Vec<f64>| {
        if !runs.is_empty() || !ticks.is_empty() {
            let runs = runs.into_iter().map(|(a, b)| (cx.x(a), cx.x(b))).collect();
            let ticks = ticks.into_iter().map(|t| cx.x(t)).collect();
            rows.push((label, color, runs, ticks));
        }
    };
    for p in &rec.pauses {
        // Paused by the peer: the frames that did it are the port's received PFC.
        push(
            format!("{} p{} paused", p.port, p.prio),
            RED,
            runs(&rec.times, |i| p.paused[i]),
            ticks(&rec.times, |i| p.pfc_rx[i]),
        );
        push(
            format!("{} p{} sends XOFF", p.port, p.prio),
            BLUE,
            runs(&rec.times, |i| p.xoff_sent[i]),
            ticks(&rec.times, |i| p.pfc_tx[i]),
        );
        push(
            format!("{} q{} stormed (watchdog)", p.port, p.prio),
            STORMED,
            runs(&rec.times, |i| p.stormed[i]),
            Vec::new(),
        );
    }
    for h in &rec.hosts {
        for q in 0..8 {
            push(
                format!("host {} p{q} paused", h.name),
                RED,
                runs(&rec.times, |i| h.paused[i][q]),
                Vec::new(),
            );
            push(
                format!("host {} p{q} sends PFC", h.name),
                BLUE,
                Vec::new(),
                ticks(&rec.times, |i| h.pfc_tx[i][q]),
            );
        }
    }
    rows
}

/// The figure, or None when nothing paused.
pub(super) fn figure(cx: &Ctx, f: &Figure) -> Res<Option<String>> {
    let rows = rows(cx);
    if rows.is_empty() || cx.rec.times.is_empty() {
        return Ok(None);
    }
    let range = cx.xr();
    let (lo, hi) = (range.start, range.end);
    let n = rows.len();
    super::figure(f, 90 + 24 * n.max(8) as u32, |root| {
        let legend: Vec<Entry> = vec![
            ("paused (may not send)".into(), RED, Stroke::Solid),
            ("holds its peer in XOFF".into(), BLUE, Stroke::Solid),
            ("stormed (PFC watchdog)".into(), STORMED, Stroke::Solid),
            ("a PFC frame (tick)".into(), BLACK, Stroke::Solid),
            (
                "PFC frames too close to tell apart".into(),
                MANY,
                Stroke::Solid,
            ),
            ("deadlock formed".into(), DEADLOCK, Stroke::Dashed),
            ("deadlock detected".into(), DEADLOCK, Stroke::Solid),
        ];
        let plot = with_legend(root, &legend)?;
        let mut chart = ChartBuilder::on(&plot)
            .margin(10)
            .margin_right(16)
            .x_label_area_size(34)
            .y_label_area_size(260)
            .build_cartesian_2d(lo..hi, 0.0..n as f64)
            .map_err(err)?;
        super::shade(cx, &mut chart, 0.0, n as f64)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .axis_desc_style(("sans-serif", 12))
            .x_desc(cx.axis.unit())
            .y_labels(0)
            .disable_y_mesh()
            .draw()
            .map_err(err)?;
        cx.axis.draw(&mut chart, 0.0, n as f64)?;
        // Row labels in the left margin, one per row, at the row's centre.
        for (k, (label, ..)) in rows.iter().enumerate() {
            let y = (n - 1 - k) as f64 + 0.5;
            let (_, py) = chart.backend_coord(&(lo, y));
            let base = plot.get_base_pixel();
            plot.draw(&Text::new(
                label.clone(),
                (12, py - base.1 - 6),
                ("sans-serif", 12).into_font(),
            ))
            .map_err(err)?;
        }
        let (px, _) = chart.plotting_area().dim_in_pixel();
        let gap = MERGE_PX * (hi - lo) / px.max(1) as f64;
        for (k, (_, color, intervals, marks)) in rows.iter().enumerate() {
            let y = (n - 1 - k) as f64;
            chart
                .draw_series(intervals.iter().map(|(a, b)| {
                    Rectangle::new(
                        [(*a, y + 0.2), (b.max(*a + (hi - lo) / 2000.0), y + 0.8)],
                        color.filled(),
                    )
                }))
                .map_err(err)?;
            for (a, b) in clusters(marks, gap) {
                if a == b {
                    chart
                        .draw_series(std::iter::once(PathElement::new(
                            vec![(a, y + 0.05), (a, y + 0.95)],
                            BLACK,
                        )))
                        .map_err(err)?;
                } else {
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(a, y + 0.02), (b, y + 0.18)],
                            MANY.filled(),
                        )))
                        .map_err(err)?;
                }
            }
        }
        for (formed, detected) in &cx.marks.deadlocks {
            let line = |t: Time| vec![(cx.x(us(t)), 0.0), (cx.x(us(t)), n as f64)];
            if (cx.axis.lo..=cx.axis.hi).contains(&us(*formed)) {
                chart
                    .draw_series(DashedLineSeries::new(
                        line(*formed),
                        6,
                        4,
                        DEADLOCK.stroke_width(2),
                    ))
                    .map_err(err)?;
            }
            if (cx.axis.lo..=cx.axis.hi).contains(&us(*detected)) {
                chart
                    .draw_series(LineSeries::new(line(*detected), DEADLOCK.stroke_width(2)))
                    .map_err(err)?;
            }
        }
        Ok(true)
    })
}

#[cfg(test)]
mod tests {
    use super::clusters;

    #[test]
    fn close_ticks_merge_and_lone_ones_stay() {
        let c = clusters(&[1.0, 1.1, 1.2, 5.0, 9.0, 9.05], 0.2);
        assert_eq!(c, vec![(1.0, 1.2), (5.0, 5.0), (9.0, 9.05)]);
    }
}
