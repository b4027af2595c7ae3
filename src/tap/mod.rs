//! `lossless tap`: the switch in wall-clock time. One pipeline thread owns the `Switch`
//! and runs it on the [wall-clock driver](crate::wallclock) against every port's
//! [`device`] (a TAP it created, or an existing interface such as a container's veth):
//! it waits on all of them at once for a frame or the switch's next deadline, takes what
//! is waiting from the ports in turn ([`rx`]), and drives the switch with `receive` and
//! `poll_due`; each port is shaped to its configured speed by the switch's own
//! transmitter model, with a bounded catch-up for late wake-ups. Control frames (PFC,
//! PAUSE, CBFC, LLR) and the few frames of a light turn are written by the pipeline
//! thread at once; under load a port's [`writer`] thread writes its batches (a TAP write
//! runs the receiving host's network stack inside the system call). [`ports`] is the
//! ports' side: reads, writes and link changes.
//!
//! Nothing is lost without a count: the TAPs' kernel rings and what a turn reads are
//! bounded ([`crate::cable`]), frames the kernel drops in a full ring are read from the
//! kernel's own counters (in whatever namespace the TAP was moved to; for an interface, its
//! socket's ring counters), a TAP whose link is down is probed without sending into it, an
//! interface's link and carrier are watched, and on exit the writers finish and are joined
//! before the report is made. With permission, the threads run with real-time priority so
//! that a busy machine does not stretch the cable.

pub mod device;
mod health;
pub mod live;
pub mod metrics;
mod ports;
mod report;
mod rx;
pub mod writer;

use crate::config::SwitchSpec;
use crate::wallclock::{Driver, Moderation, Pacing};
use device::Device;
use lossless_buffer_model::Time;
use lossless_pipeline::wire::link_control;
use lossless_pipeline::Switch;
use lossless_sys::sched::Realtime;
use ports::{PortDev, TapPorts};
use std::io::{self, Write};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How far back a late wake-up may date a backlogged frame: a bounded burst (81 frames of
/// 1518 B at 1G) that keeps a port at line rate when the OS wakes the pipeline late.
const CATCH_UP: Time = Time::from_ms(1);
/// How the pipeline thread waits. Idle, until the switch's next deadline or a frame's
/// arrival, at least 5 µs (a frame that becomes ready, pipeline latency, leaves almost on
/// time) and at most 50 ms (stop requests and stats lines are never later). Under load
/// (frames came in or went out in the last turn), it sleeps 100 µs and is not woken by
/// arrivals meanwhile: frames are handled in batches, as a NIC moderates its interrupts.
/// Every sleep and wake-up costs a context switch (tens of microseconds in a virtual
/// machine); frames sent late are dated back by the transmitter's catch-up, so shaping
/// stays exact, and frames that arrive wait at most that long (the cable of
/// [`crate::cable`] bounds what piles up). A light load ([`LIGHT_ROUND`] frames or fewer:
/// a ping, a request) is not batched: batching would only add the wait to its latency.
/// At most 256 frames are read in a turn before the switch transmits.
const PACING: Pacing = Pacing {
    min_wait: Duration::from_micros(5),
    max_wait: Duration::from_millis(50),
    slack: Duration::ZERO,
    moderation: Some(Moderation {
        busy_wait: Duration::from_micros(100),
        light_turn: LIGHT_ROUND,
    }),
    batch: 256,
};
/// Frames moved (taken plus started) in a turn at or below which the load counts as
/// light: the next wait ends when a frame is due, or when one arrives, and the turn's
/// frames are written by the pipeline thread (toward an idle writer).
const LIGHT_ROUND: usize = 4;
/// How often `--stats-json` appends a line when `--stats` does not say.
const STATS_JSON_EVERY: Duration = Duration::from_secs(1);
/// Real-time priority of the pipeline thread (below the I/O threads').
const PIPELINE_PRIORITY: i32 = 10;

/// Options of `lossless tap`.
#[derive(Clone, Debug, Default)]
pub struct TapOptions {
    /// Print a counters line this often.
    pub stats: Option<Duration>,
    /// Stop by itself after this long (tests, demos).
    pub duration: Option<Duration>,
    /// Real-time priority for the engine's threads.
    pub realtime: Realtime,
    /// Requests for live reports (`--metrics`).
    pub live: Option<Arc<live::Live>>,
    /// Append one JSON report line per stats interval here (`--stats-json`).
    pub stats_json: Option<std::path::PathBuf>,
}

/// What the engine knows of a port's device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortState {
    /// Frames go both ways.
    Up,
    /// The host has set the TAP down (a write failed), or the interface is down or has
    /// no carrier; asked every 100 ms whether it is up.
    LinkDown,
    /// The device is gone (deleted, or its namespace was; an interface moved away). A TAP
    /// is never used again; an interface is looked for by name every 100 ms and attached
    /// again when one of that name appears (a container restarted with new veths).
    Gone,
}

