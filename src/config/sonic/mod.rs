//! SONiC `config_db.json` → one switch of a scenario (`lossless import sonic`, and
//! `switches[].sonic:` in any scenario): PORT and CABLE_LENGTH give the ports; BUFFER_POOL,
//! BUFFER_PROFILE, BUFFER_PG and BUFFER_QUEUE the buffer plan ([`buffer`]); PORT_QOS_MAP and
//! the maps, QUEUE, SCHEDULER, WRED_PROFILE and PFC_WD the QoS ([`qos`]); ACL_TABLE and
//! ACL_RULE the ACL stage ([`acl`]); DEVICE_METADATA's HWSKU the chip ([`hwsku`]).
//!
//! The result is the scenario schema itself ([`SwitchRaw`]), each value carrying the line
//! of the JSON it came from, so the resolver checks it as it checks a YAML file and its
//! errors point into the JSON; [`yaml`] writes the same thing as a YAML file. References
//! SONiC resolves by name (a PG's profile, a profile's pool, a port's maps) are checked
//! here, with errors that name the table and key. Everything present that the model does not
//! use is listed once, in one warning.

pub mod acl;
pub mod beyond_pfc;
pub mod buffer;
pub mod db;
pub mod hwsku;
pub mod pg_lookup;
pub mod qos;
pub mod yaml;

use crate::config::diag::{Diag, Severity};
use crate::config::schema::{PortEntry, PortsRaw, Scalar, SwitchRaw, Val};
use db::{at, ConfigDb, Entry, Field};
use lossless_buffer_model::asic::Asic;
use lossless_buffer_model::{Named, Rate};
use serde_saphyr::{Location, Spanned};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

/// At most this many ports per switch (what a port set holds: Tomahawk 5's 256).
const MAX_PORTS: usize = lossless_pipeline::PortSet::MAX;

/// What to import.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The switch's name in the scenario.
    pub name: String,
    /// Ports to keep, by SONiC name (None: every port of PORT).
    pub ports: Option<Vec<String>>,
    /// Serve the ports as TAPs `<prefix>0`, `<prefix>1`, … (`lossless tap`).
    pub tap_prefix: Option<String>,
    /// The chip, instead of the one DEVICE_METADATA's HWSKU names.
    pub asic: Option<Asic>,
    /// `name` is DEVICE_METADATA's hostname (so that key is used, not ignored).
    pub named_by_hostname: bool,
    /// The SKU's pg_profile_lookup.ini: add the lossless PGs buffermgrd would.
    pub pg_profile_lookup: Option<pg_lookup::PgLookup>,
}

/// An imported switch.
#[derive(Debug)]
pub struct Imported {
    /// The switch, as a scenario file would give it.
    pub switch: SwitchRaw,
    /// Ports kept, in order.
    pub ports: Vec<String>,
    /// DEVICE_METADATA's HWSKU and platform, when given.
    pub hwsku: Option<String>,
    /// DEVICE_METADATA's platform.
    pub platform: Option<String>,
    /// The chip, and how it was chosen.
    pub asic: (Asic, String),
    /// The lossless PGs added from a pg_profile_lookup.ini (its file, and what).
    pub derived: Option<(String, pg_lookup::Derived)>,
    /// What works but differs from the file (per-port settings the model keeps per switch,
    /// tables and fields not modelled).
    pub warnings: Vec<Diag>,
}

/// The state of one import: the file, its tables, the ports kept, what was not used.
pub struct Ctx<'a> {
    file: &'a str,
    db: &'a ConfigDb,
    /// Ports kept, in order.
    pub ports: Vec<String>,
    warnings: RefCell<Vec<Diag>>,
    unused: RefCell<BTreeMap<String, BTreeSet<String>>>,
    /// The switch takes DEVICE_METADATA's hostname as its name.
    named_by_hostname: bool,
}

