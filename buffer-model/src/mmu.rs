//! The memory manager (MMU): shared-buffer accounting in cells per ingress (port, PG) and
//! egress (port, queue), with reserved space, dynamic or static thresholds and PFC headroom.
//!
//! Admission (docs/architecture.md, "Traffic manager"): a packet first uses its PG's reservation, then the pool's shared
//! space while the PG's shared use `x` after admission satisfies `x ≤ α·(S − X)` (`X` the
//! pool's shared use after admission) or `x ≤ static_th`. On a lossless PG the packet that
//! would cross the limit turns XOFF on and is stored where the ASIC stores it
//! ([`Crossing`]: in headroom, or in shared space over the limit by that one packet); all
//! later packets go to headroom while headroom is in use or XOFF stands; only full
//! headroom drops a lossless packet. XON follows the live limit or the one latched at XOFF
//! ([`XonLimit`]). Egress admission is
//! the same without headroom, and a packet enters only if ingress and egress both admit.
//!
//! Release returns a PG's cells headroom first, then shared, then reserved (the order
//! Broadcom-style MMUs use), so headroom empties as soon as the oldest packets leave and XON
//! can follow while the queue still holds data to send.

pub use crate::asic::{
    Admission, Behaviour, Crossing, FirstLimit, PgFill, PoolCells, PoolUse, Slices, XonLimit,
};
use crate::units::Bytes;

/// Number of priorities, priority groups and queues per port.
pub const PRIORITIES: usize = 8;

/// The priorities whose bits are set in `mask` (a PFC class-enable vector, a pause
/// bitmap), lowest first: a step per set bit, not per priority.
#[inline]
pub fn priorities_in(mask: u8) -> impl Iterator<Item = usize> {
    let mut left = mask;
    std::iter::from_fn(move || {
        (left != 0).then(|| {
            let p = left.trailing_zeros() as usize;
            left &= left - 1;
            p
        })
    })
}

/// Whether a pool accounts ingress (per port, PG) or egress (per port, queue) use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolKind {
    /// Ingress pool: PGs draw from it; a lossless ingress pool may own shared headroom.
    Ingress,
    /// Egress pool: queues draw from it.
    Egress,
}

impl crate::named::Named for PoolKind {
    const WORDS: &'static [(&'static str, PoolKind)] =
        &[("ingress", PoolKind::Ingress), ("egress", PoolKind::Egress)];
}

/// How a PG or queue's shared-space limit is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threshold {
    /// Dynamic threshold `α = 2^n`, n in −8..=7: limit = α·(pool shared size − pool shared use).
    Dynamic(i8),
    /// Static limit on this user's shared use, in bytes.
    Static(Bytes),
}

impl Threshold {
    /// The shared-space limit of a user alone in an empty pool of `pool` bytes: α·S with
    /// α = 2^n, or static_th.
    pub fn limit_at_empty(self, pool: Bytes) -> Bytes {
        match self {
            Threshold::Static(t) => t,
            Threshold::Dynamic(n) if n >= 0 => Bytes(pool.get() << n),
            Threshold::Dynamic(n) => Bytes(pool.get() >> -n),
        }
    }

    /// Where a user filling the pool alone stops, its XOFF point for a lossless PG: the x
    /// with x = α·(S − x), i.e. α·S/(1 + α), in exact integer arithmetic; or static_th.
    pub fn xoff_point(self, pool: Bytes) -> Bytes {
        let s = pool.get();
        match self {
            Threshold::Static(t) => t,
            Threshold::Dynamic(n) if n >= 0 => Bytes((s << n) / ((1 << n) + 1)),
            Threshold::Dynamic(n) => Bytes(s / ((1 << -n) + 1)),
        }
    }
}

/// PFC headroom and hysteresis of a lossless PG profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Headroom {
    /// Bytes of headroom this PG may fill after XOFF (0 with a shared headroom pool).
    pub xoff: Bytes,
    /// XON when shared use falls below this many bytes (or below limit − xon_offset).
    pub xon: Bytes,
    /// XON when shared use falls this far below the current limit.
    pub xon_offset: Bytes,
}

