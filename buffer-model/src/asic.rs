//! The memory manager's ASIC-specific choices — where a lossless PG stores the packet that
//! crosses its limit, which limit its XON is measured from, what a plan's sizes count,
//! whether a PG fills its reserve or the pool first, when a dynamic limit is tested, which
//! side's limit a packet meets first, how pools round to cells, and whether the buffer is
//! accounted in slices — and the chips whose values for these are known ([`Asic`]).
//! Switch chips differ here (docs/physics.md, "Dynamic thresholds"); `generic` is the
//! default of each.

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
    /// An ingress pool's `size` is its shared space; a lossless profile's `size` is the PG's
    /// own buffer, its `xoff` included (`size = xon + xoff`: NVIDIA Spectrum).
    PgBuffer,
}

impl crate::named::Named for IngressSizes {
    const WORDS: &'static [(&'static str, IngressSizes)] = &[
        ("shared", IngressSizes::Shared),
        ("whole", IngressSizes::Whole),
        ("pg_buffer", IngressSizes::PgBuffer),
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

/// When a PG's or queue's dynamic limit is tested: with the arriving packet counted, or
/// against the PG or queue and the pool as the packet finds them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Admission {
    /// Admit while x ≤ α·(S − X), x and X counting the packet (`generic`; Broadcom's
    /// ingress: PFCtest's XOFF counts on Tomahawk 1 and Trident 2).
    #[default]
    After,
    /// Admit while x ≤ α·(S − X) before the packet is counted (Choudhury and Hahne's
    /// q(t) ≤ T(t) at arrival): the last packet admitted may take x one packet past it
    /// (Broadcom's egress: LossyQueueTest's counts on Trident 2 and Tomahawk 1; NVIDIA
    /// Spectrum's ingress: PGSharedWatermarkTest's bound on an ACS-MSN2700).
    Before,
}

impl crate::named::Named for Admission {
    const WORDS: &'static [(&'static str, Admission)] =
        &[("after", Admission::After), ("before", Admission::Before)];
}

/// Which side's limit a packet meets first, and so which counts the drop when both would
/// refuse it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FirstLimit {
    /// The ingress PG's, then the egress queue's (`generic`, Broadcom): a packet the PG
    /// admits is counted at ingress before the queue's limit is met, so the PG's and its
    /// ingress pool's watermarks see it even when the queue then drops it (sonic-mgmt's
    /// PGSharedWatermarkTest, lossy, on a Tomahawk: the watermark at the drop point is every
    /// packet sent, the dropped one included).
    #[default]
    Ingress,
    /// The egress queue's, then the ingress PG's: a packet over both is the queue's drop
    /// (NVIDIA Spectrum: LossyQueueTest asserts an egress drop and no ingress drop where
    /// SONiC's plan gives the lossy PG and the lossy queue the same limit).
    Egress,
}

impl crate::named::Named for FirstLimit {
    const WORDS: &'static [(&'static str, FirstLimit)] = &[
        ("ingress", FirstLimit::Ingress),
        ("egress", FirstLimit::Egress),
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

/// In which order a PG fills its reserve and its share of the pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PgFill {
    /// The reserve first, then shared space up to the dynamic limit; a lossless PG sends
    /// XOFF when the limit is crossed (Broadcom; `generic`).
    #[default]
    ReserveFirst,
    /// Shared space first, up to the limit, then the PG's own buffer (`size`): its first
    /// `size − xoff` bytes (the reserve), then its `xoff` (headroom). A lossless PG sends
    /// XOFF when a packet finds the reserve full and goes to headroom, and XON when its
    /// own buffer holds less than `xon` again; a departing packet frees the PG's own
    /// buffer first, as packets waiting there move into the room it leaves in the pool
    /// (NVIDIA Spectrum, docs/physics.md "NVIDIA Spectrum: the pool first").
    SharedFirst,
}

