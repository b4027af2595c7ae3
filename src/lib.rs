//! # lossless
//!
//! The `lossless` package: configuration (YAML → typed switch configs), reports, and the
//! command-line tool. The switch itself lives in `lossless-pipeline` and
//! `lossless-buffer-model`; this package is where files are read.

#![forbid(unsafe_code)]

pub mod bench;
pub mod cable;
pub mod cli;
pub mod config;
pub mod measure;
pub mod netlab;
pub mod outdir;
pub mod report;
pub mod sim;
pub mod sweep;
pub mod tap;
pub mod tools;
pub mod wallclock;
