//! The event queue's one-shot events (frame arrivals, scheduled events, samples), handed
//! out in (time, sequence) order. What holds and orders them depends on how many are
//! pending:
//!
//! * few (a lab, a single switch): one list of (time, sequence, event) in that order, the
//!   earliest at the front, each event held in its entry (a slab beside the list cost a
//!   slot's write and read per event). A new event is the latest of its instant (its
//!   sequence number is the highest yet) and most often of all (a frame lands a wire time
//!   and a cable later than the one sent before it), so it is appended; one that lands
//!   earlier (a PFC frame, shorter) is put in place, a binary search and a short move. The
//!   earliest is taken from the front. A binary heap cost more: a sift on every pop.
//! * many (a fabric): the events in a slab, a FIFO per instant linked through it, a heap
//!   of the distinct instants and a map from an instant to its FIFO. Events scheduled for
//!   one instant are scheduled in sequence order, so a FIFO needs no sorting; and a fabric's
//!   frames arrive in step (the K=8 fat tree holds ~2,900 events at ~40 instants), so the
//!   heap is ~6 levels deep where one of events would be ~12, and most events are taken
//!   from the head of the earliest FIFO without touching a heap.
//!
//! Per event, the list costs less while it is short (one map look-up per push outweighs
//! it), so the owner changes the store's form past [`TO_INSTANTS`] events
//! ([`Events::crowded`]) and back below [`TO_LIST`] ([`Events::sparse`]), far apart so that
//! it does not flip back and forth; entries may join or leave at the change. The order
//! handed out is the same either way.

use lossless_buffer_model::Time;
use std::cmp::Reverse;
use std::collections::hash_map::Entry as MapEntry;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// Pending events above which they are kept per instant.
const TO_INSTANTS: usize = 256;
/// Pending events below which they go back into one list.
const TO_LIST: usize = 64;

/// End of a FIFO.
const NIL: u32 = u32::MAX;

/// An event in the slab (events kept per instant): the event (None once handed out), its
/// sequence number, and the next event of the same instant.
struct Slot<E> {
    event: Option<E>,
    seq: u64,
    next: u32,
}

/// An entry of the list: an event with its time and sequence number.
struct Queued<E> {
    time: Time,
    seq: u64,
    event: E,
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

/// The events of one instant, oldest first: the first and last slot of its FIFO.
#[derive(Clone, Copy)]
struct Fifo {
    head: u32,
    tail: u32,
}

/// Events kept per instant.
#[derive(Default)]
struct Instants {
    /// The earliest instant that holds events, and its FIFO (kept out of `others` and
    /// `times`: most events join and leave only it, or join a later instant).
    front: Option<(Time, Fifo)>,
    /// The FIFO of every other instant that holds events.
    others: HashMap<Time, Fifo, BuildHasherDefault<TimeHasher>>,
    /// The times of `others`, earliest on top.
    times: BinaryHeap<Reverse<Time>>,
}

/// What orders the pending events.
enum Order<E> {
    /// Few events: one list of them all, in (time, sequence) order.
    List(VecDeque<Queued<E>>),
    /// Many: a FIFO per instant.
    Instants(Instants),
}

/// Pending one-shot events in (time, sequence) order.
pub(super) struct Events<E> {
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