impl<'a> Ctx<'a> {
    /// An import of `db` (read from `file`) with no ports kept yet.
    fn new(file: &'a str, db: &'a ConfigDb, named_by_hostname: bool) -> Ctx<'a> {
        Ctx {
            file,
            db,
            ports: Vec::new(),
            warnings: RefCell::default(),
            unused: RefCell::default(),
            named_by_hostname,
        }
    }

    /// An error at `line` on `key` (`TABLE.entry.field`).
    pub fn error(&self, line: Option<u64>, key: &str, message: impl Into<String>) -> Diag {
        Diag {
            severity: Severity::Error,
            file: self.file.to_string(),
            line,
            key: key.to_string(),
            message: message.into(),
        }
    }

    /// A warning at `line` on `key`.
    pub fn warn(&self, line: Option<u64>, key: &str, message: impl Into<String>) {
        let d = Diag {
            severity: Severity::Warning,
            ..self.error(line, key, message)
        };
        self.warnings.borrow_mut().push(d);
    }

    /// Note that `what` of `table` is present but not modelled (listed once at the end).
    pub fn unused(&self, table: &str, what: &str) {
        self.unused
            .borrow_mut()
            .entry(table.to_string())
            .or_default()
            .insert(what.to_string());
    }

    /// Note every field of `e` not in `used` as not modelled.
    pub fn unused_fields(&self, table: &str, e: &Entry, used: &[&str]) {
        for f in e.keys().filter(|f| !used.contains(&f.as_str())) {
            self.unused(table, f);
        }
    }

    /// The tables.
    pub fn db(&self) -> &ConfigDb {
        self.db
    }

    /// Whether `port` is one of those kept.
    pub fn keeps(&self, port: &str) -> bool {
        self.ports.iter().any(|p| p == port)
    }

    /// A numeric field of entry `key` of `table`, or an error naming it.
    pub fn int(&self, table: &str, key: &str, name: &str, v: &Spanned<Field>) -> Result<i64, Diag> {
        let text = v.value.text();
        text.trim().parse::<i64>().map_err(|_| {
            self.error(
                at(v),
                &format!("{table}.{key}.{name}"),
                format!("`{text}` is not a whole number"),
            )
        })
    }
}

/// `value` with the location of `from`.
pub fn val<T, U>(value: T, from: &Spanned<U>) -> Val<T> {
    Spanned::new(value, from.referenced, from.defined)
}

/// `value` with no location (a default the file does not state).
pub fn bare<T>(value: T) -> Val<T> {
    Spanned::new(value, Location::UNKNOWN, Location::UNKNOWN)
}

/// A field's text as a scalar: an integer when it is one.
pub fn scalar(v: &Spanned<Field>) -> Val<Scalar> {
    let t = v.value.text();
    val(
        t.trim()
            .parse::<i64>()
            .map_or(Scalar::Str(t.clone()), Scalar::Int),
        v,
    )
}

/// Split a `PORTS|rest` key into its ports (comma-separated) and the rest.
pub fn split_key(key: &str) -> Option<(Vec<&str>, &str)> {
    let (ports, rest) = key.split_once('|')?;
    Some((ports.split(',').map(str::trim).collect(), rest))
}

