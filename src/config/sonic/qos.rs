//! PORT_QOS_MAP and the maps it names, QUEUE with SCHEDULER and WRED_PROFILE, and PFC_WD →
//! `qos:`. The model keeps one set of maps, one scheduler and one watchdog per switch: they
//! are the first kept port's, and kept ports whose settings differ are named in a warning.
//! Maps give every entry explicitly over `default: 0`, SAI's class for a value a map leaves
//! out; a port with no PORT_QOS_MAP entry classifies everything into class 0 and sends no
//! PFC, as a SONiC port with no maps bound does.

use super::db::{at, reference, Entry, Field, Table};
use super::{bare, scalar, split_key, val, Ctx};
use crate::config::diag::Diag;
use crate::config::schema::{PfcwdRaw, QosRaw, Scalar, SchedRaw, Val, WredRaw};
use crate::config::values::list_or_none;
use serde_saphyr::Spanned;
use std::collections::BTreeMap;

type Result<T> = std::result::Result<T, Diag>;

/// A `{key: value}` map of the scenario schema.
type ValMap = Val<BTreeMap<String, Val<i64>>>;

/// The fields of a PORT_QOS_MAP entry the model reads, with the table each names.
const MAPS: &[(&str, &str)] = &[
    ("dscp_to_tc_map", "DSCP_TO_TC_MAP"),
    ("dot1p_to_tc_map", "DOT1P_TO_TC_MAP"),
    ("tc_to_pg_map", "TC_TO_PRIORITY_GROUP_MAP"),
    ("tc_to_queue_map", "TC_TO_QUEUE_MAP"),
    ("pfc_to_queue_map", "MAP_PFC_PRIORITY_TO_QUEUE"),
    ("tc_to_dscp_map", "TC_TO_DSCP_MAP"),
];

/// The QoS of the kept ports.
pub fn resolve(cx: &Ctx) -> Result<Val<QosRaw>> {
    let pqm = cx.db().port_qos_map.as_ref();
    // Check every kept port's references, and see whether they agree.
    for p in &cx.ports {
        if let Some(e) = pqm.and_then(|t| t.value.get(p)) {
            check_refs(cx, p, e)?;
        }
    }
    if let Some(g) = pqm.and_then(|t| t.value.get("global")) {
        check_refs(cx, "global", g)?;
    }
    let first = &cx.ports[0];
    let signature = |p: &str| -> String {
        let e = pqm.and_then(|t| t.value.get(p));
        let mut s = e.map_or(String::new(), |e| {
            e.value
                .iter()
                .map(|(k, v)| format!("{k}={};", v.value.text()))
                .collect()
        });
        s += &queue_rows(cx, p)
            .iter()
            .map(|(q, e)| format!("{q}:{:?}", fields(e)))
            .collect::<String>();
        s += &pfcwd_row(cx, p).map_or(String::new(), |e| format!("{:?}", fields(e)));
        s
    };
    let mine = signature(first);
    let differ: Vec<&str> = cx
        .ports
        .iter()
        .filter(|p| signature(p) != mine)
        .map(String::as_str)
        .collect();
    if !differ.is_empty() {
        cx.warn(
            pqm.and_then(|t| t.value.get(first)).and_then(at),
            &format!("PORT_QOS_MAP.{first}"),
            format!(
                "the model keeps one set of QoS maps, scheduler and PFC watchdog per switch: {first}'s are used, and {} differ (import them apart with --ports)",
                differ.join(", ")
            ),
        );
    }
    let entry = pqm.and_then(|t| t.value.get(first));
    let global = pqm.and_then(|t| t.value.get("global"));
    let get = |f: &str| {
        entry
            .and_then(|e| e.value.get(f))
            .or_else(|| (f == "dscp_to_tc_map").then(|| global.and_then(|g| g.value.get(f)))?)
    };
    let anchor = entry.map_or_else(|| bare(()), |e| val((), e));
    let map = |field: &str, table: Option<&Spanned<Table>>, width: u8| -> Result<Option<ValMap>> {
        let Some(name) = get(field) else {
            return Ok(None);
        };
        let m = &table.expect("checked").value[reference(&name.value.text())];
        Ok(Some(map_values(cx, field, name, m, width)?))
    };
    let db = cx.db();
    let dscp_to_tc = map("dscp_to_tc_map", db.dscp_to_tc_map.as_ref(), 64)?;
    let dot1p_to_tc = map("dot1p_to_tc_map", db.dot1p_to_tc_map.as_ref(), 8)?;
    let tc_to_pg = map("tc_to_pg_map", db.tc_to_priority_group_map.as_ref(), 8)?;
    let tc_to_queue = map("tc_to_queue_map", db.tc_to_queue_map.as_ref(), 8)?;
    let tc_to_dscp = map("tc_to_dscp_map", db.tc_to_dscp_map.as_ref(), 8)?;
    if let Some(pfcq) = map("pfc_to_queue_map", db.map_pfc_priority_to_queue.as_ref(), 8)? {
        let same = tc_to_queue.as_ref().is_some_and(|t| {
            pfcq.value
                .iter()
                .all(|(k, v)| k == "default" || t.value.get(k).map(|x| x.value) == Some(v.value))
        });
        if !same {
            cx.warn(
                at(&pfcq),
                &format!("PORT_QOS_MAP.{first}.pfc_to_queue_map"),
                "differs from tc_to_queue_map: the model pauses the queue of a priority's own class (tc_to_queue)",
            );
        }
    }
    let trust = if dscp_to_tc.is_some() || dot1p_to_tc.is_none() {
        "dscp"
    } else {
        "dot1p"
    };
    let pfc_enable = get("pfc_enable").map(|v| {
        val(
            v.value
                .items()
                .iter()
                .filter_map(|x| x.parse::<i64>().ok())
                .map(|x| val(x, v))
                .collect(),
            v,
        )
    });
    if let Some(e) = entry {
        let mut used: Vec<&str> = MAPS.iter().map(|(f, _)| *f).collect();
        used.push("pfc_enable");
        cx.unused_fields("PORT_QOS_MAP", &e.value, &used);
    }
    let pfc_asym = cx
        .db()
        .port
        .as_ref()
        .and_then(|t| t.value.get(first))
        .and_then(|e| e.value.get("pfc_asym"))
        .map(|v| val(v.value.text(), v));
    let (scheduler, wred_profiles, queue_wred) = queues(cx, first)?;
    Ok(val(
        QosRaw {
            trust: Some(bare(trust.to_string())),
            // No map bound: SAI puts everything in class 0.
            dscp_to_tc: dscp_to_tc.or_else(|| Some(bare(zero_map()))),
            dot1p_to_tc: dot1p_to_tc.or_else(|| Some(bare(zero_map()))),
            // SONiC's DOT1P_TO_TC_MAP has no DEI: drop-eligible frames map alike.
            dei_to_tc: None,
            tc_to_pg: tc_to_pg.or_else(|| Some(bare(zero_map()))),
            tc_to_queue: tc_to_queue.or_else(|| Some(bare(zero_map()))),
            tc_to_dot1p: None,
            tc_to_dscp,
            pfc_enable: Some(pfc_enable.unwrap_or_else(|| bare(Vec::new()))),
            pfc_asym,
            flow_control: None,
            pause_quanta: None,
            pfc_response: None,
            scheduler,
            wred_profiles,
            queue_wred,
            pfcwd: pfcwd(cx, first)?,
        },
        &anchor,
    ))
}

