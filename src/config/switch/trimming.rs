//! `trimming:` of a switch (SONiC `SWITCH_TRIMMING|GLOBAL`), the queues that trim (their
//! buffer profiles' `packet_discard_action: trim`, or `trimming.queues`) and the TC → DSCP
//! maps `dscp: from_tc` reads (docs/scenario.md, `trimming`).

use super::buffer::Plan;
use crate::config::diag::{Diag, Diags, Key};
use crate::config::schema::{PortsRaw, Scalar, SwitchRaw, Val};
use crate::config::values::line;
use lossless_buffer_model::{Bytes, PRIORITIES};
use lossless_pipeline::config::{PortConfig, QosConfig, TrimDscp, TrimQueue, Trimming};
use std::collections::BTreeMap;

type Result<T> = std::result::Result<T, Diag>;

/// The switch's trimming, with each port's trimming queues and TC → DSCP map set.
pub fn resolve(
    d: &Diags,
    sw: &Key,
    raw: &SwitchRaw,
    ports: &mut [PortConfig],
    qos: &QosConfig,
    plan: &Plan,
) -> Result<Option<Trimming>> {
    let k = sw.at("trimming");
    let by_profile = profile_queues(d, sw, raw, plan)?;
    let Some(t) = &raw.trimming else {
        if let Some((at, key)) = by_profile.first_at {
            return d.error(
                at,
                &key,
                "`trim`: a profile trims but the switch has no `trimming` (its size, DSCP and queue)",
            );
        }
        return Ok(None);
    };
    let t = &t.value;
    let size = d
        .opt_unit_in(
            &t.size,
            &k.at("size"),
            Bytes(Trimming::MIN_SIZE as u64)..=Bytes(16_383),
            &format!(
                "a trimmed frame keeps its headers — Ethernet, two VLAN tags, IPv6, UDP and the RoCEv2 BTH with the FCS, {} B — and is at most 16383 B",
                Trimming::MIN_SIZE
            ),
        )?
        .map_or(Trimming::DEFAULT_SIZE, |b| b.get() as u32);
    let dscp = match word_or_int(&t.dscp) {
        Ok(n) => {
            TrimDscp::Value(d.int_in(&val_of(&t.dscp, n), &k.at("dscp"), 0, 63, "DSCP ")? as u8)
        }
        Err(w) if w == "from_tc" => {
            let Some(tc) = &t.tc else {
                return d.error(
                    line(&t.dscp),
                    &k.at("tc"),
                    "`dscp: from_tc` needs `tc`, the traffic class whose DSCP each port's tc_to_dscp gives",
                );
            };
            TrimDscp::FromTc(d.small(tc, &k.at("tc"), 7)?)
        }
        Err(w) => {
            return d.error(
                line(&t.dscp),
                &k.at("dscp"),
                format!("`{w}`: the trimmed DSCP is 0–63 or from_tc"),
            )
        }
    };
    if let (Some(tc), TrimDscp::Value(_)) = (&t.tc, dscp) {
        return d.error(
            line(tc),
            &k.at("tc"),
            "`tc` is read only with `dscp: from_tc`",
        );
    }
    let queue = match word_or_int(&t.queue) {
        Ok(n) => {
            TrimQueue::Queue(d.int_in(&val_of(&t.queue, n), &k.at("queue"), 0, 7, "queue ")? as u8)
        }
        Err(w) if w == "dynamic" => TrimQueue::Dynamic,
        Err(w) => {
            return d.error(
                line(&t.queue),
                &k.at("queue"),
                format!("`{w}`: the trim queue is 0–7 or dynamic"),
            )
        }
    };
    let mut all = 0u8;
    for v in t.queues.iter().flat_map(|l| &l.value) {
        all |= 1 << d.small(v, &k.at("queues"), 7)?;
    }
    let lossless = qos.lossless_queues();
    if all & lossless != 0 {
        let q = (all & lossless).trailing_zeros();
        return d.error(
            t.queues.as_ref().and_then(line),
            &k.at("queues"),
            format!("queue {q} carries a PFC priority: trimming on a lossless queue would cut frames PFC keeps whole (trim lossy queues only)"),
        );
    }
    let switch_map = match &raw.qos.as_ref().and_then(|q| q.value.tc_to_dscp.as_ref()) {
        Some(m) => Some(tc_to_dscp(d, &sw.at("qos").at("tc_to_dscp"), m)?),
        None => None,
    };
    for (i, p) in ports.iter_mut().enumerate() {
        p.trim_queues = all | by_profile.masks[i];
        p.tc_to_dscp = match port_map(raw, i) {
            Some(m) => Some(tc_to_dscp(d, &sw.at("ports").index(i).at("tc_to_dscp"), m)?),
            None => switch_map,
        };
        if let (TrimDscp::FromTc(_), None) = (dscp, p.tc_to_dscp) {
            return d.error(
                line(&t.dscp),
                &k.at("dscp"),
                format!(
                    "`from_tc` reads each port's TC → DSCP map, and port {} has none: give `qos.tc_to_dscp` or the port's `tc_to_dscp`",
                    p.name
                ),
            );
        }
    }
    if ports.iter().all(|p| p.trim_queues == 0) {
        d.warn(
            line(&t.dscp),
            &k,
            "no queue trims, so these settings are unused: give `trimming.queues` or a queue profile `packet_discard_action: trim`",
        );
    }
    Ok(Some(Trimming { size, dscp, queue }))
}

