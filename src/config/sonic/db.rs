//! A SONiC `config_db.json` as read: every table this importer models, each entry and
//! field with its line in the file, and the names (with lines) of every table present.
//! The JSON is first checked by serde_json (so malformed JSON is reported with its line and
//! column), then read again through serde-saphyr for positions: JSON is YAML, and the
//! positions are what lets an error name the line of the offending key.

use crate::config::diag::{Diag, Severity};
use serde::de::{self, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::collections::BTreeMap;

/// A field's value: config_db writes strings, some tools numbers or booleans, and a few
/// fields (ACL_TABLE `ports`) lists.
#[derive(Clone, Debug, PartialEq)]
pub enum Field {
    /// A string, number or boolean, as text.
    Text(String),
    /// A list of strings.
    List(Vec<String>),
}

impl Field {
    /// The text of a scalar; a list joined by commas.
    pub fn text(&self) -> String {
        match self {
            Field::Text(s) => s.clone(),
            Field::List(l) => l.join(","),
        }
    }

    /// The items of a list, or of a comma-separated scalar (`ports@` in redis dumps).
    pub fn items(&self) -> Vec<String> {
        match self {
            Field::Text(s) => s
                .split(',')
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .collect(),
            Field::List(l) => l.clone(),
        }
    }
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Field;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string, number, boolean or list of strings")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
                Ok(Field::Text(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Field, E> {
                Ok(Field::Text(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Field, E> {
                Ok(Field::Text(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Field, E> {
                Ok(Field::Text(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Field, E> {
                Ok(Field::Text(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Field, E> {
                Ok(Field::Text(v.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Field, A::Error> {
                let mut out = Vec::new();
                while let Some(x) = s.next_element::<Field>()? {
                    out.push(x.text());
                }
                Ok(Field::List(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// One entry: field → value.
pub type Entry = BTreeMap<String, Spanned<Field>>;
/// One table: key → entry.
pub type Table = BTreeMap<String, Spanned<Entry>>;

macro_rules! tables {
    ($($field:ident => $name:literal),* $(,)?) => {
        /// The tables the importer models, as the file has them (absent: None).
        #[derive(Debug, Default, Deserialize)]
        pub struct ConfigDb {
            $(
                #[doc = concat!("`", $name, "`")]
                #[serde(rename = $name)]
                pub $field: Option<Spanned<Table>>,
            )*
        }

        /// Names of the tables the importer models.
        pub const MODELLED: &[&str] = &[$($name),*];
    };
}

tables! {
    device_metadata => "DEVICE_METADATA",
    port => "PORT",
    cable_length => "CABLE_LENGTH",
    buffer_pool => "BUFFER_POOL",
    buffer_profile => "BUFFER_PROFILE",
    buffer_pg => "BUFFER_PG",
    buffer_queue => "BUFFER_QUEUE",
    port_qos_map => "PORT_QOS_MAP",
    dscp_to_tc_map => "DSCP_TO_TC_MAP",
    dot1p_to_tc_map => "DOT1P_TO_TC_MAP",
    tc_to_priority_group_map => "TC_TO_PRIORITY_GROUP_MAP",
    tc_to_queue_map => "TC_TO_QUEUE_MAP",
    map_pfc_priority_to_queue => "MAP_PFC_PRIORITY_TO_QUEUE",
    wred_profile => "WRED_PROFILE",
    queue => "QUEUE",
    scheduler => "SCHEDULER",
    pfc_wd => "PFC_WD",
    acl_table => "ACL_TABLE",
    acl_rule => "ACL_RULE",
    tc_to_dscp_map => "TC_TO_DSCP_MAP",
    switch_trimming => "SWITCH_TRIMMING",
    llr_port => "LLR_PORT",
    llr_profile => "LLR_PROFILE",
}

/// A parsed file: the modelled tables, and every table's name with its line.
#[derive(Debug)]
pub struct Parsed {
    /// The modelled tables.
    pub db: ConfigDb,
    /// Every table in the file, with its line.
    pub present: Vec<(String, Option<u64>)>,
}

/// 1-based line of a spanned value, when known.
pub fn at<T>(v: &Spanned<T>) -> Option<u64> {
    let l = v.referenced.line();
    (l > 0).then_some(l)
}

/// Read `text` (the contents of `file`).
pub fn parse(file: &str, text: &str) -> Result<Parsed, Diag> {
    let err = |line: Option<u64>, message: String| Diag {
        severity: Severity::Error,
        file: file.to_string(),
        line,
        key: String::new(),
        message,
    };
    // Strict JSON first: its errors carry line and column.
    if let Err(e) = serde_json::from_str::<serde_json::Value>(text) {
        return Err(err(
            Some(e.line() as u64),
            format!(
                "malformed JSON at line {} column {}: {e}",
                e.line(),
                e.column()
            ),
        ));
    }
    let top: Spanned<BTreeMap<String, Spanned<IgnoredAny>>> = crate::config::input::from_yaml(text)
        .map_err(|e| {
            let why = crate::config::input::budget_words(&e).unwrap_or_else(|| e.to_string());
            err(None, format!("not a config_db: {why}"))
        })?;
    let present = top
        .value
        .iter()
        .map(|(name, v)| (name.clone(), at(v)))
        .collect();
    let db: ConfigDb = crate::config::input::from_yaml(text).map_err(|e| {
        let line = e.location().map(|l| l.line()).filter(|l| *l > 0);
        err(
            line,
            format!(
                "a modelled table is not shaped as config_db's `{{key: {{field: value}}}}`: {}",
                e.to_string().lines().next().unwrap_or_default()
            ),
        )
    })?;
    Ok(Parsed { db, present })
}

/// A reference as config_db writes it: `name` or the older `[TABLE|name]`.
pub fn reference(v: &str) -> &str {
    let v = v.trim();
    match v.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
        Some(inner) => inner.split_once('|').map_or(inner, |(_, n)| n),
        None => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_survive_and_malformed_json_names_line_and_column() {
        let text = "{\n  \"PORT\": {\n    \"Ethernet0\": {\"speed\": \"100000\", \"mtu\": 9100}\n  },\n  \"VLAN\": {}\n}\n";
        let p = parse("c.json", text).unwrap();
        let port = p.db.port.unwrap();
        let e0 = &port.value["Ethernet0"];
        assert_eq!(at(e0), Some(3));
        assert_eq!(e0.value["mtu"].value.text(), "9100");
        assert_eq!(
            p.present,
            vec![("PORT".to_string(), Some(2)), ("VLAN".to_string(), Some(5))]
        );
        let e = parse("c.json", "{\n  \"PORT\": {\n    \"Ethernet0\": {,}\n}").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("column 19"), "{}", e.message);
        assert_eq!(reference("[BUFFER_PROFILE|pg_lossless]"), "pg_lossless");
        assert_eq!(reference("pg_lossless"), "pg_lossless");
    }
}
