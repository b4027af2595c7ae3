//! The switch's packet buffer as memory: every frame held by any egress queue sits in one
//! slab, and each queue is a FIFO list threaded through it. The memory this takes follows
//! the frames the switch holds at once; a growable array per queue would keep each queue's
//! deepest moment for the rest of the run (in a fabric, the sum of those is several times
//! what is ever held together).

use crate::packet::{Meta, Packet};

/// End of a list.
const NIL: u32 = u32::MAX;

/// A frame's parts, laid out flat: 80 bytes, where a whole [`Packet`] and a link would
/// take 88 (the packet's padding and the link's would not share a word). A free slot holds
/// an empty buffer.
#[derive(Debug, Default)]
struct Slot {
    data: Vec<u8>,
    len: u32,
    /// Next frame of the same queue (or of the free list).
    next: u32,
    meta: Meta,
}

/// A queued frame as the scheduler sees it: its length and metadata (its bytes stay put).
#[derive(Clone, Copy, Debug)]
pub(super) struct Held<'a> {
    /// Frame length in bytes including FCS.
    pub len: u32,
    /// Its pipeline metadata.
    pub meta: &'a Meta,
}

/// One egress queue: its frames, oldest first, held in the switch's [`FrameStore`].
#[derive(Clone, Copy, Debug)]
pub(super) struct FrameQueue {
    head: u32,
    tail: u32,
    len: u32,
}

impl Default for FrameQueue {
    fn default() -> Self {
        FrameQueue {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

impl FrameQueue {
    /// Frames waiting.
    pub(super) fn len(&self) -> usize {
        self.len as usize
    }

    /// Nothing waiting.
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Slots for every frame a switch's queues hold, reused as frames leave.
#[derive(Debug)]
pub(super) struct FrameStore {
    slots: Vec<Slot>,
    /// First unused slot (a list through `next`).
    free: u32,
}

impl Default for FrameStore {
    fn default() -> Self {
        FrameStore {
            slots: Vec::new(),
            free: NIL,
        }
    }
}

impl FrameStore {
    fn slot(&self, i: u32) -> &Slot {
        &self.slots[i as usize]
    }

    fn slot_mut(&mut self, i: u32) -> &mut Slot {
        &mut self.slots[i as usize]
    }

    /// A new slot holding `pkt`.
    fn new_slot(&mut self, pkt: Packet) -> u32 {
        if self.slots.len() == self.slots.capacity() {
            // Grow by a quarter, not double: the store is most of a busy fabric's memory,
            // and it never shrinks.
            self.slots.reserve_exact(self.slots.len() / 4 + 16);
        }
        self.slots.push(Slot {
            data: pkt.data,
            len: pkt.len,
            next: NIL,
            meta: pkt.meta,
        });
        (self.slots.len() - 1) as u32
    }

    /// Append `pkt` to queue `q`.
    pub(super) fn push_back(&mut self, q: &mut FrameQueue, pkt: Packet) {
        let i = match self.free {
            NIL => self.new_slot(pkt),
            i => {
                let slot = self.slot_mut(i);
                let next = std::mem::replace(&mut slot.next, NIL);
                slot.data = pkt.data;
                slot.len = pkt.len;
                slot.meta = pkt.meta;
                self.free = next;
                i
            }
        };
        match q.tail {
            NIL => q.head = i,
            t => self.slot_mut(t).next = i,
        }
        q.tail = i;
        q.len += 1;
    }

    /// Take the oldest frame of queue `q`.
    pub(super) fn pop_front(&mut self, q: &mut FrameQueue) -> Option<Packet> {
        if q.head == NIL {
            return None;
        }
        let i = q.head;
        let free = self.free;
        let slot = self.slot_mut(i);
        let pkt = Packet {
            data: std::mem::take(&mut slot.data),
            len: slot.len,
            meta: slot.meta,
            hop: crate::packet::Hop::PLAIN,
        };
        q.head = slot.next;
        slot.next = free;
        self.free = i;
        if q.head == NIL {
            q.tail = NIL;
        }
        q.len -= 1;
        Some(pkt)
    }

    /// The frame in slot `i`.
    fn held(&self, i: u32) -> Held<'_> {
        let slot = self.slot(i);
        Held {
            len: slot.len,
            meta: &slot.meta,
        }
    }

    /// The oldest frame of queue `q`.
    pub(super) fn front(&self, q: &FrameQueue) -> Option<Held<'_>> {
        match q.head {
            NIL => None,
            i => Some(self.held(i)),
        }
    }

    /// Queue `q`'s frames, oldest first.
    pub(super) fn iter<'a>(&'a self, q: &FrameQueue) -> impl Iterator<Item = Held<'a>> + 'a {
        let mut i = q.head;
        std::iter::from_fn(move || {
            if i == NIL {
                return None;
            }
            let held = self.held(i);
            i = self.slot(i).next;
            Some(held)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    fn pkt(n: u32) -> Packet {
        Packet::new(Vec::new(), n)
    }

    /// Random pushes and pops over several queues agree with one VecDeque per queue, and
    /// the slab never holds more slots than the most frames held at once.
    #[test]
    fn queues_in_one_slab_behave_as_separate_fifos() {
        let mut store = FrameStore::default();
        let mut queues = [FrameQueue::default(); 4];
        let mut model: [VecDeque<u32>; 4] = Default::default();
        let (mut x, mut held, mut most) = (99u64, 0usize, 0usize);
        for n in 0..20_000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let q = (x >> 33) as usize % 4;
            if (x >> 40) % 5 < 3 {
                store.push_back(&mut queues[q], pkt(n));
                model[q].push_back(n);
                held += 1;
            } else {
                let got = store.pop_front(&mut queues[q]).map(|p| p.len);
                let want = model[q].pop_front();
                assert_eq!(got, want);
                held -= usize::from(want.is_some());
            }
            most = most.max(held);
            for k in 0..4 {
                assert_eq!(queues[k].len(), model[k].len());
                assert_eq!(
                    store.front(&queues[k]).map(|p| p.len),
                    model[k].front().copied()
                );
            }
            let listed: Vec<u32> = store.iter(&queues[q]).map(|p| p.len).collect();
            assert_eq!(listed, model[q].iter().copied().collect::<Vec<_>>());
        }
        assert_eq!(store.slots.len(), most);
    }

    #[test]
    fn a_slot_is_80_bytes() {
        assert_eq!(std::mem::size_of::<Slot>(), 80);
    }
}
