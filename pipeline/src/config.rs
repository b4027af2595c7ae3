//! The typed configuration of one switch, as the YAML loader resolves it: no strings past
//! this point except names for reports. Every field is already validated and defaulted.

use lossless_buffer_model::mmu::{PoolSpec, ProfileSpec};
use lossless_buffer_model::scheduler::{Discipline, DEFAULT_DWRR_WEIGHT};
use lossless_buffer_model::watchdog::WatchdogConfig;
use lossless_buffer_model::wred::WredProfile;
use lossless_buffer_model::{priorities_in, Bytes, Length, Named, Rate, Time, PRIORITIES};

use crate::link::cbfc::CbfcSetup;
use crate::link::llr::LlrSetup;

/// MAC of the first port of a switch whose file gives none (locally administered); port i
/// has this + i.
pub const DEFAULT_MAC: [u8; 6] = [0x02, 0x4C, 0x4C, 0x00, 0x00, 0x00];

/// One front-panel port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortConfig {
    /// SONiC-style name, e.g. `Ethernet0`.
    pub name: String,
    /// Line rate.
    pub speed: Rate,
    /// Cable to the peer (5 ns per metre).
    pub cable: Length,
    /// A fixed one-way delay to the peer given instead of a cable length.
    pub delay: Option<Time>,
    /// Largest frame accepted, FCS included (vendors' "9216 jumbo MTU").
    pub mtu: u32,
    /// MAC address used as the source of PFC frames and routed frames.
    pub mac: [u8; 6],
    /// The link protocol, where it is not the switch's `qos.flow_control`.
    pub flow_control: Option<FlowControl>,
    /// CBFC settings (used when the port speaks CBFC).
    pub cbfc: CbfcSetup,
    /// Link-level retry, on a port that speaks it (SONiC `LLR_PORT` with its profile).
    pub llr: Option<LlrSetup>,
    /// Queues whose buffer profile trims what the buffer refuses (SONiC
    /// `packet_discard_action: trim`), bit = queue.
    pub trim_queues: u8,
    /// This port's TC → DSCP map (SONiC `TC_TO_DSCP_MAP`), for trimming's `from_tc`.
    pub tc_to_dscp: Option<[u8; PRIORITIES]>,
}

impl Default for PortConfig {
    /// `Ethernet0`: 100G, a 2 m cable, a 9216-byte MTU (vendors' "9216").
    fn default() -> Self {
        PortConfig {
            name: "Ethernet0".into(),
            speed: Rate::gbps(100),
            cable: Length(2_000),
            delay: None,
            mtu: 9216,
            mac: DEFAULT_MAC,
            flow_control: None,
            cbfc: CbfcSetup::default(),
            llr: None,
            trim_queues: 0,
            tc_to_dscp: None,
        }
    }
}

impl PortConfig {
    /// One-way propagation delay to the peer.
    pub fn propagation(&self) -> Time {
        self.delay.unwrap_or_else(|| self.cable.propagation())
    }
}

/// Which header field classifies a packet into a traffic class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trust {
    /// IP DSCP through `dscp_to_tc` (non-IP frames: PCP if tagged, else TC 0).
    Dscp,
    /// VLAN PCP through `dot1p_to_tc` (untagged frames: TC 0).
    Dot1p,
}

impl Named for Trust {
    const WORDS: &'static [(&'static str, Trust)] =
        &[("dscp", Trust::Dscp), ("dot1p", Trust::Dot1p)];
}

/// Which link-layer flow control a port speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlowControl {
    /// IEEE 802.1Qbb priority flow control: XOFF and XON per priority.
    #[default]
    Pfc,
    /// IEEE 802.3x PAUSE: one pause time for the whole link, every priority at once. The
    /// lossless PGs still decide XOFF and XON; their frames pause the link.
    Pause,
    /// Ultra Ethernet credit-based flow control: a frame on a credited virtual channel
    /// starts only with credits for it, which the receiver returns as it drains its buffer
    /// for the channel (no pause frames, no headroom).
    Cbfc,
    /// No link-level flow control: received PFC and PAUSE frames are dropped, none sent.
    None,
}

