//! `lossless run`: a scenario in virtual time, then its report.

use super::args::{load, print_out, run_length, write_json};
use crate::sim::{RunOptions, Sim};
use clap::Args;
use lossless_buffer_model::Time;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct RunArgs {
    /// Scenario YAML file, e.g. configs/labs/incast-pfc.yaml.
    file: PathBuf,
    /// Write the JSON report here (overrides outputs.json).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write pcap files into this directory: those of outputs.pcap, or, when the file has
    /// none, one per switch port.
    #[arg(long, conflicts_with = "sweep")]
    pcap_dir: Option<PathBuf>,
    /// Override the scenario's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Override the scenario's duration (e.g. 2ms; above 0).
    #[arg(long, value_parser = run_length)]
    duration: Option<Time>,
    /// No text report and no progress bar.
    #[arg(long, short)]
    quiet: bool,
    /// Write SVG figures (buffers with XOFF/XON levels, pause timeline with a tick per PFC
    /// frame, flow throughput, DCQCN rates, ECN marking, link utilisation) and DIR/index.html, one self-contained page with the
    /// figures and the report. With --sweep: DIR/sweep.svg, each metric against the
    /// swept values, and DIR/index.html with it and the table.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// With --plot: the sampling interval (default: the run length / 2000, or 1us without
    /// a duration).
    #[arg(long, value_parser = run_length, requires = "plot", conflicts_with = "sweep")]
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
    #[arg(long, value_name = "KEY=V1,V2,…")]
    sweep: Option<crate::sweep::Sweep>,
    /// With --sweep: a report value per row, as a dotted path (repeatable; `*` takes every
    /// entry of a list). Default: totals.lossless_drops, totals.drops, totals.pfc_tx_frames
    /// and flows.*.throughput_bps.
    #[arg(long, value_name = "PATH", requires = "sweep")]
    metric: Vec<String>,
}

