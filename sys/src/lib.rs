//! # lossless-sys
//!
//! The operating-system edge of `lossless`, kept apart from the I/O-free models (the
//! quinn-proto / quinn-udp split): everything here reads or writes a device, a socket, a
//! file or the scheduler. It holds the only `unsafe` code of the project — a handful of
//! libc calls, each with its invariant stated.
//!
//! * [`tap`]: a Linux TAP device (`TUNSETIFF` with `IFF_TAP | IFF_NO_PI`), its ring size,
//!   and where it lives now.
//! * [`packet`]: an `AF_PACKET` socket bound to one interface.
//! * [`iface`]: an existing interface (a veth, a NIC) served as a switch port, through an
//!   `AF_PACKET` socket with a memory-mapped receive ring; [`claim`] keeps it to one switch.
//! * [`poll`]: waiting for frames on several descriptors at once.
//! * [`netdev`]: interface lookups by name in the calling thread's namespace (index, MAC,
//!   MTU), with ioctls rather than `/sys` (which shows the namespace `/sys` was mounted in).
//! * [`kernel`]: the kernel's own counters of a TAP, in whatever namespace it was moved to.
//! * [`sched`]: timer slack and real-time priority of the calling thread.
//! * [`capture`]: pcap files of a port's traffic.
//! * [`output`]: output files written whole (a temporary file renamed into place).

pub mod capture;
pub mod claim;
pub mod iface;
pub mod kernel;
pub mod netdev;
pub mod output;
pub mod packet;
pub mod poll;
pub mod received;
pub mod sched;
pub mod tap;
pub mod vnet;

/// An `io::Error` of kind `InvalidInput` saying `msg`.
pub(crate) fn invalid(msg: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, msg)
}
