//! P4 programs in front of the lossless traffic manager: p4c's BMv2 JSON for v1model,
//! loaded once into a form with every name resolved, then run per frame.
//!
//! * [`load`]: the JSON read and checked; what is not supported is refused by name and
//!   place.
//! * [`program`]: the loaded program (headers, parser states, actions, tables, controls).
//! * [`phv`]: one frame's headers and metadata; [`bits`]: fields on the wire.
//! * [`parse`], [`control`], [`deparse`]: the stages, with [`eval`] (expressions and
//!   actions) and [`hash`] (checksums and hashes).
//! * [`tables`]: entries and their look-up; [`entries`]: the control plane's commands
//!   (`simple_switch_CLI` syntax, the tutorials' runtime JSON).
//! * [`v1model`]: the architecture — ingress decides the port and traffic class the
//!   switch's buffer and queues act on, egress sees what the queue did.
//!
//! Nothing here reads a file or a clock: the caller hands in the JSON's text and the time.

pub mod bits;
pub mod control;
pub mod deparse;
pub mod entries;
pub mod eval;
pub mod hash;
pub mod load;
pub mod parse;
pub mod phv;
pub mod program;
pub mod tables;
pub mod v1model;

pub use load::{load, LoadError};
pub use program::Program;
pub use v1model::{V1Model, Verdict};
