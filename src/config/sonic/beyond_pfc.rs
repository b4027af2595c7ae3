//! The config_db tables of what lossless Ethernet does beyond PFC: `SWITCH_TRIMMING|GLOBAL`
//! (packet trimming) and `LLR_PORT` / `LLR_PROFILE` (UE link-level retry, as SONiC's LLR
//! HLD has them), turned into the scenario's `trimming:` and `llr:`.

use super::db::{at, Entry};
use super::{bare, scalar, val, Ctx};
use crate::config::diag::Diag;
use crate::config::schema::{LlrRaw, Scalar, TrimmingRaw, Val};
use serde_saphyr::Spanned;

type Result<T> = std::result::Result<T, Diag>;

/// `SWITCH_TRIMMING|GLOBAL` as `trimming:` (size, dscp_value or `from-tc` with tc_value,
/// queue_index or `dynamic`); None when the file has no such entry.
pub fn trimming(cx: &Ctx) -> Result<Option<Val<TrimmingRaw>>> {
    let Some(t) = &cx.db().switch_trimming else {
        return Ok(None);
    };
    let Some(g) = t.value.get("GLOBAL") else {
        return Err(cx.error(
            at(t),
            "SWITCH_TRIMMING",
            "SONiC keeps the trimming settings in SWITCH_TRIMMING|GLOBAL, and the file has no such entry",
        ));
    };
    let f = |name: &str| g.value.get(name);
    cx.unused_fields(
        "SWITCH_TRIMMING",
        &g.value,
        &["size", "dscp_value", "tc_value", "queue_index"],
    );
    let need = |name: &str| {
        f(name).ok_or_else(|| {
            cx.error(
                at(g),
                &format!("SWITCH_TRIMMING.GLOBAL.{name}"),
                "trimming needs `dscp_value` and `queue_index`",
            )
        })
    };
    let dscp = need("dscp_value")?;
    let dscp = match dscp.value.text().trim() {
        "from-tc" => val(Scalar::Str("from_tc".into()), dscp),
        _ => scalar(dscp),
    };
    let tc = match f("tc_value") {
        None => None,
        Some(v) => Some(val(cx.int("SWITCH_TRIMMING", "GLOBAL", "tc_value", v)?, v)),
    };
    Ok(Some(val(
        TrimmingRaw {
            size: f("size").map(bytes),
            dscp,
            tc,
            queue: scalar(need("queue_index")?),
            queues: None,
        },
        g,
    )))
}

/// A byte count as config_db writes it (a bare number) in the scenario's units.
fn bytes(v: &Spanned<super::db::Field>) -> Val<Scalar> {
    let t = v.value.text();
    let t = t.trim();
    let s = if t.chars().all(|c| c.is_ascii_digit()) {
        format!("{t}B")
    } else {
        t.to_string()
    };
    val(Scalar::Str(s), v)
}

/// Nanoseconds as config_db writes them (a bare number) in the scenario's units.
fn nanos(v: &Spanned<super::db::Field>) -> Val<Scalar> {
    let t = v.value.text();
    let t = t.trim();
    let s = if t.chars().all(|c| c.is_ascii_digit()) {
        format!("{t}ns")
    } else {
        t.to_string()
    };
    val(Scalar::Str(s), v)
}

