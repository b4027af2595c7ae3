//! A progress bar for long runs: shown only on a terminal, and only once a run has taken
//! more than a second of wall time.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Lazily shown progress bar.
pub struct Progress {
    enabled: bool,
    started: Instant,
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar that may show itself (when `wanted` and stdout is a terminal).
    pub fn new(wanted: bool) -> Progress {
        Progress {
            enabled: wanted && std::io::stdout().is_terminal(),
            started: Instant::now(),
            bar: None,
        }
    }

    /// Report the fraction of virtual time done.
    pub fn update(&mut self, fraction: f64) {
        if !self.enabled || self.started.elapsed() < Duration::from_secs(1) {
            return;
        }
        let bar = self.bar.get_or_insert_with(|| {
            let b = ProgressBar::new(1000);
            b.set_style(
                ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:40}] {percent}% of virtual time, eta {eta}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            b
        });
        bar.set_position((fraction.clamp(0.0, 1.0) * 1000.0) as u64);
    }

    /// Remove the bar.
    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}
