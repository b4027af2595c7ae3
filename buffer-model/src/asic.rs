//! The memory manager's ASIC-specific choices: where a lossless PG stores the packet that
//! crosses its limit, which limit its XON is measured from, and whether the buffer is
//! accounted in slices; and the chips whose values for these are known ([`Asic`]). Switch
//! chips differ here
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

/// What the sizes of an ingress plan count: how a chip's SDK reads SONiC's BUFFER_POOL and
/// BUFFER_PROFILE sizes (docs/physics.md, "What a plan's sizes mean").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IngressSizes {
    /// An ingress pool's `size` is its shared space; a profile's `size` is the PG's reserved
    /// minimum and its `xoff` headroom apart (Tomahawk; `generic`).
    #[default]
    Shared,
    /// An ingress pool's `size` is the whole ingress buffer: every PG's reserved minimum and
    /// headroom on it comes out of it, and what is left is shared; a lossless profile's
    /// `size` includes its `xoff` (Trident 2, as SONiC's Force10-S6000 plans and
    /// qos_params.td2.yaml's counts show).
    Whole,
}

impl crate::named::Named for IngressSizes {
    const WORDS: &'static [(&'static str, IngressSizes)] = &[
        ("shared", IngressSizes::Shared),
        ("whole", IngressSizes::Whole),
    ];
}

/// What an ingress pool's use counts when a dynamic threshold takes its free space.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PoolUse {
    /// Shared cells in use only (reserved cells are outside the pool; `generic`).
    #[default]
    Shared,
    /// Shared cells and the PGs' reserved cells in use: the pool is the whole ingress
    /// buffer and counts every cell it holds ([`IngressSizes::Whole`], Trident 2).
    WithReserved,
}

/// When an egress queue's dynamic limit is tested: with the arriving packet counted, or
/// against the queue and pool as the packet finds them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueueAdmission {
    /// Admit while x ≤ α·(S − X), x and X counting the packet (`generic`).
    #[default]
    After,
    /// Admit while x ≤ α·(S − X) before the packet is counted (Choudhury and Hahne's
    /// q(t) ≤ T(t) at arrival): the last packet admitted may take x one packet past it
    /// (Broadcom: LossyQueueTest's counts on Trident 2 and Tomahawk 1).
    Before,
}

impl crate::named::Named for QueueAdmission {
    const WORDS: &'static [(&'static str, QueueAdmission)] = &[
        ("after", QueueAdmission::After),
        ("before", QueueAdmission::Before),
    ];
}

/// How a pool's size in bytes becomes whole cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PoolCells {
    /// Down: a partial cell is not usable (`generic`).
    #[default]
    Down,
    /// Up, as a reserve's bytes are (Broadcom's SDK: a pool of 11,110.35 cells holds
    /// 11,111).
    Up,
}

impl crate::named::Named for PoolCells {
    const WORDS: &'static [(&'static str, PoolCells)] =
        &[("down", PoolCells::Down), ("up", PoolCells::Up)];
}

/// The MMU's ASIC-specific choices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Behaviour {
    /// Where the crossing packet goes.
    pub crossing: Crossing,
    /// The limit XON is measured from.
    pub xon_limit: XonLimit,
    /// What an ingress pool's use counts for its dynamic thresholds.
    pub pool_use: PoolUse,
    /// When an egress queue's dynamic limit is tested.
    pub queue_admission: QueueAdmission,
    /// How pool sizes round to cells.
    pub pool_cells: PoolCells,
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

/// A switch chip whose MMU choices are known (`buffer.asic`), by the names SONiC's tests
/// use (sonic-mgmt `ansible/group_vars/sonic/variables` lists each chip's HWSKUs as
/// `broadcom_th_hwskus`, `broadcom_th2_hwskus`, …; `tests/qos/files/qos_params.<chip>.yaml`
/// holds its counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Asic {
    /// No chip: 1 slice, the crossing packet in headroom, XON from the live limit.
    #[default]
    Generic,
    /// Broadcom Trident 2 (BCM5685x; SONiC `td2`).
    Trident2,
    /// Broadcom Tomahawk (BCM5696x; SONiC `th`).
    Tomahawk,
    /// Broadcom Tomahawk 2 (BCM5697x; SONiC `th2`).
    Tomahawk2,
    /// Broadcom Tomahawk 3 (BCM5698x; SONiC `th3`).
    Tomahawk3,
    /// Broadcom Trident 3 (BCM5687x; SONiC `td3`).
    Trident3,
}

impl crate::named::Named for Asic {
    const WORDS: &'static [(&'static str, Asic)] = &[
        ("generic", Asic::Generic),
        ("trident2", Asic::Trident2),
        ("td2", Asic::Trident2),
        ("tomahawk", Asic::Tomahawk),
        ("th", Asic::Tomahawk),
        ("tomahawk2", Asic::Tomahawk2),
        ("th2", Asic::Tomahawk2),
        ("tomahawk3", Asic::Tomahawk3),
        ("th3", Asic::Tomahawk3),
        ("trident3", Asic::Trident3),
        ("td3", Asic::Trident3),
    ];
}

