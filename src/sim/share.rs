//! One share of the fabric: the switches and hosts one thread runs between two barriers,
//! with what is pending for them (frames on their way in, their wake-ups), the frames on
//! the wire toward them, the wire's losses on the links they send on, and the engine's
//! counts of their events.
//!
//! A share knows its nodes by local number (the global order kept: switches, then hosts,
//! each in scenario order), so its queue hands out its events in the canonical order of
//! an instant restricted to its nodes. A node only ever meets another through a frame,
//! which takes at least a wire time to cross a link, so what a node does depends only on
//! its own events in that order: a share runs alone up to the edge of a window no frame
//! from another share can cross ([`super::threads`]), and a frame for another share waits
//! in its outbox until the barrier.

use super::cabling::NodeId;
use super::loss::Loss;
use super::{EngineStats, HostNode, SimError, SwitchNode};
use lossless_buffer_model::Time;
use lossless_engine::{EventQueue, Key, Next, OnWire};
use lossless_pipeline::Packet;

/// A frame whose last bit reaches port `port` of the share's node `node` (local number)
/// over `link`.
pub(super) struct Arrival {
    pub node: u32,
    pub port: u16,
    pub link: u32,
    /// The frame is a PFC frame (looked at once, when it was sent, for the count of PFC
    /// frames on the wire).
    pub pfc: bool,
    /// Where the frame waits in [`OnWire`] (the event stays small: it moves through the
    /// queue's store twice, the frame once in and once out).
    pub frame: u32,
}

// Every pending arrival sits in the queue's store and is moved in and out of it: keep it
// small (a frame on the wire waits in `OnWire`, not in its arrival event).
const _: () = assert!(std::mem::size_of::<Arrival>() <= 20);

/// A frame sent to another share's node, handed over at the next barrier.
pub(super) struct Handoff {
    /// When its last bit lands.
    pub at: Time,
    /// The receiving node's local number in its share, its port, the link.
    pub node: u32,
    pub port: u16,
    pub link: u32,
    pub pfc: bool,
    pub pkt: Packet,
}

/// Where each node runs: its share and its local number there, by node number
/// (switches, then hosts).
#[derive(Clone, Debug, Default)]
pub(super) struct Placement {
    pub of: Vec<(u32, u32)>,
}

/// What every share reads and none changes during a window.
#[derive(Clone, Copy)]
pub(super) struct Fabric<'a> {
    pub placement: &'a Placement,
    pub links_up: &'a [bool],
    /// Switches in the network (numbered before the hosts).
    pub switches: usize,
    /// The run's end (no wake-up is scheduled past it).
    pub end: Time,
}

/// The nodes of one share, by local number: its switches first, then its hosts.
pub(super) trait Slots {
    /// How many of them are switches.
    fn switch_count(&self) -> usize;
    /// Its `i`-th switch.
    fn switch(&mut self, i: usize) -> &mut SwitchNode;
    /// Its `i`-th host.
    fn host(&mut self, i: usize) -> &mut HostNode;
}

/// Every node of the network (one share).
pub(super) struct All<'a> {
    pub switches: &'a mut [SwitchNode],
    pub hosts: &'a mut [HostNode],
}

impl Slots for All<'_> {
    #[inline]
    fn switch_count(&self) -> usize {
        self.switches.len()
    }
    #[inline]
    fn switch(&mut self, i: usize) -> &mut SwitchNode {
        &mut self.switches[i]
    }
    #[inline]
    fn host(&mut self, i: usize) -> &mut HostNode {
        &mut self.hosts[i]
    }
}

/// Some of the network's nodes (one of several shares).
#[derive(Default)]
pub(super) struct Subset<'a> {
    pub switches: Vec<&'a mut SwitchNode>,
    pub hosts: Vec<&'a mut HostNode>,
}

impl Slots for Subset<'_> {
    #[inline]
    fn switch_count(&self) -> usize {
        self.switches.len()
    }
    #[inline]
    fn switch(&mut self, i: usize) -> &mut SwitchNode {
        self.switches[i]
    }
    #[inline]
    fn host(&mut self, i: usize) -> &mut HostNode {
        self.hosts[i]
    }
}

/// Why [`Share::run_until`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reached {
    /// Nothing is left before the limit.
    Limit,
    /// Another 65,536 events were handled: time to say where the run stands.
    Tick,
}

/// One share of the fabric and what is pending for it.
pub(super) struct Share {
    /// Its number among the shares.
    pub index: u32,
    /// Global id of each local node.
    pub nodes: Vec<NodeId>,
    /// Arrivals and wake-ups, keyed by local numbers.
    pub queue: EventQueue<Arrival>,
    /// Frames on the wire toward its nodes.
    pub on_wire: OnWire,
    /// The wire's losses on links its nodes send on.
    pub loss: Loss,
    /// Its counts (`pfc_in_flight` wraps: a PFC frame is counted out by its sender's
    /// share and in by its receiver's; the sum over shares is what is on the wire).
    pub stats: EngineStats,
    /// Frames for other shares, by share, in the order sent.
    pub outbox: Vec<Vec<Handoff>>,
    /// The first capture write that failed.
    pub failed: Option<SimError>,
    /// The instant of the last event it handled.
    pub last: Time,
}

impl Share {
    /// Share `index` of `shares`, running `nodes` (in global order).
    pub fn new(index: u32, shares: usize, nodes: Vec<NodeId>, loss: Loss) -> Share {
        Share {
            index,
            nodes,
            queue: EventQueue::new(),
            on_wire: OnWire::default(),
            loss,
            stats: EngineStats::default(),
            outbox: (0..shares).map(|_| Vec::new()).collect(),
            failed: None,
            last: Time::ZERO,
        }
    }

    /// A frame from another share joins this one's pending arrivals. It lands after
    /// everything the share has handled (the window it was sent in ended before it lands:
    /// [`super::threads`]); one that did not would be a frame from the past, and the run
    /// stops rather than go on with a wrong order.
    pub fn deliver(&mut self, h: Handoff) {
        assert!(
            h.at > self.last,
            "a frame handed to share {} lands at {} ps, before the {} ps it has reached",
            self.index,
            h.at.as_ps(),
            self.last.as_ps()
        );
        let frame = self.on_wire.put(h.pkt);
        let ev = Arrival {
            node: h.node,
            port: h.port,
            link: h.link,
            pfc: h.pfc,
            frame,
        };
        self.queue
            .push(h.at, Key::arrival(h.node as usize, h.port), ev);
    }

    /// Handle every event due before `limit`, in order (or stop after a multiple of
    /// 65,536 events when `ticks`).
    pub fn run_until(
        &mut self,
        limit: Time,
        nodes: &mut impl Slots,
        fabric: Fabric<'_>,
        ticks: bool,
    ) -> Reached {
        while let Some((t, next)) = self.queue.pop_before(limit) {
            self.last = t;
            match next {
                Next::Event(a) => self.arrive(nodes, fabric, t, a),
                Next::Wake(i) => self.wake(nodes, fabric, t, i),
            }
            self.stats.events += 1;
            if ticks && self.stats.events & 0xFFFF == 0 {
                return Reached::Tick;
            }
        }
        Reached::Limit
    }
}