fn zero_map() -> BTreeMap<String, Val<i64>> {
    BTreeMap::from([("default".to_string(), bare(0))])
}

/// The maps a PORT_QOS_MAP entry names must exist.
fn check_refs(cx: &Ctx, port: &str, e: &Spanned<Entry>) -> Result<()> {
    let db = cx.db();
    for (field, table) in MAPS {
        let Some(v) = e.value.get(*field) else {
            continue;
        };
        let t = match *field {
            "dscp_to_tc_map" => db.dscp_to_tc_map.as_ref(),
            "dot1p_to_tc_map" => db.dot1p_to_tc_map.as_ref(),
            "tc_to_pg_map" => db.tc_to_priority_group_map.as_ref(),
            "tc_to_queue_map" => db.tc_to_queue_map.as_ref(),
            "tc_to_dscp_map" => db.tc_to_dscp_map.as_ref(),
            _ => db.map_pfc_priority_to_queue.as_ref(),
        };
        let name = reference(&v.value.text()).to_string();
        if !t.is_some_and(|t| t.value.contains_key(&name)) {
            let known: Vec<&str> = t
                .map(|t| t.value.keys().map(String::as_str).collect())
                .unwrap_or_default();
            return Err(cx.error(
                at(v),
                &format!("PORT_QOS_MAP.{port}.{field}"),
                format!(
                    "map `{name}` is not in {table} (maps: {})",
                    list_or_none(&known)
                ),
            ));
        }
    }
    Ok(())
}

