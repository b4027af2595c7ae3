//! Small ready-made switch configurations for tests, benches and examples: the defaults of
//! [`SwitchConfig::with_ports`] (SONiC's QoS, PFC on priorities 3 and 4, L2 forwarding)
//! with a simpler buffer plan whose numbers are easy to derive by hand. Scenario files get
//! their defaults from the YAML loader instead; these only save hand-building a config.

use crate::config::{QosConfig, SwitchConfig};
use lossless_buffer_model::mmu::{Headroom, PoolKind, PoolSpec, ProfileSpec, Threshold};
use lossless_buffer_model::{Bytes, Rate, PRIORITIES};

/// `n` default ports at `speed` (2 m cables); the default switch, but for its buffer:
/// 256-byte cells, a 16 MB lossless ingress pool (α = 1, 1248 bytes reserved and 32 KiB of
/// headroom per lossless PG, XON 2288 bytes below the limit), a 16 MB static egress
/// lossless pool and 8 MB lossy pools for everything else.
pub fn basic(n: usize, speed: Rate) -> SwitchConfig {
    let mut cfg = SwitchConfig::with_ports("sw", SwitchConfig::default_ports(n, speed));
    let pool = |name: &str, kind, size| PoolSpec {
        name: name.into(),
        kind,
        size: Bytes(size),
        xoff: Bytes(0),
    };
    cfg.pools = vec![
        pool("ingress_lossless_pool", PoolKind::Ingress, 16_000_000),
        pool("ingress_lossy_pool", PoolKind::Ingress, 8_000_000),
        pool("egress_lossless_pool", PoolKind::Egress, 16_000_000),
        pool("egress_lossy_pool", PoolKind::Egress, 8_000_000),
    ];
    let profile = |pool, reserved, threshold, headroom| ProfileSpec {
        pool,
        reserved: Bytes(reserved),
        threshold,
        headroom,
    };
    let pg_lossless = profile(
        0,
        1248,
        Threshold::Dynamic(0),
        Some(Headroom {
            xoff: Bytes::kib(32),
            xon: Bytes(2288),
            xon_offset: Bytes(2288),
        }),
    );
    let pg_lossy = profile(1, 0, Threshold::Dynamic(3), None);
    let q_lossless = profile(2, 0, Threshold::Static(Bytes(16_000_000)), None);
    let q_lossy = profile(3, 1518, Threshold::Dynamic(3), None);
    let lossless = QosConfig::default().pfc_enable;
    let pick = |i: usize, a: &ProfileSpec, b: &ProfileSpec| {
        if lossless & (1 << (i % PRIORITIES)) != 0 {
            a.clone()
        } else {
            b.clone()
        }
    };
    cfg.pg_profiles = (0..n * PRIORITIES)
        .map(|i| pick(i, &pg_lossless, &pg_lossy))
        .collect();
    cfg.queue_profiles = (0..n * PRIORITIES)
        .map(|i| pick(i, &q_lossless, &q_lossy))
        .collect();
    cfg
}
