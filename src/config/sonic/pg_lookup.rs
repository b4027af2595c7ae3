//! A SKU's `pg_profile_lookup.ini` and what SONiC's buffermgrd (traditional buffer model)
//! writes from it: on the switch, config_db.json often has no lossless BUFFER_PG entries,
//! because buffermgrd adds them when it sees a port's speed, cable length and PFC
//! priorities. For each port whose PORT_QOS_MAP enables PFC it adds the profile
//! `pg_lossless_<speed>_<cable>_profile` (pool `ingress_lossless_pool`; `xon`,
//! `xon_offset` when the row has one, `xoff`, `size`, and the row's threshold as
//! `<pool mode>_th`), unless a profile of that name exists, and a BUFFER_PG entry
//! `<port>|<PGs>` naming it for each run of consecutive PFC priorities (`3-4`). A port with
//! a 0 m cable, no cable length or no row for its speed and cable gets none. Source:
//! sonic-swss `cfgmgr/buffermgr.cpp` (`readPgProfileLookupFile`, `doSpeedUpdateTask`)
//! and `orchagent/orch.cpp` (`generateIdListFromMap`), commit e6b0c5b5d2.

use super::db::{ConfigDb, Entry, Field, Table};
use crate::config::diag::{Diag, Diags, Key, Severity};
use serde_saphyr::{Location, Spanned};
use std::collections::BTreeMap;

/// The pool buffermgrd's lossless profiles draw from.
const POOL: &str = "ingress_lossless_pool";

/// One row of the lookup table: a lossless PG profile for one speed and cable length.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Reserved bytes of the PG (`size`).
    pub size: u64,
    /// XON threshold, bytes.
    pub xon: u64,
    /// Headroom above XOFF, bytes (`xoff`).
    pub xoff: u64,
    /// The shared-buffer threshold (α exponent or static bytes, after the pool's mode).
    pub threshold: i64,
    /// XON offset, bytes, when the table has that column.
    pub xon_offset: Option<u64>,
    /// The row's line in the file.
    pub line: u64,
}

/// A parsed `pg_profile_lookup.ini`: rows by (speed in Mb/s as written, cable as written).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PgLookup {
    /// The file, as shown in messages.
    pub file: String,
    /// Rows by (speed, cable), as the file writes them (`40000`, `300m`).
    pub rows: BTreeMap<(String, String), Row>,
}

/// What was derived for the kept ports.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Derived {
    /// Ports that got lossless PGs from the table.
    pub ports: Vec<String>,
    /// Profiles added (those already in BUFFER_PROFILE are reused, as buffermgrd does).
    pub profiles: Vec<String>,
    /// Ports with PFC enabled that got none, and why.
    pub skipped: Vec<(String, String)>,
}

impl PgLookup {
    /// Read `text`, the contents of `file`: `speed cable size xon xoff threshold
    /// [xon_offset]` per line, `#` comments.
    pub fn parse(file: &str, text: &str) -> Result<PgLookup, Diag> {
        let err = |line: usize, message: String| Diag {
            severity: Severity::Error,
            file: file.to_string(),
            line: Some(line as u64 + 1),
            key: String::new(),
            message,
        };
        let mut rows = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let cols: Vec<&str> = t.split_whitespace().collect();
            if !(6..=7).contains(&cols.len()) {
                return Err(err(
                    i,
                    format!(
                        "{} columns: a row is `speed cable size xon xoff threshold [xon_offset]`",
                        cols.len()
                    ),
                ));
            }
            let names = [
                "speed",
                "cable",
                "size",
                "xon",
                "xoff",
                "threshold",
                "xon_offset",
            ];
            let bytes = |c: usize| -> Result<u64, Diag> {
                cols[c].parse::<u64>().map_err(|_| {
                    err(
                        i,
                        format!("{}: `{}` is not a whole number", names[c], cols[c]),
                    )
                })
            };
            bytes(0)?;
            if cols[1]
                .strip_suffix('m')
                .is_none_or(|n| n.parse::<u64>().is_err())
            {
                return Err(err(
                    i,
                    format!(
                        "cable: `{}` is not a length in metres, as CABLE_LENGTH writes it (`40m`)",
                        cols[1]
                    ),
                ));
            }
            let threshold = cols[5]
                .parse::<i64>()
                .map_err(|_| err(i, format!("threshold: `{}` is not a whole number", cols[5])))?;
            let row = Row {
                size: bytes(2)?,
                xon: bytes(3)?,
                xoff: bytes(4)?,
                threshold,
                xon_offset: if cols.len() == 7 {
                    Some(bytes(6)?)
                } else {
                    None
                },
                line: i as u64 + 1,
            };
            let key = (cols[0].to_string(), cols[1].to_string());
            if let Some(first) = rows.get(&key) {
                let Row { line, .. } = first;
                return Err(err(
                    i,
                    format!(
                        "a second row for speed {} and cable {} (the first is line {line})",
                        cols[0], cols[1]
                    ),
                ));
            }
            rows.insert(key, row);
        }
        if rows.is_empty() {
            return Err(Diag {
                severity: Severity::Error,
                file: file.to_string(),
                line: None,
                key: String::new(),
                message: "no rows: a pg_profile_lookup.ini has `speed cable size xon xoff threshold [xon_offset]` lines".into(),
            });
        }
        Ok(PgLookup {
            file: file.to_string(),
            rows,
        })
    }
}

