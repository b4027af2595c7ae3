//! `lossless run FILE --sweep KEY=V1,V2,…`: the scenario once per value of one key, a row
//! of chosen report metrics per run, as a table, JSON rows and a figure.

use super::args::{open_json, print_out, write_json};
use super::run::RunArgs;
use crate::outdir::{Created, Origin};
use crate::sim::{RunOptions, Sim};

/// One row's cells: (index of the metric path, column, value).
type Cells = Vec<crate::report::sweep_plot::Cell>;

/// `--sweep`: the scenario once per value, a row of metrics each.
pub(super) fn run(a: &RunArgs, sweep: &crate::sweep::Sweep) -> Result<(), String> {
    let text = crate::config::input::read_text(&a.file)
        .map_err(|e| format!("{}: {e}", a.file.display()))?;
    // Where the results go must exist before the first run, not after the last.
    let mut created = Created::default();
    if let Some(p) = &a.json {
        created
            .file(p, Origin::CommandLine)
            .map_err(|e| format!("{}: {e}", p.display()))?;
    }
    if let Some(d) = &a.plot {
        created
            .dir(d, Origin::CommandLine)
            .map_err(|e| format!("{}: {e}", d.display()))?;
    }
    // Opened before the runs, so that a path that cannot be written fails at once.
    let json = a
        .json
        .as_deref()
        .map(open_json)
        .transpose()
        .map_err(|e| e.to_string())?;
    let stem = a
        .file
        .file_stem()
        .map_or("scenario".into(), |s| s.to_string_lossy().to_string());
    // The file as it is first: its own errors with their true lines.
    crate::config::parse(&a.file.display().to_string(), &stem, &text).map_err(|e| e.to_string())?;
    // --duration is part of every swept document, so keys checked against the run's
    // length (measure, plot windows) are checked against the length that will run.
    let text = match a.duration {
        Some(d) => {
            let (text, warnings) = crate::config::duration::with_duration(&text, d)?;
            for w in warnings {
                eprintln!("warning: {}: {w}", a.file.display());
            }
            text
        }
        None => text,
    };
    let metrics: Vec<String> = if a.metric.is_empty() {
        crate::sweep::DEFAULT_METRICS
            .iter()
            .map(|m| m.to_string())
            .collect()
    } else {
        a.metric.clone()
    };
    let mut rows: Vec<(String, Cells)> = Vec::new();
    for value in &sweep.values {
        let cells = run_one(a, sweep, &text, &stem, value, &metrics)?;
        if !a.quiet {
            eprintln!("ran {}={value}", sweep.key);
        }
        rows.push((value.clone(), cells));
    }
    if let Some(file) = json {
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
        write_json(file, &out).map_err(|e| e.to_string())?;
    }
    let t = table(&sweep.key, &rows);
    if let Some(dir) = &a.plot {
        use crate::report::sweep_plot;
        let cells: Vec<_> = rows.iter().map(|(_, c)| c.clone()).collect();
        let panels = sweep_plot::panels(&metrics, &cells);
        let title = format!("{} — sweep of {}", a.file.display(), sweep.key);
        let files = sweep_plot::write(dir, &title, &sweep.key, &sweep.values, &panels, &t)?;
        if !a.quiet {
            eprintln!("plots: {}", super::args::path_list(&files));
        }
    }
    if !a.quiet {
        print_out(&t);
    }
    Ok(())
}

/// The run with `key = value` applied to `text`, and its cells of `metrics`.
fn run_one(
    a: &RunArgs,
    sweep: &crate::sweep::Sweep,
    text: &str,
    stem: &str,
    value: &str,
    metrics: &[String],
) -> Result<Cells, String> {
    use crate::sweep::{apply, metric, DEFAULT_METRICS};
    let json = apply(text, &sweep.key, value)?;
    let name = format!("{} ({}={value})", a.file.display(), sweep.key);
    let loaded = crate::sweep::parse_applied(&name, stem, &json)?;
    let mut scenario = loaded.scenario;
    scenario.run.outputs.pcap = None;
    scenario.run.outputs.timeseries = None;
    let opts = RunOptions {
        seed: a.seed,
        duration: a.duration,
        ..RunOptions::default()
    };
    let mut sim = Sim::new(scenario, &opts).map_err(|e| format!("{name}: {e}"))?;
    sim.run(|_| crate::sim::Go::On)
        .map_err(|e| format!("{name}: {e}"))?;
    let report = crate::report::json::report(&sim.outcome()).to_value();
    // A path that names nothing is a mistake, not an empty column.
    if let Some(m) = metrics.iter().find(|m| metric(&report, m).is_empty()) {
        if !DEFAULT_METRICS.contains(&m.as_str()) {
            return Err(crate::sweep::unknown_metric(&report, m));
        }
    }
    Ok(metrics
        .iter()
        .enumerate()
        .flat_map(|(i, m)| metric(&report, m).into_iter().map(move |(c, v)| (i, c, v)))
        .collect())
}

/// The text table: a row per value, a column per metric cell any row has.
fn table(key: &str, rows: &[(String, Cells)]) -> String {
    let mut columns: Vec<&String> = Vec::new();
    for (_, cells) in rows {
        for (_, c, _) in cells {
            if !columns.contains(&c) {
                columns.push(c);
            }
        }
    }
    let mut t = format!("{key:<16}");
    for c in &columns {
        t += &format!(" {:>24}", c);
    }
    t.push('\n');
    for (v, cells) in rows {
        t += &format!("{v:<16}");
        for c in &columns {
            let cell = cells.iter().find(|(_, k, _)| k == *c).map(|(.., x)| x);
            t += &format!(" {:>24}", show(cell));
        }
        t.push('\n');
    }
    t
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
