//! Config errors and warnings that name the file, the line, the key and the rule.

use std::fmt;

/// A config problem: `incast.yaml:14: tor.buffer.profiles.pg_lossless.xon: <rule broken>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// File name as given.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<u64>,
    /// Dotted key path, e.g. `tor.buffer.profiles.pg_lossless.xon`.
    pub key: String,
    /// What is wrong and what would be right.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if !self.key.is_empty() {
            write!(f, ": {}", self.key)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

/// A config that works but probably not as intended (e.g. headroom below the minimum).
pub type ConfigWarning = ConfigError;
