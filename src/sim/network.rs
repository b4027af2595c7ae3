//! Frames between nodes: a node woken at its deadline starts what is due, each frame goes
//! onto its link (wire time at the sender's port speed + propagation) and arrives as an
//! event at the far end; every node is driven through the one [`Node`] interface and woken
//! again at its next deadline.

use super::cabling::{NodeId, Peer};
use super::loss::{Loss, WireFate};
use super::observers::Observers;
use super::{EngineStats, Ev, Sim};
use lossless_buffer_model::{Time, WireTimes};
use lossless_engine::{EventQueue, OnWire};
use lossless_pipeline::link::control::ORDERED_SET_BYTES;
use lossless_pipeline::link::FrameClass;
use lossless_pipeline::{Node, Packet};

/// Same-time wakes of one node after which the engine assumes a stuck deadline and moves on
/// by a picosecond (counted as a stall; never expected).
const MAX_SAME_TIME_WAKES: u32 = 10_000;

/// What putting a frame on a link touches: the engine without its nodes, so that a node
/// being woken hands each frame straight to its link.
struct Links<'a> {
    now: Time,
    queue: &'a mut EventQueue<Ev>,
    on_wire: &'a mut OnWire,
    stats: &'a mut EngineStats,
    observers: &'a mut Observers,
    loss: &'a mut Loss,
    links_up: &'a [bool],
    /// Switches in the network (numbered before the hosts in an instant's order).
    switches: usize,
}

impl Links<'_> {
    /// Put a frame that starts leaving `port` of `from` (its wire times `wire`) now onto
    /// its link to `peer`.
    fn transmit(
        &mut self,
        from: NodeId,
        port: usize,
        peer: Option<Peer>,
        wire: &mut WireTimes,
        mut pkt: Packet,
    ) {
        if let NodeId::Switch(s) = from {
            self.observers.frame(s as usize, port, self.now, &pkt);
        }
        let Some(peer) = peer else {
            self.stats.unconnected_drops += 1;
            return;
        };
        if !self.links_up[peer.link as usize] {
            self.stats.link_down_drops += 1;
            return;
        }
        match self.loss.lose(from, port as u16, peer.link, &pkt) {
            WireFate::Intact => {}
            // Lost whole (a `drop` event): the far end never sees it.
            WireFate::Lost => return,
            // A frame error: it arrives, and the far end's FCS check fails.
            WireFate::Corrupted => pkt.hop.corrupt(),
        }
        // A control ordered set takes its 8 bytes of line time; a frame its preamble and gap
        // as well.
        let line = if pkt.meta.class.is_ordered_set() {
            wire.speed().time_for_bytes_ceil(ORDERED_SET_BYTES)
        } else {
            wire.of(pkt.len as u64)
        };
        let at = self.now + line + peer.propagation;
        self.stats.packet_hops += 1;
        let pfc = pkt.meta.class == FrameClass::Pfc;
        if pfc {
            self.stats.pfc_in_flight += 1;
        }
        let frame = self.on_wire.put(pkt);
        let ev = Ev::Arrive {
            node: peer.node,
            port: peer.port,
            link: peer.link,
            pfc,
            frame,
        };
        self.queue.push(at, ev.key(self.switches), ev);
    }
}

impl Sim {
    /// Node `id` and its count of wakes at one instant.
    fn node(&mut self, id: NodeId) -> (&mut dyn Node, &mut (Time, u32)) {
        match id {
            NodeId::Switch(s) => {
                let n = &mut self.switches[s as usize];
                (&mut n.sw, &mut n.same_time_wakes)
            }
            NodeId::Host(h) => {
                let n = &mut self.hosts[h as usize];
                (&mut n.host, &mut n.same_time_wakes)
            }
        }
    }

    /// Index of `id` among the wake-ups: its number, switches first, then hosts.
    fn wake_index(&self, id: NodeId) -> usize {
        id.number(self.switches.len())
    }

    /// The node at wake-up index `i`.
    pub(super) fn node_at(&self, i: usize) -> NodeId {
        match i.checked_sub(self.switches.len()) {
            None => NodeId::Switch(i as u32),
            Some(h) => NodeId::Host(h as u32),
        }
    }

    /// The last bit of the frame in `slot` of the wire (a PFC frame if `pfc`) reaches `port`
    /// of `id` over `link` now.
    pub(super) fn arrive(&mut self, id: NodeId, port: usize, link: u32, pfc: bool, slot: u32) {
        let pkt = self.on_wire.take(slot);
        if pfc {
            self.stats.pfc_in_flight -= 1;
        }
        if !self.links_up[link as usize] {
            self.stats.link_down_drops += 1;
            return;
        }
        let now = self.now;
        if let NodeId::Switch(s) = id {
            self.observers.frame(s as usize, port, now, &pkt);
        }
        let node = self.node(id).0;
        node.receive(port, pkt, now);
        // Most frames change nothing a node's deadline depends on (a switch queues them
        // behind others; a receiver counts them): its wake-up stays as it is.
        if !node.deadline_unchanged() {
            self.schedule(id);
        }
    }

    /// Node `id`'s deadline came: it starts what is due, each frame put on its link as the
    /// node hands it out, and it is scheduled again.
    pub(super) fn wake(&mut self, id: NodeId) {
        let now = self.now;
        let mut links = Links {
            now,
            queue: &mut self.queue,
            on_wire: &mut self.on_wire,
            stats: &mut self.stats,
            observers: &mut self.observers,
            loss: &mut self.loss,
            links_up: &self.links_up,
            switches: self.switches.len(),
        };
        match id {
            NodeId::Switch(s) => {
                let n = &mut self.switches[s as usize];
                let (peers, wires) = (&n.peers, &mut n.wires);
                let node: &mut dyn Node = &mut n.sw;
                node.poll_due(now, &mut |port, pkt| {
                    links.transmit(id, port, peers[port], &mut wires[port], pkt);
                });
            }
            NodeId::Host(h) => {
                let n = &mut self.hosts[h as usize];
                let (peer, wire) = (Some(n.peer), &mut n.wire);
                let node: &mut dyn Node = &mut n.host;
                node.poll_due(now, &mut |port, pkt| {
                    links.transmit(id, port, peer, wire, pkt);
                });
            }
        }
        self.schedule(id);
    }

    /// Make sure node `id` is woken at its next deadline (not at all past the run's end).
    pub(super) fn schedule(&mut self, id: NodeId) {
        let (now, end) = (self.now, self.end);
        let idx = self.wake_index(id);
        let (node, same) = self.node(id);
        let Some(mut t) = node.poll_timeout().filter(|t| *t <= end) else {
            self.queue.cancel_wake(idx);
            return;
        };
        if t <= now {
            // A node that asks to be woken at the instant it is at, over and over, never
            // lets time advance: after MAX_SAME_TIME_WAKES at one instant, it waits 1 ps.
            // (At a new instant the count starts again: a NIC with a frame ready at every
            // arrival is not stuck.)
            t = now;
            *same = if same.0 == now {
                (now, same.1 + 1)
            } else {
                (now, 1)
            };
            if same.1 > MAX_SAME_TIME_WAKES {
                t = now + Time(1);
                *same = (now, 0);
                self.stats.stalls += 1;
            }
        } else {
            *same = (now, 0);
        }
        if self.queue.wake_time(idx) != Some(t) {
            self.queue.set_wake(idx, t);
        }
    }
}
