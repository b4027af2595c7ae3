//! Next hops given without `mac:` take the MAC of what is cabled to their port — a host's
//! MAC, or the MAC of the switch port at the far end of a link — as a neighbour table would
//! have it after ARP/ND.

use crate::config::diag::Diag;
use crate::config::scenario::{HopAt, PendingMac, PortRef, RunSpec, SwitchSpec};
use lossless_pipeline::config::{Forwarding, RouteTarget};

/// The MAC of whatever `run` cables to port `p`, if anything.
fn neighbour(switches: &[SwitchSpec], run: &RunSpec, p: PortRef) -> Option<[u8; 6]> {
    if let Some(h) = run.hosts.iter().find(|h| h.attach == p) {
        return Some(h.mac);
    }
    run.links.iter().find_map(|l| {
        let far = if l.a == p {
            l.b
        } else if l.b == p {
            l.a
        } else {
            return None;
        };
        Some(switches[far.switch].config.ports[far.port].mac)
    })
}

/// Fill in the MACs left to the cabling. In a file that cables anything (hosts or links),
/// a next hop whose port is cabled to nothing is an error; a file that cables nothing (a
/// `lossless tap` switch) keeps them pending, and `lossless run`/`tap` reject it then.
pub fn fill(switches: &mut [SwitchSpec], run: &RunSpec) -> Result<(), Diag> {
    let cables_anything = !run.hosts.is_empty() || !run.links.is_empty();
    for si in 0..switches.len() {
        let pending = std::mem::take(&mut switches[si].pending_macs);
        let mut left = Vec::new();
        for p in pending {
            let at = PortRef {
                switch: si,
                port: p.port,
            };
            match neighbour(switches, run, at) {
                Some(mac) => set(&mut switches[si].config.forwarding, p.hop, mac),
                None if cables_anything => return Err(p.error),
                None => left.push(p),
            }
        }
        switches[si].pending_macs = left;
    }
    Ok(())
}

fn set(f: &mut Forwarding, hop: HopAt, mac: [u8; 6]) {
    let Forwarding::L3 { routes, groups } = f else {
        unreachable!("only L3 next hops are pending")
    };
    match hop {
        HopAt::Route(i) => {
            if let RouteTarget::NextHop(nh) = &mut routes[i].target {
                nh.mac = mac;
            }
        }
        HopAt::Member { group, member } => groups[group].members[member].mac = mac,
    }
}

/// The first next hop still without a MAC, as the error to give.
pub fn first_pending(switches: &[SwitchSpec]) -> Option<&Diag> {
    switches
        .iter()
        .flat_map(|s| s.pending_macs.iter())
        .map(|p: &PendingMac| &p.error)
        .next()
}
