//! Egress scheduler of one port: strict-priority queues first (higher queue index first),
//! then deficit-weighted round robin over byte quanta among the DWRR queues. Queues that
//! are empty or PFC-paused are skipped.

use crate::mmu::PRIORITIES;

/// Bytes of DWRR quantum per unit of weight.
pub const QUANTUM_PER_WEIGHT: u32 = 1536;

/// DWRR weight of a queue whose scheduler entry gives none.
pub const DEFAULT_DWRR_WEIGHT: u32 = 1;

/// How one queue is scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Discipline {
    /// Served before all DWRR queues; higher queue index first.
    Strict,
    /// Deficit round robin with this weight (1–100 in SONiC).
    Dwrr(u32),
}

/// Per-port scheduler state.
#[derive(Clone, Debug)]
pub struct Scheduler {
    disciplines: [Discipline; PRIORITIES],
    /// The strict queues (bit = queue), read from the highest down.
    strict: u8,
    /// The DWRR queues (bit = queue).
    dwrr: u8,
    deficit: [u32; PRIORITIES],
    cursor: usize,
    /// The cursor's queue has already received its quantum in this round.
    credited: bool,
}

impl Scheduler {
    /// A scheduler with one discipline per queue.
    pub fn new(disciplines: [Discipline; PRIORITIES]) -> Scheduler {
        let mask = |strict: bool| {
            (0..PRIORITIES)
                .filter(|&q| (disciplines[q] == Discipline::Strict) == strict)
                .fold(0u8, |m, q| m | 1 << q)
        };
        Scheduler {
            disciplines,
            strict: mask(true),
            dwrr: mask(false),
            deficit: [0; PRIORITIES],
            cursor: 0,
            credited: false,
        }
    }

    /// Queue disciplines.
    pub fn disciplines(&self) -> &[Discipline; PRIORITIES] {
        &self.disciplines
    }

    /// Pick the queue to start a frame from. `head_len(q)` gives the length of queue q's
    /// head frame if q may send now (non-empty and not paused), else None.
    pub fn select(&mut self, head_len: impl Fn(usize) -> Option<u32>) -> Option<usize> {
        let mut lens = [0; PRIORITIES];
        let mut ready = 0u8;
        for (q, l) in lens.iter_mut().enumerate() {
            if let Some(len) = head_len(q) {
                *l = len;
                ready |= 1 << q;
            }
        }
        self.select_ready(ready, &lens)
    }

    /// [`Self::select`] given the queues that may send now as a mask (bit = queue) and
    /// their head frames' lengths (`lens[q]`, read only for those queues).
    pub fn select_ready(&mut self, ready: u8, lens: &[u32; PRIORITIES]) -> Option<usize> {
        let strict = self.strict & ready;
        if strict != 0 {
            return Some((u8::BITS - 1 - strict.leading_zeros()) as usize);
        }
        let dwrr = self.dwrr & ready;
        match dwrr.count_ones() {
            0 => return None,
            1 => {
                let q = dwrr.trailing_zeros() as usize;
                return Some(self.serve_alone(q, lens[q]));
            }
            _ => {}
        }
        // Each full round adds ≥ one quantum to every eligible queue, so this ends within
        // (max frame / min quantum + 1) rounds.
        loop {
            let q = self.cursor;
            // Empty queues lost their credit in `queue_emptied`; paused ones keep it.
            if let (Discipline::Dwrr(w), true) = (self.disciplines[q], dwrr & (1 << q) != 0) {
                if !self.credited {
                    self.deficit[q] = self.deficit[q].saturating_add(w.max(1) * QUANTUM_PER_WEIGHT);
                    self.credited = true;
                }
                if self.deficit[q] >= lens[q] {
                    self.deficit[q] -= lens[q];
                    return Some(q);
                }
            }
            self.cursor = (self.cursor + 1) % PRIORITIES;
            self.credited = false;
        }
    }

    /// The round-robin loop below when `q` is the only queue that may send: the cursor
    /// comes round to `q`, which takes quanta until its deficit covers `len` (at least one
    /// quantum unless the cursor already stood on it, credited). Same state as the loop.
    fn serve_alone(&mut self, q: usize, len: u32) -> usize {
        let Discipline::Dwrr(w) = self.disciplines[q] else {
            unreachable!("only DWRR queues are served round robin")
        };
        let quantum = (w.max(1) * QUANTUM_PER_WEIGHT) as u64;
        let d = self.deficit[q] as u64;
        let len = len as u64;
        let rounds = if self.cursor == q && self.credited && d >= len {
            0
        } else {
            len.saturating_sub(d).div_ceil(quantum).max(1)
        };
        let credited = (d + rounds * quantum).min(u32::MAX as u64);
        self.deficit[q] = (credited - len) as u32;
        self.cursor = q;
        self.credited = true;
        q
    }

