//! `buffer:` of a switch: the cell, pools, profiles, and which profile each PG and queue of
//! every port uses; `total` is checked against what the plan carves out. Profiles are
//! resolved in [`super::profiles`]; a switch without `buffer` gets [`super::default_plan`].

use super::profiles::{self, Profiles};
use crate::config::diag::{Diag, Diags, Key};
use crate::config::schema::{BufferRaw, Val};
use crate::config::values::{line, list_or_none};
use crate::config::words::PoolMode;
use lossless_buffer_model::asic::{Asic, IngressSizes};
use lossless_buffer_model::mmu::{
    Behaviour, PoolKind, PoolSpec, PoolUse, PortHeadroom, ProfileSpec, Slices, Threshold,
};
use lossless_buffer_model::{priorities_in, Bytes, Named, PRIORITIES};
use lossless_pipeline::config::{PortConfig, QosConfig};
use lossless_pipeline::default_plan;
use std::collections::BTreeMap;

type Result<T> = std::result::Result<T, Diag>;

/// One PG's or queue's profile: the profile, its name, the line that named it.
type Slot = (ProfileSpec, String, Option<u64>);

/// A buffer plan: pools and one profile per (port, PG) and (port, queue).
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// Cell size.
    pub cell: Bytes,
    /// Pools.
    pub pools: Vec<PoolSpec>,
    /// Profile of each (port, PG), index `port * 8 + pg`.
    pub pg_profiles: Vec<ProfileSpec>,
    /// Profile of each (port, queue).
    pub queue_profiles: Vec<ProfileSpec>,
    /// Profile names, for reports.
    pub pg_names: Vec<String>,
    /// Profile names, for reports.
    pub queue_names: Vec<String>,
    /// Where each profile is defined, for warnings.
    pub profile_lines: BTreeMap<String, Option<u64>>,
    /// The MMU's ASIC choices (crossing packet, XON limit).
    pub behaviour: Behaviour,
    /// Buffer slices.
    pub slices: Slices,
    /// The chip named by `buffer.asic` (generic when none).
    pub asic: Asic,
    /// What the ingress sizes counted as written (pools are shared space once resolved).
    pub ingress_sizes: IngressSizes,
    /// Each port's shared headroom, when its lossless PGs share one.
    pub port_headroom: Vec<PortHeadroom>,
}

impl Plan {
    /// Add one port's PG and queue profiles.
    pub fn push_port(
        &mut self,
        pgs: impl IntoIterator<Item = (ProfileSpec, String)>,
        queues: impl IntoIterator<Item = (ProfileSpec, String)>,
    ) {
        for (spec, name) in pgs {
            self.pg_profiles.push(spec);
            self.pg_names.push(name);
        }
        for (spec, name) in queues {
            self.queue_profiles.push(spec);
            self.queue_names.push(name);
        }
    }
}

