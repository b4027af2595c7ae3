//! `outputs:` (the JSON report, pcap captures, a CSV time series) and `measure:` (the
//! window of throughput, utilisation, pause fractions and latency).

use super::PatchPanel;
use crate::config::defaults;
use crate::config::diag::{Diag, Diags, Key};
use crate::config::scenario::{
    HostSpec, Measure, Outputs, PcapOut, PortRef, Sampling, Target, TimeseriesOut,
};
use crate::config::schema::{MeasureRaw, OutputsRaw, TimeseriesRaw, Val};
use crate::config::values::line;
use crate::config::words::{CsvFormat, SampleWord};
use lossless_buffer_model::Time;
use std::path::PathBuf;

type Result<T> = std::result::Result<T, Diag>;

/// Most rows a time series writes (about 100 MB of CSV): past it a file of known length is
/// refused, and any other is cut (the report says so).
pub const MAX_TIMESERIES_ROWS: u64 = 2_000_000;

/// The outputs; default paths are under `out/` and named after the file `stem`.
pub fn resolve(
    cx: &PatchPanel,
    stem: &str,
    o: &Val<OutputsRaw>,
    hosts: &[HostSpec],
    duration: Option<Time>,
) -> Result<Outputs> {
    let (d, k) = (cx.d, Key::root("outputs"));
    let o = &o.value;
    let mut out = Outputs {
        json: o.json.as_ref().map(|j| PathBuf::from(&j.value)),
        ..Outputs::default()
    };
    if let Some(p) = &o.pcap {
        let kp = k.at("pcap");
        let mut ports = Vec::new();
        for (i, v) in p.value.ports.iter().enumerate() {
            ports.push(cx.port_ref(v, &kp.at("ports").index(i))?);
        }
        let snaplen = match &p.value.snaplen {
            None => defaults::SNAPLEN,
            Some(s) if (14..=65_535).contains(&s.value) => s.value,
            Some(s) => {
                return d.error(
                    line(s),
                    &kp.at("snaplen"),
                    format!("{} is outside 14–65535", s.value),
                )
            }
        };
        let dir = p.value.dir.as_ref().map_or_else(
            || PathBuf::from(defaults::OUTPUT_DIR).join(stem),
            |d| PathBuf::from(&d.value),
        );
        out.pcap = Some(PcapOut {
            ports,
            snaplen,
            dir,
        });
    }
    if let Some(t) = &o.timeseries {
        out.timeseries = Some(timeseries(cx, stem, t, hosts, duration)?);
    }
    Ok(out)
}

/// `outputs.timeseries`: what to record, when, in which window and layout.
fn timeseries(
    cx: &PatchPanel,
    stem: &str,
    t: &Val<TimeseriesRaw>,
    hosts: &[HostSpec],
    duration: Option<Time>,
) -> Result<TimeseriesOut> {
    let (d, k) = (cx.d, Key::root("outputs").at("timeseries"));
    let r = &t.value;
    let sample = sampling(d, &k, t)?;
    let nodes = targets(cx, &k, r, hosts)?;
    let priorities = priority_mask(d, &k, r)?;
    let from: Time = d.opt_unit(&r.from, &k.at("from"))?.unwrap_or(Time::ZERO);
    let to: Option<Time> = d.opt_unit(&r.to, &k.at("to"))?;
    if let Some(to) = to.filter(|to| *to <= from) {
        return d.error(
            r.to.as_ref().and_then(line),
            &k.at("to"),
            format!("{to} is not after `from` ({from})"),
        );
    }
    if let Some(end) = duration.filter(|end| from >= *end) {
        return d.error(
            r.from.as_ref().and_then(line),
            &k.at("from"),
            format!("{from} is at or after the end of the run ({end})"),
        );
    }
    let format = match &r.format {
        Some(f) => d.word::<CsvFormat>(f, &k.at("format"))?,
        None => CsvFormat::Long,
    };
    check_rows(
        d,
        &k,
        r,
        sample,
        format,
        (nodes.len(), priorities),
        (from, to, duration),
    )?;
    let csv = r.csv.as_ref().map_or_else(
        || PathBuf::from(defaults::OUTPUT_DIR).join(format!("{stem}-timeseries.csv")),
        |c| PathBuf::from(&c.value),
    );
    Ok(TimeseriesOut {
        sample,
        nodes,
        priorities,
        from,
        to,
        format,
        csv,
    })
}

/// `sample` and `interval`: a row every interval, or at each change.
fn sampling(d: &Diags, k: &Key, t: &Val<TimeseriesRaw>) -> Result<Sampling> {
    let r = &t.value;
    let word = match &r.sample {
        Some(s) => d.word::<SampleWord>(s, &k.at("sample"))?,
        None => SampleWord::Interval,
    };
    Ok(match (word, &r.interval) {
        (SampleWord::Interval, Some(i)) => {
            let interval: Time = d.unit(i, &k.at("interval"))?;
            if interval == Time::ZERO {
                return d.error(line(i), &k.at("interval"), "must be above 0");
            }
            Sampling::Every(interval)
        }
        (SampleWord::Interval, None) => {
            return d.error(
                line(t),
                &k.at("interval"),
                "needed (such as 10us), or `sample: change`",
            )
        }
        (SampleWord::Change, Some(i)) => {
            return d.error(
                line(i),
                &k.at("interval"),
                "`sample: change` writes a row at each change: no interval",
            )
        }
        (SampleWord::Change, None) => Sampling::OnChange,
    })
}

