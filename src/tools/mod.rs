//! Tools for TAP labs and tests, on an `AF_PACKET` socket inside a host's namespace:
//!
//! * [`send_pfc`]: send 802.1Qbb frames (Linux itself cannot: it has no PFC).
//! * [`gen`]: a PFC-honouring traffic generator — what an RDMA NIC does and a Linux host
//!   does not — driving the simulator's own host NIC model over a real socket.

pub mod gen;
pub mod send_pfc;
