//! The YAML schema as written by users: every value that needs a semantic check keeps its
//! source location (`Spanned`), unknown keys are errors (`deny_unknown_fields`). Nothing
//! here is interpreted; the resolvers turn it into typed configuration.
//!
//! A key that takes one word of a closed list is a `Val<String>` here and names its list in
//! its comment; the list is a `Named` type — in its domain crate (`Trust`, `MarkAt`, `Ecn`,
//! …) or, for words only the file has, in [`super::words`] — so that the resolver can still
//! say which file, line and key held a word off the list.

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::collections::BTreeMap;

/// A scalar given as a number or a string (`1248`, `"16MB"`, `100G`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Scalar {
    /// An integer.
    Int(i64),
    /// A float (e.g. `0.5`).
    Float(f64),
    /// Anything else, as text.
    Str(String),
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Float(x) => write!(f, "{x}"),
            Scalar::Str(s) => write!(f, "{s}"),
        }
    }
}

/// A value with its YAML location.
pub type Val<T> = Spanned<T>;

/// A scenario file. The switch model reads `switches`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Scenario name.
    pub name: Option<Val<String>>,
    /// Seed of every random choice.
    pub seed: Option<Val<u64>>,
    /// Virtual-time length of a run.
    pub duration: Option<Val<Scalar>>,
    /// Switches.
    pub switches: Val<Vec<SwitchRaw>>,
    /// Simulated hosts (`lossless run`).
    pub hosts: Option<Vec<Val<HostRaw>>>,
    /// Switch-to-switch links.
    pub links: Option<Vec<Val<LinkRaw>>>,
    /// Traffic.
    pub flows: Option<Vec<Val<FlowRaw>>>,
    /// Collectives (AllReduce, all-to-all) among simulated hosts, over RC.
    pub collectives: Option<Vec<Val<CollectiveRaw>>>,
    /// Scheduled events.
    pub events: Option<Vec<Val<EventRaw>>>,
    /// Output files.
    pub outputs: Option<Val<OutputsRaw>>,
    /// Measurement window of throughput, utilisation, pause fractions and latency.
    pub measure: Option<Val<MeasureRaw>>,
    /// How long a cycle of PFC-paused queues must stand before it is reported a deadlock.
    pub deadlock_time: Option<Val<Scalar>>,
}

/// `measure: {from, to}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasureRaw {
    /// Start of the window (default 0).
    pub from: Option<Val<Scalar>>,
    /// End of the window (default: the end of the run).
    pub to: Option<Val<Scalar>>,
}

/// A simulated host.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostRaw {
    /// Name.
    pub name: Val<String>,
    /// `switch:Port` it is cabled to.
    pub attach: Val<String>,
    /// MAC (default 02:00:00:00:xx:yy from its index).
    pub mac: Option<Val<String>>,
    /// IPv4 address (default 198.18.x.y from its index).
    pub ip: Option<Val<String>>,
    /// NIC behaviour.
    pub nic: Option<Val<NicRaw>>,
    /// Probability that a frame is corrupted on the host's link, each direction.
    pub frame_error_rate: Option<Val<f64>>,
}

/// NIC settings.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NicRaw {
    /// `honor` or `ignore`.
    pub pfc: Option<Val<String>>,
    /// Response delay to PFC.
    pub pfc_response: Option<Val<Scalar>>,
    /// Bounded receive buffer.
    pub rx_buffer: Option<Val<Scalar>>,
    /// Drain rate of the receive buffer.
    pub drain: Option<Val<Scalar>>,
    /// XOFF level of the receive buffer.
    pub pfc_xoff: Option<Val<Scalar>>,
    /// XON level of the receive buffer.
    pub pfc_xon: Option<Val<Scalar>>,
    /// DCQCN on this NIC (`{}` for the paper's parameters).
    pub dcqcn: Option<Val<DcqcnRaw>>,
}

