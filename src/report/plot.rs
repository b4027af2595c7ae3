//! `lossless run FILE --plot DIR`: SVG figures of a recording (plotters, SVG backend) and
//! `DIR/index.html`, one self-contained page (figures inline, no network fetches) with the
//! text report.
//!
//! * `buffers.svg`: per switch port and lossless priority that saw traffic, the egress
//!   queue and the ingress PG's shared and headroom use, with the PG's XOFF and XON levels.
//! * `pauses.svg`: when each port and host was paused, per priority, and when each switch
//!   port held its peer in XOFF, with a tick where PFC frames went by.
//! * `flows.svg`: each flow's throughput per sample interval.
//! * `dcqcn.svg`: each DCQCN flow's rate R_C (when any host runs DCQCN).
//! * `ecn.svg`: per queue with a WRED profile that marked frames, the share marked CE.
//! * `links.svg`: utilisation of each switch port that sent anything (fabrics).

use crate::sim::recorder::Recording;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

pub(crate) const W: u32 = 1000;
const PANEL_H: u32 = 220;
/// At most this many buffer panels (the busiest).
const MAX_PANELS: usize = 12;

pub(crate) type Res<T> = Result<T, String>;

pub(crate) fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn us(t: lossless_buffer_model::Time) -> f64 {
    t.as_ps() as f64 / 1e6
}

/// Write the figures and index.html into `dir`; returns the files written.
pub fn write(rec: &Recording, dir: &Path, title: &str, report_text: &str) -> Res<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut figures: Vec<(String, String)> = Vec::new();
    let mut files = Vec::new();
    let mut add = |name: &str, caption: &str, svg: Option<String>| -> Res<()> {
        let Some(svg) = svg else { return Ok(()) };
        let path = dir.join(name);
        std::fs::write(&path, &svg).map_err(|e| format!("{}: {e}", path.display()))?;
        files.push(path);
        figures.push((caption.to_string(), svg));
        Ok(())
    };
    add("buffers.svg", "Queues and PG use per port and lossless priority, with the PG's XOFF (dashed) and XON (dotted) levels", buffers(rec)?)?;
    add("pauses.svg", "Pauses: when each port or host could not send a priority (paused, red), when a switch port held its peer in XOFF (blue), and when the PFC watchdog held a queue stormed (orange); black ticks: PFC frames received (paused rows) or sent, in the sample interval ending there", pauses(rec)?)?;
    add(
        "flows.svg",
        "Throughput per flow (per sample interval)",
        flows(rec)?,
    )?;
    add("dcqcn.svg", "DCQCN rate R_C per flow", dcqcn(rec)?)?;
    add(
        "ecn.svg",
        "ECN: the share of frames each WRED queue marked CE (over the last 1/100 of the run)",
        ecn(rec)?,
    )?;
    add(
        "links.svg",
        "Utilisation of each switch port that sent traffic",
        links(rec)?,
    )?;
    let index = dir.join("index.html");
    std::fs::write(&index, page(title, &figures, report_text))
        .map_err(|e| format!("{}: {e}", index.display()))?;
    files.push(index);
    Ok(files)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The self-contained page: figures inline (captioned), then the report text.
pub(crate) fn page(title: &str, figures: &[(String, String)], report: &str) -> String {
    let mut o = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title>\n<style>body{{font-family:sans-serif;margin:2em;max-width:1100px}}figure{{margin:1.5em 0}}figcaption{{font-weight:bold;margin-bottom:.5em}}pre{{background:#f6f6f6;padding:1em;overflow-x:auto;font-size:12px}}</style></head><body>\n<h1>{t}</h1>\n",
        t = escape(title)
    );
    for (i, (caption, svg)) in figures.iter().enumerate() {
        // Inline, so the page needs nothing else; the SVG's XML prolog is dropped.
        let body = svg.find("<svg").map_or(svg.as_str(), |k| &svg[k..]);
        o += &format!(
            "<figure id=\"fig{i}\"><figcaption>{}</figcaption>\n{body}\n</figure>\n",
            escape(caption)
        );
    }
    o += &format!(
        "<h2>Report</h2>\n<pre>{}</pre>\n</body></html>\n",
        escape(report)
    );
    o
}

/// Draw a chart's legend box.
pub(crate) fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
) -> Res<()> {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)
}

/// A time axis in µs over the recording.
fn span(rec: &Recording) -> (f64, f64) {
    let lo = rec.times.first().map_or(0.0, |t| us(*t));
    let hi = rec.times.last().map_or(1.0, |t| us(*t)).max(lo + 1e-3);
    (lo, hi)
}

