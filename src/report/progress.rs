//! Progress of a long `lossless run`: how much virtual time is simulated, how fast (virtual
//! time per wall second) and when it will end at that pace. On a terminal a bar (once a
//! run has taken a second); elsewhere (a batch job, a pipe) a line on stderr every
//! [`LINE_EVERY`] for the first minute and every [`LINE_EVERY_LATER`] after, so that a long
//! run shows it is alive without filling a log.

use crate::sim::Tick;
use indicatif::{ProgressBar, ProgressStyle};
use lossless_buffer_model::Time;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// How often a progress line is printed when stderr is not a terminal (the first after as
/// long).
pub const LINE_EVERY: Duration = Duration::from_secs(5);
/// How often a progress line is printed after the first minute.
pub const LINE_EVERY_LATER: Duration = Duration::from_secs(60);
/// How long a run goes before a bar appears.
const BAR_AFTER: Duration = Duration::from_secs(1);

/// How progress is shown (`lossless run --progress`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ProgressMode {
    /// A bar on a terminal, lines on stderr otherwise.
    #[default]
    Auto,
    /// A bar (on stderr).
    Bar,
    /// A line on stderr every few seconds.
    Lines,
    /// Nothing.
    Off,
}

/// What is shown, once resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Show {
    Bar,
    Lines,
    Off,
}

/// Progress of one run, shown lazily.
pub struct Progress {
    show: Show,
    started: Instant,
    bar: Option<ProgressBar>,
    /// When the last line was printed.
    last_line: Instant,
}

impl Progress {
    /// Progress shown as `mode` says (Auto: a bar when stderr is a terminal).
    pub fn new(mode: ProgressMode) -> Progress {
        let show = match mode {
            ProgressMode::Auto if std::io::stderr().is_terminal() => Show::Bar,
            ProgressMode::Auto | ProgressMode::Lines => Show::Lines,
            ProgressMode::Bar => Show::Bar,
            ProgressMode::Off => Show::Off,
        };
        let now = Instant::now();
        Progress {
            show,
            started: now,
            bar: None,
            last_line: now,
        }
    }

    /// The run stands at `t`.
    pub fn update(&mut self, t: Tick) {
        let elapsed = self.started.elapsed();
        match self.show {
            Show::Off => {}
            Show::Bar if elapsed >= BAR_AFTER => {
                let bar = self.bar.get_or_insert_with(|| {
                    let b = ProgressBar::with_draw_target(
                        Some(1000),
                        indicatif::ProgressDrawTarget::stderr(),
                    );
                    b.set_style(
                        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {msg}")
                            .expect("valid template")
                            .progress_chars("=> "),
                    );
                    b
                });
                if let Some(end) = t.end {
                    bar.set_position(fraction(t.now, end).map_or(0, |f| (f * 1000.0) as u64));
                }
                bar.set_message(status(t, elapsed));
            }
            Show::Bar => {}
            Show::Lines if self.last_line.elapsed() >= line_every(elapsed) => {
                self.last_line = Instant::now();
                eprintln!("lossless run: {}", status(t, elapsed));
            }
            Show::Lines => {}
        }
    }

    /// Remove the bar.
    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

/// How long between progress lines, a run `elapsed` into its wall time.
fn line_every(elapsed: Duration) -> Duration {
    if elapsed < Duration::from_secs(60) {
        LINE_EVERY
    } else {
        LINE_EVERY_LATER
    }
}

/// Share of the run done.
fn fraction(now: Time, end: Time) -> Option<f64> {
    (end > Time::ZERO).then(|| (now.as_ps() as f64 / end.as_ps() as f64).clamp(0.0, 1.0))
}

/// "12.3 % (1.2ms of 10ms simulated), 1.83ms per wall second, ends in about 5 s".
pub fn status(t: Tick, elapsed: Duration) -> String {
    let per_s = pace(t.now, elapsed);
    let pace_text = match per_s {
        Some(p) => format!("{p} per wall second"),
        None => "pace not known yet".into(),
    };
    match t.end {
        Some(end) => {
            let pct = fraction(t.now, end).unwrap_or(1.0) * 100.0;
            let eta = match per_s {
                Some(p) if p > Time::ZERO => {
                    let left = end.saturating_sub(t.now).as_ps() as f64 / p.as_ps() as f64;
                    format!(", ends in about {}", wall(left))
                }
                _ => String::new(),
            };
            format!(
                "{pct:.1} % ({} of {end} simulated), {pace_text}{eta}",
                t.now
            )
        }
        None => format!("{} simulated (runs until idle), {pace_text}", t.now),
    }
}

/// Virtual time simulated per wall second so far.
fn pace(now: Time, elapsed: Duration) -> Option<Time> {
    let s = elapsed.as_secs_f64();
    (s > 0.0 && now > Time::ZERO).then(|| Time((now.as_ps() as f64 / s) as u64))
}

/// A wall-clock span in words: "45 s", "3 min 20 s", "5 h 12 min", "21 d 3 h".
pub fn wall(seconds: f64) -> String {
    if !seconds.is_finite() || seconds > 1e9 {
        return "more than 30 years".into();
    }
    let s = seconds.round() as u64;
    let (d, h, m, sec) = (s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{sec} s"),
        (0, 0, _) => format!("{m} min {sec} s"),
        (0, _, _) => format!("{h} h {m} min"),
        _ => format!("{d} d {h} h"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_run_says_its_pace_and_when_it_ends() {
        // fat-tree-k8 as reported: 1 ms of virtual time in 1.83 s, asked for 1000 s.
        let t = Tick {
            now: Time::from_ms(1),
            end: Some(Time::from_ms(1_000_000)),
        };
        let s = status(t, Duration::from_millis(1830));
        assert_eq!(
            s,
            "0.0 % (1ms of 1000s simulated), 546.448us per wall second, ends in about 21 d 4 h"
        );
        let idle = Tick {
            now: Time::from_us(5),
            end: None,
        };
        assert_eq!(
            status(idle, Duration::from_secs(2)),
            "5us simulated (runs until idle), 2.5us per wall second"
        );
        assert_eq!(wall(59.6), "1 min 0 s");
        assert_eq!(wall(3.0), "3 s");
        assert_eq!(wall(7300.0), "2 h 1 min");
    }
}
