//! The report of a run as data: the keys of docs/architecture.md, "Configuration and reports" (a contract — tests and users read
//! them; keys may be added, none renamed) plus the additions each engine makes. Both
//! engines fill these structs (`json.rs` fills the parts they share), and the text
//! report is rendered from the JSON so the two never disagree.

use lossless_buffer_model::PRIORITIES;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

mod collective;
mod endpoints;
mod link;

pub use collective::*;
pub use endpoints::*;
pub use link::*;

/// A whole report.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Scenario (or switch) name.
    pub name: String,
    /// Seed in use.
    pub seed: u64,
    /// Virtual time simulated (TAP: wall time served), ps.
    pub sim_time_ps: u64,
    /// The measurement window.
    pub measure: MeasureReport,
    /// Wall-clock seconds the run took.
    pub wall_time_s: f64,
    /// Events processed (TAP: pipeline wake-ups).
    pub events: u64,
    /// Threads the simulator ran the fabric on (text report only, like nothing else that
    /// depends on the machine: the JSON is the same for every count; 0 for the TAP switch).
    #[serde(skip)]
    pub threads: usize,
    /// Frames carried over links, one per hop (simulator).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packet_hops: Option<u64>,
    /// Totals over the network.
    pub totals: Totals,
    /// The simulator's own counters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<EngineReport>,
    /// Per switch.
    pub switches: Vec<SwitchReport>,
    /// Per flow (simulator).
    pub flows: Vec<FlowReport>,
    /// Per host NIC (simulator).
    pub hosts: Vec<HostReport>,
    /// Per collective (simulator, scenarios with `collectives:`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub collectives: Vec<CollectiveReport>,
    /// Per link, both directions: host links, then switch-to-switch links (simulator).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkReport>,
    /// The PFC deadlock indicator (simulator, scenarios with switch-to-switch links).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadlocks: Option<DeadlocksReport>,
    /// The LLR stall indicator (simulator, scenarios with an LLR port that has neither a
    /// replay timer nor a data age timeout: a lost NACK stalls its link for good).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llr_stalls: Option<LlrStallsReport>,
    /// Files written besides the JSON report (simulator).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outputs: Option<OutputsReport>,
    /// The TAP engine's accounting (`lossless tap`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tap: Option<TapReport>,
    /// The run was stopped before its end (simulator: Ctrl-C); the report covers the
    /// virtual time simulated until then (`sim_time_ps`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<InterruptedReport>,
}

/// A run stopped before its end.
#[derive(Clone, Debug, Serialize)]
pub struct InterruptedReport {
    /// What stopped it: the signal's name (SIGINT for Ctrl-C, SIGTERM, SIGHUP).
    pub by: String,
    /// The end it was going to, ps (None: it was to run until the network was idle).
    pub planned_end_ps: Option<u64>,
}

impl Report {
    /// As a JSON value (keys sorted, as every report has been written).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("a report serializes")
    }
}

/// The window rates and fractions cover.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct MeasureReport {
    /// Start, ps.
    pub from_ps: u64,
    /// End, ps.
    pub to_ps: u64,
}

/// Totals over the network.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Totals {
    /// Frames dropped anywhere (a frame the wire corrupted, dropped by its receiver's
    /// FCS check, is in `injected_drops` instead).
    pub drops: u64,
    /// Frames of lossless PGs dropped by a switch MMU: must be 0.
    pub lossless_drops: u64,
    /// PFC frames sent by switches and hosts.
    #[serde(rename = "pfc_tx_frames")]
    pub pfc_tx: u64,
    /// PFC frames received by switches and hosts.
    #[serde(rename = "pfc_rx_frames")]
    pub pfc_rx: u64,
    /// PFC frames sent and not yet received when the run ended.
    #[serde(rename = "pfc_in_flight_frames")]
    pub pfc_in_flight: u64,
    /// Frames marked CE.
    #[serde(rename = "ecn_marked")]
    pub ecn: u64,
    /// 802.3x PAUSE frames sent by switches and hosts.
    pub pause_tx_frames: u64,
    /// Frames lost on the wire on purpose (link error rates, `drop` events); not in `drops`.
    pub injected_drops: u64,
    /// Frames still queued in the switches when the run ended (sent, not yet received:
    /// why a flow's `tx_packets` can exceed its `rx_packets` with nothing dropped).
    pub queued_at_end_frames: u64,
}