impl crate::named::Named for PgFill {
    const WORDS: &'static [(&'static str, PgFill)] = &[
        ("reserve_first", PgFill::ReserveFirst),
        ("shared_first", PgFill::SharedFirst),
    ];
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
    /// When an ingress PG's dynamic limit is tested.
    pub pg_admission: Admission,
    /// When an egress queue's dynamic limit is tested.
    pub queue_admission: Admission,
    /// How pool sizes round to cells.
    pub pool_cells: PoolCells,
    /// Whether a PG fills its reserve or the pool first.
    pub pg_fill: PgFill,
    /// Which side's limit a packet meets first.
    pub first_limit: FirstLimit,
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
    /// NVIDIA Spectrum (SN2000 series; SONiC `spc1`).
    Spectrum,
    /// NVIDIA Spectrum-2 (SN3000 series; SONiC `spc2`).
    Spectrum2,
    /// NVIDIA Spectrum-3 (SN4000 series; SONiC `spc3`).
    Spectrum3,
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
        ("spectrum", Asic::Spectrum),
        ("spc1", Asic::Spectrum),
        ("spectrum2", Asic::Spectrum2),
        ("spc2", Asic::Spectrum2),
        ("spectrum3", Asic::Spectrum3),
        ("spc3", Asic::Spectrum3),
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
    /// Cells at the end of each lossless PG's headroom the chip keeps for itself: a PG
    /// drops this much before its `xoff` is full.
    pub headroom_overhead_cells: u64,
    /// With a shared headroom pool, the headroom each port has of its own before it
    /// borrows from the pool (NVIDIA's SAI: a 2 × 1,440-byte port shared headroom buffer).
    pub port_headroom_buffer: Bytes,
}

impl Asic {
    /// The chip's values. Sources (docs/scenario.md, `buffer.asic`): the cell is
    /// `cell_size` of the chip's qos_params file; the slices of Tomahawk 1 and 2 are its
    /// `hdrm_pool_wm_multiplier` (the factor by which SONiC's test scales a slice's
    /// headroom-pool watermark to the chip's; Tomahawk 3's file says 1, but its counts show
    /// two ITMs, below); Tomahawk's placement and XON rule are what
    /// its PFCtest and PFCXonTest counts fit (tests/sonic_qos.rs); Trident 2's sizes,
    /// placement and XON rule are what its PFCtest, PFCXonTest and watermark counts fit on a
    /// Force10-S6000 (tests/sonic_qos_td2.rs); the egress rules of both (queue admission
    /// tested before the packet, pool sizes rounded up to cells) are what their
    /// LossyQueueTest counts fit (tests/sonic_qos_egress.rs, tests/sonic_qos_td2.rs);
    /// Tomahawk 3's two ITMs are what its HdrmPoolSizeTest counts (each ITM holds half the
    /// shared headroom pool: 36 PGs' xoff and a 37th's partial fill, on both of its
    /// qos_params.th3.yaml rows) and LossyQueueTest counts (half the egress pool,
    /// tests/sonic_qos_th3.rs) fit, its placement what PFCtest's drop count does (the
    /// profile's xoff after XOFF); Spectrum's are in [`Asic::spectrum`]. Tomahawk 2's
    /// placement is design §4's. What no source fixes stays `generic`.
    pub const fn profile(self) -> AsicProfile {
        let generic = Behaviour {
            crossing: Crossing::Headroom,
            xon_limit: XonLimit::Live,
            pool_use: PoolUse::Shared,
            pg_admission: Admission::After,
            queue_admission: Admission::After,
            pool_cells: PoolCells::Down,
            pg_fill: PgFill::ReserveFirst,
            first_limit: FirstLimit::Ingress,
        };
        match self {
            Asic::Generic => AsicProfile {
                cell: None,
                slices: 1,
                behaviour: generic,
                ingress_sizes: IngressSizes::Shared,
                headroom_overhead_cells: 0,
                port_headroom_buffer: Bytes(0),
            },
            Asic::Trident2 => AsicProfile {
                cell: Some(Bytes(208)),
                slices: 1,
                behaviour: Behaviour {
                    crossing: Crossing::Shared,
                    xon_limit: XonLimit::Latched,
                    pool_use: PoolUse::WithReserved,
                    queue_admission: Admission::Before,
                    pool_cells: PoolCells::Up,
                    ..generic
                },
                ingress_sizes: IngressSizes::Whole,
                headroom_overhead_cells: 0,
                port_headroom_buffer: Bytes(0),
            },
            Asic::Tomahawk => AsicProfile {
                cell: Some(Bytes(208)),
                slices: 4,
                behaviour: Behaviour {
                    crossing: Crossing::Shared,
                    xon_limit: XonLimit::Latched,
                    pool_use: PoolUse::Shared,
                    queue_admission: Admission::Before,
                    pool_cells: PoolCells::Up,
                    ..generic
                },
                ingress_sizes: IngressSizes::Shared,
                headroom_overhead_cells: 0,
                port_headroom_buffer: Bytes(0),
            },
            Asic::Tomahawk2 => AsicProfile {
                cell: Some(Bytes(208)),
                slices: 4,
                behaviour: generic,
                ingress_sizes: IngressSizes::Shared,
                headroom_overhead_cells: 0,
                port_headroom_buffer: Bytes(0),
            },
            Asic::Tomahawk3 => AsicProfile {
                cell: Some(Bytes(254)),
                slices: 2,
                behaviour: generic,
                ingress_sizes: IngressSizes::Shared,
                headroom_overhead_cells: 0,
                port_headroom_buffer: Bytes(0),
            },
            Asic::Trident3 => AsicProfile {
                cell: Some(Bytes(256)),
                slices: 1,
                behaviour: generic,
                ingress_sizes: IngressSizes::Shared,
                headroom_overhead_cells: 0,
                port_headroom_buffer: Bytes(0),
            },
            Asic::Spectrum => Asic::spectrum(96, 95),
            Asic::Spectrum2 | Asic::Spectrum3 => Asic::spectrum(144, 64),
        }
    }
}

