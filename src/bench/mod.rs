//! `lossless bench`: how fast the switch and the simulator go on this machine.
//!
//! * [`pipeline`]: the real `Switch` fed by in-process generators as fast as it goes.
//! * [`sim`]: a scenario run N times: packet-hops and simulated time per wall second.
//! * [`tap`]: iperf3 TCP and a 64-byte flood through `lossless tap`, a Linux bridge and a
//!   plain TAP copy loop, in one run (root).
//! * [`valgrind`]: deterministic instruction counts by running this binary under cachegrind.
//!
//! Wall-clock figures swing with the machine; instruction counts do not. Every result has
//! a JSON form (`--json`).

pub mod pipeline;
pub mod sim;
pub mod tap;
pub mod valgrind;

use serde::Serialize;

/// The machine a benchmark ran on.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// Logical CPUs available.
    pub cpus: usize,
    /// CPU model from /proc/cpuinfo.
    pub cpu_model: String,
    /// This binary's version.
    pub version: &'static str,
}

impl Machine {
    /// Read it.
    pub fn here() -> Machine {
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        Machine {
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu_model,
            version: env!("CARGO_PKG_VERSION"),
        }
    }
}

/// Median and spread (min, max) of wall-clock samples.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Spread {
    /// Median.
    pub median: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

impl Spread {
    /// Of `xs` (not empty).
    pub fn of(xs: &[f64]) -> Spread {
        let mut v = xs.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Spread {
            median,
            min: v[0],
            max: v[n - 1],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_median_min_max() {
        let s = Spread::of(&[3.0, 1.0, 2.0]);
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        assert_eq!(Spread::of(&[4.0, 1.0, 2.0, 3.0]).median, 2.5);
    }
}
