//! The event queue of the virtual-time engine, in canonical order: by time, then by
//! [`Key`] (the run's own events, then each node's arrivals by port and its wake-up), so a
//! run's outcome does not depend on who scheduled first ([`crate::key`]).
//!
//! The one-shot events ([`crate::events`]: one sorted list while few are pending, a bucket
//! per instant while many are) and the nodes' wake-ups, at most one per node, share that
//! order. While the events are in one list, the wake-ups are in an indexed heap of their
//! own, moved in place when a node's deadline changes (a single switch's NICs move theirs
//! at every PFC frame); while the events are kept per instant, the wake-ups are entries
//! among them (see [`EventQueue`]).

use crate::events::Events;
use crate::key::Key;
use lossless_buffer_model::Time;

/// What `pop` returns.
pub enum Next<E> {
    /// A one-shot event.
    Event(E),
    /// A node's wake-up (node index).
    Wake(usize),
}

/// Min-heap of (time, node) wake-ups, with in-place updates (a node's wake-up key orders
/// as its number does).
struct WakeHeap {
    heap: Vec<(Time, u32)>,
    pos: Vec<u32>,
    /// The root was handed out by `pop` and not yet moved or removed: it is moved in place
    /// by the next `set` of that node (one sift instead of a remove and an insert).
    fired: Option<u32>,
}

const ABSENT: u32 = u32::MAX;

/// The order of (time, key) pairs as a number: time in the high half, key in the low.
#[inline]
fn order(time: Time, key: Key) -> u128 {
    (u128::from(time.0) << 64) | u128::from(key.get())
}

/// A wake-up's (time, node) as one number, ordered as (time, its key).
#[inline]
fn wake_order(e: (Time, u32)) -> u128 {
    order(e.0, Key::wake(e.1 as usize))
}

// A binary heap: a 4-ary one, half as deep, took more instructions (3,826 per packet-hop on
// the K=8 fat tree against 3,798, 3,277 on the incast against 3,215).
impl WakeHeap {
    /// Entry `i`'s (time, key) as one number, so that ordering two entries is one
    /// comparison without a branch on equal times.
    fn key(&self, i: usize) -> u128 {
        wake_order(self.heap[i])
    }
    /// Put entry `e` at index `i`.
    fn put(&mut self, i: usize, e: (Time, u32)) {
        self.heap[i] = e;
        self.pos[e.1 as usize] = i as u32;
    }
    /// Move entry `i` toward the root while it is earlier than its parent (parents shift
    /// down into the hole; the entry is written once).
    fn up(&mut self, mut i: usize) {
        let e = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / 2;
            if wake_order(e) >= self.key(parent) {
                break;
            }
            self.put(i, self.heap[parent]);
            i = parent;
        }
        self.put(i, e);
    }
    /// Move entry `i` away from the root while a child is earlier.
    fn down(&mut self, mut i: usize) {
        let e = self.heap[i];
        let ek = wake_order(e);
        let n = self.heap.len();
        loop {
            let mut m = 2 * i + 1;
            if m >= n {
                break;
            }
            if m + 1 < n && self.key(m + 1) < self.key(m) {
                m += 1;
            }
            if self.key(m) >= ek {
                break;
            }
            self.put(i, self.heap[m]);
            i = m;
        }
        self.put(i, e);
    }
    fn set(&mut self, node: usize, time: Time) {
        if node >= self.pos.len() {
            self.pos.resize(node + 1, ABSENT);
        }
        match self.pos[node] {
            ABSENT => {
                self.heap.push((time, node as u32));
                let i = self.heap.len() - 1;
                self.pos[node] = i as u32;
                self.up(i);
            }
            i => {
                let i = i as usize;
                let earlier = time < self.heap[i].0;
                self.heap[i].0 = time;
                if earlier {
                    self.up(i);
                } else {
                    self.down(i);
                }
            }
        }
    }
    fn remove(&mut self, node: usize) {
        let Some(&i) = self.pos.get(node) else { return };
        if i == ABSENT {
            return;
        }
        let i = i as usize;
        let last = self
            .heap
            .pop()
            .expect("a node with a position is in the heap");
        self.pos[node] = ABSENT;
        if i < self.heap.len() {
            // The last entry fills the hole, then finds its place.
            self.put(i, last);
            self.up(i);
            self.down(self.pos[last.1 as usize] as usize);
        }
    }
    fn peek(&self) -> Option<(Time, Key)> {
        self.heap.first().map(|e| (e.0, Key::wake(e.1 as usize)))
    }
    fn when(&self, node: usize) -> Option<Time> {
        match self.pos.get(node) {
            Some(&i) if i != ABSENT => Some(self.heap[i as usize].0),
            _ => None,
        }
    }
}