    /// Add `event` at `time` with sequence number `seq` (greater than every earlier one).
    #[inline(always)]
    pub fn push(&mut self, time: Time, seq: u64, event: E) {
        self.len += 1;
        match &mut self.order {
            Order::List(l) => {
                let q = Queued { time, seq, event };
                // After every event of its instant and of earlier ones: its sequence
                // number is the highest yet.
                match l.back() {
                    Some(last) if last.time > time => {
                        let at = l.partition_point(|e| e.time <= time);
                        l.insert(at, q);
                    }
                    _ => l.push_back(q),
                }
            }
            Order::Instants(i) => {
                let s = slot_for(&mut self.slots, &mut self.free, seq, event);
                i.push(time, s, &mut self.slots);
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

    /// The earliest event's (time, sequence number).
    #[inline]
    pub fn peek(&self) -> Option<(Time, u64)> {
        match &self.order {
            Order::List(l) => l.front().map(|e| (e.time, e.seq)),
            Order::Instants(i) => i
                .front
                .map(|(t, fifo)| (t, self.slots[fifo.head as usize].seq)),
        }
    }

    /// Take the earliest event out: its time, sequence number and the event.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(Time, u64, E)> {
        let popped = match &mut self.order {
            Order::List(l) => l.pop_front().map(|e| (e.time, e.seq, e.event))?,
            Order::Instants(i) => {
                let (time, s) = i.pop(&self.slots)?;
                self.free.push(s);
                let slot = &mut self.slots[s as usize];
                let event = slot.event.take().expect("a popped slot holds its event");
                (time, slot.seq, event)
            }
        };
        self.len -= 1;
        Some(popped)
    }

    /// From one list to per-instant FIFOs: the events in order, with `extra` ones (each
    /// with its time and sequence number) joining them, each appended to its instant's
    /// FIFO.
    pub fn keep_per_instant(&mut self, extra: Vec<(Time, u64, E)>) {
        let Order::List(l) = &mut self.order else {
            return;
        };
        self.len += extra.len();
        let listed = std::mem::take(l)
            .into_iter()
            .map(|q| (q.time, q.seq, q.event));
        let mut all: Vec<(Time, u64, u32)> = listed
            .chain(extra)
            .map(|(time, seq, event)| {
                let s = slot_for(&mut self.slots, &mut self.free, seq, event);
                (time, seq, s)
            })
            .collect();
        all.sort_unstable_by_key(|&(time, seq, _)| (time, seq));
        let mut i = Instants::default();
        for (time, _, s) in all {
            i.push(time, s, &mut self.slots);
        }
        self.order = Order::Instants(i);
    }

    /// From per-instant FIFOs back to one list; each event passes through `keep`, which
    /// hands it back to stay or takes it out of the store.
    pub fn keep_in_one_list(&mut self, mut keep: impl FnMut(Time, u64, E) -> Option<E>) {
        let Order::Instants(i) = &mut self.order else {
            return;
        };
        let mut l = Vec::with_capacity(TO_INSTANTS + 1);
        let fifos = i.front.take().into_iter().chain(i.others.drain());
        for (time, fifo) in fifos {
            let mut s = fifo.head;
            while s != NIL {
                let slot = &mut self.slots[s as usize];
                let (seq, next) = (slot.seq, slot.next);
                let event = slot.event.take().expect("a queued slot holds its event");
                self.free.push(s);
                match keep(time, seq, event) {
                    Some(event) => l.push(Queued { time, seq, event }),
                    None => self.len -= 1,
                }
                s = next;
            }
        }
        l.sort_unstable_by_key(|e| (e.time, e.seq));
        self.order = Order::List(l.into());
    }
}

/// Put `event` in a free slot of the slab (linked to nothing yet).
fn slot_for<E>(slots: &mut Vec<Slot<E>>, free: &mut Vec<u32>, seq: u64, event: E) -> u32 {
    let slot = Slot {
        event: Some(event),
        seq,
        next: NIL,
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
    /// Append slot `s` to instant `time`'s FIFO.
    #[inline(always)]
    fn push<E>(&mut self, time: Time, s: u32, slots: &mut [Slot<E>]) {
        let alone = Fifo { head: s, tail: s };
        match &mut self.front {
            Some((t, fifo)) if *t == time => {
                slots[fifo.tail as usize].next = s;
                fifo.tail = s;
            }
            Some((t, fifo)) if *t > time => {
                // A new earliest instant: the old front goes back among the others.
                let (t, fifo) = (*t, *fifo);
                self.others.insert(t, fifo);
                self.times.push(Reverse(t));
                self.front = Some((time, alone));
            }
            Some(_) => match self.others.entry(time) {
                MapEntry::Occupied(mut e) => {
                    let fifo = e.get_mut();
                    slots[fifo.tail as usize].next = s;
                    fifo.tail = s;
                }
                MapEntry::Vacant(e) => {
                    e.insert(alone);
                    self.times.push(Reverse(time));
                }
            },
            None => self.front = Some((time, alone)),
        }
    }

    /// Unlink the earliest event: its time and slot.
    #[inline(always)]
    fn pop<E>(&mut self, slots: &[Slot<E>]) -> Option<(Time, u32)> {
        let (time, fifo) = self.front.as_mut()?;
        let time = *time;
        let s = fifo.head;
        let next = slots[s as usize].next;
        if next == NIL {
            // The instant is done: the next earliest one comes to the front.
            self.front = self.times.pop().map(|Reverse(t)| {
                let fifo = self.others.remove(&t).expect("each time has its FIFO");
                (t, fifo)
            });
        } else {
            fifo.head = next;
        }
        Some((time, s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pushes at times that cluster (so that instants hold many events) and spread (so
    /// that there are many instants), with the pending count going up past
    /// [`TO_INSTANTS`] and down below [`TO_LIST`] several times: every pop hands out the
    /// smallest (time, sequence) pending, as a sorted list would.
    #[test]
    fn hands_out_time_then_sequence_order_in_both_forms() {
        for seed in 1..20u64 {
            let mut ev: Events<u64> = Events::new();
            let mut want: Vec<(u64, u64)> = Vec::new();
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
                    ev.push(Time(t), seq, seq);
                    if ev.crowded() {
                        ev.keep_per_instant(Vec::new());
                    }
                    want.push((t, seq));
                } else {
                    want.sort_unstable_by(|a, b| b.cmp(a));
                    let w = want.pop();
                    let got = ev.pop().map(|(t, _, e)| (t.as_ps(), e));
                    if ev.sparse() {
                        ev.keep_in_one_list(|_, _, e| Some(e));
                    }
                    assert_eq!(got, w, "seed {seed}, step {step}");
                    if let Some((t, _)) = got {
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
