//! # lossless-ports
//!
//! What sits at the end of a switch link, as I/O-free models driven with explicit time
//! (the TAP devices, sockets and pcap files they meet are in `lossless-sys`):
//!
//! * [`flow`]: traffic generators (greedy, CBR, on/off; UDP or RoCEv2) and receivers
//!   (bytes, reordering, latency histograms).
//! * [`host`]: a host NIC that honours (or ignores) PFC and can send it from a bounded
//!   receive buffer; [`nic`]: its settings.
//! * [`rc`]: RoCEv2 Reliable Connection, requester and responder of a queue pair.
//! * [`tcp`]: TCP on smoltcp in virtual time, a stack per host.
//! * [`collective`]: a host's rank in a ring AllReduce or an all-to-all over RC.
//! * [`dcqcn`]: DCQCN's reaction point (rate machine) and notification point (CNPs).

#![forbid(unsafe_code)]

pub mod collective;
pub mod dcqcn;
pub mod flow;
pub mod host;
pub mod nic;
pub mod rc;
pub mod tcp;
