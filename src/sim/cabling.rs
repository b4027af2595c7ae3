//! Who is cabled to whom in a simulated network, and the forwarding entries a running
//! network would have learned: in `lossless run` every host's MAC is installed as a static
//! entry toward it on every L2 switch (the port on a shortest path), so no flow starts by
//! flooding; and an L3 switch routes to each host cabled to it by a host route (/32) to
//! its port and MAC, as its neighbour table would.

use crate::config::{PortRef, Scenario, Target};
use lossless_buffer_model::Time;
use lossless_pipeline::config::{v4_key, Forwarding, NextHop, Route, RouteTarget};
use std::collections::VecDeque;

/// A node of the simulated network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeId {
    /// Switch index.
    Switch(u32),
    /// Host index.
    Host(u32),
}

impl NodeId {
    /// The node's number in the canonical order of an instant's events
    /// ([`super::key`]) and among the wake-ups: switches first (`switches` of them), then
    /// hosts.
    #[inline]
    pub fn number(self, switches: usize) -> usize {
        match self {
            NodeId::Switch(s) => s as usize,
            NodeId::Host(h) => switches + h as usize,
        }
    }
}

/// The far end of a link, as seen from one port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer {
    /// Node at the far end.
    pub node: NodeId,
    /// Its port (0 for a host).
    pub port: u16,
    /// One-way propagation delay.
    pub propagation: Time,
    /// Link id (for up/down state).
    pub link: u32,
}

/// The cabling of a scenario: hosts first (link i is host i's), then switch-to-switch links.
#[derive(Clone, Debug, Default)]
pub struct Cabling {
    /// Peer of each switch port.
    pub switch_peers: Vec<Vec<Option<Peer>>>,
    /// Peer of each host.
    pub host_peers: Vec<Peer>,
    /// Number of links.
    pub links: usize,
}

impl Cabling {
    /// Cable the hosts and switch-to-switch links of `s`.
    pub fn of(s: &Scenario) -> Cabling {
        let mut c = Cabling {
            switch_peers: s
                .switches
                .iter()
                .map(|sw| vec![None; sw.config.ports.len()])
                .collect(),
            ..Cabling::default()
        };
        for (h, host) in s.run.hosts.iter().enumerate() {
            let PortRef { switch, port } = host.attach;
            let propagation = s.switches[switch].config.ports[port].propagation();
            let link = c.links as u32;
            c.switch_peers[switch][port] = Some(Peer {
                node: NodeId::Host(h as u32),
                port: 0,
                propagation,
                link,
            });
            c.host_peers.push(Peer {
                node: NodeId::Switch(switch as u32),
                port: port as u16,
                propagation,
                link,
            });
            c.links += 1;
        }
        for l in &s.run.links {
            let link = c.links as u32;
            for (from, to) in [(l.a, l.b), (l.b, l.a)] {
                c.switch_peers[from.switch][from.port] = Some(Peer {
                    node: NodeId::Switch(to.switch as u32),
                    port: to.port as u16,
                    propagation: l.propagation,
                    link,
                });
            }
            c.links += 1;
        }
        c
    }

    /// The link at `target` and both of its ends.
    pub fn link_ends(&self, target: Target) -> (Option<u32>, Vec<(NodeId, u16)>) {
        match target {
            Target::Switch(p) => {
                let mut ends = vec![(NodeId::Switch(p.switch as u32), p.port as u16)];
                let peer = self.switch_peers[p.switch][p.port];
                if let Some(peer) = peer {
                    ends.push((peer.node, peer.port));
                }
                (peer.map(|p| p.link), ends)
            }
            Target::Host(h) => {
                let peer = self.host_peers[h];
                (
                    Some(peer.link),
                    vec![(NodeId::Host(h as u32), 0), (peer.node, peer.port)],
                )
            }
        }
    }
}

/// Per switch, the static FDB entries (vid, MAC, port) toward every host, in every VLAN its
/// flows use, over the port on a shortest path to it.
pub fn host_fdb_entries(s: &Scenario) -> Vec<Vec<(u16, [u8; 6], u16)>> {
    let n = s.switches.len();
    // Adjacency: (neighbour switch, local port).
    let mut adj: Vec<Vec<(usize, u16)>> = vec![Vec::new(); n];
    for l in &s.run.links {
        adj[l.a.switch].push((l.b.switch, l.a.port as u16));
        adj[l.b.switch].push((l.a.switch, l.b.port as u16));
    }
    let mut out = vec![Vec::new(); n];
    for (h, host) in s.run.hosts.iter().enumerate() {
        let mut vids: Vec<u16> = vec![0];
        for f in s.run.flows.iter().filter(|f| f.dst == h || f.src == h) {
            if let Some((vid, _)) = f.spec.headers.vlan {
                if !vids.contains(&vid) {
                    vids.push(vid);
                }
            }
        }
        // BFS from the host's switch: the port each switch uses toward it.
        let mut toward: Vec<Option<u16>> = vec![None; n];
        let root = host.attach.switch;
        toward[root] = Some(host.attach.port as u16);
        let mut q = VecDeque::from([root]);
        let mut seen = vec![false; n];
        seen[root] = true;
        while let Some(u) = q.pop_front() {
            for &(v, _) in &adj[u] {
                if !seen[v] {
                    seen[v] = true;
                    // v reaches u through v's port on the (first) link between them.
                    toward[v] = adj[v].iter().find(|(w, _)| *w == u).map(|(_, p)| *p);
                    q.push_back(v);
                }
            }
        }
        for (si, port) in toward.iter().enumerate() {
            if let Some(port) = port {
                out[si].extend(vids.iter().map(|vid| (*vid, host.mac, *port)));
            }
        }
    }
    out
}

/// Per switch, the host routes (/32 to the port and MAC) of the hosts cabled to it; L3
/// switches only, and never over a route the file gives for the same prefix.
pub fn host_routes(s: &Scenario) -> Vec<Vec<Route>> {
    let mut out = vec![Vec::new(); s.switches.len()];
    for h in &s.run.hosts {
        let PortRef { switch, port } = h.attach;
        let Forwarding::L3 { routes, .. } = &s.switches[switch].config.forwarding else {
            continue;
        };
        let prefix = v4_key(h.ip);
        if routes.iter().any(|r| r.len == 128 && r.prefix == prefix) {
            continue;
        }
        out[switch].push(Route {
            prefix,
            len: 128,
            target: RouteTarget::NextHop(NextHop {
                port: port as u16,
                mac: h.mac,
            }),
        });
    }
    out
}
