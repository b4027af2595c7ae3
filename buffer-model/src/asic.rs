//! The memory manager's ASIC-specific choices: where a lossless PG stores the packet that
//! crosses its limit, which limit its XON is measured from, and whether the buffer is
//! accounted in slices. Switch chips differ here
//! (docs/physics.md, "Where the crossing packet goes"); `generic` is the default of each.

use crate::mmu::{Mmu, Pool, PRIORITIES};
use crate::units::Bytes;

/// Where a lossless PG stores the packet that crosses its shared limit (the one that
/// turns XOFF on): an ASIC property (docs/physics.md, "Where the crossing packet goes").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Crossing {
    /// In headroom, as every later packet (Tomahawk 2; `generic`).
    #[default]
    Headroom,
    /// In shared space, over the limit by that packet, if the pool has the room; later
    /// packets go to headroom (Tomahawk 1, as SONiC's QoS test counts show).
    Shared,
}

impl crate::named::Named for Crossing {
    const WORDS: &'static [(&'static str, Crossing)] = &[
        ("headroom", Crossing::Headroom),
        ("shared", Crossing::Shared),
    ];
}

/// Which limit a lossless PG's XON level `max(xon, limit − xon_offset)` is taken from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum XonLimit {
    /// The dynamic limit as it is now (it rises as the pool drains; `generic`).
    #[default]
    Live,
    /// The limit when XOFF was decided, fixed until XON (SONiC's nominal XON counts).
    Latched,
}

impl crate::named::Named for XonLimit {
    const WORDS: &'static [(&'static str, XonLimit)] =
        &[("live", XonLimit::Live), ("latched", XonLimit::Latched)];
}

/// The MMU's ASIC-specific choices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Behaviour {
    /// Where the crossing packet goes.
    pub crossing: Crossing,
    /// The limit XON is measured from.
    pub xon_limit: XonLimit,
}

/// Buffer slices: a Tomahawk accounts its buffer per slice (XPE on Tomahawk 1, four of
/// them; ITM on later chips). Pool sizes are the chip's; each slice holds an equal share of
/// every pool, and a port's PGs and queues draw on its slice's share.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slices {
    /// Slices (1: the whole buffer is one).
    pub count: usize,
    /// The slice of each port (empty: ports in order, split evenly).
    pub of_port: Vec<usize>,
}

impl Default for Slices {
    fn default() -> Slices {
        Slices {
            count: 1,
            of_port: Vec::new(),
        }
    }
}

impl Slices {
    /// The slice of port `port` of `ports`.
    pub fn slice_of(&self, port: usize, ports: usize) -> usize {
        match self.of_port.get(port) {
            Some(s) => *s,
            None if self.count <= 1 || ports == 0 => 0,
            None => port * self.count / ports,
        }
    }
}

impl Mmu {
    /// This MMU with its buffer in `s.count` slices: every pool becomes one share per
    /// slice (sizes divided by the count), and each port's PGs and queues draw on their
    /// slice's share. Call before any packet is admitted.
    pub fn with_slices(mut self, s: &Slices) -> Mmu {
        if s.count <= 1 {
            return self;
        }
        let n = s.count;
        let cell = self.cell;
        let pools = std::mem::take(&mut self.pools);
        for p in &pools {
            for k in 0..n {
                let mut spec = p.spec.clone();
                spec.size = Bytes(spec.size.get() / n as u64);
                spec.xoff = Bytes(spec.xoff.get() / n as u64);
                self.pools.push(Pool {
                    size_cells: spec.size.get() / cell,
                    headroom_cells: spec.xoff.get() / cell,
                    spec,
                    slice: Some(k),
                    shared_used: 0,
                    headroom_used: 0,
                    watermark: 0,
                    headroom_watermark: 0,
                });
            }
        }
        let ports = self.pgs.len() / PRIORITIES;
        for (i, pg) in self.pgs.iter_mut().enumerate() {
            pg.pool = pg.pool * n + s.slice_of(i / PRIORITIES, ports);
        }
        for (j, q) in self.queues.iter_mut().enumerate() {
            q.pool = q.pool * n + s.slice_of(j / PRIORITIES, ports);
        }
        self
    }

    /// This MMU with the ASIC choices `b`.
    pub fn with_behaviour(mut self, b: Behaviour) -> Mmu {
        self.behaviour = b;
        self
    }
}
