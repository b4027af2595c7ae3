//! The ports of `lossless tap` as the wall-clock driver sees them ([`Ports`]): each
//! port's [`Device`], read by the pipeline thread itself ([`super::rx`]) and written by
//! it (control frames, the few frames of a light turn) or by the port's [`writer`] thread
//! (batches under load). Besides frames, a turn brings the switch its ports' link
//! changes: a TAP whose host set it down or up, an interface that lost its carrier, was
//! deleted, or came back under its name (a container restarted).

use super::device::Device;
use super::rx::Rx;
use super::writer::{self, spawn_writer, PortIoStats};
use super::{PortState, LIGHT_ROUND};
use crate::config::Attach;
use crate::wallclock::{Input, Ports, Wait};
use crossbeam_channel::{bounded, Sender, TrySendError};
use lossless_pipeline::link::FrameClass;
use lossless_pipeline::wire::link_control;
use lossless_pipeline::Packet;
use lossless_sys::kernel::TapCounters;
use lossless_sys::sched::Realtime;
use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Smallest Ethernet frame without FCS: what a MAC pads short frames to.
const MIN_FRAME_NO_FCS: usize = 60;
/// How often the host side of a TAP whose link is down is asked whether it is up again.
const LINK_PROBE: Duration = Duration::from_millis(100);
/// Batches queued toward one TAP's writer thread (a full queue drops, counted as overrun).
const WRITE_QUEUE: usize = 1024;

/// One port's opened device, and what its link speaks.
pub(super) struct PortDev {
    /// The switch port's name.
    pub name: String,
    pub dev: Arc<Device>,
    /// What the port serves.
    pub attach: Attach,
    pub mtu: u32,
    /// The port speaks LLR: a frame numbered by the peer comes with an LLR data header.
    pub llr: bool,
    /// The port speaks CBFC or LLR: EtherType 0x88B5 is its link's messages (on any
    /// other port, someone's experimental traffic).
    pub link_control: bool,
}

/// One port's device and its writer.
pub(super) struct PortIo {
    /// The switch port's name (for messages).
    pub name: String,
    pub dev: Arc<Device>,
    /// What the port was configured to serve, and its MTU (to attach again).
    pub attach: Attach,
    pub mtu: u32,
    /// The port speaks LLR (strip the LLR data header of received frames).
    llr: bool,
    /// The port speaks CBFC or LLR (EtherType 0x88B5 frames are its link's messages).
    link_control: bool,
    /// Times the port's interface was attached again after it was gone.
    pub reattached: u64,
    /// Counts of devices the port had before, carried into the report.
    pub carried: Carried,
    pub state: PortState,
    /// When the host side was last asked whether a downed link is up again.
    probed: Instant,
    /// The kernel's counters of the TAP, as last read.
    pub kernel: Option<TapCounters>,
    pub stats: Arc<PortIoStats>,
    writer: Option<Sender<Vec<Vec<u8>>>>,
    /// Frames of this turn, handed to the writer in one batch.
    batch: Vec<Vec<u8>>,
    /// The user was told that frames too long to read whole arrived.
    oversize_told: bool,
    /// Frames the host had sent that were still waiting in the device's kernel queue or
    /// ring when the switch stopped: counted after the kernel's counters were read last,
    /// never switched.
    pub unread_at_exit: u64,
}

/// What a port's earlier devices counted (interfaces attached again keep counting on).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Carried {
    pub oversize: u64,
    pub kernel: TapCounters,
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

/// Every port of the switch, with their writer threads.
pub(super) struct TapPorts {
    /// The ports are closed: writers joined, kernel counters read last, queues emptied
    /// (what the kernel counted is then all accounted for, or discarded by it).
    pub closed: bool,
    pub ports: Vec<PortIo>,
    pub rx: Rx,
    writers: Vec<JoinHandle<()>>,
    /// Times a port's link was seen going down or coming back.
    pub link_changes: u64,
    /// What was asked for the writer threads (also those of an interface attached again).
    realtime: Realtime,
    /// Frames of the current turn, as read.
    frames: Vec<(usize, Vec<u8>)>,
}