/// A pool as configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolSpec {
    /// Pool name (SONiC's, e.g. `ingress_lossless_pool`).
    pub name: String,
    /// Ingress or egress accounting.
    pub kind: PoolKind,
    /// Shared space of the pool in bytes (reservations and per-PG headroom are outside it).
    pub size: Bytes,
    /// Shared headroom pool size (ingress lossless pools only; 0 = per-PG headroom).
    pub xoff: Bytes,
}

/// A buffer profile as configured: which pool, reserved minimum, threshold, headroom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileSpec {
    /// Index of the pool in the MMU's pool list.
    pub pool: usize,
    /// Reserved (guaranteed) bytes.
    pub reserved: Bytes,
    /// Limit on shared use.
    pub threshold: Threshold,
    /// Some for a lossless PG profile (it gets headroom and generates PFC).
    pub headroom: Option<Headroom>,
}

/// Which limit refused a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A lossy PG is over its shared limit (or its pool is full).
    IngressLimit,
    /// A lossless PG's headroom (or the shared headroom pool) is full.
    HeadroomFull,
    /// The egress queue is over its shared limit (or its pool is full).
    EgressLimit,
}

/// Outcome of a successful admission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admitted {
    /// Cells the packet holds (ingress and egress alike).
    pub cells: u32,
    /// This packet crossed its lossless PG's limit: send XOFF for the PG's priorities now.
    pub xoff: bool,
    /// The packet went into headroom.
    pub in_headroom: bool,
}

/// What a release gave back to the packet's ingress PG.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Freed {
    /// Cells the PG got back (the packet's cells).
    pub cells: u32,
    /// The PG was in XOFF and now meets the XON condition: send XON for its priorities.
    pub xon: bool,
}

/// Live state of one pool.
#[derive(Clone, Debug)]
pub struct Pool {
    /// Configuration (for a slice: the slice's share of the pool's sizes).
    pub spec: PoolSpec,
    /// The slice this share of the pool belongs to, when the buffer is sliced.
    pub slice: Option<usize>,
    /// Shared size in cells.
    pub size_cells: u64,
    /// Shared headroom pool size in cells.
    pub headroom_cells: u64,
    /// Cells of shared space in use (Σ of its users' shared use).
    pub shared_used: u64,
    /// Reserved cells of its PGs in use (ingress pools; counted as use under
    /// [`PoolUse::WithReserved`]).
    pub reserved_used: u64,
    /// Cells of the shared headroom pool in use.
    pub headroom_used: u64,
    /// Peak of `shared_used` since the last clear.
    pub watermark: u64,
    /// Peak of `headroom_used` since the last clear (SONiC's headroom-pool watermark).
    pub headroom_watermark: u64,
}

/// A port's headroom shared by its lossless PGs: NVIDIA Spectrum with a shared headroom
/// pool gives each port a shared headroom buffer of its own (`private`) and lets it borrow
/// from the pool's shared headroom pool, up to `budget` in all, instead of a headroom per PG
/// (docs/physics.md, "NVIDIA Spectrum: the pool first").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortHeadroom {
    /// Bytes the port's lossless PGs may hold past XOFF, together.
    pub budget: Bytes,
    /// Bytes of that budget that are the port's own; the rest is borrowed from the shared
    /// headroom pool.
    pub private: Bytes,
}

/// A port's shared headroom in use, in cells.
#[derive(Clone, Copy, Debug, Default)]
pub struct PortHeadroomState {
    /// Cells the port's lossless PGs may hold past XOFF.
    pub budget: u64,
    /// Of those, the port's own.
    pub private: u64,
    /// Cells in use.
    pub used: u64,
}

impl PortHeadroomState {
    /// Cells borrowed from the shared headroom pool when `used` are in use.
    fn loan(&self, used: u64) -> u64 {
        used.saturating_sub(self.private)
    }
}

