//! The writer threads of `lossless tap`, one per port's [`Device`], and the port's I/O
//! counters. A writer writes the batches the pipeline thread hands it under load — a TAP
//! write runs the receiving namespace's network stack inside the syscall, so writes must
//! not serialize in the pipeline thread — and counts every frame: written, or failed (the
//! host set the link down), in which case it raises the port's link-down flag (a flag,
//! never lost the way a message on a full channel would be).

use super::device::Device;
use crossbeam_channel::Receiver;
use lossless_sys::sched::Realtime;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Real-time priority of writer threads: above the pipeline thread, so that a batch
/// handed over is written without waiting behind a long pipeline burst.
pub const IO_PRIORITY: i32 = 20;

/// Counters of one port's device, shared by its writer and the pipeline thread.
#[derive(Debug, Default)]
pub struct PortIoStats {
    /// Frames read from the TAP.
    pub read_frames: AtomicU64,
    /// Frames written to the TAP.
    pub written_frames: AtomicU64,
    /// Frames that could not be written (the TAP's link was down, or it was gone).
    pub write_errors: AtomicU64,
    /// Frames dropped because the writer's queue was full.
    pub write_overruns: AtomicU64,
    /// A write failed: the host has set the link down (cleared by the pipeline thread).
    pub link_down: AtomicBool,
    /// Frames read that carried what UE sends as control ordered sets (CF_Update, LLR's
    /// messages): not among the port's received frames.
    pub ordered_sets_read: AtomicU64,
    /// Frames written that carried control ordered sets: not among its sent frames.
    pub ordered_sets_written: AtomicU64,
    /// Super-frames read (a host's segmentation offload: one read, up to 64 KB) and cut
    /// into the frames a NIC would send: each is one of `read_frames`.
    pub segmented_frames: AtomicU64,
    /// The frames they were cut into, each a frame the switch port received.
    pub segments: AtomicU64,
    /// Frames whose TCP or UDP checksum the host left to offload, completed on the way in
    /// (a TAP's or an interface's, by the pipeline thread's reader).
    pub checksums_completed: AtomicU64,
    /// Frames handed to the writer that it has not finished yet (while nonzero, the
    /// pipeline thread does not write data frames itself: they would overtake these).
    pub pending: AtomicU64,
}

impl PortIoStats {
    fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }

    /// Count a frame read.
    pub fn count_read(&self) {
        Self::add(&self.read_frames, 1);
    }

    /// Count a super-frame cut into `segments` frames.
    pub fn count_segmented(&self, segments: usize) {
        Self::add(&self.segmented_frames, 1);
        Self::add(&self.segments, segments as u64);
    }

    /// Count a checksum completed on the way in.
    pub fn count_checksum(&self) {
        Self::add(&self.checksums_completed, 1);
    }

    /// Count a frame written, or failed.
    pub fn written(&self, r: &io::Result<usize>) {
        match r {
            Ok(_) => Self::add(&self.written_frames, 1),
            Err(_) => {
                Self::add(&self.write_errors, 1);
                self.link_down.store(true, Ordering::Relaxed);
            }
        }
    }

    /// `n` frames that could not be written (their TAP is gone).
    pub fn failed(&self, n: u64) {
        Self::add(&self.write_errors, n);
    }

    /// `n` frames the writer's full queue could not take.
    pub fn overrun(&self, n: u64) {
        Self::add(&self.write_overruns, n);
    }

    /// A value of one of the counters.
    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}

/// Write `batch` to `tap`, counting each frame; after a failed write (the link is down)
/// the rest of the batch is counted as failed too.
pub fn write_batch(tap: &Device, batch: &[Vec<u8>], stats: &PortIoStats) {
    let (written, error) = tap.write_all(batch);
    PortIoStats::add(&stats.written_frames, written as u64);
    if let Some(e) = error {
        // The failed frame and every one after it.
        stats.written(&Err(e));
        PortIoStats::add(&stats.write_errors, (batch.len() - written - 1) as u64);
    }
}

/// Start port `port`'s writer; it ends when the sending side of `batches` is dropped and
/// every batch queued before has been written.
pub fn spawn_writer(
    tap: Arc<Device>,
    batches: Receiver<Vec<Vec<u8>>>,
    stats: Arc<PortIoStats>,
    realtime: Realtime,
) -> io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name(format!("tapw-{}", tap.name()))
        .spawn(move || {
            let _ = realtime.apply(IO_PRIORITY);
            for batch in batches {
                write_batch(&tap, &batch, &stats);
                stats
                    .pending
                    .fetch_sub(batch.len() as u64, Ordering::Release);
            }
        })
}
