//! Frame buffers reused within a thread. A simulated frame's bytes are freed where the
//! frame ends (the host that consumed it, the switch that dropped it) and needed where
//! frames begin (a sender, a switch emitting PFC): one pool per thread lets the receiver's
//! buffers carry the sender's next frames without going through the allocator, which a
//! pool per node cannot do when senders never receive (an incast).

use std::cell::RefCell;

/// Most buffers a thread keeps; beyond this, given-back buffers are freed.
const POOL_SIZE: usize = 1024;
/// Room a new buffer starts with: the headers of a RoCEv2 frame (54 bytes, 58 tagged) and
/// a PFC frame (60), so that a buffer passed from one kind of frame to the other is not
/// reallocated every time.
const NEW_CAPACITY: usize = 64;

thread_local! {
    static POOL: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// An empty buffer: a reused one when the thread has any, else a new one.
pub fn take() -> Vec<u8> {
    POOL.with(|p| p.borrow_mut().pop())
        .unwrap_or_else(|| Vec::with_capacity(NEW_CAPACITY))
}

/// Give back a buffer whose frame is gone; it is cleared and kept for [`take`] (or freed
/// when the pool is full or it never held anything).
pub fn give(mut buf: Vec<u8>) {
    if buf.capacity() == 0 {
        return;
    }
    buf.clear();
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        if p.len() < POOL_SIZE {
            p.push(buf);
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
        let again = take();
        assert!(again.is_empty());
        assert!(again.capacity() >= 100);
        assert_eq!(take().capacity(), NEW_CAPACITY, "the pool had one buffer");
    }

    #[test]
    fn the_pool_is_bounded() {
        for _ in 0..POOL_SIZE + 10 {
            give(Vec::with_capacity(8));
        }
        let n = std::iter::from_fn(|| Some(take()))
            .take_while(|b| b.capacity() == 8)
            .count();
        assert_eq!(n, POOL_SIZE);
    }
}
