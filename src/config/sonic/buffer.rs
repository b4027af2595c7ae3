//! BUFFER_POOL, BUFFER_PROFILE, BUFFER_PG and BUFFER_QUEUE → `buffer:`. Pools and profiles
//! keep SONiC's names; each PG/queue entry of a kept port becomes a `PORTS|RANGE` key, or a
//! plain range when every kept port has it. A profile's pool and a PG's or queue's profile
//! must exist (errors name the table and key); `NULL` (the dynamic buffer model's "computed
//! at run time") cannot be imported.

use super::db::{at, reference, Entry, Table};
use super::{bare, scalar, split_key, val, Ctx};
use crate::config::diag::Diag;
use crate::config::schema::{BufferRaw, PoolRaw, ProfileRaw, Scalar, Val};
use crate::config::values::{line, list_or_none};
use lossless_buffer_model::asic::{Asic, IngressSizes};
use lossless_buffer_model::Named;
use serde_saphyr::Spanned;
use std::collections::BTreeMap;

type Result<T> = std::result::Result<T, Diag>;

/// The buffer plan of the kept ports, for chip `asic`.
pub fn resolve(cx: &Ctx, asic: Asic) -> Result<Val<BufferRaw>> {
    let Some(pools_t) = &cx.db().buffer_pool else {
        return Err(cx.error(
            None,
            "BUFFER_POOL",
            "the file has no BUFFER_POOL table: a buffer plan needs its pools",
        ));
    };
    let mut pools = pools(cx, pools_t)?;
    let profiles = match &cx.db().buffer_profile {
        Some(t) => profiles(cx, t, pools_t)?,
        None => BTreeMap::new(),
    };
    if asic.profile().ingress_sizes == IngressSizes::Whole {
        leave_out_other_ports(cx, &mut pools, &profiles)?;
    }
    let known: Vec<&str> = profiles.keys().map(String::as_str).collect();
    let pg = assign(cx, "BUFFER_PG", cx.db().buffer_pg.as_ref(), &known)?;
    let queue = assign(cx, "BUFFER_QUEUE", cx.db().buffer_queue.as_ref(), &known)?;
    Ok(val(
        BufferRaw {
            asic: Some(bare(asic.word().to_string())),
            cell: None,
            total: None,
            pools: val(pools, pools_t),
            profiles: val(profiles, cx.db().buffer_profile.as_ref().unwrap_or(pools_t)),
            pg,
            queue,
            crossing_packet: None,
            xon_limit: None,
            ingress_sizes: None,
            pg_admission: None,
            queue_admission: None,
            first_limit: None,
            pool_cells: None,
            pg_fill: None,
            headroom_overhead: None,
            slices: None,
            port_slices: None,
        },
        pools_t,
    ))
}