/// Accounting of one ingress (port, PG).
#[derive(Clone, Debug, Default)]
pub struct PgState {
    /// Pool index.
    pub pool: usize,
    /// Reserved cells.
    pub reserved: u64,
    /// Shared-use limit.
    pub threshold: Option<Threshold>,
    /// Headroom cells (per PG) when lossless.
    pub headroom_cells: u64,
    /// XON absolute level in bytes and offset below the limit, when lossless.
    pub xon: Bytes,
    /// XON offset below the current limit, in bytes.
    pub xon_offset: Bytes,
    /// True when this PG is lossless (has headroom, generates PFC).
    pub lossless: bool,
    /// Reserved cells in use.
    pub reserved_used: u64,
    /// Shared cells in use.
    pub shared_used: u64,
    /// Headroom cells in use; nonzero only after XOFF.
    pub headroom_used: u64,
    /// XOFF has been sent for this PG and no XON since.
    pub xoff: bool,
    /// The shared limit in bytes when XOFF was decided (for [`XonLimit::Latched`]).
    pub xoff_limit: u64,
    /// Peak shared use in cells.
    pub shared_watermark: u64,
    /// Peak headroom use in cells.
    pub headroom_watermark: u64,
    /// Packets this PG refused at ingress (lossy limit, or headroom full).
    pub drop_packets: u64,
}

impl PgState {
    /// Cells this PG holds in all (reserved + shared + headroom).
    pub fn used(&self) -> u64 {
        self.reserved_used + self.shared_used + self.headroom_used
    }
}

/// Accounting of one egress (port, queue).
#[derive(Clone, Debug, Default)]
pub struct QueueBuf {
    /// Pool index.
    pub pool: usize,
    /// Reserved cells.
    pub reserved: u64,
    /// Shared-use limit.
    pub threshold: Option<Threshold>,
    /// Reserved cells in use.
    pub reserved_used: u64,
    /// Shared cells in use.
    pub shared_used: u64,
    /// Peak total occupancy (reserved + shared) in cells.
    pub watermark: u64,
    /// Peak shared use in cells.
    pub shared_watermark: u64,
}

impl QueueBuf {
    /// Cells queued.
    pub fn used(&self) -> u64 {
        self.reserved_used + self.shared_used
    }
}

/// The shared-buffer memory manager of one switch.
#[derive(Clone, Debug)]
pub struct Mmu {
    pub(crate) cell: u64,
    /// Pools, by index.
    pub pools: Vec<Pool>,
    /// Ingress accounting, index [`slot`]`(port, pg)`.
    pub(crate) pgs: Vec<PgState>,
    /// Egress accounting, index [`slot`]`(port, queue)`.
    pub(crate) queues: Vec<QueueBuf>,
    /// The ASIC's choices.
    pub(crate) behaviour: Behaviour,
    /// Each port's shared headroom, when its lossless PGs share one (empty: headroom per
    /// PG).
    pub(crate) port_headroom: Vec<PortHeadroomState>,
}

/// Where (`port`, `pg`) or (`port`, `queue`) sits in the MMU's per-port tables.
const fn slot(port: usize, i: usize) -> usize {
    port * PRIORITIES + i
}

/// `used ≤ α·free` (or `< ` when `strict`), in exact integer arithmetic; `used` and `free`
/// in the same unit.
fn within_dynamic(n: i8, used: u64, free: u64, strict: bool) -> bool {
    let (lhs, rhs) = if n >= 0 {
        (used as u128, (free as u128) << n)
    } else {
        ((used as u128) << (-n), free as u128)
    };
    if strict {
        lhs < rhs
    } else {
        lhs <= rhs
    }
}