impl Asic {
    /// An NVIDIA Spectrum. Its cell and the headroom it keeps are sonic-mgmt's
    /// (`tests/qos/files/mellanox/qos_param_generator.py`: `cell_size`,
    /// `headroom_overhead`). A lossless profile's `size` is the PG's own buffer, filled
    /// after its share of the pool, with XOFF and XON thresholds on it (NVIDIA's account of
    /// Spectrum's port headroom, which that file's counts follow). Both limits are tested as
    /// a packet finds them and the egress one first (PGSharedWatermarkTest's lower bounds
    /// and LossyQueueTest's egress drop on an ACS-MSN2700 and an ACS-MSN3800,
    /// tests/sonic_qos_spc.rs). Pool sizes round up to cells and, with a shared headroom
    /// pool, each port has a headroom buffer of its own and borrows the rest (NVIDIA's SAI,
    /// `mlnx_sai_buffer.c`: `bytes_to_mlnx_cells`, the port shared headroom buffer).
    const fn spectrum(cell: u64, overhead_cells: u64) -> AsicProfile {
        AsicProfile {
            cell: Some(Bytes(cell)),
            slices: 1,
            behaviour: Behaviour {
                crossing: Crossing::Headroom,
                xon_limit: XonLimit::Live,
                pool_use: PoolUse::Shared,
                pg_admission: Admission::Before,
                queue_admission: Admission::Before,
                first_limit: FirstLimit::Egress,
                pool_cells: PoolCells::Up,
                pg_fill: PgFill::SharedFirst,
            },
            ingress_sizes: IngressSizes::PgBuffer,
            headroom_overhead_cells: overhead_cells,
            port_headroom_buffer: Bytes(2 * 1440),
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
