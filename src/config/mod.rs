//! Scenario and switch configuration: YAML schema ([`raw`]), resolution with defaults and
//! validation ([`resolve`]), and errors that name file, line, key and rule ([`error`]).
//!
//! YAML is read with `serde-saphyr` (pure Rust, panic-free, errors with line and snippet;
//! `serde_yaml` is deprecated, RUSTSEC-2024-0320).

pub mod common;
pub mod error;
pub mod raw;
pub mod resolve;
pub mod sim;

pub use error::{ConfigError, ConfigWarning};
pub use resolve::{Scenario, SwitchSpec};

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
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: file.clone(),
        line: None,
        key: String::new(),
        message: format!("cannot read: {e}"),
    })?;
    let stem = path
        .file_stem()
        .map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned());
    parse(&file, &stem, &text)
}

/// Resolve scenario `text` read from `file` (named in errors).
pub fn parse(file: &str, stem: &str, text: &str) -> Result<Loaded, ConfigError> {
    let raw: raw::ScenarioFile = serde_saphyr::from_str(text).map_err(|e| yaml_error(file, &e))?;
    let (scenario, warnings) = resolve::resolve(file, stem, raw)?;
    Ok(Loaded { scenario, warnings })
}

/// Turn a serde-saphyr error into ours: `file:line: message` followed by its snippet.
fn yaml_error(file: &str, e: &serde_saphyr::Error) -> ConfigError {
    let text = e.to_string();
    let line = e.location().map(|l| l.line()).filter(|l| *l > 0);
    // saphyr renders "error: line L column C: message\n --> snippet…"; keep message + snippet.
    let message = match text.split_once(": ") {
        Some((head, rest)) if head.starts_with("error") => {
            rest.split_once(": ").map_or(rest, |(_, m)| m).to_string()
        }
        _ => text,
    };
    ConfigError {
        file: file.to_string(),
        line,
        key: String::new(),
        message,
    }
}