impl Mmu {
    /// An MMU for `ports` ports with cells of `cell` bytes, the given pools, and one profile
    /// per (port, PG) and per (port, queue) (`pg_profiles[port * 8 + pg]`).
    pub fn new(
        cell: Bytes,
        pools: Vec<PoolSpec>,
        pg_profiles: &[ProfileSpec],
        queue_profiles: &[ProfileSpec],
    ) -> Mmu {
        let cell = cell.get().max(1);
        let pools = pools
            .into_iter()
            .map(|spec| Pool {
                size_cells: spec.size.get() / cell,
                headroom_cells: spec.xoff.get() / cell,
                spec,
                slice: None,
                shared_used: 0,
                reserved_used: 0,
                headroom_used: 0,
                watermark: 0,
                headroom_watermark: 0,
            })
            .collect();
        let pgs = pg_profiles
            .iter()
            .map(|p| {
                let h = p.headroom.unwrap_or(Headroom {
                    xoff: Bytes(0),
                    xon: Bytes(0),
                    xon_offset: Bytes(0),
                });
                PgState {
                    pool: p.pool,
                    reserved: p.reserved.cells(Bytes(cell)),
                    threshold: Some(p.threshold),
                    headroom_cells: h.xoff.cells(Bytes(cell)),
                    xon: h.xon,
                    xon_offset: h.xon_offset,
                    lossless: p.headroom.is_some(),
                    ..PgState::default()
                }
            })
            .collect();
        let queues = queue_profiles
            .iter()
            .map(|p| QueueBuf {
                pool: p.pool,
                reserved: p.reserved.cells(Bytes(cell)),
                threshold: Some(p.threshold),
                ..QueueBuf::default()
            })
            .collect();
        Mmu {
            cell,
            pools,
            pgs,
            queues,
            behaviour: Behaviour::default(),
            port_headroom: Vec::new(),
        }
    }

    /// This MMU with each port's lossless PGs sharing one headroom (`ports[port]`; a port
    /// with a zero budget keeps headroom per PG).
    pub fn with_port_headroom(mut self, ports: &[PortHeadroom]) -> Mmu {
        let cell = Bytes(self.cell);
        self.port_headroom = ports
            .iter()
            .map(|p| {
                let budget = p.budget.cells(cell);
                PortHeadroomState {
                    budget,
                    private: p.private.cells(cell).min(budget),
                    ..PortHeadroomState::default()
                }
            })
            .collect();
        self
    }

    /// The shared headroom of `port`, if its PGs share one.
    pub fn port_headroom(&self, port: usize) -> Option<&PortHeadroomState> {
        self.port_headroom.get(port).filter(|p| p.budget > 0)
    }

    /// Bytes per cell.
    pub fn cell(&self) -> u64 {
        self.cell
    }

    /// Accounting of ingress priority group `pg` of `port`.
    pub fn pg(&self, port: usize, pg: usize) -> &PgState {
        &self.pgs[slot(port, pg)]
    }

    /// Accounting of egress queue `queue` of `port`.
    pub fn queue(&self, port: usize, queue: usize) -> &QueueBuf {
        &self.queues[slot(port, queue)]
    }

    /// Every ingress (port, PG), port by port.
    pub fn pgs(&self) -> &[PgState] {
        &self.pgs
    }

    /// Every egress (port, queue), port by port.
    pub fn queues(&self) -> &[QueueBuf] {
        &self.queues
    }

    /// Bytes queued at egress on `port`, all queues.
    pub fn port_queued_bytes(&self, port: usize) -> u64 {
        let cells: u64 = self.queues[slot(port, 0)..slot(port + 1, 0)]
            .iter()
            .map(QueueBuf::used)
            .sum();
        cells * self.cell
    }

    /// Cells a frame of `len` bytes occupies.
    pub fn cells_for(&self, len: u64) -> u32 {
        len.div_ceil(self.cell) as u32
    }