/// A field with no place in the config_db (it comes from the lookup table).
fn field(text: impl Into<String>) -> Spanned<Field> {
    Spanned::new(
        Field::Text(text.into()),
        Location::UNKNOWN,
        Location::UNKNOWN,
    )
}

/// The PFC priorities of `port` (PORT_QOS_MAP `pfc_enable`), as buffermgrd reads them:
/// comma-separated, values that are not PG ids ignored.
pub fn pfc_pgs(db: &ConfigDb, port: &str) -> Vec<u8> {
    let Some(e) = db.port_qos_map.as_ref().and_then(|t| t.value.get(port)) else {
        return Vec::new();
    };
    let Some(v) = e.value.get("pfc_enable") else {
        return Vec::new();
    };
    let mut pgs: Vec<u8> = v
        .value
        .items()
        .iter()
        .filter_map(|x| x.parse::<u8>().ok())
        .filter(|&x| x < 8)
        .collect();
    pgs.sort_unstable();
    pgs.dedup();
    pgs
}

/// Runs of consecutive ids as BUFFER_PG writes them: `[3, 4, 6]` → `3-4`, `6`.
pub fn ranges(ids: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            ids[i].to_string()
        } else {
            format!("{}-{}", ids[i], ids[j])
        });
        i = j + 1;
    }
    out
}

/// Whether BUFFER_PG has an entry for `port` whose range holds `pg`.
pub fn has_pg(db: &ConfigDb, port: &str, pg: u8) -> bool {
    let Some(t) = &db.buffer_pg else {
        return false;
    };
    t.value.keys().any(|k| {
        let Some((ports, range)) = super::split_key(k) else {
            return false;
        };
        if !ports.contains(&port) {
            return false;
        }
        // A range the resolver refuses later covers nothing here.
        Diags::new("")
            .range(range, None, &Key::root("BUFFER_PG"))
            .is_ok_and(|mask| mask & (1 << pg) != 0)
    })
}