/// DCQCN parameters of a NIC; each defaults to the SIGCOMM 2015 paper's value.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DcqcnRaw {
    /// α gain g, in (0, 1].
    pub g: Option<Val<f64>>,
    /// α decay period K.
    pub alpha_timer: Option<Val<Scalar>>,
    /// Rate-increase timer T.
    pub rate_timer: Option<Val<Scalar>>,
    /// Rate-increase byte counter B.
    pub byte_counter: Option<Val<Scalar>>,
    /// Fast-recovery steps F.
    pub fast_recovery: Option<Val<i64>>,
    /// Additive increase R_AI.
    pub rai: Option<Val<Scalar>>,
    /// Hyper increase R_HAI.
    pub rhai: Option<Val<Scalar>>,
    /// Lowest rate a cut reaches.
    pub min_rate: Option<Val<Scalar>>,
    /// At most one CNP per queue pair per this interval (notification point).
    pub cnp_interval: Option<Val<Scalar>>,
    /// DSCP of CNPs.
    pub cnp_dscp: Option<Val<i64>>,
}

/// A switch-to-switch link.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkRaw {
    /// `switch:Port`.
    pub a: Val<String>,
    /// `switch:Port`.
    pub b: Val<String>,
    /// Cable length.
    pub cable: Option<Val<Scalar>>,
    /// Fixed one-way delay.
    pub delay: Option<Val<Scalar>>,
    /// Probability that a frame is corrupted on the wire, each direction.
    pub frame_error_rate: Option<Val<f64>>,
}

/// A VLAN tag on generated frames.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VlanRaw {
    /// VLAN id.
    pub vid: Val<i64>,
    /// PCP.
    pub pcp: Option<Val<i64>>,
}

/// A flow.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct FlowRaw {
    pub name: Option<Val<String>>,
    pub src: Val<String>,
    pub dst: Val<String>,
    pub protocol: Option<Val<String>>,
    pub dscp: Option<Val<i64>>,
    pub ecn: Option<Val<String>>,
    pub frame: Option<Val<Scalar>>,
    pub pattern: Option<Val<String>>,
    pub rate: Option<Val<Scalar>>,
    pub on: Option<Val<Scalar>>,
    pub off: Option<Val<Scalar>>,
    pub size: Option<Val<Scalar>>,
    pub packets: Option<Val<u64>>,
    pub start: Option<Val<Scalar>>,
    pub stop: Option<Val<Scalar>>,
    pub vlan: Option<Val<VlanRaw>>,
    pub priority: Option<Val<i64>>,
    pub src_port: Option<Val<u16>>,
    pub dst_port: Option<Val<u16>>,
    /// `open_loop` or `rc`.
    pub transport: Option<Val<String>>,
    /// RC queue-pair settings.
    pub rc: Option<Val<RcRaw>>,
    /// RC: number of messages of `message_size`.
    pub messages: Option<Val<u64>>,
    /// RC: payload bytes per message.
    pub message_size: Option<Val<Scalar>>,
}

/// `flows[].rc`: RC queue-pair settings.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RcRaw {
    /// ACK every N in-order packets (and at each message end).
    pub ack_every: Option<Val<u64>>,
    /// `go_back_n` or `selective`.
    pub recovery: Option<Val<String>>,
    /// Local ACK timeout.
    pub rto: Option<Val<Scalar>>,
    /// Timeouts in a row before the QP errors out (0–7).
    pub retry_count: Option<Val<u64>>,
    /// DSCP of ACKs and NAKs (default: the flow's).
    pub ack_dscp: Option<Val<i64>>,
}

/// `collectives[]`: one collective among some hosts.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectiveRaw {
    /// Name in reports (default `collective<index>`).
    pub name: Option<Val<String>>,
    /// `allreduce` or `alltoall`.
    pub kind: Val<String>,
    /// AllReduce algorithm: `ring`.
    pub algorithm: Option<Val<String>>,
    /// Its hosts, in rank order (the ring's order).
    pub hosts: Val<Vec<Val<String>>>,
    /// Bytes of each rank's buffer.
    pub size: Val<Scalar>,
    /// Back-to-back iterations.
    pub iterations: Option<Val<u64>>,
    /// When the first iteration starts.
    pub start: Option<Val<Scalar>>,
    /// DSCP of its frames.
    pub dscp: Option<Val<i64>>,
    /// Frame length of a full data packet.
    pub frame: Option<Val<Scalar>>,
    /// `rc`.
    pub transport: Option<Val<String>>,
    /// RC queue-pair settings of every QP.
    pub rc: Option<Val<RcRaw>>,
}

