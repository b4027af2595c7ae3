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
//!   group's bytes), `credits.svg` (CBFC credits in use per channel against its limit),
//!   `llr.svg` (LLR NACKs sent and frames replayed per port over time).

mod axis;
mod buffers;
mod counts;
mod rates;
mod timeline;
mod transport;

pub use axis::TimeAxis;
pub use rates::{flow_rates, link_utilisation, rate_window, RatePoint};

use crate::sim::recorder::Recording;
use lossless_buffer_model::Time;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

pub(crate) const W: u32 = 1100;
/// Width of the strip right of a chart that holds its legend.
const LEGEND_W: u32 = 250;
/// Series drawn on one panel; more are drawn as small multiples, this many to a panel.
pub(crate) const PER_PANEL: usize = 6;
/// Height of a panel of lines.
pub(crate) const LINES_H: u32 = 300;

pub(crate) type Res<T> = Result<T, String>;

pub(crate) fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

pub(crate) fn us(t: Time) -> f64 {
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
    /// Per collective: its name and its completed iterations.
    pub collectives: Vec<(String, Vec<Iteration>)>,
}

/// A collective's iteration, as the report has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Iteration {
    /// When its last rank finished it.
    pub end: Time,
    /// From the previous iteration's end (or the start).
    pub took: Time,
    /// Packets its queue pairs re-sent during it.
    pub resent: u64,
}

/// The recording and the marks, with the time axis of every figure.
pub(crate) struct Ctx<'a> {
    rec: &'a Recording,
    marks: &'a Marks,
    axis: TimeAxis,
}