/// On a chip whose ingress pool `size` is the whole ingress buffer (Trident 2), the PGs of
/// the ports not kept still hold back their reserves and headroom on the switch: each
/// ingress pool's size is written less what their BUFFER_PG entries take (profile `size`,
/// which there includes `xoff`, per PG), so the kept ports share what they would share on
/// the switch. Said once per pool.
fn leave_out_other_ports(
    cx: &Ctx,
    pools: &mut BTreeMap<String, Val<PoolRaw>>,
    profiles: &BTreeMap<String, Val<ProfileRaw>>,
) -> Result<()> {
    let Some(t) = &cx.db().buffer_pg else {
        return Ok(());
    };
    let mut held: BTreeMap<String, (u64, usize)> = BTreeMap::new();
    for (k, e) in &t.value {
        let Some((ports, range)) = split_key(k) else {
            continue; // assign() reports it
        };
        let others = ports.iter().filter(|p| !cx.keeps(p)).count();
        let Some(name) = e
            .value
            .get("profile")
            .map(|p| reference(&p.value.text()).to_string())
        else {
            continue;
        };
        let Some(profile) = profiles.get(&name) else {
            continue;
        };
        if others == 0 || pools[&profile.value.pool.value].value.kind.value != "ingress" {
            continue;
        }
        let pgs = pg_count(range).ok_or_else(|| {
            cx.error(
                at(e),
                &format!("BUFFER_PG.{k}"),
                format!("`{range}` is not a PG or a range of PGs"),
            )
        })?;
        let size = match profile.value.size.as_ref().map(|v| &v.value) {
            None => 0,
            Some(Scalar::Int(n)) if *n >= 0 => *n as u64,
            Some(_) => continue, // the resolver reports a size that is not bytes
        };
        let h = held.entry(profile.value.pool.value.clone()).or_default();
        h.0 += size * pgs * others as u64;
        h.1 += others;
    }
    for (pool, (bytes, _)) in held {
        let p = pools.get_mut(&pool).expect("profiles name known pools");
        let Scalar::Int(size) = p.value.size.value else {
            continue;
        };
        let left = size - bytes as i64;
        cx.warn(
            line(&p.value.size),
            &format!("BUFFER_POOL.{pool}.size"),
            format!(
                "{size} is the whole ingress buffer on this chip; the ports not imported hold {bytes} bytes of it in their PGs' reserves and headroom, so the imported pool is {left}"
            ),
        );
        p.value.size.value = Scalar::Int(left);
    }
    Ok(())
}

/// PGs in a BUFFER_PG range (`3-4`: 2, `0`: 1).
fn pg_count(range: &str) -> Option<u64> {
    let (a, b) = range.split_once('-').unwrap_or((range, range));
    let (a, b): (u64, u64) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    (a <= b && b < 8).then_some(b - a + 1)
}

fn pools(cx: &Ctx, t: &Spanned<Table>) -> Result<BTreeMap<String, Val<PoolRaw>>> {
    let mut out = BTreeMap::new();
    for (name, e) in &t.value {
        let key = format!("BUFFER_POOL.{name}");
        let f = |n: &str| e.value.get(n);
        let Some(kind) = f("type") else {
            return Err(cx.error(
                at(e),
                &format!("{key}.type"),
                "missing: `ingress` or `egress`",
            ));
        };
        let Some(size) = f("size") else {
            return Err(cx.error(
                at(e),
                &format!("{key}.size"),
                "missing: SONiC's dynamic buffer model computes pool sizes at run time; import the config_db of a switch in the traditional model (buffer_model: traditional), or add the size",
            ));
        };
        cx.unused_fields("BUFFER_POOL", &e.value, &["type", "size", "mode", "xoff"]);
        out.insert(
            name.clone(),
            val(
                PoolRaw {
                    kind: val(kind.value.text(), kind),
                    size: scalar(size),
                    mode: f("mode").map(|m| val(m.value.text(), m)),
                    xoff: f("xoff").map(scalar),
                },
                e,
            ),
        );
    }
    Ok(out)
}

fn profiles(
    cx: &Ctx,
    t: &Spanned<Table>,
    pools: &Spanned<Table>,
) -> Result<BTreeMap<String, Val<ProfileRaw>>> {
    let mut out = BTreeMap::new();
    for (name, e) in &t.value {
        let key = format!("BUFFER_PROFILE.{name}");
        let f = |n: &str| e.value.get(n);
        let Some(pool) = f("pool") else {
            return Err(cx.error(
                at(e),
                &format!("{key}.pool"),
                "missing: a profile names its pool",
            ));
        };
        let pool_name = reference(&pool.value.text()).to_string();
        if !pools.value.contains_key(&pool_name) {
            let known: Vec<&str> = pools.value.keys().map(String::as_str).collect();
            return Err(cx.error(
                at(pool),
                &format!("{key}.pool"),
                format!(
                    "pool `{pool_name}` is not in BUFFER_POOL (pools: {})",
                    list_or_none(&known)
                ),
            ));
        }
        let int = |n: &str| -> Result<Option<Val<i64>>> {
            f(n).map(|v| cx.int("BUFFER_PROFILE", name, n, v).map(|x| val(x, v)))
                .transpose()
        };
        cx.unused_fields(
            "BUFFER_PROFILE",
            &e.value,
            &[
                "pool",
                "size",
                "dynamic_th",
                "static_th",
                "xoff",
                "xon",
                "xon_offset",
                "packet_discard_action",
            ],
        );
        out.insert(
            name.clone(),
            val(
                ProfileRaw {
                    pool: val(pool_name, pool),
                    size: f("size").map(scalar),
                    dynamic_th: int("dynamic_th")?,
                    static_th: f("static_th").map(scalar),
                    xoff: f("xoff").map(scalar),
                    xon: f("xon").map(scalar),
                    xon_offset: f("xon_offset").map(scalar),
                    packet_discard_action: f("packet_discard_action")
                        .map(|v| val(v.value.text(), v)),
                },
                e,
            ),
        );
    }
    Ok(out)
}

