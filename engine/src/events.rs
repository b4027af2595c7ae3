//! The event queue's one-shot events (frame arrivals, scheduled events, samples), handed
//! out in canonical order: by time, then by [`Key`] (what the event is and which node and
//! port it is for), then, between events of one key, in the order they were scheduled
//! (only frames of one link, sent in that order by one node, share a key). What holds and
//! orders them depends on how many are pending:
//!
//! * few (a lab, a single switch): one list of (time, key, sequence, event) in that order,
//!   the earliest at the front, each event held in its entry (a slab beside the list cost a
//!   slot's write and read per event). A new event most often lands after every other (a
//!   frame lands a wire time and a cable later than the one sent before it), so it is
//!   appended; one that lands earlier (a PFC frame, shorter; another port's frame at the
//!   same instant) is put in place, a binary search and a short move. The earliest is
//!   taken from the front. A binary heap cost more: a sift on every pop.
//! * many (a fabric): the events in a slab, a bucket per instant (a vector of key and
//!   slot, appended to in the order they come), a heap of the distinct instants and a map
//!   from an instant to its bucket. A fabric's frames arrive in step (the K=8 fat tree
//!   holds ~2,900 events at ~40 instants), so the heap is ~6 levels deep where one of
//!   events would be ~12. The earliest instant's bucket is sorted once when it comes to
//!   the front (latest first, so the next is taken from the end); what joins it after (a
//!   node woken at the instant it is at) is put in place, most often near the end.
//!
//! Per event, the list costs less while it is short (one map look-up per push outweighs
//! it), so the owner changes the store's form past [`TO_INSTANTS`] events
//! ([`Events::crowded`]) and back below [`TO_LIST`] ([`Events::sparse`]), far apart so that
//! it does not flip back and forth; entries may join or leave at the change. The order
//! handed out is the same either way.

use crate::key::Key;
use lossless_buffer_model::Time;
use std::cmp::Reverse;
use std::collections::hash_map::Entry as MapEntry;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// Pending events above which they are kept per instant.
const TO_INSTANTS: usize = 256;
/// Pending events below which they go back into one list.
const TO_LIST: usize = 64;

/// An event in the slab (events kept per instant): the event (None once handed out) and
/// its sequence number.
struct Slot<E> {
    event: Option<E>,
    seq: u64,
}

/// An entry of the list: an event with its time, key and sequence number.
struct Queued<E> {
    time: Time,
    key: Key,
    seq: u64,
    event: E,
}

impl<E> Queued<E> {
    /// Where it goes among the others (sequence numbers only part events of one key).
    fn at(&self) -> (Time, Key) {
        (self.time, self.key)
    }
}

/// Hashes a time (in picoseconds) for the map of instants: one multiplication, folded so
/// that every bit of the time reaches the bits the table indexes by.
#[derive(Default)]
struct TimeHasher(u64);