impl Named for FlowControl {
    const WORDS: &'static [(&'static str, FlowControl)] = &[
        ("pfc", FlowControl::Pfc),
        ("pause", FlowControl::Pause),
        ("cbfc", FlowControl::Cbfc),
        ("none", FlowControl::None),
    ];
}

/// QoS maps and PFC settings (SONiC names).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QosConfig {
    /// Classification source.
    pub trust: Trust,
    /// DSCP → traffic class.
    pub dscp_to_tc: [u8; 64],
    /// 802.1p PCP → traffic class (of a frame whose tag's DEI is 0).
    pub dot1p_to_tc: [u8; PRIORITIES],
    /// PCP → traffic class of a frame whose tag marks it drop eligible (DEI 1): SAI's
    /// {PCP, DEI} → TC map is this and `dot1p_to_tc` (equal unless configured apart).
    pub dei_to_tc: [u8; PRIORITIES],
    /// Traffic class → ingress priority group.
    pub tc_to_pg: [u8; PRIORITIES],
    /// Traffic class → egress queue.
    pub tc_to_queue: [u8; PRIORITIES],
    /// Traffic class → PCP written into the outer tag at egress (None: leave PCP alone).
    pub tc_to_dot1p: Option<[u8; PRIORITIES]>,
    /// Bitmap of PFC-enabled priorities (priority p = traffic class p).
    pub pfc_enable: u8,
    /// Asymmetric PFC (SONiC `pfc_asym`): honour received PFC on every priority, generate
    /// it only for `pfc_enable`.
    pub pfc_asym: bool,
    /// PFC per priority, or 802.3x PAUSE of the whole link.
    pub flow_control: FlowControl,
    /// Quanta carried by XOFF frames.
    pub pause_quanta: u16,
    /// How long after a PFC frame arrives this switch may still start frames.
    pub pfc_response: Time,
    /// Scheduling discipline per queue.
    pub scheduler: [Discipline; PRIORITIES],
    /// WRED/ECN profile per queue.
    pub queue_wred: [Option<WredProfile>; PRIORITIES],
    /// PFC watchdog, if enabled.
    pub pfcwd: Option<WatchdogConfig>,
}

/// SONiC's default DSCP → TC map (`AZURE` in sonic-buildimage
/// `files/build_templates/qos_config.j2`): 3→3, 4→4, 5→2, 8→0, 46→5, 48→6, everything
/// else → 1.
pub fn sonic_dscp_to_tc() -> [u8; 64] {
    core::array::from_fn(|d| match d {
        3 => 3,
        4 => 4,
        5 => 2,
        8 => 0,
        46 => 5,
        48 => 6,
        _ => 1,
    })
}

/// Identity map over the eight classes.
pub fn identity8() -> [u8; PRIORITIES] {
    core::array::from_fn(|i| i as u8)
}

impl Default for QosConfig {
    /// SONiC's: trust DSCP with its default map, class p ↔ priority, PG and queue p, PFC on
    /// priorities 3 and 4 with 0xFFFF-quanta XOFF and an instant response, DWRR of weight
    /// 1 on every queue, no WRED, no watchdog.
    fn default() -> Self {
        QosConfig {
            trust: Trust::Dscp,
            dscp_to_tc: sonic_dscp_to_tc(),
            dot1p_to_tc: identity8(),
            dei_to_tc: identity8(),
            tc_to_pg: identity8(),
            tc_to_queue: identity8(),
            tc_to_dot1p: None,
            pfc_enable: (1 << 3) | (1 << 4),
            pfc_asym: false,
            flow_control: FlowControl::Pfc,
            pause_quanta: 0xFFFF,
            pfc_response: Time::ZERO,
            scheduler: [Discipline::Dwrr(DEFAULT_DWRR_WEIGHT); PRIORITIES],
            queue_wred: [None; PRIORITIES],
            pfcwd: None,
        }
    }
}

impl QosConfig {
    /// Priorities whose received pauses this switch acts on: every one for an 802.3x PAUSE
    /// (it stops the link) or with asymmetric PFC, else the PFC-enabled ones.
    pub fn pfc_honoured(&self) -> u8 {
        if self.pfc_asym || self.flow_control == FlowControl::Pause {
            0xFF
        } else {
            self.pfc_enable
        }
    }