/// The simulator's own counters.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct EngineReport {
    /// Frames sent out of a port with nothing cabled to it.
    pub unconnected_drops: u64,
    /// Frames lost because their link was down.
    pub link_down_drops: u64,
    /// Data frames a host NIC dropped.
    pub host_drops: u64,
    /// Data frames that reached a host other than their flow's destination.
    pub misdelivered: u64,
    /// Deadlines that did not advance (never expected).
    pub stalls: u64,
}

/// One switch.
#[derive(Clone, Debug, Serialize)]
pub struct SwitchReport {
    /// Name.
    pub name: String,
    /// Per port.
    pub ports: Vec<PortReport>,
    /// Per pool.
    pub pools: Vec<PoolReport>,
    /// Drops by reason (nonzero only).
    pub drops_by_reason: BTreeMap<String, u64>,
    /// Frames of lossless PGs dropped by the MMU.
    pub lossless_drops: u64,
    /// Packet trimming, its ports' summed, on a switch that trims.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trim: Option<Counters<lossless_pipeline::counters::PortTrimCounters>>,
    /// Where every received frame went.
    pub ledger: LedgerReport,
    /// The L2 forwarding database (null in L3 mode).
    pub fdb: Option<FdbReport>,
    /// Next-hop groups (L3), in configuration order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupReport>,
    /// ACL rules with their counters (SONiC `aclshow -a`), table by table in name order,
    /// each table's rules in lookup order; absent when the switch has no ACL.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub acl: Vec<AclRuleReport>,
    /// The switch's P4 program: its tables, counters and registers (absent: the fixed
    /// pipeline).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p4: Option<P4Report>,
}

/// A switch's P4 program as it ran.
#[derive(Clone, Debug, Serialize)]
pub struct P4Report {
    /// The program's file, as the scenario names it.
    pub program: String,
    /// What its queue depths count: packets, cells or bytes.
    pub queue_depth: &'static str,
    /// Each table: entries, look-ups that hit and missed.
    pub tables: Vec<P4TableReport>,
    /// Each counter array's nonzero cells: index, packets, bytes.
    pub counters: BTreeMap<String, Vec<(usize, u64, u64)>>,
    /// Each register array's nonzero cells: index, value (as a decimal string: cells are
    /// up to 128 bits).
    pub registers: BTreeMap<String, Vec<(usize, String)>>,
    /// Counter and register indices past their array's end (ignored, as BMv2 does).
    pub out_of_range: u64,
}

/// One table of a P4 program.
#[derive(Clone, Debug, Serialize)]
pub struct P4TableReport {
    pub name: String,
    pub entries: usize,
    pub hits: u64,
    pub misses: u64,
    /// Its direct counter's name, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direct_counter: Option<String>,
    /// The direct counter's nonzero cells: entry (in the order added), frames, bytes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub entry_counts: Vec<(usize, u64, u64)>,
}

/// One ACL rule and what it matched.
#[derive(Clone, Debug, Serialize)]
pub struct AclRuleReport {
    /// Table name.
    pub table: String,
    /// Rule name.
    pub rule: String,
    /// Priority (larger wins).
    pub priority: u32,
    /// `forward` or `drop`.
    pub action: &'static str,
    /// Frames it matched (as its table's winner).
    pub packets: u64,
    /// Their bytes, FCS included.
    pub bytes: u64,
}

/// A next-hop group: how evenly it spread traffic, and its flowlet counters.
#[derive(Clone, Debug, Serialize)]
pub struct GroupReport {
    /// Name.
    pub name: String,
    /// `hash`, `flowlet`, `per_packet` or `fixed`.
    pub mode: &'static str,
    /// Per member.
    pub members: Vec<GroupMemberReport>,
    /// Busiest member's bytes over the mean, in the window (1 = even; null: no traffic).
    pub balance: Option<f64>,
    /// Flowlets started (flowlet mode).
    pub flowlets: u64,
    /// Flowlets that moved a flow to another member.
    pub reassignments: u64,
    /// New flows that found the flow table full and used the hash.
    pub table_full: u64,
}

