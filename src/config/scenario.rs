//! What a scenario file resolves to: typed, validated, defaulted — no strings past this
//! point except names for reports. The switches are what every engine needs; [`RunSpec`]
//! is what `lossless run` adds around them (hosts, links, flows, events, outputs, the
//! measurement window).

use crate::config::words::CsvFormat;
use crate::config::words::FaultKind;
use lossless_buffer_model::{Length, Rate, Time};
use lossless_pipeline::config::SwitchConfig;
use lossless_ports::collective::CollectiveKind;
use lossless_ports::flow::FlowSpec;
use lossless_ports::host::NicConfig;
use std::path::PathBuf;

/// A resolved scenario file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    /// Name (the file stem if not given).
    pub name: String,
    /// Seed.
    pub seed: u64,
    /// Run length, if given.
    pub duration: Option<Time>,
    /// Switches.
    pub switches: Vec<SwitchSpec>,
    /// Hosts, links, flows, events, outputs and the measurement window (`lossless run`).
    pub run: RunSpec,
}

/// The device behind a port in `lossless tap`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attach {
    /// A TAP device the switch creates (`tap:`), for a host to move into its namespace.
    Tap(String),
    /// An interface that already exists (`iface:`): a veth end, a NIC, with a host at
    /// its other end.
    Iface(String),
    /// An interface that already exists whose other end is another `lossless tap` switch
    /// (`link:`): a veth between two switches. CBFC and LLR may run on it, their messages
    /// carried in frames of EtherType 0x88B5 (docs/link-control.md).
    Link(String),
}

impl Attach {
    /// The device's name.
    pub fn name(&self) -> &str {
        match self {
            Attach::Tap(n) | Attach::Iface(n) | Attach::Link(n) => n,
        }
    }

    /// `tap`, `iface` or `link`, as the config key and the report say.
    pub fn kind(&self) -> &'static str {
        match self {
            Attach::Tap(_) => "tap",
            Attach::Iface(_) => "iface",
            Attach::Link(_) => "link",
        }
    }

    /// Is another switch at the other end (so that it may speak CBFC and LLR)?
    pub fn faces_switch(&self) -> bool {
        matches!(self, Attach::Link(_))
    }
}

/// One switch, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchSpec {
    /// What the pipeline needs.
    pub config: SwitchConfig,
    /// What `lossless tap` serves each port with, when named.
    pub attach: Vec<Option<Attach>>,
    /// Profile name per (port, PG), for reports.
    pub pg_profile_names: Vec<String>,
    /// Profile name per (port, queue), for reports.
    pub queue_profile_names: Vec<String>,
    /// The buffer plan was the built-in default.
    pub default_buffer: bool,
    /// The chip `buffer.asic` named (generic when none).
    pub asic: lossless_buffer_model::asic::Asic,
    /// Next hops given without `mac:`, until the cabling fills them in (`lossless run`).
    pub pending_macs: Vec<PendingMac>,
}

impl SwitchSpec {
    /// The profile name of ingress PG `pg` of `port`.
    pub fn pg_profile_name(&self, port: usize, pg: usize) -> &str {
        &self.pg_profile_names[port * lossless_buffer_model::PRIORITIES + pg]
    }

    /// The profile name of egress queue `queue` of `port`.
    pub fn queue_profile_name(&self, port: usize, queue: usize) -> &str {
        &self.queue_profile_names[port * lossless_buffer_model::PRIORITIES + queue]
    }
}

/// Where a next hop sits in a switch's L3 forwarding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HopAt {
    /// `routes[i]`.
    Route(usize),
    /// Member `member` of group `group` (configuration order).
    Member {
        /// Group index.
        group: usize,
        /// Member index.
        member: usize,
    },
}

/// A next hop whose MAC the file leaves out: in `lossless run` it is the MAC of the host
/// or switch port cabled to `port` (as a neighbour table would have it); elsewhere `error`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingMac {
    /// Which next hop.
    pub hop: HopAt,
    /// Its egress port.
    pub port: usize,
    /// What to say when nothing can fill it in (names file, line and key).
    pub error: super::Diag,
}