/// `LLR_PORT` and `LLR_PROFILE` as `llr:`: the kept ports whose `llr_local` and
/// `llr_remote` are both `enabled`, with their profile (one profile per switch in this
/// model: ports naming different profiles are an error). None when no kept port speaks
/// LLR.
pub fn llr(cx: &Ctx) -> Result<Option<Val<LlrRaw>>> {
    let db = cx.db();
    let Some(ports) = &db.llr_port else {
        return Ok(None);
    };
    let mut on: Vec<Val<String>> = Vec::new();
    let mut profile: Option<(String, &Spanned<super::db::Field>)> = None;
    for name in &cx.ports {
        let Some(e) = ports.value.get(name) else {
            continue;
        };
        cx.unused_fields(
            "LLR_PORT",
            &e.value,
            &["llr_mode", "llr_local", "llr_remote", "llr_profile"],
        );
        let enabled = |f: &str| e.value.get(f).is_some_and(|v| v.value.text() == "enabled");
        if let Some(m) = e.value.get("llr_mode") {
            if m.value.text() != "static" {
                return Err(cx.error(
                    at(m),
                    &format!("LLR_PORT.{name}.llr_mode"),
                    format!(
                        "`{}`: only `static` LLR is modelled (dynamic needs LLDP between the ends)",
                        m.value.text()
                    ),
                ));
            }
        }
        if !(enabled("llr_local") && enabled("llr_remote")) {
            continue;
        }
        let Some(p) = e.value.get("llr_profile") else {
            return Err(cx.error(
                at(e),
                &format!("LLR_PORT.{name}.llr_profile"),
                "a port with LLR on names its LLR_PROFILE",
            ));
        };
        let pname = p.value.text();
        match &profile {
            Some((first, _)) if *first != pname => {
                return Err(cx.error(
                    at(p),
                    &format!("LLR_PORT.{name}.llr_profile"),
                    format!(
                        "`{pname}`, while other ports use `{first}`: the model keeps one LLR profile per switch (import the ports apart with --ports)"
                    ),
                ));
            }
            Some(_) => {}
            None => profile = Some((pname, p)),
        }
        on.push(val(name.clone(), e));
    }
    let Some((pname, pref)) = profile else {
        return Ok(None);
    };
    let Some(prof) = db.llr_profile.as_ref().and_then(|t| t.value.get(&pname)) else {
        return Err(cx.error(
            at(pref),
            "LLR_PORT.llr_profile",
            format!("`{pname}` is not in LLR_PROFILE"),
        ));
    };
    Ok(Some(val(profile_raw(cx, &pname, &prof.value, on)?, prof)))
}

/// An LLR_PROFILE entry's fields in the scenario's keys.
fn profile_raw(cx: &Ctx, name: &str, e: &Entry, ports: Vec<Val<String>>) -> Result<LlrRaw> {
    const FIELDS: &[&str] = &[
        "max_outstanding_frames",
        "max_outstanding_bytes",
        "max_replay_count",
        "max_replay_timer",
        "pcs_lost_timeout",
        "data_age_timeout",
        "ctlos_spacing_bytes",
        "init_action",
        "flush_action",
    ];
    cx.unused_fields("LLR_PROFILE", e, FIELDS);
    let f = |k: &str| e.get(k);
    let int = |k: &str| -> Result<Option<Val<i64>>> {
        f(k).map(|v| cx.int("LLR_PROFILE", name, k, v).map(|n| val(n, v)))
            .transpose()
    };
    let action = |k: &str| {
        f(k).map(|v| {
            val(
                v.value.text().trim().to_ascii_lowercase().replace('-', "_"),
                v,
            )
        })
    };
    let ports = if ports.is_empty() {
        None
    } else {
        Some(bare(ports))
    };
    Ok(LlrRaw {
        enabled: None,
        ports,
        max_outstanding_frames: int("max_outstanding_frames")?,
        max_outstanding_bytes: f("max_outstanding_bytes").map(bytes),
        replay_timer: f("max_replay_timer").map(nanos),
        max_replay_count: int("max_replay_count")?,
        ctlos_spacing: f("ctlos_spacing_bytes").map(bytes),
        data_age_timeout: f("data_age_timeout").map(nanos),
        pcs_lost_timeout: f("pcs_lost_timeout").map(nanos),
        init_action: action("init_action"),
        flush_action: action("flush_action"),
        // SONiC's phase I always re-initialises after a FLUSH.
        re_init_on_flush: None,
        // SONiC's LLR_PORT covers every class of the port.
        tcs: None,
    })
}