/// The plan of switch `sw` from its `buffer:`.
pub fn resolve(
    d: &Diags,
    sw: &Key,
    b: &Val<BufferRaw>,
    ports: &[PortConfig],
    qos: &QosConfig,
) -> Result<Plan> {
    let k = sw.at("buffer");
    let asic: Asic = d
        .opt_word(&b.value.asic, &k.at("asic"))?
        .unwrap_or_default();
    let chip = asic.profile();
    let cell: Bytes = d
        .opt_unit(&b.value.cell, &k.at("cell"))?
        .or(chip.cell)
        .unwrap_or(default_plan::CELL);
    if cell.get() < 64 || cell.get() > 65_536 {
        return d.error(
            b.value.cell.as_ref().and_then(line),
            &k.at("cell"),
            format!("{cell}: a cell is 64 B–64 KiB"),
        );
    }
    let sizes: IngressSizes = d
        .opt_word(&b.value.ingress_sizes, &k.at("ingress_sizes"))?
        .unwrap_or(chip.ingress_sizes);
    let overhead: Bytes = d
        .opt_unit(&b.value.headroom_overhead, &k.at("headroom_overhead"))?
        .unwrap_or(Bytes(chip.headroom_overhead_cells * cell.get()));
    let (mut pools, modes) = pools(d, &k, b, cell)?;
    let profiles = profiles::resolve(d, &k, b, &pools, &modes, sizes, overhead)?;
    // Lossy defaults for PGs and queues nobody named.
    let lossy_default = |kind: PoolKind, preferred: &str, what: &str| -> Result<ProfileSpec> {
        let Some(pool) = pools
            .iter()
            .position(|p| p.name == preferred)
            .or_else(|| pools.iter().position(|p| p.kind == kind))
        else {
            return d.error(
                line(&b.value.pools),
                &k.at("pools"),
                format!("needs at least one {what} pool"),
            );
        };
        let threshold = match modes[pool] {
            PoolMode::Static => Threshold::Static(pools[pool].size),
            PoolMode::Dynamic => Threshold::Dynamic(default_plan::LOSSY_DYNAMIC_TH),
        };
        Ok(ProfileSpec {
            pool,
            reserved: Bytes(0),
            threshold,
            headroom: None,
        })
    };
    let pg_default = lossy_default(PoolKind::Ingress, "ingress_lossy_pool", "ingress")?;
    let q_default = lossy_default(PoolKind::Egress, "egress_lossy_pool", "egress")?;
    let pgs = assign(
        d,
        &k,
        &b.value.pg,
        "pg",
        PoolKind::Ingress,
        &pools,
        &profiles,
        (&pg_default, "pg_lossy_default"),
        ports,
    )?;
    let queues = assign(
        d,
        &k,
        &b.value.queue,
        "queue",
        PoolKind::Egress,
        &pools,
        &profiles,
        (&q_default, "q_lossy_default"),
        ports,
    )?;
    // Every PFC-enabled priority needs a lossless PG, on every port.
    for (port, pgs) in ports.iter().zip(&pgs) {
        for t in priorities_in(qos.pfc_enable) {
            let pg = qos.tc_to_pg[t] as usize;
            if pgs[pg].0.headroom.is_none() {
                return d.error(pgs[pg].2.or(line(b)), &k.at("pg").at(&pg.to_string()), format!("PFC is enabled on priority {t}, which maps to PG {pg}, but profile `{}` of {} has no xoff: a PFC priority needs a lossless PG profile", pgs[pg].1, port.name));
            }
        }
    }
    if sizes == IngressSizes::Whole {
        carve_whole_pools(d, &k, b, &mut pools, &pgs, cell)?;
    }
    let port_headroom = if sizes == IngressSizes::PgBuffer {
        port_headroom(&pools, &pgs, chip.port_headroom_buffer)
    } else {
        Vec::new()
    };
    let behaviour = Behaviour {
        crossing: d
            .opt_word(&b.value.crossing_packet, &k.at("crossing_packet"))?
            .unwrap_or(chip.behaviour.crossing),
        xon_limit: d
            .opt_word(&b.value.xon_limit, &k.at("xon_limit"))?
            .unwrap_or(chip.behaviour.xon_limit),
        // A whole-buffer pool counts every cell it holds, reserved ones too.
        pool_use: match sizes {
            IngressSizes::Shared | IngressSizes::PgBuffer => PoolUse::Shared,
            IngressSizes::Whole => PoolUse::WithReserved,
        },
        first_limit: d
            .opt_word(&b.value.first_limit, &k.at("first_limit"))?
            .unwrap_or(chip.behaviour.first_limit),
        pg_admission: d
            .opt_word(&b.value.pg_admission, &k.at("pg_admission"))?
            .unwrap_or(chip.behaviour.pg_admission),
        queue_admission: d
            .opt_word(&b.value.queue_admission, &k.at("queue_admission"))?
            .unwrap_or(chip.behaviour.queue_admission),
        pool_cells: d
            .opt_word(&b.value.pool_cells, &k.at("pool_cells"))?
            .unwrap_or(chip.behaviour.pool_cells),
        pg_fill: d
            .opt_word(&b.value.pg_fill, &k.at("pg_fill"))?
            .unwrap_or(chip.behaviour.pg_fill),
    };
    let mut plan = Plan {
        cell,
        pools,
        profile_lines: profiles.iter().map(|(n, (_, l))| (n.clone(), *l)).collect(),
        behaviour,
        slices: slices(d, &k, b, ports.len(), chip.slices)?,
        asic,
        ingress_sizes: sizes,
        port_headroom,
        ..Plan::default()
    };
    for (pgs, queues) in pgs.iter().zip(&queues) {
        plan.push_port(
            pgs.iter().map(|(s, n, _)| (s.clone(), n.clone())),
            queues.iter().map(|(s, n, _)| (s.clone(), n.clone())),
        );
    }
    if let Some(total) = &b.value.total {
        check_total(d, &k.at("total"), total, &plan)?;
    }
    Ok(plan)
}