impl PortState {
    fn name(self) -> &'static str {
        match self {
            PortState::Up => "up",
            PortState::LinkDown => "link_down",
            PortState::Gone => "gone",
        }
    }
}

/// Why `lossless tap` could not start.
#[derive(Debug, thiserror::Error)]
pub enum TapError {
    /// A port has no device.
    #[error("port {0} has no device: give `ports: {{count, tap_prefix}}`, or `ports: [{{tap: NAME}}]` for a TAP the switch creates, or `ports: [{{iface: NAME}}]` for an interface that exists")]
    NoTapName(String),
    /// A TAP could not be opened.
    #[error("cannot open TAP `{name}`: {source} (needs root or CAP_NET_ADMIN and /dev/net/tun)")]
    Open {
        /// Device name.
        name: String,
        /// OS error.
        source: io::Error,
    },
    /// A link port speaks LLR over an interface whose MTU leaves no room for the header
    /// that numbers each frame.
    #[error("port {port} speaks LLR over `{name}`, whose MTU is {has}: LLR adds {header} bytes to every frame, so frames of the port's MTU ({mtu} B with the FCS) need an interface MTU of at least {need} on both ends of the link (ip link set {name} mtu {need})")]
    LlrMtu {
        /// Port name.
        port: String,
        /// Interface name.
        name: String,
        /// The interface's MTU.
        has: u32,
        /// The port's MTU (frame bytes, FCS included).
        mtu: u32,
        /// Bytes the LLR header adds.
        header: usize,
        /// The interface MTU needed.
        need: u32,
    },
    /// An interface could not be attached.
    #[error("cannot attach to interface `{name}`: {source}{hint}")]
    Attach {
        /// Interface name.
        name: String,
        /// OS error.
        source: io::Error,
        /// What may be wrong.
        hint: &'static str,
    },
    /// A thread could not be started, or real-time priority was required and refused.
    #[error("{0}")]
    System(io::Error),
}

/// Why a device would not open, with what may be wrong.
fn open_error(a: &crate::config::Attach, source: io::Error) -> TapError {
    let name = a.name().to_string();
    match a {
        crate::config::Attach::Tap(_) => TapError::Open { name, source },
        crate::config::Attach::Iface(_) | crate::config::Attach::Link(_) => {
            let hint = match source.kind() {
                io::ErrorKind::PermissionDenied => {
                    " (needs root, or CAP_NET_RAW and CAP_NET_ADMIN)"
                }
                _ => "",
            };
            TapError::Attach { name, source, hint }
        }
    }
}

/// An LLR port's interface must carry the port's largest frame plus the LLR header: its
/// MTU counts the bytes after the 14-byte Ethernet header, without the FCS.
fn check_llr_mtu(
    port: &lossless_pipeline::config::PortConfig,
    a: &crate::config::Attach,
) -> Result<(), TapError> {
    let header = link_control::LLR_DATA_HEADER;
    let need = port.mtu - 18 + header as u32;
    let has = lossless_sys::netdev::if_mtu(a.name()).map_err(|source| open_error(a, source))?;
    if has < need {
        return Err(TapError::LlrMtu {
            port: port.name.clone(),
            name: a.name().to_string(),
            has,
            mtu: port.mtu,
            header,
            need,
        });
    }
    Ok(())
}