    /// PFC priorities whose traffic enters priority group `pg`.
    pub fn priorities_of_pg(&self, pg: u8) -> u8 {
        (0..PRIORITIES).fold(0u8, |m, t| {
            m | (((self.pfc_enable >> t) & 1 == 1 && self.tc_to_pg[t] == pg) as u8) << t
        })
    }
    /// PFC priorities whose traffic leaves through queue `q`.
    pub fn priorities_of_queue(&self, q: u8) -> u8 {
        (0..PRIORITIES).fold(0u8, |m, t| m | ((self.tc_to_queue[t] == q) as u8) << t)
    }

    /// The traffic class of a frame with IP `dscp` (None: not IP, or too deep a VLAN stack
    /// to read) and outer VLAN `pcp` (None: untagged): by the trusted field, else PCP,
    /// else class 0.
    pub fn classify(&self, dscp: Option<u8>, pcp: Option<u8>) -> u8 {
        self.classify_tagged(dscp, pcp.map(|p| (p, false)))
    }

    /// [`QosConfig::classify`] with the outer tag's PCP and DEI: a drop-eligible frame's
    /// PCP goes through `dei_to_tc`.
    pub fn classify_tagged(&self, dscp: Option<u8>, tag: Option<(u8, bool)>) -> u8 {
        match (self.trust, dscp, tag) {
            (Trust::Dscp, Some(d), _) => self.dscp_to_tc[d as usize],
            (_, _, Some((p, false))) => self.dot1p_to_tc[p as usize],
            (_, _, Some((p, true))) => self.dei_to_tc[p as usize],
            _ => 0,
        }
    }

    /// PGs that carry a PFC-enabled priority: the lossless ones.
    pub fn lossless_pgs(&self) -> u8 {
        priorities_in(self.pfc_enable).fold(0, |m, t| m | 1 << self.tc_to_pg[t])
    }

    /// Queues that carry a PFC-enabled priority: the lossless ones.
    pub fn lossless_queues(&self) -> u8 {
        priorities_in(self.pfc_enable).fold(0, |m, t| m | 1 << self.tc_to_queue[t])
    }
}

/// An ECMP / DLB group member: the port and the next hop's MAC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextHop {
    /// Egress port index.
    pub port: u16,
    /// MAC of the next hop.
    pub mac: [u8; 6],
}

/// How a group picks a member.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GroupMode {
    /// 5-tuple hash (mixed with the switch's hash seed) modulo the member count (ECMP);
    /// the flows of a member whose link is down move to the members that are up.
    #[default]
    Hash,
    /// Dynamic load balancing: each new flowlet of a flow takes the member of the best
    /// quality band (SAI ARS `FLOWLET_QUALITY`); see [`FlowletConfig`].
    Flowlet,
    /// A random member per packet (random packet spraying, SAI ARS `PER_PACKET_RANDOM`):
    /// even load, but packets of one flow take paths of different delay and reorder.
    PerPacket,
    /// Always the first member whose link is up.
    Fixed,
}

impl Named for GroupMode {
    const WORDS: &'static [(&'static str, GroupMode)] = &[
        ("hash", GroupMode::Hash),
        ("flowlet", GroupMode::Flowlet),
        ("per_packet", GroupMode::PerPacket),
        ("fixed", GroupMode::Fixed),
    ];
}

/// Flowlet (dynamic load balancing) settings of a group, SAI ARS semantics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowletConfig {
    /// A flow idle longer than this starts a new flowlet, free to take another member
    /// (set it above the path-delay skew, typically half an RTT, to avoid reordering).
    pub idle_time: Time,
    /// Entries of the flow table; when every entry is held by an active flow, a new flow
    /// falls back to the hash (counted as `table_full`).
    pub max_flows: u32,
    /// Past load is an EWMA of the bytes a member sent per interval of this length.
    pub sampling_interval: Time,
}

