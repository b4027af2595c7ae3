//! Diagnostics of a config file: each one names the file, the line, the dotted key and the
//! rule broken (`incast.yaml:14: tor.buffer.profiles.pg_lossless.xon: …`), as an error
//! (the file is rejected) or a warning (it works, probably not as meant). [`Key`] builds
//! the key paths; [`Diags`] collects what one file produces.

use std::cell::RefCell;
use std::fmt;

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// The file is rejected.
    Error,
    /// The file works, probably not as meant (e.g. headroom below the minimum).
    Warning,
}

/// A config problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diag {
    /// Error or warning.
    pub severity: Severity,
    /// File name as given.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<u64>,
    /// Dotted key path, e.g. `tor.buffer.profiles.pg_lossless.xon`.
    pub key: String,
    /// What is wrong and what would be right.
    pub message: String,
}

impl fmt::Display for Diag {
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

impl std::error::Error for Diag {}

/// A rejected config (an error diagnostic).
pub type ConfigError = Diag;
/// A config that works but probably not as intended.
pub type ConfigWarning = Diag;

/// A dotted key path, built as resolution descends: `Key::root("tor").at("qos").at("trust")`
/// prints `tor.qos.trust`; `.index(2)` appends `[2]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Key(String);

impl Key {
    /// A path of one component (empty for the top level).
    pub fn root(name: &str) -> Key {
        Key(name.to_string())
    }

    /// The path to child `name`.
    pub fn at(&self, name: &str) -> Key {
        if self.0.is_empty() {
            Key(name.to_string())
        } else {
            Key(format!("{}.{name}", self.0))
        }
    }

    /// The path to element `i` of a list.
    pub fn index(&self, i: usize) -> Key {
        Key(format!("{}[{i}]", self.0))
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where the diagnostics of one file go: errors are returned, warnings collected.
#[derive(Debug)]
pub struct Diags<'a> {
    /// File name for messages.
    pub file: &'a str,
    warnings: RefCell<Vec<Diag>>,
}

impl<'a> Diags<'a> {
    /// A sink for `file`.
    pub fn new(file: &'a str) -> Diags<'a> {
        Diags {
            file,
            warnings: RefCell::default(),
        }
    }

    fn diag(&self, severity: Severity, line: Option<u64>, key: &Key, message: String) -> Diag {
        Diag {
            severity,
            file: self.file.to_string(),
            line,
            key: key.to_string(),
            message,
        }
    }

    /// An error diagnostic to report later (when a later stage finds the rule broken).
    pub fn later(&self, line: Option<u64>, key: &Key, message: impl Into<String>) -> Diag {
        self.diag(Severity::Error, line, key, message.into())
    }

    /// An error at `line` on `key` saying what rule is broken.
    pub fn error<T>(
        &self,
        line: Option<u64>,
        key: &Key,
        message: impl Into<String>,
    ) -> Result<T, Diag> {
        Err(self.diag(Severity::Error, line, key, message.into()))
    }

    /// Record a warning (the config works, probably not as meant).
    pub fn warn(&self, line: Option<u64>, key: &Key, message: impl Into<String>) {
        let d = self.diag(Severity::Warning, line, key, message.into());
        self.warnings.borrow_mut().push(d);
    }

    /// Record warnings found elsewhere (another file's, such as an imported config_db).
    pub fn extend(&self, warnings: Vec<Diag>) {
        self.warnings.borrow_mut().extend(warnings);
    }

    /// The warnings recorded.
    pub fn into_warnings(self) -> Vec<Diag> {
        self.warnings.into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_messages_read_like_the_file() {
        let k = Key::root("tor")
            .at("buffer")
            .at("pools")
            .index(2)
            .at("size");
        assert_eq!(k.to_string(), "tor.buffer.pools[2].size");
        assert_eq!(Key::root("").at("duration").to_string(), "duration");
        let d = Diags::new("lab.yaml");
        let e: Diag = d.error::<()>(Some(7), &k, "too big").unwrap_err();
        assert_eq!(
            e.to_string(),
            "lab.yaml:7: tor.buffer.pools[2].size: too big"
        );
        d.warn(None, &Key::default(), "hm");
        let w = d.into_warnings();
        assert_eq!(
            (w[0].severity, w[0].to_string()),
            (Severity::Warning, "lab.yaml: hm".into())
        );
    }
}
