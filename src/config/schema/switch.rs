//! The schema of `switches[]`: ports, buffer, QoS, forwarding.

use super::*;

/// One switch.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchRaw {
    /// Name (used in `switch:Ethernet0` references).
    pub name: Val<String>,
    /// Ports: `{count, speed, ...}` or a list of ports (required unless `sonic` gives them).
    pub ports: Option<Val<PortsRaw>>,
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
    /// ACL tables by name (SONiC `ACL_TABLE`, each with its `ACL_RULE`s).
    pub acl: Option<Val<BTreeMap<String, Val<AclTableRaw>>>>,
    /// UE credit-based flow control of the ports that speak it (`flow_control: cbfc`).
    pub cbfc: Option<Val<CbfcRaw>>,
    /// Packet trimming (SONiC `SWITCH_TRIMMING`).
    pub trimming: Option<Val<TrimmingRaw>>,
    /// UE link-level retry on some ports (SONiC `LLR_PORT` and `LLR_PROFILE`).
    pub llr: Option<Val<LlrRaw>>,
    /// Ports, buffer, QoS and ACLs from a SONiC `config_db.json`.
    pub sonic: Option<Val<SonicRaw>>,
    /// A P4 program (p4c's BMv2 JSON, v1model) in front of the traffic manager.
    pub p4: Option<Val<P4Raw>>,
    /// The file the switch's ports, buffer and QoS were imported from (set by the loader,
    /// never read from YAML): diagnostics of those parts name it.
    #[serde(skip)]
    pub imported_from: Option<String>,
}

/// `sonic:` — a config_db.json path, or the map form.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum SonicRaw {
    /// `sonic: config_db.json`.
    Path(Val<String>),
    /// `sonic: {file, ports, tap_prefix, asic, port_slices, pg_profile_lookup}`.
    Map(Box<SonicMapRaw>),
}

impl SonicRaw {
    /// The settings, the path form as a map with only `file`.
    pub fn settings(&self) -> SonicMapRaw {
        match self {
            SonicRaw::Path(f) => SonicMapRaw {
                file: f.clone(),
                ports: None,
                tap_prefix: None,
                asic: None,
                port_slices: None,
                pg_profile_lookup: None,
            },
            SonicRaw::Map(m) => (**m).clone(),
        }
    }
}

/// The map form of `sonic:`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SonicMapRaw {
    /// The config_db.json (relative to the scenario file).
    pub file: Val<String>,
    /// Ports to keep (default: every port of PORT).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ports: Option<Val<Vec<Val<String>>>>,
    /// Serve the ports as TAPs `<prefix>0`, `<prefix>1`, … (`lossless tap`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tap_prefix: Option<Val<String>>,
    /// The chip, instead of the one DEVICE_METADATA's HWSKU names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asic: Option<Val<String>>,
    /// The buffer slice of each kept port (`buffer.port_slices`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port_slices: Option<Val<Vec<Val<u32>>>>,
    /// The SKU's pg_profile_lookup.ini (relative to the scenario file): add the lossless
    /// PGs SONiC's buffermgrd would.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pg_profile_lookup: Option<Val<String>>,
}

impl<'de> Deserialize<'de> for SonicRaw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SonicRaw;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a config_db.json path or a map {file, ports, tap_prefix, asic, port_slices, pg_profile_lookup}")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SonicRaw, E> {
                Ok(SonicRaw::Path(serde_saphyr::Spanned::new(
                    v.to_string(),
                    serde_saphyr::Location::UNKNOWN,
                    serde_saphyr::Location::UNKNOWN,
                )))
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<SonicRaw, A::Error> {
                SonicMapRaw::deserialize(de::value::MapAccessDeserializer::new(m))
                    .map(|m| SonicRaw::Map(Box::new(m)))
            }
        }
        d.deserialize_any(V)
    }
}

/// An ACL table (SONiC `ACL_TABLE` keys, lower case) and its rules.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AclTableRaw {
    /// `L3`, `L3V6`, `L3V4V6` or `L2`: which match fields its rules may use.
    #[serde(rename = "type")]
    pub kind: Option<Val<String>>,
    /// `ingress` (the only stage modelled).
    pub stage: Option<Val<String>>,
    /// Ports it is bound to (default: every port).
    pub ports: Option<Val<Vec<Val<String>>>>,
    /// Rules by name (SONiC `ACL_RULE` keys, lower case).
    #[serde(default)]
    pub rules: BTreeMap<String, Val<AclRuleRaw>>,
}

