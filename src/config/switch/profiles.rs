//! `buffer.profiles`: each profile's pool, reservation, threshold (dynamic α or static
//! bytes) and, for lossless PG profiles, headroom and XON hysteresis — checked against the
//! XOFF point the threshold gives, so that XON can come at all.

use crate::config::diag::{Diag, Diags, Key};
use crate::config::schema::{BufferRaw, ProfileRaw, Val};
use crate::config::values::{line, list_or_none};
use crate::config::words::PoolMode;
use lossless_buffer_model::asic::IngressSizes;
use lossless_buffer_model::mmu::{Headroom, PoolKind, PoolSpec, ProfileSpec, Threshold};
use lossless_buffer_model::Bytes;
use std::collections::BTreeMap;

type Result<T> = std::result::Result<T, Diag>;

/// Profiles by name, with the line each is defined on.
pub type Profiles = BTreeMap<String, (ProfileSpec, Option<u64>)>;

/// Every profile of `buffer:` (`k` is the switch's `buffer` key).
pub fn resolve(
    d: &Diags,
    k: &Key,
    b: &Val<BufferRaw>,
    pools: &[PoolSpec],
    modes: &[PoolMode],
    sizes: IngressSizes,
    overhead: Bytes,
) -> Result<Profiles> {
    let mut out = Profiles::new();
    for (name, p) in &b.value.profiles.value {
        let kk = k.at("profiles").at(name);
        let mut spec = profile(d, &kk, p, pools, modes)?;
        // On a pool with a shared headroom pool, a `pg_buffer` profile's size is the PG's own
        // buffer below XOFF alone (SONiC's Mellanox plans: size = xon), and its headroom is
        // the port's (`port_headroom`).
        let shp = pools[spec.pool].xoff.get() > 0;
        match sizes {
            IngressSizes::Shared => {}
            IngressSizes::PgBuffer if shp => {}
            IngressSizes::Whole | IngressSizes::PgBuffer => {
                spec.reserved = reserve_without_headroom(d, &kk, p, &spec)?;
            }
        }
        if overhead.get() > 0 && !shp {
            spec.headroom = headroom_less_overhead(d, &kk, p, spec.headroom, overhead)?;
        }
        out.insert(name.clone(), (spec, line(p)));
    }
    Ok(out)
}

/// With `ingress_sizes: whole` or `pg_buffer` a lossless profile's `size` counts its
/// headroom too: its reserve is `size − xoff` (SONiC's Trident 2 plans: 56,368 B = 6 cells
/// of reserve + 55,120 B of xoff; Spectrum's: `size = xon + xoff`, the reserve its `xon`).
fn reserve_without_headroom(
    d: &Diags,
    kk: &Key,
    p: &Val<ProfileRaw>,
    spec: &ProfileSpec,
) -> Result<Bytes> {
    let Some(h) = spec.headroom else {
        return Ok(spec.reserved);
    };
    match spec.reserved.get().checked_sub(h.xoff.get()) {
        Some(r) => Ok(Bytes(r)),
        None => d.error(
            p.value.size.as_ref().and_then(line).or(line(p)),
            &kk.at("size"),
            format!(
                "size {} is less than xoff {}: with ingress_sizes whole or pg_buffer (the Trident 2 and Spectrum readings) a lossless profile's size includes its headroom",
                spec.reserved, h.xoff
            ),
        ),
    }
}

/// A lossless PG's usable headroom: its `xoff` less what the chip keeps of it
/// (`headroom_overhead`).
fn headroom_less_overhead(
    d: &Diags,
    kk: &Key,
    p: &Val<ProfileRaw>,
    headroom: Option<Headroom>,
    overhead: Bytes,
) -> Result<Option<Headroom>> {
    let Some(mut h) = headroom else {
        return Ok(None);
    };
    match h.xoff.get().checked_sub(overhead.get()) {
        Some(x) if x > 0 => {
            h.xoff = Bytes(x);
            Ok(Some(h))
        }
        _ => d.error(
            p.value.xoff.as_ref().and_then(line).or(line(p)),
            &kk.at("xoff"),
            format!(
                "xoff {} is not above the chip's headroom overhead {overhead} (buffer.headroom_overhead): the PG could hold nothing after XOFF",
                h.xoff
            ),
        ),
    }
}

