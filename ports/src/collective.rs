//! Collectives over RC queue pairs or TCP connections: each host of a collective runs one
//! [`Rank`], which posts the messages of its steps on its send connections when what it
//! has received allows, the way a NCCL proxy does.
//!
//! * Ring AllReduce: rank i sends to rank i+1 and receives from rank i−1 on one QP each.
//!   An iteration is 2(N−1) steps of size/N bytes (N−1 of reduce-scatter, then N−1 of
//!   all-gather); rank i starts step k (k ≥ 1) once step k−1 has arrived from rank i−1.
//! * All-to-all: every rank sends size/N bytes to each other rank on its own QP, all at
//!   the iteration's start.
//!
//! A rank has finished an iteration when every message it was to receive has arrived and
//! every message it sent is acknowledged; it starts the next one at once, as back-to-back
//! launches of the collective do.

use lossless_buffer_model::Time;

/// Which collective, and how it moves data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollectiveKind {
    /// AllReduce, ring algorithm: reduce-scatter then all-gather around the ring.
    AllReduceRing,
    /// All-to-all: each rank sends a distinct size/N block to every other.
    AllToAll,
}

impl CollectiveKind {
    /// Messages each of a rank's send QPs carries per iteration among `ranks`.
    pub fn steps(self, ranks: usize) -> u64 {
        match self {
            CollectiveKind::AllReduceRing => 2 * (ranks as u64 - 1),
            CollectiveKind::AllToAll => 1,
        }
    }

    /// Bus bandwidth over algorithm bandwidth, as nccl-tests defines it (its
    /// PERFORMANCE.md): what each link carries relative to the buffer size. AllReduce
    /// 2(N−1)/N, all-to-all (N−1)/N.
    pub fn bus_factor(self, ranks: usize) -> f64 {
        let n = ranks as f64;
        match self {
            CollectiveKind::AllReduceRing => 2.0 * (n - 1.0) / n,
            CollectiveKind::AllToAll => (n - 1.0) / n,
        }
    }
}

/// One host's part in a collective.
#[derive(Clone, Debug)]
pub struct Rank {
    /// Which collective of the scenario (its index).
    pub collective: usize,
    /// The host's flows this rank sends on (indices into its flows).
    sends: Vec<usize>,
    /// Flow ids of the QPs it receives on.
    recvs: Vec<u32>,
    /// Payload bytes of each message.
    chunk: u64,
    /// Messages per send QP per iteration.
    steps: u64,
    iterations: u64,
    start: Time,
    /// Messages posted on each send QP so far.
    posted: u64,
    /// When this rank finished each iteration.
    pub finished: Vec<Time>,
    /// Packets its send QPs had re-sent by the end of each iteration (cumulative).
    pub retransmitted: Vec<u64>,
}

impl Rank {
    /// Rank of collective `collective` of `kind` that sends on the host's flows `sends` and
    /// receives on flow ids `recvs`, for `iterations` iterations of messages of `chunk`
    /// bytes among `ranks` ranks, from `start`.
    pub fn new(
        collective: usize,
        kind: CollectiveKind,
        ranks: usize,
        (sends, recvs): (Vec<usize>, Vec<u32>),
        chunk: u64,
        iterations: u64,
        start: Time,
    ) -> Rank {
        Rank {
            collective,
            sends,
            recvs,
            chunk,
            steps: kind.steps(ranks),
            iterations,
            start,
            posted: 0,
            finished: Vec::new(),
            retransmitted: Vec::new(),
        }
    }

    /// When the rank first needs to act (its start), while it has not begun.
    pub fn wake_at(&self) -> Option<Time> {
        (self.posted == 0 && self.iterations > 0).then_some(self.start)
    }

    /// Has it finished every iteration?
    pub fn done(&self) -> bool {
        self.finished.len() as u64 >= self.iterations
    }

