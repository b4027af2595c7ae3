//! `lossless run FILE --plot DIR`: SVG figures of a recording (plotters, SVG backend) and
//! `DIR/index.html`, one self-contained page (figures inline, no network fetches) with the
//! text report. Legends sit beside the plot, never over it; a given `measure` window is
//! shaded; every rate is counted over wire time, so none exceeds its link.
//!
//! * [`buffers`]: `buffers.svg`, one panel per ingress PG that held data (shared use with
//!   its XOFF and XON levels; headroom on its own axis with its capacity), per egress queue
//!   that held data (with WRED Kmin/Kmax), and per host receive buffer (with its levels).
//! * [`timeline`]: `pauses.svg`, when each port and host was paused, held its peer in
//!   XOFF or was stormed, with PFC frames as ticks, and when a deadlock formed and was
//!   detected.
//! * [`rates`]: `flows.svg` (throughput per flow), `links.svg` (utilisation per port),
//!   `dcqcn.svg` (R_C per DCQCN flow).
//! * [`transport`]: `transport.svg` (RC packets re-sent per queue pair over time) and
//!   `iterations.svg` (each collective iteration's time), with a line at every
//!   iteration's end.
//! * [`counts`]: `ecn.svg` (share marked CE per WRED queue), `drops.svg` (drops by reason
//!   over time, lossless ones in red), `groups.svg` (each group member's share of its
//!   group's bytes).

mod buffers;
mod counts;
mod rates;
mod timeline;
mod transport;

pub use rates::{flow_rates, link_utilisation, rate_window, RatePoint};

use crate::sim::recorder::Recording;
use lossless_buffer_model::Time;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

pub(crate) const W: u32 = 1100;
/// Width of the strip right of a chart that holds its legend.
const LEGEND_W: u32 = 230;

pub(crate) type Res<T> = Result<T, String>;

pub(crate) fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn us(t: Time) -> f64 {
    t.as_ps() as f64 / 1e6
}

/// What the figures mark besides the recording: the measurement window when the scenario
/// gives one, and each deadlock's formation and detection.
#[derive(Clone, Debug, Default)]
pub struct Marks {
    /// The `measure` window (shaded).
    pub measure: Option<(Time, Time)>,
    /// Per deadlock found: when it formed and when it was detected.
    pub deadlocks: Vec<(Time, Time)>,
    /// Per collective: its name and, per completed iteration, when it ended and how long
    /// it took.
    pub collectives: Vec<(String, Vec<(Time, Time)>)>,
}

/// The recording and the marks, with the time axis of every figure (µs).
pub(crate) struct Ctx<'a> {
    rec: &'a Recording,
    marks: &'a Marks,
    lo: f64,
    hi: f64,
}

impl Ctx<'_> {
    /// Time axes are in µs; over more than 10 ms their labels are in ms.
    fn in_ms(&self) -> bool {
        self.hi - self.lo > 10_000.0
    }

    /// The time axis's unit.
    pub(crate) fn x_unit(&self) -> &'static str {
        if self.in_ms() {
            "ms"
        } else {
            "µs"
        }
    }

    /// A time axis label for `x` µs.
    pub(crate) fn x_label(&self, x: f64) -> String {
        num(if self.in_ms() { x / 1e3 } else { x })
    }
}