/// A map's entries, every value below `width` mapped (SAI's 0 for those the map leaves
/// out), written as the most common class as `default` and the others one by one; values
/// are classes, PGs or queues 0–7.
fn map_values(
    cx: &Ctx,
    field: &str,
    name: &Spanned<Field>,
    m: &Spanned<Entry>,
    width: u8,
) -> Result<ValMap> {
    let table = MAPS
        .iter()
        .find(|(f, _)| *f == field)
        .map_or(field, |(_, t)| t);
    let mname = reference(&name.value.text()).to_string();
    let mut full: Vec<(i64, Option<&Spanned<Field>>)> = vec![(0, None); width as usize];
    for (k, v) in &m.value {
        let key = format!("{table}.{mname}.{k}");
        let Some(n) = k.trim().parse::<u8>().ok().filter(|n| *n < width) else {
            return Err(cx.error(at(v), &key, format!("`{k}` is not a value 0–{}", width - 1)));
        };
        let x = cx.int(table, &mname, k, v)?;
        let most = if field == "tc_to_dscp_map" { 63 } else { 7 };
        if !(0..=most).contains(&x) {
            let what = if most == 63 {
                "a DSCP 0–63"
            } else {
                "a class, PG or queue 0–7"
            };
            return Err(cx.error(at(v), &key, format!("{x} is not {what}")));
        }
        full[n as usize] = (x, Some(v));
    }
    let mut counts = [0usize; 64];
    for (x, _) in &full {
        counts[*x as usize] += 1;
    }
    // The most common value; the lowest among equals.
    let common = (0..64).rev().max_by_key(|&x| counts[x]).unwrap_or(0) as i64;
    let mut out = BTreeMap::from([("default".to_string(), val(common, m))]);
    for (n, (x, v)) in full.iter().enumerate() {
        if *x != common {
            let at = v.map_or_else(|| val(*x, m), |v| val(*x, v));
            out.insert(n.to_string(), at);
        }
    }
    Ok(val(out, m))
}

/// Every field of an entry as text (for comparing ports).
fn fields(e: &Spanned<Entry>) -> Vec<(String, String)> {
    e.value
        .iter()
        .map(|(k, v)| (k.clone(), v.value.text()))
        .collect()
}

/// The QUEUE rows of `port`: (queue range, entry), as the file writes them.
fn queue_rows<'a>(cx: &'a Ctx, port: &str) -> Vec<(String, &'a Spanned<Entry>)> {
    let Some(t) = &cx.db().queue else {
        return Vec::new();
    };
    t.value
        .iter()
        .filter_map(|(k, e)| {
            let (ports, range) = split_key(k)?;
            ports.contains(&port).then(|| (range.to_string(), e))
        })
        .collect()
}

type Queues = (
    Option<Val<BTreeMap<String, Val<SchedRaw>>>>,
    Option<Val<BTreeMap<String, Val<WredRaw>>>>,
    Option<Val<BTreeMap<String, Val<String>>>>,
);

/// `port`'s queues: each one's SCHEDULER entry and WRED_PROFILE.
fn queues(cx: &Ctx, port: &str) -> Result<Queues> {
    let rows = queue_rows(cx, port);
    if rows.is_empty() {
        return Ok((None, None, None));
    }
    let db = cx.db();
    let mut sched = BTreeMap::new();
    let mut wred_profiles = BTreeMap::new();
    let mut queue_wred = BTreeMap::new();
    let mut wrr = false;
    for (range, e) in rows {
        let key = format!("QUEUE.{port}|{range}");
        cx.unused_fields("QUEUE", &e.value, &["scheduler", "wred_profile"]);
        if let Some(s) = e.value.get("scheduler") {
            let name = reference(&s.value.text()).to_string();
            let Some(se) = db.scheduler.as_ref().and_then(|t| t.value.get(&name)) else {
                return Err(cx.error(
                    at(s),
                    &format!("{key}.scheduler"),
                    format!("scheduler `{name}` is not in SCHEDULER"),
                ));
            };
            let kind = se
                .value
                .get("type")
                .map_or("DWRR".to_string(), |t| t.value.text());
            let skey = format!("SCHEDULER.{name}");
            let kind = match kind.to_ascii_uppercase().as_str() {
                "STRICT" => "strict",
                "DWRR" => "dwrr",
                "WRR" => {
                    wrr = true;
                    "dwrr"
                }
                other => {
                    return Err(cx.error(
                        se.value.get("type").and_then(at),
                        &format!("{skey}.type"),
                        format!("`{other}`: a scheduler is STRICT, DWRR or WRR"),
                    ))
                }
            };
            let weight = match se.value.get("weight") {
                Some(w) if kind != "strict" => {
                    Some(val(cx.int("SCHEDULER", &name, "weight", w)?, w))
                }
                _ => None,
            };
            cx.unused_fields("SCHEDULER", &se.value, &["type", "weight"]);
            sched.insert(
                range.clone(),
                val(
                    SchedRaw {
                        kind: val(kind.to_string(), se),
                        weight,
                    },
                    se,
                ),
            );
        }
        if let Some(w) = e.value.get("wred_profile") {
            let name = reference(&w.value.text()).to_string();
            let Some(we) = db.wred_profile.as_ref().and_then(|t| t.value.get(&name)) else {
                return Err(cx.error(
                    at(w),
                    &format!("{key}.wred_profile"),
                    format!("WRED profile `{name}` is not in WRED_PROFILE"),
                ));
            };
            wred_profiles.insert(name.clone(), wred(cx, &name, we)?);
            queue_wred.insert(range.clone(), val(name, w));
        }
    }
    if wrr {
        cx.unused(
            "SCHEDULER",
            "WRR's packet counting (scheduled as DWRR, by bytes)",
        );
    }
    let some = |empty: bool| !empty;
    Ok((
        some(sched.is_empty()).then(|| bare(sched)),
        some(wred_profiles.is_empty()).then(|| bare(wred_profiles)),
        some(queue_wred.is_empty()).then(|| bare(queue_wred)),
    ))
}

