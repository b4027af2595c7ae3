//! `buffers.svg`: for each ingress PG that held data, a panel of its shared use against its
//! XOFF level (dashed) and XON level (dotted) — or a note in its title when they are far
//! above what it held — and for a lossless one that used headroom a panel below of its
//! headroom against its capacity, in the same unit; for each egress queue that held data,
//! its bytes against WRED's Kmin and Kmax; for each host receive buffer, its bytes against
//! its XOFF and XON levels. The fullest are drawn, at most [`MAX_PANELS`].

use super::{err, num, time_chart, with_legend, Ctx, Entry, Figure, Res, Stroke};
use crate::sim::recorder::Series;
use plotters::prelude::*;

const PANEL_H: u32 = 200;
/// A headroom panel's height.
const HEADROOM_H: u32 = 110;
/// At most this many buffers (the fullest).
const MAX_PANELS: usize = 16;

const SHARED: RGBColor = RGBColor(0x22, 0x88, 0x33);
const HEADROOM: RGBColor = RGBColor(0xEE, 0x66, 0x77);
const QUEUE: RGBColor = RGBColor(0x44, 0x77, 0xAA);
const XOFF: RGBColor = RGBColor(0, 0, 0);
const XON: RGBColor = RGBColor(0xAA, 0x33, 0x77);

/// A line of a panel: recorded, or a constant level.
enum Line<'a> {
    Recorded(&'a Series),
    Level(u64),
}