impl Hasher for TimeHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b) ^ self.0.rotate_left(8));
        }
    }
    fn write_u64(&mut self, x: u64) {
        let m = u128::from(x) * 0x9E37_79B9_7F4A_7C15;
        self.0 = (m >> 64) as u64 ^ m as u64;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// The events of one instant: key and slot of each.
type Bucket = Vec<(Key, u32)>;

/// Events kept per instant.
#[derive(Default)]
struct Instants {
    /// The instant whose events are being handed out, its bucket sorted latest first (the
    /// next event at its end). Kept, empty, once its last event is handed out: the event
    /// being handled may add more at that instant.
    front: Option<(Time, Bucket)>,
    /// The bucket of every other instant that holds events, in the order they joined.
    others: HashMap<Time, Bucket, BuildHasherDefault<TimeHasher>>,
    /// The times of `others`, earliest on top.
    times: BinaryHeap<Reverse<Time>>,
    /// Emptied buckets, kept for new instants (no allocation per instant).
    spare: Vec<Bucket>,
}

/// What orders the pending events.
enum Order<E> {
    /// Few events: one list of them all, in (time, key, sequence) order.
    List(VecDeque<Queued<E>>),
    /// Many: a bucket per instant.
    Instants(Instants),
}

/// Pending one-shot events in (time, key, sequence) order.
pub(crate) struct Events<E> {
    /// The slab of events kept per instant (the list holds its own).
    slots: Vec<Slot<E>>,
    free: Vec<u32>,
    order: Order<E>,
    len: usize,
}

impl<E> Events<E> {
    /// No events.
    pub fn new() -> Self {
        Events {
            slots: Vec::new(),
            free: Vec::new(),
            order: Order::List(VecDeque::with_capacity(TO_INSTANTS + 1)),
            len: 0,
        }
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Add `event` at `time` under `key`, with sequence number `seq` (greater than every
    /// earlier one).
    #[inline(always)]
    pub fn push(&mut self, time: Time, key: Key, seq: u64, event: E) {
        self.len += 1;
        match &mut self.order {
            Order::List(l) => {
                let q = Queued {
                    time,
                    key,
                    seq,
                    event,
                };
                // After every event that comes before it or shares its key (their
                // sequence numbers are lower).
                match l.back() {
                    Some(last) if last.at() > q.at() => {
                        let at = l.partition_point(|e| e.at() <= q.at());
                        l.insert(at, q);
                    }
                    _ => l.push_back(q),
                }
            }
            Order::Instants(i) => {
                let s = slot_for(&mut self.slots, &mut self.free, seq, event);
                i.push(time, key, s);
            }
        }
    }

    /// True while the events are kept per instant.
    #[inline]
    pub fn per_instant(&self) -> bool {
        matches!(self.order, Order::Instants(_))
    }

    /// So many events are pending in one list that they should be kept per instant.
    #[inline]
    pub fn crowded(&self) -> bool {
        self.len > TO_INSTANTS && !self.per_instant()
    }

    /// So few events are pending per instant that they should go back into one list.
    #[inline]
    pub fn sparse(&self) -> bool {
        self.len < TO_LIST && self.per_instant()
    }

    /// The earliest event's time and key.
    #[inline]
    pub fn peek(&self) -> Option<(Time, Key)> {
        match &self.order {
            Order::List(l) => l.front().map(Queued::at),
            Order::Instants(i) => i.peek(),
        }
    }

    /// The earliest event's time (without the scan of its bucket [`Events::peek`] may do).
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        match &self.order {
            Order::List(l) => l.front().map(|e| e.time),
            Order::Instants(i) => i.peek_time(),
        }
    }

    /// Take the earliest event out: its time, sequence number and the event.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(Time, u64, E)> {
        let popped = match &mut self.order {
            Order::List(l) => l.pop_front().map(|e| (e.time, e.seq, e.event))?,
            Order::Instants(i) => {
                let (time, s) = i.pop()?;
                self.free.push(s);
                let slot = &mut self.slots[s as usize];
                let event = slot.event.take().expect("a popped slot holds its event");
                (time, slot.seq, event)
            }
        };
        self.len -= 1;
        Some(popped)
    }

    /// From one list to a bucket per instant: the events, with `extra` ones (each with its
    /// time, key and sequence number) joining them.
    pub fn keep_per_instant(&mut self, extra: Vec<(Time, Key, u64, E)>) {
        let Order::List(l) = &mut self.order else {
            return;
        };
        self.len += extra.len();
        let listed = std::mem::take(l)
            .into_iter()
            .map(|q| (q.time, q.key, q.seq, q.event));
        let mut all: Vec<(Time, Key, u64, u32)> = listed
            .chain(extra)
            .map(|(time, key, seq, event)| {
                let s = slot_for(&mut self.slots, &mut self.free, seq, event);
                (time, key, seq, s)
            })
            .collect();
        // In order, so that each instant's bucket holds one key's events in the order
        // they came.
        all.sort_unstable_by_key(|&(time, key, seq, _)| (time, key, seq));
        let mut i = Instants::default();
        for (time, key, _, s) in all {
            i.push(time, key, s);
        }
        self.order = Order::Instants(i);
    }

    /// From a bucket per instant back to one list; each event passes through `keep`,
    /// which hands it back to stay or takes it out of the store.
    pub fn keep_in_one_list(&mut self, mut keep: impl FnMut(Time, u64, E) -> Option<E>) {
        let Order::Instants(i) = &mut self.order else {
            return;
        };
        let mut l = Vec::with_capacity(TO_INSTANTS + 1);
        let buckets = i.front.take().into_iter().chain(i.others.drain());
        for (time, bucket) in buckets {
            for (key, s) in bucket {
                let slot = &mut self.slots[s as usize];
                let seq = slot.seq;
                let event = slot.event.take().expect("a queued slot holds its event");
                self.free.push(s);
                match keep(time, seq, event) {
                    Some(event) => l.push(Queued {
                        time,
                        key,
                        seq,
                        event,
                    }),
                    None => self.len -= 1,
                }
            }
        }
        l.sort_unstable_by_key(|e| (e.time, e.key, e.seq));
        self.order = Order::List(l.into());
    }
}

/// Put `event` in a free slot of the slab.
fn slot_for<E>(slots: &mut Vec<Slot<E>>, free: &mut Vec<u32>, seq: u64, event: E) -> u32 {
    let slot = Slot {
        event: Some(event),
        seq,
    };
    match free.pop() {
        Some(s) => {
            slots[s as usize] = slot;
            s
        }
        None => {
            slots.push(slot);
            (slots.len() - 1) as u32
        }
    }
}

impl Instants {
    /// Add slot `s` at `time` under `key` (its sequence number the highest yet).
    #[inline(always)]
    fn push(&mut self, time: Time, key: Key, s: u32) {
        match &mut self.front {
            Some((t, bucket)) if *t == time => {
                // Latest first: below every entry that comes after it, above those with
                // its key (they came before it). What joins the instant being handled is
                // a node's wake-up, due just after the event being handled: a short walk
                // from the end finds its place.
                let mut at = bucket.len();
                while at > 0 && bucket[at - 1].0 <= key {
                    at -= 1;
                }
                bucket.insert(at, (key, s));
            }
            _ => match self.others.entry(time) {
                MapEntry::Occupied(mut e) => e.get_mut().push((key, s)),
                MapEntry::Vacant(e) => {
                    let mut bucket = self.spare.pop().unwrap_or_default();
                    bucket.push((key, s));
                    e.insert(bucket);
                    self.times.push(Reverse(time));
                }
            },
        }
    }

    /// The earliest event's time and key (a scan of its bucket if it is not at the front).
    fn peek(&self) -> Option<(Time, Key)> {
        let front = self
            .front
            .as_ref()
            .and_then(|(t, b)| b.last().map(|e| (*t, e.0)));
        let other = self.times.peek().map(|Reverse(t)| {
            let first = self.others[t].iter().map(|e| e.0).min();
            (*t, first.expect("an instant's bucket is not empty"))
        });
        match (front, other) {
            (Some(f), Some(o)) => Some(f.min(o)),
            (f, o) => f.or(o),
        }
    }

    /// The earliest event's time.
    #[inline]
    fn peek_time(&self) -> Option<Time> {
        let front = self
            .front
            .as_ref()
            .and_then(|(t, b)| (!b.is_empty()).then_some(*t));
        let other = self.times.peek().map(|Reverse(t)| *t);
        match (front, other) {
            (Some(f), Some(o)) => Some(f.min(o)),
            (f, o) => f.or(o),
        }
    }

    /// Unlink the earliest event: its time and slot.
    #[inline(always)]
    fn pop(&mut self) -> Option<(Time, u32)> {
        loop {
            if let Some((t, bucket)) = &mut self.front {
                let earlier = self.times.peek().is_some_and(|Reverse(o)| o < t);
                if !earlier {
                    if let Some((_, s)) = bucket.pop() {
                        return Some((*t, s));
                    }
                }
            }
            if !self.next_front() {
                return None;
            }
        }
    }

    /// Bring the earliest instant's bucket to the front, sorted; false when no events are
    /// left. (A bucket that goes back among the others goes back in key order.)
    #[inline(never)]
    fn next_front(&mut self) -> bool {
        if let Some((t, mut bucket)) = self.front.take() {
            if bucket.is_empty() {
                self.spare.push(bucket);
            } else {
                bucket.reverse();
                self.others.insert(t, bucket);
                self.times.push(Reverse(t));
            }
        }
        let Some(Reverse(t)) = self.times.pop() else {
            return false;
        };
        let mut bucket = self.others.remove(&t).expect("each time has its bucket");
        // Stable: the events of one key stay in the order they came. (An unstable sort on
        // key and place in the bucket took more instructions, 1 % of all on the K=8 fat
        // tree: a bucket's entries come partly in order, and the stable sort takes runs.)
        bucket.sort_by_key(|e| e.0);
        bucket.reverse();
        self.front = Some((t, bucket));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pushes at times that cluster (so that instants hold many events) and spread (so
    /// that there are many instants), under keys that repeat (so that sequence numbers
    /// decide), with the pending count going up past [`TO_INSTANTS`] and down below
    /// [`TO_LIST`] several times: every pop hands out the smallest (time, key, sequence)
    /// pending, as a sorted list would.
    #[test]
    fn hands_out_time_key_sequence_order_in_both_forms() {
        for seed in 1..20u64 {
            let mut ev: Events<u64> = Events::new();
            let mut want: Vec<(u64, Key, u64)> = Vec::new();
            let (mut seq, mut now, mut x) = (0u64, 0u64, seed);
            let mut forms = (0, 0);
            for step in 0..20_000u32 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // Fill for a while, then drain for a while.
                let filling = (step / 1500) % 2 == 0;
                if (x >> 62) != 0 && filling || (x >> 62) == 0 && !filling {
                    seq += 1;
                    let t = now
                        + match (x >> 20) % 3 {
                            0 => (x >> 30) % 4 * 1000,
                            1 => (x >> 30) % 50,
                            _ => (x >> 30) % 1_000_000,
                        };
                    let key = Key::arrival((x >> 40) as usize % 5, (x >> 50) as u16 % 3);
                    ev.push(Time(t), key, seq, seq);
                    if ev.crowded() {
                        ev.keep_per_instant(Vec::new());
                    }
                    want.push((t, key, seq));
                } else {
                    want.sort_unstable_by(|a, b| b.cmp(a));
                    let w = want.pop().map(|(t, _, s)| (t, s));
                    let peeked = ev.peek();
                    assert_eq!(ev.peek_time(), peeked.map(|p| p.0));
                    let got = ev.pop().map(|(t, _, e)| (t.as_ps(), e));
                    if ev.sparse() {
                        ev.keep_in_one_list(|_, _, e| Some(e));
                    }
                    assert_eq!(got, w, "seed {seed}, step {step}");
                    if let Some((t, _)) = got {
                        assert_eq!(peeked.map(|p| p.0), Some(Time(t)));
                        now = t;
                    }
                }
                assert_eq!(ev.len(), want.len());
                match ev.order {
                    Order::List(_) => forms.0 += 1,
                    Order::Instants(_) => forms.1 += 1,
                }
            }
            assert!(forms.0 > 0 && forms.1 > 0, "both forms were used");
        }
    }
}