    /// May a user of `pool` with `x` shared cells take `cells` more under `th`, the pool's
    /// shared use being `pool_used` (both before the packet; `pool_used` with whatever of the
    /// same frame goes to a reserve the pool counts)? Tested with the packet counted or as
    /// the packet finds them (`rule`); the pool must hold the cells either way.
    fn fits(
        &self,
        th: Threshold,
        pool: usize,
        rule: Admission,
        x: u64,
        cells: u64,
        pool_used: u64,
    ) -> bool {
        let before = pool_used + self.reserved_in_use(pool);
        let after = before + cells;
        let size = self.pools[pool].size_cells;
        if after > size {
            return false;
        }
        match (th, rule) {
            (Threshold::Dynamic(n), Admission::After) => {
                within_dynamic(n, x + cells, size - after, false)
            }
            (Threshold::Dynamic(n), Admission::Before) => {
                within_dynamic(n, x, size - before, false)
            }
            (Threshold::Static(b), _) => (x + cells) * self.cell <= b.get(),
        }
    }

    /// Reserved cells of `pool` that count as its use for dynamic thresholds: its PGs'
    /// reserved cells in use under [`PoolUse::WithReserved`], else none.
    fn reserved_in_use(&self, pool: usize) -> u64 {
        match self.behaviour.pool_use {
            PoolUse::Shared => 0,
            PoolUse::WithReserved => self.pools[pool].reserved_used,
        }
    }

    /// Shared-space limit of a user of `pool` right now, in bytes (for reports and XON).
    pub fn limit_bytes(&self, th: Threshold, pool: usize) -> u64 {
        let p = &self.pools[pool];
        match th {
            Threshold::Dynamic(n) => {
                let used = p.shared_used + self.reserved_in_use(pool);
                let free = (p.size_cells.saturating_sub(used)) * self.cell;
                if n >= 0 {
                    free << n
                } else {
                    free >> (-n)
                }
            }
            Threshold::Static(b) => b.get(),
        }
    }

    /// Where `cells` more cells would go for ingress (port, pg): Ok((reserved, shared,
    /// headroom, crosses)) or the refusal. With [`Crossing::Shared`] the crossing packet's
    /// shared part stays in shared space when the pool physically holds it.
    fn plan_ingress(&self, i: usize, cells: u64) -> Result<(u64, u64, u64, bool), Refusal> {
        let pg = &self.pgs[i];
        let pool = &self.pools[pg.pool];
        // The PG's own headroom (its profile's xoff) bounds it always; a shared headroom pool
        // bounds the sum of its PGs as well (it oversubscribes their per-PG sizes).
        // A port whose PGs share a headroom bounds them together instead, and only what it
        // borrows counts against the pool.
        let port = self.port_headroom(i / PRIORITIES);
        let to_headroom = |crosses: bool| {
            let (own_ok, from_pool) = match port {
                Some(p) => (
                    p.used + cells <= p.budget,
                    p.loan(p.used + cells) - p.loan(p.used),
                ),
                None => (pg.headroom_used + cells <= pg.headroom_cells, cells),
            };
            let shared_ok =
                pool.headroom_cells == 0 || pool.headroom_used + from_pool <= pool.headroom_cells;
            if own_ok && shared_ok {
                Ok((0, 0, cells, crosses))
            } else {
                Err(Refusal::HeadroomFull)
            }
        };
        if pg.lossless
            && (pg.headroom_used > 0 || (pg.xoff && self.behaviour.crossing == Crossing::Shared))
        {
            return to_headroom(false);
        }
        if self.behaviour.pg_fill == PgFill::SharedFirst {
            // Shared space while the limit holds, then the PG's own reserve, then (XOFF)
            // headroom. A frame goes whole to one of them.
            let th = pg.threshold.expect("PG has a threshold");
            let rule = self.behaviour.pg_admission;
            if self.fits(th, pg.pool, rule, pg.shared_used, cells, pool.shared_used) {
                return Ok((0, cells, 0, false));
            }
            if pg.reserved_used + cells <= pg.reserved {
                return Ok((cells, 0, 0, false));
            }
            return if pg.lossless {
                to_headroom(!pg.xoff)
            } else {
                Err(Refusal::IngressLimit)
            };
        }
        let from_reserved = cells.min(pg.reserved - pg.reserved_used.min(pg.reserved));
        let from_shared = cells - from_reserved;
        if from_shared == 0 {
            return Ok((from_reserved, 0, 0, false));
        }
        let th = pg.threshold.expect("PG has a threshold");
        // Under PoolUse::WithReserved this frame's reserved cells count too.
        let own_reserved = match self.behaviour.pool_use {
            PoolUse::Shared => 0,
            PoolUse::WithReserved => from_reserved,
        };
        let rule = self.behaviour.pg_admission;
        if self.fits(
            th,
            pg.pool,
            rule,
            pg.shared_used,
            from_shared,
            pool.shared_used + own_reserved,
        ) {
            Ok((from_reserved, from_shared, 0, false))
        } else if pg.lossless
            && !pg.xoff
            && self.behaviour.crossing == Crossing::Shared
            && pool.shared_used + from_shared <= pool.size_cells
        {
            Ok((from_reserved, from_shared, 0, true))
        } else if pg.lossless {
            to_headroom(!pg.xoff)
        } else {
            Err(Refusal::IngressLimit)
        }
    }