/// A scheduled event.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventRaw {
    /// Virtual time.
    pub at: Val<Scalar>,
    /// `switch:Port` or a host name.
    pub port: Val<String>,
    /// `enable` / `disable` the transmitter.
    pub tx: Option<Val<String>>,
    /// `up` / `down` the link.
    pub link: Option<Val<String>>,
    /// Deliver a frame as if just received on the port.
    pub inject: Option<Val<InjectRaw>>,
    /// A host's new receive-drain rate (0: it stops reading, a stuck receiver).
    pub drain: Option<Val<Scalar>>,
    /// Lose the next N data frames the port transmits (corrupted on the wire).
    pub drop: Option<Val<u64>>,
}

/// A frame to inject.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InjectRaw {
    /// PFC frame: priority → quanta.
    pub pfc: Option<Val<BTreeMap<String, Val<i64>>>>,
    /// Raw frame bytes in hex (from the destination MAC, no FCS).
    pub hex: Option<Val<String>>,
    /// Declared length of the hex frame, FCS included (default: bytes + 4).
    pub len: Option<Val<Scalar>>,
}

/// `outputs:`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputsRaw {
    /// JSON report path.
    pub json: Option<Val<String>>,
    /// pcap capture.
    pub pcap: Option<Val<PcapRaw>>,
    /// CSV time series.
    pub timeseries: Option<Val<TimeseriesRaw>>,
}

/// pcap capture settings.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcapRaw {
    /// `switch:Port` list.
    pub ports: Vec<Val<String>>,
    /// Bytes kept per frame.
    pub snaplen: Option<Val<u32>>,
    /// Directory for the files.
    pub dir: Option<Val<String>>,
}

/// Time-series settings.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeseriesRaw {
    /// `interval` (a row every `interval`) or `change` (a row when a value changes).
    pub sample: Option<Val<String>>,
    /// Sampling interval (with `sample: interval`).
    pub interval: Option<Val<Scalar>>,
    /// `switch:Port` or host names to record (default: all).
    pub ports: Option<Vec<Val<String>>>,
    /// Priorities to record (default: 0–7).
    pub priorities: Option<Vec<Val<i64>>>,
    /// Start of the recorded window.
    pub from: Option<Val<Scalar>>,
    /// End of the recorded window.
    pub to: Option<Val<Scalar>>,
    /// `long` (a row per node, port, priority) or `wide` (a row per sample).
    pub format: Option<Val<String>>,
    /// CSV path.
    pub csv: Option<Val<String>>,
}

/// One switch.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchRaw {
    /// Name (used in `switch:Ethernet0` references).
    pub name: Val<String>,
    /// Ports: `{count, speed, ...}` or a list of ports.
    pub ports: Val<PortsRaw>,
    /// Base MAC: port i uses base + i (default 02:4c:4c:ii:ii:00 from the switch's index).
    pub mac: Option<Val<String>>,
    /// Last bit in → earliest first bit out.
    pub pipeline_latency: Option<Val<Scalar>>,
    /// Buffer plan (defaults to a Tomahawk-like plan).
    pub buffer: Option<Val<BufferRaw>>,
    /// QoS maps, PFC, scheduler, WRED, watchdog.
    pub qos: Option<Val<QosRaw>>,
    /// Forwarding mode and tables.
    pub forwarding: Option<Val<ForwardingRaw>>,
}

/// `ports:` in either form.
#[derive(Debug)]
pub enum PortsRaw {
    /// `{count: 4, speed: 100G, ...}`: Ethernet0..Ethernet3.
    Uniform(Box<PortsUniform>),
    /// `[{tap: ll0, speed: 1G}, ...]`.
    List(Vec<Val<PortEntry>>),
}

/// Uniform port block.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortsUniform {
    /// Number of ports.
    pub count: Val<u32>,
    /// Speed of each.
    pub speed: Option<Val<Scalar>>,
    /// Cable length of each.
    pub cable: Option<Val<Scalar>>,
    /// Fixed one-way delay instead of a cable length.
    pub delay: Option<Val<Scalar>>,
    /// Largest frame, FCS included.
    pub mtu: Option<Val<Scalar>>,
    /// TAP device name prefix (`lossless tap`): `ll` → ll0, ll1, ...
    pub tap_prefix: Option<Val<String>>,
}