fn pool_index(d: &Diags, pools: &[PoolSpec], name: &Val<String>, key: &Key) -> Result<usize> {
    match pools.iter().position(|p| p.name == name.value) {
        Some(i) => Ok(i),
        None => {
            let known: Vec<_> = pools.iter().map(|p| p.name.clone()).collect();
            d.error(
                line(name),
                key,
                format!(
                    "unknown pool `{}` (defined: {})",
                    name.value,
                    list_or_none(&known)
                ),
            )
        }
    }
}

fn profile(
    d: &Diags,
    kk: &Key,
    p: &Val<ProfileRaw>,
    pools: &[PoolSpec],
    modes: &[PoolMode],
) -> Result<ProfileSpec> {
    let pr = &p.value;
    let pool = pool_index(d, pools, &pr.pool, &kk.at("pool"))?;
    let reserved: Bytes = d.opt_unit(&pr.size, &kk.at("size"))?.unwrap_or(Bytes(0));
    let threshold = match (&pr.dynamic_th, &pr.static_th) {
        (Some(_), Some(s)) => {
            return d.error(line(s), kk, "give dynamic_th or static_th, not both")
        }
        (None, None) => {
            return d.error(
                line(p),
                kk,
                "needs dynamic_th (α = 2^n, n in −8..7) or static_th (bytes)",
            )
        }
        (Some(n), None) => {
            if !(-8..=7).contains(&n.value) {
                return d.error(
                    line(n),
                    &kk.at("dynamic_th"),
                    format!("{} is outside −8..7 (α = 2^dynamic_th)", n.value),
                );
            }
            // A profile's threshold mode is its own, whatever the pool's `mode` (SAI's
            // SAI_BUFFER_PROFILE_ATTR_THRESHOLD_MODE overrides the pool's; SONiC's Tomahawk 3
            // plans give a dynamic lossy queue profile on a static pool).
            Threshold::Dynamic(n.value as i8)
        }
        (None, Some(s)) => {
            let v: Bytes = d.unit(s, &kk.at("static_th"))?;
            if modes[pool] == PoolMode::Dynamic
                && pools[pool].kind == PoolKind::Ingress
                && v > pools[pool].size
            {
                d.warn(
                    line(s),
                    &kk.at("static_th"),
                    format!(
                        "{v} is above the pool's size {}: the pool runs out first",
                        pools[pool].size
                    ),
                );
            }
            Threshold::Static(v)
        }
    };
    let xoff: Option<Bytes> = d.opt_unit(&pr.xoff, &kk.at("xoff"))?;
    let headroom = match xoff {
        None => {
            for (field, v) in [("xon", &pr.xon), ("xon_offset", &pr.xon_offset)] {
                if let Some(v) = v {
                    return d.error(
                        line(v),
                        &kk.at(field),
                        "only a lossless profile (with xoff) has XON settings",
                    );
                }
            }
            None
        }
        Some(xoff) => Some(headroom(d, kk, p, xoff, threshold, &pools[pool])?),
    };
    let own = reserved.get() + xoff.map_or(0, |x| x.get());
    if own > pools[pool].size.get() {
        return d.error(
            line(p),
            kk,
            format!(
                "reserved {reserved} + headroom {} = {} is beyond pool `{}` of {}",
                xoff.unwrap_or_default(),
                Bytes(own),
                pools[pool].name,
                pools[pool].size
            ),
        );
    }
    Ok(ProfileSpec {
        pool,
        reserved,
        threshold,
        headroom,
    })
}

