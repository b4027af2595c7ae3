//! What a simulated run is given and what it counts of itself: the command line's options
//! ([`RunOptions`]), the engine's own counters ([`EngineStats`]) and why a run could not
//! start or stopped ([`SimError`]).

use lossless_buffer_model::Time;
use std::path::PathBuf;

/// Options from the command line.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Override the scenario's seed.
    pub seed: Option<u64>,
    /// Override the scenario's duration.
    pub duration: Option<Time>,
    /// Override where pcap files go (all switch ports when the scenario names none).
    pub pcap_dir: Option<PathBuf>,
    /// Record samples for plots at this interval (`--plot`).
    pub record: Option<Time>,
    /// Record only in this window (`--plot-window`); default the whole run.
    pub record_window: Option<(Time, Time)>,
    /// Record at most this many samples (`--plot`).
    pub max_plot_samples: usize,
    /// Write every switch's PFC events here as JSON lines (`--pfc-log`).
    pub pfc_log: Option<PathBuf>,
    /// How many threads the fabric runs on (`--threads`, `--force-threads`). The outcome
    /// is the same for every count.
    pub threads: Threads,
    /// Directories created for this run's files before it started (the report lists them
    /// with those the run creates).
    pub created: crate::outdir::Created,
}

/// How many threads a run takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Threads {
    /// As many as pay off ([`super::threads::auto`]).
    #[default]
    Auto,
    /// This many where they can pay off, else one, said in [`super::Sim::threads_note`]
    /// (`--threads N`).
    Asked(usize),
    /// This many, whatever they cost (`--threads N --force-threads`; a benchmark's).
    Exactly(usize),
}

/// Where a run stands, handed to the caller of [`super::Sim::run`] now and then (every
/// 65,536 events).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tick {
    /// Virtual time reached.
    pub now: Time,
    /// When the run ends (None: when the network is idle).
    pub end: Option<Time>,
}

/// Whether a run goes on after a [`Tick`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Go {
    /// Go on.
    On,
    /// Stop here: the run ends at the time reached, and its report says it was interrupted.
    Stop,
}

/// Counters of the engine itself.
#[derive(Clone, Debug, Default)]
pub struct EngineStats {
    /// Events processed.
    pub events: u64,
    /// Frames carried over a link (one per hop).
    pub packet_hops: u64,
    /// Frames sent out of a port with nothing cabled to it.
    pub unconnected_drops: u64,
    /// Frames lost because their link was down when they arrived.
    pub link_down_drops: u64,
    /// Data frames that reached a host other than their flow's destination.
    pub misdelivered: u64,
    /// Data frames dropped by a host NIC (receive buffer full, unparseable).
    pub host_drops: u64,
    /// Deadlines that did not advance (a model bug if ever nonzero).
    pub stalls: u64,
    /// PFC frames on a link at the end of the run (sent, not yet received).
    pub pfc_in_flight: u64,
    /// Wall-clock seconds the run took.
    pub wall_time_s: f64,
    /// Threads the fabric ran on.
    pub threads: usize,
}

impl EngineStats {
    /// Add the counts of one share of the fabric (`pfc_in_flight` wraps: a share may have
    /// received more PFC frames than it sent).
    pub fn add(&mut self, share: &EngineStats) {
        self.events += share.events;
        self.packet_hops += share.packet_hops;
        self.unconnected_drops += share.unconnected_drops;
        self.link_down_drops += share.link_down_drops;
        self.stalls += share.stalls;
        self.pfc_in_flight = self.pfc_in_flight.wrapping_add(share.pfc_in_flight);
    }
}

/// Why a run could not start, or stopped.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// Nothing bounds the run.
    #[error("{0}")]
    Unbounded(String),
    /// The scenario leaves something to the cabling that the cabling does not give.
    #[error("{0}")]
    Config(crate::config::Diag),
    /// An output file could not be created or written.
    #[error("{}", output_error(.path, .source))]
    Output {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// `path: error`, unless the error names the path already.
fn output_error(path: &std::path::Path, e: &std::io::Error) -> String {
    let text = e.to_string();
    if text.starts_with(&path.display().to_string()) {
        text
    } else {
        format!("{}: {text}", path.display())
    }
}