    /// Where `cells` more cells would go for egress queue `j`: Ok((reserved, shared)).
    fn plan_egress(&self, j: usize, cells: u64) -> Result<(u64, u64), Refusal> {
        let q = &self.queues[j];
        let from_reserved = cells.min(q.reserved - q.reserved_used.min(q.reserved));
        let from_shared = cells - from_reserved;
        if from_shared == 0 {
            return Ok((from_reserved, 0));
        }
        let th = q.threshold.expect("queue has a threshold");
        let rule = self.behaviour.queue_admission;
        let fits = self.fits(
            th,
            q.pool,
            rule,
            q.shared_used,
            from_shared,
            self.pools[q.pool].shared_used,
        );
        if fits {
            Ok((from_reserved, from_shared))
        } else {
            Err(Refusal::EgressLimit)
        }
    }

    /// Admit a frame of `len` bytes arriving on (`in_port`, `pg`) for (`out_port`, `queue`):
    /// both ingress and egress must accept, else nothing is charged.
    pub fn admit(
        &mut self,
        in_port: usize,
        pg: usize,
        out_port: usize,
        queue: usize,
        len: u64,
    ) -> Result<Admitted, Refusal> {
        let cells = len.div_ceil(self.cell);
        let (i, j) = (slot(in_port, pg), slot(out_port, queue));
        // An egress refusal is the queue's drop, not the PG's; on a chip that tests the
        // egress limit first it is so even when the PG would refuse the packet too.
        let egress = self.plan_egress(j, cells);
        if self.behaviour.first_limit == FirstLimit::Egress {
            egress?;
        }
        let (ir, is, ih, crosses) = match self.plan_ingress(i, cells) {
            Ok(plan) => plan,
            Err(r) => {
                self.pgs[i].drop_packets += 1;
                return Err(r);
            }
        };
        let (er, es) = match egress {
            Ok(plan) => plan,
            Err(r) => {
                // Counted at ingress before the queue refused it: the ingress watermarks
                // saw it, though nothing stays charged.
                self.see_at_ingress(i, is, ih);
                return Err(r);
            }
        };
        // The limit this frame was tested against, latched if it turns XOFF on (read before
        // anything is committed).
        let limit_now = if crosses {
            self.pg_limit_with_bytes(in_port, pg, cells)
        } else {
            0
        };
        // Commit ingress.
        let pg_state = &mut self.pgs[i];
        pg_state.reserved_used += ir;
        pg_state.shared_used += is;
        pg_state.headroom_used += ih;
        pg_state.shared_watermark = pg_state.shared_watermark.max(pg_state.shared_used);
        pg_state.headroom_watermark = pg_state.headroom_watermark.max(pg_state.headroom_used);
        if crosses {
            pg_state.xoff = true;
            pg_state.xoff_limit = limit_now;
        }
        let ppool = pg_state.pool;
        let from_pool = self.take_port_headroom(in_port, ih);
        let ipool = &mut self.pools[ppool];
        ipool.shared_used += is;
        ipool.reserved_used += ir;
        ipool.watermark = ipool.watermark.max(ipool.shared_used);
        if ipool.headroom_cells > 0 {
            ipool.headroom_used += from_pool;
            ipool.headroom_watermark = ipool.headroom_watermark.max(ipool.headroom_used);
        }
        // Commit egress.
        let q = &mut self.queues[j];
        q.reserved_used += er;
        q.shared_used += es;
        q.watermark = q.watermark.max(q.used());
        q.shared_watermark = q.shared_watermark.max(q.shared_used);
        let epool = &mut self.pools[q.pool];
        epool.shared_used += es;
        epool.watermark = epool.watermark.max(epool.shared_used);
        Ok(Admitted {
            cells: cells as u32,
            xoff: crosses,
            in_headroom: ih > 0,
        })
    }

