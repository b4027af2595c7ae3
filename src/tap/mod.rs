//! `lossless tap`: the wall-clock engine. One pipeline thread owns the `Switch` and reads
//! every port's [`device`] (a TAP it created, or an existing interface such as a
//! container's veth) itself ([`rx`]): it waits on all of them at once for a frame or the
//! switch's next deadline, takes what is waiting from the ports in turn, and drives the
//! switch with `receive` and `poll_due`; each port is shaped to its configured speed by the
//! switch's own transmitter model, with a bounded catch-up for late wake-ups. Control
//! frames (PFC, PAUSE, CBFC, LLR) and the few frames of a light round are written by the
//! pipeline thread at once; under load a port's [`writer`] thread writes its batches (a
//! TAP write runs the receiving host's network stack inside the system call).
//!
//! Nothing is lost without a count: the TAPs' kernel rings and what a round reads are
//! bounded ([`crate::cable`]), frames the kernel drops in a full ring are read from the
//! kernel's own counters (in whatever namespace the TAP was moved to; for an interface, its
//! socket's ring counters), a TAP whose link is down is probed without sending into it, an
//! interface's link and carrier are watched, and on exit the writers finish and are joined
//! before the report is made. With permission, the threads run with real-time priority so
//! that a busy machine does not stretch the cable.

pub mod device;
pub mod live;
pub mod metrics;
mod report;
mod rx;
pub mod turns;
pub mod writer;

use crate::config::SwitchSpec;
use crossbeam_channel::{bounded, Sender, TrySendError};
use device::Device;
use lossless_buffer_model::Time;
use lossless_pipeline::link::FrameClass;
use lossless_pipeline::wire::link_control;
use lossless_pipeline::{Packet, Switch};
use lossless_sys::kernel::TapCounters;
use lossless_sys::sched::Realtime;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use writer::{spawn_writer, PortIoStats};

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
/// Frames moved (taken plus started) in a round at or below which the load counts as
/// light: the next wait ends when a frame is due, or when one arrives, not after
/// [`BUSY_WAIT`].
const LIGHT_ROUND: usize = 4;
/// Longest single wait, so stop requests and stats lines are never late by more.
const MAX_WAIT: Duration = Duration::from_millis(50);
/// Most frames read from the ports in one round, before the switch transmits.
const TAKE_BATCH: usize = 256;
/// Smallest Ethernet frame without FCS: what a MAC pads short frames to.
const MIN_FRAME_NO_FCS: usize = 60;
/// How often the host side of a TAP whose link is down is asked whether it is up again.
const LINK_PROBE: Duration = Duration::from_millis(100);
/// Batches queued toward one TAP's writer thread (a full queue drops, counted as overrun).
const WRITE_QUEUE: usize = 1024;
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

/// One port's device and its threads' handles.
struct PortIo {
    dev: Arc<Device>,
    /// What the port was configured to serve, and its MTU (to attach again).
    attach: crate::config::Attach,
    mtu: u32,
    /// Times the port's interface was attached again after it was gone.
    reattached: u64,
    /// Counts of devices the port had before, carried into the report.
    carried: Carried,
    state: PortState,
    /// When the host side was last asked whether a downed link is up again.
    probed: Instant,
    /// The kernel's counters of the TAP, as last read.
    kernel: Option<TapCounters>,
    stats: Arc<PortIoStats>,
    writer: Option<Sender<Vec<Vec<u8>>>>,
    /// Frames of this loop iteration, handed to the writer in one batch.
    batch: Vec<Vec<u8>>,
    /// The user was told that frames too long for the ring arrived.
    oversize_told: bool,
    /// Frames the host had sent that were still waiting in the device's kernel queue or
    /// ring when the switch stopped: counted after the kernel's counters were read last,
    /// never switched.
    unread_at_exit: u64,
}

