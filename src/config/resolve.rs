//! A parsed scenario file resolved into a [`Scenario`]: name, seed and duration, each
//! switch ([`super::switch`]), then what `lossless run` adds around them
//! ([`super::topology`]). Dependencies run one way: topology reads the switches, never the
//! other way round.

use super::defaults;
use super::diag::{Diag, Diags, Key};
use super::scenario::Scenario;
use super::schema::ScenarioFile;
use super::values::line;
use super::{switch, topology};
use lossless_buffer_model::Time;

/// Resolve `raw`, read from `file` (named in diagnostics; `stem` names default outputs).
pub fn resolve(file: &str, stem: &str, raw: ScenarioFile) -> Result<(Scenario, Vec<Diag>), Diag> {
    let d = Diags::new(file);
    let top = Key::default();
    let seed = raw.seed.as_ref().map_or(defaults::SEED, |s| s.value);
    let duration: Option<Time> = d.opt_unit(&raw.duration, &top.at("duration"))?;
    if duration == Some(Time::ZERO) {
        return d.error(
            raw.duration.as_ref().and_then(line),
            &top.at("duration"),
            "a run needs a length above 0, such as 2ms (leave it out to run until idle)",
        );
    }
    if raw.switches.value.is_empty() {
        return d.error(
            line(&raw.switches),
            &top.at("switches"),
            "at least one switch is needed",
        );
    }
    let mut switches = Vec::new();
    for (index, sw) in raw.switches.value.iter().enumerate() {
        if switches
            .iter()
            .any(|s: &super::SwitchSpec| s.config.name == sw.name.value)
        {
            return d.error(
                line(&sw.name),
                &top.at("switches").at("name"),
                format!("switch `{}` is defined twice", sw.name.value),
            );
        }
        switches.push(switch::resolve(&d, sw, index, seed)?);
    }
    let run = topology::resolve(&d, stem, &raw, &switches, duration)?;
    let name = raw.name.map_or_else(|| stem.to_string(), |n| n.value);
    Ok((
        Scenario {
            name,
            seed,
            duration,
            switches,
            run,
        },
        d.into_warnings(),
    ))
}
