//! `lossless tap`: the wall-clock engine. One pipeline thread owns the `Switch`; per TAP,
//! a reader thread queues the frames it reads in the port's bounded [`inbox`] queue, and a
//! writer thread writes what the switch transmits ([`threads`]). The pipeline thread waits
//! for a frame or the switch's next deadline, takes frames from the ports in turn, and
//! drives the switch with `receive` and `poll_due`; each port is shaped to its configured
//! speed by the switch's own transmitter model, with a bounded catch-up for late wake-ups.
//! PFC frames are written by the pipeline thread itself, at once.
//!
//! Nothing is lost without a count: the TAPs' kernel rings and the read queues are bounded
//! ([`crate::cable`]), frames the kernel drops in a full ring are read from the kernel's own
//! counters (in whatever namespace the TAP was moved to), a TAP whose link is down is
//! probed without sending into it, and on exit the read queues are drained into the switch
//! and the writers finish and are joined before the report is made. With permission, the
//! threads run with real-time priority so that a busy machine does not stretch the cable.

pub mod inbox;
mod report;
pub mod threads;

use crate::cable;
use crate::config::SwitchSpec;
use crossbeam_channel::{bounded, Sender, TrySendError};
use inbox::Inbox;
use lossless_buffer_model::Time;
use lossless_pipeline::wire::pfc::is_pfc;
use lossless_pipeline::{Packet, Switch};
use lossless_sys::kernel::{tap_state, TapCounters};
use lossless_sys::sched::Realtime;
use lossless_sys::tap::Tap;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use threads::{spawn_reader, spawn_writer, PortIoStats};

/// How far back a late wake-up may date a backlogged frame: a bounded burst (81 frames of
/// 1518 B at 1G) that keeps a port at line rate when the OS wakes the pipeline late.
const CATCH_UP: Time = Time::from_ms(1);
/// Shortest timed wait while idle: a frame that becomes ready (pipeline latency) leaves
/// almost on time.
const MIN_WAIT: Duration = Duration::from_micros(5);
/// While busy (frames came in or went out in the last round), the thread sleeps at least
/// this long and is not woken by arrivals meanwhile: frames are handled in batches, as a
/// NIC moderates its interrupts. Every sleep and wake-up costs a context switch (tens of
/// microseconds in a virtual machine); frames sent late are dated back by the
/// transmitter's catch-up, so shaping stays exact, and frames that arrive wait at most this
/// long (the cable of [`crate::cable`] bounds what piles up).
const BUSY_WAIT: Duration = Duration::from_micros(100);
/// Longest single wait, so stop requests and stats lines are never late by more.
const MAX_WAIT: Duration = Duration::from_millis(50);
/// Most frames taken from the read queues before the switch transmits.
const TAKE_BATCH: usize = 256;
/// Smallest Ethernet frame without FCS: what a MAC pads short frames to.
const MIN_FRAME_NO_FCS: usize = 60;
/// How often the host side of a TAP whose link is down is asked whether it is up again.
const LINK_PROBE: Duration = Duration::from_millis(100);
/// Batches queued toward one TAP's writer thread (a full queue drops, counted as overrun).
const WRITE_QUEUE: usize = 1024;
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
}

/// What the engine knows of a port's TAP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortState {
    /// Frames go both ways.
    Up,
    /// The host has set the TAP down (a write failed); asked every 100 ms whether it is up.
    LinkDown,
    /// The TAP is gone (deleted, or its namespace was); never used again.
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

/// One port's TAP and its threads' handles.
struct PortIo {
    tap: Arc<Tap>,
    state: PortState,
    /// When the host side was last asked whether a downed link is up again.
    probed: Instant,
    /// The kernel's counters of the TAP, as last read.
    kernel: Option<TapCounters>,
    stats: Arc<PortIoStats>,
    writer: Option<Sender<Vec<Vec<u8>>>>,
    /// Frames of this loop iteration, handed to the writer in one batch.
    batch: Vec<Vec<u8>>,
}

/// Why `lossless tap` could not start.
#[derive(Debug, thiserror::Error)]
pub enum TapError {
    /// A port has no TAP name.
    #[error("port {0} has no TAP device: give `ports: {{count, tap_prefix}}` or `ports: [{{tap: NAME}}]`")]
    NoTapName(String),
    /// A TAP could not be opened.
    #[error("cannot open TAP `{name}`: {source} (needs root or CAP_NET_ADMIN and /dev/net/tun)")]
    Open {
        /// Device name.
        name: String,
        /// OS error.
        source: io::Error,
    },
    /// A thread could not be started, or real-time priority was required and refused.
    #[error("{0}")]
    System(io::Error),
}

/// A running TAP switch.
pub struct TapSwitch {
    sw: Switch,
    ports: Vec<PortIo>,
    inbox: Arc<Inbox>,
    stop_io: Arc<AtomicBool>,
    readers: Vec<JoinHandle<()>>,
    writers: Vec<JoinHandle<()>>,
    start: Instant,
    /// Times a port's link was seen going down or coming back.
    link_changes: u64,
    /// The pipeline thread runs with real-time priority.
    realtime: bool,
    /// stdout still takes stats lines (false once it is closed, e.g. `| head`).
    stats_out: bool,
    /// Wake-ups of the pipeline thread (the report's `events`).
    wakeups: u64,
}

