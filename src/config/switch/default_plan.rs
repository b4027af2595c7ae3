//! A switch without `buffer:` gets the built-in Tomahawk-like plan of
//! [`lossless_pipeline::default_plan`], as a [`Plan`] with its profile names.

use super::buffer::Plan;
use lossless_pipeline::config::{PortConfig, QosConfig};
use lossless_pipeline::default_plan;

/// The default plan for `ports` under `qos`.
pub fn plan(ports: &[PortConfig], qos: &QosConfig) -> Plan {
    let d = default_plan::plan(ports, qos);
    let mut plan = Plan {
        cell: d.cell,
        pools: d.pools,
        ..Plan::default()
    };
    let named = |v: Vec<(_, &str)>| {
        v.into_iter()
            .map(|(p, n)| (p, n.to_string()))
            .collect::<Vec<_>>()
    };
    plan.push_port(named(d.pg_profiles), named(d.queue_profiles));
    plan
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
