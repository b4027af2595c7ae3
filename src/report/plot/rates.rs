//! Rates: `flows.svg`, each flow's throughput from the bits it received, each frame counted
//! over its wire time (so a 20 ns sample never shows more than the link carries);
//! `links.svg`, each port's utilisation from the time its transmitter was busy;
//! `dcqcn.svg`, each DCQCN flow's rate R_C.

use super::{lines, one, us, Ctx, Res};
use crate::sim::recorder::Recording;

/// A point of a rate series: time (µs) and value.
pub type RatePoint = (f64, f64);

/// Samples a rate is averaged over: 1/200 of the recording, at least one interval.
pub fn rate_window(rec: &Recording) -> usize {
    (rec.times.len() / 200).max(1)
}

/// Each flow that received anything: its name, the link's rate (bit/s), and per sample
/// the bits received over the last [`rate_window`] samples divided by their length
/// (bit/s), at the window's end (µs).
pub fn flow_rates(rec: &Recording) -> Vec<(String, f64, Vec<RatePoint>)> {
    let (lag, w) = (rec.flow_lag, rate_window(rec));
    rec.flows
        .iter()
        .filter(|f| f.bits.last().is_some_and(|b| *b > 0.0))
        .map(|f| {
            let pts = (w..f.bits.len().min(rec.times.len()))
                .filter(|i| rec.times[i - w] >= lag)
                .map(|i| {
                    let dt = (rec.times[i] - rec.times[i - w]).as_ps() as f64 / 1e12;
                    let db = f.bits[i] - f.bits[i - w];
                    (us(rec.times[i] - lag), if dt > 0.0 { db / dt } else { 0.0 })
                })
                .collect();
            (f.name.clone(), f.link_bps as f64, pts)
        })
        .collect()
}

/// Each switch port that sent anything: its name and, per sample, the fraction of the last
/// [`rate_window`] samples its transmitter was busy, at the window's end (µs).
pub fn link_utilisation(rec: &Recording) -> Vec<(String, Vec<RatePoint>)> {
    let w = rate_window(rec);
    rec.port_busy
        .iter()
        .filter(|(_, v)| v.last().is_some_and(|b| b.as_ps() > 0))
        .map(|(n, busy)| {
            let pts = (w..busy.len().min(rec.times.len()))
                .map(|i| {
                    let dt = (rec.times[i] - rec.times[i - w]).as_ps() as f64;
                    let db = busy[i].saturating_sub(busy[i - w]).as_ps() as f64;
                    (us(rec.times[i]), if dt > 0.0 { db / dt } else { 0.0 })
                })
                .collect();
            (n.clone(), pts)
        })
        .collect()
}

pub(super) fn flows(cx: &Ctx) -> Res<Option<String>> {
    let rates = flow_rates(cx.rec);
    if rates.is_empty() {
        return Ok(None);
    }
    let series: Vec<(String, Vec<RatePoint>)> = rates
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
    one(420, |area| {
        lines(cx, area, &series, &refs, "Gbit/s")?;
        Ok(true)
    })
}

pub(super) fn links(cx: &Ctx) -> Res<Option<String>> {
    let series: Vec<(String, Vec<RatePoint>)> = link_utilisation(cx.rec)
        .into_iter()
        .map(|(n, p)| (n, p.into_iter().map(|(t, u)| (t, u * 100.0)).collect()))
        .collect();
    if series.is_empty() {
        return Ok(None);
    }
    one(420, |area| {
        lines(cx, area, &series, &[], "% of line rate")?;
        Ok(true)
    })
}

pub(super) fn dcqcn(cx: &Ctx) -> Res<Option<String>> {
    let times = &cx.rec.times;
    let series: Vec<(String, Vec<RatePoint>)> = cx
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
    if series.is_empty() || times.len() < 2 {
        return Ok(None);
    }
    one(420, |area| {
        lines(cx, area, &series, &[], "Gbit/s")?;
        Ok(true)
    })
}