/// `ingress_sizes: whole`: each ingress pool's `size` is the whole ingress buffer, so what
/// its PGs hold back — every port's reserved minimum and headroom on it — is taken off, and
/// the rest is the shared space the dynamic thresholds divide (docs/physics.md, "What a
/// plan's sizes mean"). Such a plan has no shared headroom pool.
fn carve_whole_pools(
    d: &Diags,
    k: &Key,
    b: &Val<BufferRaw>,
    pools: &mut [PoolSpec],
    pgs: &[Vec<Slot>],
    cell: Bytes,
) -> Result<()> {
    for (i, pool) in pools.iter_mut().enumerate() {
        if pool.kind != PoolKind::Ingress {
            continue;
        }
        let raw = &b.value.pools.value[&pool.name];
        let kk = k.at("pools").at(&pool.name);
        if pool.xoff.get() > 0 {
            return d.error(
                raw.value.xoff.as_ref().and_then(line),
                &kk.at("xoff"),
                "with ingress_sizes whole every PG's headroom is inside the pool: there is no shared headroom pool",
            );
        }
        let held: u64 = pgs
            .iter()
            .flatten()
            .filter(|(s, _, _)| s.pool == i)
            .map(|(s, _, _)| s.reserved.get() + s.headroom.map_or(0, |h| h.xoff.get()))
            .sum();
        match pool.size.get().checked_sub(held) {
            Some(shared) if shared >= cell.get() => pool.size = Bytes(shared),
            _ => {
                return d.error(
                    line(&raw.value.size),
                    &kk.at("size"),
                    format!(
                        "{}, the whole ingress buffer (ingress_sizes whole), leaves less than a cell shared after its PGs' reserves and headroom ({})",
                        pool.size,
                        Bytes(held)
                    ),
                )
            }
        }
    }
    Ok(())
}

/// The pools, and whether each is static or dynamic.
fn pools(
    d: &Diags,
    k: &Key,
    b: &Val<BufferRaw>,
    cell: Bytes,
) -> Result<(Vec<PoolSpec>, Vec<PoolMode>)> {
    let mut pools = Vec::new();
    let mut modes = Vec::new();
    for (name, p) in &b.value.pools.value {
        let kk = k.at("pools").at(name);
        let kind: PoolKind = d.word(&p.value.kind, &kk.at("type"))?;
        let size: Bytes = d.unit(&p.value.size, &kk.at("size"))?;
        if size.get() < cell.get() {
            return d.error(
                line(&p.value.size),
                &kk.at("size"),
                format!("{size} is smaller than one cell ({cell})"),
            );
        }
        let mode = d
            .opt_word(&p.value.mode, &kk.at("mode"))?
            .unwrap_or(PoolMode::Dynamic);
        let xoff: Bytes = d
            .opt_unit(&p.value.xoff, &kk.at("xoff"))?
            .unwrap_or(Bytes(0));
        if xoff.get() > 0 && kind == PoolKind::Egress {
            return d.error(
                p.value.xoff.as_ref().and_then(line),
                &kk.at("xoff"),
                "a shared headroom pool belongs to an ingress pool",
            );
        }
        pools.push(PoolSpec {
            name: name.clone(),
            kind,
            size,
            xoff,
        });
        modes.push(mode);
    }
    Ok((pools, modes))
}