/// One port in the list form.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortEntry {
    /// Port name (default `Ethernet<i>`).
    pub name: Option<Val<String>>,
    /// TAP device (`lossless tap`).
    pub tap: Option<Val<String>>,
    /// Speed.
    pub speed: Option<Val<Scalar>>,
    /// Cable length.
    pub cable: Option<Val<Scalar>>,
    /// Fixed one-way delay instead of a cable length.
    pub delay: Option<Val<Scalar>>,
    /// Largest frame, FCS included.
    pub mtu: Option<Val<Scalar>>,
}

impl<'de> Deserialize<'de> for PortsRaw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PortsRaw;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map {count, speed, cable, mtu} or a list of ports")
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<PortsRaw, A::Error> {
                PortsUniform::deserialize(de::value::MapAccessDeserializer::new(m))
                    .map(|u| PortsRaw::Uniform(Box::new(u)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, s: A) -> Result<PortsRaw, A::Error> {
                Vec::deserialize(de::value::SeqAccessDeserializer::new(s)).map(PortsRaw::List)
            }
        }
        d.deserialize_any(V)
    }
}

/// `buffer:`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferRaw {
    /// Cell size.
    pub cell: Option<Val<Scalar>>,
    /// Total memory, checked against Σ pools + reservations + headroom.
    pub total: Option<Val<Scalar>>,
    /// Pools by name.
    pub pools: Val<BTreeMap<String, Val<PoolRaw>>>,
    /// Profiles by name.
    pub profiles: Val<BTreeMap<String, Val<ProfileRaw>>>,
    /// PG range → profile name, for every port.
    #[serde(default)]
    pub pg: BTreeMap<String, Val<String>>,
    /// Queue range → profile name, for every port.
    #[serde(default)]
    pub queue: BTreeMap<String, Val<String>>,
}

/// A pool.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolRaw {
    /// `ingress` or `egress`.
    #[serde(rename = "type")]
    pub kind: Val<String>,
    /// Shared size.
    pub size: Val<Scalar>,
    /// `static` or `dynamic`.
    pub mode: Option<Val<String>>,
    /// Shared headroom pool size (ingress lossless pools).
    pub xoff: Option<Val<Scalar>>,
}

/// A buffer profile.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileRaw {
    /// Pool name.
    pub pool: Val<String>,
    /// Reserved bytes.
    pub size: Option<Val<Scalar>>,
    /// α = 2^dynamic_th.
    pub dynamic_th: Option<Val<i64>>,
    /// Static shared limit.
    pub static_th: Option<Val<Scalar>>,
    /// Headroom (lossless PGs).
    pub xoff: Option<Val<Scalar>>,
    /// XON absolute level.
    pub xon: Option<Val<Scalar>>,
    /// XON offset below the limit.
    pub xon_offset: Option<Val<Scalar>>,
}

/// `qos:`.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct QosRaw {
    /// `dscp` or `dot1p`.
    pub trust: Option<Val<String>>,
    /// DSCP → TC (`default` for the rest).
    pub dscp_to_tc: Option<Val<BTreeMap<String, Val<i64>>>>,
    /// PCP → TC.
    pub dot1p_to_tc: Option<Val<BTreeMap<String, Val<i64>>>>,
    /// TC → PG.
    pub tc_to_pg: Option<Val<BTreeMap<String, Val<i64>>>>,
    /// TC → queue.
    pub tc_to_queue: Option<Val<BTreeMap<String, Val<i64>>>>,
    /// TC → PCP rewritten at egress.
    pub tc_to_dot1p: Option<Val<BTreeMap<String, Val<i64>>>>,
    /// PFC-enabled priorities.
    pub pfc_enable: Option<Val<Vec<Val<i64>>>>,
    /// `on`: honour received PFC on every priority, send it only for `pfc_enable`.
    pub pfc_asym: Option<Val<String>>,
    /// `pfc` (per priority) or `pause` (802.3x, the whole link).
    pub flow_control: Option<Val<String>>,
    /// Quanta in XOFF frames.
    pub pause_quanta: Option<Val<i64>>,
    /// How long after a PFC frame the switch may still start frames.
    pub pfc_response: Option<Val<Scalar>>,
    /// Queue range → scheduler entry.
    pub scheduler: Option<Val<BTreeMap<String, Val<SchedRaw>>>>,
    /// WRED profiles by name.
    pub wred_profiles: Option<Val<BTreeMap<String, Val<WredRaw>>>>,
    /// Queue range → WRED profile name.
    pub queue_wred: Option<Val<BTreeMap<String, Val<String>>>>,
    /// PFC watchdog.
    pub pfcwd: Option<Val<PfcwdRaw>>,
}

