//! The "cable" of a TAP or interface port: frames that have left a host but not reached
//! the switch. In `lossless tap` it is software — the TAP's kernel ring (for an existing
//! interface: its packet socket's receive ring, of as many slots) and the port's read queue
//! (what the pipeline thread reads from it in one round: the switch sees those frames after
//! any XOFF one of them triggers) — and all of it may arrive after the switch decides XOFF,
//! together with the frame that crossed the limit and the one the host may be handing to
//! the kernel while the XOFF lands. `lossless tap` bounds each part, so the headroom a lossless PG on a TAP
//! port needs is bounded too: `lossless check` prints it, and the shipped TAP configs are
//! sized from it.

use lossless_buffer_model::{Bytes, Time};
use lossless_pipeline::link::llr::ReplayNeed;

/// Transmit queue length `lossless tap` gives each TAP: the kernel ring between the host's
/// stack and our reads. A host that keeps sending while it is full loses frames there,
/// counted by the kernel (`tx_dropped` on the host's side) and reported by `lossless tap`.
/// 1024 frames (Linux's own default, now a known bound) are 12.5 ms of 1518-byte frames at
/// 1G: on a shared virtual machine the pipeline thread can be held up for several
/// milliseconds (measured: up to 6.4 ms with a busy loop on every core), and a host that
/// honours PFC must not lose frames meanwhile.
pub const RING_FRAMES: u32 = 1024;
/// Bytes (frames as read, without FCS) the pipeline thread reads from one port in one
/// round: it stops at the first frame that reaches this many (the rest wait in the ring).
pub const READ_QUEUE_BYTES: usize = 64 * 1024;
/// Frames beyond the ring and the queue: the one that crossed the limit, the one a round
/// reads past the queue's bytes (the frame that reaches them), the one the host is sending
/// when the XOFF lands.
pub const FRAMES_IN_HAND: u64 = 3;

/// Longest a frame and its acknowledgement take to cross a software cable between two
/// `lossless tap` switches and back: each may wait behind a held-up thread, measured up to
/// 6.4 ms on a busy virtual machine, on both switches.
pub const ROUND_TRIP: Time = Time::from_us(4 * 6_400);

/// What an LLR replay buffer on a `link:` port holds so that the sender does not idle
/// waiting for ACKs: the frames the peer's side of the cable can hold (its ring, its read
/// queue, the frames in hand), twice — frames on their way while ACKs come back through
/// the same kind of cable — at the port's `mtu` or at 64 bytes, and a round trip of
/// [`ROUND_TRIP`].
pub fn replay_need(mtu: u32) -> ReplayNeed {
    ReplayNeed {
        round_trip: ROUND_TRIP,
        bytes: 2 * frames_in_cable(mtu) * mtu as u64,
        frames: 2 * frames_in_cable(64),
    }
}

/// Frames of `frame` bytes (FCS included) the cable holds: the ring full, the read queue
/// full, and the frames in hand.
fn frames_in_cable(frame: u32) -> u64 {
    let held = (frame as u64).saturating_sub(4).max(1);
    RING_FRAMES as u64 + (READ_QUEUE_BYTES as u64 / held).max(1) + FRAMES_IN_HAND
}

/// Headroom a lossless PG on a TAP port needs, in cells of `cell` bytes, when the cable is
/// full of frames of `frame` bytes (FCS included).
pub fn cells_for_frames(frame: u32, cell: Bytes) -> u64 {
    frames_in_cable(frame) * (frame as u64).div_ceil(cell.get().max(1))
}

/// The worst frame size from 64 bytes to `mtu`: (cells, frame size).
pub fn worst_cells(mtu: u32, cell: Bytes) -> (u64, u32) {
    (64..=mtu.max(64))
        .map(|f| (cells_for_frames(f, cell), f))
        .max_by_key(|&(c, f)| (c, std::cmp::Reverse(f)))
        .expect("at least one frame size")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_1518_byte_mtu_needs_1078_frames_of_six_cells() {
        // 1024 in the ring, 65,536 / 1,514 = 43 in the read queue, 3 in hand; 6 cells each.
        assert_eq!(cells_for_frames(1518, Bytes(256)), 1070 * 6);
        // Worse: 1281-byte frames also take 6 cells, and 51 of them fit the read queue.
        assert_eq!(worst_cells(1518, Bytes(256)), (1078 * 6, 1281));
        // 64-byte frames: 1024 + 1,092 + 3 frames of one cell.
        assert_eq!(cells_for_frames(64, Bytes(256)), 2119);
    }
}