/// One member of a group.
#[derive(Clone, Debug, Serialize)]
pub struct GroupMemberReport {
    /// Egress port.
    pub port: String,
    /// Packets sent to it (whole run).
    pub packets: u64,
    /// Bytes sent to it (whole run).
    pub bytes: u64,
    /// Bytes sent to it in the window.
    pub window_bytes: u64,
}

/// A link, both directions (simulator).
#[derive(Clone, Debug, Serialize)]
pub struct LinkReport {
    /// One end: `switch:port`, or a host name.
    pub a: String,
    /// The other end.
    pub b: String,
    /// Fraction of the window a→b was busy.
    pub a_to_b_utilization: f64,
    /// Fraction of the window b→a was busy.
    pub b_to_a_utilization: f64,
    /// Frames lost a→b on the wire on purpose (error rate, `drop` events).
    pub a_to_b_injected_drops: u64,
    /// Frames lost b→a on the wire on purpose.
    pub b_to_a_injected_drops: u64,
}

/// One port.
#[derive(Clone, Debug, Serialize)]
pub struct PortReport {
    /// Name.
    pub port: String,
    /// Line rate.
    pub speed_bps: u64,
    /// Link up at the end.
    pub link_up: bool,
    /// Frames received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Frames received whose FCS check failed (corrupted on the wire).
    pub rx_bad_fcs: u64,
    /// Frames sent (PFC included).
    pub tx_packets: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Fraction of the window the transmitter was busy.
    pub tx_utilization: f64,
    /// PFC counters.
    pub pfc: PfcReport,
    /// Per egress queue.
    pub queues: Vec<QueueReport>,
    /// Per ingress PG.
    pub pgs: Vec<PgReport>,
    /// PFC watchdog storms, per queue that had one.
    pub pfcwd: Vec<WatchdogReport>,
    /// Credit-based flow control, on a port that speaks it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cbfc: Option<CbfcReport>,
    /// Link-level retry, on a port that speaks it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llr: Option<LlrReport>,
    /// Packet trimming, its queues' summed (`SAI_PORT_STAT_*TRIM*`), on a switch that
    /// trims.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trim: Option<Counters<lossless_pipeline::counters::PortTrimCounters>>,
}

/// What the deadlock indicator watched for and found.
#[derive(Clone, Debug, Serialize)]
pub struct DeadlocksReport {
    /// How long a cycle of paused queues had to stand, ps.
    pub deadlock_time_ps: u64,
    /// The deadlocks found, in the order found.
    pub found: Vec<DeadlockReport>,
    /// The run (one waiting for idle) stopped at a deadlock that no watchdog could break.
    pub stopped_run: bool,
}

/// What the LLR stall indicator found.
#[derive(Clone, Debug, Serialize)]
pub struct LlrStallsReport {
    /// The stalls found, in the order found.
    pub found: Vec<LlrStallReport>,
    /// The run (one waiting for idle) stopped at a stall that no event of the scenario
    /// could end.
    pub stopped_run: bool,
}

/// One LLR link direction stalled for good: the receiver sent a NACK and waits for the
/// replay; the sender, which replays only on a NACK, never got it (or its replay was lost).
#[derive(Clone, Debug, Serialize)]
pub struct LlrStallReport {
    /// The port holding the frames, `switch:Port` or a host.
    pub sender: String,
    /// The port waiting for the replay.
    pub receiver: String,
    /// When the receiver's NACK went out (or the sender last moved, if later), ps.
    pub since_ps: u64,
    /// When the indicator saw that no replay could be on its way, ps.
    pub detected_ps: u64,
}

/// One PFC deadlock: a cycle of egress queues, each paused by the switch of the next.
#[derive(Clone, Debug, Serialize)]
pub struct DeadlockReport {
    /// The waits of the cycle, `switch:Port` with the queue, e.g. `s1:Ethernet2 q3`.
    pub cycle: Vec<String>,
    /// Since when no queue of the cycle has started a frame, ps.
    pub formed_ps: u64,
    /// When the indicator fired (formed + deadlock_time), ps.
    pub detected_ps: u64,
    /// When a queue of the cycle moved again or emptied, ps (null: it never cleared).
    pub cleared_ps: Option<u64>,
}

