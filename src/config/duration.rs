//! `--duration`: a scenario document with its run length replaced. Windows and events that
//! the file places inside its own length may fall outside the new one; a shorter run for a
//! quick look should still run, so they are cut to fit, each with a warning that says how,
//! instead of the errors the file itself would get.

use super::yaml_edit::Doc;
use lossless_buffer_model::units::Time;

/// The document `yaml` with `duration: d`, and a warning for each window or event that was
/// cut to fit in it. The file is edited in place ([`super::yaml_edit`]): the rest of its
/// text stays as written.
pub fn with_duration(yaml: &str, d: Time) -> Result<(String, Vec<String>), String> {
    let mut doc = Doc::parse(yaml).map_err(|e| format!("reading the scenario: {e}"))?;
    let mut warnings = Vec::new();
    doc.set("duration", &format!("{}ps", d.as_ps()))?;
    for (path, doing) in [("measure", "measuring"), ("outputs.timeseries", "sampling")] {
        if let Some(w) = fit_window(&mut doc, path, d, doing)? {
            warnings.push(w);
        }
    }
    let mut late = Vec::new();
    for i in 0..doc.len("events").unwrap_or(0) {
        if time(doc.scalar(&format!("events.{i}.at"))).is_some_and(|at| at >= d) {
            late.push(i);
        }
    }
    for i in late.iter().rev() {
        doc.remove_item("events", *i)?;
    }
    if !late.is_empty() {
        let names: Vec<String> = late.iter().map(|i| format!("events[{i}]")).collect();
        warnings.push(format!(
            "{} at or after the end of the run ({d}, --duration): they never happen",
            names.join(", ")
        ));
    }
    Ok((doc.finish(), warnings))
}

/// A `{from, to}` window at `path` cut to a run of length `d`: the whole run when it
/// starts at or after the end, up to the end when it ends after it.
fn fit_window(doc: &mut Doc, path: &str, d: Time, doing: &str) -> Result<Option<String>, String> {
    if !doc.has(path) {
        return Ok(None);
    }
    let from = time(doc.scalar(&format!("{path}.from"))).unwrap_or(Time::ZERO);
    if from >= d {
        doc.remove_key(path, "from")?;
        doc.remove_key(path, "to")?;
        return Ok(Some(format!(
            "{path}.from: {from} is at or after the end of the run ({d}, --duration): {doing} the whole run"
        )));
    }
    match time(doc.scalar(&format!("{path}.to"))) {
        Some(to) if to > d => {
            doc.remove_key(path, "to")?;
            Ok(Some(format!(
                "{path}.to: {to} is after the end of the run ({d}, --duration): {doing} to the end"
            )))
        }
        _ => Ok(None),
    }
}

/// A time written with its unit; anything else is left for the loader to judge.
fn time(v: Option<&str>) -> Option<Time> {
    v.and_then(|s| s.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn windows_and_events_are_cut_to_the_new_length() {
        let yaml = "name: x\nduration: 2ms\nmeasure: {from: 1ms, to: 2ms}\n\
                    events:\n  - {at: 100us, port: h}\n  - {at: 1ms, port: h}\n";
        let (text, w) = with_duration(yaml, Time::from_us(500)).unwrap();
        let v: Value = serde_saphyr::from_str(&text).unwrap();
        assert_eq!(v["duration"], "500000000ps");
        assert!(v.get("measure").unwrap().get("from").is_none());
        assert_eq!(v["events"].as_array().unwrap().len(), 1);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].starts_with("measure.from: 1ms is at or after the end of the run (500us"));
        assert!(w[1].starts_with("events[1] at or after"));
        // Longer: nothing to cut; a window that ends past a shorter end ends at it.
        let (_, w) = with_duration(yaml, Time::from_ms(3)).unwrap();
        assert!(w.is_empty());
        let (text, w) = with_duration(yaml, Time::from_us(1500)).unwrap();
        let v: Value = serde_saphyr::from_str(&text).unwrap();
        assert_eq!(v["measure"]["from"], "1ms");
        assert!(v["measure"].get("to").is_none());
        assert!(w[0].starts_with("measure.to: 2ms is after the end"));
    }
}