/// What a port's earlier devices counted (interfaces attached again keep counting on).
#[derive(Clone, Copy, Debug, Default)]
struct Carried {
    oversize: u64,
    checksums: u64,
    kernel: TapCounters,
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

/// A port's writer thread, and its queue of frame batches.
type Writer = (JoinHandle<()>, Sender<Vec<Vec<u8>>>);

/// Start a port's writer thread on `dev`.
fn start_writer(
    dev: &Arc<Device>,
    stats: &Arc<PortIoStats>,
    realtime: Realtime,
) -> io::Result<Writer> {
    let (tx, rx) = bounded(WRITE_QUEUE);
    let writer = spawn_writer(Arc::clone(dev), rx, Arc::clone(stats), realtime)?;
    Ok((writer, tx))
}

/// A running TAP switch.
pub struct TapSwitch {
    sw: Switch,
    ports: Vec<PortIo>,
    rx: rx::Rx,
    writers: Vec<JoinHandle<()>>,
    start: Instant,
    /// Times a port's link was seen going down or coming back.
    link_changes: u64,
    /// The pipeline thread runs with real-time priority.
    realtime: bool,
    /// What was asked for the writer threads (also those of an interface attached again).
    realtime_mode: Realtime,
    /// stdout still takes stats lines (false once it is closed, e.g. `| head`).
    stats_out: bool,
    /// The pipeline thread's turns (the report's `events`), and how they were spaced
    /// (the stall detector).
    turns: turns::Turns,
    /// `--stats-json` lines can still be written.
    stats_json_ok: bool,
}

impl TapSwitch {
    /// Open each port's device (a TAP with a bounded kernel ring, or an interface with a
    /// bounded receive ring) and start the writer threads.
    pub fn open(spec: &SwitchSpec, realtime: Realtime) -> Result<TapSwitch, TapError> {
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
            devs.push((Arc::new(dev), a.clone(), port.mtu));
        }
        let mut ports = Vec::new();
        let mut writers = Vec::new();
        for (dev, attach, mtu) in devs {
            let stats = Arc::new(PortIoStats::default());
            let (writer, tx) = start_writer(&dev, &stats, realtime).map_err(TapError::System)?;
            writers.push(writer);
            ports.push(PortIo {
                dev,
                attach,
                mtu,
                reattached: 0,
                carried: Carried::default(),
                state: PortState::Up,
                probed: Instant::now(),
                kernel: None,
                stats,
                writer: Some(tx),
                batch: Vec::new(),
                oversize_told: false,
                unread_at_exit: 0,
            });
        }
        let mut sw = Switch::new(spec.config.clone());
        sw.set_catch_up(CATCH_UP);
        Ok(TapSwitch {
            sw,
            ports,
            rx: rx::Rx::new(),
            writers,
            start: Instant::now(),
            link_changes: 0,
            realtime: false,
            realtime_mode: realtime,
            stats_out: true,
            turns: turns::Turns::default(),
            stats_json_ok: true,
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
        let mut next_stats = every.map(|d| Instant::now() + d);
        let deadline = opts.duration.map(|d| self.start + d);
        let mut frames = Vec::with_capacity(TAKE_BATCH);
        let mut busy = false;
        // Frames taken and started in the last round.
        let mut moved = 0;
        while !stop.load(Ordering::Relaxed) && deadline.is_none_or(|d| Instant::now() < d) {
            let now = self.now();
            let until_due = match self.sw.poll_timeout() {
                Some(t) => Duration::from_nanos(t.saturating_sub(now).as_ps() / 1000),
                None => MAX_WAIT,
            };
            // A few frames (a ping, a request) leave when due: batching them would only
            // add the batch wait to their latency. Under load, batches.
            let light = moved <= LIGHT_ROUND;
            let wait = if self.rx.more_waiting() {
                // Frames were left in a ring for the next round: take them now.
                Duration::ZERO
            } else if busy && light {
                until_due.clamp(MIN_WAIT, BUSY_WAIT)
            } else if busy {
                BUSY_WAIT
            } else if until_due.is_zero() {
                Duration::ZERO
            } else {
                until_due.clamp(MIN_WAIT, MAX_WAIT)
            };
            let gone = self
                .rx
                .read(&self.ports, TAKE_BATCH, wait, !busy || light, &mut frames);
            self.turns.waited(wait, self.rx.waited());
            self.turns.begin(Instant::now());
            for (port, e) in gone {
                self.port_gone(port, &e);
            }
            let now = self.now();
            busy = !frames.is_empty();
            moved = frames.len();
            for (port, data) in frames.drain(..) {
                self.receive(port, data, now);
            }
            self.check_links(now);
            let started = self.transmit(now);
            moved += started;
            busy |= started > 0;
            if let Some(t) = next_stats.filter(|t| Instant::now() >= *t) {
                if opts.stats.is_some() {
                    self.print_stats();
                }
                if let Some(path) = &opts.stats_json {
                    self.append_stats_json(path);
                }
                next_stats = Some(t + opts.stats.unwrap_or(STATS_JSON_EVERY));
            }
            if let Some(live) = opts.live.as_ref().filter(|l| l.wanted()) {
                self.read_kernel_counters();
                live.publish(self.report());
            }
        }
        self.shutdown();
        Ok(())
    }

    /// A frame (no FCS) read from `port`. A frame another switch numbered for
    /// link-level retry loses the header that carries its number (UE carries it in the
    /// preamble, outside the frame), which goes with it as its hop tag.
    fn receive(&mut self, port: usize, mut data: Vec<u8>, now: Time) {
        if self.ports[port].state == PortState::LinkDown
            && matches!(*self.ports[port].dev, Device::Tap(_))
        {
            // Frames come from it again: the host brought the link back up.
            self.link_up(port, now);
        }
        // The host's MAC would pad a short frame to the Ethernet minimum (60 bytes + FCS)
        // before it reached the wire: it counts as that long. A TAP hands it over unpadded,
        // and the padding is not held, so that it is never parsed as a header (a PFC frame
        // cut after its opcode is truncated, not one that enables no priority).
        let hop = link_control::unwrap_llr_data(&mut data);
        let len = (data.len().max(MIN_FRAME_NO_FCS) + 4) as u32;
        let mut pkt = Packet::new(data, len);
        if let Some(hop) = hop {
            pkt.hop = hop;
        }
        pkt.meta.class = link_control::class_of(&pkt.data);
        if pkt.meta.class.is_ordered_set() {
            self.ports[port]
                .stats
                .ordered_sets_read
                .fetch_add(1, Ordering::Relaxed);
        }
        self.sw.receive(port, pkt, now);
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
            "lossless tap: port {} ({} {}) is gone: {e}; serving the other ports",
            self.sw.config().ports[port].name,
            p.attach.kind(),
            p.dev.name()
        );
        p.state = PortState::Gone;
        p.writer = None;
        let now = self.now();
        self.sw.set_link(port, false, now);
    }

