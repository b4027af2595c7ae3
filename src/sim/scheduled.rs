//! The scenario's scheduled events acting at their virtual time: a transmitter disabled or
//! enabled, a link down or up (both ends), a frame injected into a switch port as if just
//! received, a host's receive drain changed.

use super::cabling::NodeId;
use super::Sim;
use crate::config::{Action, EventSpec, Target};
use lossless_pipeline::Packet;

impl Sim {
    /// The scenario's `i`-th event happens now.
    pub(super) fn scheduled_event(&mut self, i: usize) {
        let now = self.now;
        let EventSpec { target, action, .. } = self.scenario.run.events[i].clone();
        match (target, action) {
            (Target::Switch(p), Action::Tx(on)) => {
                self.switches[p.switch].sw.set_tx_enabled(p.port, on, now)
            }
            (Target::Host(h), Action::Tx(on)) => self.hosts[h].host.set_tx_enabled(on),
            (target, Action::Link(up)) => {
                let (link, ends) = self.cabling.link_ends(target);
                if let Some(link) = link {
                    self.links_up[link as usize] = up;
                }
                for (node, port) in ends {
                    match node {
                        NodeId::Switch(s) => {
                            self.switches[s as usize]
                                .sw
                                .set_link(port as usize, up, now)
                        }
                        NodeId::Host(h) => self.hosts[h as usize].host.set_link(up, now),
                    }
                    self.schedule(node);
                }
            }
            (Target::Switch(p), Action::Inject(data, len)) => {
                let pkt = Packet::new(data, len);
                self.observers.frame(p.switch, p.port, now, &pkt);
                self.switches[p.switch].sw.receive(p.port, pkt, now);
            }
            (Target::Host(h), Action::Drain(rate)) => self.hosts[h].host.set_drain(rate, now),
            (Target::Host(_), Action::Inject(..)) | (Target::Switch(_), Action::Drain(_)) => {
                unreachable!("rejected by the config")
            }
        }
        self.schedule(match target {
            Target::Switch(p) => NodeId::Switch(p.switch as u32),
            Target::Host(h) => NodeId::Host(h as u32),
        });
    }
}
