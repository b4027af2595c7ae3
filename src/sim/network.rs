//! Frames between nodes, within one share of the fabric: a node woken at its deadline
//! starts what is due, each frame goes onto its link (its wire time at the sender's port
//! speed, then the propagation) and arrives as an event at the far end (in this share, or
//! handed to the far end's share at the next barrier); every node is driven through the
//! one [`Node`] interface and woken again at its next deadline.

use super::cabling::{NodeId, Peer};
use super::loss::WireFate;
use super::share::{Arrival, Fabric, Handoff, Share, Slots};
use lossless_buffer_model::{Time, WireTimes};
use lossless_engine::Key;
use lossless_pipeline::link::control::ORDERED_SET_BYTES;
use lossless_pipeline::link::FrameClass;
use lossless_pipeline::{Node, Packet};

/// Same-time wakes of one node after which the engine assumes a stuck deadline and moves on
/// by a picosecond (counted as a stall; never expected).
const MAX_SAME_TIME_WAKES: u32 = 10_000;

/// The line time of a control ordered set (8 bytes) at `wire`'s speed: the shortest time
/// anything occupies a link (a frame adds its preamble and gap to at least that), so how
/// far ahead of a sending the far end can be sure nothing arrives, beside the cable.
pub(super) fn ordered_set_time(wire: &WireTimes) -> Time {
    wire.speed().time_for_bytes_ceil(ORDERED_SET_BYTES)
}

impl Share {
    /// Local node `i` and its count of wakes at one instant.
    fn node(nodes: &mut impl Slots, i: usize) -> (&mut dyn Node, &mut (Time, u32)) {
        let switches = nodes.switch_count();
        if i < switches {
            let n = nodes.switch(i);
            (&mut n.sw, &mut n.same_time_wakes)
        } else {
            let n = nodes.host(i - switches);
            (&mut n.host, &mut n.same_time_wakes)
        }
    }

    /// The last bit of the frame of `a` reaches its node now.
    pub(super) fn arrive(
        &mut self,
        nodes: &mut impl Slots,
        fabric: Fabric<'_>,
        now: Time,
        a: Arrival,
    ) {
        let pkt = self.on_wire.take(a.frame);
        if a.pfc {
            self.stats.pfc_in_flight = self.stats.pfc_in_flight.wrapping_sub(1);
        }
        if !fabric.links_up[a.link as usize] {
            self.stats.link_down_drops += 1;
            return;
        }
        let i = a.node as usize;
        let port = a.port as usize;
        if i < nodes.switch_count() {
            nodes
                .switch(i)
                .taps
                .frame(port, now, &pkt, &mut self.failed);
        }
        let node = Self::node(nodes, i).0;
        node.receive(port, pkt, now);
        // Most frames change nothing a node's deadline depends on (a switch queues them
        // behind others; a receiver counts them): its wake-up stays as it is.
        if !node.deadline_unchanged() {
            self.schedule(nodes, fabric, now, i);
        }
    }

    /// Local node `i`'s deadline came: it starts what is due, each frame put on its link
    /// as the node hands it out, and it is scheduled again.
    pub(super) fn wake(&mut self, nodes: &mut impl Slots, fabric: Fabric<'_>, now: Time, i: usize) {
        let id = self.nodes[i];
        let switches = nodes.switch_count();
        if i < switches {
            let n = nodes.switch(i);
            let (peers, wires, taps) = (&n.peers, &mut n.wires, &mut n.taps);
            let node: &mut dyn Node = &mut n.sw;
            node.poll_due(now, &mut |port, pkt| {
                taps.frame(port, now, &pkt, &mut self.failed);
                self.transmit(fabric, now, id, port, peers[port], &mut wires[port], pkt);
            });
        } else {
            let n = nodes.host(i - switches);
            let (peer, wire) = (Some(n.peer), &mut n.wire);
            let node: &mut dyn Node = &mut n.host;
            node.poll_due(now, &mut |port, pkt| {
                self.transmit(fabric, now, id, port, peer, wire, pkt);
            });
        }
        self.schedule(nodes, fabric, now, i);
    }

    /// Put a frame that starts leaving `port` of `from` (its wire times `wire`) now onto
    /// its link to `peer`.
    #[allow(clippy::too_many_arguments)]
    fn transmit(
        &mut self,
        fabric: Fabric<'_>,
        now: Time,
        from: NodeId,
        port: usize,
        peer: Option<Peer>,
        wire: &mut WireTimes,
        mut pkt: Packet,
    ) {
        let Some(peer) = peer else {
            self.stats.unconnected_drops += 1;
            return;
        };
        if !fabric.links_up[peer.link as usize] {
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
            ordered_set_time(wire)
        } else {
            wire.of(pkt.len as u64)
        };
        let at = now + line + peer.propagation;
        self.stats.packet_hops += 1;
        let pfc = pkt.meta.class == FrameClass::Pfc;
        if pfc {
            self.stats.pfc_in_flight = self.stats.pfc_in_flight.wrapping_add(1);
        }
        let (share, node) = fabric.placement.of[peer.node.number(fabric.switches)];
        if share == self.index {
            let frame = self.on_wire.put(pkt);
            let ev = Arrival {
                node,
                port: peer.port,
                link: peer.link,
                pfc,
                frame,
            };
            self.queue
                .push(at, Key::arrival(node as usize, peer.port), ev);
        } else {
            self.outbox[share as usize].push(Handoff {
                at,
                node,
                port: peer.port,
                link: peer.link,
                pfc,
                pkt,
            });
        }
    }

    /// Make sure local node `i` is woken at its next deadline (not at all past the run's
    /// end).
    pub(super) fn schedule(
        &mut self,
        nodes: &mut impl Slots,
        fabric: Fabric<'_>,
        now: Time,
        i: usize,
    ) {
        let (node, same) = Self::node(nodes, i);
        self.wake_at(node, same, fabric.end, now, i);
    }

    /// Make sure local node `i` (`node`, its count of wakes at one instant `same`) is woken
    /// at its next deadline, not at all past `end`.
    pub(super) fn wake_at(
        &mut self,
        node: &mut dyn Node,
        same: &mut (Time, u32),
        end: Time,
        now: Time,
        i: usize,
    ) {
        let Some(mut t) = node.poll_timeout().filter(|t| *t <= end) else {
            self.queue.cancel_wake(i);
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
        if self.queue.wake_time(i) != Some(t) {
            self.queue.set_wake(i, t);
        }
    }
}