impl TapPorts {
    /// The ports on their opened devices (port name, device, what it serves, MTU), each
    /// with a writer thread.
    pub fn start(devs: Vec<PortDev>, realtime: Realtime) -> io::Result<TapPorts> {
        let mut ports = Vec::new();
        let mut writers = Vec::new();
        for PortDev {
            name,
            dev,
            attach,
            mtu,
            llr,
            link_control,
        } in devs
        {
            let stats = Arc::new(PortIoStats::default());
            let (writer, tx) = start_writer(&dev, &stats, realtime)?;
            writers.push(writer);
            ports.push(PortIo {
                name,
                dev,
                attach,
                mtu,
                llr,
                link_control,
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
        Ok(TapPorts {
            closed: false,
            ports,
            rx: Rx::new(),
            writers,
            link_changes: 0,
            realtime,
            frames: Vec::new(),
        })
    }

    /// A frame (no FCS) read from `port`, for the switch. A frame another switch numbered
    /// for link-level retry loses the header that carries its number (UE carries it in
    /// the preamble, outside the frame), which goes with it as its hop tag.
    fn receive(&mut self, port: usize, mut data: Vec<u8>, into: &mut Vec<Input>) {
        if self.ports[port].state == PortState::LinkDown
            && matches!(*self.ports[port].dev, Device::Tap(_))
        {
            // Frames come from it again: the host brought the link back up.
            self.link_up(port, into);
        }
        // The host's MAC would pad a short frame to the Ethernet minimum (60 bytes + FCS)
        // before it reached the wire: it counts as that long. A TAP hands it over unpadded,
        // and the padding is not held, so that it is never parsed as a header (a PFC frame
        // cut after its opcode is truncated, not one that enables no priority).
        // Only a port that speaks LLR or CBFC reads EtherType 0x88B5 as its link's: on
        // any other, such a frame is data like any other EtherType.
        let io = &self.ports[port];
        let hop = if io.llr {
            link_control::unwrap_llr_data(&mut data)
        } else {
            None
        };
        let class = if io.link_control {
            link_control::class_of(&data)
        } else {
            FrameClass::Data
        };
        let len = (data.len().max(MIN_FRAME_NO_FCS) + 4) as u32;
        let mut pkt = Packet::new(data, len);
        if let Some(hop) = hop {
            pkt.hop = hop;
        }
        pkt.meta.class = class;
        if pkt.meta.class.is_ordered_set() {
            self.ports[port]
                .stats
                .ordered_sets_read
                .fetch_add(1, Ordering::Relaxed);
        }
        into.push(Input::Frame(port, pkt));
    }

    fn link_up(&mut self, port: usize, into: &mut Vec<Input>) {
        self.ports[port].state = PortState::Up;
        self.link_changes += 1;
        into.push(Input::Link(port, true));
    }

    fn link_down(&mut self, port: usize, into: &mut Vec<Input>) {
        let p = &mut self.ports[port];
        p.state = PortState::LinkDown;
        p.probed = Instant::now();
        eprintln!(
            "lossless tap: port {} ({} {}) link is down; its queued frames are dropped",
            p.name,
            p.attach.kind(),
            p.dev.name()
        );
        self.link_changes += 1;
        into.push(Input::Link(port, false));
    }

    fn port_gone(&mut self, port: usize, e: &io::Error, into: &mut Vec<Input>) {
        let p = &mut self.ports[port];
        if p.state == PortState::Gone {
            return;
        }
        eprintln!(
            "lossless tap: port {} ({} {}) is gone: {e}; serving the other ports",
            p.name,
            p.attach.kind(),
            p.dev.name()
        );
        p.state = PortState::Gone;
        p.writer = None;
        into.push(Input::Link(port, false));
    }

    /// Writers that failed mark their port's link down; a downed link is probed on the
    /// host's side (not by sending into it) every [`LINK_PROBE`]. An interface is probed
    /// that often whatever its state: its link and carrier are the kernel's to report.
    fn check_links(&mut self, into: &mut Vec<Input>) {
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
                self.link_down(port, into);
            } else if watched && p.probed.elapsed() >= LINK_PROBE {
                self.probe_link(port, into);
            } else if p.state == PortState::Gone && iface && p.probed.elapsed() >= LINK_PROBE {
                p.probed = Instant::now();
                self.reattach(port, into);
            }
        }
    }

    /// Ask the kernel about port `port`'s device: counters, up or down, or gone. Warns
    /// once when an interface has received frames too long to forward.
    fn probe_link(&mut self, port: usize, into: &mut Vec<Input>) {
        let p = &mut self.ports[port];
        p.probed = Instant::now();
        if !p.oversize_told && p.dev.oversize() > 0 {
            p.oversize_told = true;
            eprintln!(
                "lossless tap: port {} (iface {}) receives super-frames longer than 64 KB (the host raised its gso_max_size: BIG TCP); they are counted (oversize_frames) and dropped. Lower it on the host's end: ip link set <iface> gso_max_size 65536 gso_ipv4_max_size 65536",
                p.name,
                p.dev.name()
            );
        }
        match p.dev.probe() {
            Ok(s) => {
                p.kernel = s.counters.or(p.kernel);
                match (p.state, s.up) {
                    (PortState::LinkDown, true) => self.link_up(port, into),
                    (PortState::Up, false) => self.link_down(port, into),
                    _ => {}
                }
            }
            Err(e) => self.port_gone(port, &e, into),
        }
    }

    /// A gone interface port whose name exists again (a container restarted with new
    /// veths of the same names): attach to it, with a new writer thread.
    fn reattach(&mut self, port: usize, into: &mut Vec<Input>) {
        let p = &mut self.ports[port];
        let (Attach::Iface(name) | Attach::Link(name)) = &p.attach else {
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
        let Ok((writer, tx)) = start_writer(&dev, &p.stats, self.realtime) else {
            return;
        };
        // The old device's writer ends when its queue is dropped; its counts stay in the
        // report.
        p.carried.oversize += p.dev.oversize();
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
            p.name,
            p.dev.name()
        );
        self.link_changes += 1;
        into.push(Input::Link(port, true));
    }

    /// Let the writers finish what they were given and join them, read the kernel's
    /// counters last, then count what the hosts had sent that the switch never read.
    pub fn close(&mut self) {
        for p in &mut self.ports {
            p.writer = None;
        }
        for w in self.writers.drain(..) {
            let _ = w.join();
        }
        self.read_kernel_counters();
        self.count_unread();
        self.closed = true;
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
    pub fn read_kernel_counters(&mut self) {
        for p in &mut self.ports {
            if p.state != PortState::Gone {
                if let Ok(s) = p.dev.probe() {
                    p.kernel = s.counters.or(p.kernel);
                }
            }
        }
    }

    /// Frames the kernel dropped in full TAP rings (or interface rings), so far.
    pub fn ring_drops(&self) -> u64 {
        self.ports
            .iter()
            .filter_map(|p| p.kernel.map(|k| k.host_tx_dropped))
            .sum()
    }
}

impl Ports for TapPorts {
    /// Read the ports (every port's frames in turn, see [`Rx`]), then look at their links.
    fn take(&mut self, wait: Wait, max: usize, into: &mut Vec<Input>) -> Duration {
        let mut frames = std::mem::take(&mut self.frames);
        let gone = self.rx.read(&self.ports, max, wait, &mut frames);
        for (port, e) in gone {
            self.port_gone(port, &e, into);
        }
        for (port, data) in frames.drain(..) {
            self.receive(port, data, into);
        }
        self.frames = frames;
        self.check_links(into);
        self.rx.waited()
    }

    fn more_waiting(&self) -> bool {
        self.rx.more_waiting()
    }

    /// Control frames (PFC, PAUSE, CBFC's CF_Update, LLR's messages) are written at once;
    /// data frames wait for the turn's batch, each with the LLR header its hop tag asks
    /// for. A CC_Update goes with the data frames, in order: the consumed count it carries
    /// covers every frame sent before it, so it must not overtake one (the receiver would
    /// take it for lost, and count it twice when it came).
    fn send(&mut self, port: usize, pkt: Packet) {
        let p = &mut self.ports[port];
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
    }

    /// A light turn's few frames, toward an idle writer, are written here, without waking
    /// a thread (a wake-up costs more than the write); under load the writer takes the
    /// batch (a full queue drops it, counted as overrun).
    fn flush(&mut self, started: usize) {
        for p in self.ports.iter_mut().filter(|p| !p.batch.is_empty()) {
            let batch = std::mem::take(&mut p.batch);
            let n = batch.len() as u64;
            match &p.writer {
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
    }
}