impl Ctx<'_> {
    /// The axis position of real time `t` µs.
    pub(crate) fn x(&self, t: f64) -> f64 {
        self.axis.u(t)
    }

    /// The axis position of sample `i`.
    pub(crate) fn xi(&self, i: usize) -> f64 {
        self.axis.at(self.rec.times[i])
    }

    /// The x range of every time chart.
    pub(crate) fn xr(&self) -> std::ops::Range<f64> {
        self.axis.range()
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
    let cx = Ctx {
        rec,
        marks,
        axis: TimeAxis::new(rec, lo, hi),
    };
    let every = rec.interval;
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
    let shaded = if marks.measure.is_some() {
        "; shaded: the measure window"
    } else {
        ""
    };
    let sampled = sampling_text(&cx);
    let averaged = rates::window_text(rec);
    let extent = Some((cx.axis.lo, cx.axis.hi));
    let fig = |name: &str, caption: String| Figure {
        title: format!("{title}: {name}"),
        caption,
        axis: (name != "iterations").then_some(extent).flatten(),
    };
    let f = fig("buffers", format!("Buffers that held data, {sampled}: each ingress PG's shared use against its XOFF level (dashed) and XON level (dotted), and below it, when it used any, its headroom against its capacity (dashed); each egress queue against WRED's Kmin and Kmax; each host's receive buffer against its XOFF and XON levels{shaded}"));
    add("buffers.svg", f.caption.clone(), buffers::figure(&cx, &f)?)?;
    let f = fig("pauses", format!("Pauses, {sampled}: when each port or host could not send a priority (red), when a switch port held its peer in XOFF (blue), when the PFC watchdog held a queue stormed (orange); black ticks: PFC frames received (paused rows) or sent in the sample interval ending there (a grey bar where they come too close to draw apart); purple lines: a deadlock formed (dashed) and was detected (solid){shaded}"));
    add("pauses.svg", f.caption.clone(), timeline::figure(&cx, &f)?)?;
    let f = fig("flows", format!("Throughput per flow: frame bits received over the last {averaged}, each frame counted over its wire time, so no point exceeds its link's rate (dashed); {sampled}{shaded}"));
    add("flows.svg", f.caption.clone(), rates::flows(&cx, &f)?)?;
    let f = fig(
        "dcqcn",
        format!("DCQCN rate R_C per flow, {sampled}{shaded}"),
    );
    add("dcqcn.svg", f.caption.clone(), rates::dcqcn(&cx, &f)?)?;
    let f = fig("ecn", format!("ECN: the share of frames each WRED queue sent marked CE, over the last {averaged}; {sampled}{shaded}"));
    add("ecn.svg", f.caption.clone(), counts::ecn(&cx, &f)?)?;
    let f = fig("drops", format!("Drops by switch and reason, in all, up to each sample; lossless drops (which must stay 0) in red; {sampled}{shaded}"));
    add("drops.svg", f.caption.clone(), counts::drops(&cx, &f)?)?;
    let f = fig("groups", format!("Next-hop groups: the bytes each member carried, as Gb/s over the last {averaged}; {sampled}{shaded}"));
    add("groups.svg", f.caption.clone(), counts::groups(&cx, &f)?)?;
    let f = fig("transport", format!("RC re-sends: the packets each queue pair had sent again by each sample, a panel per queue pair that re-sent any; {sampled}{}{shaded}", transport::iteration_caption(marks)));
    add(
        "transport.svg",
        f.caption.clone(),
        transport::resent(&cx, &f)?,
    )?;
    let f = fig("iterations", "Collectives: each iteration's time (from the previous one's end, or the start), one marker per iteration; iterations in which a queue pair re-sent packets are marked in red".to_string());
    add(
        "iterations.svg",
        f.caption.clone(),
        transport::iterations(&cx, &f)?,
    )?;
    let f = fig("credits", format!("CBFC credits: on each credited channel that carried frames, the credits its sender holds (consumed, not yet returned by the receiver's CF_Updates) against the limit the receiver gave it (dashed); a sender at its limit waits for credits; {sampled}{shaded}"));
    add("credits.svg", f.caption.clone(), counts::credits(&cx, &f)?)?;
    let f = fig("llr", format!("Link-level retry: on each port that had to, the NACKs it sent (its receiver saw a bad frame or a gap) and the frames it replayed (its sender answered a NACK or its replay timer), in all, up to each sample; a step is a repair; {sampled}{shaded}"));
    add("llr.svg", f.caption.clone(), counts::llr(&cx, &f)?)?;
    let f = fig("links", format!("Utilisation of each switch port that sent traffic: the share of the last {averaged} its transmitter was busy; {sampled}{shaded}"));
    add("links.svg", f.caption.clone(), rates::links(&cx, &f)?)?;
    let _ = every;
    let index = dir.join("index.html");
    lossless_sys::output::write_whole(&index, page(title, &figures, report_text).as_bytes())
        .map_err(|e| e.to_string())?;
    files.push(index);
    Ok(files)
}

/// How the recording was sampled, for captions: "sampled every 1us" or, when the run
/// outgrew the cap, "sampled every 250ns, then every 4us as the run grew (a point is the
/// peak of its interval)", and the compressed stretches.
fn sampling_text(cx: &Ctx) -> String {
    let rec = cx.rec;
    let mut s = if rec.coarsened > 0 {
        let first = Time(rec.interval.as_ps() >> rec.coarsened);
        format!(
            "sampled every {first}, then every {} as the run grew (a buffer's point is the peak of its interval, a state's whether it held)",
            rec.interval
        )
    } else {
        format!("sampled every {}", rec.interval)
    };
    if cx.axis.broken() {
        s += "; grey bands: stretches in which nothing changed, compressed on the time axis";
    }
    s
}

/// A figure's title and caption, drawn at its top so that the SVG stands alone, and the
/// extent of its time axis (µs; None for a figure without one).
pub(crate) struct Figure {
    pub title: String,
    pub caption: String,
    pub axis: Option<(f64, f64)>,
}

/// Height of a figure's header for `caption` (a title line and the caption's lines).
pub(crate) fn header_h(f: &Figure) -> u32 {
    24 + 16 * wrap(&f.caption, 150).len() as u32 + 6
}