/// One buffer: its title, its lines (label, line, colour, stroke), and for a lossless PG
/// its headroom and capacity.
struct Buffer<'a> {
    title: String,
    lines: Vec<(String, Line<'a>, RGBColor, Stroke)>,
    headroom: Option<(&'a Series, u64)>,
    /// For ordering: the fullest first.
    peak: u64,
}

/// A line ready to draw: its points (axis units, KB), colour and stroke.
type Drawn = (Vec<(f64, f64)>, RGBColor, Stroke);

/// Kilobytes, for legends.
fn kb(b: u64) -> String {
    format!("{} KB", num(b as f64 / 1e3))
}

/// The figure, or None when no buffer held anything.
pub(super) fn figure(cx: &Ctx, f: &Figure) -> Res<Option<String>> {
    let rec = cx.rec;
    let mut buffers: Vec<Buffer> = Vec::new();
    for p in rec
        .pgs
        .iter()
        .filter(|p| p.shared.any() || p.headroom.any())
    {
        let mut lines = vec![(
            format!("PG shared (peak {})", kb(p.shared.max())),
            Line::Recorded(&p.shared),
            SHARED,
            Stroke::Solid,
        )];
        let mut note = String::new();
        // A level far above the data would flatten it to the floor: drawn only when the
        // PG comes within a quarter of it, else said in the title.
        let near = p.shared.max().saturating_mul(4) >= p.xoff_level.min();
        if p.lossless && near {
            lines.push((
                "XOFF level (the live limit)".to_string(),
                Line::Recorded(&p.xoff_level),
                XOFF,
                Stroke::Dashed,
            ));
            lines.push((
                "XON level".to_string(),
                Line::Recorded(&p.xon_level),
                XON,
                Stroke::Dotted,
            ));
            // Levels a few KB apart on a scale of MB draw as one line: say how far apart
            // (the least they were, where both are drawn).
            let apart = p
                .xoff_level
                .values
                .iter()
                .zip(&p.xon_level.values)
                .map(|(a, b)| a.saturating_sub(*b))
                .min()
                .unwrap_or(0);
            let scale = p.xoff_level.max().max(p.shared.max()).max(1);
            if apart * 50 < scale {
                note = format!(": XON {} below XOFF, one line at this scale", kb(apart));
            }
        } else if p.lossless {
            note = format!(
                ": XOFF at {}, XON at {}, far above what it held",
                kb(p.xoff_level.max()),
                kb(p.xon_level.max())
            );
        } else if near {
            // A lossy PG drops at its limit.
            lines.push((
                "drop level (limit)".into(),
                Line::Recorded(&p.xoff_level),
                XOFF,
                Stroke::Dashed,
            ));
        }
        if p.lossless && !p.headroom.any() {
            note += &format!(
                "; headroom ({} capacity) never used",
                kb(p.headroom_capacity)
            );
        }
        let kind = if p.lossless { "lossless" } else { "lossy" };
        buffers.push(Buffer {
            title: format!("{} ingress PG {} ({kind}){note}", p.port, p.pg),
            lines,
            headroom: (p.lossless && p.headroom.any())
                .then_some((&p.headroom, p.headroom_capacity)),
            peak: p.shared.max().max(p.headroom.max()),
        });
    }
    for q in rec.queues.iter().filter(|q| q.bytes.any()) {
        let mut lines = vec![(
            format!("queue (peak {})", kb(q.bytes.max())),
            Line::Recorded(&q.bytes),
            QUEUE,
            Stroke::Solid,
        )];
        if let Some((kmin, kmax)) = q.wred {
            lines.push((
                format!("WRED Kmin {}", kb(kmin)),
                Line::Level(kmin),
                XOFF,
                Stroke::Dashed,
            ));
            lines.push((
                format!("WRED Kmax {}", kb(kmax)),
                Line::Level(kmax),
                XON,
                Stroke::Dotted,
            ));
        }
        let kind = if q.lossless { "lossless" } else { "lossy" };
        buffers.push(Buffer {
            title: format!("{} egress queue {} ({kind})", q.port, q.queue),
            lines,
            headroom: None,
            peak: q.bytes.max(),
        });
    }
    for h in rec.hosts.iter().filter(|h| h.rx_buffer.any()) {
        let Some((size, xoff, xon)) = h.rx_levels else {
            continue;
        };
        buffers.push(Buffer {
            title: format!("host {} receive buffer ({})", h.name, kb(size)),
            lines: vec![
                (
                    format!("buffer (peak {})", kb(h.rx_buffer.max())),
                    Line::Recorded(&h.rx_buffer),
                    QUEUE,
                    Stroke::Solid,
                ),
                (
                    format!("pfc_xoff {}", kb(xoff)),
                    Line::Level(xoff),
                    XOFF,
                    Stroke::Dashed,
                ),
                (
                    format!("pfc_xon {}", kb(xon)),
                    Line::Level(xon),
                    XON,
                    Stroke::Dotted,
                ),
            ],
            headroom: None,
            peak: h.rx_buffer.max(),
        });
    }
    if buffers.is_empty() || rec.times.is_empty() {
        return Ok(None);
    }
    buffers.sort_by_key(|b| std::cmp::Reverse(b.peak));
    buffers.truncate(MAX_PANELS);
    let height = |b: &Buffer| PANEL_H + if b.headroom.is_some() { HEADROOM_H } else { 0 };
    let total: u32 = buffers.iter().map(height).sum();
    super::figure(f, total, |area| {
        let mut rest = area.clone();
        for b in &buffers {
            let (this, below) = rest.split_vertically(height(b));
            draw(cx, &this, b)?;
            rest = below;
        }
        Ok(true)
    })
}

/// The points of `l` (µs, KB) from the sample before its first nonzero one (a recorded
/// level: from its first).
fn points(cx: &Ctx, l: &Line, level: bool) -> Vec<(f64, f64)> {
    let times = &cx.rec.times;
    match l {
        Line::Recorded(s) => {
            let from = s
                .start
                .map_or(times.len(), |s| s.saturating_sub(usize::from(!level)));
            (from..times.len())
                .map(|i| (cx.xi(i), s.at(i) as f64 / 1e3))
                .collect()
        }
        Line::Level(v) => {
            let r = cx.xr();
            vec![(r.start, *v as f64 / 1e3), (r.end, *v as f64 / 1e3)]
        }
    }
}

fn draw_line<DB: DrawingBackend>(
    chart: &mut super::TimeChart<DB>,
    pts: Vec<(f64, f64)>,
    color: RGBColor,
    stroke: Stroke,
) -> Res<()> {
    match stroke {
        Stroke::Solid => chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map(|_| ()),
        Stroke::Dashed => chart
            .draw_series(DashedLineSeries::new(pts, 8, 5, color.stroke_width(2)))
            .map(|_| ()),
        Stroke::Dotted => chart
            .draw_series(DashedLineSeries::new(pts, 2, 3, color.stroke_width(2)))
            .map(|_| ()),
    }
    .map_err(err)
}

/// One buffer: its panel, and its headroom panel under it.
fn draw<DB: DrawingBackend>(
    cx: &Ctx,
    area: &DrawingArea<DB, plotters::coord::Shift>,
    b: &Buffer,
) -> Res<()> {
    let (main, hr) = match b.headroom {
        Some(_) => {
            let (a, h) = area.split_vertically(PANEL_H);
            (a, Some(h))
        }
        None => (area.clone(), None),
    };
    let entries: Vec<Entry> = b
        .lines
        .iter()
        .map(|(n, _, c, s)| (n.clone(), *c, *s))
        .collect();
    let plot = with_legend(&main, &entries)?;
    let lines: Vec<Drawn> = b
        .lines
        .iter()
        .map(|(_, l, c, s)| (points(cx, l, *s != Stroke::Solid), *c, *s))
        .collect();
    let all = lines.iter().flat_map(|(p, ..)| p.iter().map(|x| x.1));
    let (lo, hi) = all.fold((f64::MAX, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let lo = if lo == f64::MAX { 0.0 } else { lo };
    let pad = ((hi - lo) * 0.05).max(hi * 0.01).max(0.01);
    let (y0, y1) = ((lo - pad).max(0.0), hi + pad);
    let mut chart = time_chart(cx, &plot, Some(&b.title), y0, y1, "KB", &|v| num(*v))?;
    for (pts, color, stroke) in lines {
        draw_line(&mut chart, pts, color, stroke)?;
    }
    if let (Some(area), Some((headroom, capacity))) = (hr, b.headroom) {
        let entries: Vec<Entry> = vec![
            (
                format!("PG headroom (peak {})", kb(headroom.max())),
                HEADROOM,
                Stroke::Solid,
            ),
            (
                format!("capacity {}", kb(capacity)),
                HEADROOM,
                Stroke::Dashed,
            ),
        ];
        let plot = with_legend(&area, &entries)?;
        let top = capacity.max(headroom.max()).max(1) as f64 / 1e3 * 1.15;
        let mut chart = time_chart(cx, &plot, None, 0.0, top, "headroom, KB", &|v| num(*v))?;
        draw_line(
            &mut chart,
            points(cx, &Line::Recorded(headroom), false),
            HEADROOM,
            Stroke::Solid,
        )?;
        draw_line(
            &mut chart,
            points(cx, &Line::Level(capacity), true),
            HEADROOM,
            Stroke::Dashed,
        )?;
    }
    Ok(())
}
