//! The scenario's scheduled events acting at their virtual time: a transmitter disabled or
//! enabled, a link down or up (both ends), a frame injected into a switch port as if just
//! received, a host's receive drain changed, the next N data frames of a port lost.

use super::cabling::NodeId;
use super::Sim;
use crate::config::{Action, Target};
use lossless_pipeline::Packet;

impl Sim {
    /// The scenario's `i`-th event happens now.
    pub(super) fn scheduled_event(&mut self, i: usize) {
        let now = self.now;
        let action = self.scenario.run.events[i].action.clone();
        let target = action.target();
        match action {
            Action::Tx(Target::Switch(p), on) => {
                self.switches[p.switch].sw.set_tx_enabled(p.port, on, now)
            }
            Action::Tx(Target::Host(h), on) => self.hosts[h].host.set_tx_enabled(on),
            Action::QueueTx(p, q, on) => self.switches[p.switch]
                .sw
                .set_queue_tx_enabled(p.port, q as usize, on, now),
            Action::Link(target, up) => {
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
            Action::Inject(p, data, len) => {
                let pkt = Packet::new(data, len);
                self.switches[p.switch]
                    .taps
                    .frame(p.port, now, &pkt, &mut self.failed);
                self.switches[p.switch].sw.receive(p.port, pkt, now);
            }
            Action::Drain(h, rate) => self.hosts[h].host.set_drain(rate, now),
            Action::Fault(t, fault) => {
                let (node, port) = match t {
                    Target::Switch(p) => (NodeId::Switch(p.switch as u32), p.port as u16),
                    Target::Host(h) => (NodeId::Host(h as u32), 0),
                };
                let share = self.placed(node).0;
                self.shares[share].loss.add_fault(node, port, fault)
            }
        }
        self.schedule(match target {
            Target::Switch(p) => NodeId::Switch(p.switch as u32),
            Target::Host(h) => NodeId::Host(h as u32),
        });
    }
}