/// Import `text`, the contents of `file`.
pub fn import(file: &str, text: &str, opts: &Options) -> Result<Imported, Diag> {
    let mut parsed = db::parse(file, text)?;
    let kept = select_ports(&Ctx::new(file, &parsed.db, false), opts)?;
    let derived = match &opts.pg_profile_lookup {
        Some(l) => Some((
            l.file.clone(),
            pg_lookup::apply(file, &mut parsed.db, l, &kept)?,
        )),
        None => {
            lossless_pgs_given(file, &parsed.db, &kept)?;
            None
        }
    };
    let db = &parsed.db;
    let mut cx = Ctx::new(file, db, opts.named_by_hostname);
    cx.ports = kept;
    if let Some((lookup, d)) = &derived {
        for (port, why) in &d.skipped {
            cx.warn(
                db.port_qos_map
                    .as_ref()
                    .and_then(|t| t.value.get(port))
                    .and_then(at),
                &format!("PORT_QOS_MAP.{port}.pfc_enable"),
                format!("no lossless PGs from {lookup}: {why} (buffermgrd gives the port none)"),
            );
        }
    }
    let (hwsku, platform) = metadata(&cx);
    let asic = match (opts.asic, hwsku.as_deref().and_then(hwsku::chip_of)) {
        (Some(a), _) => (a, "as asked".to_string()),
        (None, Some(a)) => (a, format!("HWSKU {}", hwsku.as_deref().unwrap_or_default())),
        (None, None) => {
            cx.warn(
                None,
                "DEVICE_METADATA.localhost.hwsku",
                format!(
                    "HWSKU {} is not one of the chips the model knows (trident2, tomahawk, tomahawk2, tomahawk3, trident3, spectrum, spectrum2, spectrum3): buffer.asic generic; give the chip with --asic (sonic.asic)",
                    hwsku.as_deref().unwrap_or("(none)")
                ),
            );
            (Asic::Generic, "no known HWSKU".to_string())
        }
    };
    let ports = ports(&cx, opts)?;
    let qos = qos::resolve(&cx)?;
    let buffer = buffer::resolve(&cx, asic.0)?;
    let acl = acl::resolve(&cx)?;
    let first = db.port.as_ref().map_or_else(|| bare(()), |p| val((), p));
    let switch = SwitchRaw {
        name: val(opts.name.clone(), &first),
        ports: Some(val(PortsRaw::List(ports), &first)),
        mac: None,
        pipeline_latency: None,
        buffer: Some(buffer),
        qos: Some(qos),
        forwarding: None,
        acl,
        cbfc: None,
        trimming: beyond_pfc::trimming(&cx)?,
        llr: beyond_pfc::llr(&cx)?,
        sonic: None,
        p4: None,
        imported_from: Some(file.to_string()),
    };
    unmodelled(&cx, &parsed.present);
    Ok(Imported {
        switch,
        ports: cx.ports.clone(),
        hwsku,
        platform,
        asic,
        derived,
        warnings: cx.warnings.into_inner(),
    })
}

/// Without a pg_profile_lookup.ini, every PFC priority of a kept port needs its BUFFER_PG
/// entry in the file: an error naming the port and the way out when one is missing.
fn lossless_pgs_given(file: &str, db: &ConfigDb, ports: &[String]) -> Result<(), Diag> {
    for port in ports {
        let missing: Vec<String> = pg_lookup::pfc_pgs(db, port)
            .into_iter()
            .filter(|&pg| !pg_lookup::has_pg(db, port, pg))
            .map(|pg| pg.to_string())
            .collect();
        if missing.is_empty() {
            continue;
        }
        let e = db.port_qos_map.as_ref().and_then(|t| t.value.get(port));
        return Err(Diag {
            severity: Severity::Error,
            file: file.to_string(),
            line: e.and_then(|e| e.value.get("pfc_enable")).and_then(at),
            key: format!("PORT_QOS_MAP.{port}.pfc_enable"),
            message: format!(
                "PFC is enabled on PG{} {} of {port}, but BUFFER_PG gives {} no profile. On a switch (traditional buffer model) buffermgrd adds the lossless PGs from the SKU's pg_profile_lookup.ini: give that file with --pg-profile-lookup (sonic.pg_profile_lookup), or import a config_db saved after buffermgrd ran",
                if missing.len() == 1 { "" } else { "s" },
                missing.join(","),
                if missing.len() == 1 { "it" } else { "them" }
            ),
        });
    }
    Ok(())
}

