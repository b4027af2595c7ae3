//! `lossless tap`: the wall-clock engine. One pipeline thread owns the `Switch`; one reader
//! thread per TAP device feeds it frames over a crossbeam channel; the pipeline thread
//! waits for a frame or the switch's next deadline, whichever comes first, and writes what
//! the switch transmits to one writer thread per TAP (a TAP write runs the receiving
//! namespace's network stack inside the syscall, so writes must not serialize in the
//! pipeline thread). Each port is shaped to its configured speed by the switch's own
//! transmitter model (with a bounded catch-up for late wake-ups).

pub mod tools;

use crate::config::SwitchSpec;
use crate::measure::{Samples, Window};
use crate::report::json::{measure, switch_report, Totals};
use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender, TrySendError};
use lossless_buffer_model::Time;
use lossless_pipeline::{Packet, Switch};
use lossless_ports::sys::Tap;
use serde_json::{json, Value};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How far back a late wake-up may date a backlogged frame: a bounded burst (81 frames of
/// 1518 B at 1G) that keeps a port at line rate when the OS wakes the pipeline late.
const CATCH_UP: Time = Time::from_ms(1);
/// Shortest timed wait: a backlogged port is served in small bursts (its frames dated back
/// by the transmitter's catch-up) rather than with one wake-up per frame time, which at 1G
/// would be 80,000 timed waits a second. Arriving frames still wake the thread at once.
const MIN_WAIT: Duration = Duration::from_micros(40);
/// Longest single wait, so stop requests and stats lines are never late by more.
const MAX_WAIT: Duration = Duration::from_millis(50);
/// Smallest Ethernet frame without FCS: what a MAC pads short frames to.
const MIN_FRAME_NO_FCS: usize = 60;
/// How often a port whose TAP link is down is tried again.
const LINK_PROBE: Duration = Duration::from_millis(100);
/// Frames queued from the readers to the pipeline thread. Whatever waits here has left its
/// sender but not yet reached the switch: it is cable, and PFC headroom has to cover it,
/// so the queue is kept short (a full queue blocks the readers, which backs up into the
/// TAPs' own queues and the senders).
const READ_QUEUE: usize = 512;
/// Batches queued toward one TAP's writer thread (a full queue drops, counted as overrun).
const WRITE_QUEUE: usize = 1024;
/// Largest frame a TAP read can return.
const READ_BUF: usize = 65_536;

/// Options of `lossless tap`.
#[derive(Clone, Debug, Default)]
pub struct TapOptions {
    /// Print a counters line this often.
    pub stats: Option<Duration>,
    /// Stop by itself after this long (tests, demos).
    pub duration: Option<Duration>,
}

/// What a reader thread tells the pipeline thread.
enum Msg {
    /// A frame (no FCS) arrived on a port.
    Frame(usize, Vec<u8>),
    /// The TAP of a port failed for good (deleted, namespace gone).
    Gone(usize, io::Error),
    /// A write to the TAP of a port failed: its link is down (the host side set it down).
    LinkDown(usize),
}

/// Port counters summed over the switch at one instant (for `--stats` rates).
#[derive(Clone, Copy, Debug)]
struct Snapshot {
    at: Instant,
    rx_frames: u64,
    rx_bytes: u64,
    tx_frames: u64,
    tx_bytes: u64,
    pfc_tx: u64,
    pfc_rx: u64,
}

impl Default for Snapshot {
    fn default() -> Self {
        Snapshot {
            at: Instant::now(),
            rx_frames: 0,
            rx_bytes: 0,
            tx_frames: 0,
            tx_bytes: 0,
            pfc_tx: 0,
            pfc_rx: 0,
        }
    }
}

/// Counters of the engine itself.
#[derive(Debug, Default)]
pub struct TapStats {
    /// Frames written to TAPs.
    pub tx_frames: AtomicU64,
    /// Writes that failed (e.g. EIO from a TAP whose link is down).
    pub tx_errors: AtomicU64,
    /// Frames the switch sent while the port's writer was still busy (dropped).
    pub tx_overruns: AtomicU64,
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
}

/// A running TAP switch.
pub struct TapSwitch {
    sw: Switch,
    taps: Vec<Arc<Tap>>,
    writers: Vec<Sender<Vec<Vec<u8>>>>,
    /// Frames of this loop iteration per port, handed to the writer in one batch.
    batches: Vec<Vec<Vec<u8>>>,
    rx: Receiver<Msg>,
    start: Instant,
    /// Engine counters (shared with the writer threads).
    pub stats: Arc<TapStats>,
    /// TAPs that went away (deleted, namespace gone).
    pub ports_gone: Vec<String>,
    /// Deepest backlog of received frames waiting for the pipeline thread.
    pub max_read_backlog: usize,
    /// Times a port's link was seen going down or coming back.
    pub link_changes: u64,
    /// Ports whose link went down (EIO), with when: retried every LINK_PROBE.
    link_down_at: Vec<Option<Instant>>,
}

impl TapSwitch {
    /// Open one TAP per port and start the reader threads.
    pub fn open(spec: &SwitchSpec) -> Result<TapSwitch, TapError> {
        let mut taps = Vec::new();
        for (i, t) in spec.taps.iter().enumerate() {
            let name = t
                .clone()
                .ok_or_else(|| TapError::NoTapName(spec.config.ports[i].name.clone()))?;
            let tap = Tap::open(&name).map_err(|source| TapError::Open { name, source })?;
            taps.push(Arc::new(tap));
        }
        let (tx, rx) = bounded(READ_QUEUE);
        for (port, tap) in taps.iter().enumerate() {
            let tap = Arc::clone(tap);
            let tx = tx.clone();
            std::thread::Builder::new()
                .name(format!("tap-{}", tap.name()))
                .spawn(move || {
                    let mut buf = vec![0u8; READ_BUF];
                    loop {
                        match tap.read(&mut buf) {
                            Ok(0) => {
                                let _ = tx.send(Msg::Gone(
                                    port,
                                    io::Error::new(io::ErrorKind::UnexpectedEof, "TAP closed"),
                                ));
                                return;
                            }
                            Ok(n) => {
                                if tx.send(Msg::Frame(port, buf[..n].to_vec())).is_err() {
                                    return; // the pipeline thread has stopped
                                }
                            }
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                            Err(e) => {
                                let _ = tx.send(Msg::Gone(port, e));
                                return;
                            }
                        }
                    }
                })
                .expect("spawning a reader thread");
        }
        let stats = Arc::new(TapStats::default());
        let mut writers = Vec::new();
        for (port, tap) in taps.iter().enumerate() {
            let (wtx, wrx) = bounded::<Vec<Vec<u8>>>(WRITE_QUEUE);
            let (tap, stats, events) = (Arc::clone(tap), Arc::clone(&stats), tx.clone());
            std::thread::Builder::new()
                .name(format!("tapw-{}", tap.name()))
                .spawn(move || {
                    for batch in wrx {
                        for frame in batch {
                            match tap.write(&frame) {
                                Ok(_) => {
                                    stats.tx_frames.fetch_add(1, Ordering::Relaxed);
                                }
                                Err(_) => {
                                    // EIO: the TAP's link is down. Tell the pipeline once per batch.
                                    stats.tx_errors.fetch_add(1, Ordering::Relaxed);
                                    let _ = events.try_send(Msg::LinkDown(port));
                                    break;
                                }
                            }
                        }
                    }
                })
                .expect("spawning a writer thread");
            writers.push(wtx);
        }
        let mut sw = Switch::new(spec.config.clone());
        sw.set_catch_up(CATCH_UP);
        let batches = vec![Vec::new(); taps.len()];
        let n_taps = taps.len();
        Ok(TapSwitch {
            sw,
            taps,
            writers,
            batches,
            rx,
            start: Instant::now(),
            stats,
            ports_gone: Vec::new(),
            max_read_backlog: 0,
            link_changes: 0,
            link_down_at: vec![None; n_taps],
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
    /// every `opts.stats`.
    pub fn serve(&mut self, stop: &AtomicBool, opts: &TapOptions) {
        // Microsecond deadlines (pipeline latency, wire times) need precise wake-ups.
        if let Err(e) = lossless_ports::sys::set_timer_slack(1_000) {
            eprintln!("lossless tap: cannot tighten timer slack ({e}); shaping will be coarser");
        }
        let mut next_stats = opts.stats.map(|d| Instant::now() + d);
        let mut last = self.counters();
        let deadline = opts.duration.map(|d| self.start + d);
        while !stop.load(Ordering::Relaxed) {
            let wall = Instant::now();
            if deadline.is_some_and(|d| wall >= d) {
                break;
            }
            // Wait for a frame or the switch's next deadline.
            let now = self.now();
            let wait = match self.sw.poll_timeout() {
                Some(t) if t <= now => Duration::ZERO,
                Some(t) => Duration::from_nanos((t - now).as_ps() / 1000).clamp(MIN_WAIT, MAX_WAIT),
                None => MAX_WAIT,
            };
            let first = if wait.is_zero() {
                self.rx.try_recv().ok()
            } else {
                match self.rx.recv_timeout(wait) {
                    Ok(m) => Some(m),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => None,
                }
            };
            if first.is_some() {
                self.max_read_backlog = self.max_read_backlog.max(self.rx.len() + 1);
            }
            if let Some(m) = first {
                self.handle(m);
                // Take what else is waiting, in order, before transmitting.
                for _ in 0..256 {
                    match self.rx.try_recv() {
                        Ok(m) => self.handle(m),
                        Err(_) => break,
                    }
                }
            }
            let now = self.now();
            self.probe_links(now);
            if self.sw.poll_timeout().is_some_and(|t| t <= now) {
                self.sw.handle_timeout(now);
            }
            self.transmit(now);
            if let Some(t) = next_stats {
                if Instant::now() >= t {
                    let c = self.counters();
                    println!("{}", self.stats_line(&last, &c));
                    last = c;
                    next_stats = opts.stats.map(|d| t + d);
                }
            }
        }
    }

    /// A port whose TAP link went down is tried again every LINK_PROBE: if writes still
    /// fail, the writer reports it down again.
    fn probe_links(&mut self, now: Time) {
        for port in 0..self.link_down_at.len() {
            if self.link_down_at[port].is_some_and(|t| t.elapsed() >= LINK_PROBE) {
                self.link_down_at[port] = None;
                self.sw.set_link(port, true, now);
            }
        }
    }

    fn counters(&self) -> Snapshot {
        let mut s = Snapshot {
            at: Instant::now(),
            ..Snapshot::default()
        };
        for p in self.sw.ports() {
            let c = &p.counters;
            s.rx_frames += c.rx_packets;
            s.rx_bytes += c.rx_bytes;
            s.tx_frames += c.tx_packets;
            s.tx_bytes += c.tx_bytes;
            s.pfc_tx += c.tx_pfc_frames;
            s.pfc_rx += c.rx_pfc_frames;
        }
        s
    }

    /// One `--stats` line: rates since the previous line, totals of drops and PFC.
    fn stats_line(&self, a: &Snapshot, b: &Snapshot) -> String {
        let dt = (b.at - a.at).as_secs_f64().max(1e-9);
        format!(
            "t={:.1}s rx {} frames {:.3} Gb/s | tx {} frames {:.3} Gb/s | drops {} lossless_drops {} | PFC tx {} rx {}",
            self.start.elapsed().as_secs_f64(),
            b.rx_frames - a.rx_frames,
            (b.rx_bytes - a.rx_bytes) as f64 * 8.0 / dt / 1e9,
            b.tx_frames - a.tx_frames,
            (b.tx_bytes - a.tx_bytes) as f64 * 8.0 / dt / 1e9,
            self.sw.drops().total(),
            self.sw.lossless_drops(),
            b.pfc_tx,
            b.pfc_rx
        )
    }

    fn handle(&mut self, m: Msg) {
        let now = self.now();
        match m {
            Msg::Frame(port, mut data) => {
                if self.link_down_at[port].take().is_some() {
                    // Frames come from it again: the host brought the link back up.
                    self.sw.set_link(port, true, now);
                    self.link_changes += 1;
                }
                // The host's MAC would pad a short frame to the Ethernet minimum (60 bytes
                // + FCS) before it reached the wire; a TAP hands it over unpadded.
                if data.len() < MIN_FRAME_NO_FCS {
                    data.resize(MIN_FRAME_NO_FCS, 0);
                }
                self.sw.receive(port, Packet::from_wire(data), now)
            }
            Msg::LinkDown(port) => {
                if self.sw.ports()[port].link_up
                    && !self.ports_gone.iter().any(|g| g == self.taps[port].name())
                {
                    self.link_down_at[port] = Some(Instant::now());
                    eprintln!("lossless tap: port {} (TAP {}) link is down; its queued frames are dropped", self.sw.config().ports[port].name, self.taps[port].name());
                    self.sw.set_link(port, false, now);
                    self.link_changes += 1;
                }
            }
            Msg::Gone(port, e) => {
                let name = self.taps[port].name().to_string();
                eprintln!(
                    "lossless tap: port {} (TAP {name}) is gone: {e}; serving the other ports",
                    self.sw.config().ports[port].name
                );
                self.ports_gone.push(name);
                self.sw.set_link(port, false, now);
            }
        }
    }

    /// Start every frame the switch has ready, writing it to its TAP.
    fn transmit(&mut self, now: Time) {
        for port in 0..self.taps.len() {
            // Backlogged ports may send a short burst to catch up on a late wake-up.
            for _ in 0..256 {
                if self.sw.next_transmit(port).is_none_or(|t| t > now) {
                    break;
                }
                let Some(pkt) = self.sw.poll_transmit(port, now) else {
                    break;
                };
                self.batches[port].push(pkt.data);
            }
            if !self.batches[port].is_empty() {
                let batch = std::mem::take(&mut self.batches[port]);
                if let Err(TrySendError::Full(b) | TrySendError::Disconnected(b)) =
                    self.writers[port].try_send(batch)
                {
                    self.stats
                        .tx_overruns
                        .fetch_add(b.len() as u64, Ordering::Relaxed);
                }
            }
        }
    }

    /// The JSON report (design §7 contract; no flows or hosts in TAP mode).
    pub fn report(&self) -> Value {
        let end = self.now();
        let mut t = Totals::default();
        let window = Window {
            from: Time::ZERO,
            to: end,
            start: Samples::take([&self.sw], [], Time::ZERO).zeroed(),
            end: Samples::take([&self.sw], [], end),
        };
        let sw = switch_report(&self.sw, 0, end, &window, &mut t);
        json!({
            "name": self.sw.config().name,
            "seed": self.sw.config().seed,
            "sim_time_ps": end.as_ps(),
            "measure": measure(&window),
            "wall_time_s": self.start.elapsed().as_secs_f64(),
            "events": 0,
            "totals": t.json(),
            "switches": [sw],
            "flows": [],
            "hosts": [],
            "tap": {
                "tx_frames": self.stats.tx_frames.load(Ordering::Relaxed),
                "tx_errors": self.stats.tx_errors.load(Ordering::Relaxed),
                "tx_overruns": self.stats.tx_overruns.load(Ordering::Relaxed),
                "ports_gone": self.ports_gone,
                "max_read_backlog": self.max_read_backlog,
                "link_changes": self.link_changes,
            },
        })
    }
}
