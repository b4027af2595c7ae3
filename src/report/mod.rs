//! Human- and machine-readable output: the `check` plan, and the JSON and text reports of
//! a run.

pub mod json;
pub mod plan;
pub mod progress;
pub mod text;
