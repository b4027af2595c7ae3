//! The event queue of the virtual-time engine, ordered by (time, sequence): events at the
//! same picosecond run in the order they were scheduled, so a run is deterministic.
//!
//! Two structures share one sequence counter: a binary heap of one-shot events (kept in a
//! slab, so sifting moves 24 bytes however large an event is), and an indexed heap with at
//! most one wake-up per node, moved in place when a node's deadline changes (no stale
//! wake-ups pile up when a pause ends early).
//!
//! Events pushed onto a *lane* (a link's direction, whose frames arrive in the order they
//! were sent) wait in that lane's FIFO, and only each lane's oldest is in the heap: on a
//! long link with many frames in flight the heap holds one entry per busy link, not one
//! per frame. The order of events is the same as with every event in the heap: a lane's
//! events are sorted by (time, sequence), and an event that would break that goes into the
//! heap on its own.

use lossless_buffer_model::Time;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

#[derive(PartialEq, Eq)]
struct Entry {
    time: Time,
    seq: u64,
    slot: u32,
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap, we want the earliest first.
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// What `pop` returns.
pub enum Next<E> {
    /// A one-shot event.
    Event(E),
    /// A node's wake-up (node index).
    Wake(usize),
}

/// Min-heap of (time, seq) keyed by node, with in-place updates.
struct WakeHeap {
    heap: Vec<(Time, u64, u32)>,
    pos: Vec<u32>,
    /// The root was handed out by `pop` and not yet moved or removed: it is moved in place
    /// by the next `set` of that node (one sift instead of a remove and an insert).
    fired: Option<u32>,
}

const ABSENT: u32 = u32::MAX;

impl WakeHeap {
    fn key(&self, i: usize) -> (Time, u64) {
        (self.heap[i].0, self.heap[i].1)
    }
    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a].2 as usize] = a as u32;
        self.pos[self.heap[b].2 as usize] = b as u32;
    }
    fn up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.key(i) >= self.key(parent) {
                break;
            }
            self.swap(i, parent);
            i = parent;
        }
    }
    fn down(&mut self, mut i: usize) {
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut m = i;
            if l < self.heap.len() && self.key(l) < self.key(m) {
                m = l;
            }
            if r < self.heap.len() && self.key(r) < self.key(m) {
                m = r;
            }
            if m == i {
                break;
            }
            self.swap(i, m);
            i = m;
        }
    }
    fn set(&mut self, node: usize, time: Time, seq: u64) {
        if node >= self.pos.len() {
            self.pos.resize(node + 1, ABSENT);
        }
        match self.pos[node] {
            ABSENT => {
                self.heap.push((time, seq, node as u32));
                let i = self.heap.len() - 1;
                self.pos[node] = i as u32;
                self.up(i);
            }
            i => {
                let i = i as usize;
                self.heap[i].0 = time;
                self.heap[i].1 = seq;
                self.up(i);
                self.down(self.pos[node] as usize);
            }
        }
    }
    fn remove(&mut self, node: usize) {
        let Some(&i) = self.pos.get(node) else { return };
        if i == ABSENT {
            return;
        }
        let i = i as usize;
        let last = self.heap.len() - 1;
        self.swap(i, last);
        self.heap.pop();
        self.pos[node] = ABSENT;
        if i < self.heap.len() {
            self.up(i);
            self.down(self.pos[self.heap[i].2 as usize] as usize);
        }
    }
    fn peek(&self) -> Option<(Time, u64)> {
        self.heap.first().map(|e| (e.0, e.1))
    }
    fn when(&self, node: usize) -> Option<Time> {
        match self.pos.get(node) {
            Some(&i) if i != ABSENT => Some(self.heap[i as usize].0),
            _ => None,
        }
    }
}

/// An [`Entry`]'s `slot` with this bit set names a lane, whose oldest event it is.
const LANE: u32 = 1 << 31;