    /// Return the cells of a departed (or discarded) packet: what its ingress PG got back
    /// (the credits a credit-based link returns for it) and whether the PG, in XOFF, now
    /// meets the XON condition (the caller sends XON).
    pub fn release(
        &mut self,
        in_port: usize,
        pg: usize,
        out_port: usize,
        queue: usize,
        cells: u32,
    ) -> Freed {
        let freed = cells;
        let cells = cells as u64;
        // Egress: shared first, then reserved.
        let q = &mut self.queues[slot(out_port, queue)];
        let from_shared = cells.min(q.shared_used);
        q.shared_used -= from_shared;
        q.reserved_used -= (cells - from_shared).min(q.reserved_used);
        let qpool = q.pool;
        self.pools[qpool].shared_used -= from_shared;
        // Ingress: headroom first, then the way the PG filled, backwards: shared then
        // reserved (reserve first), or reserved then shared (shared first).
        let i = slot(in_port, pg);
        let shared_first = self.behaviour.pg_fill == PgFill::SharedFirst;
        let p = &mut self.pgs[i];
        let from_headroom = cells.min(p.headroom_used);
        p.headroom_used -= from_headroom;
        let rest = cells - from_headroom;
        let (from_shared, from_reserved) = if shared_first {
            let r = rest.min(p.reserved_used);
            ((rest - r).min(p.shared_used), r)
        } else {
            let sh = rest.min(p.shared_used);
            (sh, (rest - sh).min(p.reserved_used))
        };
        p.shared_used -= from_shared;
        p.reserved_used -= from_reserved;
        let ppool = p.pool;
        let to_pool = self.return_port_headroom(in_port, from_headroom);
        let pool = &mut self.pools[ppool];
        pool.shared_used -= from_shared;
        pool.reserved_used -= from_reserved.min(pool.reserved_used);
        if pool.headroom_cells > 0 {
            pool.headroom_used -= to_pool.min(pool.headroom_used);
        }
        Freed {
            cells: freed,
            xon: self.check_xon(i),
        }
    }

    /// `cells` of headroom taken by a PG of `port`: what of them the shared headroom pool
    /// holds (all of them, unless the port's PGs share a headroom of its own).
    fn take_port_headroom(&mut self, port: usize, cells: u64) -> u64 {
        match self.port_headroom.get_mut(port).filter(|p| p.budget > 0) {
            Some(p) => {
                let before = p.loan(p.used);
                p.used += cells;
                p.loan(p.used) - before
            }
            None => cells,
        }
    }

    /// `cells` of headroom given back by a PG of `port`: what of them the shared headroom
    /// pool gets back.
    fn return_port_headroom(&mut self, port: usize, cells: u64) -> u64 {
        match self.port_headroom.get_mut(port).filter(|p| p.budget > 0) {
            Some(p) => {
                let before = p.loan(p.used);
                p.used -= cells.min(p.used);
                before - p.loan(p.used)
            }
            None => cells,
        }
    }