/// Split `text` into lines of at most `width` characters, at spaces.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// Draw `f`'s title and caption at the top of `area`; the area below them.
pub(crate) fn header<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    f: &Figure,
) -> Res<DrawingArea<DB, plotters::coord::Shift>> {
    let h = header_h(f);
    let (top, rest) = area.split_vertically(h);
    top.draw(&Text::new(
        f.title.clone(),
        (10, 4),
        ("sans-serif", 16).into_font().style(FontStyle::Bold),
    ))
    .map_err(err)?;
    for (k, l) in wrap(&f.caption, 150).into_iter().enumerate() {
        top.draw(&Text::new(
            l,
            (10, 26 + 16 * k as i32),
            ("sans-serif", 12).into_font().color(&RGBColor(60, 60, 60)),
        ))
        .map_err(err)?;
    }
    Ok(rest)
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

/// How a line is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stroke {
    /// A solid line, 2 px.
    Solid,
    /// Long dashes, 1 px (limits and capacities).
    Dashed,
    /// Short dots, 1 px (a second level beside a dashed one).
    Dotted,
}

/// A legend entry: its label, colour and stroke.
pub(crate) type Entry = (String, RGBColor, Stroke);

/// Split `area` into the chart's part and the legend strip on its right, and draw the
/// legend there (so it never covers data).
pub(crate) fn with_legend<'a, DB: DrawingBackend + 'a>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    entries: &[Entry],
) -> Res<DrawingArea<DB, plotters::coord::Shift>> {
    let (w, _) = area.dim_in_pixel();
    let (left, right) = area.split_horizontally(w.saturating_sub(LEGEND_W));
    for (k, (label, color, stroke)) in entries.iter().enumerate() {
        let y = 34 + 18 * k as i32;
        let (step, on, width) = match stroke {
            Stroke::Solid => (22, 22, 2),
            Stroke::Dashed => (8, 5, 2),
            Stroke::Dotted => (4, 2, 2),
        };
        for x in (8..30).step_by(step) {
            right
                .draw(&PathElement::new(
                    vec![(x, y), ((x + on).min(30), y)],
                    color.stroke_width(width),
                ))
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

/// A time chart on `area` over `y0..y1`: the shared time axis (ticks and labels in real
/// time, compressed stretches marked), the y axis described by `y_desc`, the measure
/// window shaded. `caption` titles the panel when given.
pub(crate) fn time_chart<'a, DB: DrawingBackend>(
    cx: &Ctx,
    area: &'a DrawingArea<DB, plotters::coord::Shift>,
    caption: Option<&str>,
    y0: f64,
    y1: f64,
    y_desc: &str,
    y_fmt: &dyn Fn(&f64) -> String,
) -> Res<TimeChart<'a, DB>> {
    let mut b = ChartBuilder::on(area);
    if let Some(c) = caption {
        b.caption(c, ("sans-serif", 14));
    }
    let mut chart = b
        .margin(8)
        .margin_right(16)
        .x_label_area_size(34)
        .y_label_area_size(64)
        .build_cartesian_2d(cx.xr(), y0..y1)
        .map_err(err)?;
    shade(cx, &mut chart, y0, y1)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(6)
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .axis_desc_style(("sans-serif", 12))
        .label_style(("sans-serif", 11))
        .x_desc(cx.axis.unit())
        .y_desc(y_desc)
        .y_label_formatter(y_fmt)
        .draw()
        .map_err(err)?;
    cx.axis.draw(&mut chart, y0, y1)?;
    Ok(chart)
}

/// Shade the `measure` window on `chart` over `y0..y1`.
pub(crate) fn shade<DB: DrawingBackend>(
    cx: &Ctx,
    chart: &mut TimeChart<DB>,
    y0: f64,
    y1: f64,
) -> Res<()> {
    if let Some((a, b)) = cx.marks.measure {
        let (a, b) = (cx.x(us(a)), cx.x(us(b)));
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

/// One series of a line chart: its name and points (time in µs, value).
pub(crate) type Series = (String, Vec<(f64, f64)>);

/// Line charts of `series` (points in real µs), as small multiples of at most
/// [`PER_PANEL`] series to a panel, all on one y scale, each panel with its legend; a
/// dashed reference line per entry of `refs`; a thin vertical line at each time (µs) of
/// `marks`, in its colour. None when there is nothing to draw.
pub(crate) fn lines(
    cx: &Ctx,
    f: &Figure,
    series: &[Series],
    refs: &[(String, f64)],
    y_desc: &str,
    marks: &[(f64, RGBColor)],
) -> Res<Option<String>> {
    let layout = Layout {
        per_panel: PER_PANEL,
        panel_h: LINES_H,
        color: &|i, _| palette(i),
    };
    lines_laid_out(cx, f, series, refs, y_desc, marks, &layout)
}

/// How [`lines_laid_out`] lays series out: how many to a panel, each panel's height, and
/// the colour of the `i`-th series of a panel (given its name).
pub(crate) struct Layout<'a> {
    pub per_panel: usize,
    pub panel_h: u32,
    pub color: &'a dyn Fn(usize, &str) -> RGBColor,
}

/// [`lines`] with a layout of its own.
pub(crate) fn lines_laid_out(
    cx: &Ctx,
    f: &Figure,
    series: &[Series],
    refs: &[(String, f64)],
    y_desc: &str,
    marks: &[(f64, RGBColor)],
    layout: &Layout,
) -> Res<Option<String>> {
    if series.is_empty() || cx.rec.times.len() < 2 {
        return Ok(None);
    }
    let top = series
        .iter()
        .flat_map(|(_, v)| v.iter().map(|p| p.1))
        .chain(refs.iter().map(|r| r.1))
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.1;
    let chunks: Vec<&[Series]> = series.chunks(layout.per_panel.max(1)).collect();
    let n = chunks.len();
    figure(f, layout.panel_h * n as u32, |area| {
        for (k, (panel, chunk)) in area.split_evenly((n, 1)).iter().zip(&chunks).enumerate() {
            let mut entries: Vec<Entry> = chunk
                .iter()
                .enumerate()
                .map(|(i, (name, _))| (name.clone(), (layout.color)(i, name), Stroke::Solid))
                .collect();
            entries.extend(
                refs.iter()
                    .map(|(name, _)| (name.clone(), RGBColor(120, 120, 120), Stroke::Dashed)),
            );
            let plot = with_legend(panel, &entries)?;
            let title = match (n > 1, layout.per_panel) {
                (false, _) => None,
                (true, 1) => Some(chunk[0].0.clone()),
                (true, _) => Some(format!("{} of {n}", k + 1)),
            };
            let mut chart =
                time_chart(cx, &plot, title.as_deref(), 0.0, top, y_desc, &|v| num(*v))?;
            for (i, (name, pts)) in chunk.iter().enumerate() {
                let pts: Vec<(f64, f64)> = pts.iter().map(|(t, v)| (cx.x(*t), *v)).collect();
                chart
                    .draw_series(LineSeries::new(
                        pts,
                        (layout.color)(i, name).stroke_width(2),
                    ))
                    .map_err(err)?;
            }
            let range = cx.xr();
            for (_, y) in refs {
                chart
                    .draw_series(DashedLineSeries::new(
                        vec![(range.start, *y), (range.end, *y)],
                        6,
                        4,
                        RGBColor(120, 120, 120).stroke_width(1),
                    ))
                    .map_err(err)?;
            }
            for (t, color) in marks {
                let x = cx.x(*t).clamp(range.start, range.end);
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(x, 0.0), (x, top)],
                        color.stroke_width(1),
                    )))
                    .map_err(err)?;
            }
        }
        Ok(true)
    })
}

