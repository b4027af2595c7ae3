//! `buffers.svg`: a panel per ingress PG that held data (shared use against its XOFF and XON
//! levels; headroom on its own right-hand axis, up to its capacity), per egress queue that
//! held data (against WRED's Kmin and Kmax), and per host receive buffer (against its XOFF
//! and XON levels). Queue and PG thresholds stay on their own panels.

use super::{err, num, shade, us, with_legend, Ctx, Entry, Res, W};
use crate::sim::recorder::Series;
use plotters::prelude::*;

const PANEL_H: u32 = 200;
/// At most this many panels (the fullest).
const MAX_PANELS: usize = 16;

const SHARED: RGBColor = RGBColor(0, 140, 0);
const HEADROOM: RGBColor = RGBColor(210, 0, 0);
const QUEUE: RGBColor = RGBColor(0, 0, 220);
const LEVEL: RGBColor = RGBColor(0, 0, 0);
const XON: RGBColor = RGBColor(190, 0, 190);

/// One panel: its title, its series on the left axis (label, values, colour, dashed), and
/// optionally a right axis (label, its series, its capacity).
struct Panel<'a> {
    title: String,
    left: Vec<(&'static str, Line<'a>, RGBColor, bool)>,
    right: Option<(&'a Series, u64)>,
    /// For ordering: the fullest first.
    peak: u64,
}

/// A series drawn from a recorded [`Series`], or a constant level.
enum Line<'a> {
    Recorded(&'a Series),
    Level(u64),
}

/// The figure, or None when no buffer held anything.
pub(super) fn figure(cx: &Ctx) -> Res<Option<String>> {
    let rec = cx.rec;
    let mut panels: Vec<Panel> = Vec::new();
    for p in rec
        .pgs
        .iter()
        .filter(|p| p.shared.any() || p.headroom.any())
    {
        let mut left = vec![("PG shared", Line::Recorded(&p.shared), SHARED, false)];
        if p.lossless {
            left.push((
                "XOFF level (limit)",
                Line::Recorded(&p.xoff_level),
                LEVEL,
                true,
            ));
            left.push(("XON level", Line::Recorded(&p.xon_level), XON, true));
        } else if p.shared.max().saturating_mul(4) >= p.xoff_level.min() {
            // A lossy PG drops at its limit; drawn when the PG comes near it (a limit
            // thousands of times the data would flatten the data to the floor).
            left.push((
                "drop level (limit)",
                Line::Recorded(&p.xoff_level),
                LEVEL,
                true,
            ));
        }
        let kind = if p.lossless { "lossless" } else { "lossy" };
        panels.push(Panel {
            title: format!("{} ingress PG {} ({kind})", p.port, p.pg),
            left,
            right: p.lossless.then_some((&p.headroom, p.headroom_capacity)),
            peak: p.shared.max().max(p.headroom.max()),
        });
    }
    for q in rec.queues.iter().filter(|q| q.bytes.any()) {
        let mut left = vec![("queue", Line::Recorded(&q.bytes), QUEUE, false)];
        if let Some((kmin, kmax)) = q.wred {
            left.push(("WRED Kmin", Line::Level(kmin), LEVEL, true));
            left.push(("WRED Kmax", Line::Level(kmax), XON, true));
        }
        let kind = if q.lossless { "lossless" } else { "lossy" };
        panels.push(Panel {
            title: format!("{} egress queue {} ({kind})", q.port, q.queue),
            left,
            right: None,
            peak: q.bytes.max(),
        });
    }
    for h in rec.hosts.iter().filter(|h| h.rx_buffer.any()) {
        let Some((size, xoff, xon)) = h.rx_levels else {
            continue;
        };
        panels.push(Panel {
            title: format!("host {} receive buffer ({} B)", h.name, size),
            left: vec![
                ("buffer", Line::Recorded(&h.rx_buffer), QUEUE, false),
                ("pfc_xoff", Line::Level(xoff), LEVEL, true),
                ("pfc_xon", Line::Level(xon), XON, true),
            ],
            right: None,
            peak: h.rx_buffer.max(),
        });
    }
    if panels.is_empty() || rec.times.is_empty() {
        return Ok(None);
    }
    panels.sort_by_key(|p| std::cmp::Reverse(p.peak));
    panels.truncate(MAX_PANELS);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, PANEL_H * panels.len() as u32))
            .into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        for (area, p) in root.split_evenly((panels.len(), 1)).iter().zip(&panels) {
            panel(cx, area, p)?;
        }
        root.present().map_err(err)?;
    }
    Ok(Some(svg))
}