/// One profile per PG (or queue) 0–7 of each port, from a `{key: profile}` map whose keys
/// are a range (`3-4`: every port) or SONiC's `PORTS|RANGE` (`Ethernet0|3-4`,
/// `Ethernet0,Ethernet4|0`: those ports, over any all-port entry); `default` for the rest.
/// Each entry: (profile, its name, the line that named it).
#[allow(clippy::too_many_arguments)]
fn assign(
    d: &Diags,
    k: &Key,
    map: &BTreeMap<String, Val<String>>,
    what: &str,
    kind: PoolKind,
    pools: &[PoolSpec],
    profiles: &Profiles,
    default: (&ProfileSpec, &str),
    ports: &[PortConfig],
) -> Result<Vec<Vec<Slot>>> {
    let base = vec![(default.0.clone(), default.1.to_string(), None); PRIORITIES];
    let mut out = vec![base; ports.len()];
    // Port-wide entries first, then per-port ones over them; twice for one slot is an error
    // within each kind.
    let mut seen_all = 0u8;
    let mut seen_port = vec![0u8; ports.len()];
    let entries = map
        .iter()
        .map(|(key, name)| (key.split_once('|'), key, name));
    let (all, some): (Vec<_>, Vec<_>) = entries.partition(|(split, _, _)| split.is_none());
    for (split, key, name) in all.into_iter().chain(some) {
        let kk = k.at(what).at(key);
        let (targets, range) = match split {
            None => ((0..ports.len()).collect::<Vec<_>>(), key.as_str()),
            Some((names, range)) => (port_indices(d, &kk, names, name, ports)?, range),
        };
        let mask = d.range(range, line(name), &kk)?;
        let spec = profile_for(d, &kk, name, what, kind, pools, profiles)?;
        for p in targets {
            let seen = if split.is_none() {
                &mut seen_all
            } else {
                &mut seen_port[p]
            };
            if *seen & mask != 0 {
                let first = (0..8).find(|i| *seen & mask & (1 << i) != 0).unwrap_or(0);
                let whose = match split {
                    None => String::new(),
                    Some(_) => format!(" of {}", ports[p].name),
                };
                return d.error(
                    line(name),
                    &kk,
                    format!("{what} {first}{whose} is given a profile twice"),
                );
            }
            if split.is_some() {
                *seen |= mask;
            }
            for (i, slot) in out[p].iter_mut().enumerate() {
                if mask & (1 << i) != 0 {
                    *slot = (spec.clone(), name.value.clone(), line(name));
                }
            }
        }
        if split.is_none() {
            seen_all |= mask;
        }
    }
    Ok(out)
}

/// The ports a `PORTS|RANGE` key names (comma-separated port names).
fn port_indices(
    d: &Diags,
    kk: &Key,
    names: &str,
    at: &Val<String>,
    ports: &[PortConfig],
) -> Result<Vec<usize>> {
    names
        .split(',')
        .map(|n| {
            let n = n.trim();
            ports.iter().position(|p| p.name == n).map_or_else(
                || {
                    d.error(
                        line(at),
                        kk,
                        format!(
                            "unknown port `{n}` (ports are {}…{})",
                            ports[0].name,
                            ports[ports.len() - 1].name
                        ),
                    )
                },
                Ok,
            )
        })
        .collect()
}

/// The profile `name` refers to, checked to draw from a pool of `kind`.
fn profile_for(
    d: &Diags,
    kk: &Key,
    name: &Val<String>,
    what: &str,
    kind: PoolKind,
    pools: &[PoolSpec],
    profiles: &Profiles,
) -> Result<ProfileSpec> {
    let Some((spec, _)) = profiles.get(&name.value) else {
        let known: Vec<_> = profiles.keys().cloned().collect();
        return d.error(
            line(name),
            kk,
            format!(
                "unknown profile `{}` (defined: {})",
                name.value,
                list_or_none(&known)
            ),
        );
    };
    let pool = &pools[spec.pool];
    if pool.kind != kind {
        return d.error(
            line(name),
            kk,
            format!(
                "profile `{}` draws from {} pool `{}`; a {what} needs an {} pool",
                name.value,
                pool.kind.word(),
                pool.name,
                kind.word()
            ),
        );
    }
    Ok(spec.clone())
}

/// Σ pools + Σ reservations + Σ per-PG headroom ≤ `total`.
fn check_total(
    d: &Diags,
    k: &Key,
    total_v: &Val<crate::config::schema::Scalar>,
    plan: &Plan,
) -> Result<()> {
    let total: Bytes = d.unit(total_v, k)?;
    let pools_sum: u64 = plan.pools.iter().map(|p| p.size.get() + p.xoff.get()).sum();
    let reserved: u64 = plan
        .pg_profiles
        .iter()
        .chain(&plan.queue_profiles)
        .map(|p| p.reserved.get())
        .sum();
    // With a shared headroom pool the pool's xoff is the memory; a PG's xoff only bounds it.
    let headroom: u64 = plan
        .pg_profiles
        .iter()
        .filter(|p| plan.pools[p.pool].xoff.get() == 0)
        .map(|p| p.headroom.map_or(0, |h| h.xoff.get()))
        .sum();
    let need = pools_sum + reserved + headroom;
    if need > total.get() {
        return d.error(
            line(total_v),
            k,
            format!(
                "pools {} + reservations {} + headroom {} = {} exceed the total {} by {} bytes",
                Bytes(pools_sum),
                Bytes(reserved),
                Bytes(headroom),
                Bytes(need),
                total,
                need - total.get()
            ),
        );
    }
    Ok(())
}

