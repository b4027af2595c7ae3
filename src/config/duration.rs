//! `--duration`: a scenario document with its run length replaced. Windows and events that
//! the file places inside its own length may fall outside the new one; a shorter run for a
//! quick look should still run, so they are cut to fit, each with a warning that says how,
//! instead of the errors the file itself would get.

use lossless_buffer_model::units::Time;
use serde_json::{Map, Value};

/// The document `yaml` with `duration: d`, and a warning for each window or event that was
/// cut to fit in it. The result is JSON text (for [`crate::sweep::parse_applied`]).
pub fn with_duration(yaml: &str, d: Time) -> Result<(String, Vec<String>), String> {
    let mut doc: Value =
        crate::config::input::from_yaml(yaml).map_err(|e| format!("reading the scenario: {e}"))?;
    let Value::Object(top) = &mut doc else {
        return Err("the scenario is not a map".into());
    };
    let mut warnings = Vec::new();
    top.insert("duration".into(), Value::String(format!("{}ps", d.as_ps())));
    if let Some(Value::Object(m)) = top.get_mut("measure") {
        if let Some(w) = fit_window(m, "measure", d, "measuring") {
            warnings.push(w);
        }
    }
    if let Some(Value::Object(o)) = top.get_mut("outputs") {
        if let Some(Value::Object(t)) = o.get_mut("timeseries") {
            if let Some(w) = fit_window(t, "outputs.timeseries", d, "sampling") {
                warnings.push(w);
            }
        }
    }
    if let Some(Value::Array(events)) = top.get_mut("events") {
        let before = events.len();
        let mut late = Vec::new();
        let mut i = 0;
        events.retain(|e| {
            let keep = time(e.get("at")).is_none_or(|at| at < d);
            if !keep {
                late.push(format!("events[{i}]"));
            }
            i += 1;
            keep
        });
        if events.len() < before {
            warnings.push(format!(
                "{} at or after the end of the run ({d}, --duration): they never happen",
                late.join(", ")
            ));
        }
    }
    let text = serde_json::to_string(&doc).map_err(|e| e.to_string())?;
    Ok((text, warnings))
}

/// A `{from, to}` window cut to a run of length `d`: the whole run when it starts at or
/// after the end, up to the end when it ends after it.
fn fit_window(m: &mut Map<String, Value>, key: &str, d: Time, doing: &str) -> Option<String> {
    let from = time(m.get("from")).unwrap_or(Time::ZERO);
    if from >= d {
        m.remove("from");
        m.remove("to");
        return Some(format!(
            "{key}.from: {from} is at or after the end of the run ({d}, --duration): {doing} the whole run"
        ));
    }
    match time(m.get("to")) {
        Some(to) if to > d => {
            m.remove("to");
            Some(format!(
                "{key}.to: {to} is after the end of the run ({d}, --duration): {doing} to the end"
            ))
        }
        _ => None,
    }
}

/// A time written as a string with its unit; anything else is left for the loader to judge.
fn time(v: Option<&Value>) -> Option<Time> {
    v.and_then(Value::as_str).and_then(|s| s.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_and_events_are_cut_to_the_new_length() {
        let yaml = "name: x\nduration: 2ms\nmeasure: {from: 1ms, to: 2ms}\n\
                    events:\n  - {at: 100us, port: h}\n  - {at: 1ms, port: h}\n";
        let (text, w) = with_duration(yaml, Time::from_us(500)).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
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
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["measure"]["from"], "1ms");
        assert!(v["measure"].get("to").is_none());
        assert!(w[0].starts_with("measure.to: 2ms is after the end"));
    }
}
