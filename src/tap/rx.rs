//! The receive side of `lossless tap`'s ports: the pipeline thread reads its devices
//! itself. It waits on every port's descriptor at once (a TAP, or an interface's
//! memory-mapped ring) for the first frame or its next deadline, then takes what is
//! waiting, one frame per port in turn, so that a host flooding its port cannot hold up
//! the others. A frame is read once, from the kernel, straight into the wire model: there
//! is no reader thread to wake and no queue to hand it through.
//!
//! What a round reads from one port is bounded in bytes ([`crate::cable::READ_QUEUE_BYTES`],
//! the "read queue" of the software cable): frames read in a round reach the switch after
//! any XOFF one of them triggers, so the bound is part of the headroom a lossless PG on a
//! TAP port needs. Past it, the port's frames wait in its kernel ring.

use super::ports::PortIo;
use super::writer::PortIoStats;
use super::PortState;
use crate::cable;
use crate::wallclock::Wait;
use lossless_pipeline::wire::checksum::complete_l4_checksum;
use lossless_pipeline::wire::gso::{self, Offload};
use std::io;
use std::time::{Duration, Instant};

/// Largest read a TAP can return: a 64 KB super-frame (IP packet) with its Ethernet
/// header, VLAN tags and virtio-net header.
const READ_BUF: usize = 65_536 + 256;

/// The pipeline thread's reads from its ports.
#[derive(Debug)]
pub struct Rx {
    /// Where a frame is read before it is handed to the switch.
    buf: Vec<u8>,
    /// The port read first in the next round.
    next: usize,
    /// Most bytes read from one port in one round.
    high_water: usize,
    /// The last round left frames waiting: a port's share was read before its ring was
    /// empty, or the round was full.
    more: bool,
    /// How long the last round waited (slept, or waited for an arrival).
    waited: Duration,
}

/// What a round of reads found besides frames: ports that went away, with why.
pub type Gone = Vec<(usize, io::Error)>;

impl Rx {
    /// Reads for a switch with no round read yet.
    pub fn new() -> Rx {
        Rx {
            buf: vec![0; READ_BUF],
            next: 0,
            high_water: 0,
            more: false,
            waited: Duration::ZERO,
        }
    }

    /// Most bytes read from one port in one round, so far.
    pub fn high_water(&self) -> usize {
        self.high_water
    }

    /// How long the last round waited before it read.
    pub fn waited(&self) -> Duration {
        self.waited
    }

    /// Whether the last round left frames waiting (the next should not wait).
    pub fn more_waiting(&self) -> bool {
        self.more
    }

    /// Read up to `max` frames into `out`, after waiting as `wait` says: for the first
    /// arrival when none is waiting, or a fixed time while frames gather (batching while
    /// busy, as a NIC moderates its interrupts). Returns the ports that went away.
    pub fn read(
        &mut self,
        ports: &[PortIo],
        max: usize,
        wait: Wait,
        out: &mut Vec<(usize, Vec<u8>)>,
    ) -> Gone {
        let mut gone = Gone::new();
        self.waited = Duration::ZERO;
        let (wait, wake_on_arrival) = match wait {
            Wait::Arrival(d) => (d, true),
            Wait::Gather(d) => (d, false),
        };
        if !wake_on_arrival && !wait.is_zero() {
            let t = Instant::now();
            std::thread::sleep(wait);
            self.waited = t.elapsed();
        }
        self.take_waiting(ports, max, out, &mut gone);
        if out.is_empty() && gone.is_empty() && wake_on_arrival && !wait.is_zero() {
            let (fds, of): (Vec<i32>, Vec<usize>) = ports
                .iter()
                .enumerate()
                .filter(|(_, p)| p.state != PortState::Gone)
                .map(|(i, p)| (p.dev.raw_fd(), i))
                .unzip();
            let t = Instant::now();
            // An error here (none is expected: the descriptors are open) only ends the
            // wait early; the reads that follow report a device that failed.
            let ready = lossless_sys::poll::readable(&fds, wait).unwrap_or_default();
            self.waited = t.elapsed();
            self.take_waiting(ports, max, out, &mut gone);
            // A device that woke the wait with no frame has an error pending (an
            // interface that went down): cleared, or every wait would end at once. The
            // link probe decides what it means.
            for port in ready.into_iter().map(|k| of[k]) {
                if !out.iter().any(|(p, _)| *p == port) {
                    let _ = ports[port].dev.take_error();
                }
            }
        }
        gone
    }

    /// Take the frames waiting, one per port in turn, until `max`, every port's bytes for
    /// the round, or nothing is left.
    fn take_waiting(
        &mut self,
        ports: &[PortIo],
        max: usize,
        out: &mut Vec<(usize, Vec<u8>)>,
        gone: &mut Gone,
    ) {
        let n = ports.len();
        self.more = false;
        if n == 0 {
            return;
        }
        let mut bytes = vec![0usize; n];
        let mut open: Vec<bool> = ports.iter().map(|p| p.state != PortState::Gone).collect();
        let start = self.next;
        self.next = (start + 1) % n;
        while out.len() < max && open.contains(&true) {
            for k in 0..n {
                let port = (start + k) % n;
                if !open[port] || out.len() >= max {
                    continue;
                }
                let p = &ports[port];
                match p.dev.read_now(&mut self.buf) {
                    Ok(Some(r)) if r.len == 0 => {
                        open[port] = false;
                        if p.dev.read_error_is_final() {
                            let eof = io::Error::new(io::ErrorKind::UnexpectedEof, "TAP closed");
                            gone.push((port, eof));
                        }
                    }
                    Ok(Some(r)) => {
                        p.stats.count_read();
                        let frame = &mut self.buf[r.at..r.at + r.len];
                        take_offloaded(frame, r.offload, port, &p.stats, out);
                        bytes[port] += r.len;
                        self.high_water = self.high_water.max(bytes[port]);
                        // The round's share of this port is read: the rest waits in its
                        // kernel ring.
                        if bytes[port] >= cable::READ_QUEUE_BYTES {
                            open[port] = false;
                            self.more = true;
                        }
                    }
                    Ok(None) => open[port] = false,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        open[port] = false;
                        // An interface's error only says it went down: the link probe
                        // decides whether it is gone.
                        if p.dev.read_error_is_final() {
                            gone.push((port, e));
                        }
                    }
                }
            }
        }
        if out.len() >= max {
            self.more = true;
        }
    }
}

/// Hand the switch what a host sent as `frame`, doing what it left to its NIC: a
/// checksum completed; a super-frame cut into the frames a NIC would send, each counted
/// by the switch as a frame. One that cannot be cut goes on whole (longer than the port's
/// MTU, the switch drops it as a giant).
fn take_offloaded(
    frame: &mut [u8],
    offload: Offload,
    port: usize,
    stats: &PortIoStats,
    out: &mut Vec<(usize, Vec<u8>)>,
) {
    let complete = |frame: &mut [u8]| {
        if complete_l4_checksum(frame) {
            stats.count_checksum();
        }
    };
    match offload {
        Offload::None => out.push((port, frame.to_vec())),
        Offload::Checksum => {
            complete(frame);
            out.push((port, frame.to_vec()));
        }
        Offload::Segment { kind, payload } => {
            match gso::segment(frame, kind, payload, |s| out.push((port, s))) {
                Ok(n) => stats.count_segmented(n),
                Err(_) => {
                    complete(frame);
                    out.push((port, frame.to_vec()));
                }
            }
        }
    }
}