/// PFC counters of a port (`pfcstat`).
#[derive(Clone, Debug, Serialize)]
pub struct PfcReport {
    /// XOFF sent, per priority.
    pub tx_xoff: [u64; PRIORITIES],
    /// XON sent, per priority.
    pub tx_xon: [u64; PRIORITIES],
    /// XOFF received, per priority.
    pub rx_xoff: [u64; PRIORITIES],
    /// XON received, per priority.
    pub rx_xon: [u64; PRIORITIES],
    /// Time paused by received PFC, per priority, ps (whole run).
    pub rx_pause_ps: [u64; PRIORITIES],
    /// Fraction of the window paused, per priority.
    pub rx_pause_fraction: [f64; PRIORITIES],
    /// PFC frames sent.
    pub tx_frames: u64,
    /// PFC frames received and acted on.
    pub rx_frames: u64,
    /// When the port started its first XOFF for each priority, ps (null: never).
    pub first_tx_xoff_ps: [Option<u64>; PRIORITIES],
    /// When the port started its last XON for each priority, ps (null: never).
    pub last_tx_xon_ps: [Option<u64>; PRIORITIES],
    /// When the port started its last XOFF (or refresh) for each priority, ps (null: never).
    pub last_tx_xoff_ps: [Option<u64>; PRIORITIES],
    /// 802.3x PAUSE frames sent (a port speaking PAUSE instead of PFC).
    pub pause_tx_frames: u64,
    /// 802.3x PAUSE frames received and acted on.
    pub pause_rx_frames: u64,
}

/// An egress queue (`queuestat`, `watermarkstat`).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct QueueReport {
    /// Queue index.
    pub queue: usize,
    /// Frames sent.
    pub tx_packets: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Frames dropped at this queue.
    pub drop_packets: u64,
    /// Bytes dropped at this queue.
    pub drop_bytes: u64,
    /// Frames marked CE.
    pub ecn_marked: u64,
    /// Non-ECT frames WRED dropped.
    pub wred_drops: u64,
    /// Peak occupancy, bytes.
    pub watermark_bytes: u64,
    /// Peak shared occupancy, bytes.
    pub shared_watermark_bytes: u64,
    /// Packet trimming (`SAI_QUEUE_STAT_*TRIM*`), on a switch that trims.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub trim: Option<Counters<lossless_pipeline::counters::QueueTrimCounters>>,
}

/// An ingress priority group.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct PgReport {
    /// PG index.
    pub pg: usize,
    /// Lossless (has headroom, sends PFC).
    pub lossless: bool,
    /// Peak shared use, bytes.
    pub shared_watermark_bytes: u64,
    /// Peak headroom use, bytes.
    pub headroom_watermark_bytes: u64,
    /// Frames refused at ingress.
    pub drop_packets: u64,
}

/// A PFC watchdog's work on one queue.
#[derive(Clone, Debug, Serialize)]
pub struct WatchdogReport {
    /// Queue index.
    pub queue: usize,
    /// Storms detected.
    pub storms: u64,
    /// Storms restored.
    pub restorations: u64,
    /// Frames the drop action discarded.
    pub dropped_packets: u64,
    /// When the first storm was detected (the poll that saw it), ps.
    pub first_storm_ps: Option<u64>,
    /// When the queue was last restored, ps (null: still stormed at the end).
    pub last_restored_ps: Option<u64>,
    /// Each storm (the first 64): when it was detected and restored, ps (null: never).
    pub history_ps: Vec<(u64, Option<u64>)>,
}

/// A pool (in a sliced buffer: one slice's share of it).
#[derive(Clone, Debug, Serialize)]
pub struct PoolReport {
    /// Name.
    pub name: String,
    /// The slice this share belongs to (only when the buffer has slices).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slice: Option<usize>,
    /// Shared size, bytes.
    pub size_bytes: u64,
    /// Peak shared use, bytes.
    pub watermark_bytes: u64,
    /// Shared headroom pool size, bytes (0: none).
    pub headroom_size_bytes: u64,
    /// Peak shared headroom pool use, bytes.
    pub headroom_watermark_bytes: u64,
}