impl TapSwitch {
    /// Open one TAP per port (each with a bounded kernel ring) and start the reader and
    /// writer threads.
    pub fn open(spec: &SwitchSpec, realtime: Realtime) -> Result<TapSwitch, TapError> {
        let mut taps = Vec::new();
        for (i, t) in spec.taps.iter().enumerate() {
            let name = t
                .clone()
                .ok_or_else(|| TapError::NoTapName(spec.config.ports[i].name.clone()))?;
            let tap = Tap::open(&name, Some(cable::RING_FRAMES))
                .map_err(|source| TapError::Open { name, source })?;
            taps.push(Arc::new(tap));
        }
        let inbox = Arc::new(Inbox::new(taps.len(), cable::READ_QUEUE_BYTES));
        let stop_io = Arc::new(AtomicBool::new(false));
        let mut ports = Vec::new();
        let (mut readers, mut writers) = (Vec::new(), Vec::new());
        for (port, tap) in taps.into_iter().enumerate() {
            let stats = Arc::new(PortIoStats::default());
            readers.push(
                spawn_reader(
                    port,
                    Arc::clone(&tap),
                    Arc::clone(&inbox),
                    Arc::clone(&stats),
                    Arc::clone(&stop_io),
                    realtime,
                )
                .map_err(TapError::System)?,
            );
            let (tx, rx) = bounded(WRITE_QUEUE);
            writers.push(
                spawn_writer(Arc::clone(&tap), rx, Arc::clone(&stats), realtime)
                    .map_err(TapError::System)?,
            );
            ports.push(PortIo {
                tap,
                state: PortState::Up,
                probed: Instant::now(),
                kernel: None,
                stats,
                writer: Some(tx),
                batch: Vec::new(),
            });
        }
        let mut sw = Switch::new(spec.config.clone());
        sw.set_catch_up(CATCH_UP);
        Ok(TapSwitch {
            sw,
            ports,
            inbox,
            stop_io,
            readers,
            writers,
            start: Instant::now(),
            link_changes: 0,
            realtime: false,
            stats_out: true,
            wakeups: 0,
        })
    }

    fn now(&self) -> Time {
        Time(self.start.elapsed().as_nanos() as u64 * 1000)
    }

    /// The switch model (counters, buffer state).
    pub fn switch(&self) -> &Switch {
        &self.sw
    }