    /// Writers that failed mark their port's link down; a downed link is probed on the
    /// host's side (not by sending into it) every [`LINK_PROBE`]. An interface is probed
    /// that often whatever its state: its link and carrier are the kernel's to report.
    fn check_links(&mut self, now: Time) {
        for port in 0..self.ports.len() {
            let p = &mut self.ports[port];
            let failed = p.stats.link_down.swap(false, Ordering::Relaxed);
            let iface = matches!(*p.dev, Device::Iface(..));
            let watched = match p.state {
                PortState::Up => iface,
                PortState::LinkDown => true,
                PortState::Gone => false,
            };
            if p.state == PortState::Up && failed {
                self.link_down(port, now);
            } else if watched && p.probed.elapsed() >= LINK_PROBE {
                self.probe_link(port, now);
            } else if p.state == PortState::Gone && iface && p.probed.elapsed() >= LINK_PROBE {
                p.probed = Instant::now();
                self.reattach(port, now);
            }
        }
    }

    /// Ask the kernel about port `port`'s device: counters, up or down, or gone. Warns
    /// once when an interface has received frames too long to forward.
    fn probe_link(&mut self, port: usize, now: Time) {
        let p = &mut self.ports[port];
        p.probed = Instant::now();
        if !p.oversize_told && p.dev.oversize() > 0 {
            p.oversize_told = true;
            eprintln!(
                "lossless tap: port {} (iface {}) receives frames longer than its MTU: the host's segmentation offload is on; they are counted (oversize_frames) and dropped. Turn it off on the host's end: ethtool -K <iface> tso off gso off",
                self.sw.config().ports[port].name,
                p.dev.name()
            );
        }
        match p.dev.probe() {
            Ok(s) => {
                p.kernel = s.counters.or(p.kernel);
                match (p.state, s.up) {
                    (PortState::LinkDown, true) => self.link_up(port, now),
                    (PortState::Up, false) => self.link_down(port, now),
                    _ => {}
                }
            }
            Err(e) => self.port_gone(port, &e),
        }
    }

