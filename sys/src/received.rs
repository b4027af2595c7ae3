//! What one read from a port's device brought: a frame and what its host left to its NIC.

use lossless_pipeline::wire::gso::Offload;

/// A frame read from a TAP or an interface: where it lies in the buffer, and what its
/// host left to do (a checksum, a super-frame to cut), done by the switch's reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Received {
    /// Where the frame starts in the buffer (after the virtio-net header, if any).
    pub at: usize,
    /// Its length (0: the device is gone).
    pub len: usize,
    /// What its host left to its NIC.
    pub offload: Offload,
}