/// Write the figures and index.html into `dir` (which exists); returns the files written.
pub fn write(
    rec: &Recording,
    marks: &Marks,
    dir: &Path,
    title: &str,
    report_text: &str,
) -> Res<Vec<PathBuf>> {
    let lo = rec.times.first().map_or(0.0, |t| us(*t));
    let hi = rec.times.last().map_or(1.0, |t| us(*t)).max(lo + 1e-3);
    let cx = Ctx { rec, marks, lo, hi };
    let every = match rec.times.as_slice() {
        [a, b, ..] => *b - *a,
        _ => Time::ZERO,
    };
    let mut figures: Vec<(String, String)> = Vec::new();
    let mut files = Vec::new();
    let mut add = |name: &str, caption: String, svg: Option<String>| -> Res<()> {
        let Some(svg) = svg else { return Ok(()) };
        let path = dir.join(name);
        lossless_sys::output::write_whole(&path, svg.as_bytes()).map_err(|e| e.to_string())?;
        files.push(path);
        figures.push((caption, svg));
        Ok(())
    };
    let averaged = Time(every.as_ps() * rates::rate_window(rec) as u64);
    let shaded = if marks.measure.is_some() {
        "; shaded: the measure window"
    } else {
        ""
    };
    add("buffers.svg", format!("Buffers that held data: ingress PGs (shared use, left axis, with the XOFF level dashed and the XON level dotted; headroom on the right axis with its capacity), egress queues (with WRED Kmin/Kmax), host receive buffers (with their XOFF and XON levels), sampled every {every}{shaded}"), buffers::figure(&cx)?)?;
    add("pauses.svg", format!("Pauses: when each port or host could not send a priority (red), when a switch port held its peer in XOFF (blue), when the PFC watchdog held a queue stormed (orange); black ticks: PFC frames received (paused rows) or sent, in the sample interval of {every} ending there (a grey bar where they come too close to draw apart); purple lines: a deadlock formed (dashed) and was detected{shaded}"), timeline::figure(&cx)?)?;
    add("flows.svg", format!("Throughput per flow: frame bits received over the last {averaged} (samples {every} apart), each frame counted over its wire time, so no point exceeds the link's rate (dashed){shaded}"), rates::flows(&cx)?)?;
    add(
        "dcqcn.svg",
        format!("DCQCN rate R_C per flow, sampled every {every}{shaded}"),
        rates::dcqcn(&cx)?,
    )?;
    add("ecn.svg", format!("ECN: the share of frames each WRED queue sent marked CE, over the last {} of samples{shaded}", counts::window_text(rec)), counts::ecn(&cx)?)?;
    add("drops.svg", format!("Drops by switch and reason, in all, up to each sample ({every} apart); lossless drops (which must stay 0) in red{shaded}"), counts::drops(&cx)?)?;
    add("groups.svg", format!("Next-hop groups: each member's share of the bytes its group steered, over the last {} of samples{shaded}", counts::window_text(rec)), counts::groups(&cx)?)?;
    add("transport.svg", format!("RC re-sends: packets each queue pair had sent again by each sample ({every} apart), for the queue pairs that re-sent any{}{shaded}", transport::iteration_caption(marks)), transport::resent(&cx)?)?;
    add("iterations.svg", format!("Collectives: each iteration's time (from the previous one's end), drawn at its end{}{shaded}", transport::iteration_caption(marks)), transport::iterations(&cx)?)?;
    add("links.svg", format!("Utilisation of each switch port that sent traffic: the share of the last {averaged} its transmitter was busy (samples {every} apart){shaded}"), rates::links(&cx)?)?;
    let index = dir.join("index.html");
    lossless_sys::output::write_whole(&index, page(title, &figures, report_text).as_bytes())
        .map_err(|e| e.to_string())?;
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
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title>\n<style>body{{font-family:sans-serif;margin:2em;max-width:1200px}}figure{{margin:1.5em 0}}figcaption{{font-weight:bold;margin-bottom:.5em}}pre{{background:#f6f6f6;padding:1em;overflow-x:auto;font-size:12px}}</style></head><body>\n<h1>{t}</h1>\n",
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

/// A legend entry: its label, colour and whether its line is dashed.
pub(crate) type Entry = (String, RGBColor, bool);

/// Split `area` into the chart's part and the legend strip on its right, and draw the
/// legend there (so it never covers data).
pub(crate) fn with_legend<'a, DB: DrawingBackend + 'a>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    entries: &[Entry],
) -> Res<DrawingArea<DB, plotters::coord::Shift>> {
    let (w, _) = area.dim_in_pixel();
    let (left, right) = area.split_horizontally(w.saturating_sub(LEGEND_W));
    for (k, (label, color, dashed)) in entries.iter().enumerate() {
        let y = 34 + 18 * k as i32;
        let style = color.stroke_width(2);
        if *dashed {
            for x in (8..30).step_by(8) {
                right
                    .draw(&PathElement::new(vec![(x, y), (x + 4, y)], style))
                    .map_err(err)?;
            }
        } else {
            right
                .draw(&PathElement::new(vec![(8, y), (30, y)], style))
                .map_err(err)?;
        }
        right
            .draw(&Text::new(
                label.clone(),
                (36, y - 6),
                ("sans-serif", 12).into_font(),
            ))
            .map_err(err)?;
    }
    Ok(left)
}

/// A number for an axis label: no trailing dot or zeros.
pub(crate) fn num(x: f64) -> String {
    let s = if x.abs() >= 100.0 || x == x.trunc() {
        format!("{x:.0}")
    } else if x.abs() >= 1.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The chart type every time-axis figure uses.
pub(crate) type TimeChart<'a, DB> =
    ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Shade the `measure` window on `chart` over `y0..y1`.
pub(crate) fn shade<DB: DrawingBackend>(
    cx: &Ctx,
    chart: &mut TimeChart<DB>,
    y0: f64,
    y1: f64,
) -> Res<()> {
    if let Some((a, b)) = cx.marks.measure {
        let (a, b) = (us(a).max(cx.lo), us(b).min(cx.hi));
        if a < b {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(a, y0), (b, y1)],
                    RGBColor(235, 235, 235).filled(),
                )))
                .map_err(err)?;
        }
    }
    Ok(())
}