fn buffers(rec: &Recording) -> Res<Option<String>> {
    let mut active: Vec<_> = rec
        .ports
        .iter()
        .filter(|p| {
            p.queue
                .iter()
                .chain(&p.pg_shared)
                .chain(&p.pg_headroom)
                .any(|v| *v > 0)
        })
        .collect();
    if active.is_empty() || rec.times.is_empty() {
        return Ok(None);
    }
    active.sort_by_key(|p| std::cmp::Reverse(p.queue.iter().chain(&p.pg_shared).max().copied()));
    active.truncate(MAX_PANELS);
    let (lo, hi) = span(rec);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, PANEL_H * active.len() as u32))
            .into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        for (area, p) in root.split_evenly((active.len(), 1)).iter().zip(&active) {
            // The y range covers the series that are not all zero (and the XOFF/XON
            // levels), so that a zoomed window shows the XOFF/XON cycle itself.
            // A series far below the others (headroom next to megabytes of shared use) is
            // left out of the range rather than flattening the rest.
            let all = [
                &p.queue,
                &p.pg_shared,
                &p.pg_headroom,
                &p.xoff_level,
                &p.xon_level,
            ];
            let peak = |v: &Vec<u64>| {
                v.iter()
                    .copied()
                    .filter(|x| *x < 1 << 40)
                    .max()
                    .unwrap_or(0)
            };
            let top = all.iter().map(|v| peak(v)).max().unwrap_or(0);
            let shown: Vec<u64> = all
                .into_iter()
                .filter(|v| peak(v) > 0 && peak(v) * 20 >= top)
                .flat_map(|v| v.iter().copied().filter(|x| *x < 1 << 40))
                .collect();
            let lo_b = shown.iter().copied().min().unwrap_or(0) as f64 / 1e3;
            let hi_b = shown.iter().copied().max().unwrap_or(1) as f64 / 1e3;
            let pad = ((hi_b - lo_b) * 0.05).max(1.0);
            let (y0, y1) = ((lo_b - pad).max(0.0), hi_b + pad);
            let mut chart = ChartBuilder::on(area)
                .caption(
                    format!("{} priority {}", p.port, p.prio),
                    ("sans-serif", 16),
                )
                .margin(8)
                .x_label_area_size(30)
                .y_label_area_size(60)
                .build_cartesian_2d(lo..hi, y0..y1)
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc("µs")
                .y_desc("KB")
                .draw()
                .map_err(err)?;
            let series = |v: &[u64]| -> Vec<(f64, f64)> {
                rec.times
                    .iter()
                    .zip(v)
                    .map(|(t, b)| (us(*t), *b as f64 / 1e3))
                    .collect()
            };
            for (name, v, color) in [
                ("queue", &p.queue, BLUE),
                ("PG shared", &p.pg_shared, GREEN),
                ("PG headroom", &p.pg_headroom, RED),
            ] {
                chart
                    .draw_series(LineSeries::new(series(v), color.stroke_width(2)))
                    .map_err(err)?
                    .label(name)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
            }
            let level =
                |v: &[u64], style: ShapeStyle| DashedLineSeries::new(series(v), 6, 4, style);
            chart
                .draw_series(level(&p.xoff_level, BLACK.stroke_width(1)))
                .map_err(err)?
                .label("XOFF level")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLACK));
            chart
                .draw_series(DashedLineSeries::new(
                    series(&p.xon_level),
                    2,
                    3,
                    MAGENTA.stroke_width(1),
                ))
                .map_err(err)?
                .label("XON level")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], MAGENTA));
            legend(&mut chart)?;
        }
        root.present().map_err(err)?;
    }
    Ok(Some(svg))
}