    /// A gone interface port whose name exists again (a container restarted with new
    /// veths of the same names): attach to it, with a new writer thread.
    fn reattach(&mut self, port: usize, now: Time) {
        let p = &mut self.ports[port];
        let (crate::config::Attach::Iface(name) | crate::config::Attach::Link(name)) = &p.attach
        else {
            return;
        };
        if lossless_sys::netdev::if_index(name).is_err() {
            return;
        }
        let dev = match Device::open(&p.attach, p.mtu) {
            Ok(d) => Arc::new(d),
            // Not ready yet (or claimed by another switch): looked at again later.
            Err(_) => return,
        };
        let Ok((writer, tx)) = start_writer(&dev, &p.stats, self.realtime_mode) else {
            return;
        };
        // The old device's writer ends when its queue is dropped; its counts stay in the
        // report.
        p.carried.oversize += p.dev.oversize();
        p.carried.checksums += p.dev.checksums_completed();
        if let Some(k) = p.kernel.take() {
            p.carried.kernel = p.carried.kernel + k;
        }
        p.dev = dev;
        p.writer = Some(tx);
        p.reattached += 1;
        p.state = PortState::Up;
        self.writers.push(writer);
        eprintln!(
            "lossless tap: port {} (iface {}) is back: attached again",
            self.sw.config().ports[port].name,
            self.ports[port].dev.name()
        );
        self.sw.set_link(port, true, now);
        self.link_changes += 1;
    }

    fn link_down(&mut self, port: usize, now: Time) {
        let p = &mut self.ports[port];
        p.state = PortState::LinkDown;
        p.probed = Instant::now();
        eprintln!(
            "lossless tap: port {} ({} {}) link is down; its queued frames are dropped",
            self.sw.config().ports[port].name,
            p.attach.kind(),
            p.dev.name()
        );
        self.sw.set_link(port, false, now);
        self.link_changes += 1;
    }

    /// Start every frame the switch has due: control frames (PFC, PAUSE, CBFC's CF_Update,
    /// LLR's messages) are written at once, data frames handed to the port's writer, each
    /// with the LLR header its hop tag asks for. A CC_Update goes with the data frames, in
    /// order: the consumed count it carries covers every frame sent before it, so it must
    /// not overtake one (the receiver would take it for lost, and count it twice when it
    /// came). Returns how many frames were started.
    fn transmit(&mut self, now: Time) -> usize {
        let ports = &mut self.ports;
        let mut started = 0;
        self.sw.poll_due(now, &mut |port, pkt: Packet| {
            started += 1;
            let p = &mut ports[port];
            let class = pkt.meta.class;
            if class.is_control() && class != FrameClass::CreditResync {
                let r = p.dev.write(&pkt.data);
                if class.is_ordered_set() && r.is_ok() {
                    p.stats.ordered_sets_written.fetch_add(1, Ordering::Relaxed);
                }
                p.stats.written(&r);
            } else {
                let mut data = pkt.data;
                link_control::wrap_llr_data(&mut data, pkt.hop);
                p.batch.push(data);
            }
        });
        for p in ports.iter_mut().filter(|p| !p.batch.is_empty()) {
            let batch = std::mem::take(&mut p.batch);
            let n = batch.len() as u64;
            match &p.writer {
                // A few frames and an idle writer: written here, without waking a thread
                // (a wake-up costs more than the write). Under load the writer takes them.
                Some(_)
                    if started <= LIGHT_ROUND && p.stats.pending.load(Ordering::Acquire) == 0 =>
                {
                    writer::write_batch(&p.dev, &batch, &p.stats);
                }
                Some(w) => {
                    p.stats.pending.fetch_add(n, Ordering::Release);
                    if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) =
                        w.try_send(batch)
                    {
                        p.stats.pending.fetch_sub(n, Ordering::Release);
                        p.stats.overrun(n);
                    }
                }
                // The TAP is gone: nothing can be written to it.
                None => p.stats.failed(n),
            }
        }
        started
    }

