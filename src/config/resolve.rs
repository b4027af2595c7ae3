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
    // Pass 1 finds the links; pass 2 resolves each switch with the cables its links give
    // its ports, so that headroom (checked and defaulted) is sized for the real cable.
    let scratch = Diags::new(file);
    let first = resolve_switches(&scratch, &raw, seed, &|_| Vec::new())?;
    let links = topology::resolve(&scratch, stem, &raw, &first, duration)?.links;
    let wires = |si: usize| -> Vec<switch::PortWire> {
        let mut w = Vec::new();
        for l in &links {
            for end in [l.a, l.b] {
                if end.switch == si {
                    w.push((end.port, l.cable, l.delay));
                }
            }
        }
        w
    };
    let mut switches = resolve_switches(&d, &raw, seed, &wires)?;
    let run = topology::resolve(&d, stem, &raw, &switches, duration)?;
    topology::neighbors::fill(&mut switches, &run)?;
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

/// Every switch of the file, each with the port wires `wires(index)`.
fn resolve_switches(
    d: &Diags,
    raw: &ScenarioFile,
    seed: u64,
    wires: &dyn Fn(usize) -> Vec<switch::PortWire>,
) -> Result<Vec<super::SwitchSpec>, Diag> {
    let top = Key::default();
    let mut switches: Vec<super::SwitchSpec> = Vec::new();
    for (index, sw) in raw.switches.value.iter().enumerate() {
        if switches.iter().any(|s| s.config.name == sw.name.value) {
            return d.error(
                line(&sw.name),
                &top.at("switches").at("name"),
                format!("switch `{}` is defined twice", sw.name.value),
            );
        }
        // An imported switch's own diagnostics name the file it came from.
        let spec = match &sw.imported_from {
            Some(file) => {
                let own = Diags::new(file);
                let spec = switch::resolve(&own, sw, index, seed, &wires(index))?;
                d.extend(own.into_warnings());
                spec
            }
            None => switch::resolve(d, sw, index, seed, &wires(index))?,
        };
        switches.push(spec);
    }
    Ok(switches)
}