/// Contiguous runs of `true` as (from, to) in µs.
fn runs(times: &[lossless_buffer_model::Time], on: impl Fn(usize) -> bool) -> Vec<(f64, f64)> {
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
fn ticks(times: &[lossless_buffer_model::Time], count: impl Fn(usize) -> u64) -> Vec<f64> {
    (1..times.len())
        .filter(|i| count(*i) > count(i - 1))
        .map(|i| us(times[i]))
        .collect()
}

/// A row of the pause timeline: label, colour, intervals in µs, PFC frame ticks in µs.
type Row = (String, RGBColor, Vec<(f64, f64)>, Vec<f64>);

fn pauses(rec: &Recording) -> Res<Option<String>> {
    let mut rows: Vec<Row> = Vec::new();
    let mut push = |label: String, color: RGBColor, runs: Vec<(f64, f64)>, ticks: Vec<f64>| {
        if !runs.is_empty() || !ticks.is_empty() {
            rows.push((label, color, runs, ticks));
        }
    };
    for p in &rec.ports {
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
            RGBColor(230, 140, 0),
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
    if rows.is_empty() || rec.times.is_empty() {
        return Ok(None);
    }
    let (lo, hi) = span(rec);
    let n = rows.len();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, 80 + 24 * n as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(260)
            .build_cartesian_2d(lo..hi, 0.0..n as f64)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("µs")
            .y_labels(0)
            .disable_y_mesh()
            .draw()
            .map_err(err)?;
        // Row labels in the left margin, one per row, at the row's centre.
        for (k, (label, ..)) in rows.iter().enumerate() {
            let y = (n - 1 - k) as f64 + 0.5;
            let (_, py) = chart.backend_coord(&(lo, y));
            root.draw(&Text::new(
                label.clone(),
                (12, py - 6),
                ("sans-serif", 12).into_font(),
            ))
            .map_err(err)?;
        }
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
            chart
                .draw_series(
                    marks
                        .iter()
                        .map(|t| PathElement::new(vec![(*t, y + 0.05), (*t, y + 0.95)], BLACK)),
                )
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(Some(svg))
}

/// A line chart of several series over the recording's time axis.
fn lines(rec: &Recording, series: &[(String, Vec<f64>)], y_desc: &str) -> Res<Option<String>> {
    if series.is_empty() || rec.times.len() < 2 {
        return Ok(None);
    }
    let (lo, hi) = span(rec);
    let top = series
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .fold(0.0f64, f64::max)
        .max(1e-9);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(60)
            .build_cartesian_2d(lo..hi, 0.0..top * 1.1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("µs")
            .y_desc(y_desc)
            .draw()
            .map_err(err)?;
        for (i, (name, v)) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let pts: Vec<(f64, f64)> = rec
                .times
                .iter()
                .map(|t| us(*t))
                .zip(v.iter().copied())
                .collect();
            chart
                .draw_series(LineSeries::new(pts, color.stroke_width(2)))
                .map_err(err)?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
        }
        legend(&mut chart)?;
        root.present().map_err(err)?;
    }
    Ok(Some(svg))
}

/// For each sample i of a series of `n`, `f(i, j)` with j the sample 1/100 of the samples
/// (at least one interval) before it: counts are taken over that window because a frame
/// counts when it starts, so a single interval would alias into 0 and bursts.
fn sliding(n: usize, f: impl Fn(usize, usize) -> f64) -> Vec<f64> {
    let w = (n / 100).max(1);
    (0..n).map(|i| f(i, i.saturating_sub(w))).collect()
}

/// Rates from cumulative byte counts, Gbit/s, over the [`sliding`] window.
fn rates(rec: &Recording, cumulative: &[u64]) -> Vec<f64> {
    sliding(cumulative.len().min(rec.times.len()), |i, j| {
        let dt = (rec.times[i] - rec.times[j]).as_ps() as f64 / 1e12;
        let db = cumulative[i].saturating_sub(cumulative[j]) as f64 * 8.0;
        if dt > 0.0 {
            db / dt / 1e9
        } else {
            0.0
        }
    })
}

fn flows(rec: &Recording) -> Res<Option<String>> {
    let s: Vec<(String, Vec<f64>)> = rec
        .flow_rx
        .iter()
        .filter(|(_, v)| v.last().is_some_and(|b| *b > 0))
        .map(|(n, v)| (n.clone(), rates(rec, v)))
        .collect();
    lines(rec, &s, "Gbit/s")
}

/// Per WRED queue that marked anything, the percentage of its frames marked CE, over the
/// [`sliding`] window of the rates.
fn ecn(rec: &Recording) -> Res<Option<String>> {
    let s: Vec<(String, Vec<f64>)> = rec
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
            (format!("{} q{}", m.port, m.queue), share)
        })
        .collect();
    lines(rec, &s, "% of frames marked CE")
}

fn dcqcn(rec: &Recording) -> Res<Option<String>> {
    let s: Vec<(String, Vec<f64>)> = rec
        .dcqcn_rate
        .iter()
        .map(|(n, v)| (n.clone(), v.iter().map(|r| r / 1e9).collect()))
        .collect();
    lines(rec, &s, "Gbit/s")
}

fn links(rec: &Recording) -> Res<Option<String>> {
    let s: Vec<(String, Vec<f64>)> = rec
        .port_tx
        .iter()
        .filter(|(_, _, v)| v.last().is_some_and(|b| *b > 0))
        .map(|(n, speed, v)| {
            let r = rates(rec, v)
                .into_iter()
                .map(|g| g * 1e9 / *speed as f64 * 100.0)
                .collect();
            (n.clone(), r)
        })
        .collect();
    lines(rec, &s, "% of line rate")
}