    /// Start what is due, let the writers finish what they were given and join them, read
    /// the kernel's counters last, then count what the hosts had sent that the switch
    /// never read. Every frame read has been through the switch: a round hands the switch
    /// all it read.
    pub fn shutdown(&mut self) {
        let now = self.now();
        self.transmit(now);
        for p in &mut self.ports {
            p.writer = None;
        }
        for w in self.writers.drain(..) {
            let _ = w.join();
        }
        self.read_kernel_counters();
        self.count_unread();
    }

    /// Empty every device's kernel queue or ring, counting the frames in it: a frame a
    /// host sent between the switch's last read and the counters' reading is in the
    /// kernel's count, and here, so the ledger balances (one sent after the reading is
    /// here only). Bounded in frames and time: a host still flooding does not hold up
    /// the exit.
    fn count_unread(&mut self) {
        const MAX_FRAMES: u64 = 1 << 16;
        const MAX_TIME: Duration = Duration::from_millis(100);
        let until = Instant::now() + MAX_TIME;
        let mut buf = vec![0; 65_536];
        for p in &mut self.ports {
            if p.state == PortState::Gone {
                continue;
            }
            while p.unread_at_exit < MAX_FRAMES && Instant::now() < until {
                match p.dev.read_now(&mut buf) {
                    Ok(Some(r)) if r.len > 0 => p.unread_at_exit += 1,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    _ => break,
                }
            }
        }
    }

    /// Read each device's kernel counters (a port gone keeps its last reading).
    fn read_kernel_counters(&mut self) {
        for p in &mut self.ports {
            if p.state != PortState::Gone {
                if let Ok(s) = p.dev.probe() {
                    p.kernel = s.counters.or(p.kernel);
                }
            }
        }
    }

    /// One `--stats-json` line: the report so far, on one line. A file that cannot be
    /// written is reported once and then left alone.
    fn append_stats_json(&mut self, path: &std::path::Path) {
        if !self.stats_json_ok {
            return;
        }
        self.read_kernel_counters();
        let line = serde_json::to_string(&self.report().to_value()).expect("a report serializes");
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
            self.stats_json_ok = false;
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
            rx += p.link.tx.counters.rx_packets;
            tx += p.link.tx.counters.tx_packets;
            pfc_tx += p.link.tx.counters.tx_pfc_frames;
            pfc_rx += p.link.tx.counters.rx_pfc_frames;
        }
        let ring: u64 = self
            .ports
            .iter()
            .filter_map(|p| p.kernel.map(|k| k.host_tx_dropped))
            .sum();
        let turns = self.turns.report();
        let line = format!(
            "t={:.1}s rx {rx} tx {tx} frames | drops {} lossless_drops {} | kernel ring drops {ring} | PFC tx {pfc_tx} rx {pfc_rx} | longest turn gap {:.1} ms, stalls {}",
            self.start.elapsed().as_secs_f64(),
            sw.drops().total(),
            sw.lossless_drops(),
            turns.gap_max_us as f64 / 1e3,
            turns.stalls,
        );
        let mut out = io::stdout().lock();
        if writeln!(out, "{line}").and_then(|_| out.flush()).is_err() {
            self.stats_out = false;
        }
    }
}
