//! Helpers every part of the config resolution shares: reporting errors and warnings with
//! file, line and key, and turning raw values into units, priority ranges and MACs.

use super::error::{ConfigError, ConfigWarning};
use super::raw::{Scalar, Val};
use lossless_buffer_model::{Bytes, Length, Rate, Time};
use std::collections::BTreeMap;
use std::str::FromStr;

type Result<T> = std::result::Result<T, ConfigError>;

/// Names for an "unknown X (defined: …)" message: comma-separated, or `none`.
pub fn list_or_none<S: AsRef<str>>(names: &[S]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names
            .iter()
            .map(AsRef::as_ref)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// `02:00:00:00:00:01` (or with `-`) → bytes.
pub fn mac_from_str(s: &str) -> Option<[u8; 6]> {
    let parts: Vec<_> = s.split([':', '-']).collect();
    let mut mac = [0u8; 6];
    (parts.len() == 6
        && parts
            .iter()
            .zip(mac.iter_mut())
            .all(|(p, m)| u8::from_str_radix(p, 16).map(|b| *m = b).is_ok()))
    .then_some(mac)
}

/// Where errors and warnings of one file are reported, with the helpers that turn raw
/// values into units, ranges and maps.
pub struct Resolver<'a> {
    /// File name for messages.
    pub file: &'a str,
    /// Warnings found so far.
    pub warnings: std::cell::RefCell<Vec<ConfigWarning>>,
}

/// 1-based line of a value, when known.
pub fn line<T>(v: &Val<T>) -> Option<u64> {
    let l = v.referenced.line();
    (l > 0).then_some(l)
}

impl Resolver<'_> {
    /// An error at `line` on `key` saying what rule is broken.
    pub fn error<T>(&self, line: Option<u64>, key: &str, message: impl Into<String>) -> Result<T> {
        Err(ConfigError {
            file: self.file.to_string(),
            line,
            key: key.to_string(),
            message: message.into(),
        })
    }

    /// Record a warning (the config works, probably not as meant).
    pub fn warn(&self, line: Option<u64>, key: &str, message: impl Into<String>) {
        self.warnings.borrow_mut().push(ConfigError {
            file: self.file.to_string(),
            line,
            key: key.to_string(),
            message: message.into(),
        });
    }

    /// A scalar parsed as a unit (`100G`, `16MB`, `1.5ms`, `2m`), or an error naming the value.
    pub fn parse_unit<T: FromStr<Err = lossless_buffer_model::units::UnitError>>(
        &self,
        v: &Val<Scalar>,
        key: &str,
    ) -> Result<T> {
        let text = match &v.value {
            Scalar::Str(s) => s.clone(),
            other => other.to_string(),
        };
        text.parse::<T>()
            .or_else(|e| self.error(line(v), key, e.to_string()))
    }

    /// A size in bytes (`1518`, `32KiB`, `16MB`).
    pub fn bytes(&self, v: &Val<Scalar>, key: &str) -> Result<Bytes> {
        self.parse_unit(v, key)
    }
    /// A time (`500ns`, `5us`, `1.5ms`; a bare `0`).
    pub fn time(&self, v: &Val<Scalar>, key: &str) -> Result<Time> {
        self.parse_unit(v, key)
    }
    /// A rate in bits per second (`100G`, `400M`).
    pub fn rate(&self, v: &Val<Scalar>, key: &str) -> Result<Rate> {
        self.parse_unit(v, key)
    }
    /// A cable length (`2m`, `0.5m`).
    pub fn length(&self, v: &Val<Scalar>, key: &str) -> Result<Length> {
        self.parse_unit(v, key)
    }

    /// Apply `f` to an optional value.
    pub fn opt<T>(
        &self,
        v: &Option<Val<Scalar>>,
        key: &str,
        f: impl Fn(&Self, &Val<Scalar>, &str) -> Result<T>,
    ) -> Result<Option<T>> {
        v.as_ref().map(|v| f(self, v, key)).transpose()
    }

    /// `"0-2,5-7"` → bitmap of priorities / queues / PGs.
    /// A priority / PG / queue range such as `3`, `3-4` or `0-2,5-7` as a bitmap.
    pub fn range(&self, text: &str, at: Option<u64>, key: &str) -> Result<u8> {
        let mut mask = 0u8;
        for part in text.split(',') {
            let part = part.trim();
            let (a, b) = match part.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (part, part),
            };
            let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) else {
                return self.error(at, key, format!("`{text}` is not a range of priorities such as \"3\", \"3-4\" or \"0-2,5-7\""));
            };
            if a > 7 || b > 7 {
                return self.error(at, key, format!("priority {} is outside 0–7", a.max(b)));
            }
            if a > b {
                return self.error(at, key, format!("range `{part}` runs backwards"));
            }
            for i in a..=b {
                mask |= 1 << i;
            }
        }
        Ok(mask)
    }

    /// A map `{key: value}` over priorities 0–7 (`default` allowed when `default_ok`).
    /// A `{range: value}` map over priorities 0–7 (with `default`) applied onto `base`.
    pub fn prio_map(
        &self,
        m: &Val<BTreeMap<String, Val<i64>>>,
        key: &str,
        base: [u8; 8],
        max_value: i64,
    ) -> Result<[u8; 8]> {
        let mut out = base;
        if let Some(d) = m.value.get("default") {
            let v = self.small(d, &format!("{key}.default"), max_value)?;
            out = [v; 8];
        }
        for (k, v) in &m.value {
            if k == "default" {
                continue;
            }
            let mask = self.range(k, line(v), &format!("{key}.{k}"))?;
            let val = self.small(v, &format!("{key}.{k}"), max_value)?;
            for (i, slot) in out.iter_mut().enumerate() {
                if mask & (1 << i) != 0 {
                    *slot = val;
                }
            }
        }
        Ok(out)
    }

    /// An integer in 0..=max as a u8.
    pub fn small(&self, v: &Val<i64>, key: &str, max: i64) -> Result<u8> {
        if !(0..=max).contains(&v.value) {
            return self.error(line(v), key, format!("{} is outside 0–{max}", v.value));
        }
        Ok(v.value as u8)
    }
}