/// `ports`: the switch ports and hosts recorded (all when not given).
fn targets(cx: &PatchPanel, k: &Key, r: &TimeseriesRaw, hosts: &[HostSpec]) -> Result<Vec<Target>> {
    let d = cx.d;
    Ok(match &r.ports {
        None => {
            let mut all: Vec<Target> = cx
                .switches
                .iter()
                .enumerate()
                .flat_map(|(s, sw)| {
                    (0..sw.config.ports.len())
                        .map(move |port| Target::Switch(PortRef { switch: s, port }))
                })
                .collect();
            all.extend((0..hosts.len()).map(Target::Host));
            all
        }
        Some(list) => {
            let mut nodes = Vec::new();
            for (i, v) in list.iter().enumerate() {
                let ki = k.at("ports").index(i);
                let node = match hosts.iter().position(|h| h.name == v.value) {
                    Some(h) => Target::Host(h),
                    None => Target::Switch(cx.port_ref(v, &ki)?),
                };
                if nodes.contains(&node) {
                    return d.error(line(v), &ki, format!("`{}` is listed twice", v.value));
                }
                nodes.push(node);
            }
            nodes
        }
    })
}

/// `priorities`: the mask of priorities recorded (all when not given).
fn priority_mask(d: &Diags, k: &Key, r: &TimeseriesRaw) -> Result<u8> {
    Ok(match &r.priorities {
        None => 0xFF,
        Some(list) => {
            let mut mask = 0u8;
            for (i, p) in list.iter().enumerate() {
                if !(0..8).contains(&p.value) {
                    return d.error(
                        line(p),
                        &k.at("priorities").index(i),
                        format!("{} is not a priority 0–7", p.value),
                    );
                }
                mask |= 1 << p.value;
            }
            mask
        }
    })
}

/// A run of known length writes a known number of rows: refuse one past the cap (a run
/// until idle, or one sampled at each change, is cut at it instead).
fn check_rows(
    d: &Diags,
    k: &Key,
    r: &TimeseriesRaw,
    sample: Sampling,
    format: CsvFormat,
    (targets, priorities): (usize, u8),
    (from, to, duration): (Time, Option<Time>, Option<Time>),
) -> Result<()> {
    let per_sample = match format {
        CsvFormat::Wide => 1,
        CsvFormat::Long => targets as u64 * priorities.count_ones() as u64,
    };
    if let (Sampling::Every(every), Some(end)) = (sample, to.or(duration)) {
        let span = end.min(duration.unwrap_or(end)).saturating_sub(from);
        let rows = (span.as_ps() / every.as_ps() + 1).saturating_mul(per_sample);
        if rows > MAX_TIMESERIES_ROWS {
            let least = Time(
                span.as_ps()
                    .saturating_mul(per_sample)
                    .div_ceil(MAX_TIMESERIES_ROWS),
            );
            return d.error(
                r.interval.as_ref().and_then(line),
                &k.at("interval"),
                format!(
                    "{every} over {span} writes {rows} rows ({per_sample} a sample); at most {MAX_TIMESERIES_ROWS} (an interval of {least} or more, fewer ports or priorities, or a shorter window)"
                ),
            );
        }
    }
    Ok(())
}

/// `measure: {from, to}`, inside a run of `duration` (when given).
pub fn measure(d: &Diags, m: &Val<MeasureRaw>, duration: Option<Time>) -> Result<Measure> {
    let k = Key::root("measure");
    let from: Time = d
        .opt_unit(&m.value.from, &k.at("from"))?
        .unwrap_or(Time::ZERO);
    let to: Option<Time> = d.opt_unit(&m.value.to, &k.at("to"))?;
    let at = |v: &Option<Val<crate::config::schema::Scalar>>| v.as_ref().and_then(line).or(line(m));
    if let Some(to) = to.filter(|to| *to <= from) {
        return d.error(
            at(&m.value.to),
            &k.at("to"),
            format!("{to} is not after measure.from {from}: the window would be empty"),
        );
    }
    if let Some(end) = duration {
        if from >= end {
            return d.error(
                at(&m.value.from),
                &k.at("from"),
                format!("{from} is at or after the end of the run ({end})"),
            );
        }
        if let Some(to) = to.filter(|to| *to > end) {
            return d.error(
                at(&m.value.to),
                &k.at("to"),
                format!("{to} is after the end of the run ({end}); leave `to` out to measure to the end"),
            );
        }
    }
    Ok(Measure { from, to })
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use std::path::PathBuf;

    const SW: &str = "duration: 1ms\nswitches:\n  - name: s\n    ports: {count: 2}\n";

    #[test]
    fn outputs_default_under_out_and_the_window_lies_in_the_run() {
        let l = parse("f.yaml", "lab", &format!("{SW}outputs: {{pcap: {{ports: [s:Ethernet1]}}, timeseries: {{interval: 10us}}}}\nmeasure: {{from: 100us}}\n")).unwrap();
        let o = &l.scenario.run.outputs;
        let p = o.pcap.as_ref().unwrap();
        assert_eq!(
            (p.dir.clone(), p.snaplen, p.ports[0].port),
            (PathBuf::from("out/lab"), 128, 1)
        );
        assert_eq!(
            o.timeseries.as_ref().unwrap().csv,
            PathBuf::from("out/lab-timeseries.csv")
        );
        assert_eq!(
            l.scenario.run.measure.from,
            lossless_buffer_model::Time::from_us(100)
        );
        for (extra, expect) in [
            (
                "outputs: {timeseries: {interval: 0}}\n",
                "outputs.timeseries.interval: must be above 0",
            ),
            (
                "outputs: {pcap: {ports: [s:Ethernet0], snaplen: 10}}\n",
                "outputs.pcap.snaplen: 10 is outside 14–65535",
            ),
            (
                "measure: {to: 2ms}\n",
                "measure.to: 2ms is after the end of the run (1ms)",
            ),
        ] {
            let e = parse("f.yaml", "lab", &format!("{SW}{extra}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(expect), "{e}");
        }
    }
}