impl Default for FlowletConfig {
    /// SAI ARS's example values: a 256 µs idle gap, 512 flow-table entries, 16 µs samples.
    fn default() -> Self {
        FlowletConfig {
            idle_time: Time::from_us(256),
            max_flows: 512,
            sampling_interval: Time::from_us(16),
        }
    }
}

/// A next-hop group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// Name for reports.
    pub name: String,
    /// Member selection.
    pub mode: GroupMode,
    /// Members.
    pub members: Vec<NextHop>,
    /// Flowlet settings (`Some` exactly when `mode` is flowlet).
    pub flowlet: Option<FlowletConfig>,
}

/// Where a route sends packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteTarget {
    /// One next hop.
    NextHop(NextHop),
    /// A group, by index.
    Group(u16),
}

/// An L3 route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    /// Destination prefix (IPv4 addresses are mapped into ::ffff:0:0/96).
    pub prefix: u128,
    /// Prefix length over the 128-bit form.
    pub len: u8,
    /// Target.
    pub target: RouteTarget,
}

/// Map an IPv4 address into the 128-bit space routes use.
pub fn v4_key(a: [u8; 4]) -> u128 {
    0xFFFF_0000_0000u128 | u32::from_be_bytes(a) as u128
}

/// Forwarding mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Forwarding {
    /// VLAN-aware MAC learning and flooding.
    L2 {
        /// Static FDB entries (vid, MAC, port).
        static_fdb: Vec<(u16, [u8; 6], u16)>,
        /// Maximum learned entries.
        fdb_size: usize,
        /// Learned entries age out this long after last seen (0: never).
        fdb_aging: Time,
    },
    /// Longest-prefix-match routing.
    L3 {
        /// Routes.
        routes: Vec<Route>,
        /// Next-hop groups.
        groups: Vec<Group>,
    },
}

impl Forwarding {
    /// Learned FDB entries an L2 switch keeps at most, unless told.
    pub const DEFAULT_FDB_SIZE: usize = 16_384;
    /// A learned entry ages out this long after its MAC was last seen (SONiC's 600 s).
    pub const DEFAULT_FDB_AGING: Time = Time::from_ms(600_000);
}

impl Default for Forwarding {
    /// L2 learning and flooding with the default table size and aging.
    fn default() -> Self {
        Forwarding::L2 {
            static_fdb: Vec::new(),
            fdb_size: Self::DEFAULT_FDB_SIZE,
            fdb_aging: Self::DEFAULT_FDB_AGING,
        }
    }
}

/// Everything one switch needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchConfig {
    /// Switch name.
    pub name: String,
    /// Ports, index = port number.
    pub ports: Vec<PortConfig>,
    /// Time from the last bit in to the earliest first bit out.
    pub pipeline_latency: Time,
    /// Buffer cell size.
    pub cell: Bytes,
    /// Pools.
    pub pools: Vec<PoolSpec>,
    /// Profile of each (port, PG), port by port ([`SwitchConfig::pg_profile`]).
    pub pg_profiles: Vec<ProfileSpec>,
    /// Profile of each (port, queue), port by port ([`SwitchConfig::queue_profile`]).
    pub queue_profiles: Vec<ProfileSpec>,
    /// QoS maps, PFC, scheduler, WRED, watchdog.
    pub qos: QosConfig,
    /// Forwarding.
    pub forwarding: Forwarding,
    /// Seed of the switch's RNG (WRED).
    pub seed: u64,
    /// The MMU's ASIC choices: where the crossing packet goes, which limit XON follows.
    pub mmu: lossless_buffer_model::mmu::Behaviour,
    /// Buffer slices (one by default).
    pub slices: lossless_buffer_model::mmu::Slices,
    /// Each port's shared headroom, when its lossless PGs share one (NVIDIA Spectrum with a
    /// shared headroom pool; empty: headroom per PG).
    pub port_headroom: Vec<lossless_buffer_model::mmu::PortHeadroom>,
    /// ACL tables (none by default), rules in lookup order.
    pub acl: Vec<crate::acl::AclTable>,
    /// Packet trimming (none by default: refused frames are dropped).
    pub trimming: Option<Trimming>,
    /// A P4 program in front of the traffic manager (none: the fixed SONiC pipeline).
    pub p4: Option<crate::p4::P4Spec>,
}

