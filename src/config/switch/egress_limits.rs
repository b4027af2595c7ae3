//! Warnings where a lossless priority can be admitted at ingress but dropped at egress: PFC
//! keeps a priority lossless only while its ingress PGs send XOFF before any egress queue
//! it flows into refuses it. In an incast every other port's PG of the priority may fill
//! at once, so an egress queue may have to hold all of it: each PG's reserved space, its
//! headroom and the packet that crossed its limit, and the shared space the PGs reach
//! together — with dynamic thresholds α_i in a pool (slice) of S, X = A·S/(1 + A) for
//! A = Σα_i (docs/physics.md, "Dynamic threshold"), static ones their thresholds, never
//! more than S. The queue's limit (reserved plus its shared limit alone in its pool) must
//! be at least that.

use super::buffer::Plan;
use crate::config::diag::{Diags, Key};
use lossless_buffer_model::mmu::{ProfileSpec, Threshold};
use lossless_buffer_model::{priorities_in, Bytes, PRIORITIES};
use lossless_pipeline::config::{PortConfig, QosConfig};

/// Shared space of pool `pool` that one port's user meets: its slice's share.
fn share(plan: &Plan, pool: usize) -> Bytes {
    Bytes(plan.pools[pool].size.get() / plan.slices.count.max(1) as u64)
}

/// The most a queue with profile `q` holds when it is the only user of its pool.
fn queue_limit(plan: &Plan, q: &ProfileSpec) -> Bytes {
    let s = share(plan, q.pool);
    q.reserved + q.threshold.xoff_point(s).min(s)
}

/// Warn (once per priority) where a lossless priority's egress queue can refuse what its
/// ingress PGs hold before they send XOFF.
pub fn check(d: &Diags, sw: &Key, ports: &[PortConfig], qos: &QosConfig, plan: &Plan) {
    if ports.len() < 2 || plan.pg_profiles.len() < ports.len() * PRIORITIES {
        return;
    }
    for tc in priorities_in(qos.pfc_enable) {
        let (pg, queue) = (qos.tc_to_pg[tc] as usize, qos.tc_to_queue[tc] as usize);
        let lossless: Vec<usize> = (0..ports.len())
            .filter(|i| plan.pg_profiles[i * PRIORITIES + pg].headroom.is_some())
            .collect();
        let Some(&first) = lossless.first() else {
            continue;
        };
        // What the ingress PGs of this priority on every port but `e` can hold.
        let ingress = |e: usize| {
            let mut outside = Bytes(0);
            // Per (pool, slice): Σα of the dynamic PGs, Σ static thresholds.
            let mut users: std::collections::BTreeMap<(usize, usize), (f64, u64)> =
                Default::default();
            for &i in lossless.iter().filter(|i| **i != e) {
                let p = &plan.pg_profiles[i * PRIORITIES + pg];
                let h = p.headroom.expect("a lossless PG");
                outside = outside + p.reserved + h.xoff + Bytes(ports[i].mtu as u64);
                let slice = plan.slices.slice_of(i, ports.len());
                let u = users.entry((p.pool, slice)).or_default();
                match p.threshold {
                    Threshold::Dynamic(n) => u.0 += 2f64.powi(n as i32),
                    Threshold::Static(t) => u.1 += t.get(),
                }
            }
            let shared: u64 = users
                .iter()
                .map(|((pool, _), (alpha, statics))| {
                    let s = share(plan, *pool).get();
                    let dynamic = (alpha * s as f64 / (1.0 + alpha)).ceil() as u64;
                    (dynamic + statics).min(s)
                })
                .sum();
            outside + Bytes(shared)
        };
        // The first port whose queue takes less.
        let short = (0..ports.len()).find_map(|e| {
            let q = &plan.queue_profiles[e * PRIORITIES + queue];
            let (limit, hold) = (queue_limit(plan, q), ingress(e));
            (limit < hold).then_some((e, limit, hold))
        });
        let Some((e, limit, hold)) = short else {
            continue;
        };
        let name = &plan.queue_names[e * PRIORITIES + queue];
        let at = plan.profile_lines.get(name).copied().flatten();
        let pg_name = &plan.pg_names[first * PRIORITIES + pg];
        let pool = &plan.pools[plan.pg_profiles[first * PRIORITIES + pg].pool].name;
        let key = sw.at("buffer").at("profiles").at(name);
        d.warn(
            at,
            &key,
            format!(
                "lossless priority {tc} can be dropped at egress: the ingress PGs of the other ports ({pg_name}, in {pool}) hold up to {} together in an incast (shared space, headroom, reserved), but queue {queue} of {} takes at most {} ({name}: reserved plus its shared limit alone in {}); raise the queue's limit to {} or more, or shrink the ingress side",
                hold.approx(),
                ports[e].name,
                limit.approx(),
                plan.pools[plan.queue_profiles[e * PRIORITIES + queue].pool].name,
                hold.approx(),
            ),
        );
    }
}