/// An ACL rule: `priority`, match fields and actions (SONiC `ACL_RULE` keys, lower case).
/// A ternary field takes a number or `value/mask` (`0x11/0xff`).
#[derive(Debug, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct AclRuleRaw {
    /// Larger wins (0–999999).
    pub priority: Option<Val<i64>>,
    /// `forward` (default) or `drop`.
    pub packet_action: Option<Val<String>>,
    /// Re-class matching frames (their PG and queue follow).
    pub set_tc: Option<Val<i64>>,
    /// Rewrite matching frames' DSCP (SONiC `DSCP_ACTION`).
    pub set_dscp: Option<Val<i64>>,
    /// Ingress ports the rule applies to, within the table's.
    pub in_ports: Option<Val<Vec<Val<String>>>>,
    /// Source MAC, `aa:bb:cc:dd:ee:ff` or `mac/mask`.
    pub src_mac: Option<Val<String>>,
    /// Destination MAC.
    pub dst_mac: Option<Val<String>>,
    /// EtherType (`0x0800`).
    pub ether_type: Option<Val<Scalar>>,
    /// Outer VLAN id.
    pub vlan_id: Option<Val<Scalar>>,
    /// Outer VLAN PCP.
    pub pcp: Option<Val<Scalar>>,
    /// `any`, `ip`, `non_ip`, `ipv4any`, `non_ipv4`, `ipv6any` or `non_ipv6`.
    pub ip_type: Option<Val<String>>,
    /// IPv4 source prefix.
    pub src_ip: Option<Val<String>>,
    /// IPv4 destination prefix.
    pub dst_ip: Option<Val<String>>,
    /// IPv6 source prefix.
    pub src_ipv6: Option<Val<String>>,
    /// IPv6 destination prefix.
    pub dst_ipv6: Option<Val<String>>,
    /// IP protocol (IPv6: the upper-layer next header).
    pub ip_protocol: Option<Val<Scalar>>,
    /// IPv6 next header (the same field as `ip_protocol`).
    pub next_header: Option<Val<Scalar>>,
    /// DSCP.
    pub dscp: Option<Val<Scalar>>,
    /// Traffic class from the QoS maps.
    pub tc: Option<Val<Scalar>>,
    /// UDP/TCP source port.
    pub l4_src_port: Option<Val<Scalar>>,
    /// UDP/TCP destination port.
    pub l4_dst_port: Option<Val<Scalar>>,
    /// UDP/TCP source ports `lo-hi`.
    pub l4_src_port_range: Option<Val<String>>,
    /// UDP/TCP destination ports `lo-hi`.
    pub l4_dst_port_range: Option<Val<String>>,
    /// RoCEv2 BTH opcode (`0x81/0xff` for CNPs).
    pub bth_opcode: Option<Val<Scalar>>,
}

/// `ports:` in either form.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum PortsRaw {
    /// `{count: 4, speed: 100G, ...}`: Ethernet0..Ethernet3.
    Uniform(Box<PortsUniform>),
    /// `[{tap: ll0, speed: 1G}, ...]`.
    List(Vec<Val<PortEntry>>),
}

/// Uniform port block.
#[derive(Debug, Deserialize, Serialize)]
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
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PortEntry {
    /// Port name (default `Ethernet<i>`).
    pub name: Option<Val<String>>,
    /// TAP device `lossless tap` creates for this port.
    pub tap: Option<Val<String>>,
    /// Existing interface (a veth end, a NIC) `lossless tap` attaches to instead.
    pub iface: Option<Val<String>>,
    /// Existing interface cabled to another `lossless tap` switch (CBFC and LLR may run
    /// on it).
    pub link: Option<Val<String>>,
    /// Speed.
    pub speed: Option<Val<Scalar>>,
    /// Cable length.
    pub cable: Option<Val<Scalar>>,
    /// Fixed one-way delay instead of a cable length.
    pub delay: Option<Val<Scalar>>,
    /// Largest frame, FCS included.
    pub mtu: Option<Val<Scalar>>,
    /// This port's link protocol (`pfc`, `pause`, `cbfc`, `none`) instead of
    /// `qos.flow_control`.
    pub flow_control: Option<Val<String>>,
    /// This port's TC → DSCP map instead of `qos.tc_to_dscp` (trimming's `from_tc`).
    pub tc_to_dscp: Option<Val<BTreeMap<String, Val<i64>>>>,
}

