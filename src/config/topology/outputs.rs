//! `outputs:` (the JSON report, pcap captures, a CSV time series) and `measure:` (the
//! window of throughput, utilisation, pause fractions and latency).

use super::PatchPanel;
use crate::config::defaults;
use crate::config::diag::{Diag, Diags, Key};
use crate::config::scenario::{Measure, Outputs, PcapOut, TimeseriesOut};
use crate::config::schema::{MeasureRaw, OutputsRaw, Val};
use crate::config::values::line;
use lossless_buffer_model::Time;
use std::path::PathBuf;

type Result<T> = std::result::Result<T, Diag>;

/// The outputs; default paths are under `out/` and named after the file `stem`.
pub fn resolve(cx: &PatchPanel, stem: &str, o: &Val<OutputsRaw>) -> Result<Outputs> {
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
        let kt = k.at("timeseries").at("interval");
        let interval: Time = d.unit(&t.value.interval, &kt)?;
        if interval == Time::ZERO {
            return d.error(line(&t.value.interval), &kt, "must be above 0");
        }
        let csv = t.value.csv.as_ref().map_or_else(
            || PathBuf::from(defaults::OUTPUT_DIR).join(format!("{stem}-timeseries.csv")),
            |c| PathBuf::from(&c.value),
        );
        out.timeseries = Some(TimeseriesOut { interval, csv });
    }
    Ok(out)
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