/// A scheduler entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedRaw {
    /// `strict` or `dwrr`.
    #[serde(rename = "type")]
    pub kind: Val<String>,
    /// DWRR weight.
    pub weight: Option<Val<i64>>,
}

/// A WRED profile (SONiC `WRED_PROFILE` keys).
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct WredRaw {
    pub green_min: Option<Val<Scalar>>,
    pub green_max: Option<Val<Scalar>>,
    pub green_drop_probability: Option<Val<i64>>,
    pub yellow_min: Option<Val<Scalar>>,
    pub yellow_max: Option<Val<Scalar>>,
    pub yellow_drop_probability: Option<Val<i64>>,
    pub red_min: Option<Val<Scalar>>,
    pub red_max: Option<Val<Scalar>>,
    pub red_drop_probability: Option<Val<i64>>,
    pub wred_green_enable: Option<Val<bool>>,
    pub wred_yellow_enable: Option<Val<bool>>,
    pub wred_red_enable: Option<Val<bool>>,
    pub ecn: Option<Val<String>>,
    pub mark_at: Option<Val<String>>,
}

/// `pfcwd:`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PfcwdRaw {
    /// `drop`, `forward` or `alert`.
    pub action: Option<Val<String>>,
    /// Storm must last this long.
    pub detection_time: Option<Val<Scalar>>,
    /// Quiet this long to restore.
    pub restoration_time: Option<Val<Scalar>>,
    /// Poll period.
    pub polling_interval: Option<Val<Scalar>>,
}

/// `forwarding:`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForwardingRaw {
    /// `l2` or `l3`.
    pub mode: Val<String>,
    /// L2: learned entries kept at most.
    pub fdb_size: Option<Val<u64>>,
    /// L2: a learned entry ages out this long after its MAC was last seen (0: never).
    pub fdb_aging: Option<Val<Scalar>>,
    /// L2: static entries.
    pub fdb: Option<Vec<Val<FdbRaw>>>,
    /// L3 routes.
    pub routes: Option<Vec<Val<RouteRaw>>>,
    /// L3 next-hop groups.
    pub groups: Option<BTreeMap<String, Val<GroupRaw>>>,
}

/// A static FDB entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FdbRaw {
    /// MAC address.
    pub mac: Val<String>,
    /// Port name.
    pub port: Val<String>,
    /// VLAN (0 = untagged).
    pub vlan: Option<Val<u16>>,
}

/// A route: to a port + next-hop MAC, or to a group.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteRaw {
    /// `198.18.1.0/24` or an IPv6 prefix.
    pub prefix: Val<String>,
    /// Egress port name.
    pub port: Option<Val<String>>,
    /// Next hop's MAC (`lossless run`: default, whatever is cabled to the port).
    pub mac: Option<Val<String>>,
    /// Group name.
    pub group: Option<Val<String>>,
}

/// A next-hop group.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupRaw {
    /// `hash`, `flowlet`, `per_packet` or `fixed`.
    pub mode: Option<Val<String>>,
    /// Members.
    pub members: Vec<Val<MemberRaw>>,
    /// Flowlet: a flow idle longer than this starts a new flowlet.
    pub idle_time: Option<Val<Scalar>>,
    /// Flowlet: flow-table entries.
    pub max_flows: Option<Val<u64>>,
    /// Flowlet: past-load sampling interval.
    pub sampling_interval: Option<Val<Scalar>>,
}

/// A group member.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemberRaw {
    /// Port name.
    pub port: Val<String>,
    /// Next hop's MAC (`lossless run`: default, whatever is cabled to the port).
    pub mac: Option<Val<String>>,
}
