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

/// Are the swept values quantities in order (`5m, 100m, 2000m`; `1e-5, 1e-4`), which a
/// line may join, or names (`pfc, cbfc`) or codes in no order (DSCPs `3, 8, 1`), which it
/// may not? A value's number is what it starts with; its unit must be the others'.
fn quantities(values: &[String]) -> bool {
    let parsed: Option<Vec<(f64, &str)>> = values
        .iter()
        .map(|v| {
            let v = v.trim();
            let b = v.as_bytes();
            let end = (0..b.len())
                .find(|&i| {
                    let c = b[i];
                    let after_e = i > 0 && matches!(b[i - 1], b'e' | b'E');
                    !(c.is_ascii_digit()
                        || c == b'.'
                        || ((i == 0 || after_e) && (c == b'-' || c == b'+'))
                        || ((c == b'e' || c == b'E') && i > 0))
                })
                .unwrap_or(b.len());
            v[..end].parse::<f64>().ok().map(|x| (x, &v[end..]))
        })
        .collect();
    let Some(p) = parsed else {
        return false;
    };
    let same_unit = p.windows(2).all(|w| w[0].1 == w[1].1);
    let up = p.windows(2).all(|w| w[0].0 < w[1].0);
    let down = p.windows(2).all(|w| w[0].0 > w[1].0);
    same_unit && (up || down)
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

/// How one metric's panel is drawn.
struct Panel2<'a> {
    caption: &'a str,
    key: &'a str,
    label: &'a dyn Fn(&SegmentValue<usize>) -> String,
    joined: bool,
    n: usize,
}

/// Draw one metric's columns `pts` on `area` with the y axis `y` (linear or log).
fn panel<DB: DrawingBackend, Y>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    s: &Panel2,
    y: Y,
    pts: &[Vec<(SegmentValue<usize>, f64)>],
) -> Res<()>
where
    Y: plotters::coord::ranged1d::AsRangedCoord<Value = f64>,
    Y::CoordDescType: plotters::coord::ranged1d::ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .margin_right(20)
        .caption(s.caption, ("sans-serif", 16))
        .x_label_area_size(30)
        .y_label_area_size(70)
        .build_cartesian_2d((0..s.n - 1).into_segmented(), y)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_labels(s.n + 1)
        .x_label_formatter(s.label)
        .y_label_formatter(&|v| num(*v))
        .x_desc(s.key)
        .draw()
        .map_err(err)?;
    for (i, col) in pts.iter().enumerate() {
        let color = palette(i);
        if s.joined {
            chart
                .draw_series(LineSeries::new(col.clone(), color.stroke_width(2)))
                .map_err(err)?;
        }
        chart
            .draw_series(
                col.iter()
                    .map(|p| Circle::new(p.clone(), 4, color.filled())),
            )
            .map_err(err)?;
    }
    Ok(())
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
            let caption = format!("{}{unit}", p.metric);
            let pts: Vec<Vec<(SegmentValue<usize>, f64)>> = p
                .columns
                .iter()
                .map(|(_, v)| {
                    v.iter()
                        .enumerate()
                        .filter_map(|(x, y)| y.map(|y| (SegmentValue::CenterOf(x), y / scale)))
                        .collect()
                })
                .collect();
            // Values that span two decades or more (a 1 ms tail beside a 4 s one) go on a
            // log axis, where both can be read.
            let positive = pts.iter().flatten().map(|p| p.1).filter(|y| *y > 0.0);
            let smallest = positive.clone().fold(f64::MAX, f64::min);
            let all_positive = pts.iter().flatten().all(|p| p.1 > 0.0);
            let style = Panel2 {
                caption: &caption,
                key,
                label: &label,
                joined,
                n,
            };
            if all_positive && smallest < f64::MAX && hi / smallest >= 100.0 {
                let caption = format!("{caption}, log scale");
                let style = Panel2 {
                    caption: &caption,
                    ..style
                };
                let y = (smallest / 2.0..hi * 2.0).log_scale();
                panel(&area, &style, y, &pts)?;
            } else {
                panel(&area, &style, lo..hi * 1.1, &pts)?;
            }
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn only_quantities_in_order_are_joined() {
        assert!(quantities(&v(&["5m", "100m", "2000m"])));
        assert!(quantities(&v(&["0", "1e-5", "1e-4", "1e-3"])));
        assert!(quantities(&v(&["8KiB", "12KiB", "16KiB"])));
        assert!(!quantities(&v(&["pfc", "cbfc"])), "names");
        assert!(!quantities(&v(&["3", "8", "1"])), "codes in no order");
        assert!(!quantities(&v(&["5m", "100us"])), "units differ");
    }

    #[test]
    fn legends_name_what_a_star_stood_for() {
        assert_eq!(
            legend("flows.*.throughput_bps", "flows.a.throughput_bps"),
            "a"
        );
        assert_eq!(legend("totals.drops", "totals.drops"), "drops");
        assert_eq!(
            legend("max(flows.*.fct_ps)", "max(flows.*.fct_ps)"),
            "fct_ps"
        );
        assert!(
            legend("x.*.y", &format!("x.{}.y", "n".repeat(40)))
                .chars()
                .count()
                <= 32
        );
        assert_eq!(unit_of("collectives.ar.time_ps.p99", 4e12).1, " (ms)");
    }
}
