//! `lossless run FILE --sweep KEY=… --plot DIR`: `DIR/sweep.svg`, one panel per metric
//! (each of its columns a line over the swept values, in the order given), and
//! `DIR/index.html` with the figure and the table. Each metric is drawn in its unit, scaled:
//! throughputs (`…_bps`) in Gbit/s, times (`…_ps`) in µs or ms, sizes (`…_bytes`) in KB or
//! MB; metrics that are not numbers (lists, maps) stay in the table only.

use super::plot::{
    err, header, header_h, num, page, palette, with_legend, Entry, Figure, Res, Stroke, W,
};
use plotters::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

const PANEL_H: u32 = 260;

/// One value of a sweep row: the index of the metric path that produced it, its column
/// name and the value.
pub type Cell = (usize, String, Value);

/// One metric's columns, each with its value per swept value (None: missing or not a
/// number).
pub struct Panel {
    /// The metric path as given (`flows.*.throughput_bps`).
    pub metric: String,
    /// Column name and its values, one per swept value.
    pub columns: Vec<(String, Vec<Option<f64>>)>,
}

/// The panels of a sweep: per metric path, the columns it produced, numbers only.
pub fn panels(metrics: &[String], rows: &[Vec<Cell>]) -> Vec<Panel> {
    let mut out: Vec<Panel> = Vec::new();
    for (m, metric) in metrics.iter().enumerate() {
        let mut columns: Vec<(String, Vec<Option<f64>>)> = Vec::new();
        for (r, cells) in rows.iter().enumerate() {
            for (_, col, v) in cells.iter().filter(|(i, ..)| *i == m) {
                let Some(x) = v.as_f64() else { continue };
                let at = match columns.iter().position(|(c, _)| c == col) {
                    Some(i) => i,
                    None => {
                        columns.push((col.clone(), vec![None; rows.len()]));
                        columns.len() - 1
                    }
                };
                columns[at].1[r] = Some(x);
            }
        }
        if !columns.is_empty() {
            out.push(Panel {
                metric: metric.clone(),
                columns,
            });
        }
    }
    out
}

/// Write `sweep.svg` (when a metric is numeric) and `index.html` into `dir`.
pub fn write(
    dir: &Path,
    title: &str,
    key: &str,
    values: &[String],
    panels: &[Panel],
    table: &str,
) -> Res<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut figures = Vec::new();
    if !panels.is_empty() {
        let f = Figure {
            title: format!("{title}: each metric against {key}"),
            caption: format!(
                "One panel per metric, its columns as lines over the swept values of {key} (points only where the values are names, not quantities); each metric in its unit"
            ),
            axis: None,
        };
        let svg = draw(&f, key, values, panels)?;
        let path = dir.join("sweep.svg");
        lossless_sys::output::write_whole(&path, svg.as_bytes()).map_err(|e| e.to_string())?;
        files.push(path);
        figures.push((format!("Each metric against {key}"), svg));
    }
    let index = dir.join("index.html");
    lossless_sys::output::write_whole(&index, page(title, &figures, table).as_bytes())
        .map_err(|e| e.to_string())?;
    files.push(index);
    Ok(files)
}

/// How a metric's values are drawn: the divisor and the unit to name, from the unit its
/// path names (the last segment ending in `_bps`, `_ps` or `_bytes`, so that
/// `collectives.ar.time_ps.p99` is a time) and the largest value.
fn unit_of(metric: &str, largest: f64) -> (f64, &'static str) {
    let inner = crate::sweep::fold_of(metric).1;
    let metric = inner
        .rsplit('.')
        .find(|seg| seg.ends_with("_bps") || seg.ends_with("_ps") || seg.ends_with("_bytes"))
        .unwrap_or(inner);
    if metric.ends_with("_bps") {
        (1e9, " (Gb/s)")
    } else if metric.ends_with("_ps") {
        if largest >= 1e9 {
            (1e9, " (ms)")
        } else {
            (1e6, " (µs)")
        }
    } else if metric.ends_with("_bytes") {
        if largest >= 1e6 {
            (1e6, " (MB)")
        } else {
            (1e3, " (KB)")
        }
    } else {
        (1.0, "")
    }
}

