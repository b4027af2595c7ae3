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

/// What a port's device offers the host's stack behind it, as a NIC would.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offloads {
    /// Nothing: the host sends whole frames, as a wire carries them, and so does the device.
    None,
    /// Checksum and segmentation offload (TSO4/6 with ECN, and USO where the kernel has
    /// it): every frame, both ways, goes with a virtio-net header ([`crate::vnet`]); the
    /// host may hand over frames of up to 64 KB for the reader to cut.
    Segmentation,
}