/// A line chart of several series (points in µs) on `area`, with a side legend, an
/// optional dashed reference line per entry in `refs`, the window shaded.
pub(crate) fn lines<DB: DrawingBackend>(
    cx: &Ctx,
    area: &DrawingArea<DB, plotters::coord::Shift>,
    series: &[(String, Vec<(f64, f64)>)],
    refs: &[(String, f64)],
    y_desc: &str,
) -> Res<()> {
    lines_marked(cx, area, series, refs, y_desc, &[])
}

/// [`lines`] with a thin vertical line at each time (µs) of `marks`, in its colour.
pub(crate) fn lines_marked<DB: DrawingBackend>(
    cx: &Ctx,
    area: &DrawingArea<DB, plotters::coord::Shift>,
    series: &[(String, Vec<(f64, f64)>)],
    refs: &[(String, f64)],
    y_desc: &str,
    marks: &[(f64, RGBColor)],
) -> Res<()> {
    let top = series
        .iter()
        .flat_map(|(_, v)| v.iter().map(|p| p.1))
        .chain(refs.iter().map(|r| r.1))
        .fold(0.0f64, f64::max)
        .max(1e-9);
    let mut entries: Vec<Entry> = series
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.clone(), palette(i), false))
        .collect();
    entries.extend(
        refs.iter()
            .map(|(n, _)| (n.clone(), RGBColor(120, 120, 120), true)),
    );
    let area = with_legend(area, &entries)?;
    let mut chart = ChartBuilder::on(&area)
        .margin(10)
        .margin_right(20)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(cx.lo..cx.hi, 0.0..top * 1.1)
        .map_err(err)?;
    shade(cx, &mut chart, 0.0, top * 1.1)?;
    chart
        .configure_mesh()
        .x_desc(cx.x_unit())
        .y_desc(y_desc)
        .x_label_formatter(&|v| cx.x_label(*v))
        .y_label_formatter(&|v| num(*v))
        .draw()
        .map_err(err)?;
    for (i, (_, pts)) in series.iter().enumerate() {
        chart
            .draw_series(LineSeries::new(pts.clone(), palette(i).stroke_width(2)))
            .map_err(err)?;
    }
    for (_, y) in refs {
        chart
            .draw_series(DashedLineSeries::new(
                vec![(cx.lo, *y), (cx.hi, *y)],
                6,
                4,
                RGBColor(120, 120, 120).stroke_width(1),
            ))
            .map_err(err)?;
    }
    // A mark after the last sample but before the next one (the run's own end) is drawn
    // at the right edge.
    let step = match cx.rec.times.as_slice() {
        [a, b, ..] => us(*b) - us(*a),
        _ => 0.0,
    };
    for (x, color) in marks
        .iter()
        .filter(|(x, _)| (cx.lo..=cx.hi + step).contains(x))
    {
        let x = x.min(cx.hi);
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x, 0.0), (x, top * 1.1)],
                color.stroke_width(1),
            )))
            .map_err(err)?;
    }
    Ok(())
}

/// The `i`-th series colour.
pub(crate) fn palette(i: usize) -> RGBColor {
    let c = Palette99::pick(i).to_rgba();
    RGBColor(c.0, c.1, c.2)
}

/// A figure of one chart, `h` pixels high, drawn by `draw`; None when `draw` draws nothing.
pub(crate) fn one(
    h: u32,
    draw: impl FnOnce(&DrawingArea<SVGBackend, plotters::coord::Shift>) -> Res<bool>,
) -> Res<Option<String>> {
    let mut svg = String::new();
    let drawn = {
        let root = SVGBackend::with_string(&mut svg, (W, h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let drawn = draw(&root)?;
        root.present().map_err(err)?;
        drawn
    };
    Ok(drawn.then_some(svg))
}