/// `p4:` — a P4 program in front of the switch's traffic manager.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct P4Raw {
    /// p4c's BMv2 JSON (`p4c --target bmv2 --arch v1model`), relative to the scenario.
    pub program: Val<String>,
    /// Table entries: `simple_switch_CLI` commands, or a runtime JSON (`.json`).
    pub entries: Option<Val<String>>,
    /// `packets`, `cells` or `bytes`: what `enq_qdepth` and `deq_qdepth` count.
    pub queue_depth: Option<Val<String>>,
}

/// `trimming:` — SONiC `SWITCH_TRIMMING|GLOBAL`.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TrimmingRaw {
    /// Bytes kept of a trimmed frame, FCS included (default 128).
    pub size: Option<Val<Scalar>>,
    /// DSCP of trimmed frames: 0–63, or `from_tc` (the egress port's `tc_to_dscp[tc]`).
    pub dscp: Val<Scalar>,
    /// The traffic class `from_tc` looks up.
    pub tc: Option<Val<i64>>,
    /// Queue of trimmed frames: 0–7, or `dynamic` (their new DSCP's queue).
    pub queue: Val<Scalar>,
    /// Queues that trim on every port, where no buffer profile says so.
    pub queues: Option<Val<Vec<Val<i64>>>>,
}

/// `llr:` — UE link-level retry on some of a switch's ports, with one profile (SONiC
/// `LLR_PORT` and `LLR_PROFILE`).
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LlrRaw {
    /// LLR on (the default) or off, the profile kept (SONiC `llr_local`/`llr_remote`).
    pub enabled: Option<Val<bool>>,
    /// Ports that speak LLR (default: every port).
    pub ports: Option<Val<Vec<Val<String>>>>,
    /// Frames the replay buffer holds (default: what line rate needs).
    pub max_outstanding_frames: Option<Val<i64>>,
    /// Bytes the replay buffer holds (default: what line rate needs).
    pub max_outstanding_bytes: Option<Val<Scalar>>,
    /// Replay the buffer when no ACK made progress for this long (0: never; default
    /// twice the ACK round trip).
    pub replay_timer: Option<Val<Scalar>>,
    /// Replays without progress before a FLUSH (1–255, 255 = no limit; default 1).
    pub max_replay_count: Option<Val<i64>>,
    /// Bytes between two ACKs (400 B–16 KiB, default 2048 B).
    pub ctlos_spacing: Option<Val<Scalar>>,
    /// FLUSH when a frame waited this long in the buffer (0: never, the default).
    pub data_age_timeout: Option<Val<Scalar>>,
    /// FLUSH when the link was down this long (0: never, the default).
    pub pcs_lost_timeout: Option<Val<Scalar>>,
    /// What data frames get while the link initialises: `best_effort`, `block`, `discard`.
    pub init_action: Option<Val<String>>,
    /// What data frames get while the link is flushed: `best_effort`, `block`, `discard`.
    pub flush_action: Option<Val<String>>,
    /// Initialise again at once after a FLUSH (default true).
    pub re_init_on_flush: Option<Val<bool>>,
    /// Traffic classes whose frames are numbered and replayed (default: all).
    pub tcs: Option<Val<Vec<Val<i64>>>>,
}

/// `cbfc:` — UE credit-based flow control settings of a switch's CBFC ports.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CbfcRaw {
    /// Bytes one credit stands for (SAI default 128).
    pub credit_size: Option<Val<Scalar>>,
    /// Bytes added to a frame's length before it is costed (−16…127, default 0).
    pub packet_overhead: Option<Val<i64>>,
    /// Credited (lossless) virtual channels, 0–31 (default: those of `qos.pfc_enable`).
    pub vcs: Option<Val<Vec<Val<i64>>>>,
    /// Traffic class → virtual channel (SAI's TC → VC map; default TC n on VC n).
    pub tc_to_vc: Option<Val<BTreeMap<String, Val<i64>>>>,
    /// Credits the receiver has for each credited channel (default 1024).
    pub credits: Option<Val<i64>>,
    /// Credits of single channels, overriding `credits`: `{3: 2048}`.
    pub vc_credits: Option<Val<BTreeMap<String, Val<i64>>>>,
    /// `per_vc` or `per_port` sender limits.
    pub mode: Option<Val<String>>,
    /// Least spacing of CF_Updates (bytes at line rate, default 6400 B).
    pub cf_min_spacing: Option<Val<Scalar>>,
    /// Most spacing of a channel's CF_Updates (default 256 KiB).
    pub cf_max_spacing: Option<Val<Scalar>>,
    /// Period of CC_Updates (default 256 µs).
    pub cc_interval: Option<Val<Scalar>>,
    /// `periodic` or `on_demand`: whether updates that say nothing new go out at idle
    /// (default periodic; on_demand on a `link:` port of `lossless tap`).
    pub idle_updates: Option<Val<String>>,
}

