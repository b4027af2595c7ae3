//! `lossless run`: a scenario in virtual time, then its report.

use super::args::{load, open_json, print_out, run_length, write_json};
use crate::outdir::{Created, Origin};
use crate::report::progress::{Progress, ProgressMode};
use crate::sim::{Go, RunOptions, Sim};
use clap::Args;
use lossless_buffer_model::Time;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Most samples `--plot` keeps: past it, neighbouring samples merge in pairs and the
/// interval doubles, so a run of any length is recorded whole in bounded memory. An
/// explicit `--plot-interval` over a known span that needs more is refused instead.
pub const MAX_PLOT_SAMPLES: u64 = 20_000;

#[derive(Args)]
pub struct RunArgs {
    /// Scenario YAML file, e.g. configs/labs/incast-pfc.yaml.
    pub(super) file: PathBuf,
    /// Write the JSON report here (overrides outputs.json; its directory must exist).
    #[arg(long)]
    pub(super) json: Option<PathBuf>,
    /// Put the files the scenario names (outputs.json, outputs.pcap, outputs.timeseries,
    /// and their defaults under out/) under DIR instead of the working directory; DIR and
    /// the directories below it are created.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
    /// Write pcap files into this directory: those of outputs.pcap, or, when the file has
    /// none, one per switch port.
    #[arg(long, conflicts_with = "sweep")]
    pcap_dir: Option<PathBuf>,
    /// Override the scenario's seed.
    #[arg(long)]
    pub(super) seed: Option<u64>,
    /// Override the scenario's duration (e.g. 2ms; above 0). A `measure` or
    /// `outputs.timeseries` window past the new end is cut to fit and events after it are
    /// left out, each with a warning.
    #[arg(long, value_parser = run_length)]
    pub(super) duration: Option<Time>,
    /// Run the fabric on N threads (default: one per core for a fabric of at least 16
    /// switches whose switch-to-switch links take at least 100 ns and whose samples and
    /// checks come at least 10 us apart, else one). The
    /// switches are split into shares of consecutive switches, each host with its switch;
    /// the shares run side by side in windows as long as the shortest link between them
    /// takes, so the outcome is byte-identical for every N. A run without a duration
    /// (waiting for idle) and a `sample: change` time series look at every instant and run
    /// on one thread. Where N threads cannot pay off (the same rules as the default) the
    /// run says why and takes one.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub(super) threads: Option<u16>,
    /// With --threads N: take N threads even where they cannot pay off (to check that the
    /// outcome is the same on any count, or to measure the cost).
    #[arg(long, requires = "threads")]
    pub(super) force_threads: bool,
    /// No text report and no progress.
    #[arg(long, short)]
    pub(super) quiet: bool,
    /// How a long run shows progress (virtual time done, its pace per wall second, when it
    /// ends): auto is a bar on a terminal and a line on stderr every 5 s otherwise.
    #[arg(long, value_enum, default_value = "auto", value_name = "HOW")]
    progress: ProgressMode,
    /// Write SVG figures (buffers with XOFF/XON levels, pause timeline with a tick per PFC
    /// frame, flow throughput, DCQCN rates, ECN marking, link utilisation) and DIR/index.html, one self-contained page with the
    /// figures and the report. With --sweep: DIR/sweep.svg, each metric against the
    /// swept values, and DIR/index.html with it and the table.
    #[arg(long, value_name = "DIR")]
    pub(super) plot: Option<PathBuf>,
    /// With --plot: the sampling interval (default: the run length / 2000, or 1us without
    /// a duration, doubled as a run without one grows past 20,000 samples); given, at most
    /// 20,000 samples over the run (or the --plot-window).
    #[arg(long, value_parser = interval, requires = "plot", conflicts_with = "sweep")]
    plot_interval: Option<Time>,
    /// With --plot: only this window, FROM,TO (e.g. 480us,520us to see single XOFF/XON
    /// cycles; pair it with a fine --plot-interval such as 20ns).
    #[arg(
        long,
        value_parser = window,
        requires = "plot",
        value_name = "FROM,TO",
        conflicts_with = "sweep"
    )]
    plot_window: Option<(Time, Time)>,
    /// Write every PFC decision and frame as JSON lines: XOFF/XON decisions with the PG's
    /// shared and headroom use and the level crossed, frames sent, frames received with
    /// when they take effect.
    #[arg(long, value_name = "PATH", conflicts_with = "sweep")]
    pfc_log: Option<PathBuf>,
    /// Run once per value of one key and print a row of metrics per value, e.g.
    /// `--sweep links.0.cable=2m,50m,100m` or `--sweep switches.tor.ports.cable=2m,20m`.
    /// KEY is a dotted path into the file (list entries by index or by `name`); each value
    /// is YAML: a scalar, or a flow map or list (`--sweep 'measure={from: 0.5ms, to: 1ms},{from:
    /// 1.2ms}'`). pcap and CSV outputs are left out; --json writes every row.
    #[arg(long, value_name = "KEY=V1,V2,…", conflicts_with = "out_dir")]
    sweep: Option<crate::sweep::Sweep>,
    /// With --sweep: a report value per row, as a dotted path (repeatable; `*` takes every
    /// entry of a list; `max(…)`, `min(…)`, `sum(…)` or `mean(…)` folds them into one
    /// column, e.g. 'max(flows.*.fct_ps)' for the last flow's completion). Default:
    /// totals.lossless_drops, totals.drops, totals.pfc_tx_frames and flows.*.throughput_bps.
    #[arg(long, value_name = "PATH", requires = "sweep")]
    pub(super) metric: Vec<String>,
    /// With --sweep: run one share of it, the values at positions k (from 0) with k mod N
    /// = I, so that N processes or machines split it: e.g. `parallel lossless run FILE
    /// --sweep … --shard {}/4 --json part{}.json ::: 0 1 2 3`, a Slurm array
    /// (`--shard $SLURM_ARRAY_TASK_ID/4`) or a Kubernetes indexed Job
    /// (`$JOB_COMPLETION_INDEX`). `lossless sweep merge part*.json` joins the row files
    /// into what one process writes.
    #[arg(long, value_name = "I/N", requires = "sweep", conflicts_with = "plot")]
    pub(super) shard: Option<crate::sweep::Shard>,
}