/// One panel of [`panels_of_lines`]: its series and its reference levels (dashed).
pub(crate) type Panel = (Vec<Series>, Vec<(String, f64)>);

/// A figure of panels, each with its own series, reference levels (dashed) and y range.
pub(crate) fn panels_of_lines(
    cx: &Ctx,
    f: &Figure,
    panels: &[Panel],
    y_desc: &str,
) -> Res<Option<String>> {
    if panels.is_empty() || cx.rec.times.len() < 2 {
        return Ok(None);
    }
    let n = panels.len();
    figure(f, LINES_H * n as u32, |area| {
        for (panel, (series, refs)) in area.split_evenly((n, 1)).iter().zip(panels) {
            let top = series
                .iter()
                .flat_map(|(_, v)| v.iter().map(|p| p.1))
                .chain(refs.iter().map(|r| r.1))
                .fold(0.0f64, f64::max)
                .max(1e-9)
                * 1.1;
            let mut entries: Vec<Entry> = series
                .iter()
                .enumerate()
                .map(|(i, (name, _))| (name.clone(), palette(i), Stroke::Solid))
                .collect();
            entries.extend(
                refs.iter()
                    .map(|(name, _)| (name.clone(), RGBColor(120, 120, 120), Stroke::Dashed)),
            );
            let plot = with_legend(panel, &entries)?;
            let title = (n > 1).then(|| series.first().map_or(String::new(), |s| s.0.clone()));
            let mut chart =
                time_chart(cx, &plot, title.as_deref(), 0.0, top, y_desc, &|v| num(*v))?;
            for (i, (_, pts)) in series.iter().enumerate() {
                let pts: Vec<(f64, f64)> = pts.iter().map(|(t, v)| (cx.x(*t), *v)).collect();
                chart
                    .draw_series(LineSeries::new(pts, palette(i).stroke_width(2)))
                    .map_err(err)?;
            }
            let range = cx.xr();
            for (_, y) in refs {
                chart
                    .draw_series(DashedLineSeries::new(
                        vec![(range.start, *y), (range.end, *y)],
                        6,
                        4,
                        RGBColor(120, 120, 120).stroke_width(1),
                    ))
                    .map_err(err)?;
            }
        }
        Ok(true)
    })
}