    /// Serve until `stop` is set (or the optional duration passes), printing a stats line
    /// every `opts.stats`; then drain and stop the I/O threads ([`Self::shutdown`]).
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
        let mut next_stats = opts.stats.map(|d| Instant::now() + d);
        let deadline = opts.duration.map(|d| self.start + d);
        let mut frames = Vec::with_capacity(TAKE_BATCH);
        let mut busy = false;
        while !stop.load(Ordering::Relaxed) && deadline.is_none_or(|d| Instant::now() < d) {
            let now = self.now();
            let until_due = match self.sw.poll_timeout() {
                Some(t) => Duration::from_nanos(t.saturating_sub(now).as_ps() / 1000),
                None => MAX_WAIT,
            };
            let wait = if busy {
                BUSY_WAIT
            } else if until_due.is_zero() {
                Duration::ZERO
            } else {
                until_due.clamp(MIN_WAIT, MAX_WAIT)
            };
            self.wakeups += 1;
            for (port, e) in self.inbox.take(TAKE_BATCH, wait, !busy, &mut frames) {
                self.port_gone(port, &e);
            }
            let now = self.now();
            busy = !frames.is_empty();
            for (port, data) in frames.drain(..) {
                self.receive(port, data, now);
            }
            self.check_links(now);
            busy |= self.transmit(now) > 0;
            if let Some(t) = next_stats.filter(|t| Instant::now() >= *t) {
                self.print_stats();
                next_stats = opts.stats.map(|d| t + d);
            }
        }
        self.shutdown();
        Ok(())
    }

    /// A frame (no FCS) read from `port`.
    fn receive(&mut self, port: usize, mut data: Vec<u8>, now: Time) {
        if self.ports[port].state == PortState::LinkDown {
            // Frames come from it again: the host brought the link back up.
            self.link_up(port, now);
        }
        // The host's MAC would pad a short frame to the Ethernet minimum (60 bytes + FCS)
        // before it reached the wire; a TAP hands it over unpadded.
        if data.len() < MIN_FRAME_NO_FCS {
            data.resize(MIN_FRAME_NO_FCS, 0);
        }
        self.sw.receive(port, Packet::from_wire(data), now);
    }

    fn link_up(&mut self, port: usize, now: Time) {
        self.ports[port].state = PortState::Up;
        self.sw.set_link(port, true, now);
        self.link_changes += 1;
    }

    fn port_gone(&mut self, port: usize, e: &io::Error) {
        let p = &mut self.ports[port];
        if p.state == PortState::Gone {
            return;
        }
        eprintln!(
            "lossless tap: port {} (TAP {}) is gone: {e}; serving the other ports",
            self.sw.config().ports[port].name,
            p.tap.name()
        );
        p.state = PortState::Gone;
        p.writer = None;
        let now = self.now();
        self.sw.set_link(port, false, now);
    }

    /// Writers that failed mark their port's link down; a downed link is probed on the
    /// host's side (not by sending into it) every [`LINK_PROBE`].
    fn check_links(&mut self, now: Time) {
        for port in 0..self.ports.len() {
            let p = &mut self.ports[port];
            let failed = p.stats.link_down.swap(false, Ordering::Relaxed);
            match p.state {
                PortState::Up if failed => {
                    p.state = PortState::LinkDown;
                    p.probed = Instant::now();
                    eprintln!(
                        "lossless tap: port {} (TAP {}) link is down; its queued frames are dropped",
                        self.sw.config().ports[port].name,
                        p.tap.name()
                    );
                    self.sw.set_link(port, false, now);
                    self.link_changes += 1;
                }
                PortState::LinkDown if p.probed.elapsed() >= LINK_PROBE => {
                    p.probed = Instant::now();
                    match tap_state(&p.tap) {
                        Ok(s) => {
                            p.kernel = Some(s.counters);
                            if s.up {
                                self.link_up(port, now);
                            }
                        }
                        Err(e) => self.port_gone(port, &e),
                    }
                }
                _ => {}
            }
        }
    }

    /// Start every frame the switch has due: PFC frames are written at once, data frames
    /// handed to the port's writer. Returns how many frames were started.
    fn transmit(&mut self, now: Time) -> usize {
        let ports = &mut self.ports;
        let mut started = 0;
        self.sw.poll_due(now, &mut |port, pkt: Packet| {
            started += 1;
            let p = &mut ports[port];
            if is_pfc(&pkt.data) {
                p.stats.written(&p.tap.write(&pkt.data));
            } else {
                p.batch.push(pkt.data);
            }
        });
        for p in ports.iter_mut().filter(|p| !p.batch.is_empty()) {
            let batch = std::mem::take(&mut p.batch);
            let n = batch.len() as u64;
            match &p.writer {
                Some(w) => {
                    if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) =
                        w.try_send(batch)
                    {
                        p.stats.overrun(n);
                    }
                }
                // The TAP is gone: nothing can be written to it.
                None => p.stats.failed(n),
            }
        }
        started
    }

    /// Stop the readers, put every frame they read through the switch, let the writers
    /// finish what they were given and join them, and read the kernel's counters last.
    pub fn shutdown(&mut self) {
        self.stop_io.store(true, Ordering::Relaxed);
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        let now = self.now();
        let mut frames = Vec::new();
        loop {
            let gone = self
                .inbox
                .take(usize::MAX, Duration::ZERO, false, &mut frames);
            for (port, e) in gone {
                self.port_gone(port, &e);
            }
            if frames.is_empty() {
                break;
            }
            for (port, data) in frames.drain(..) {
                self.receive(port, data, now);
            }
        }
        self.transmit(now);
        for p in &mut self.ports {
            p.writer = None;
        }
        for w in self.writers.drain(..) {
            let _ = w.join();
        }
        self.read_kernel_counters();
    }

    /// Read each TAP's kernel counters (a port gone keeps its last reading).
    fn read_kernel_counters(&mut self) {
        for p in &mut self.ports {
            if p.state != PortState::Gone {
                if let Ok(s) = tap_state(&p.tap) {
                    p.kernel = Some(s.counters);
                }
            }
        }
    }

    /// One `--stats` line: totals so far. Once stdout is closed (`| head`), no more lines;
    /// the switch keeps serving and still writes its report.
    fn print_stats(&mut self) {
        if !self.stats_out {
            return;
        }
        self.read_kernel_counters();
        let sw = &self.sw;
        let (mut rx, mut tx, mut pfc_tx, mut pfc_rx) = (0, 0, 0, 0);
        for p in sw.ports() {
            rx += p.tx.counters.rx_packets;
            tx += p.tx.counters.tx_packets;
            pfc_tx += p.tx.counters.tx_pfc_frames;
            pfc_rx += p.tx.counters.rx_pfc_frames;
        }
        let ring: u64 = self
            .ports
            .iter()
            .filter_map(|p| p.kernel.map(|k| k.host_tx_dropped))
            .sum();
        let line = format!(
            "t={:.1}s rx {rx} tx {tx} frames | drops {} lossless_drops {} | kernel ring drops {ring} | PFC tx {pfc_tx} rx {pfc_rx}",
            self.start.elapsed().as_secs_f64(),
            sw.drops().total(),
            sw.lossless_drops(),
        );
        let mut out = io::stdout().lock();
        if writeln!(out, "{line}").and_then(|_| out.flush()).is_err() {
            self.stats_out = false;
        }
    }
}
