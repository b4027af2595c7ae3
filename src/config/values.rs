//! Turning YAML values into typed ones: units (`100G`, `16MB`, `1.5ms`, `2m`), closed words
//! (`dscp`, `ecn_all`, …), priority ranges and maps, MAC addresses. Each helper reports a bad
//! value as an error that names the file, line and key.

use super::diag::{Diag, Diags, Key};
use super::schema::{Scalar, Val};
use lossless_buffer_model::units::UnitError;
use lossless_buffer_model::Named;
use lossless_pipeline::wire::addr::MacAddr;
use std::collections::BTreeMap;
use std::str::FromStr;

type Result<T> = std::result::Result<T, Diag>;

/// 1-based line of a value, when known.
pub fn line<T>(v: &Val<T>) -> Option<u64> {
    let l = v.referenced.line();
    (l > 0).then_some(l)
}

/// The line of an optional value, else of `fallback`.
pub fn line_or<T, U>(v: &Option<Val<T>>, fallback: &Val<U>) -> Option<u64> {
    v.as_ref().and_then(line).or(line(fallback))
}

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

impl Diags<'_> {
    /// A frame error rate: a probability in [0, 1) (`1e-6`), 0 when not given.
    pub fn error_rate(
        &self,
        v: &Option<Val<f64>>,
        key: &Key,
    ) -> Result<crate::config::scenario::ErrorRate> {
        use crate::config::scenario::ErrorRate;
        match v {
            None => Ok(ErrorRate::NONE),
            Some(r) if (0.0..1.0).contains(&r.value) => Ok(ErrorRate::new(r.value)),
            Some(r) => self.error(
                line(r),
                key,
                format!(
                    "{}: a frame error rate is a probability in [0, 1), such as 1e-6",
                    r.value
                ),
            ),
        }
    }

    /// A scalar parsed as a unit (`100G`, `16MB`, `1.5ms`, `2m`).
    pub fn unit<T: FromStr<Err = UnitError>>(&self, v: &Val<Scalar>, key: &Key) -> Result<T> {
        let text = match &v.value {
            Scalar::Str(s) => s.clone(),
            other => other.to_string(),
        };
        text.parse::<T>()
            .or_else(|e| self.error(line(v), key, e.to_string()))
    }

    /// An optional scalar parsed as a unit.
    pub fn opt_unit<T: FromStr<Err = UnitError>>(
        &self,
        v: &Option<Val<Scalar>>,
        key: &Key,
    ) -> Result<Option<T>> {
        v.as_ref().map(|v| self.unit(v, key)).transpose()
    }

    /// An optional scalar parsed as a unit that must lie in `range`; the error reads
    /// "VALUE: `rule`" (the unit-valued twin of [`Diags::int_in`]).
    pub fn opt_unit_in<T>(
        &self,
        v: &Option<Val<Scalar>>,
        key: &Key,
        range: std::ops::RangeInclusive<T>,
        rule: &str,
    ) -> Result<Option<T>>
    where
        T: FromStr<Err = UnitError> + PartialOrd + std::fmt::Display,
    {
        let Some(v) = v else {
            return Ok(None);
        };
        let t: T = self.unit(v, key)?;
        if !range.contains(&t) {
            return self.error(line(v), key, format!("{t}: {rule}"));
        }
        Ok(Some(t))
    }

    /// A word of `T`'s closed list.
    pub fn word<T: Named>(&self, v: &Val<String>, key: &Key) -> Result<T> {
        T::from_word(&v.value).or_else(|e| self.error(line(v), key, e.to_string()))
    }

    /// An optional word of `T`'s closed list.
    pub fn opt_word<T: Named>(&self, v: &Option<Val<String>>, key: &Key) -> Result<Option<T>> {
        v.as_ref().map(|v| self.word(v, key)).transpose()
    }

    /// A MAC address.
    pub fn mac(&self, v: &Val<String>, key: &Key) -> Result<MacAddr> {
        v.value
            .parse::<MacAddr>()
            .or_else(|e| self.error(line(v), key, e.to_string()))
    }

    /// An integer in `lo..=hi`; the error reads "`prefix`N is outside lo–hi".
    pub fn int_in(&self, v: &Val<i64>, key: &Key, lo: i64, hi: i64, prefix: &str) -> Result<i64> {
        if (lo..=hi).contains(&v.value) {
            Ok(v.value)
        } else {
            self.error(
                line(v),
                key,
                format!("{prefix}{} is outside {lo}–{hi}", v.value),
            )
        }
    }

    /// An integer in 0..=`max` as a u8.
    pub fn small(&self, v: &Val<i64>, key: &Key, max: i64) -> Result<u8> {
        self.int_in(v, key, 0, max, "").map(|x| x as u8)
    }

    /// A priority / PG / queue range such as `3`, `3-4` or `0-2,5-7`, as a bitmap.
    pub fn range(&self, text: &str, at: Option<u64>, key: &Key) -> Result<u8> {
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

    /// A `{range: value}` map over priorities 0–7 (and `default`) applied onto `base`.
    pub fn prio_map(
        &self,
        m: &Val<BTreeMap<String, Val<i64>>>,
        key: &Key,
        base: [u8; 8],
        max_value: i64,
    ) -> Result<[u8; 8]> {
        let mut out = base;
        if let Some(d) = m.value.get("default") {
            out = [self.small(d, &key.at("default"), max_value)?; 8];
        }
        for (k, v) in m.value.iter().filter(|(k, _)| *k != "default") {
            let mask = self.range(k, line(v), &key.at(k))?;
            let val = self.small(v, &key.at(k), max_value)?;
            for (i, slot) in out.iter_mut().enumerate() {
                if mask & (1 << i) != 0 {
                    *slot = val;
                }
            }
        }
        Ok(out)
    }

    /// `value` for every slot of `out` whose bit is set in `mask`.
    pub fn fill<T: Copy>(out: &mut [T; 8], mask: u8, value: T) {
        for (i, slot) in out.iter_mut().enumerate() {
            if mask & (1 << i) != 0 {
                *slot = value;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lossless_pipeline::config::Trust;

    fn val<T>(value: T) -> Val<T> {
        use serde_saphyr::Location;
        serde_saphyr::Spanned::new(value, Location::UNKNOWN, Location::UNKNOWN)
    }

    #[test]
    fn units_words_and_ranges() {
        let d = Diags::new("f.yaml");
        let k = Key::root("s").at("speed");
        let r: lossless_buffer_model::Rate = d.unit(&val(Scalar::Str("25G".into())), &k).unwrap();
        assert_eq!(r, lossless_buffer_model::Rate::gbps(25));
        let e = d
            .unit::<lossless_buffer_model::Rate>(&val(Scalar::Str("fast".into())), &k)
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("f.yaml: s.speed: `fast` is not a rate"),
            "{e}"
        );
        assert_eq!(
            d.word::<Trust>(&val("dot1p".into()), &k).unwrap(),
            Trust::Dot1p
        );
        let e = d.word::<Trust>(&val("ip".into()), &k).unwrap_err();
        assert_eq!(e.message, "`ip`: expected dscp or dot1p");
        assert_eq!(d.range("0-2,5-7", None, &k).unwrap(), 0b1110_0111);
        assert!(d
            .range("3-1", None, &k)
            .unwrap_err()
            .message
            .contains("runs backwards"));
        assert!(d
            .range("8", None, &k)
            .unwrap_err()
            .message
            .contains("outside 0–7"));
        assert_eq!(list_or_none::<&str>(&[]), "none");
    }
}