/// What a chip sets: its cell, its slices and the MMU choices (each a file may override).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsicProfile {
    /// Accounting cell (None: the plan's own).
    pub cell: Option<Bytes>,
    /// Buffer slices (XPEs / ITMs as SONiC's pool sizes count them).
    pub slices: usize,
    /// Where the crossing packet goes and which limit XON follows.
    pub behaviour: Behaviour,
    /// What an ingress pool's and a lossless profile's sizes count.
    pub ingress_sizes: IngressSizes,
}

impl Asic {
    /// The chip's values. Sources (docs/scenario.md, `buffer.asic`): the cell is
    /// `cell_size` of the chip's qos_params file; the slices are its
    /// `hdrm_pool_wm_multiplier` (the factor by which SONiC's test scales a slice's
    /// headroom-pool watermark to the chip's); Tomahawk's placement and XON rule are what
    /// its PFCtest and PFCXonTest counts fit (tests/sonic_qos.rs); Trident 2's sizes,
    /// placement and XON rule are what its PFCtest, PFCXonTest and watermark counts fit on a
    /// Force10-S6000 (tests/sonic_qos_td2.rs); the egress rules of both (queue admission
    /// tested before the packet, pool sizes rounded up to cells) are what their
    /// LossyQueueTest counts fit (tests/sonic_qos_egress.rs, tests/sonic_qos_td2.rs);
    /// Tomahawk 2's placement is design §4's. What no source fixes stays `generic`.
    pub const fn profile(self) -> AsicProfile {
        let generic = Behaviour {
            crossing: Crossing::Headroom,
            xon_limit: XonLimit::Live,
            pool_use: PoolUse::Shared,
            queue_admission: QueueAdmission::After,
            pool_cells: PoolCells::Down,
        };
        match self {
            Asic::Generic => AsicProfile {
                cell: None,
                slices: 1,
                behaviour: generic,
                ingress_sizes: IngressSizes::Shared,
            },
            Asic::Trident2 => AsicProfile {
                cell: Some(Bytes(208)),
                slices: 1,
                behaviour: Behaviour {
                    crossing: Crossing::Shared,
                    xon_limit: XonLimit::Latched,
                    pool_use: PoolUse::WithReserved,
                    queue_admission: QueueAdmission::Before,
                    pool_cells: PoolCells::Up,
                },
                ingress_sizes: IngressSizes::Whole,
            },
            Asic::Tomahawk => AsicProfile {
                cell: Some(Bytes(208)),
                slices: 4,
                behaviour: Behaviour {
                    crossing: Crossing::Shared,
                    xon_limit: XonLimit::Latched,
                    pool_use: PoolUse::Shared,
                    queue_admission: QueueAdmission::Before,
                    pool_cells: PoolCells::Up,
                },
                ingress_sizes: IngressSizes::Shared,
            },
            Asic::Tomahawk2 => AsicProfile {
                cell: Some(Bytes(208)),
                slices: 4,
                behaviour: generic,
                ingress_sizes: IngressSizes::Shared,
            },
            Asic::Tomahawk3 => AsicProfile {
                cell: Some(Bytes(254)),
                slices: 1,
                behaviour: generic,
                ingress_sizes: IngressSizes::Shared,
            },
            Asic::Trident3 => AsicProfile {
                cell: Some(Bytes(256)),
                slices: 1,
                behaviour: generic,
                ingress_sizes: IngressSizes::Shared,
            },
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
        let pools = std::mem::take(&mut self.pools);
        for p in &pools {
            for k in 0..n {
                let mut spec = p.spec.clone();
                spec.size = Bytes(spec.size.get() / n as u64);
                spec.xoff = Bytes(spec.xoff.get() / n as u64);
                self.pools.push(Pool {
                    size_cells: self.whole_cells(spec.size),
                    headroom_cells: self.whole_cells(spec.xoff),
                    spec,
                    slice: Some(k),
                    shared_used: 0,
                    reserved_used: 0,
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

    /// This MMU with the ASIC choices `b` (pool sizes in cells rounded as `b` says).
    pub fn with_behaviour(mut self, b: Behaviour) -> Mmu {
        self.behaviour = b;
        for i in 0..self.pools.len() {
            let (size, xoff) = (self.pools[i].spec.size, self.pools[i].spec.xoff);
            self.pools[i].size_cells = self.whole_cells(size);
            self.pools[i].headroom_cells = self.whole_cells(xoff);
        }
        self
    }

    /// A pool's `bytes` in whole cells, rounded as the chip rounds them.
    fn whole_cells(&self, bytes: Bytes) -> u64 {
        match self.behaviour.pool_cells {
            PoolCells::Down => bytes.get() / self.cell,
            PoolCells::Up => bytes.get().div_ceil(self.cell),
        }
    }
}