fn panel<DB: DrawingBackend>(
    cx: &Ctx,
    area: &DrawingArea<DB, plotters::coord::Shift>,
    p: &Panel,
) -> Res<()> {
    let times = &cx.rec.times;
    let value = |l: &Line, i: usize| match l {
        Line::Recorded(s) => s.at(i),
        Line::Level(v) => *v,
    };
    // Bytes on the left: the range of what is drawn there, levels included.
    let all: Vec<u64> = p
        .left
        .iter()
        .flat_map(|(_, l, ..)| (0..times.len()).map(move |i| value(l, i)))
        .collect();
    let hi = all.iter().copied().max().unwrap_or(1).max(1) as f64 / 1e3;
    let lo = all.iter().copied().min().unwrap_or(0) as f64 / 1e3;
    let pad = ((hi - lo) * 0.05).max(hi * 0.01).max(0.01);
    let (y0, y1) = ((lo - pad).max(0.0), hi + pad);
    let mut entries: Vec<Entry> = p
        .left
        .iter()
        .map(|(n, _, c, dashed)| (n.to_string(), *c, *dashed))
        .collect();
    if p.right.is_some() {
        entries.push(("PG headroom (right axis)".into(), HEADROOM, false));
        entries.push(("headroom capacity".into(), HEADROOM, true));
    }
    let area = with_legend(area, &entries)?;
    // Every panel keeps a right label area, so the time axes of all panels line up; the
    // secondary coordinate takes it (the primary's labels stay on the left).
    let top = p.right.map_or(1.0, |(headroom, capacity)| {
        (capacity.max(headroom.max()).max(1) as f64) * 1.15
    });
    let mut chart = ChartBuilder::on(&area)
        .caption(&p.title, ("sans-serif", 15))
        .margin(8)
        .margin_right(16)
        .x_label_area_size(28)
        .y_label_area_size(64)
        .right_y_label_area_size(64)
        .build_cartesian_2d(cx.lo..cx.hi, y0..y1)
        .map_err(err)?
        .set_secondary_coord(cx.lo..cx.hi, 0.0..top);
    shade(cx, &mut chart, y0, y1)?;
    chart
        .configure_mesh()
        .x_desc(cx.x_unit())
        .y_desc("KB")
        .x_label_formatter(&|v| cx.x_label(*v))
        .y_label_formatter(&|v| num(*v))
        .draw()
        .map_err(err)?;
    // Data from the zero before its first nonzero sample; a recorded level from its first.
    let pts = |l: &Line, level: bool| -> Vec<(f64, f64)> {
        let from = match l {
            Line::Recorded(s) => s
                .start
                .map_or(times.len(), |s| s.saturating_sub(usize::from(!level))),
            Line::Level(_) => 0,
        };
        (from..times.len())
            .map(|i| (us(times[i]), value(l, i) as f64 / 1e3))
            .collect()
    };
    for (_, l, color, dashed) in &p.left {
        let style = color.stroke_width(if *dashed { 1 } else { 2 });
        if *dashed {
            chart
                .draw_series(DashedLineSeries::new(pts(l, true), 6, 4, style))
                .map_err(err)?;
        } else {
            chart
                .draw_series(LineSeries::new(pts(l, false), style))
                .map_err(err)?;
        }
    }
    if let Some((headroom, capacity)) = p.right {
        chart
            .configure_secondary_axes()
            .y_desc("headroom, B")
            .y_label_formatter(&|v| num(*v))
            .draw()
            .map_err(err)?;
        let from = headroom.start.unwrap_or(times.len());
        let hr: Vec<(f64, f64)> = (0..times.len())
            .filter(|i| *i + 1 >= from)
            .map(|i| (us(times[i]), headroom.at(i) as f64))
            .collect();
        chart
            .draw_secondary_series(LineSeries::new(hr, HEADROOM.stroke_width(2)))
            .map_err(err)?;
        chart
            .draw_secondary_series(DashedLineSeries::new(
                vec![(cx.lo, capacity as f64), (cx.hi, capacity as f64)],
                6,
                4,
                HEADROOM.stroke_width(1),
            ))
            .map_err(err)?;
    }
    Ok(())
}
