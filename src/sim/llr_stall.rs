//! The LLR stall indicator: a link whose receiver sent a NACK and waits for the frame it
//! asked for, while the sender at the other end can replay only when a NACK reaches it (its
//! port has neither a replay timer nor a data age timeout). The receiver sends nothing
//! while it waits (no ACK, no second NACK) and discards every later frame; so once the
//! NACK has had time to arrive and the replay time to come back, and the expected frame has
//! not, it never will: the NACK, or the frame replayed, was lost. The sender's buffer fills,
//! its queues back up, and PFC holds the traffic behind it for good.
//!
//! The engine runs [`LlrStallWatch::check`] every [`LlrStallWatch::period`], only in a run
//! where some port can stall so (an LLR port without a replay timer or data age timeout).

use super::cabling::{Cabling, NodeId, Peer};
use super::{HostNode, SwitchNode};
use lossless_buffer_model::Time;
use lossless_pipeline::link::LinkLayer;

/// One end of a link: a node and its port (0 for a host's NIC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct End {
    /// The node.
    pub node: NodeId,
    /// Its port.
    pub port: u16,
}

/// A stall the indicator found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LlrStall {
    /// The port that holds the frames and waits for a NACK.
    pub sender: End,
    /// The port that sent the NACK and waits for the replay.
    pub receiver: End,
    /// When the receiver's NACK went out (or the sender last moved, if later).
    pub since: Time,
    /// When the indicator saw it: `since` plus the longest a NACK and the replay it brings
    /// can take.
    pub detected: Time,
}

/// The indicator's state over a run.
#[derive(Clone, Debug)]
pub struct LlrStallWatch {
    period: Time,
    found: Vec<LlrStall>,
}

/// The link layer at `end`.
fn link<'a>(switches: &'a [SwitchNode], hosts: &'a [HostNode], end: End) -> &'a LinkLayer {
    match end.node {
        NodeId::Switch(s) => &switches[s as usize].sw.ports()[end.port as usize].link,
        NodeId::Host(h) => &hosts[h as usize].host.link,
    }
}

/// Every link direction, as (receiver end, its peer: the sender), each once per direction.
fn directions(cabling: &Cabling) -> impl Iterator<Item = (End, Peer)> + '_ {
    let switch_ends = cabling
        .switch_peers
        .iter()
        .enumerate()
        .flat_map(|(s, ports)| {
            ports.iter().enumerate().filter_map(move |(p, peer)| {
                peer.map(|peer| {
                    let end = End {
                        node: NodeId::Switch(s as u32),
                        port: p as u16,
                    };
                    (end, peer)
                })
            })
        });
    let host_ends = cabling.host_peers.iter().enumerate().map(|(h, peer)| {
        let end = End {
            node: NodeId::Host(h as u32),
            port: 0,
        };
        (end, *peer)
    });
    switch_ends.chain(host_ends)
}

/// The longest a NACK and the replay it brings can take over a link of `propagation` one
/// way whose sender's frames take up to `frame` on the wire: the NACK crosses (after the
/// frame the receiver is sending), the sender finishes the frame it is sending, and the
/// replayed frame crosses back.
fn answer_time(propagation: Time, frame: Time) -> Time {
    Time::from_ps(2 * (propagation.as_ps() + frame.as_ps()))
}

/// A frame longer than any port's MTU takes (its wire time bounds any frame's).
const LONGEST_FRAME: u64 = 16 * 1024;

impl LlrStallWatch {
    /// The indicator for the network `cabling` wires, if some link direction can stall
    /// (an LLR sender that never replays on its own facing an LLR receiver).
    pub fn new(
        cabling: &Cabling,
        switches: &[SwitchNode],
        hosts: &[HostNode],
    ) -> Option<LlrStallWatch> {
        let mut shortest: Option<Time> = None;
        for (rx, peer) in directions(cabling) {
            let tx = End {
                node: peer.node,
                port: peer.port,
            };
            let (r, s) = (link(switches, hosts, rx), link(switches, hosts, tx));
            if let (Some(_), Some(l)) = (r.llr(), s.llr()) {
                if !l.recovers_on_its_own() {
                    let t = answer_time(peer.propagation, s.speed().wire_time(LONGEST_FRAME));
                    shortest = Some(shortest.map_or(t, |s| s.min(t)));
                }
            }
        }
        shortest.map(|t| LlrStallWatch {
            period: Time::from_ps((t.as_ps() / 2).max(1)),
            found: Vec::new(),
        })
    }

    /// How often to look.
    pub fn period(&self) -> Time {
        self.period
    }

    /// Every stall found, in the order found.
    pub fn found(&self) -> &[LlrStall] {
        &self.found
    }

    /// Look at `now`; true if a stall was found that was not known before.
    pub fn check(
        &mut self,
        now: Time,
        cabling: &Cabling,
        switches: &[SwitchNode],
        hosts: &[HostNode],
    ) -> bool {
        let mut new = false;
        for (rx, peer) in directions(cabling) {
            let tx = End {
                node: peer.node,
                port: peer.port,
            };
            let (r, s) = (link(switches, hosts, rx), link(switches, hosts, tx));
            let (Some(waits), Some(holds)) = (r.llr(), s.llr()) else {
                continue;
            };
            if holds.recovers_on_its_own() || !s.tx.link_up || !s.tx.tx_enabled {
                continue;
            }
            let (Some(nack), Some(moved)) = (waits.waiting_since(), holds.holding_since()) else {
                continue;
            };
            let since = nack.max(moved);
            let frame = s.speed().wire_time(LONGEST_FRAME);
            let detected = since + answer_time(peer.propagation, frame);
            if now < detected {
                continue;
            }
            let known = self
                .found
                .iter()
                .any(|x| x.receiver == rx && x.sender == tx && x.since == since);
            if !known {
                self.found.push(LlrStall {
                    sender: tx,
                    receiver: rx,
                    since,
                    detected: now,
                });
                new = true;
            }
        }
        new
    }
}