/// `slices:` (1–8) and `port_slices:` (one slice per port, each below the count).
fn slices(d: &Diags, k: &Key, b: &Val<BufferRaw>, ports: usize, default: usize) -> Result<Slices> {
    let count = match &b.value.slices {
        None => default,
        Some(v) if (1..=8).contains(&v.value) => v.value as usize,
        Some(v) => {
            return d.error(
                line(v),
                &k.at("slices"),
                format!("{} slices: a buffer has 1–8", v.value),
            );
        }
    };
    let Some(list) = &b.value.port_slices else {
        return Ok(Slices {
            count,
            of_port: Vec::new(),
        });
    };
    if list.value.len() != ports {
        return d.error(
            line(list),
            &k.at("port_slices"),
            format!(
                "{} entries for {ports} ports: give one slice per port",
                list.value.len()
            ),
        );
    }
    let mut of_port = Vec::new();
    for (i, s) in list.value.iter().enumerate() {
        if s.value as usize >= count {
            return d.error(
                line(s),
                &k.at("port_slices").index(i),
                format!(
                    "slice {} of {count}: slices are numbered 0–{}",
                    s.value,
                    count - 1
                ),
            );
        }
        of_port.push(s.value as usize);
    }
    Ok(Slices { count, of_port })
}

/// Each port's shared headroom under `ingress_sizes: pg_buffer` with a shared headroom pool,
/// as NVIDIA's SAI sizes it: the port's own `private` bytes, and loans from the pool up to
/// Σ (xoff − (size − xon)) over its lossless PGs on that pool in all. Empty when no PG is on
/// a shared headroom pool.
fn port_headroom(
    pools: &[PoolSpec],
    pgs: &[Vec<(ProfileSpec, String, Option<u64>)>],
    private: Bytes,
) -> Vec<PortHeadroom> {
    let budgets: Vec<u64> = pgs
        .iter()
        .map(|port| {
            port.iter()
                .filter(|(p, _, _)| pools[p.pool].xoff.get() > 0)
                .filter_map(|(p, _, _)| p.headroom.map(|h| (p, h)))
                .map(|(p, h)| {
                    let below_xoff = p.reserved.get().saturating_sub(h.xon.get());
                    h.xoff.get().saturating_sub(below_xoff)
                })
                .sum()
        })
        .collect();
    if budgets.iter().all(|b| *b == 0) {
        return Vec::new();
    }
    budgets
        .into_iter()
        .map(|b| PortHeadroom {
            budget: Bytes(b),
            private,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::config::parse;

    fn buffer(extra: &str) -> Result<crate::config::Loaded, crate::config::ConfigError> {
        let text = format!(
            "switches:\n  - name: s\n    ports: {{count: 2, mtu: 1518}}\n    buffer:\n      pools:\n        \
             ingress_lossless_pool: {{type: ingress, size: 16MB}}\n        egress_lossless_pool: {{type: egress, size: 16MB, mode: static}}\n      \
             profiles:\n        pg_lossless: {{pool: ingress_lossless_pool, size: 1248, dynamic_th: 0, xoff: 83200B}}\n        \
             q_lossless: {{pool: egress_lossless_pool, static_th: 16MB}}\n      pg: {{\"3-4\": pg_lossless}}\n      queue: {{\"3-4\": q_lossless}}\n{extra}"
        );
        parse("f.yaml", "f", &text)
    }

    #[test]
    fn pgs_and_queues_get_their_profiles_or_the_lossy_default() {
        let l = buffer("").unwrap();
        let sw = &l.scenario.switches[0];
        assert_eq!(sw.pg_profile_names[3], "pg_lossless");
        assert_eq!(sw.pg_profile_names[8 + 4], "pg_lossless");
        assert_eq!(sw.pg_profile_names[0], "pg_lossy_default");
        assert_eq!(sw.queue_profile_names[1], "q_lossy_default");
        // With only static egress pools the lossy queue default is static too.
        let q = &sw.config.queue_profiles[1];
        assert_eq!(
            q.threshold,
            lossless_buffer_model::mmu::Threshold::Static(lossless_buffer_model::Bytes(16_000_000))
        );
    }

    #[test]
    fn total_pfc_and_pool_rules() {
        // 16 + 16 MB of pools + 2 ports × 2 PGs × (1248 + 83,200) B.
        let e = buffer("      total: 32MB\n").unwrap_err().to_string();
        let over = 4 * (1248 + 83_200);
        assert!(
            e.contains("s.buffer.total: pools 32MB") && e.ends_with(&format!("by {over} bytes")),
            "{e}"
        );
        let e = parse(
            "f.yaml",
            "f",
            "switches:\n  - name: s\n    ports: {count: 2}\n    buffer:\n      pools: {p: {type: ingress, size: 1MB}}\n      profiles: {}\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("s.buffer.pools: needs at least one egress pool"),
            "{e}"
        );
    }

    #[test]
    fn the_asic_choices_are_read_and_bad_words_named() {
        use lossless_buffer_model::mmu::{Behaviour, Crossing, XonLimit};
        assert_eq!(
            buffer("").unwrap().scenario.switches[0].config.mmu,
            Behaviour::default()
        );
        let l = buffer("      crossing_packet: shared\n      xon_limit: latched\n").unwrap();
        assert_eq!(
            l.scenario.switches[0].config.mmu,
            Behaviour {
                crossing: Crossing::Shared,
                xon_limit: XonLimit::Latched,
                ..Behaviour::default()
            }
        );
        let e = buffer("      crossing_packet: pool\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("s.buffer.crossing_packet"), "{e}");
        assert!(e.contains("headroom") && e.contains("shared"), "{e}");
        let e = buffer("      xon_limit: fixed\n").unwrap_err().to_string();
        assert!(
            e.contains("s.buffer.xon_limit") && e.contains("latched"),
            "{e}"
        );
    }

    /// `ingress_sizes: whole`: the pool of 16 MB less 2 ports × PGs 3–4 × the profile's
    /// size (which counts its xoff), the PG's reserve the size less the xoff.
    #[test]
    fn a_whole_ingress_pool_gives_up_every_pgs_reserve_and_headroom() {
        use lossless_buffer_model::mmu::PoolUse;
        use lossless_buffer_model::Bytes;
        let whole = "      ingress_sizes: whole\n";
        let text = |size: &str, extra: &str| {
            format!(
                "switches:\n  - name: s\n    ports: {{count: 2, mtu: 1518}}\n    buffer:\n      pools:\n        \
                 ingress_lossless_pool: {{type: ingress, size: 16MB{extra}}}\n        egress_lossless_pool: {{type: egress, size: 16MB, mode: static}}\n      \
                 profiles:\n        pg_lossless: {{pool: ingress_lossless_pool, size: {size}, dynamic_th: 0, xoff: 83200B}}\n        \
                 q_lossless: {{pool: egress_lossless_pool, static_th: 16MB}}\n      pg: {{\"3-4\": pg_lossless}}\n      queue: {{\"3-4\": q_lossless}}\n{whole}"
            )
        };
        let l = crate::config::parse("f.yaml", "f", &text("84448", "")).unwrap();
        let c = &l.scenario.switches[0].config;
        let pool = |n: &str| c.pools.iter().find(|p| p.name == n).unwrap().size;
        assert_eq!(
            pool("ingress_lossless_pool"),
            Bytes(16_000_000 - 4 * 84_448)
        );
        assert_eq!(c.pg_profiles[3].reserved, Bytes(84_448 - 83_200));
        assert_eq!(c.mmu.pool_use, PoolUse::WithReserved);
        // The egress pool is untouched.
        assert_eq!(pool("egress_lossless_pool"), Bytes(16_000_000));
        let e = crate::config::parse("f.yaml", "f", &text("1248", ""))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("pg_lossless.size") && e.contains("includes its headroom"),
            "{e}"
        );
        let e = crate::config::parse("f.yaml", "f", &text("84448", ", xoff: 1MB"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ingress_lossless_pool.xoff") && e.contains("no shared headroom pool"),
            "{e}"
        );
        let e = crate::config::parse("f.yaml", "f", &text("8MB", ""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("leaves less than a cell"), "{e}");
    }

    #[test]
    fn a_chip_sets_cell_slices_and_choices_and_each_key_overrides_it() {
        use lossless_buffer_model::mmu::{Crossing, XonLimit};
        use lossless_buffer_model::Bytes;
        let l = buffer("      asic: tomahawk\n").unwrap();
        let c = &l.scenario.switches[0].config;
        assert_eq!(c.cell, Bytes(208));
        assert_eq!(c.slices.count, 4);
        assert_eq!(
            (c.mmu.crossing, c.mmu.xon_limit),
            (Crossing::Shared, XonLimit::Latched)
        );
        let l =
            buffer("      asic: th\n      cell: 256B\n      slices: 2\n      xon_limit: live\n")
                .unwrap();
        let c = &l.scenario.switches[0].config;
        assert_eq!((c.cell, c.slices.count), (Bytes(256), 2));
        assert_eq!(
            (c.mmu.crossing, c.mmu.xon_limit),
            (Crossing::Shared, XonLimit::Live)
        );
        let l = buffer("      asic: tomahawk3\n").unwrap();
        assert_eq!(l.scenario.switches[0].config.cell, Bytes(254));
        let e = buffer("      asic: jericho\n").unwrap_err().to_string();
        assert!(
            e.contains("s.buffer.asic") && e.contains("tomahawk2"),
            "{e}"
        );
    }

    #[test]
    fn per_port_keys_give_those_ports_their_own_profile() {
        let text = "switches:\n  - name: s\n    ports: {count: 3, mtu: 1518}\n    buffer:\n      pools:\n        \
             ingress_lossless_pool: {type: ingress, size: 16MB}\n        egress_lossless_pool: {type: egress, size: 16MB, mode: static}\n      \
             profiles:\n        short: {pool: ingress_lossless_pool, size: 1248, dynamic_th: 0, xoff: 83200B}\n        \
             long: {pool: ingress_lossless_pool, size: 1248, dynamic_th: 0, xoff: 99840B}\n        \
             q: {pool: egress_lossless_pool, static_th: 16MB}\n      \
             pg: {\"3-4\": short, \"Ethernet0,Ethernet2|3-4\": long}\n      queue: {\"3-4\": q}\n";
        let l = parse("f.yaml", "f", text).unwrap();
        let sw = &l.scenario.switches[0];
        let names: Vec<&str> = (0..3).map(|p| sw.pg_profile_name(p, 3)).collect();
        assert_eq!(names, ["long", "short", "long"]);
        let bad = |pg: &str| {
            let t = text.replace(
                "pg: {\"3-4\": short, \"Ethernet0,Ethernet2|3-4\": long}",
                pg,
            );
            parse("f.yaml", "f", &t).unwrap_err().to_string()
        };
        let e = bad("pg: {\"3-4\": short, \"Ethernet7|3\": long}");
        assert!(e.contains("unknown port `Ethernet7`"), "{e}");
        let e = bad("pg: {\"3-4\": short, \"Ethernet1|3\": long, \"Ethernet1|3-4\": long}");
        assert!(
            e.contains("pg 3 of Ethernet1 is given a profile twice"),
            "{e}"
        );
    }

    #[test]
    fn slices_and_their_port_map_are_checked() {
        let l = buffer("      slices: 2\n      port_slices: [1, 0]\n").unwrap();
        let s = &l.scenario.switches[0].config.slices;
        assert_eq!((s.count, s.of_port.clone()), (2, vec![1, 0]));
        for (extra, expect) in [
            (
                "      slices: 9\n",
                "s.buffer.slices: 9 slices: a buffer has 1–8",
            ),
            (
                "      slices: 2\n      port_slices: [0]\n",
                "s.buffer.port_slices: 1 entries for 2 ports",
            ),
            (
                "      slices: 2\n      port_slices: [0, 2]\n",
                "s.buffer.port_slices[1]: slice 2 of 2: slices are numbered 0–1",
            ),
        ] {
            let e = buffer(extra).unwrap_err().to_string();
            assert!(e.contains(expect), "{e}");
        }
    }
}
