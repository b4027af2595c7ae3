//! The I/O threads of `lossless tap`: one reader and one writer per port's [`Device`].
//!
//! A reader waits for frames on its device (polling, so that it sees the stop flag) and
//! queues them in the [`Inbox`]; a TAP that fails for good is reported there as gone (an
//! interface's read errors only say it went down: the pipeline thread's probe decides). A writer
//! writes the batches the pipeline thread hands it — a TAP write runs the receiving
//! namespace's network stack inside the syscall, so writes must not serialize in the
//! pipeline thread — and counts every frame: written, or failed (the host set the link
//! down), in which case it raises the port's link-down flag (a flag, never lost the way a
//! message on a full channel would be).

use super::device::Device;
use super::inbox::Inbox;
use crossbeam_channel::Receiver;
use lossless_sys::sched::Realtime;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a reader rests after an interface reported an error (it went down).
const ERROR_REST: Duration = Duration::from_millis(10);
/// Largest frame a TAP read can return.
const READ_BUF: usize = 65_536;
/// Most frames a reader takes in one go before handing them over.
const READ_BATCH: usize = 32;
/// How long a reader waits for a frame before it looks at the stop flag again.
const READ_POLL: Duration = Duration::from_millis(20);
/// Real-time priority of reader and writer threads: above the pipeline thread, so that
/// short I/O never waits behind a long pipeline burst.
pub const IO_PRIORITY: i32 = 20;

/// Counters of one port's TAP, shared by its threads and the pipeline thread.
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
    /// Frames handed to the writer that it has not finished yet (while nonzero, the
    /// pipeline thread does not write data frames itself: they would overtake these).
    pub pending: AtomicU64,
}

impl PortIoStats {
    fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
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

/// Start port `port`'s reader; it ends at `stop` (the switch stops), at `retire` (its device
/// was replaced) or when a TAP is gone.
pub fn spawn_reader(
    port: usize,
    tap: Arc<Device>,
    inbox: Arc<Inbox>,
    stats: Arc<PortIoStats>,
    stop: Arc<AtomicBool>,
    retire: Arc<AtomicBool>,
    realtime: Realtime,
) -> io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name(format!("tapr-{}", tap.name()))
        .spawn(move || {
            let _ = realtime.apply(IO_PRIORITY);
            let mut buf = vec![0u8; READ_BUF];
            let mut frames = Vec::with_capacity(READ_BATCH);
            while !stop.load(Ordering::Relaxed) && !retire.load(Ordering::Relaxed) {
                // Wait for a frame, then take what else is waiting: one hand-over for all.
                let mut r = tap.read_timeout(&mut buf, READ_POLL);
                loop {
                    match r {
                        Ok(None) => break,
                        Ok(Some(0)) => {
                            inbox.push(port, &mut frames, &stop);
                            let eof = io::Error::new(io::ErrorKind::UnexpectedEof, "TAP closed");
                            return inbox.gone(port, eof);
                        }
                        Ok(Some(n)) => {
                            PortIoStats::add(&stats.read_frames, 1);
                            frames.push(buf[..n].to_vec());
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(_) if !tap.read_error_is_final() => {
                            std::thread::sleep(ERROR_REST);
                            break;
                        }
                        Err(e) => {
                            inbox.push(port, &mut frames, &stop);
                            return inbox.gone(port, e);
                        }
                    }
                    if frames.len() >= READ_BATCH {
                        break;
                    }
                    r = tap.read_now(&mut buf);
                }
                if !frames.is_empty() {
                    inbox.push(port, &mut frames, &stop);
                }
            }
        })
}

/// Write `batch` to `tap`, counting each frame; after a failed write (the link is down)
/// the rest of the batch is counted as failed too.
pub fn write_batch(tap: &Device, batch: &[Vec<u8>], stats: &PortIoStats) {
    for (k, frame) in batch.iter().enumerate() {
        let r = tap.write(frame);
        stats.written(&r);
        if r.is_err() {
            PortIoStats::add(&stats.write_errors, (batch.len() - k - 1) as u64);
            break;
        }
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