    /// Tell the scheduler queue `q` became empty: it loses its remaining credit.
    pub fn queue_emptied(&mut self, q: usize) {
        self.deficit[q] = 0;
        if self.cursor == q {
            self.cursor = (q + 1) % PRIORITIES;
            self.credited = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The round robin without the one-eligible-queue shortcut: the reference.
    fn select_by_loop(s: &mut Scheduler, lens: &[Option<u32>; PRIORITIES]) -> Option<usize> {
        for q in (0..PRIORITIES).rev() {
            if s.disciplines[q] == Discipline::Strict && lens[q].is_some() {
                return Some(q);
            }
        }
        let dwrr = |q: usize| matches!(s.disciplines[q], Discipline::Dwrr(_));
        if !(0..PRIORITIES).any(|q| dwrr(q) && lens[q].is_some()) {
            return None;
        }
        loop {
            let q = s.cursor;
            if let (Discipline::Dwrr(w), Some(len)) = (s.disciplines[q], lens[q]) {
                if !s.credited {
                    s.deficit[q] = s.deficit[q].saturating_add(w.max(1) * QUANTUM_PER_WEIGHT);
                    s.credited = true;
                }
                if s.deficit[q] >= len {
                    s.deficit[q] -= len;
                    return Some(q);
                }
            }
            s.cursor = (s.cursor + 1) % PRIORITIES;
            s.credited = false;
        }
    }

    #[test]
    fn the_shortcut_leaves_the_state_the_loop_would() {
        let mut x = 3u64;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 33
        };
        for _ in 0..200 {
            let d: [Discipline; PRIORITIES] = core::array::from_fn(|_| match next() % 5 {
                0 => Discipline::Strict,
                k => Discipline::Dwrr(k as u32 * 3 - 2),
            });
            let (mut a, mut b) = (Scheduler::new(d), Scheduler::new(d));
            for _ in 0..300 {
                let lens: [Option<u32>; PRIORITIES] = core::array::from_fn(|_| {
                    let r = next();
                    (r.is_multiple_of(3)).then_some(64 + (r >> 4) as u32 % 20_000)
                });
                let got = a.select(|q| lens[q]);
                assert_eq!(got, select_by_loop(&mut b, &lens));
                assert_eq!(
                    (a.deficit, a.cursor, a.credited),
                    (b.deficit, b.cursor, b.credited)
                );
                if next().is_multiple_of(4) {
                    let q = next() as usize % PRIORITIES;
                    a.queue_emptied(q);
                    b.queue_emptied(q);
                }
            }
        }
    }

    #[test]
    fn dwrr_byte_shares_match_weights_within_one_percent() {
        let mut s = Scheduler::new([
            Discipline::Dwrr(1),
            Discipline::Dwrr(2),
            Discipline::Dwrr(4),
            Discipline::Dwrr(1),
            Discipline::Dwrr(1),
            Discipline::Dwrr(1),
            Discipline::Dwrr(1),
            Discipline::Dwrr(1),
        ]);
        // Queues 0, 1, 2 always backlogged with different frame sizes.
        let lens = [64u32, 1518, 9216];
        let mut bytes = [0u64; 3];
        for _ in 0..10_000 {
            let q = s
                .select(|q| if q < 3 { Some(lens[q]) } else { None })
                .unwrap();
            bytes[q] += lens[q] as u64;
        }
        let total: u64 = bytes.iter().sum();
        for (q, w) in [(0, 1.0), (1, 2.0), (2, 4.0)] {
            let share = bytes[q] as f64 / total as f64;
            let want = w / 7.0;
            assert!(
                (share - want).abs() / want < 0.01,
                "queue {q}: {share} vs {want}"
            );
        }
    }

    #[test]
    fn strict_first_higher_index_first_and_paused_skipped() {
        let mut d = [Discipline::Dwrr(1); 8];
        d[5] = Discipline::Strict;
        d[6] = Discipline::Strict;
        let mut s = Scheduler::new(d);
        assert_eq!(s.select(|q| Some(q as u32 + 64)), Some(6));
        // 6 paused/empty: 5 next.
        assert_eq!(s.select(|q| (q != 6).then_some(64)), Some(5));
        // Only DWRR queues 3 and 4 eligible.
        let got: Vec<_> = (0..4)
            .map(|_| s.select(|q| (q == 3 || q == 4).then_some(1000)).unwrap())
            .collect();
        assert!(got.contains(&3) && got.contains(&4));
        assert_eq!(s.select(|_| None), None);
    }
}