/// Where every received frame went (see `lossless_pipeline::counters::Ledger`).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct LedgerReport {
    /// Frames received.
    pub received: u64,
    /// PFC frames acted on.
    pub consumed: u64,
    /// Dropped before forwarding.
    pub dropped_on_receive: u64,
    /// Forwarded toward at least one port.
    pub forwarded: u64,
    /// Egress copies.
    pub copies: u64,
    /// Copies refused before a queue.
    pub refused: u64,
    /// Copies queued.
    pub queued: u64,
    /// Queued copies sent.
    pub sent: u64,
    /// Queued copies dropped from their queue.
    pub dropped_from_queue: u64,
    /// Copies still queued at the end.
    pub still_queued: u64,
}

/// The L2 forwarding database.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct FdbReport {
    /// Learned entries in force at the end.
    pub learned_entries: usize,
    /// Learned entries that aged out.
    pub aged_out: u64,
    /// Learned entries flushed by a link going down.
    pub flushed: u64,
    /// Learn attempts refused, the table being full.
    pub full_misses: u64,
}

/// Files written besides the JSON report.
#[derive(Clone, Debug, Serialize)]
pub struct OutputsReport {
    /// pcap files, one per captured port.
    pub pcap: Vec<PathBuf>,
    /// The CSV time series.
    pub timeseries: Option<PathBuf>,
    /// The PFC event log (JSON lines), when written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc_log: Option<PathBuf>,
    /// Directories the run created for its files (none but under the paths the scenario
    /// names, or `--out-dir`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub created_dirs: Vec<PathBuf>,
    /// The time series stopped at its row cap (2,000,000 rows) before the run ended.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub timeseries_cut: bool,
}

/// What `lossless tap` did with every frame it read and wrote.
#[derive(Clone, Debug, Serialize)]
pub struct TapReport {
    /// Frames read from the ports' devices (TAPs and interfaces).
    pub read_frames: u64,
    /// Frames written to them.
    pub written_frames: u64,
    /// Frames that could not be written (link down, TAP gone).
    pub write_errors: u64,
    /// Frames dropped because a writer's queue was full.
    pub write_overruns: u64,
    /// Frames still in the switch's queues when it stopped.
    pub queued_at_exit: u64,
    /// Frames the hosts had sent that were still in the ports' kernel queues or rings,
    /// unread, when the switch stopped (counted after the kernel's counters were read).
    pub unread_at_exit: u64,
    /// Frames hosts sent into full rings: a TAP's (the kernel's `tx_dropped` on the
    /// host's side) or an interface socket's receive ring.
    pub kernel_ring_drops: u64,
    /// Frames from interfaces too long to read whole (super-frames over 64 KB: a host
    /// that raised its `gso_max_size`), dropped.
    pub oversize_frames: u64,
    /// Super-frames read from TAPs and interfaces (a host's segmentation offload) and cut
    /// into the frames a NIC would send: each is one of `read_frames`.
    pub segmented_frames: u64,
    /// The frames they were cut into, each a frame a switch port received.
    pub segments: u64,
    /// Frames the switch wrote that the hosts' kernels dropped.
    pub host_rx_drops: u64,
    /// Per port.
    pub ports: Vec<TapPortReport>,
    /// Devices that went away.
    pub ports_gone: Vec<String>,
    /// Most bytes the pipeline thread read from one port in one round (its read queue:
    /// frames read but not yet through the switch).
    pub max_read_queue_bytes: usize,
    /// Times a port's link went down or came back.
    pub link_changes: u64,
    /// Times an interface port that was gone was attached again (an interface of its name
    /// appeared: a container restarted with new veths).
    pub reattached: u64,
    /// The pipeline thread ran with real-time priority.
    pub realtime: bool,
    /// How the pipeline thread's turns were spaced: a stall detector.
    pub turns: TurnsReport,
}

/// The pipeline thread's turns (wait, read the ports, run the switch, write): gaps between
/// them, and waits that overran what was asked. A wait is at most 50 ms; a longer gap, or
/// a wait overrun, is the machine not running the switch (a host stall, a virtual CPU
/// taken away), not the switch having nothing to do.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TurnsReport {
    /// Turns taken.
    pub turns: u64,
    /// Longest time between the starts of two turns, µs.
    pub gap_max_us: u64,
    /// Sum of the gaps, µs.
    pub gap_sum_us: u64,
    /// Gaps by length: turns whose gap was at most `le_us` (and above the bucket before);
    /// the last bucket (`le_us` null) holds longer gaps.
    pub gap_histogram: Vec<TurnGapBucket>,
    /// Longest a wait ran past what it asked for, µs.
    pub overslept_max_us: u64,
    /// Waits that ran 1 ms or more past what they asked for.
    pub stalls: u64,
}

