//! Human- and machine-readable output: the `check` plan (text).

pub mod plan;
