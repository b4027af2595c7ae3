//! # lossless-ports
//!
//! What sits at the end of a switch link:
//!
//! * [`flow`]: traffic generators (greedy, CBR, on/off; UDP or RoCEv2) and receivers
//!   (bytes, reordering, latency histograms).
//! * [`host`]: a host NIC that honours (or ignores) PFC and can send it from a bounded
//!   receive buffer — sans-IO, driven by the simulator.
//! * [`capture`]: pcap files of a port's traffic.
//! * [`sys`]: a Linux TAP device and an `AF_PACKET` socket (the only `unsafe` code).

pub mod capture;
pub mod flow;
pub mod host;
pub mod sys;
