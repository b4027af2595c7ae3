//! The nodes of a simulation built from a scenario: each switch from its configuration
//! (with its seed, and the static FDB entries or host routes toward the hosts), each host
//! NIC with the flows it sends and the receivers of the flows it receives.

use super::cabling::{host_fdb_entries, host_routes, Cabling, NodeId};
use super::{HostNode, SwitchNode};
use crate::config::scenario::FlowDef;
use crate::config::Scenario;
use lossless_buffer_model::{Time, WireTimes};
use lossless_pipeline::config::Forwarding;
use lossless_pipeline::{Node, Switch};
use lossless_ports::collective::Rank;
use lossless_ports::flow::{FlowRx, FlowSpec, FlowTx, Transport};
use lossless_ports::host::{Host, RcSink};
use lossless_ports::rc::Responder;

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
            let sw = Switch::new(cfg);
            SwitchNode {
                wires: (0..sw.ports().len())
                    .map(|p| WireTimes::new(sw.port_speed(p)))
                    .collect(),
                sw,
                peers: cabling.switch_peers[si].clone(),
                same_time_wakes: (Time::ZERO, 0),
                taps: Default::default(),
            }
        })
        .collect()
}

/// The host NICs of `s`, each with the flows it sends and the receivers (measuring over the
/// scenario's window) of those it receives, at its switch port's speed; hosts with TCP
/// flows get a TCP stack whose smoltcp is seeded from `seed` and the host's index.
pub fn hosts(s: &Scenario, seed: u64, cabling: &Cabling) -> Vec<HostNode> {
    let m = s.run.measure;
    s.run
        .hosts
        .iter()
        .enumerate()
        .map(|(hi, h)| {
            let sends: Vec<&FlowDef> = s.run.flows.iter().filter(|f| f.src == hi).collect();
            let flows: Vec<FlowTx> = sends
                .iter()
                .map(|f| FlowTx::new(f.spec.clone()).expect("frame sizes validated by the config"))
                .collect();
            let speed = s.switches[h.attach.switch].config.ports[h.attach.port].speed;
            let mut host = Host::new(h.name.clone(), h.mac, speed, h.nic, flows);
            for f in s.run.flows.iter().filter(|f| f.dst == hi) {
                let rx = FlowRx::new(m.from, m.to.unwrap_or(Time::MAX));
                host.add_receiver(f.spec.id, rx, rc_sink(&f.spec));
            }
            for rank in ranks(s, hi, &sends) {
                host.add_rank(rank);
            }
            tcp_ends(s, hi, &mut host, seed.wrapping_add(hi as u64));
            HostNode {
                wire: WireTimes::new(host.port_speed(0)),
                host,
                peer: cabling.host_peers[hi],
                same_time_wakes: (Time::ZERO, 0),
            }
        })
        .collect()
}

/// Each CBFC port learns the credits its peer's receiver has (in a fabric, LLDP or the
/// operator tells it): a switch port from the switch port or host NIC it is cabled to, a
/// host from its switch port.
pub fn exchange_credits(
    s: &Scenario,
    switches: &mut [SwitchNode],
    hosts: &mut [HostNode],
    cabling: &Cabling,
) {
    let of = |node: NodeId, port: u16| match node {
        NodeId::Switch(sj) => s.switches[sj as usize].config.ports[port as usize].cbfc,
        NodeId::Host(hj) => s.run.hosts[hj as usize].nic.cbfc,
    };
    for (si, node) in switches.iter_mut().enumerate() {
        for (p, peer) in cabling.switch_peers[si].iter().enumerate() {
            if let Some(peer) = peer {
                node.sw.set_peer_credits(p, &of(peer.node, peer.port));
            }
        }
    }
    for (hi, node) in hosts.iter_mut().enumerate() {
        let peer = cabling.host_peers[hi];
        node.host.set_peer_credits(&of(peer.node, peer.port));
    }
}

/// Host `hi`'s ranks in the collectives of `s`; `sends` are the flows it sends, in the
/// order of its flows.
fn ranks(s: &Scenario, hi: usize, sends: &[&FlowDef]) -> Vec<Rank> {
    let mut out = Vec::new();
    for (ci, c) in s.run.collectives.iter().enumerate() {
        let Some(r) = c.hosts.iter().position(|h| *h == hi) else {
            continue;
        };
        let (out_ids, in_ids) = &c.qps[r];
        let send_at = out_ids
            .iter()
            .map(|id| {
                sends
                    .iter()
                    .position(|f| f.spec.id == *id)
                    .expect("the rank's own flow")
            })
            .collect();
        out.push(Rank::new(
            ci,
            c.kind,
            c.hosts.len(),
            (send_at, in_ids.clone()),
            c.chunk,
            c.iterations,
            c.start,
        ));
    }
    out
}

/// Host `hi`'s ends of the TCP flows of `s`, on its stack.
fn tcp_ends(s: &Scenario, hi: usize, host: &mut Host, seed: u64) {
    let ip = s.run.hosts[hi].ip;
    for f in &s.run.flows {
        let Transport::Tcp(t) = f.spec.transport else {
            continue;
        };
        if f.src == hi {
            host.tcp_stack(ip, t.ip_mtu, seed).add_sender(&f.spec, t);
        } else if f.dst == hi {
            host.tcp_stack(ip, t.ip_mtu, seed).add_receiver(&f.spec, t);
        }
    }
    host.tcp_ready();
}

/// The responder end of an RC flow, at its destination.
fn rc_sink(spec: &FlowSpec) -> Option<RcSink> {
    let Transport::Rc(rc) = &spec.transport else {
        return None;
    };
    let start_psn = spec.headers.bth.map_or(0, |(_, _, psn)| psn);
    Some(RcSink {
        responder: Responder::new(rc.config, start_psn),
        overhead: spec.headers.overhead(),
        ack_dscp: rc.ack_dscp,
        ack_priority: rc.ack_priority,
    })
}
