//! Loss you cause. A link may have a frame error rate (each frame, each direction, an
//! independent draw from that direction's own seeded stream, so what one link loses does
//! not depend on how many frames others carried, or in what order): such a frame arrives
//! corrupted, its receiver's FCS check fails (`rx_bad_fcs`, drop reason `bad_fcs`), and
//! link-level retry, where the link speaks it, asks for it again. An event may lose chosen
//! frames a port sends whole (the receiver sees a gap) or corrupt them (they arrive with a
//! bad FCS): the next N data frames, the Nth NACK, a CF_Update… Both are counted per link
//! and direction as injected, apart from every buffer drop.

use super::cabling::NodeId;
use crate::config::words::FaultKind;
use crate::config::{ErrorRate, Fault, FaultFate, Scenario};
use lossless_pipeline::groups::{spread, GOLDEN_GAMMA};
use lossless_pipeline::link::FrameClass;
use lossless_pipeline::wire::link_control;
use lossless_pipeline::Packet;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Mixed into the run's seed so the wire's draws are not the switches'.
const WIRE_SEED: u64 = 0x5EED_0FF1_BE00_u64;

/// The seed of one direction of one link (`stream`: link × 2 + direction): the run's
/// seed and the stream's number mixed (SplitMix64's finalizer), so that streams of
/// neighbouring links are unrelated.
fn stream_seed(seed: u64, stream: u64) -> u64 {
    spread((seed ^ WIRE_SEED).wrapping_add(stream.wrapping_mul(GOLDEN_GAMMA)))
}

/// What the wire does to one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireFate {
    /// Delivered as sent.
    Intact,
    /// Lost whole (a `drop` event).
    Lost,
    /// Delivered with a bad FCS (a frame error).
    Corrupted,
}

/// The wire's losses for one run.
#[derive(Clone, Debug)]
pub struct Loss {
    /// Per link: its frame error rate and the end that is `a` in the report.
    links: Vec<(ErrorRate, (NodeId, u16))>,
    /// Per link, each direction's random stream (a→b, b→a).
    rngs: Vec<[Xoshiro256PlusPlus; 2]>,
    /// Faults still to happen, per sending (node, port), in the order the events came.
    pending: Vec<((NodeId, u16), Fault)>,
    /// Frames lost per link: a→b, b→a.
    pub injected: Vec<[u64; 2]>,
    /// Some link has a frame error rate (else only `drop` events lose frames).
    any_rate: bool,
}

impl Loss {
    /// The links of `s` (hosts' first, then switch-to-switch, as cabled) with their rates.
    pub fn of(s: &Scenario, seed: u64) -> Loss {
        let hosts = s
            .run
            .hosts
            .iter()
            .enumerate()
            .map(|(h, host)| (host.frame_error_rate, (NodeId::Host(h as u32), 0)));
        let links = s.run.links.iter().map(|l| {
            (
                l.frame_error_rate,
                (NodeId::Switch(l.a.switch as u32), l.a.port as u16),
            )
        });
        let links: Vec<_> = hosts.chain(links).collect();
        let stream = |link: usize, dir: u64| {
            Xoshiro256PlusPlus::seed_from_u64(stream_seed(seed, link as u64 * 2 + dir))
        };
        Loss {
            any_rate: links.iter().any(|(rate, _)| *rate != ErrorRate::NONE),
            injected: vec![[0; 2]; links.len()],
            rngs: (0..links.len())
                .map(|l| [stream(l, 0), stream(l, 1)])
                .collect(),
            links,
            pending: Vec::new(),
        }
    }

    /// An event asked for `fault` on the frames `(node, port)` sends from now on.
    pub fn add_fault(&mut self, node: NodeId, port: u16, fault: Fault) {
        self.pending.push(((node, port), fault));
    }

    /// What becomes of `pkt`, leaving `port` of `from` over `link`: counted if it is lost
    /// or corrupted.
    #[inline]
    pub fn lose(&mut self, from: NodeId, port: u16, link: u32, pkt: &Packet) -> WireFate {
        if self.any_rate || !self.pending.is_empty() {
            self.draw(from, port, link, pkt)
        } else {
            WireFate::Intact
        }
    }

    /// [`Loss::lose`] on a network with error rates or pending `drop` events.
    fn draw(&mut self, from: NodeId, port: u16, link: u32, pkt: &Packet) -> WireFate {
        let (rate, a_end) = self.links[link as usize];
        let mut fate = WireFate::Intact;
        if !self.pending.is_empty() {
            fate = self.fault_of(from, port, pkt);
        }
        let dir = usize::from((from, port) != a_end);
        // A draw only on links that have a rate, so that a clean network draws nothing.
        if fate == WireFate::Intact
            && rate != ErrorRate::NONE
            && rate.loses(self.rngs[link as usize][dir].next_u64())
        {
            fate = WireFate::Corrupted;
        }
        if fate != WireFate::Intact {
            self.injected[link as usize][dir] += 1;
        }
        fate
    }

    /// What the first pending fault of `(from, port)` whose kind `pkt` is does to it:
    /// frames of its kind before its nth pass; from the nth, `count` are hit.
    fn fault_of(&mut self, from: NodeId, port: u16, pkt: &Packet) -> WireFate {
        let kind = kind_of(pkt);
        let Some(i) = self
            .pending
            .iter()
            .position(|(at, f)| *at == (from, port) && hits(f.kind, kind))
        else {
            return WireFate::Intact;
        };
        let f = &mut self.pending[i].1;
        if f.nth > 1 {
            f.nth -= 1;
            return WireFate::Intact;
        }
        let fate = match f.fate {
            FaultFate::Lost => WireFate::Lost,
            FaultFate::Corrupted => WireFate::Corrupted,
        };
        f.count -= 1;
        if f.count == 0 {
            self.pending.remove(i);
        }
        fate
    }
}

/// The kind of frame `pkt` is, as faults name them.
fn kind_of(pkt: &Packet) -> FaultKind {
    match pkt.meta.class {
        FrameClass::Data => FaultKind::Data,
        FrameClass::Pfc => FaultKind::Pfc,
        FrameClass::Pause => FaultKind::Pause,
        FrameClass::CreditUpdate => FaultKind::CfUpdate,
        FrameClass::CreditResync => FaultKind::CcUpdate,
        FrameClass::Retry => match pkt.data.get(link_control::field::TYPE) {
            Some(&link_control::TYPE_LLR_INIT) => FaultKind::LlrInit,
            Some(&link_control::TYPE_LLR_INIT_ECHO) => FaultKind::LlrInitEcho,
            Some(&link_control::TYPE_LLR_NACK) => FaultKind::LlrNack,
            _ => FaultKind::LlrAck,
        },
    }
}

/// Does a fault on frames of `want` hit a frame of kind `kind`?
fn hits(want: FaultKind, kind: FaultKind) -> bool {
    want == FaultKind::Any || want == kind
}