/// A switch port of a scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PortRef {
    /// Switch index.
    pub switch: usize,
    /// Port index on it.
    pub port: usize,
}

/// What `lossless run` adds around the switches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunSpec {
    /// Hosts.
    pub hosts: Vec<HostSpec>,
    /// Switch-to-switch links.
    pub links: Vec<LinkSpec>,
    /// Flows: the file's, then each collective's queue pairs.
    pub flows: Vec<FlowDef>,
    /// Collectives.
    pub collectives: Vec<CollectiveDef>,
    /// Events, in time order.
    pub events: Vec<EventSpec>,
    /// Output files.
    pub outputs: Outputs,
    /// Measurement window.
    pub measure: Measure,
    /// A cycle of paused queues standing this long is a PFC deadlock (the indicator).
    pub deadlock_time: Time,
}

/// A host, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSpec {
    /// Name.
    pub name: String,
    /// MAC.
    pub mac: [u8; 6],
    /// IPv4 address.
    pub ip: [u8; 4],
    /// The switch port it is cabled to.
    pub attach: PortRef,
    /// NIC settings.
    pub nic: NicConfig,
    /// Chance that a frame is lost on the host's link, each direction.
    pub frame_error_rate: ErrorRate,
}

/// A switch-to-switch link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkSpec {
    /// One end.
    pub a: PortRef,
    /// Other end.
    pub b: PortRef,
    /// One-way propagation.
    pub propagation: Time,
    /// The cable length the link gives (it replaces both ports' `cable`).
    pub cable: Option<Length>,
    /// The one-way delay the link gives instead of a cable.
    pub delay: Option<Time>,
    /// Chance that a frame is lost on the wire, each direction.
    pub frame_error_rate: ErrorRate,
}

/// The probability that a frame is corrupted on a link (its FCS fails and the receiver
/// drops it), held as a threshold on a uniform 64-bit draw: exact, comparable, and 0 for a
/// clean link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct ErrorRate(pub u64);

impl ErrorRate {
    /// A clean link.
    pub const NONE: ErrorRate = ErrorRate(0);

    /// The rate `p`, which must be in [0, 1).
    pub fn new(p: f64) -> ErrorRate {
        debug_assert!((0.0..1.0).contains(&p));
        ErrorRate((p * 18_446_744_073_709_551_616.0) as u64)
    }

    /// As a probability.
    pub fn probability(self) -> f64 {
        self.0 as f64 / 18_446_744_073_709_551_616.0
    }

    /// Is a frame with uniform draw `x` lost?
    pub fn loses(self, x: u64) -> bool {
        x < self.0
    }
}

/// A flow, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowDef {
    /// Generator settings and headers.
    pub spec: FlowSpec,
    /// Sending host index.
    pub src: usize,
    /// Receiving host index.
    pub dst: usize,
}

/// A collective, resolved: its ranks and the RC flows (queue pairs) that carry it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CollectiveDef {
    /// Name in reports.
    pub name: String,
    /// Which collective.
    pub kind: CollectiveKind,
    /// Host index of each rank, in rank order.
    pub hosts: Vec<usize>,
    /// Bytes of each rank's buffer.
    pub size: u64,
    /// Payload bytes of each message (size/N: a ring step, or one all-to-all block).
    pub chunk: u64,
    /// Back-to-back iterations.
    pub iterations: u64,
    /// When the first iteration starts.
    pub start: Time,
    /// Per rank: the flow ids it sends on and those it receives on.
    pub qps: Vec<(Vec<u32>, Vec<u32>)>,
}

/// Where a scheduled event acts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A switch port.
    Switch(PortRef),
    /// A host NIC.
    Host(usize),
}

