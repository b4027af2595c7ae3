//! Small ready-made switch configurations for tests, benches and examples: `n` ports at one
//! speed, L2 forwarding, SONiC's default DSCP map, PFC on priorities 3 and 4, one lossless
//! ingress pool with dynamic thresholds and per-PG headroom. Scenario files get their
//! defaults from the YAML loader instead; these only save hand-building a `SwitchConfig`.

use crate::config::{Forwarding, PortConfig, QosConfig, SwitchConfig, Trust};
use crate::wire::addr::MacAddr;
use lossless_buffer_model::mmu::{Headroom, PoolKind, PoolSpec, ProfileSpec, Threshold};
use lossless_buffer_model::scheduler::Discipline;
use lossless_buffer_model::{Bytes, Length, Rate, Time, PRIORITIES};

/// SONiC's default DSCP → TC map: 3→3, 4→4, 48→6, everything else → 1.
pub fn sonic_dscp_to_tc() -> [u8; 64] {
    core::array::from_fn(|d| match d {
        3 => 3,
        4 => 4,
        48 => 6,
        _ => 1,
    })
}

/// Identity map over the eight classes.
pub fn identity8() -> [u8; PRIORITIES] {
    core::array::from_fn(|i| i as u8)
}

/// Base MAC of a preset switch (locally administered): port i has this + i.
const PRESET_MAC: MacAddr = MacAddr([0x02, 0x4C, 0x4C, 0x00, 0x00, 0x00]);

/// `n` ports at `speed` with 2 m cables; buffer: 256-byte cells, a 16 MB lossless ingress
/// pool (α = 1, 32 KiB headroom per lossless PG), a 16 MB static egress lossless pool and
/// an 8 MB lossy pool for everything else.
pub fn basic(n: usize, speed: Rate) -> SwitchConfig {
    let ports = (0..n)
        .map(|i| PortConfig {
            name: format!("Ethernet{i}"),
            speed,
            cable: Length(2_000),
            delay: None,
            mtu: 9216,
            mac: PRESET_MAC.offset(i).expect("64 ports fit").0,
        })
        .collect();
    let pools = vec![
        PoolSpec {
            name: "ingress_lossless_pool".into(),
            kind: PoolKind::Ingress,
            size: Bytes(16_000_000),
            xoff: Bytes(0),
        },
        PoolSpec {
            name: "ingress_lossy_pool".into(),
            kind: PoolKind::Ingress,
            size: Bytes(8_000_000),
            xoff: Bytes(0),
        },
        PoolSpec {
            name: "egress_lossless_pool".into(),
            kind: PoolKind::Egress,
            size: Bytes(16_000_000),
            xoff: Bytes(0),
        },
        PoolSpec {
            name: "egress_lossy_pool".into(),
            kind: PoolKind::Egress,
            size: Bytes(8_000_000),
            xoff: Bytes(0),
        },
    ];
    let pg_lossless = ProfileSpec {
        pool: 0,
        reserved: Bytes(1248),
        threshold: Threshold::Dynamic(0),
        headroom: Some(Headroom {
            xoff: Bytes::kib(32),
            xon: Bytes(2288),
            xon_offset: Bytes(2288),
        }),
    };
    let pg_lossy = ProfileSpec {
        pool: 1,
        reserved: Bytes(0),
        threshold: Threshold::Dynamic(3),
        headroom: None,
    };
    let q_lossless = ProfileSpec {
        pool: 2,
        reserved: Bytes(0),
        threshold: Threshold::Static(Bytes(16_000_000)),
        headroom: None,
    };
    let q_lossy = ProfileSpec {
        pool: 3,
        reserved: Bytes(1518),
        threshold: Threshold::Dynamic(3),
        headroom: None,
    };
    let pfc_enable = (1 << 3) | (1 << 4);
    let pick = |i: usize, lossless: &ProfileSpec, lossy: &ProfileSpec| {
        if pfc_enable & (1 << (i % PRIORITIES)) != 0 {
            lossless.clone()
        } else {
            lossy.clone()
        }
    };
    SwitchConfig {
        name: "sw".into(),
        ports,
        pipeline_latency: Time::from_ns(500),
        cell: Bytes(256),
        pools,
        pg_profiles: (0..n * PRIORITIES)
            .map(|i| pick(i, &pg_lossless, &pg_lossy))
            .collect(),
        queue_profiles: (0..n * PRIORITIES)
            .map(|i| pick(i, &q_lossless, &q_lossy))
            .collect(),
        qos: QosConfig {
            trust: Trust::Dscp,
            dscp_to_tc: sonic_dscp_to_tc(),
            dot1p_to_tc: identity8(),
            tc_to_pg: identity8(),
            tc_to_queue: identity8(),
            tc_to_dot1p: None,
            pfc_enable,
            pfc_asym: false,
            pause_quanta: 0xFFFF,
            pfc_response: Time::ZERO,
            scheduler: [Discipline::Dwrr(1); PRIORITIES],
            queue_wred: [None; PRIORITIES],
            pfcwd: None,
        },
        forwarding: Forwarding::L2 {
            static_fdb: Vec::new(),
            fdb_size: 16_384,
            fdb_aging: Time::from_ms(600_000),
        },
        seed: 1,
    }
}
