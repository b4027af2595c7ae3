//! The built-in Tomahawk-like buffer plan of a switch whose configuration gives none
//! (docs/scenario.md, `buffer`): 256-byte cells, lossless and lossy pools seen from ingress and egress,
//! lossless PGs (one per PFC priority's PG) with the larger computed minimum headroom and
//! an XON offset of two MTUs, lossy PGs and queues elsewhere. Its numbers are written here
//! once; `lossless check --defaults` prints them from here.

use crate::config::{PortConfig, QosConfig};
use lossless_buffer_model::headroom::HeadroomNeed;
use lossless_buffer_model::mmu::{Headroom, PoolKind, PoolSpec, ProfileSpec, Threshold};
use lossless_buffer_model::{Bytes, PRIORITIES};

/// Buffer cell.
pub const CELL: Bytes = Bytes(256);
/// Shared size of the lossless pools (ingress and egress).
pub const LOSSLESS_POOL: Bytes = Bytes(24_000_000);
/// Shared size of the lossy pools (ingress and egress).
pub const LOSSY_POOL: Bytes = Bytes(8_000_000);
/// α = 2^n of lossless PGs (1/8).
pub const LOSSLESS_DYNAMIC_TH: i8 = -3;
/// α = 2^n of lossy PGs and queues (8).
pub const LOSSY_DYNAMIC_TH: i8 = 3;
/// Bytes reserved per lossy queue.
pub const LOSSY_QUEUE_RESERVED: Bytes = Bytes(1518);
/// XON hysteresis of a lossless PG, in MTUs.
pub const XON_OFFSET_MTUS: u64 = 2;

/// The pools, in this order: their names, kinds and shared sizes.
pub const POOLS: [(&str, PoolKind, Bytes); 4] = [
    ("ingress_lossless_pool", PoolKind::Ingress, LOSSLESS_POOL),
    ("ingress_lossy_pool", PoolKind::Ingress, LOSSY_POOL),
    ("egress_lossless_pool", PoolKind::Egress, LOSSLESS_POOL),
    ("egress_lossy_pool", PoolKind::Egress, LOSSY_POOL),
];

/// The default plan: pools, and per (port, PG) and (port, queue) a profile with its name.
#[derive(Clone, Debug)]
pub struct DefaultPlan {
    /// Cell size.
    pub cell: Bytes,
    /// Pools ([`POOLS`]).
    pub pools: Vec<PoolSpec>,
    /// Profile and name of each (port, PG), port by port.
    pub pg_profiles: Vec<(ProfileSpec, &'static str)>,
    /// Profile and name of each (port, queue), port by port.
    pub queue_profiles: Vec<(ProfileSpec, &'static str)>,
}

/// The default plan for `ports` under `qos`.
pub fn plan(ports: &[PortConfig], qos: &QosConfig) -> DefaultPlan {
    let (lossless_pgs, lossless_queues) = (qos.lossless_pgs(), qos.lossless_queues());
    let mut plan = DefaultPlan {
        cell: CELL,
        pools: POOLS
            .iter()
            .map(|(name, kind, size)| PoolSpec {
                name: (*name).into(),
                kind: *kind,
                size: *size,
                xoff: Bytes(0),
            })
            .collect(),
        pg_profiles: Vec::with_capacity(ports.len() * PRIORITIES),
        queue_profiles: Vec::with_capacity(ports.len() * PRIORITIES),
    };
    for p in ports {
        let headroom = HeadroomNeed::ieee(p.speed, p.propagation(), p.mtu, CELL).bytes();
        let lossless = Headroom {
            xoff: headroom,
            xon: Bytes(0),
            xon_offset: Bytes(XON_OFFSET_MTUS * p.mtu as u64),
        };
        for g in 0..PRIORITIES {
            plan.pg_profiles.push(if lossless_pgs & (1 << g) != 0 {
                (
                    profile(
                        0,
                        Bytes(0),
                        Threshold::Dynamic(LOSSLESS_DYNAMIC_TH),
                        Some(lossless),
                    ),
                    "pg_lossless_default",
                )
            } else {
                (
                    profile(1, Bytes(0), Threshold::Dynamic(LOSSY_DYNAMIC_TH), None),
                    "pg_lossy_default",
                )
            });
        }
        for q in 0..PRIORITIES {
            plan.queue_profiles
                .push(if lossless_queues & (1 << q) != 0 {
                    (
                        profile(2, Bytes(0), Threshold::Static(LOSSLESS_POOL), None),
                        "q_lossless_default",
                    )
                } else {
                    (
                        profile(
                            3,
                            LOSSY_QUEUE_RESERVED,
                            Threshold::Dynamic(LOSSY_DYNAMIC_TH),
                            None,
                        ),
                        "q_lossy_default",
                    )
                });
        }
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
