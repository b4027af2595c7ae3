//! The nodes of a simulation built from a scenario: each switch from its configuration
//! (with its seed, and the static FDB entries or host routes toward the hosts), each host
//! NIC with the flows it sends and the receivers of the flows it receives.

use super::cabling::{host_fdb_entries, host_routes, Cabling};
use super::{HostNode, SwitchNode};
use crate::config::Scenario;
use lossless_buffer_model::Time;
use lossless_pipeline::config::Forwarding;
use lossless_pipeline::Switch;
use lossless_ports::flow::{FlowRx, FlowTx};
use lossless_ports::host::Host;

/// The switches of `s`; switch i's RNG is seeded with `seed + i`.
pub fn switches(s: &Scenario, seed: u64, cabling: &Cabling) -> Vec<SwitchNode> {
    let fdb = host_fdb_entries(s);
    let host_routes = host_routes(s);
    s.switches
        .iter()
        .enumerate()
        .map(|(si, spec)| {
            let mut cfg = spec.config.clone();
            cfg.seed = seed.wrapping_add(si as u64);
            match &mut cfg.forwarding {
                Forwarding::L2 { static_fdb, .. } => static_fdb.extend_from_slice(&fdb[si]),
                Forwarding::L3 { routes, .. } => routes.extend_from_slice(&host_routes[si]),
            }
            SwitchNode {
                sw: Switch::new(cfg),
                peers: cabling.switch_peers[si].clone(),
                same_time_wakes: 0,
            }
        })
        .collect()
}

/// The host NICs of `s`, each with the flows it sends and the receivers (measuring over the
/// scenario's window) of those it receives, at its switch port's speed.
pub fn hosts(s: &Scenario, cabling: &Cabling) -> Vec<HostNode> {
    let m = s.run.measure;
    s.run
        .hosts
        .iter()
        .enumerate()
        .map(|(hi, h)| {
            let flows: Vec<FlowTx> = s
                .run
                .flows
                .iter()
                .filter(|f| f.src == hi)
                .map(|f| FlowTx::new(f.spec.clone()).expect("frame sizes validated by the config"))
                .collect();
            let speed = s.switches[h.attach.switch].config.ports[h.attach.port].speed;
            let mut host = Host::new(h.name.clone(), h.mac, speed, h.nic, flows);
            for f in s.run.flows.iter().filter(|f| f.dst == hi) {
                host.add_receiver(f.spec.id, FlowRx::new(m.from, m.to.unwrap_or(Time::MAX)));
            }
            HostNode {
                host,
                peer: cabling.host_peers[hi],
                same_time_wakes: 0,
            }
        })
        .collect()
}