/// A generation base for this process's CBFC INITs: the wall clock's nanoseconds and the
/// process id mixed, so that a switch started again is told from the one before.
fn generation_base() -> u32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let x = nanos ^ (u64::from(std::process::id()) << 32);
    (x ^ (x >> 32)) as u32
}

/// A running TAP switch.
pub struct TapSwitch {
    driver: Driver<Switch, TapPorts>,
    /// The pipeline thread runs with real-time priority.
    realtime: bool,
    out: Outputs,
}

/// Where stats lines go, while they can.
struct Outputs {
    /// stdout still takes stats lines (false once it is closed, e.g. `| head`).
    stats: bool,
    /// `--stats-json` lines can still be written.
    stats_json: bool,
    /// When the next stats line is due.
    next_stats: Option<Instant>,
    /// What the link protocols said about the peers, and when they were last asked.
    health: health::Health,
    next_health: Option<Instant>,
}

impl TapSwitch {
    /// Open each port's device (a TAP with a bounded kernel ring, or an interface with a
    /// bounded receive ring) and start the writer threads.
    pub fn open(spec: &SwitchSpec, realtime: Realtime) -> Result<TapSwitch, TapError> {
        let mut sw = Switch::new(spec.config.clone());
        sw.set_catch_up(CATCH_UP);
        let mut devs = Vec::new();
        for (i, a) in spec.attach.iter().enumerate() {
            let port = &spec.config.ports[i];
            let a = a
                .as_ref()
                .ok_or_else(|| TapError::NoTapName(port.name.clone()))?;
            let dev = Device::open(a, port.mtu).map_err(|source| open_error(a, source))?;
            if port.llr.is_some() {
                check_llr_mtu(port, a)?;
            }
            let link = &sw.ports()[i].link;
            devs.push(PortDev {
                name: port.name.clone(),
                dev: Arc::new(dev),
                attach: a.clone(),
                mtu: port.mtu,
                llr: link.llr().is_some(),
                link_control: link.speaks_link_control(),
            });
        }
        let ports = TapPorts::start(devs, realtime).map_err(TapError::System)?;
        // This process's counters start from nothing: tell the peers (CBFC's INIT, LLR's
        // INIT), with a generation no earlier run of this switch had.
        sw.start_link_protocols(generation_base(), Time::ZERO);
        Ok(TapSwitch {
            driver: Driver::new(sw, ports, PACING),
            realtime: false,
            out: Outputs {
                stats: true,
                stats_json: true,
                next_stats: None,
                health: health::Health::default(),
                next_health: None,
            },
        })
    }

    /// The switch model (counters, buffer state).
    pub fn switch(&self) -> &Switch {
        &self.driver.node
    }

    /// Serve until `stop` is set (or the optional duration passes), printing a stats line
    /// every `opts.stats`; then let the writers finish ([`Self::shutdown`]).
    pub fn serve(&mut self, stop: &AtomicBool, opts: &TapOptions) -> Result<(), TapError> {
        // Microsecond deadlines (pipeline latency, wire times) need precise wake-ups.
        if let Err(e) = lossless_sys::sched::set_timer_slack(1_000) {
            eprintln!("lossless tap: cannot tighten timer slack ({e}); shaping will be coarser");
        }
        self.realtime = opts.realtime.apply(PIPELINE_PRIORITY).map_err(|e| {
            TapError::System(io::Error::new(
                e.kind(),
                format!("real-time priority (--realtime on): {e}"),
            ))
        })?;
        if !self.realtime && opts.realtime == Realtime::Auto {
            eprintln!("lossless tap: running without real-time priority (needs root or CAP_SYS_NICE): on a busy machine frames wait longer between the TAPs and the switch");
        }
        let every = opts
            .stats
            .or(opts.stats_json.as_ref().map(|_| STATS_JSON_EVERY));
        self.out.next_stats = every.map(|d| Instant::now() + d);
        let until = opts.duration.map(|d| self.driver.started() + d);
        let realtime = self.realtime;
        let out = &mut self.out;
        self.driver.run(stop, until, |d| {
            out.after_turn(d, opts, realtime);
            std::ops::ControlFlow::Continue(())
        });
        self.shutdown();
        Ok(())
    }