pub fn exec(a: RunArgs) -> ExitCode {
    if let Some(sweep) = a.sweep.clone() {
        return match run_sweep(&a, &sweep) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let Some(loaded) = load(&a.file) else {
        return ExitCode::FAILURE;
    };
    if let Some(e) = crate::config::topology::neighbors::first_pending(&loaded.scenario.switches) {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    let record = a.plot.as_ref().map(|_| {
        a.plot_interval.unwrap_or_else(|| {
            a.duration
                .or(loaded.scenario.duration)
                .map_or(Time::from_us(1), |d| Time((d.as_ps() / 2000).max(1000)))
        })
    });
    let opts = RunOptions {
        seed: a.seed,
        duration: a.duration,
        pcap_dir: a.pcap_dir.clone(),
        progress: !a.quiet,
        record,
        record_window: a.plot_window,
        pfc_log: a.pfc_log.clone(),
    };
    let json_path = a
        .json
        .clone()
        .or_else(|| loaded.scenario.run.outputs.json.clone());
    let mut sim = match Sim::new(loaded.scenario, &opts) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {}: {e}", a.file.display());
            return ExitCode::FAILURE;
        }
    };
    let mut bar = crate::report::progress::Progress::new(opts.progress);
    let ran = sim.run(|f| bar.update(f));
    bar.finish();
    if let Err(e) = ran {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    let report = crate::report::json::report(&sim.outcome());
    if let Some(path) = &json_path {
        if let Err(e) = write_json(path, &report.to_value()) {
            eprintln!("error: {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    let mut text = crate::report::text::render(&report);
    if let Some(p) = &json_path {
        text += &format!("JSON report: {}\n", p.display());
    }
    if let (Some(dir), Some(rec)) = (&a.plot, sim.recording()) {
        match crate::report::plot::write(rec, dir, &sim.outcome().scenario.name, &text) {
            Ok(files) => {
                text += &format!(
                    "plots: {}\n",
                    files
                        .iter()
                        .map(|f| f.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            Err(e) => {
                eprintln!("error: {}: {e}", dir.display());
                return ExitCode::FAILURE;
            }
        }
    }
    if !a.quiet {
        print_out(&text);
    }
    ExitCode::SUCCESS
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

/// `--sweep`: the scenario once per value, a row of metrics each.
fn run_sweep(a: &RunArgs, sweep: &crate::sweep::Sweep) -> Result<(), String> {
    use crate::sweep::{apply, metric, DEFAULT_METRICS};
    let text =
        std::fs::read_to_string(&a.file).map_err(|e| format!("{}: {e}", a.file.display()))?;
    let stem = a
        .file
        .file_stem()
        .map_or("scenario".into(), |s| s.to_string_lossy().to_string());
    let metrics: Vec<String> = if a.metric.is_empty() {
        DEFAULT_METRICS.iter().map(|m| m.to_string()).collect()
    } else {
        a.metric.clone()
    };
    // Per value, its cells: (index of the metric path, column, value).
    let mut rows: Vec<(String, Vec<crate::report::sweep_plot::Cell>)> = Vec::new();
    for value in &sweep.values {
        let json = apply(&text, &sweep.key, value)?;
        let name = format!("{} ({}={value})", a.file.display(), sweep.key);
        let loaded = crate::config::parse(&name, &stem, &json).map_err(|e| e.to_string())?;
        let mut scenario = loaded.scenario;
        scenario.run.outputs.pcap = None;
        scenario.run.outputs.timeseries = None;
        let opts = RunOptions {
            seed: a.seed,
            duration: a.duration,
            pcap_dir: None,
            progress: false,
            record: None,
            record_window: None,
            pfc_log: None,
        };
        let mut sim = Sim::new(scenario, &opts).map_err(|e| format!("{name}: {e}"))?;
        sim.run(|_| {}).map_err(|e| format!("{name}: {e}"))?;
        let report = crate::report::json::report(&sim.outcome()).to_value();
        let cells = metrics
            .iter()
            .enumerate()
            .flat_map(|(i, m)| metric(&report, m).into_iter().map(move |(c, v)| (i, c, v)))
            .collect();
        if !a.quiet {
            eprintln!("ran {}={value}", sweep.key);
        }
        rows.push((value.clone(), cells));
    }
    let mut columns: Vec<String> = Vec::new();
    for (_, cells) in &rows {
        for (_, c, _) in cells {
            if !columns.contains(c) {
                columns.push(c.clone());
            }
        }
    }
    if let Some(path) = &a.json {
        let out = crate::sweep::SweepReport {
            file: a.file.display().to_string(),
            key: sweep.key.clone(),
            rows: rows
                .iter()
                .map(|(v, cells)| crate::sweep::SweepRow {
                    value: v.clone(),
                    metrics: cells
                        .iter()
                        .map(|(_, c, v)| (c.clone(), v.clone()))
                        .collect(),
                })
                .collect(),
        };
        let out = serde_json::to_value(&out).expect("a sweep serializes");
        write_json(path, &out).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let mut t = format!("{:<16}", sweep.key);
    for c in &columns {
        t += &format!(" {:>24}", c);
    }
    t.push('\n');
    for (v, cells) in &rows {
        t += &format!("{v:<16}");
        for c in &columns {
            let cell = cells.iter().find(|(_, k, _)| k == c).map(|(.., x)| x);
            t += &format!(" {:>24}", show(cell));
        }
        t.push('\n');
    }
    if let Some(dir) = &a.plot {
        use crate::report::sweep_plot;
        let cells: Vec<_> = rows.iter().map(|(_, c)| c.clone()).collect();
        let panels = sweep_plot::panels(&metrics, &cells);
        let title = format!("{} — sweep of {}", a.file.display(), sweep.key);
        let files = sweep_plot::write(dir, &title, &sweep.key, &sweep.values, &panels, &t)?;
        if !a.quiet {
            eprintln!(
                "plots: {}",
                files
                    .iter()
                    .map(|f| f.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    if !a.quiet {
        print_out(&t);
    }
    Ok(())
}

/// A metric cell: numbers with at most 4 decimals (throughputs in Gb/s when named `_bps`).
fn show(v: Option<&serde_json::Value>) -> String {
    match v {
        None | Some(serde_json::Value::Null) => "-".into(),
        Some(serde_json::Value::Number(n)) if n.is_u64() || n.is_i64() => n.to_string(),
        Some(serde_json::Value::Number(n)) => format!("{:.4}", n.as_f64().unwrap_or(0.0)),
        Some(x) => x.to_string(),
    }
}
