//! # lossless-buffer-model
//!
//! The traffic manager of a lossless Ethernet switch, as pure state machines with no I/O and
//! no clock: time is always an argument.
//!
//! * [`units`]: `Time` (ps), `Rate` (bit/s), `Bytes`, `Length`; wire time and pause quanta.
//! * [`named`]: the words that name the values of closed types (YAML, CLI, reports).
//! * [`headroom`]: minimum PFC headroom from speed, cable, MTU and peer response.
//! * [`mmu`]: pools, reserved space, dynamic/static thresholds, PFC headroom, admission;
//!   [`asic`]: its chip-specific choices (where the crossing packet goes, the XON limit).
//! * [`pfc`]: pause timers (reaction) and XOFF/XON generation with refresh.
//! * [`wred`]: WRED drop / ECN marking curves per colour.
//! * [`scheduler`]: strict priority + DWRR.
//! * [`watchdog`]: PFC storm detection and restoration.

#![forbid(unsafe_code)]

pub mod asic;
pub mod headroom;
pub mod mmu;
pub mod named;
pub mod pfc;
pub mod scheduler;
pub mod units;
pub mod watchdog;
pub mod wred;

pub use mmu::{priorities_in, PRIORITIES};
pub use named::{Named, WordError};
pub use units::{Bytes, Length, Rate, RateOrZero, Time, WireTimes};