/// DEVICE_METADATA's HWSKU and platform.
fn metadata(cx: &Ctx) -> (Option<String>, Option<String>) {
    let Some(t) = &cx.db.device_metadata else {
        return (None, None);
    };
    let Some(local) = t.value.get("localhost") else {
        return (None, None);
    };
    let get = |f: &str| local.value.get(f).map(|v| v.value.text());
    // The hostname names the switch when `lossless import` is given no name.
    let used: &[&str] = if cx.named_by_hostname {
        &["hwsku", "platform", "hostname"]
    } else {
        &["hwsku", "platform"]
    };
    cx.unused_fields("DEVICE_METADATA", &local.value, used);
    (get("hwsku"), get("platform"))
}

/// The ports kept: those asked for, or every port of PORT, in SONiC's `index` order.
fn select_ports(cx: &Ctx, opts: &Options) -> Result<Vec<String>, Diag> {
    let Some(table) = &cx.db.port else {
        return Err(cx.error(
            None,
            "PORT",
            "the file has no PORT table: nothing to import",
        ));
    };
    let number = |name: &str| -> u64 {
        name.chars()
            .filter(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap_or(0)
    };
    let order = |name: &str| -> (u64, u64) {
        let index = table.value[name]
            .value
            .get("index")
            .and_then(|v| v.value.text().parse().ok())
            .unwrap_or(u64::MAX);
        (index, number(name))
    };
    let ports: Vec<String> = match &opts.ports {
        Some(list) => {
            for p in list {
                if !table.value.contains_key(p) {
                    return Err(cx.error(
                        at(table),
                        "PORT",
                        format!("port `{p}` asked for is not in PORT"),
                    ));
                }
            }
            list.clone()
        }
        None => {
            let mut all: Vec<String> = table.value.keys().cloned().collect();
            all.sort_by_key(|p| (order(p), p.clone()));
            all
        }
    };
    if ports.is_empty() {
        return Err(cx.error(at(table), "PORT", "no ports to import"));
    }
    if ports.len() > MAX_PORTS {
        return Err(cx.error(
            at(table),
            "PORT",
            format!(
                "{} ports: a switch here has at most {MAX_PORTS}; choose some with --ports (sonic.ports)",
                ports.len()
            ),
        ));
    }
    Ok(ports)
}

/// The ports: speed, MTU (SONiC's is the IP MTU: the largest frame is 22 bytes more,
/// Ethernet header, one VLAN tag and FCS, as orchagent programs it), cable.
fn ports(cx: &Ctx, opts: &Options) -> Result<Vec<Val<PortEntry>>, Diag> {
    let table = cx.db.port.as_ref().expect("checked by select_ports");
    let cables = cx.db.cable_length.as_ref().and_then(|t| {
        if t.value.len() > 1 {
            cx.unused("CABLE_LENGTH", "entries other than the first");
        }
        t.value.values().next()
    });
    let mut out = Vec::new();
    for (i, name) in cx.ports.iter().enumerate() {
        let e = &table.value[name];
        let key = format!("PORT.{name}");
        let speed = match e.value.get("speed") {
            Some(s) => {
                let mbps = cx.int("PORT", name, "speed", s)?;
                if mbps <= 0 {
                    return Err(cx.error(
                        at(s),
                        &format!("{key}.speed"),
                        "a speed is in Mb/s, above 0",
                    ));
                }
                Some(val(Scalar::Str(Rate::mbps(mbps as u64).to_string()), s))
            }
            None => {
                return Err(cx.error(
                    at(e),
                    &format!("{key}.speed"),
                    "missing: a port needs its speed (Mb/s)",
                ))
            }
        };
        let mtu = match e.value.get("mtu") {
            Some(m) => {
                // SONiC's port MTU is the IP MTU (sonic-port.yang: 68–9216); the frame
                // is 22 bytes more (Ethernet header, a tag, FCS).
                let ip = cx.int("PORT", name, "mtu", m)?;
                if !(68..=9216).contains(&ip) {
                    return Err(cx.error(
                        at(m),
                        &format!("{key}.mtu"),
                        format!("{ip} is outside SONiC's 68–9216 (the IP MTU; the largest frame is 22 bytes more)"),
                    ));
                }
                val(Scalar::Int(ip + 22), m)
            }
            None => bare(Scalar::Int(9100 + 22)),
        };
        let cable = match cables.and_then(|c| c.value.get(name)) {
            Some(c) => Some(val(Scalar::Str(c.value.text()), c)),
            None => {
                cx.warn(
                    at(e),
                    &format!("CABLE_LENGTH.{name}"),
                    "no cable length: the default cable (2m) is used, and headroom is sized for it",
                );
                None
            }
        };
        if e.value
            .get("admin_status")
            .is_some_and(|s| s.value.text() == "down")
        {
            cx.unused("PORT", "admin_status down (ports are served up)");
        }
        cx.unused_fields(
            "PORT",
            &e.value,
            &["speed", "mtu", "admin_status", "pfc_asym"],
        );
        out.push(val(
            PortEntry {
                name: Some(val(name.clone(), e)),
                tap: opts.tap_prefix.as_ref().map(|p| bare(format!("{p}{i}"))),
                iface: None,
                link: None,
                speed,
                cable,
                delay: None,
                mtu: Some(mtu),
                flow_control: None,
                tc_to_dscp: None,
            },
            e,
        ));
    }
    Ok(out)
}

/// One warning for everything present that the model does not use.
fn unmodelled(cx: &Ctx, present: &[(String, Option<u64>)]) {
    let mut parts = Vec::new();
    let tables: Vec<&str> = present
        .iter()
        .map(|(t, _)| t.as_str())
        .filter(|t| !db::MODELLED.contains(t))
        .collect();
    if !tables.is_empty() {
        parts.push(format!("tables {}", tables.join(", ")));
    }
    for (table, what) in cx.unused.borrow().iter() {
        parts.push(format!(
            "{table} {}",
            what.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    if !parts.is_empty() {
        cx.warn(
            None,
            "",
            format!("not modelled, ignored: {}", parts.join("; ")),
        );
    }
}

impl Imported {
    /// `lossless check`'s note on where the switch came from.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{} port(s) of HWSKU {} (platform {}), chip {} ({})",
            self.ports.len(),
            self.hwsku.as_deref().unwrap_or("unknown"),
            self.platform.as_deref().unwrap_or("unknown"),
            self.asic.0.word(),
            self.asic.1
        );
        if let Some((file, d)) = &self.derived {
            s += &format!(
                "; lossless PGs of {} port(s) derived from {file} as buffermgrd does",
                d.ports.len()
            );
            if !d.profiles.is_empty() {
                s += &format!(" (profiles {})", d.profiles.join(", "));
            }
        }
        s
    }
}

/// Replace each switch of `raw` that has `sonic:` by its import (its ports, buffer, QoS
/// and ACLs; the file keeps name, mac, pipeline latency and forwarding). The config_db path
/// is relative to `scenario_file`'s directory. Returns the imports' warnings.
/// The config_db files the switches of `raw` (read from `scenario_file`) name with
/// `sonic:`, as their values' errors name them.
pub fn config_db_files(
    scenario_file: &str,
    raw: &crate::config::schema::ScenarioFile,
) -> Vec<String> {
    let base = std::path::Path::new(scenario_file)
        .parent()
        .unwrap_or(std::path::Path::new(""));
    raw.switches
        .value
        .iter()
        .filter_map(|sw| sw.sonic.as_ref())
        .map(|s| {
            base.join(&s.value.settings().file.value)
                .display()
                .to_string()
        })
        .collect()
}

/// An error about a value that came from a config_db (its file and line are the
/// config_db's), named by the config_db's own table, key and field
/// (`BUFFER_PROFILE|pg_lossless_100000_5m_profile.size`), the scenario key it became said
/// after. Unchanged when the file cannot be read as JSON or nothing is written at the line.
pub fn name_in_config_db(mut e: Diag) -> Diag {
    let Some(line) = e.line.filter(|l| *l > 0) else {
        return e;
    };
    let Ok(text) = crate::config::input::read_text(std::path::Path::new(&e.file)) else {
        return e;
    };
    let Ok(doc) = crate::config::yaml_edit::Doc::parse(&text) else {
        return e;
    };
    // The line's first written character: a field's key (or a value alone on its line).
    let start: usize = text
        .split_inclusive('\n')
        .take(line as usize - 1)
        .map(str::len)
        .sum();
    let Some(indent) = text[start..].find(|c: char| !c.is_whitespace()) else {
        return e;
    };
    let steps = doc.steps_at(start + indent);
    let named = match steps.as_slice() {
        [] => return e,
        [table] => table.clone(),
        [table, key] => format!("{table}|{key}"),
        [table, key, rest @ ..] => format!("{table}|{key}.{}", rest.join(".")),
    };
    e.message = format!("{} (the scenario's `{}`)", e.message, e.key);
    e.key = named;
    e
}

pub fn expand(
    scenario_file: &str,
    raw: &mut crate::config::schema::ScenarioFile,
) -> Result<Vec<Diag>, Diag> {
    let mut warnings = Vec::new();
    for sw in raw.switches.value.iter_mut() {
        let Some(sonic) = &sw.sonic else { continue };
        let s = sonic.value.settings();
        let key = format!("{}.sonic", sw.name.value);
        let here = |message: String| Diag {
            severity: Severity::Error,
            file: scenario_file.to_string(),
            line: crate::config::values::line(sonic),
            key: key.clone(),
            message,
        };
        for (given, what) in [
            (sw.ports.is_some(), "ports"),
            (sw.buffer.is_some(), "buffer"),
            (sw.qos.is_some(), "qos"),
            (sw.acl.is_some(), "acl"),
        ] {
            if given {
                return Err(here(format!(
                    "`{what}` comes from the config_db with `sonic:`; leave it out, or import the file (`lossless import sonic`) and edit the YAML"
                )));
            }
        }
        let base = std::path::Path::new(scenario_file)
            .parent()
            .unwrap_or(std::path::Path::new(""));
        let path = base.join(&s.file.value);
        let shown = path.display().to_string();
        let text =
            crate::config::input::read_text(&path).map_err(|e| here(format!("{shown}: {e}")))?;
        let asic =
            match &s.asic {
                Some(a) => Some(Asic::from_word(&a.value).map_err(|e| {
                    here(format!("asic: `{}` is not one of {}", e.input, e.expected))
                })?),
                None => None,
            };
        let pg_profile_lookup = match &s.pg_profile_lookup {
            Some(f) => {
                let path = base.join(&f.value);
                let shown = path.display().to_string();
                let text = crate::config::input::read_text(&path)
                    .map_err(|e| here(format!("pg_profile_lookup: {shown}: {e}")))?;
                Some(pg_lookup::PgLookup::parse(&shown, &text)?)
            }
            None => None,
        };
        let opts = Options {
            name: sw.name.value.clone(),
            ports: s
                .ports
                .as_ref()
                .map(|l| l.value.iter().map(|p| p.value.clone()).collect()),
            tap_prefix: s.tap_prefix.as_ref().map(|t| t.value.clone()),
            asic,
            named_by_hostname: false,
            pg_profile_lookup,
        };
        let imported = import(&shown, &text, &opts)?;
        warnings.extend(imported.warnings);
        let mut i = imported.switch;
        if let (Some(b), Some(ps)) = (i.buffer.as_mut(), s.port_slices) {
            b.value.port_slices = Some(ps);
        }
        sw.ports = i.ports;
        sw.buffer = i.buffer;
        sw.qos = i.qos;
        sw.acl = i.acl;
        // The file's own `trimming:` and `llr:` win over the config_db's.
        if sw.trimming.is_none() {
            sw.trimming = i.trimming;
        }
        if sw.llr.is_none() {
            sw.llr = i.llr;
        }
        sw.imported_from = i.imported_from;
    }
    Ok(warnings)
}
