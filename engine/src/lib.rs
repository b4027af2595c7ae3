//! The virtual-time core of `lossless run`, with no scenario, report or I/O in it: what is
//! pending and in which order, and what is on the wire.
//!
//! * [`key`]: the canonical order of what happens at one instant (the run's own events,
//!   then node by node each node's arrivals by port and its wake-up), which makes a run's
//!   outcome independent of who scheduled first;
//! * [`queue`]: the event queue in that order, with at most one wake-up per node (its
//!   one-shot events kept by the private `events` module);
//! * [`wire`]: the frames between their start at one port and their arrival at the other.
//!
//! The `lossless` package builds a fabric from a scenario on top of it (`src/sim`): nodes,
//! links, the scenario's events, the instruments and the report.

#![forbid(unsafe_code)]

mod events;
pub mod key;
pub mod queue;
pub mod wire;

pub use key::{Key, RunEvent};
pub use queue::{EventQueue, Next};
pub use wire::OnWire;