    /// Post what the messages received and acknowledged by `now` allow (through `qps`,
    /// the host's connections), and note finished iterations. True if it posted.
    pub fn progress(&mut self, now: Time, qps: &mut dyn Connections) -> bool {
        let mut posted_any = false;
        let chunk = self.chunk;
        while !self.done() {
            let t = self.finished.len() as u64;
            let need = (t + 1) * self.steps;
            if self.posted == need {
                let arrived = self
                    .recvs
                    .iter()
                    .all(|id| qps.received(*id) >= need * chunk);
                let acked = self
                    .sends
                    .iter()
                    .all(|f| qps.acknowledged(*f) >= need * chunk);
                if arrived && acked {
                    self.finished.push(now);
                    self.retransmitted
                        .push(self.sends.iter().map(|f| qps.resent(*f)).sum());
                    continue;
                }
                break;
            }
            // Step s of iteration t: the first needs iteration t−1 finished (it is, or
            // t would be behind) and the start; a later one its predecessor received.
            let s = self.posted - t * self.steps;
            let may = if s == 0 {
                now >= self.start
            } else {
                let got = (t * self.steps + s) * chunk;
                self.recvs.iter().all(|id| qps.received(*id) >= got)
            };
            if !may {
                break;
            }
            for f in &self.sends {
                qps.post(*f, chunk, now);
            }
            self.posted += 1;
            posted_any = true;
        }
        posted_any
    }
}

/// What a rank needs of its host's connections (RC queue pairs, or TCP connections).
pub trait Connections {
    /// Send `bytes` more on the host's flow `send` (an index into its flows).
    fn post(&mut self, send: usize, bytes: u64, now: Time);
    /// Payload bytes delivered so far on the flow with id `recv` (received in order).
    fn received(&self, recv: u32) -> u64;
    /// Payload bytes the peer has acknowledged on the host's flow `send`.
    fn acknowledged(&self, send: usize) -> u64;
    /// Packets or segments sent again on the host's flow `send`.
    fn resent(&self, send: usize) -> u64;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_factors_are_nccl_tests() {
        assert_eq!(CollectiveKind::AllReduceRing.bus_factor(8), 1.75);
        assert_eq!(CollectiveKind::AllToAll.bus_factor(8), 0.875);
        assert_eq!(CollectiveKind::AllReduceRing.steps(8), 14);
        assert_eq!(CollectiveKind::AllToAll.steps(8), 1);
    }

    #[test]
    fn a_ring_rank_waits_for_each_step_and_its_acks() {
        // No send flows to post on; what it receives alone gates it.
        let mut r = Rank::new(
            0,
            CollectiveKind::AllReduceRing,
            3,
            (vec![], vec![7]),
            10,
            2,
            Time::ZERO,
        );
        struct Fake(u64);
        impl Connections for Fake {
            fn post(&mut self, _: usize, _: u64, _: Time) {}
            fn received(&self, _: u32) -> u64 {
                self.0 * 10
            }
            fn acknowledged(&self, _: usize) -> u64 {
                0
            }
            fn resent(&self, _: usize) -> u64 {
                0
            }
        }
        assert_eq!(r.wake_at(), Some(Time::ZERO));
        // Step 0 is posted at the start; step 1 waits for step 0 from the neighbour.
        assert!(r.progress(Time(1), &mut Fake(0)));
        assert_eq!(r.posted, 1);
        assert!(!r.progress(Time(2), &mut Fake(0)));
        r.progress(Time(3), &mut Fake(3));
        // 4 steps per iteration; all four arrived: iteration 0 done, iteration 1 posted.
        assert_eq!(r.posted, 4);
        r.progress(Time(4), &mut Fake(4));
        assert_eq!(r.finished, vec![Time(4)]);
        assert_eq!(r.posted, 5);
        r.progress(Time(9), &mut Fake(8));
        assert_eq!(r.finished, vec![Time(4), Time(9)]);
        assert!(r.done());
    }
}