/// Queues whose profile trims, per port, and where the first such profile says so.
struct ByProfile {
    masks: Vec<u8>,
    first_at: Option<(Option<u64>, Key)>,
}

/// The queues each port's profiles make trim; a trimming profile on a lossless queue or on
/// a PG is an error.
fn profile_queues(d: &Diags, sw: &Key, raw: &SwitchRaw, plan: &Plan) -> Result<ByProfile> {
    let ports = plan.queue_names.len() / PRIORITIES;
    let mut out = ByProfile {
        masks: vec![0; ports],
        first_at: None,
    };
    let Some(b) = &raw.buffer else { return Ok(out) };
    let k = sw.at("buffer").at("profiles");
    let mut trims: BTreeMap<&str, Option<u64>> = BTreeMap::new();
    for (name, p) in &b.value.profiles.value {
        let Some(a) = &p.value.packet_discard_action else {
            continue;
        };
        match a.value.as_str() {
            "drop" => {}
            "trim" => {
                trims.insert(name, line(a));
            }
            w => {
                return d.error(
                    line(a),
                    &k.at(name).at("packet_discard_action"),
                    format!("`{w}`: expected drop or trim"),
                )
            }
        }
    }
    for (name, at) in &trims {
        let key = k.at(name).at("packet_discard_action");
        if plan.pg_names.iter().any(|n| n == name) {
            return d.error(
                *at,
                &key,
                format!("profile `{name}` serves a PG: trimming is an egress queue's action"),
            );
        }
        out.first_at.get_or_insert((*at, key));
    }
    for (i, n) in plan.queue_names.iter().enumerate() {
        if trims.contains_key(n.as_str()) {
            out.masks[i / PRIORITIES] |= 1 << (i % PRIORITIES);
        }
    }
    Ok(out)
}

/// Refuse a trimming profile on a lossless queue (called with the QoS known).
pub fn check_lossless(
    d: &Diags,
    sw: &Key,
    raw: &SwitchRaw,
    ports: &[PortConfig],
    qos: &QosConfig,
    plan: &Plan,
) -> Result<()> {
    let lossless = qos.lossless_queues();
    for (i, p) in ports.iter().enumerate() {
        let bad = p.trim_queues & lossless;
        if bad == 0 {
            continue;
        }
        let q = bad.trailing_zeros() as usize;
        let name = &plan.queue_names[i * PRIORITIES + q];
        let at = raw
            .buffer
            .as_ref()
            .and_then(|b| b.value.profiles.value.get(name))
            .and_then(|p| p.value.packet_discard_action.as_ref())
            .and_then(line);
        return d.error(
            at,
            &sw.at("buffer").at("profiles").at(name).at("packet_discard_action"),
            format!(
                "profile `{name}` trims queue {q} of {}, which carries a PFC priority: trimming on a lossless queue would cut frames PFC keeps whole (trim lossy queues only)",
                p.name
            ),
        );
    }
    Ok(())
}

/// A number, or the word given.
fn word_or_int(v: &Val<Scalar>) -> std::result::Result<i64, String> {
    match &v.value {
        Scalar::Int(n) => Ok(*n),
        Scalar::Str(s) => s.parse::<i64>().map_err(|_| s.clone()),
        Scalar::Float(f) => Err(f.to_string()),
    }
}

/// `n` at `v`'s place in the file.
fn val_of(v: &Val<Scalar>, n: i64) -> Val<i64> {
    Val {
        value: n,
        referenced: v.referenced,
        defined: v.defined,
    }
}

/// Port `i`'s own `tc_to_dscp`, in the list form.
fn port_map(raw: &SwitchRaw, i: usize) -> Option<&Val<BTreeMap<String, Val<i64>>>> {
    match raw.ports.as_ref().map(|p| &p.value) {
        Some(PortsRaw::List(list)) => list.get(i).and_then(|e| e.value.tc_to_dscp.as_ref()),
        _ => None,
    }
}

/// A TC → DSCP map: TCs 0–7, DSCPs 0–63; a TC not given keeps DSCP 0.
fn tc_to_dscp(d: &Diags, k: &Key, m: &Val<BTreeMap<String, Val<i64>>>) -> Result<[u8; PRIORITIES]> {
    let mut out = [0u8; PRIORITIES];
    for (tc, v) in &m.value {
        let Some(t) = tc.parse::<usize>().ok().filter(|&t| t < PRIORITIES) else {
            return d.error(
                line(v),
                &k.at(tc),
                format!("`{tc}` is not a traffic class 0–7"),
            );
        };
        out[t] = d.int_in(v, &k.at(tc), 0, 63, "DSCP ")? as u8;
    }
    Ok(out)
}
