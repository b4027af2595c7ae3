//! Loss you cause. A link may have a frame error rate (each frame, each direction, an
//! independent draw from that direction's own seeded stream, so what one link loses does
//! not depend on how many frames others carried, or in what order): such a frame arrives
//! corrupted, its receiver's FCS check fails (`rx_bad_fcs`, drop reason `bad_fcs`), and
//! link-level retry, where the link speaks it, asks for it again. An event may lose the
//! next N data frames a port sends whole (the receiver sees a gap). Both are counted per
//! link and direction as injected, apart from every buffer drop.

use super::cabling::NodeId;
use crate::config::{ErrorRate, Scenario};
use lossless_pipeline::groups::{spread, GOLDEN_GAMMA};
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
    /// Data frames still to lose, per sending (node, port).
    pending: Vec<((NodeId, u16), u64)>,
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

    /// An event asked to lose the next `n` data frames from `(node, port)`.
    pub fn drop_next(&mut self, node: NodeId, port: u16, n: u64) {
        match self.pending.iter_mut().find(|(at, _)| *at == (node, port)) {
            Some((_, left)) => *left += n,
            None => self.pending.push(((node, port), n)),
        }
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
        if !self.pending.is_empty() && !pkt.meta.class.is_control() {
            if let Some((_, left)) = self.pending.iter_mut().find(|(at, _)| *at == (from, port)) {
                *left -= 1;
                fate = WireFate::Lost;
            }
            self.pending.retain(|(_, left)| *left > 0);
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
}