/// An entry of the one-shot store: an event, or (while the store is kept per instant) a
/// node's wake-up.
enum Item<E> {
    Event(E),
    Wake(u32),
}

/// Wake-up entries left behind among the events from which they may be swept out.
const STALE_SWEEP_FROM: usize = 1024;

/// Pending events and wake-ups in time order.
///
/// Where the wake-ups are kept follows the events' form. While the events are few and in
/// one list, the wake-ups are in [`WakeHeap`], each moved in place (one sift). While many
/// events are kept per instant, each wake-up is an entry among them: in a fabric wake-ups
/// fall on the instants the arrivals do, where an entry costs a bucket append instead of a
/// sift through a heap of every node. Moving or cancelling such a wake-up leaves its old
/// entry behind, skipped when it comes up (its (time, sequence) no longer the node's). The
/// store changes form with the wake-ups in it, so the order handed out is the same either
/// way. Sequence numbers only tell a node's live
/// wake-up entry from those left behind, and order events of one key (one link's frames).
pub struct EventQueue<E> {
    events: Events<Item<E>>,
    /// The wake-ups while the events are in one list.
    wakes: WakeHeap,
    /// Each node's pending wake-up while they are among the events.
    due: Vec<Option<(Time, u64)>>,
    /// Wake-up entries among the events that were left behind and not yet skipped.
    stale: usize,
    seq: u64,
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue {
            events: Events::new(),
            wakes: WakeHeap {
                heap: Vec::new(),
                pos: Vec::new(),
                fired: None,
            },
            due: Vec::new(),
            stale: 0,
            seq: 0,
        }
    }

    /// Schedule `event` at `time`, in its place `key` among that instant's events.
    #[inline]
    pub fn push(&mut self, time: Time, key: Key, event: E) {
        self.seq += 1;
        self.events.push(time, key, self.seq, Item::Event(event));
        if self.events.crowded() {
            self.wakes_among_events();
        }
    }

    /// Wake `node` at `time`, replacing any wake-up it had.
    #[inline]
    pub fn set_wake(&mut self, node: usize, time: Time) {
        self.seq += 1;
        if self.events.per_instant() {
            if node >= self.due.len() {
                self.due.resize(node + 1, None);
            }
            if self.due[node].replace((time, self.seq)).is_some() {
                self.left_behind();
            }
            let key = Key::wake(node);
            self.events
                .push(time, key, self.seq, Item::Wake(node as u32));
        } else {
            if self.wakes.fired == Some(node as u32) {
                self.wakes.fired = None;
            }
            self.wakes.set(node, time);
        }
    }

    /// Forget `node`'s wake-up.
    pub fn cancel_wake(&mut self, node: usize) {
        if self.events.per_instant() {
            if self.due.get_mut(node).and_then(Option::take).is_some() {
                self.left_behind();
            }
        } else {
            if self.wakes.fired == Some(node as u32) {
                self.wakes.fired = None;
            }
            self.wakes.remove(node);
        }
    }

    /// When `node` is due to wake, if it is (a wake-up just handed out by `pop` is gone).
    #[inline]
    pub fn wake_time(&self, node: usize) -> Option<Time> {
        if self.events.per_instant() {
            self.due.get(node).copied().flatten().map(|d| d.0)
        } else if self.wakes.fired == Some(node as u32) {
            None
        } else {
            self.wakes.when(node)
        }
    }

    /// Drop the wake-up `pop` handed out from the heap if nobody moved it since.
    fn settle(&mut self) {
        if let Some(n) = self.wakes.fired.take() {
            self.wakes.remove(n as usize);
        }
    }

    /// A wake-up entry among the events was left behind. Entries left behind stay until
    /// their time comes, and a node that keeps moving a far wake-up (a timer) leaves one
    /// per move: when they outnumber the live entries, they are dropped in one pass
    /// (amortized, each costs a few steps of a sort).
    #[inline]
    fn left_behind(&mut self) {
        self.stale += 1;
        if self.stale >= STALE_SWEEP_FROM && 2 * self.stale > self.events.len() {
            self.sweep();
        }
    }

    /// Drop the wake-up entries left behind.
    #[cold]
    #[inline(never)]
    fn sweep(&mut self) {
        let due = &self.due;
        self.events.keep_in_one_list(|time, seq, item| match item {
            Item::Wake(n) if due[n as usize] != Some((time, seq)) => None,
            item => Some(item),
        });
        self.events.keep_per_instant(Vec::new());
        self.stale = 0;
    }

    /// The events are now many: the heap's wake-ups join them.
    #[cold]
    #[inline(never)]
    fn wakes_among_events(&mut self) {
        self.settle();
        let heap = std::mem::take(&mut self.wakes.heap);
        for &(_, node) in &heap {
            self.wakes.pos[node as usize] = ABSENT;
        }
        if self.due.len() < self.wakes.pos.len() {
            self.due.resize(self.wakes.pos.len(), None);
        }
        let mut entries = Vec::with_capacity(heap.len());
        for (time, node) in heap {
            self.seq += 1;
            self.due[node as usize] = Some((time, self.seq));
            entries.push((time, Key::wake(node as usize), self.seq, Item::Wake(node)));
        }
        self.events.keep_per_instant(entries);
    }

    /// The events are now few: the wake-ups go back into their heap, the entries left
    /// behind are dropped.
    #[cold]
    #[inline(never)]
    fn wakes_into_heap(&mut self) {
        let (due, wakes) = (&mut self.due, &mut self.wakes);
        self.events.keep_in_one_list(|time, seq, item| match item {
            Item::Event(e) => Some(Item::Event(e)),
            Item::Wake(n) => {
                if due[n as usize] == Some((time, seq)) {
                    due[n as usize] = None;
                    wakes.set(n as usize, time);
                }
                None
            }
        });
        self.stale = 0;
    }

    /// The earliest event or wake-up.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Next<E>)> {
        self.pop_before(Time(u64::MAX))
    }

    /// The earliest event or wake-up if it is due before `limit` (None: nothing is; what
    /// is due at `limit` or later stays). A share of the fabric run up to the edge of a
    /// window takes its events this way.
    #[inline]
    pub fn pop_before(&mut self, limit: Time) -> Option<(Time, Next<E>)> {
        if self.events.per_instant() {
            return self.pop_among_events(limit);
        }
        self.settle();
        let take_wake = match (self.events.peek(), self.wakes.peek()) {
            (None, None) => return None,
            (Some(e), None) => {
                if e.0 >= limit {
                    return None;
                }
                false
            }
            (None, Some(w)) => {
                if w.0 >= limit {
                    return None;
                }
                true
            }
            (Some(e), Some(w)) => {
                if e.0.min(w.0) >= limit {
                    return None;
                }
                order(w.0, w.1) < order(e.0, e.1)
            }
        };
        if take_wake {
            let (time, node) = self.wakes.heap[0];
            self.wakes.fired = Some(node);
            return Some((time, Next::Wake(node as usize)));
        }
        let (time, _, item) = self.events.pop().expect("peeked");
        match item {
            Item::Event(e) => Some((time, Next::Event(e))),
            Item::Wake(_) => unreachable!("while events are in one list, wake-ups are not"),
        }
    }

    /// `pop_before` while the wake-ups are among the events.
    #[inline]
    fn pop_among_events(&mut self, limit: Time) -> Option<(Time, Next<E>)> {
        let popped = loop {
            if self.events.peek_time()? >= limit {
                return None;
            }
            match self.events.pop()? {
                (time, _, Item::Event(e)) => break (time, Next::Event(e)),
                (time, seq, Item::Wake(n)) => {
                    let d = &mut self.due[n as usize];
                    if *d == Some((time, seq)) {
                        *d = None;
                        break (time, Next::Wake(n as usize));
                    }
                    self.stale -= 1;
                }
            }
        };
        if self.events.sparse() {
            self.wakes_into_heap();
        }
        Some(popped)
    }

    /// When the earliest pending event or wake-up is due (wake-up entries left behind
    /// before it are dropped, so the time is one something happens at).
    pub fn next_time(&mut self) -> Option<Time> {
        if self.events.per_instant() {
            loop {
                let (time, key) = self.events.peek()?;
                let Some(n) = key.woken() else {
                    return Some(time);
                };
                if self.due[n].map(|d| d.0) == Some(time) {
                    return Some(time);
                }
                // Every entry of that node's wake-up at that instant was left behind.
                self.events.pop();
                self.stale -= 1;
            }
        }
        self.settle();
        let event = self.events.peek_time();
        let wake = self.wakes.peek().map(|w| w.0);
        match (event, wake) {
            (Some(e), Some(w)) => Some(e.min(w)),
            (e, w) => e.or(w),
        }
    }

    /// Number of pending events and wake-ups.
    pub fn len(&self) -> usize {
        self.events.len() + self.wakes.heap.len() - self.wakes.fired.is_some() as usize - self.stale
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
    use crate::key::RunEvent;

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
    fn earliest_first_then_by_key_and_wakes_move_in_place() {
        let mut q = EventQueue::new();
        q.push(Time(5), Key::arrival(1, 2), 'a');
        q.set_wake(0, Time(9));
        q.push(Time(1), Key::arrival(0, 0), 'b');
        q.set_wake(1, Time(5));
        q.push(Time(5), Key::arrival(0, 1), 'c');
        q.push(Time(5), Key::run(RunEvent::Sample, 0), 's');
        q.push(Time(5), Key::arrival(1, 2), 'd'); // the same link as 'a', after it
        q.set_wake(0, Time(3)); // moved earlier: the 9 is gone
        q.set_wake(2, Time(7));
        q.cancel_wake(2);
        assert_eq!(q.wake_time(1), Some(Time(5)));
        assert_eq!(
            drain(&mut q),
            vec!["1:b", "3:w0", "5:s", "5:c", "5:a", "5:d", "5:w1"]
        );
    }

    /// Driven as the engine drives it (events at or after the instant being handled,
    /// under keys that repeat, wake-ups set, moved and cancelled), in both forms and
    /// across the changes between them, the queue hands out exactly what a brute-force
    /// model does: the smallest (time, key, sequence) of all events and wake-ups.
    #[test]
    fn pops_follow_a_brute_force_model() {
        for seed in 1..40u64 {
            let mut q: EventQueue<u32> = EventQueue::new();
            let mut events: Vec<(u64, Key, u64, u32)> = Vec::new();
            let mut wakes: Vec<Option<u64>> = vec![None; 6];
            let (mut seq, mut now, mut x) = (0u64, 0u64, seed);
            let mut next = || {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                x >> 24
            };
            let mut forms = (0, 0);
            for id in 0..9000u32 {
                let r = next();
                // Fill for a while (events pile up past the point where they are kept
                // per instant, with the wake-ups among them), then drain (back to one
                // list).
                let draining = (id / 1500) % 2 == 1;
                // Delays from 0 to far ahead, so that keys differ in low and in high bits.
                let delay = match r % 4 {
                    0 => 0,
                    1 => r % 7,
                    2 => r % 5000,
                    _ => r % (1 << 40),
                };
                let action = match (r >> 8) % 8 {
                    0..=3 if draining => 7,
                    a => a,
                };
                match action {
                    0..=3 => {
                        seq += 1;
                        let key = match (r >> 16) % 4 {
                            0 => Key::run(RunEvent::Sample, 0),
                            k => Key::arrival((r >> 20) as usize % 6, k as u16),
                        };
                        q.push(Time(now + delay), key, id);
                        events.push((now + delay, key, seq, id));
                    }
                    4 => {
                        let n = (r >> 12) as usize % 6;
                        q.set_wake(n, Time(now + delay));
                        wakes[n] = Some(now + delay);
                    }
                    5 => {
                        let n = (r >> 12) as usize % 6;
                        q.cancel_wake(n);
                        wakes[n] = None;
                    }
                    _ => {
                        let e = events
                            .iter()
                            .enumerate()
                            .min_by_key(|(_, e)| (e.0, e.1, e.2));
                        let w = wakes
                            .iter()
                            .enumerate()
                            .filter_map(|(n, w)| w.map(|w| (w, Key::wake(n), n)));
                        let w = w.min();
                        // The earliest: an event (its index) or a wake-up (its node).
                        let first = match (e, w) {
                            (None, None) => None,
                            (Some((i, e)), w)
                                if w.is_none_or(|(wt, wk, _)| (e.0, e.1) < (wt, wk)) =>
                            {
                                Some((e.0, Ok(i)))
                            }
                            (_, Some((wt, _, n))) => Some((wt, Err(n))),
                            _ => unreachable!(),
                        };
                        assert_eq!(q.next_time(), first.map(|f| Time(f.0)), "seed {seed}");
                        // Taken up to a window's edge now and then: before it, at it, after it.
                        let limit = match (r >> 28) % 4 {
                            0 => first.map_or(u64::MAX, |f| f.0 + (r >> 30) % 3).max(1) - 1,
                            _ => u64::MAX,
                        };
                        let want = match first {
                            Some((t, which)) if t < limit => Some(match which {
                                Ok(i) => {
                                    let e = events.swap_remove(i);
                                    format!("{}:e{}", e.0, e.3)
                                }
                                Err(n) => {
                                    wakes[n] = None;
                                    format!("{t}:w{n}")
                                }
                            }),
                            _ => None,
                        };
                        let got = q.pop_before(Time(limit)).map(|(t, n)| match n {
                            Next::Event(id) => format!("{}:e{id}", t.as_ps()),
                            Next::Wake(n) => format!("{}:w{n}", t.as_ps()),
                        });
                        assert_eq!(got, want, "seed {seed}, step {id}");
                        if let Some(g) = got {
                            now = g.split(':').next().unwrap().parse().unwrap();
                        }
                        assert_eq!(q.len(), events.len() + wakes.iter().flatten().count());
                    }
                }
                match q.events.per_instant() {
                    false => forms.0 += 1,
                    true => forms.1 += 1,
                }
            }
            assert!(
                forms.0 > 0 && forms.1 > 0,
                "both forms were used: {forms:?}"
            );
        }
    }

    /// A node that keeps moving its wake-up while the events are kept per instant leaves
    /// an entry per move; they are swept out before they outnumber the live ones, and the
    /// wake-ups that count are still handed out, in order, before the later events.
    #[test]
    fn wake_entries_left_behind_are_swept() {
        let mut q: EventQueue<u32> = EventQueue::new();
        for i in 0..300u32 {
            q.push(Time(1_000_000 + u64::from(i)), Key::arrival(9, 0), i);
        }
        assert!(q.events.per_instant());
        let mut want: Vec<Option<(Time, usize)>> = vec![None; 4];
        let mut x = 99u64;
        for step in 0..20_000usize {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let n = (x >> 33) as usize % 4;
            let t = Time(500_000 + (x >> 20) % 400_000);
            q.set_wake(n, t);
            want[n] = Some((t, step));
            assert!(q.events.len() <= 2 * (300 + 4) + 2 * STALE_SWEEP_FROM);
        }
        assert_eq!(q.len(), 304);
        // One instant's wake-ups in node order.
        let mut wakes: Vec<(Time, usize)> = (0..4)
            .filter_map(|n| want[n].map(|(t, _)| (t, n)))
            .collect();
        wakes.sort();
        let mut expected: Vec<String> = wakes
            .iter()
            .map(|(t, n)| format!("{}:w{n}", t.as_ps()))
            .collect();
        expected.extend((0..300u64).map(|i| format!("{}:e{i}", 1_000_000 + i)));
        let got: Vec<String> = std::iter::from_fn(|| {
            q.pop().map(|(t, n)| match n {
                Next::Event(i) => format!("{}:e{i}", t.as_ps()),
                Next::Wake(n) => format!("{}:w{n}", t.as_ps()),
            })
        })
        .collect();
        assert_eq!(got, expected);
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
