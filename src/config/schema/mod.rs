//! The YAML schema as written by users: every value that needs a semantic check keeps its
//! source location (`Spanned`), unknown keys are errors (`deny_unknown_fields`). Nothing
//! here is interpreted; the resolvers turn it into typed configuration.
//!
//! A key that takes one word of a closed list is a `Val<String>` here and names its list in
//! its comment; the list is a `Named` type — in its domain crate (`Trust`, `MarkAt`, `Ecn`,
//! …) or, for words only the file has, in [`super::words`] — so that the resolver can still
//! say which file, line and key held a word off the list.

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;
use std::collections::BTreeMap;

mod switch;

pub use switch::*;

/// A scalar given as a number or a string (`1248`, `"16MB"`, `100G`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
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
    /// When RC packets through the receive buffer are acknowledged (`placed`, `arrived`).
    pub rc_ack: Option<Val<String>>,
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
    pub ip: Option<Val<String>>,
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
    /// TCP settings.
    pub tcp: Option<Val<TcpRaw>>,
}

/// `flows[].tcp`: a TCP flow's settings.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpRaw {
    /// `reno`, `cubic` or `none`.
    pub congestion: Option<Val<String>>,
    /// Bytes of each socket buffer.
    pub buffer: Option<Val<Scalar>>,
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
    /// TCP settings of every connection (`transport: tcp`).
    pub tcp: Option<Val<TcpRaw>>,
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
    /// With `tx`: only this egress queue of a switch port (its dequeue), not the port.
    pub queue: Option<Val<i64>>,
    /// `up` / `down` the link.
    pub link: Option<Val<String>>,
    /// Deliver a frame as if just received on the port.
    pub inject: Option<Val<InjectRaw>>,
    /// A host's new receive-drain rate (0: it stops reading, a stuck receiver).
    pub drain: Option<Val<Scalar>>,
    /// Lose the next N data frames the port transmits (corrupted on the wire).
    pub drop: Option<Val<u64>>,
    /// Lose chosen frames the port transmits, whole (the receiver sees nothing).
    pub lose: Option<Val<FaultRaw>>,
    /// Corrupt chosen frames the port transmits (they arrive with a bad FCS).
    pub corrupt: Option<Val<FaultRaw>>,
}

/// Which frames a `lose` or `corrupt` event hits.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultRaw {
    /// Their kind: `data`, `cf_update`, `cc_update`, `llr_ack`, `llr_nack`, `llr_init`,
    /// `llr_init_echo`, `pfc`, `pause` or `any`.
    pub frames: Option<Val<String>>,
    /// The first one hit is the Nth of that kind the port sends from the event on.
    pub nth: Option<Val<i64>>,
    /// How many in a row, from that one.
    pub count: Option<Val<i64>>,
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
