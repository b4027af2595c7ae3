//! Who is cabled to whom, and the FDB entries a learning switch would have: in `lossless
//! run` every host's MAC is installed as a static entry toward it on every L2 switch (the
//! port on a shortest path), so no flow starts by flooding.

use super::{HostNode, SwitchNode};
use crate::config::sim::Target;
use crate::config::Scenario;
use lossless_buffer_model::Time;
use lossless_pipeline::config::Forwarding;
use std::collections::VecDeque;

/// A node of the simulated network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    /// Switch index.
    Switch(u32),
    /// Host index.
    Host(u32),
}

/// The far end of a link, as seen from one port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer {
    /// Node at the far end.
    pub node: Node,
    /// Its port (0 for a host).
    pub port: u16,
    /// One-way propagation delay.
    pub propagation: Time,
    /// Link id (for up/down state).
    pub link: u32,
}

/// The cabling of a scenario.
pub struct Wiring {
    /// Peer of each switch port.
    pub switch_peers: Vec<Vec<Option<Peer>>>,
    /// Peer of each host.
    pub host_peers: Vec<Peer>,
    /// Number of links.
    pub links: usize,
}

/// Cable hosts and switch-to-switch links.
pub fn wire(s: &Scenario) -> Wiring {
    let mut switch_peers: Vec<Vec<Option<Peer>>> = s
        .switches
        .iter()
        .map(|sw| vec![None; sw.config.ports.len()])
        .collect();
    let mut host_peers = Vec::new();
    let mut link = 0u32;
    for (h, host) in s.sim.hosts.iter().enumerate() {
        let (si, pi) = host.attach;
        let propagation = s.switches[si].config.ports[pi].propagation();
        switch_peers[si][pi] = Some(Peer {
            node: Node::Host(h as u32),
            port: 0,
            propagation,
            link,
        });
        host_peers.push(Peer {
            node: Node::Switch(si as u32),
            port: pi as u16,
            propagation,
            link,
        });
        link += 1;
    }
    for l in &s.sim.links {
        switch_peers[l.a.0][l.a.1] = Some(Peer {
            node: Node::Switch(l.b.0 as u32),
            port: l.b.1 as u16,
            propagation: l.propagation,
            link,
        });
        switch_peers[l.b.0][l.b.1] = Some(Peer {
            node: Node::Switch(l.a.0 as u32),
            port: l.a.1 as u16,
            propagation: l.propagation,
            link,
        });
        link += 1;
    }
    Wiring {
        switch_peers,
        host_peers,
        links: link as usize,
    }
}

/// Install a static FDB entry for every host (in every VLAN its flows use) on every L2
/// switch, toward the port on a shortest path to it.
pub fn install_host_routes(s: &mut Scenario) {
    let n = s.switches.len();
    // Adjacency: (neighbour switch, local port).
    let mut adj: Vec<Vec<(usize, u16)>> = vec![Vec::new(); n];
    for l in &s.sim.links {
        adj[l.a.0].push((l.b.0, l.a.1 as u16));
        adj[l.b.0].push((l.a.0, l.b.1 as u16));
    }
    for (h, host) in s.sim.hosts.iter().enumerate() {
        let mut vids: Vec<u16> = vec![0];
        for f in s.sim.flows.iter().filter(|f| f.dst == h || f.src == h) {
            if let Some((vid, _)) = f.spec.headers.vlan {
                if !vids.contains(&vid) {
                    vids.push(vid);
                }
            }
        }
        // BFS from the host's switch: the port each switch uses toward it.
        let mut toward: Vec<Option<u16>> = vec![None; n];
        let (root, root_port) = (host.attach.0, host.attach.1 as u16);
        toward[root] = Some(root_port);
        let mut q = VecDeque::from([root]);
        let mut seen = vec![false; n];
        seen[root] = true;
        while let Some(u) = q.pop_front() {
            for &(v, _) in &adj[u] {
                if !seen[v] {
                    seen[v] = true;
                    // v reaches u through v's port on the (first) link between them.
                    let port = adj[v].iter().find(|(w, _)| *w == u).map(|(_, p)| *p);
                    toward[v] = port;
                    q.push_back(v);
                }
            }
        }
        for (si, sw) in s.switches.iter_mut().enumerate() {
            if let (Forwarding::L2 { static_fdb, .. }, Some(port)) =
                (&mut sw.config.forwarding, toward[si])
            {
                for &vid in &vids {
                    static_fdb.push((vid, host.mac, port));
                }
            }
        }
    }
}

/// The link at `target` and both of its ends.
pub fn link_ends(
    switches: &[SwitchNode],
    hosts: &[HostNode],
    target: Target,
) -> (Option<u32>, Vec<(Node, u16)>) {
    match target {
        Target::Switch((s, p)) => {
            let mut ends = vec![(Node::Switch(s as u32), p as u16)];
            let peer = switches[s].peers[p];
            if let Some(peer) = peer {
                ends.push((peer.node, peer.port));
            }
            (peer.map(|p| p.link), ends)
        }
        Target::Host(h) => {
            let peer = hosts[h].peer;
            (
                Some(peer.link),
                vec![(Node::Host(h as u32), 0), (peer.node, peer.port)],
            )
        }
    }
}