/// Headroom and XON of a lossless profile: XON below the XOFF point, or it never comes.
fn headroom(
    d: &Diags,
    kk: &Key,
    p: &Val<ProfileRaw>,
    xoff: Bytes,
    threshold: Threshold,
    pool: &PoolSpec,
) -> Result<Headroom> {
    let pr = &p.value;
    if pool.kind != PoolKind::Ingress {
        return d.error(
            pr.xoff.as_ref().and_then(line),
            &kk.at("xoff"),
            "headroom (xoff) belongs to ingress PG profiles",
        );
    }
    let xon: Bytes = d.opt_unit(&pr.xon, &kk.at("xon"))?.unwrap_or(Bytes(0));
    let xon_offset: Bytes = d
        .opt_unit(&pr.xon_offset, &kk.at("xon_offset"))?
        .unwrap_or(Bytes(0));
    // XOFF point of this PG filling the pool alone.
    let xoff_point = threshold.xoff_point(pool.size);
    let how = match threshold {
        Threshold::Static(t) => format!("static_th {t}"),
        Threshold::Dynamic(n) => format!("α·S/(1+α) with α = 2^{n}, S = {}", pool.size),
    };
    if xon >= xoff_point {
        return d.error(
            pr.xon.as_ref().and_then(line).or(line(p)),
            &kk.at("xon"),
            format!("{xon} is at or above the XOFF point, {how} = {xoff_point}"),
        );
    }
    if xon_offset >= xoff_point {
        return d.error(
            pr.xon_offset.as_ref().and_then(line).or(line(p)),
            &kk.at("xon_offset"),
            format!("{xon_offset} is at or above the XOFF point, {how} = {xoff_point}: XON would never come"),
        );
    }
    if xoff.get() == 0 {
        d.warn(
            pr.xoff.as_ref().and_then(line),
            &kk.at("xoff"),
            "0 bytes of headroom (a PG's xoff bounds its headroom, with a shared headroom pool too): lossless traffic will drop",
        );
    }
    Ok(Headroom {
        xoff,
        xon,
        xon_offset,
    })
}

#[cfg(test)]
mod tests {
    use crate::config::parse;

    fn with(profile: &str) -> String {
        format!(
            "switches:\n  - name: s\n    ports: {{count: 2}}\n    buffer:\n      pools:\n        \
             ingress_lossless_pool: {{type: ingress, size: 16MB}}\n        egress_lossy_pool: {{type: egress, size: 8MB, mode: static}}\n      \
             profiles:\n        p: {profile}\n      pg: {{\"3-4\": p}}\n"
        )
    }

    #[test]
    fn a_lossless_profile_resolves_with_its_xoff_point_checked() {
        let l = parse(
            "f.yaml",
            "f",
            &with("{pool: ingress_lossless_pool, dynamic_th: 0, xoff: 83200B, xon_offset: 3KB}"),
        )
        .unwrap();
        let p = &l.scenario.switches[0].config.pg_profiles[3];
        assert_eq!(p.headroom.unwrap().xoff.get(), 83_200);
        // α = 1 over 16 MB: the XOFF point is 8 MB.
        let e = parse(
            "f.yaml",
            "f",
            &with("{pool: ingress_lossless_pool, dynamic_th: 0, xoff: 83200B, xon: 8MB}"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("s.buffer.profiles.p.xon: 8MB is at or above the XOFF point, α·S/(1+α) with α = 2^0, S = 16MB = 8MB"), "{e}");
    }

    #[test]
    fn a_dynamic_profile_on_a_static_pool_keeps_its_own_threshold() {
        let text = with("{pool: ingress_lossless_pool, dynamic_th: 0, xoff: 83200B}").replace(
            "      pg:",
            "        q: {pool: egress_lossy_pool, dynamic_th: 1}\n      queue: {\"0\": q}\n      pg:",
        );
        let loaded = parse("f.yaml", "f", &text).unwrap();
        let q = &loaded.scenario.switches[0].config.queue_profiles[0];
        assert_eq!(
            q.threshold,
            lossless_buffer_model::mmu::Threshold::Dynamic(1)
        );
    }

    #[test]
    fn each_rule_names_its_key() {
        for (profile, expect) in [
            ("{pool: nope, dynamic_th: 0, xoff: 1KB}", "s.buffer.profiles.p.pool: unknown pool `nope` (defined: egress_lossy_pool, ingress_lossless_pool)"),
            ("{pool: ingress_lossless_pool, xoff: 1KB}", "s.buffer.profiles.p: needs dynamic_th"),
            ("{pool: ingress_lossless_pool, dynamic_th: 9, xoff: 1KB}", "s.buffer.profiles.p.dynamic_th: 9 is outside −8..7"),
            ("{pool: ingress_lossless_pool, dynamic_th: 0, xon: 1KB}", "s.buffer.profiles.p.xon: only a lossless profile (with xoff) has XON settings"),
        ] {
            let e = parse("f.yaml", "f", &with(profile)).unwrap_err().to_string();
            assert!(e.contains(expect), "{e}");
        }
    }
}