    /// A packet PG slot `i` admitted (`shared` and `headroom` cells) that the egress queue
    /// then refused: the PG's and its pool's watermarks saw it, and it is charged no more.
    fn see_at_ingress(&mut self, i: usize, shared: u64, headroom: u64) {
        let pg = &mut self.pgs[i];
        pg.shared_watermark = pg.shared_watermark.max(pg.shared_used + shared);
        pg.headroom_watermark = pg.headroom_watermark.max(pg.headroom_used + headroom);
        let pool = &mut self.pools[pg.pool];
        pool.watermark = pool.watermark.max(pool.shared_used + shared);
    }

    /// The shared-use limit of PG `pg` of `port` now, bytes (its XOFF point; 0 for a PG
    /// without one).
    pub fn pg_limit_bytes(&self, port: usize, pg: usize) -> u64 {
        self.limit_of(&self.pgs[slot(port, pg)])
    }

    /// The most shared buffer PG `pg` of `port` can hold now, bytes: its limit, but no more
    /// than it holds plus what its pool has free (a lossy PG's dynamic limit α·free with
    /// α = 8 is eight times what the pool could ever give it).
    pub fn pg_reach_bytes(&self, port: usize, pg: usize) -> u64 {
        let p = &self.pgs[slot(port, pg)];
        let pool = &self.pools[p.pool];
        let used = pool.shared_used + self.reserved_in_use(p.pool);
        let free = pool.size_cells.saturating_sub(used) * self.cell;
        self.limit_of(p).min(p.shared_used * self.cell + free)
    }

    /// The XON level of PG `pg` of `port` now, bytes: max(xon, limit − xon_offset).
    pub fn pg_xon_level_bytes(&self, port: usize, pg: usize) -> u64 {
        self.xon_level_of(&self.pgs[slot(port, pg)])
    }

    /// The shared-use limit PG `pg` of `port` would have with `cells` more cells of the
    /// pool in use: the limit a frame of that many cells is tested against (α·(S − X), X
    /// counting the frame), bytes.
    pub fn pg_limit_with_bytes(&self, port: usize, pg: usize, cells: u64) -> u64 {
        let p = &self.pgs[slot(port, pg)];
        match p.threshold {
            None => 0,
            Some(Threshold::Static(b)) => b.get(),
            Some(Threshold::Dynamic(n)) => {
                let pool_at = &self.pools[p.pool];
                let used = pool_at.shared_used + self.reserved_in_use(p.pool) + cells;
                let free = pool_at.size_cells.saturating_sub(used) * self.cell;
                if n >= 0 {
                    free << n
                } else {
                    free >> -n
                }
            }
        }
    }

    fn limit_of(&self, p: &PgState) -> u64 {
        p.threshold.map_or(0, |th| self.limit_bytes(th, p.pool))
    }

    fn xon_level_of(&self, p: &PgState) -> u64 {
        let limit = match self.behaviour.xon_limit {
            XonLimit::Latched if p.xoff => p.xoff_limit,
            _ => self.limit_of(p),
        };
        p.xon.get().max(limit.saturating_sub(p.xon_offset.get()))
    }

    /// If PG slot `i` is in XOFF and meets the XON condition (no headroom in use and shared
    /// use below max(xon, limit − xon_offset)), leave XOFF and return true.
    fn check_xon(&mut self, i: usize) -> bool {
        let p = &self.pgs[i];
        if !p.xoff || p.headroom_used > 0 {
            return false;
        }
        if self.behaviour.pg_fill == PgFill::SharedFirst {
            // XON when the PG's own buffer (its headroom empty by now) holds less than `xon`.
            if p.reserved_used * self.cell < p.xon.get() {
                self.pgs[i].xoff = false;
                return true;
            }
            return false;
        }
        let used = p.shared_used * self.cell;
        let level = self.xon_level_of(p);
        if used == 0 || used < level {
            self.pgs[i].xoff = false;
            return true;
        }
        false
    }
}
