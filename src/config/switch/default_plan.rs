//! The built-in Tomahawk-like buffer plan of a switch without `buffer:` (design §6): 256-byte
//! cells, lossless and lossy pools seen from ingress and egress, lossless PGs (one per PFC
//! priority's PG) with the larger computed minimum headroom and an XON offset of two MTUs,
//! lossy PGs and queues elsewhere.

use super::buffer::Plan;
use crate::config::defaults;
use lossless_buffer_model::headroom::HeadroomNeed;
use lossless_buffer_model::mmu::{Headroom, PoolKind, PoolSpec, ProfileSpec, Threshold};
use lossless_buffer_model::{Bytes, PRIORITIES};
use lossless_pipeline::config::{PortConfig, QosConfig};

/// Pools of the default plan, in this order.
const POOLS: [(&str, PoolKind, Bytes); 4] = [
    (
        "ingress_lossless_pool",
        PoolKind::Ingress,
        defaults::LOSSLESS_POOL,
    ),
    (
        "ingress_lossy_pool",
        PoolKind::Ingress,
        defaults::LOSSY_POOL,
    ),
    (
        "egress_lossless_pool",
        PoolKind::Egress,
        defaults::LOSSLESS_POOL,
    ),
    ("egress_lossy_pool", PoolKind::Egress, defaults::LOSSY_POOL),
];

/// The default plan for `ports` under `qos`.
pub fn plan(ports: &[PortConfig], qos: &QosConfig) -> Plan {
    let mut plan = Plan {
        cell: defaults::CELL,
        pools: POOLS
            .iter()
            .map(|(name, kind, size)| PoolSpec {
                name: (*name).into(),
                kind: *kind,
                size: *size,
                xoff: Bytes(0),
            })
            .collect(),
        ..Plan::default()
    };
    let (lossless_pgs, lossless_queues) = (qos.lossless_pgs(), qos.lossless_queues());
    for p in ports {
        let headroom = HeadroomNeed::ieee(p.speed, p.propagation(), p.mtu, defaults::CELL).bytes();
        let pg = |g: usize| {
            if lossless_pgs & (1 << g) != 0 {
                let h = Headroom {
                    xoff: headroom,
                    xon: Bytes(0),
                    xon_offset: Bytes(defaults::XON_OFFSET_MTUS * p.mtu as u64),
                };
                (
                    profile(
                        0,
                        Bytes(0),
                        Threshold::Dynamic(defaults::LOSSLESS_DYNAMIC_TH),
                        Some(h),
                    ),
                    "pg_lossless_default",
                )
            } else {
                (
                    profile(
                        1,
                        Bytes(0),
                        Threshold::Dynamic(defaults::LOSSY_DYNAMIC_TH),
                        None,
                    ),
                    "pg_lossy_default",
                )
            }
        };
        let queue = |q: usize| {
            if lossless_queues & (1 << q) != 0 {
                (
                    profile(
                        2,
                        Bytes(0),
                        Threshold::Static(defaults::LOSSLESS_POOL),
                        None,
                    ),
                    "q_lossless_default",
                )
            } else {
                (
                    profile(
                        3,
                        defaults::LOSSY_QUEUE_RESERVED,
                        Threshold::Dynamic(defaults::LOSSY_DYNAMIC_TH),
                        None,
                    ),
                    "q_lossy_default",
                )
            }
        };
        plan.push_port(
            (0..PRIORITIES).map(|g| {
                let (s, n) = pg(g);
                (s, n.to_string())
            }),
            (0..PRIORITIES).map(|q| {
                let (s, n) = queue(q);
                (s, n.to_string())
            }),
        );
    }
    plan
}

fn profile(
    pool: usize,
    reserved: Bytes,
    threshold: Threshold,
    headroom: Option<Headroom>,
) -> ProfileSpec {
    ProfileSpec {
        pool,
        reserved,
        threshold,
        headroom,
    }
}

#[cfg(test)]
mod tests {
    use crate::config::parse;

    #[test]
    fn lossless_pgs_get_the_larger_minimum_headroom() {
        let l = parse(
            "f.yaml",
            "f",
            "switches:\n  - name: s\n    ports: {count: 2, mtu: 1518}\n",
        )
        .unwrap();
        let sw = &l.scenario.switches[0];
        assert!(sw.default_buffer);
        // 100G, 2 m, MTU 1518: 325 cells of 64-byte frames beat 30.1 KB of 1518-byte ones.
        for pg in [3, 4] {
            let h = sw.config.pg_profiles[pg].headroom.unwrap();
            assert_eq!((h.xoff.get(), h.xon_offset.get()), (325 * 256, 2 * 1518));
        }
        assert!(sw.config.pg_profiles[0].headroom.is_none());
        assert_eq!(sw.queue_profile_names[3], "q_lossless_default");
        assert_eq!(sw.queue_profile_names[1], "q_lossy_default");
    }
}
