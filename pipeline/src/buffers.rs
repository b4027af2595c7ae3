//! Frame buffers reused within a thread. A simulated frame's bytes are freed where the
//! frame ends (the host that consumed it, the switch that dropped it) and needed where
//! frames begin (a sender, a switch emitting PFC): one pool per thread lets the receiver's
//! buffers carry the sender's next frames without going through the allocator, which a
//! pool per node cannot do when senders never receive (an incast).
//!
//! Two pools by room: a fabric holds hundreds of thousands of queued frames, each with its
//! header buffer, so a RoCEv2 data frame's 54 bytes should sit in the allocator's 64-byte
//! block (56 bytes of room) and not in the 80-byte block a PFC frame's 60 bytes need. One
//! pool would pass PFC frames' buffers on to data frames, and soon every buffer would be
//! the larger kind.

use std::cell::RefCell;

/// Most buffers a thread keeps in each pool; beyond this, given-back buffers are freed.
const POOL_SIZE: usize = 1024;
/// Room of a small buffer: the most the allocator keeps in a 64-byte block (asking for 64
/// would take 80). An untagged RoCEv2 frame's headers (54 bytes) fit.
pub const SMALL: usize = 56;

thread_local! {
    /// Buffers with room for at most [`SMALL`] bytes, and those with more.
    static POOLS: RefCell<[Vec<Vec<u8>>; 2]> = const { RefCell::new([Vec::new(), Vec::new()]) };
}

/// The pool for buffers with `room` bytes of room.
fn class(room: usize) -> usize {
    usize::from(room > SMALL)
}

/// An empty buffer with room for at least `room` bytes: a reused one when the thread has
/// one of its size class (grown to `room` exactly if it is short), else a new one with room
/// for [`SMALL`] bytes or exactly `room`.
pub fn take(room: usize) -> Vec<u8> {
    let mut buf = POOLS
        .with(|p| p.borrow_mut()[class(room)].pop())
        .unwrap_or_else(|| Vec::with_capacity(room.max(SMALL)));
    buf.reserve_exact(room);
    buf
}

/// Give back a buffer whose frame is gone; it is cleared and kept for [`take`] (or freed
/// when its pool is full or it never held anything).
pub fn give(mut buf: Vec<u8>) {
    if buf.capacity() == 0 {
        return;
    }
    buf.clear();
    POOLS.with(|p| {
        let pool = &mut p.borrow_mut()[class(buf.capacity())];
        if pool.len() < POOL_SIZE {
            pool.push(buf);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_given_buffer_comes_back_cleared_with_its_capacity() {
        let mut b = Vec::with_capacity(100);
        b.extend_from_slice(&[1, 2, 3]);
        give(b);
        let again = take(60);
        assert!(again.is_empty());
        assert!(again.capacity() >= 100);
        assert_eq!(
            take(60).capacity(),
            60,
            "the pool had one buffer: a new one, exact"
        );
        assert_eq!(take(10).capacity(), SMALL);
    }

    #[test]
    fn small_and_large_buffers_stay_apart() {
        give(Vec::with_capacity(60));
        give(Vec::with_capacity(SMALL));
        assert_eq!(
            take(54).capacity(),
            SMALL,
            "a data frame's headers: the small one"
        );
        assert_eq!(
            take(54).capacity(),
            SMALL,
            "then a new small one, not the large"
        );
        assert_eq!(take(60).capacity(), 60);
    }

    #[test]
    fn the_pools_are_bounded() {
        for _ in 0..POOL_SIZE + 10 {
            give(Vec::with_capacity(8));
        }
        let n = std::iter::from_fn(|| Some(take(8)))
            .take_while(|b| b.capacity() == 8)
            .count();
        assert_eq!(n, POOL_SIZE);
    }
}
