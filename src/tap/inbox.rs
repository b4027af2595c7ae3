//! Frames on their way from the TAPs to the pipeline thread: one queue per port, bounded
//! in bytes. What waits here has left its host but not reached the switch — cable, for
//! PFC, that headroom must cover — so the bound is part of the headroom a TAP port needs
//! ([`crate::cable`]). Ports are served round-robin, one frame each in turn, so that one
//! host flooding faster than the pipeline cannot hold up the others: its own queue fills,
//! its reader waits, and its frames back up into its own TAP ring.

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// How long a reader waits for room before it looks at the stop flag again.
const SPACE_WAIT: Duration = Duration::from_millis(20);

#[derive(Debug, Default)]
struct State {
    queues: Vec<VecDeque<Vec<u8>>>,
    bytes: Vec<usize>,
    /// Ports whose TAP failed for good, with why.
    gone: Vec<(usize, io::Error)>,
    /// Port served first by the next `take`.
    next: usize,
    /// Deepest any port's queue has been, in bytes.
    high_water: usize,
    /// The pipeline thread is waiting (only then is it worth waking).
    waiting: bool,
    /// It wants to be woken by any arrival; else only by a queue half full.
    wake_any: bool,
}

/// The per-port queues between reader threads and the pipeline thread.
#[derive(Debug)]
pub struct Inbox {
    state: Mutex<State>,
    /// Signalled when a frame or a gone port arrives.
    ready: Condvar,
    /// Signalled when frames are taken (room for readers).
    space: Condvar,
    cap: usize,
}

impl Inbox {
    /// Queues for `ports` ports of at most `cap` bytes each (a frame always fits into an
    /// empty queue).
    pub fn new(ports: usize, cap: usize) -> Inbox {
        Inbox {
            state: Mutex::new(State {
                queues: vec![VecDeque::new(); ports],
                bytes: vec![0; ports],
                ..State::default()
            }),
            ready: Condvar::new(),
            space: Condvar::new(),
            cap,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking thread cannot leave the queues inconsistent: every update is one push
        // or pop with its byte count.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queue `frames`, read from `port` in one go, waiting while the port's queue is full.
    /// Once `stop` is set they are queued anyway: a frame read is a frame to account for.
    pub fn push(&self, port: usize, frames: &mut Vec<Vec<u8>>, stop: &AtomicBool) {
        let mut s = self.lock();
        for frame in frames.drain(..) {
            while s.bytes[port] > 0
                && s.bytes[port] + frame.len() > self.cap
                && !stop.load(Ordering::Relaxed)
            {
                s = self.wake_pipeline(s, port);
                s = self
                    .space
                    .wait_timeout(s, SPACE_WAIT)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            s.bytes[port] += frame.len();
            s.high_water = s.high_water.max(s.bytes[port]);
            s.queues[port].push_back(frame);
        }
        drop(self.wake_pipeline(s, port));
    }

    /// Wake the pipeline thread if it waits — for any arrival when it asked so, else once
    /// `port`'s queue is half full (a futex wake costs a system call, and in a virtual
    /// machine a context switch costs more still; a timed wait may also overshoot by
    /// milliseconds there, which a filling queue must not have to sit out).
    fn wake_pipeline<'a>(
        &'a self,
        mut s: MutexGuard<'a, State>,
        port: usize,
    ) -> MutexGuard<'a, State> {
        if s.waiting && (s.wake_any || s.bytes[port] * 2 >= self.cap) {
            s.waiting = false;
            self.ready.notify_one();
        }
        s
    }

    /// `port`'s TAP failed for good (deleted, namespace gone).
    pub fn gone(&self, port: usize, e: io::Error) {
        let mut s = self.lock();
        s.gone.push((port, e));
        s.wake_any = true;
        drop(self.wake_pipeline(s, port));
    }

    /// Move up to `max` frames into `out`, one per port in turn. First, with
    /// `wake_on_arrival`, wait at most `wait` for a frame when there is none; without, wait
    /// `wait` to let frames gather (batching while busy), cut short only when a queue is
    /// half full. Returns the ports that went away.
    pub fn take(
        &self,
        max: usize,
        wait: Duration,
        wake_on_arrival: bool,
        out: &mut Vec<(usize, Vec<u8>)>,
    ) -> Vec<(usize, io::Error)> {
        let empty = |s: &State| s.gone.is_empty() && s.bytes.iter().all(|b| *b == 0);
        let mut s = self.lock();
        let half_full = s.bytes.iter().any(|b| b * 2 >= self.cap);
        if !wait.is_zero()
            && if wake_on_arrival {
                empty(&s)
            } else {
                !half_full
            }
        {
            s.waiting = true;
            s.wake_any = wake_on_arrival;
            s = self
                .ready
                .wait_timeout(s, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            s.waiting = false;
        }
        let n = s.queues.len();
        let mut taken = 0;
        let mut idle = 0;
        while taken < max && idle < n {
            let p = s.next;
            s.next = (p + 1) % n;
            match s.queues[p].pop_front() {
                Some(f) => {
                    s.bytes[p] -= f.len();
                    out.push((p, f));
                    taken += 1;
                    idle = 0;
                }
                None => idle += 1,
            }
        }
        let gone = std::mem::take(&mut s.gone);
        drop(s);
        if taken > 0 {
            self.space.notify_all();
        }
        gone
    }

    /// Deepest any port's queue has been, in bytes.
    pub fn high_water(&self) -> usize {
        self.lock().high_water
    }

    /// Frames waiting now.
    pub fn len(&self) -> usize {
        self.lock().queues.iter().map(VecDeque::len).sum()
    }

    /// True when no frame waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn ports_are_served_in_turn() {
        let inbox = Inbox::new(3, 10_000);
        let stop = AtomicBool::new(false);
        inbox.push(0, &mut (0..5).map(|i| vec![0; 100 + i]).collect(), &stop);
        inbox.push(2, &mut vec![vec![2; 60]], &stop);
        let mut out = Vec::new();
        inbox.take(3, Duration::ZERO, true, &mut out);
        let ports: Vec<usize> = out.iter().map(|(p, _)| *p).collect();
        assert_eq!(
            ports,
            vec![0, 2, 0],
            "port 2 is not stuck behind port 0's backlog"
        );
    }

    #[test]
    fn a_full_port_waits_and_others_do_not() {
        let inbox = Arc::new(Inbox::new(2, 1_000));
        let stop = Arc::new(AtomicBool::new(false));
        inbox.push(0, &mut vec![vec![0; 900]], &stop);
        let (i2, s2) = (Arc::clone(&inbox), Arc::clone(&stop));
        let blocked = std::thread::spawn(move || i2.push(0, &mut vec![vec![0; 900]], &s2));
        std::thread::sleep(Duration::from_millis(50));
        assert!(!blocked.is_finished(), "port 0 is full");
        inbox.push(1, &mut vec![vec![1; 900]], &stop);
        let mut out = Vec::new();
        inbox.take(1, Duration::ZERO, true, &mut out);
        blocked.join().unwrap();
        assert_eq!(inbox.len(), 2);
        assert_eq!(inbox.high_water(), 900);
    }

    #[test]
    fn a_stopping_reader_queues_what_it_read() {
        let inbox = Inbox::new(1, 100);
        let stop = AtomicBool::new(true);
        inbox.push(0, &mut vec![vec![0; 90], vec![0; 90]], &stop);
        assert_eq!(inbox.len(), 2);
    }
}
