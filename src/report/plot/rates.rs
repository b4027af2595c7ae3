//! Rates: `flows.svg`, each flow's throughput from the bits it received, each frame counted
//! over its wire time (so a 20 ns sample never shows more than the link carries);
//! `links.svg`, each port's utilisation from the time its transmitter was busy;
//! `dcqcn.svg`, each DCQCN flow's rate R_C. A rate is taken over a window of samples that
//! never reaches back across a stretch without change (it would be diluted by it).

use super::{lines, us, Ctx, Figure, Res, Series};
use crate::sim::recorder::Recording;
use lossless_buffer_model::Time;

/// A point of a rate series: time (µs) and value.
pub type RatePoint = (f64, f64);

/// Samples a rate is averaged over: 1/200 of the recording, at least one.
pub fn rate_window(rec: &Recording) -> usize {
    (rec.times.len() / 200).max(1)
}

/// The window as time, for captions.
pub(super) fn window_text(rec: &Recording) -> String {
    format!("{}", Time(rec.interval.as_ps() * rate_window(rec) as u64))
}

/// For each sample, the first sample its window may start at: [`rate_window`] samples
/// back, but not before the end of a stretch without change (the sample that closes it),
/// and at least one sample back.
pub(super) fn window_starts(rec: &Recording) -> Vec<usize> {
    let w = rate_window(rec);
    let mut floor = 0;
    let mut g = rec.gaps.iter().peekable();
    (0..rec.times.len())
        .map(|i| {
            while let Some((_, to)) = g.peek() {
                if *to <= rec.times[i] {
                    // The sample at the gap's end: windows start there at the earliest.
                    floor = rec.times[..=i].partition_point(|t| t < to);
                    g.next();
                } else {
                    break;
                }
            }
            let j = i.saturating_sub(w).max(floor);
            if j >= i {
                i.saturating_sub(1)
            } else {
                j
            }
        })
        .collect()
}

/// Is the interval that ends at sample `i` a stretch without change (its window starts at
/// the sample before, far back)?
pub(super) fn after_gap(rec: &Recording, starts: &[usize], i: usize) -> bool {
    i > 0
        && starts[i] == i - 1
        && rec.times[i] - rec.times[i - 1] > Time(rec.interval.as_ps().saturating_mul(2))
}

/// The points of a windowed series: `value(i, j)` at each sample's time (µs) by `at`, and
/// over a stretch without change the value held flat from its start (a rate over it is
/// what it is from its first instant, not a slope from the last busy window).
pub(super) fn windowed_points(
    rec: &Recording,
    n: usize,
    at: impl Fn(usize) -> Option<f64>,
    value: impl Fn(usize, usize) -> f64,
) -> Vec<(f64, f64)> {
    let starts = window_starts(rec);
    let mut out = Vec::new();
    for i in 1..n.min(rec.times.len()) {
        let Some(t) = at(i) else { continue };
        let v = value(i, starts[i]);
        if after_gap(rec, &starts, i) {
            if let Some(t0) = at(i - 1) {
                out.push((t0, v));
            }
        }
        out.push((t, v));
    }
    out
}

/// Each flow that received anything: its name, the link's rate (bit/s), and per sample
/// the bits received over its window divided by the window's length (bit/s), at the
/// window's end (µs).
pub fn flow_rates(rec: &Recording) -> Vec<(String, f64, Vec<RatePoint>)> {
    let lag = rec.flow_lag;
    let starts = window_starts(rec);
    let at = |i: usize| (rec.times[starts[i]] >= lag).then(|| us(rec.times[i] - lag));
    rec.flows
        .iter()
        .filter(|f| f.bits.last().is_some_and(|b| *b > 0.0))
        .map(|f| {
            let pts = windowed_points(rec, f.bits.len(), at, |i, j| {
                let dt = (rec.times[i] - rec.times[j]).as_ps() as f64 / 1e12;
                let db = f.bits[i] - f.bits[j];
                if dt > 0.0 {
                    db / dt
                } else {
                    0.0
                }
            });
            (f.name.clone(), f.link_bps as f64, pts)
        })
        .collect()
}

/// Each switch port that sent anything: its name and, per sample, the fraction of its
/// window its transmitter was busy, at the window's end (µs).
pub fn link_utilisation(rec: &Recording) -> Vec<(String, Vec<RatePoint>)> {
    let at = |i: usize| Some(us(rec.times[i]));
    rec.port_busy
        .iter()
        .filter(|(_, v)| v.last().is_some_and(|b| b.as_ps() > 0))
        .map(|(n, busy)| {
            let pts = windowed_points(rec, busy.len(), at, |i, j| {
                let dt = (rec.times[i] - rec.times[j]).as_ps() as f64;
                let db = busy[i].saturating_sub(busy[j]).as_ps() as f64;
                if dt > 0.0 {
                    db / dt
                } else {
                    0.0
                }
            });
            (n.clone(), pts)
        })
        .collect()
}

pub(super) fn flows(cx: &Ctx, f: &Figure) -> Res<Option<String>> {
    let rates = flow_rates(cx.rec);
    let series: Vec<Series> = rates
        .iter()
        .map(|(n, _, p)| (n.clone(), p.iter().map(|(t, r)| (*t, r / 1e9)).collect()))
        .collect();
    let mut links: Vec<u64> = rates.iter().map(|(_, l, _)| *l as u64).collect();
    links.sort_unstable();
    links.dedup();
    let refs: Vec<(String, f64)> = links
        .iter()
        .map(|l| (format!("{} Gb/s link", *l as f64 / 1e9), *l as f64 / 1e9))
        .collect();
    lines(cx, f, &series, &refs, "Gbit/s", &[])
}

pub(super) fn links(cx: &Ctx, f: &Figure) -> Res<Option<String>> {
    let series: Vec<Series> = link_utilisation(cx.rec)
        .into_iter()
        .map(|(n, p)| (n, p.into_iter().map(|(t, u)| (t, u * 100.0)).collect()))
        .collect();
    lines(cx, f, &series, &[], "% of line rate", &[])
}

pub(super) fn dcqcn(cx: &Ctx, f: &Figure) -> Res<Option<String>> {
    let times = &cx.rec.times;
    let series: Vec<Series> = cx
        .rec
        .dcqcn_rate
        .iter()
        .map(|(n, v)| {
            let pts = times
                .iter()
                .zip(v)
                .map(|(t, r)| (us(*t), r / 1e9))
                .collect();
            (n.clone(), pts)
        })
        .collect();
    lines(cx, f, &series, &[], "Gbit/s", &[])
}
