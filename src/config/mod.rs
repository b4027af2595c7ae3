//! Scenario and switch files: the YAML schema ([`schema`]), resolution into typed,
//! validated, defaulted configuration ([`resolve`], with [`switch`] and [`topology`]), the
//! defaults ([`defaults`]), and diagnostics that name file, line, key and rule ([`diag`]).
//! This module reads the file; everything below it works on values.
//!
//! YAML is read with `serde-saphyr` (pure Rust, panic-free, errors with line and snippet;
//! `serde_yaml` is deprecated, RUSTSEC-2024-0320).

pub mod defaults;
pub mod diag;
pub mod duration;
pub mod input;
pub mod resolve;
pub mod scenario;
pub mod schema;
pub mod sonic;
pub mod switch;
pub mod topology;
pub mod values;
pub mod words;
pub mod yaml_edit;

pub use diag::{ConfigError, ConfigWarning, Diag, Severity};
pub use scenario::{
    Action, Attach, ErrorRate, EventSpec, Fault, FaultFate, FlowDef, HopAt, HostSpec, LinkSpec,
    Measure, Outputs, PcapOut, PendingMac, PortRef, RunSpec, Sampling, Scenario, SwitchSpec,
    Target, TimeseriesOut,
};

use std::path::Path;

/// A loaded scenario and the warnings found on the way.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The resolved scenario.
    pub scenario: Scenario,
    /// Things that work but are probably not meant (printed by every command).
    pub warnings: Vec<ConfigWarning>,
}

/// Read and resolve the scenario file at `path`.
pub fn load(path: &Path) -> Result<Loaded, ConfigError> {
    let file = path.display().to_string();
    let text = input::read_text(path).map_err(|message| Diag {
        severity: Severity::Error,
        file: file.clone(),
        line: None,
        key: String::new(),
        message,
    })?;
    let stem = path
        .file_stem()
        .map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned());
    parse(&file, &stem, &text)
}

/// Resolve scenario `text` read from `file` (named in errors; `stem` names default outputs).
pub fn parse(file: &str, stem: &str, text: &str) -> Result<Loaded, ConfigError> {
    let mut raw: schema::ScenarioFile =
        input::from_yaml(text).map_err(|e| yaml_error(file, text, &e))?;
    let config_dbs = sonic::config_db_files(file, &raw);
    let imported = sonic::expand(file, &mut raw)?;
    let (scenario, mut warnings) = resolve::resolve(file, stem, raw).map_err(|e| {
        // A value from a switch's config_db (`sonic:`): named as the config_db names it.
        if config_dbs.contains(&e.file) {
            sonic::name_in_config_db(e)
        } else {
            e
        }
    })?;
    warnings.splice(0..0, imported);
    Ok(Loaded { scenario, warnings })
}

/// What a value of the number type `ty` (as the parser names it) must be.
fn type_rule(ty: &str) -> Option<String> {
    let (lo, hi) = match ty {
        "i64" => (i64::MIN.to_string(), i64::MAX.to_string()),
        "u64" => ("0".into(), u64::MAX.to_string()),
        "u32" => ("0".into(), u32::MAX.to_string()),
        "u16" => ("0".into(), u16::MAX.to_string()),
        "u8" => ("0".into(), u8::MAX.to_string()),
        _ => return None,
    };
    Some(format!(
        "not a whole number from {lo} to {hi}, the most this key can hold (its own range, smaller, is in docs/scenario.md)"
    ))
}

/// Turn a serde-saphyr error into ours: `file:line: message` followed by its snippet; a
/// value the parser could not take as its type (`invalid i64`: a number too large) named
/// by its key, with the rule it broke.
fn yaml_error(file: &str, source: &str, e: &serde_saphyr::Error) -> ConfigError {
    if let Some(message) = input::budget_words(e) {
        return Diag {
            severity: Severity::Error,
            file: file.to_string(),
            line: None,
            key: String::new(),
            message,
        };
    }
    let text = e.to_string();
    let line = e.location().map(|l| l.line()).filter(|l| *l > 0);
    // saphyr renders "error: line L column C: message\n --> snippet…"; keep message + snippet.
    let message = match text.split_once(": ") {
        Some((head, rest)) if head.starts_with("error") => {
            rest.split_once(": ").map_or(rest, |(_, m)| m).to_string()
        }
        _ => text,
    };
    // The snippet names its source; saphyr knows only the text.
    let message = message.replace("<input>", file);
    // A scalar of the wrong type: the key it is the value of, and what the type holds.
    let key = match (message.strip_prefix("invalid "), e.location()) {
        (Some(rest), Some(l)) if l.line() > 0 => {
            let ty = rest.split_whitespace().next().unwrap_or("");
            let offset = source
                .split_inclusive('\n')
                .take(l.line() as usize - 1)
                .map(str::len)
                .sum::<usize>()
                + source
                    .lines()
                    .nth(l.line() as usize - 1)
                    .unwrap_or("")
                    .chars()
                    .take((l.column() as usize).saturating_sub(1))
                    .map(char::len_utf8)
                    .sum::<usize>();
            yaml_edit::Doc::parse(source)
                .ok()
                .and_then(|d| d.path_at(offset))
                .map(|k| (k, type_rule(ty)))
        }
        _ => None,
    };
    let (key, message) = match key {
        Some((k, Some(rule))) => (k, format!("{rule}\n{message}")),
        Some((k, None)) => (k, message),
        None => (String::new(), message),
    };
    Diag {
        severity: Severity::Error,
        file: file.to_string(),
        line,
        key,
        message,
    }
}