/// BUFFER_PG / BUFFER_QUEUE entries of the kept ports as `{key: profile}`: one plain range
/// key when every kept port has the same (range, profile), else `P1,P2|range`.
fn assign(
    cx: &Ctx,
    table: &str,
    t: Option<&Spanned<Table>>,
    known: &[&str],
) -> Result<BTreeMap<String, Val<String>>> {
    let Some(t) = t else {
        return Ok(BTreeMap::new());
    };
    // (range, profile) → (ports that have it, where it was first seen).
    let mut by: BTreeMap<(String, String), (Vec<String>, Val<String>)> = BTreeMap::new();
    for (k, e) in &t.value {
        let Some((ports, range)) = split_key(k) else {
            return Err(cx.error(
                at(e),
                &format!("{table}.{k}"),
                "a key is `PORT|RANGE`, e.g. Ethernet0|3-4",
            ));
        };
        let kept: Vec<&str> = ports.into_iter().filter(|p| cx.keeps(p)).collect();
        if kept.is_empty() {
            continue;
        }
        let p = profile_of(cx, table, k, e, known)?;
        let entry = by
            .entry((range.to_string(), p.value.clone()))
            .or_insert_with(|| (Vec::new(), p.clone()));
        entry.0.extend(kept.iter().map(|s| s.to_string()));
    }
    let mut out = BTreeMap::new();
    for ((range, _), (ports, profile)) in by {
        let everywhere = cx.ports.iter().all(|p| ports.contains(p));
        let key = if everywhere {
            range
        } else {
            let mut ports: Vec<&String> = cx.ports.iter().filter(|p| ports.contains(p)).collect();
            ports.dedup();
            let names: Vec<&str> = ports.iter().map(|s| s.as_str()).collect();
            format!("{}|{range}", names.join(","))
        };
        out.insert(key, profile);
    }
    Ok(out)
}

/// The profile an entry names, which must be in BUFFER_PROFILE.
fn profile_of(
    cx: &Ctx,
    table: &str,
    k: &str,
    e: &Spanned<Entry>,
    known: &[&str],
) -> Result<Val<String>> {
    let key = format!("{table}.{k}.profile");
    let Some(p) = e.value.get("profile") else {
        return Err(cx.error(at(e), &key, "missing: the entry names no profile"));
    };
    cx.unused_fields(table, &e.value, &["profile"]);
    let name = reference(&p.value.text()).to_string();
    if name == "NULL" {
        return Err(cx.error(
            at(p),
            &key,
            "profile NULL: SONiC's dynamic buffer model computes this PG's headroom at run time; import the config_db of a switch in the traditional model (its lossless profiles are in BUFFER_PROFILE), or name a profile",
        ));
    }
    if !known.contains(&name.as_str()) {
        return Err(cx.error(
            at(p),
            &key,
            format!(
                "profile `{name}` is not in BUFFER_PROFILE (profiles: {})",
                list_or_none(known)
            ),
        ));
    }
    Ok(val(name, p))
}