    /// Start what is due, let the writers finish what they were given and join them, read
    /// the kernel's counters last, then count what the hosts had sent that the switch
    /// never read. Every frame read has been through the switch: a turn hands the switch
    /// all it read.
    pub fn shutdown(&mut self) {
        self.driver.finish();
        self.driver.ports.close();
    }
}

impl Outputs {
    /// After a turn: a stats line or `--stats-json` line when one is due, a live report
    /// when one is asked for.
    fn after_turn(&mut self, d: &mut Driver<Switch, TapPorts>, opts: &TapOptions, realtime: bool) {
        // A few times a second: a peer that never answers an INIT, a protocol spoken on
        // one end only.
        if self.next_health.is_none_or(|t| Instant::now() >= t) {
            self.next_health = Some(Instant::now() + Duration::from_millis(250));
            for line in self.health.check(&d.node, d.now()) {
                eprintln!("lossless tap: {line}");
            }
        }
        if let Some(t) = self.next_stats.filter(|t| Instant::now() >= *t) {
            if opts.stats.is_some() {
                self.print_stats(d);
            }
            if let Some(path) = &opts.stats_json {
                self.append_stats_json(d, path, realtime);
            }
            self.next_stats = Some(t + opts.stats.unwrap_or(STATS_JSON_EVERY));
        }
        if let Some(live) = opts.live.as_ref().filter(|l| l.wanted()) {
            d.ports.read_kernel_counters();
            live.publish(report::report(d, realtime));
        }
    }

    /// One `--stats-json` line: the report so far, on one line. A file that cannot be
    /// written is reported once and then left alone.
    fn append_stats_json(
        &mut self,
        d: &mut Driver<Switch, TapPorts>,
        path: &std::path::Path,
        realtime: bool,
    ) {
        if !self.stats_json {
            return;
        }
        d.ports.read_kernel_counters();
        let line = serde_json::to_string(&report::report(d, realtime).to_value())
            .expect("a report serializes");
        let r = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| writeln!(f, "{line}"));
        if let Err(e) = r {
            eprintln!(
                "lossless tap: --stats-json {}; no more lines",
                lossless_sys::output::named(path, e)
            );
            self.stats_json = false;
        }
    }

    /// One `--stats` line: totals so far. Once stdout is closed (`| head`), no more lines;
    /// the switch keeps serving and still writes its report.
    fn print_stats(&mut self, d: &mut Driver<Switch, TapPorts>) {
        if !self.stats {
            return;
        }
        d.ports.read_kernel_counters();
        let sw = &d.node;
        let (mut rx, mut tx, mut pfc_tx, mut pfc_rx) = (0, 0, 0, 0);
        for p in sw.ports() {
            rx += p.link.tx.counters.rx_packets;
            tx += p.link.tx.counters.tx_packets;
            pfc_tx += p.link.tx.counters.tx_pfc_frames;
            pfc_rx += p.link.tx.counters.rx_pfc_frames;
        }
        let turns = d.turns().report();
        let line = format!(
            "t={:.1}s rx {rx} tx {tx} frames | drops {} lossless_drops {} | kernel ring drops {} | PFC tx {pfc_tx} rx {pfc_rx} | longest turn gap {:.1} ms, stalls {}",
            d.started().elapsed().as_secs_f64(),
            sw.drops().total(),
            sw.lossless_drops(),
            d.ports.ring_drops(),
            turns.gap_max_us as f64 / 1e3,
            turns.stalls,
        );
        let mut out = io::stdout().lock();
        if writeln!(out, "{line}").and_then(|_| out.flush()).is_err() {
            self.stats = false;
        }
    }
}