/// One bucket of the turn-gap histogram.
#[derive(Clone, Debug, Serialize)]
pub struct TurnGapBucket {
    /// Upper bound of the gap, µs (null: longer than every other bucket).
    pub le_us: Option<u64>,
    /// Turns whose gap fell in this bucket.
    pub turns: u64,
}

/// One port's device.
#[derive(Clone, Debug, Serialize)]
pub struct TapPortReport {
    /// Switch port name.
    pub port: String,
    /// `tap` (a TAP the switch created), `iface` (an interface that existed, a host
    /// behind it) or `link` (an interface that existed, another switch behind it).
    pub device: &'static str,
    /// The TAP's name, for a TAP port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tap: Option<String>,
    /// The interface's name, for an interface port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iface: Option<String>,
    /// `up`, `link_down` or `gone`.
    pub state: &'static str,
    /// Frames read.
    pub read_frames: u64,
    /// Frames written.
    pub written_frames: u64,
    /// Frames that could not be written.
    pub write_errors: u64,
    /// Frames dropped on a full writer queue.
    pub write_overruns: u64,
    /// Frames from an interface too long to read whole (super-frames over 64 KB), dropped.
    pub oversize_frames: u64,
    /// Super-frames read (a host's segmentation offload: one read of up to 64 KB) and cut
    /// into the frames a NIC would send: each is one of `read_frames`.
    pub segmented_frames: u64,
    /// The frames they were cut into: the switch port received `read_frames` −
    /// `segmented_frames` + `segments` − `ordered_set_frames_read` frames.
    pub segments: u64,
    /// Frames read that carried what Ultra Ethernet sends as control ordered sets
    /// (CF_Update, LLR's messages; `link` ports): in `read_frames`, not among the
    /// switch port's received frames.
    pub ordered_set_frames_read: u64,
    /// Frames written that carried control ordered sets: in `written_frames`, not among
    /// the switch port's sent frames.
    pub ordered_set_frames_written: u64,
    /// Frames the port's link-level retry sent again (LLR replays, its
    /// `tx_replayed_frames`): each a write (or a failed or overrun one), not among the
    /// switch port's sent frames again. The port sent `written_frames` −
    /// `ordered_set_frames_written` − `replayed_frames` + `write_errors` +
    /// `write_overruns` frames.
    #[serde(default)]
    pub replayed_frames: u64,
    /// An interface's frames its kernel took in (counted) but discarded before the
    /// switch's socket saw them, at exit: its count less those read, lost in the full
    /// ring, too long and left unread (at least this many). Linux drops a frame whose
    /// 802.1Q tag is cut short (fewer than 4 bytes of tag and 2 of EtherType after the MAC
    /// addresses) as it takes the tag off, before any packet socket; a TAP hands such a
    /// frame over, and the switch counts it as `truncated_vlan`. 0 on a TAP, and while
    /// the switch runs.
    #[serde(default)]
    pub kernel_discards: u64,
    /// Frames whose TCP or UDP checksum the sender left to offload, completed on the way
    /// in (segments cut from a super-frame not included: every one gets its checksum).
    pub checksums_completed: u64,
    /// The kernel's counters of the device as the host sees it, as last read (null:
    /// never read). For an interface: counted from when the switch attached, and
    /// `host_tx_dropped` is its socket's full-ring drops.
    pub kernel: Option<KernelReport>,
    /// Times this interface port was attached again after it was gone.
    pub reattached: u64,
    /// Frames the host had sent that were still in the device's kernel queue or ring,
    /// unread, when the switch stopped: in `kernel.host_tx_packets` (when sent before the
    /// counters' last reading), not in `read_frames`.
    pub unread_at_exit: u64,
}

/// A TAP's counters as its host's kernel keeps them.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct KernelReport {
    /// Frames the host sent into the TAP.
    pub host_tx_packets: u64,
    /// Frames the host sent into a full ring.
    pub host_tx_dropped: u64,
    /// Frames the host received from the TAP.
    pub host_rx_packets: u64,
    /// Frames the switch wrote that the host's kernel dropped.
    pub host_rx_dropped: u64,
}