/// What a scheduled event does, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Enable (true) or disable the transmitter of a switch port or a host NIC.
    Tx(Target, bool),
    /// Enable (true) or disable the dequeue of one egress queue of a switch port.
    QueueTx(PortRef, u8, bool),
    /// Bring the link at a switch port or a host up (true) or down: both ends.
    Link(Target, bool),
    /// Deliver a frame (bytes held, declared length) to a switch port as if received.
    Inject(PortRef, Vec<u8>, u32),
    /// Host `usize`'s software drains its receive buffer at this rate from now on (0: it
    /// stopped reading).
    Drain(usize, Rate),
    /// Frames the switch port or host transmits are lost on the wire or arrive corrupted
    /// (`drop: N` is the next N data frames, lost).
    Fault(Target, Fault),
}

/// What a wire fault does to the frames it hits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultFate {
    /// Gone whole: the receiver sees a gap, never the frame.
    Lost,
    /// Delivered with a bad FCS: the receiver sees it arrive bad (`rx_bad_fcs`).
    Corrupted,
}

/// Frames a port transmits that the wire loses or corrupts on purpose: from the event on,
/// the `nth` frame of `kind` and the `count − 1` of that kind after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// Which frames.
    pub kind: FaultKind,
    /// The first one hit is the nth of that kind sent from the event on (1: the next).
    pub nth: u64,
    /// How many in a row.
    pub count: u64,
    /// Lost or corrupted.
    pub fate: FaultFate,
}

impl Action {
    /// The switch port or host the event acts on.
    pub fn target(&self) -> Target {
        match *self {
            Action::Tx(t, _) | Action::Link(t, _) | Action::Fault(t, _) => t,
            Action::Inject(p, ..) | Action::QueueTx(p, ..) => Target::Switch(p),
            Action::Drain(h, _) => Target::Host(h),
        }
    }
}

/// A scheduled event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventSpec {
    /// When.
    pub at: Time,
    /// What, and where.
    pub action: Action,
}

/// pcap output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcapOut {
    /// Ports to capture.
    pub ports: Vec<PortRef>,
    /// Bytes kept per frame.
    pub snaplen: u32,
    /// Directory.
    pub dir: PathBuf,
}

/// Time-series output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeseriesOut {
    /// When a row is written.
    pub sample: Sampling,
    /// What is recorded: switch ports and host NICs, in file order.
    pub nodes: Vec<Target>,
    /// Bitmap of the priorities recorded.
    pub priorities: u8,
    /// Recorded window: from, and to (None: the end of the run).
    pub from: Time,
    /// End of the window.
    pub to: Option<Time>,
    /// Row layout.
    pub format: CsvFormat,
    /// CSV path.
    pub csv: PathBuf,
}

/// When the time series writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// A sample every interval, from the window's start.
    Every(Time),
    /// The state at the window's start, then at the end of every instant at which a
    /// recorded value changed (each change at the event that caused it).
    OnChange,
}

/// Output files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outputs {
    /// JSON report.
    pub json: Option<PathBuf>,
    /// pcap capture.
    pub pcap: Option<PcapOut>,
    /// CSV time series.
    pub timeseries: Option<TimeseriesOut>,
}

impl Outputs {
    /// Every relative path under `dir` (`--out-dir`).
    pub fn relocate(&mut self, dir: &std::path::Path) {
        let under = |p: &mut PathBuf| *p = crate::outdir::under(Some(dir), p);
        if let Some(j) = &mut self.json {
            under(j);
        }
        if let Some(p) = &mut self.pcap {
            under(&mut p.dir);
        }
        if let Some(t) = &mut self.timeseries {
            under(&mut t.csv);
        }
    }
}

/// The measurement window: throughput, utilisation, pause fractions and latency
/// percentiles are computed over `[from, to]` (steady state, without start-up transients).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Measure {
    /// Start of the window.
    pub from: Time,
    /// End of the window (None: the end of the run).
    pub to: Option<Time>,
}