/// Add to `db` what buffermgrd adds from `lookup` for `ports` (`config_db`: the file, for
/// errors).
pub fn apply(
    config_db: &str,
    db: &mut ConfigDb,
    lookup: &PgLookup,
    ports: &[String],
) -> Result<Derived, Diag> {
    let mut out = Derived::default();
    let error = |key: &str, message: String| Diag {
        severity: Severity::Error,
        file: config_db.to_string(),
        line: None,
        key: key.to_string(),
        message,
    };
    let mode = db
        .buffer_pool
        .as_ref()
        .and_then(|t| t.value.get(POOL))
        .and_then(|p| p.value.get("mode"))
        .map(|m| m.value.text());
    let cables: Option<&Entry> = db
        .cable_length
        .as_ref()
        .and_then(|t| t.value.values().next())
        .map(|e| &e.value);
    let mut profiles: Vec<(String, Entry)> = Vec::new();
    let mut pgs: Vec<(String, Entry)> = Vec::new();
    for port in ports {
        let ids = pfc_pgs(db, port);
        if ids.is_empty() {
            continue;
        }
        let Some(cable) = cables.and_then(|c| c.get(port)).map(|c| c.value.text()) else {
            out.skipped
                .push((port.clone(), "no cable length in CABLE_LENGTH".into()));
            continue;
        };
        if cable == "0m" {
            out.skipped.push((
                port.clone(),
                "cable length 0m (buffermgrd adds no PGs)".into(),
            ));
            continue;
        }
        let speed = db
            .port
            .as_ref()
            .and_then(|t| t.value.get(port))
            .and_then(|e| e.value.get("speed"))
            .map(|s| s.value.text())
            .unwrap_or_default();
        let Some(row) = lookup.rows.get(&(speed.clone(), cable.clone())) else {
            out.skipped.push((
                port.clone(),
                format!("no row for speed {speed} and cable {cable}"),
            ));
            continue;
        };
        let name = format!("pg_lossless_{speed}_{cable}_profile");
        let exists = db
            .buffer_profile
            .as_ref()
            .is_some_and(|t| t.value.contains_key(&name))
            || profiles.iter().any(|(n, _)| *n == name);
        if !exists {
            let Some(mode) = &mode else {
                return Err(error(
                    &format!("BUFFER_POOL.{POOL}.mode"),
                    format!("missing: buffermgrd names a lossless profile's threshold after it (`dynamic` → dynamic_th), and {} needs one for {port}", lookup.file),
                ));
            };
            let mut e = Entry::new();
            e.insert("pool".into(), field(POOL));
            e.insert("xon".into(), field(row.xon.to_string()));
            if let Some(o) = row.xon_offset {
                e.insert("xon_offset".into(), field(o.to_string()));
            }
            e.insert("xoff".into(), field(row.xoff.to_string()));
            e.insert("size".into(), field(row.size.to_string()));
            e.insert(format!("{mode}_th"), field(row.threshold.to_string()));
            profiles.push((name.clone(), e));
            out.profiles.push(name.clone());
        }
        for r in ranges(&ids) {
            let mut e = Entry::new();
            e.insert("profile".into(), field(name.clone()));
            pgs.push((format!("{port}|{r}"), e));
        }
        out.ports.push(port.clone());
    }
    let spanned = |t: Table| Spanned::new(t, Location::UNKNOWN, Location::UNKNOWN);
    let bare_entry = |e: Entry| Spanned::new(e, Location::UNKNOWN, Location::UNKNOWN);
    if !profiles.is_empty() {
        let t = db
            .buffer_profile
            .get_or_insert_with(|| spanned(Table::new()));
        for (n, e) in profiles {
            t.value.insert(n, bare_entry(e));
        }
    }
    if !pgs.is_empty() {
        let t = db.buffer_pg.get_or_insert_with(|| spanned(Table::new()));
        for (k, e) in pgs {
            // buffermgrd sets the entry, replacing one of the same key.
            t.value.insert(k, bare_entry(e));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_priorities_are_one_range() {
        assert_eq!(ranges(&[3, 4]), ["3-4"]);
        assert_eq!(ranges(&[3]), ["3"]);
        assert_eq!(ranges(&[0, 2, 3, 4, 7]), ["0", "2-4", "7"]);
        assert!(ranges(&[]).is_empty());
    }

    #[test]
    fn rows_parse_with_and_without_xon_offset() {
        let l = PgLookup::parse(
            "t.ini",
            "# speed cable size xon xoff threshold xon_offset\n  40000  300m 1248 2288 108160 0 2288\n100000 5m 0 18432 30000 -2\n",
        )
        .unwrap();
        let r = &l.rows[&("40000".into(), "300m".into())];
        assert_eq!(
            (r.size, r.xon, r.xoff, r.threshold, r.xon_offset, r.line),
            (1248, 2288, 108160, 0, Some(2288), 2)
        );
        let r = &l.rows[&("100000".into(), "5m".into())];
        assert_eq!((r.threshold, r.xon_offset), (-2, None));
    }

    #[test]
    fn bad_rows_name_their_line_and_the_rule() {
        let e = PgLookup::parse("t.ini", "# c\n40000 300m 1248 2288\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(
            e.message.contains("speed cable size xon xoff threshold"),
            "{e}"
        );
        let e = PgLookup::parse("t.ini", "40000 300 1248 2288 1 0\n").unwrap_err();
        assert!(e.message.contains("metres"), "{e}");
        let e = PgLookup::parse("t.ini", "40000 5m 1 2 3 0\n40000 5m 1 2 3 0\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("line 1"), "{e}");
        let e = PgLookup::parse("t.ini", "40000 5m 1 2 x 0\n").unwrap_err();
        assert!(e.message.contains("xoff"), "{e}");
        assert!(PgLookup::parse("t.ini", "# only\n").is_err());
    }
}