/// The `i`-th series colour: Paul Tol's "bright" scheme, told apart by colour-blind
/// readers (blue, red, green, yellow, cyan, purple), then darker variants.
pub(crate) fn palette(i: usize) -> RGBColor {
    const BRIGHT: [RGBColor; 6] = [
        RGBColor(0x44, 0x77, 0xAA),
        RGBColor(0xEE, 0x66, 0x77),
        RGBColor(0x22, 0x88, 0x33),
        RGBColor(0xCC, 0xBB, 0x44),
        RGBColor(0x66, 0xCC, 0xEE),
        RGBColor(0xAA, 0x33, 0x77),
    ];
    let c = BRIGHT[i % BRIGHT.len()];
    if (i / BRIGHT.len()) % 2 == 1 {
        RGBColor(c.0 / 2, c.1 / 2, c.2 / 2)
    } else {
        c
    }
}

/// A figure `h` pixels high below its header (title and caption), drawn by `draw`; None
/// when `draw` draws nothing.
pub(crate) fn figure(
    f: &Figure,
    h: u32,
    draw: impl FnOnce(&DrawingArea<SVGBackend, plotters::coord::Shift>) -> Res<bool>,
) -> Res<Option<String>> {
    let mut svg = String::new();
    let drawn = {
        let root = SVGBackend::with_string(&mut svg, (W, h + header_h(f))).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let body = header(&root, f)?;
        let drawn = draw(&body)?;
        root.present().map_err(err)?;
        drawn
    };
    Ok(drawn.then(|| described(svg, f)))
}

/// `svg` with its title and caption as the SVG's own `<title>` and `<desc>` (read by
/// screen readers and shown as a tooltip), and the time axis' extent.
fn described(svg: String, f: &Figure) -> String {
    let Some(open) = svg.find("<svg") else {
        return svg;
    };
    let Some(end) = svg[open..].find('>') else {
        return svg;
    };
    let at = open + end + 1;
    let mut desc = escape(&f.caption);
    if let Some((lo, hi)) = f.axis {
        desc += &format!(". Time axis: {lo}–{hi} µs.");
    }
    format!(
        "{}\n<title>{}</title>\n<desc>{desc}</desc>{}",
        &svg[..at],
        escape(&f.title),
        &svg[at..]
    )
}