/// Are the swept values quantities (`5m`, `1e-4`, `3`), which a line may join, or names
/// (`pfc`, `cbfc`), which it may not?
fn quantities(values: &[String]) -> bool {
    values.iter().all(|v| {
        v.trim_start_matches(['-', '+'])
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || c == '.')
    })
}

/// A column's legend: the parts of its path a `*` of the metric stood for (`a` for
/// `flows.a.throughput_bps` of `flows.*.throughput_bps`), else the metric's last segment;
/// at most 32 characters, so that it fits beside the chart.
fn legend(metric: &str, column: &str) -> String {
    let inner = crate::sweep::fold_of(metric).1;
    let stars: Vec<&str> = inner
        .split('.')
        .zip(column.split('.'))
        .filter(|(m, _)| *m == "*")
        .map(|(_, c)| c)
        .collect();
    let label = if stars.is_empty() || column == metric {
        inner.rsplit('.').next().unwrap_or(inner).to_string()
    } else {
        stars.join(".")
    };
    if label.chars().count() > 32 {
        let tail: String = label
            .chars()
            .rev()
            .take(31)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        format!("…{tail}")
    } else {
        label
    }
}

fn draw(f: &Figure, key: &str, values: &[String], panels: &[Panel]) -> Res<String> {
    let mut svg = String::new();
    {
        let h = PANEL_H * panels.len() as u32;
        let root = SVGBackend::with_string(&mut svg, (W, h + header_h(f))).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = header(&root, f)?;
        let joined = quantities(values);
        let n = values.len();
        // One segment per swept value, labelled with it.
        let label = |x: &SegmentValue<usize>| match x {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                values.get(*i).cloned().unwrap_or_default()
            }
            SegmentValue::Last => String::new(),
        };
        for (area, p) in root.split_evenly((panels.len(), 1)).iter().zip(panels) {
            let all = p
                .columns
                .iter()
                .flat_map(|(_, v)| v.iter().flatten().copied());
            let (scale, unit) =
                unit_of(&p.metric, all.clone().fold(0.0, |m: f64, y| m.max(y.abs())));
            let (lo, hi) = all.fold((f64::MAX, f64::MIN), |(a, b), y| (a.min(y), b.max(y)));
            let (lo, hi) = ((lo / scale).min(0.0), hi / scale);
            // A flat metric (all 0, say) still gets an axis with distinct ticks.
            let hi = if hi - lo < 1e-9 {
                lo + (lo.abs() * 0.1).max(1.0)
            } else {
                hi
            };
            let entries: Vec<Entry> = p
                .columns
                .iter()
                .enumerate()
                .map(|(i, (name, _))| (legend(&p.metric, name), palette(i), Stroke::Solid))
                .collect();
            let area = with_legend(area, &entries)?;
            let mut chart = ChartBuilder::on(&area)
                .margin(10)
                .margin_right(20)
                .caption(format!("{}{unit}", p.metric), ("sans-serif", 16))
                .x_label_area_size(30)
                .y_label_area_size(70)
                .build_cartesian_2d((0..n - 1).into_segmented(), lo..hi * 1.1)
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_labels(n + 1)
                .x_label_formatter(&label)
                .y_label_formatter(&|v| num(*v))
                .x_desc(key)
                .draw()
                .map_err(err)?;
            for (i, (_, v)) in p.columns.iter().enumerate() {
                let color = palette(i);
                let pts: Vec<(SegmentValue<usize>, f64)> = v
                    .iter()
                    .enumerate()
                    .filter_map(|(x, y)| y.map(|y| (SegmentValue::CenterOf(x), y / scale)))
                    .collect();
                if joined {
                    chart
                        .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                        .map_err(err)?;
                }
                chart
                    .draw_series(
                        pts.iter()
                            .map(|p| Circle::new(p.clone(), 4, color.filled())),
                    )
                    .map_err(err)?;
            }
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}