/// A WRED_PROFILE entry with the scenario's key names.
fn wred(cx: &Ctx, name: &str, e: &Spanned<Entry>) -> Result<Val<WredRaw>> {
    let f = |n: &str| e.value.get(n);
    let prob = |n: &str| -> Result<Option<Val<i64>>> {
        f(n).map(|v| cx.int("WRED_PROFILE", name, n, v).map(|x| val(x, v)))
            .transpose()
    };
    let enable = |n: &str| f(n).map(|v| val(v.value.text() == "true", v));
    let mut used = vec!["ecn".to_string()];
    let mut w = WredRaw {
        ecn: f("ecn").map(|v| val(v.value.text(), v)),
        ..WredRaw::default()
    };
    for c in ["green", "yellow", "red"] {
        let (min, max, p, en) = (
            format!("{c}_min_threshold"),
            format!("{c}_max_threshold"),
            format!("{c}_drop_probability"),
            format!("wred_{c}_enable"),
        );
        let (kmin, kmax, prob, enable) = (
            f(&min).map(scalar),
            f(&max).map(scalar),
            prob(&p)?,
            enable(&en),
        );
        match c {
            "green" => {
                (
                    w.green_min,
                    w.green_max,
                    w.green_drop_probability,
                    w.wred_green_enable,
                ) = (kmin, kmax, prob, enable)
            }
            "yellow" => {
                (
                    w.yellow_min,
                    w.yellow_max,
                    w.yellow_drop_probability,
                    w.wred_yellow_enable,
                ) = (kmin, kmax, prob, enable)
            }
            _ => {
                (
                    w.red_min,
                    w.red_max,
                    w.red_drop_probability,
                    w.wred_red_enable,
                ) = (kmin, kmax, prob, enable)
            }
        }
        used.extend([min, max, p, en]);
    }
    let used: Vec<&str> = used.iter().map(String::as_str).collect();
    cx.unused_fields("WRED_PROFILE", &e.value, &used);
    Ok(val(w, e))
}

/// `port`'s PFC_WD entry.
fn pfcwd_row<'a>(cx: &'a Ctx, port: &str) -> Option<&'a Spanned<Entry>> {
    cx.db().pfc_wd.as_ref().and_then(|t| t.value.get(port))
}

/// PFC_WD of `port` (times in ms), with GLOBAL's POLL_INTERVAL.
fn pfcwd(cx: &Ctx, port: &str) -> Result<Option<Val<PfcwdRaw>>> {
    let Some(e) = pfcwd_row(cx, port) else {
        return Ok(None);
    };
    let ms = |v: &Spanned<Field>, field: &str| -> Result<Val<Scalar>> {
        let n = cx.int("PFC_WD", port, field, v)?;
        Ok(val(Scalar::Str(format!("{n}ms")), v))
    };
    let f = |n: &str| e.value.get(n);
    let poll = cx
        .db()
        .pfc_wd
        .as_ref()
        .and_then(|t| t.value.get("GLOBAL"))
        .and_then(|g| g.value.get("POLL_INTERVAL"));
    cx.unused_fields(
        "PFC_WD",
        &e.value,
        &["action", "detection_time", "restoration_time"],
    );
    Ok(Some(val(
        PfcwdRaw {
            action: f("action").map(|v| val(v.value.text(), v)),
            detection_time: f("detection_time")
                .map(|v| ms(v, "detection_time"))
                .transpose()?,
            restoration_time: f("restoration_time")
                .map(|v| ms(v, "restoration_time"))
                .transpose()?,
            polling_interval: poll.map(|v| ms(v, "POLL_INTERVAL")).transpose()?,
        },
        e,
    )))
}