impl<'de> Deserialize<'de> for PortsRaw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PortsRaw;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map {count, speed, cable, mtu, tap_prefix} or a list of ports")
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
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BufferRaw {
    /// The chip whose cell, slices and MMU choices apply (each key below overrides).
    pub asic: Option<Val<String>>,
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
    /// Where a lossless PG stores the packet that crosses its limit: `headroom` or
    /// `shared`.
    pub crossing_packet: Option<Val<String>>,
    /// The limit XON is measured from: `live` or `latched` (at XOFF).
    pub xon_limit: Option<Val<String>>,
    /// What an ingress pool's and a lossless profile's sizes count: `shared` (the pool's
    /// shared space; a profile's reserve, headroom apart) or `whole` (the whole ingress
    /// buffer, every PG's reserve and headroom inside it; a profile's size with its xoff).
    pub ingress_sizes: Option<Val<String>>,
    /// When an ingress PG's dynamic limit is tested: `after` the arriving packet is
    /// counted, or `before`.
    pub pg_admission: Option<Val<String>>,
    /// When an egress queue's dynamic limit is tested: `after` the arriving packet is
    /// counted, or `before`.
    pub queue_admission: Option<Val<String>>,
    /// Which side's limit a packet meets first: `ingress` (the PG's) or `egress` (the
    /// queue's).
    pub first_limit: Option<Val<String>>,
    /// How pool sizes round to whole cells: `down` or `up`.
    pub pool_cells: Option<Val<String>>,
    /// Whether a PG fills its reserve first (`reserve_first`) or its share of the pool
    /// (`shared_first`).
    pub pg_fill: Option<Val<String>>,
    /// What the chip keeps of each lossless PG's headroom (bytes).
    pub headroom_overhead: Option<Val<Scalar>>,
    /// Buffer slices (Tomahawk XPEs): each holds an equal share of every pool.
    pub slices: Option<Val<u32>>,
    /// The slice of each port, in port order (default: ports split evenly in order).
    pub port_slices: Option<Val<Vec<Val<u32>>>>,
}

/// A pool.
#[derive(Debug, Deserialize, Serialize)]
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
#[derive(Debug, Deserialize, Serialize)]
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
    /// What a queue with this profile does with a frame the buffer refuses: `drop` or
    /// `trim` (SONiC; lossy queues only).
    pub packet_discard_action: Option<Val<String>>,
}

/// `qos:`.
#[derive(Debug, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct QosRaw {
    /// `dscp` or `dot1p`.
    pub trust: Option<Val<String>>,
    /// DSCP → TC (`default` for the rest).
    pub dscp_to_tc: Option<Val<BTreeMap<String, Val<i64>>>>,
    /// PCP → TC.
    pub dot1p_to_tc: Option<Val<BTreeMap<String, Val<i64>>>>,
    /// PCP → TC of drop-eligible frames (DEI 1).
    pub dei_to_tc: Option<Val<BTreeMap<String, Val<i64>>>>,
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
    /// TC → DSCP map of every port (SONiC `TC_TO_DSCP_MAP`), for trimming's `from_tc`.
    pub tc_to_dscp: Option<Val<BTreeMap<String, Val<i64>>>>,
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
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SchedRaw {
    /// `strict` or `dwrr`.
    #[serde(rename = "type")]
    pub kind: Val<String>,
    /// DWRR weight.
    pub weight: Option<Val<i64>>,
}

/// A WRED profile (SONiC `WRED_PROFILE` keys).
#[derive(Debug, Deserialize, Serialize, Default)]
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
#[derive(Debug, Deserialize, Serialize)]
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
#[derive(Debug, Deserialize, Serialize)]
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
#[derive(Debug, Deserialize, Serialize)]
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
#[derive(Debug, Deserialize, Serialize)]
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
#[derive(Debug, Deserialize, Serialize)]
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
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MemberRaw {
    /// Port name.
    pub port: Val<String>,
    /// Next hop's MAC (`lossless run`: default, whatever is cabled to the port).
    pub mac: Option<Val<String>>,
}