/// Pending events and wake-ups in time order.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry>,
    slots: Vec<Option<E>>,
    free: Vec<u32>,
    /// Each lane's events, oldest first (the oldest also has an entry in `heap`).
    lanes: Vec<VecDeque<(Time, u64, E)>>,
    /// Events in lanes behind their lane's oldest (not in `heap`).
    behind: usize,
    wakes: WakeHeap,
    seq: u64,
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(4096),
            slots: Vec::with_capacity(4096),
            free: Vec::new(),
            lanes: Vec::new(),
            behind: 0,
            wakes: WakeHeap {
                heap: Vec::new(),
                pos: Vec::new(),
                fired: None,
            },
            seq: 0,
        }
    }

    /// Schedule `event` at `time`.
    pub fn push(&mut self, time: Time, event: E) {
        self.seq += 1;
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(event);
                s
            }
            None => {
                self.slots.push(Some(event));
                (self.slots.len() - 1) as u32
            }
        };
        self.heap.push(Entry {
            time,
            seq: self.seq,
            slot,
        });
    }

    /// Schedule `event` at `time` on lane `lane` (`lane < LANE`): after every event pushed
    /// onto that lane before it.
    pub fn push_lane(&mut self, lane: u32, time: Time, event: E) {
        let l = lane as usize;
        if l >= self.lanes.len() {
            self.lanes.resize_with(l + 1, VecDeque::new);
        }
        match self.lanes[l].back() {
            None => {
                self.seq += 1;
                self.heap.push(Entry {
                    time,
                    seq: self.seq,
                    slot: LANE | lane,
                });
                self.lanes[l].push_back((time, self.seq, event));
            }
            Some(&(last, _, _)) if time >= last => {
                self.seq += 1;
                self.lanes[l].push_back((time, self.seq, event));
                self.behind += 1;
            }
            // Earlier than the lane's newest (a shorter frame right behind a longer one):
            // on its own, so the lane stays sorted.
            Some(_) => self.push(time, event),
        }
    }

    /// Wake `node` at `time`, replacing any wake-up it had.
    pub fn set_wake(&mut self, node: usize, time: Time) {
        self.seq += 1;
        if self.wakes.fired == Some(node as u32) {
            self.wakes.fired = None;
        }
        self.wakes.set(node, time, self.seq);
    }

    /// Forget `node`'s wake-up.
    pub fn cancel_wake(&mut self, node: usize) {
        if self.wakes.fired == Some(node as u32) {
            self.wakes.fired = None;
        }
        self.wakes.remove(node);
    }

    /// When `node` is due to wake, if it is (a wake-up just handed out by `pop` is gone).
    pub fn wake_time(&self, node: usize) -> Option<Time> {
        if self.wakes.fired == Some(node as u32) {
            return None;
        }
        self.wakes.when(node)
    }

    /// Drop the wake-up `pop` handed out if nobody moved it since.
    fn settle(&mut self) {
        if let Some(n) = self.wakes.fired.take() {
            self.wakes.remove(n as usize);
        }
    }

    /// The earliest event or wake-up.
    pub fn pop(&mut self) -> Option<(Time, Next<E>)> {
        self.settle();
        let ev = self.heap.peek().map(|e| (e.time, e.seq));
        let wk = self.wakes.peek();
        let take_wake = match (ev, wk) {
            (None, None) => return None,
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (Some(e), Some(w)) => w < e,
        };
        if take_wake {
            let (time, _, node) = self.wakes.heap[0];
            self.wakes.fired = Some(node);
            return Some((time, Next::Wake(node as usize)));
        }
        let mut head = self.heap.peek_mut().expect("peeked");
        if head.slot & LANE != 0 {
            let lane = &mut self.lanes[(head.slot & !LANE) as usize];
            let (time, _, event) = lane.pop_front().expect("a lane in the heap has events");
            match lane.front() {
                // The lane's next event takes its place in the heap.
                Some(&(t, seq, _)) => {
                    head.time = t;
                    head.seq = seq;
                    self.behind -= 1;
                }
                None => {
                    std::collections::binary_heap::PeekMut::pop(head);
                }
            }
            return Some((time, Next::Event(event)));
        }
        let e = std::collections::binary_heap::PeekMut::pop(head);
        self.free.push(e.slot);
        let event = self.slots[e.slot as usize]
            .take()
            .expect("a queued slot holds its event");
        Some((e.time, Next::Event(event)))
    }

    /// Number of pending events and wake-ups.
    pub fn len(&self) -> usize {
        self.heap.len() + self.behind + self.wakes.heap.len() - self.wakes.fired.is_some() as usize
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(q: &mut EventQueue<char>) -> Vec<String> {
        std::iter::from_fn(|| {
            q.pop().map(|(t, n)| match n {
                Next::Event(c) => format!("{}:{c}", t.as_ps()),
                Next::Wake(w) => format!("{}:w{w}", t.as_ps()),
            })
        })
        .collect()
    }

    #[test]
    fn earliest_first_then_fifo_and_wakes_move_in_place() {
        let mut q = EventQueue::new();
        q.push(Time(5), 'a');
        q.set_wake(0, Time(9));
        q.push(Time(1), 'b');
        q.set_wake(1, Time(5));
        q.push(Time(5), 'c');
        q.set_wake(0, Time(3)); // moved earlier: the 9 is gone
        q.set_wake(2, Time(7));
        q.cancel_wake(2);
        assert_eq!(q.wake_time(1), Some(Time(5)));
        assert_eq!(drain(&mut q), vec!["1:b", "3:w0", "5:a", "5:w1", "5:c"]);
    }

    /// Events on lanes (mostly in order per lane, now and then not) and in the heap come
    /// out exactly as they would with all of them in the heap.
    #[test]
    fn lanes_keep_the_order_of_one_heap() {
        let (mut q, mut all) = (EventQueue::new(), EventQueue::new());
        let mut newest = [0u64; 5];
        let mut x = 7u64;
        for (n, round) in (0..3000u64).enumerate() {
            let n = n as u32;
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let lane = (x >> 33) as usize % 6;
            // Mostly at or after the lane's newest (some ties); one in eight before it.
            let t = if lane == 5 {
                round * 2 + (x >> 50) % 40
            } else if (x >> 40).is_multiple_of(8) {
                newest[lane].saturating_sub(1 + (x >> 50) % 20)
            } else {
                newest[lane] + (x >> 45) % 3 * 5
            };
            if lane < 5 {
                newest[lane] = newest[lane].max(t);
                q.push_lane(lane as u32, Time(t), n);
            } else {
                q.push(Time(t), n);
            }
            all.push(Time(t), n);
            if (x >> 20).is_multiple_of(3) {
                let (a, b) = (q.pop(), all.pop());
                match (a, b) {
                    (Some((ta, Next::Event(ea))), Some((tb, Next::Event(eb)))) => {
                        assert_eq!((ta, ea), (tb, eb))
                    }
                    _ => panic!("both hold events"),
                }
            }
            assert_eq!(q.len(), all.len());
        }
        while let Some((tb, Next::Event(eb))) = all.pop() {
            match q.pop() {
                Some((ta, Next::Event(ea))) => assert_eq!((ta, ea), (tb, eb)),
                _ => panic!("lanes lost an event"),
            }
        }
        assert!(q.is_empty());
    }

    #[test]
    fn wake_heap_keeps_order_under_many_updates() {
        let mut q: EventQueue<()> = EventQueue::new();
        let mut x = 12345u64;
        let mut want = vec![None; 50];
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let node = (x >> 33) as usize % 50;
            let t = Time((x >> 20) % 1000);
            if x.is_multiple_of(7) {
                q.cancel_wake(node);
                want[node] = None;
            } else {
                q.set_wake(node, t);
                want[node] = Some(t);
            }
        }
        let mut got = Vec::new();
        while let Some((t, Next::Wake(n))) = q.pop() {
            assert_eq!(want[n], Some(t));
            got.push(t);
        }
        assert!(got.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(got.len(), want.iter().filter(|w| w.is_some()).count());
    }
}