/// Packet trimming (SONiC `SWITCH_TRIMMING|GLOBAL`): a frame the buffer refuses on a queue
/// that trims is dropped, and a copy of its first `size` bytes, its DSCP rewritten, goes
/// to the trim queue of the same port (docs/physics.md, "Packet trimming").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trimming {
    /// Bytes of the frame kept, FCS included (SAI's default 128); shorter frames are
    /// sent whole, re-marked.
    pub size: u32,
    /// The DSCP the copy carries.
    pub dscp: TrimDscp,
    /// The queue the copy goes to.
    pub queue: TrimQueue,
}

impl Trimming {
    /// SAI's default trim size.
    pub const DEFAULT_SIZE: u32 = 128;
    /// The smallest trim size: Ethernet, two VLAN tags, IPv6, UDP and the RoCEv2 BTH, with
    /// the FCS (14 + 8 + 40 + 8 + 12 + 4).
    pub const MIN_SIZE: u32 = 86;
}

/// Which DSCP a trimmed copy carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrimDscp {
    /// This one, whatever the egress port (symmetric).
    Value(u8),
    /// The egress port's `tc_to_dscp` of this traffic class (asymmetric: a receiver can
    /// tell which port trimmed).
    FromTc(u8),
}

/// Which queue a trimmed copy goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrimQueue {
    /// This queue.
    Queue(u8),
    /// The queue its new DSCP classifies to (DSCP → TC → queue).
    Dynamic,
}

impl SwitchConfig {
    /// Seed of a switch whose scenario gives none.
    pub const DEFAULT_SEED: u64 = 1;
    /// Last bit in to earliest first bit out, unless told.
    pub const DEFAULT_PIPELINE_LATENCY: Time = Time::from_ns(500);

    /// A switch `name` with `ports` and every other setting at its default: 500 ns from
    /// last bit in to first bit out, the default QoS and forwarding, and the built-in
    /// Tomahawk-like buffer plan ([`crate::default_plan`]) for those ports.
    pub fn with_ports(name: &str, ports: Vec<PortConfig>) -> SwitchConfig {
        let qos = QosConfig::default();
        let plan = crate::default_plan::plan(&ports, &qos);
        SwitchConfig {
            name: name.into(),
            ports,
            pipeline_latency: Self::DEFAULT_PIPELINE_LATENCY,
            cell: plan.cell,
            pools: plan.pools,
            pg_profiles: plan.pg_profiles.into_iter().map(|(p, _)| p).collect(),
            queue_profiles: plan.queue_profiles.into_iter().map(|(p, _)| p).collect(),
            qos,
            forwarding: Forwarding::default(),
            seed: Self::DEFAULT_SEED,
            mmu: Default::default(),
            slices: Default::default(),
            port_headroom: Vec::new(),
            acl: Vec::new(),
            trimming: None,
            p4: None,
        }
    }

    /// The buffer profile of ingress PG `pg` of `port`.
    pub fn pg_profile(&self, port: usize, pg: usize) -> &ProfileSpec {
        &self.pg_profiles[port * PRIORITIES + pg]
    }

    /// The link protocol port `port` speaks: its own, or the switch's.
    pub fn flow_control_of(&self, port: usize) -> FlowControl {
        self.ports[port]
            .flow_control
            .unwrap_or(self.qos.flow_control)
    }

    /// The buffer profile of egress queue `queue` of `port`.
    pub fn queue_profile(&self, port: usize, queue: usize) -> &ProfileSpec {
        &self.queue_profiles[port * PRIORITIES + queue]
    }

    /// `n` default ports at `speed`, named `Ethernet0…`, MACs from [`DEFAULT_MAC`].
    pub fn default_ports(n: usize, speed: Rate) -> Vec<PortConfig> {
        (0..n)
            .map(|i| PortConfig {
                name: format!("Ethernet{i}"),
                speed,
                mac: crate::wire::addr::MacAddr(DEFAULT_MAC)
                    .offset(i)
                    .expect("a switch's ports fit above the default MAC")
                    .0,
                ..PortConfig::default()
            })
            .collect()
    }
}