impl RunArgs {
    /// The threads asked for: as many as pay off, or `--threads N` where they pay off, or
    /// N whatever they cost with `--force-threads`.
    pub(super) fn threads(&self) -> crate::sim::Threads {
        use crate::sim::Threads;
        match (self.threads.map(usize::from), self.force_threads) {
            (None, _) => Threads::Auto,
            (Some(n), false) => Threads::Asked(n),
            (Some(n), true) => Threads::Exactly(n),
        }
    }
}

pub fn exec(a: RunArgs) -> ExitCode {
    let done = match a.sweep.clone() {
        Some(sweep) => super::sweep::run(&a, &sweep),
        None => run(&a),
    };
    match done {
        Ok(None) => ExitCode::SUCCESS,
        // Stopped by a signal: its report is written, and the status says so (130 for
        // Ctrl-C, as a shell reports it).
        Ok(Some(status)) => ExitCode::from(status),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One run: load, make room for the outputs, simulate, report. Ok(Some(status)) when a
/// signal stopped it before its end (its report covers the time simulated until then).
fn run(a: &RunArgs) -> Result<Option<u8>, String> {
    // Ctrl-C (or SIGTERM, SIGHUP) stops the run where it is; its report is still written.
    let signals =
        super::signals::Signals::catch().map_err(|e| format!("cannot handle signals: {e}"))?;
    let Some(loaded) = load(&a.file) else {
        return Err(format!("{}: not run", a.file.display()));
    };
    let mut scenario = match a.duration {
        Some(d) => with_duration(&a.file, d)?,
        None => loaded.scenario,
    };
    if let Some(e) = crate::config::topology::neighbors::first_pending(&scenario.switches) {
        return Err(e.to_string());
    }
    let mut created = Created::default();
    if let Some(dir) = &a.out_dir {
        created.dir(dir, Origin::File).map_err(|e| at(dir, e))?;
        scenario.run.outputs.relocate(dir);
    }
    let json = match (&a.json, &scenario.run.outputs.json) {
        (Some(p), _) => Some((p.clone(), Origin::CommandLine)),
        (None, Some(p)) => Some((p.clone(), Origin::File)),
        (None, None) => None,
    };
    // Every file's directory before the run, and the report's file opened, so that a long
    // run does not fail at its end.
    let json_file = match &json {
        Some((p, origin)) => {
            created.file(p, *origin).map_err(|e| at(p, e))?;
            Some(open_json(p).map_err(|e| e.to_string())?)
        }
        None => None,
    };
    if let Some(p) = &a.pfc_log {
        created.file(p, Origin::CommandLine).map_err(|e| at(p, e))?;
    }
    if let Some(d) = &a.plot {
        created.dir(d, Origin::CommandLine).map_err(|e| at(d, e))?;
    }
    let length = a.duration.or(scenario.duration);
    let record = match &a.plot {
        Some(_) => Some(plot_interval(a, length)?),
        None => None,
    };
    let opts = RunOptions {
        seed: a.seed,
        duration: a.duration,
        pcap_dir: a.pcap_dir.clone(),
        record,
        record_window: a.plot_window,
        max_plot_samples: MAX_PLOT_SAMPLES as usize,
        pfc_log: a.pfc_log.clone(),
        threads: a.threads(),
        created,
    };
    let mut sim = Sim::new(scenario, &opts).map_err(|e| format!("{}: {e}", a.file.display()))?;
    if let (Some(asked), Some(why)) = (a.threads, sim.one_thread_because()) {
        if asked > 1 && !a.quiet {
            eprintln!("note: --threads {asked}: this run {why}, so it runs on one thread");
        }
    }
    if let (Some(asked), Some(why)) = (a.threads, sim.threads_note()) {
        if !a.quiet {
            eprintln!(
                "note: --threads {asked}: {why}, so it runs on one thread (--force-threads takes {asked} anyway; the outcome is the same)"
            );
        }
    }
    let mut bar = Progress::new(if a.quiet {
        ProgressMode::Off
    } else {
        a.progress
    });
    let ran = sim.run(|t| {
        bar.update(t);
        if signals.stopping() {
            Go::Stop
        } else {
            Go::On
        }
    });
    bar.finish();
    ran.map_err(|e| e.to_string())?;
    // Outputs that fail at the end are said after the text report, which is printed
    // whatever they do: the run's results are not lost with a file.
    let mut failed: Vec<String> = sim
        .take_output_error()
        .map(|e| e.to_string())
        .into_iter()
        .collect();
    let outcome = sim.outcome();
    let mut report = crate::report::json::report(&outcome);
    let stopped_by = report.interrupted.as_ref().and(signals.received());
    if let (Some(i), Some(sig)) = (&mut report.interrupted, stopped_by) {
        i.by = super::signals::name(sig).to_string();
        eprintln!(
            "lossless run: stopped by {} at {} of virtual time; writing the report of the time simulated so far",
            i.by,
            sim.now()
        );
    }
    let (end, windowed) = (sim.now(), outcome.windowed);
    let name = outcome.scenario.name.clone();
    let recording = sim.into_recording();
    let json_written = match json_file {
        Some(file) => match write_json(file, &report.to_value()) {
            Ok(()) => true,
            Err(e) => {
                failed.push(e.to_string());
                false
            }
        },
        None => false,
    };
    let mut text = crate::report::text::render(&report);
    if let Some((p, _)) = json.as_ref().filter(|_| json_written) {
        text += &format!("JSON report: {}\n", p.display());
    }
    if let (Some(dir), Some(rec)) = (&a.plot, &recording) {
        if let Some((from, to)) = a.plot_window.filter(|(from, _)| *from > end) {
            eprintln!(
                "warning: --plot-window {from},{to} starts after the run ended ({end}): the figures are empty"
            );
        }
        let marks = crate::report::plot::Marks {
            measure: windowed.then_some((Time(report.measure.from_ps), Time(report.measure.to_ps))),
            deadlocks: report
                .deadlocks
                .iter()
                .flat_map(|d| &d.found)
                .map(|d| (Time(d.formed_ps), Time(d.detected_ps)))
                .collect(),
            collectives: report
                .collectives
                .iter()
                .map(|c| {
                    let its = c.iterations.iter();
                    let its = its
                        .map(|i| crate::report::plot::Iteration {
                            end: Time(i.end_ps),
                            took: Time(i.time_ps),
                            resent: i.retransmitted_packets,
                        })
                        .collect();
                    (c.name.clone(), its)
                })
                .collect(),
        };
        match crate::report::plot::write(rec, &marks, dir, &name, &text) {
            Ok(files) => text += &format!("plots: {}\n", super::args::path_list(&files)),
            Err(e) => failed.push(format!("{}: {e}", dir.display())),
        }
    }
    if !a.quiet {
        print_out(&text);
    }
    if !failed.is_empty() {
        return Err(format!(
            "the run ended, but {} could not be written (the report above is whole):\n  {}",
            if failed.len() == 1 {
                "an output"
            } else {
                "outputs"
            },
            failed.join("\n  ")
        ));
    }
    Ok(stopped_by.map(|_| signals.exit_status().unwrap_or(130)))
}

/// `path: error`.
fn at(path: &Path, e: impl std::fmt::Display) -> String {
    format!("{}: {e}", path.display())
}

/// The `--plot` sampling interval: given, or the run's length / 2000 (1 µs without one);
/// refused when the run or window it covers would take more than [`MAX_PLOT_SAMPLES`].
fn plot_interval(a: &RunArgs, length: Option<Time>) -> Result<Time, String> {
    let every = a
        .plot_interval
        .unwrap_or_else(|| length.map_or(Time::from_us(1), |d| Time((d.as_ps() / 2000).max(1000))));
    let span = match (a.plot_window, length) {
        (Some((from, to)), Some(end)) => Some(to.min(end).saturating_sub(from)),
        (Some((from, to)), None) => Some(to - from),
        (None, end) => end,
    };
    if let Some(span) = span {
        let samples = span.as_ps() / every.as_ps() + 1;
        if samples > MAX_PLOT_SAMPLES {
            let least = Time(span.as_ps().div_ceil(MAX_PLOT_SAMPLES - 1));
            return Err(format!(
                "--plot-interval {every} over {span} is {samples} samples; at most {MAX_PLOT_SAMPLES} (an interval of {least} or more, or a shorter --plot-window)"
            ));
        }
    }
    Ok(every)
}

/// A sampling interval above 0.
fn interval(s: &str) -> Result<Time, String> {
    match s.parse::<Time>().map_err(|e| e.to_string())? {
        Time::ZERO => Err("an interval needs to be above 0, such as 20ns".into()),
        t => Ok(t),
    }
}

/// `FROM,TO` times with FROM < TO.
fn window(s: &str) -> Result<(Time, Time), String> {
    let (a, b) = s
        .split_once(',')
        .ok_or_else(|| format!("`{s}`: write FROM,TO, e.g. 480us,520us"))?;
    let (a, b): (Time, Time) = (
        a.trim().parse().map_err(|e| format!("{e}"))?,
        b.trim().parse().map_err(|e| format!("{e}"))?,
    );
    if a >= b {
        return Err(format!("`{s}`: FROM must be before TO"));
    }
    Ok((a, b))
}

/// The file again with its `duration` replaced by `--duration` (windows and events cut to
/// fit, with a warning each), so that every key checked against the run's length is checked
/// against the length that will run. The file itself has passed with its own lines first.
fn with_duration(file: &std::path::Path, d: Time) -> Result<crate::config::Scenario, String> {
    let text =
        crate::config::input::read_text(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let (text, warnings) = crate::config::duration::with_duration(&text, d)?;
    for w in warnings {
        eprintln!("warning: {}: {w}", file.display());
    }
    let name = format!("{} (with --duration {d})", file.display());
    let stem = file
        .file_stem()
        .map_or("scenario".into(), |s| s.to_string_lossy().to_string());
    crate::sweep::parse_applied(&name, &stem, &text).map(|l| l.scenario)
}
