//! `lossless run FILE --sweep KEY=V1,V2,…`: the scenario once per value of one key, a row
//! of chosen report metrics per run, as a table, JSON rows and a figure.

use super::args::{open_json, print_out, write_json};
use super::run::RunArgs;
use crate::outdir::{Created, Origin};
use crate::sim::{RunOptions, Sim};
use crate::sweep::{SweepColumn, SweepReport, SweepRow};

/// One row's cells: (index of the metric path, column, value).
type Cells = Vec<crate::report::sweep_plot::Cell>;

/// `--sweep`: the scenario once per value, a row of metrics each. Ok(Some(status)) when a
/// signal stopped it before its end: the points that finished are written, marked
/// interrupted, and the status is the shell's for the signal (130 for Ctrl-C).
pub(super) fn run(a: &RunArgs, sweep: &crate::sweep::Sweep) -> Result<Option<u8>, String> {
    // Ctrl-C stops the point under way; the finished ones are kept.
    let signals =
        super::signals::Signals::catch().map_err(|e| format!("cannot handle signals: {e}"))?;
    let text = crate::config::input::read_text(&a.file)
        .map_err(|e| format!("{}: {e}", a.file.display()))?;
    // Where the results go must exist, and the JSON be open, before the first run.
    let json = outputs(a.json.as_deref(), a.plot.as_deref())?;
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
    let shard = a.shard;
    let taken: Vec<(usize, &String)> = sweep
        .values
        .iter()
        .enumerate()
        .filter(|(index, _)| shard.is_none_or(|s| s.takes(*index)))
        .collect();
    // Every value is checked before the first run: a bad one found after hours of runs
    // would cost them.
    for (_, value) in &taken {
        applied(a, sweep, &text, &stem, value)?;
    }
    let mut rows = Vec::new();
    let mut interrupted = None;
    for (n, &(index, value)) in taken.iter().enumerate() {
        let Some(cells) = run_one(a, sweep, &text, &stem, value, &metrics, &signals)? else {
            let sig = super::signals::name(signals.received().unwrap_or(2));
            eprintln!(
                "lossless run: stopped by {sig} during {}={value}; writing the {n} of {} points that finished",
                sweep.key,
                taken.len()
            );
            interrupted = Some(sig.to_string());
            break;
        };
        if !a.quiet {
            eprintln!("ran {}={value}", sweep.key);
        }
        rows.push(row(index, value, cells));
    }
    let report = SweepReport {
        file: a.file.display().to_string(),
        key: sweep.key.clone(),
        values: sweep.values.clone(),
        metric_paths: metrics,
        shard,
        rows,
        interrupted,
    };
    present(&report, json, a.plot.as_deref(), a.quiet)?;
    Ok(report
        .interrupted
        .map(|_| signals.exit_status().unwrap_or(130)))
}

/// Make sure the directories of `--json` and `--plot` exist (a command-line path must
/// name an existing directory, a plot directory is made in one), and that the JSON file
/// can be made there, so that a path that cannot be written fails before any work. The
/// file is made again when the rows are written: nothing is left beside it meanwhile (a
/// sweep killed at once leaves no empty temporary file).
pub(super) fn outputs(
    json: Option<&std::path::Path>,
    plot: Option<&std::path::Path>,
) -> Result<Option<std::path::PathBuf>, String> {
    let mut created = Created::default();
    if let Some(p) = json {
        created
            .file(p, Origin::CommandLine)
            .map_err(|e| format!("{}: {e}", p.display()))?;
    }
    if let Some(d) = plot {
        created
            .dir(d, Origin::CommandLine)
            .map_err(|e| format!("{}: {e}", d.display()))?;
    }
    // Opened and dropped unwritten: the temporary file goes, the path is known good.
    json.map(open_json).transpose().map_err(|e| e.to_string())?;
    Ok(json.map(std::path::Path::to_path_buf))
}

/// A sweep's results, from one process or merged: `--json` rows, the table on stdout
/// (unless quiet), and with a plot directory the figure of every metric.
pub(super) fn present(
    report: &SweepReport,
    json: Option<std::path::PathBuf>,
    plot: Option<&std::path::Path>,
    quiet: bool,
) -> Result<(), String> {
    if let Some(path) = json {
        let out = serde_json::to_value(report).expect("a sweep serializes");
        let file = open_json(&path).map_err(|e| e.to_string())?;
        write_json(file, &out).map_err(|e| e.to_string())?;
    }
    let rows: Vec<(String, Cells)> = report
        .rows
        .iter()
        .map(|r| (r.value.clone(), cells_of(r)))
        .collect();
    let t = table(&report.key, &rows);
    if let Some(dir) = plot {
        use crate::report::sweep_plot;
        let cells: Vec<_> = rows.iter().map(|(_, c)| c.clone()).collect();
        let panels = sweep_plot::panels(&report.metric_paths, &cells);
        let title = format!("{} — sweep of {}", report.file, report.key);
        let values: Vec<String> = rows.iter().map(|(v, _)| v.clone()).collect();
        let files = sweep_plot::write(dir, &title, &report.key, &values, &panels, &t)?;
        if !quiet {
            eprintln!("plots: {}", super::args::path_list(&files));
        }
    }
    if !quiet {
        print_out(&t);
        if let Some(sig) = &report.interrupted {
            print_out(&format!(
                "(stopped by {sig}: {} of {} points ran)\n",
                report.rows.len(),
                report.values.len()
            ));
        }
    }
    Ok(())
}

/// The row of the value at `index`, from its cells.
fn row(index: usize, value: &str, cells: Cells) -> SweepRow {
    SweepRow {
        index,
        value: value.to_string(),
        metrics: cells
            .iter()
            .map(|(_, c, v)| (c.clone(), v.clone()))
            .collect(),
        columns: cells
            .into_iter()
            .map(|(metric, name, _)| SweepColumn { metric, name })
            .collect(),
    }
}

/// A row's cells, in its columns' order.
fn cells_of(r: &SweepRow) -> Cells {
    r.columns
        .iter()
        .map(|c| {
            let v = r.metrics.get(&c.name).cloned().unwrap_or_default();
            (c.metric, c.name.clone(), v)
        })
        .collect()
}

/// The scenario with `key = value` applied to `text`, and its name in messages; Err
/// saying what is wrong with the value.
fn applied(
    a: &RunArgs,
    sweep: &crate::sweep::Sweep,
    text: &str,
    stem: &str,
    value: &str,
) -> Result<(crate::config::scenario::Scenario, String), String> {
    let json = crate::sweep::apply(text, &sweep.key, value)?;
    let name = format!("{} ({}={value})", a.file.display(), sweep.key);
    let loaded = crate::sweep::parse_applied(&name, stem, &json)?;
    Ok((loaded.scenario, name))
}

/// The run with `key = value` applied to `text`, and its cells of `metrics`; None when a
/// signal stopped it before its end.
fn run_one(
    a: &RunArgs,
    sweep: &crate::sweep::Sweep,
    text: &str,
    stem: &str,
    value: &str,
    metrics: &[String],
    signals: &super::signals::Signals,
) -> Result<Option<Cells>, String> {
    use crate::sweep::{metric, DEFAULT_METRICS};
    let (mut scenario, name) = applied(a, sweep, text, stem, value)?;
    scenario.run.outputs.pcap = None;
    scenario.run.outputs.timeseries = None;
    let opts = RunOptions {
        seed: a.seed,
        duration: a.duration,
        threads: a.threads(),
        ..RunOptions::default()
    };
    let mut sim = Sim::new(scenario, &opts).map_err(|e| format!("{name}: {e}"))?;
    sim.run(|_| {
        if signals.stopping() {
            crate::sim::Go::Stop
        } else {
            crate::sim::Go::On
        }
    })
    .map_err(|e| format!("{name}: {e}"))?;
    if signals.stopping() {
        return Ok(None);
    }
    let report = crate::report::json::report(&sim.outcome()).to_value();
    // A path that names nothing is a mistake, not an empty column.
    if let Some(m) = metrics.iter().find(|m| metric(&report, m).is_empty()) {
        if !DEFAULT_METRICS.contains(&m.as_str()) {
            return Err(crate::sweep::unknown_metric(&report, m));
        }
    }
    Ok(Some(
        metrics
            .iter()
            .enumerate()
            .flat_map(|(i, m)| metric(&report, m).into_iter().map(move |(c, v)| (i, c, v)))
            .collect(),
    ))
}

/// The text table: a row per value, a column per metric cell any row has, each column as
/// wide as its widest cell; times, rates and sizes in human units (the JSON has the raw
/// values).
fn table(key: &str, rows: &[(String, Cells)]) -> String {
    let mut columns: Vec<&String> = Vec::new();
    for (_, cells) in rows {
        for (_, c, _) in cells {
            if !columns.contains(&c) {
                columns.push(c);
            }
        }
    }
    let mut grid: Vec<Vec<String>> = vec![std::iter::once(key.to_string())
        .chain(columns.iter().map(|c| label(c)))
        .collect()];
    for (v, cells) in rows {
        let mut line = vec![v.clone()];
        for c in &columns {
            let cell = cells.iter().find(|(_, k, _)| k == *c).map(|(.., x)| x);
            line.push(show(c, cell));
        }
        grid.push(line);
    }
    let widths: Vec<usize> = (0..=columns.len())
        .map(|i| grid.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut t = String::new();
    for r in &grid {
        let mut line = format!("{:<w$}", r[0], w = widths[0]);
        for (cell, w) in r.iter().zip(&widths).skip(1) {
            line += &format!("  {cell:>w$}");
        }
        t += line.trim_end();
        t.push('\n');
    }
    t
}

/// A column's heading: the metric path without `totals.` or `flows.` and without its unit
/// suffix (the cells carry their units).
fn label(path: &str) -> String {
    if let (Some(_), inner) = crate::sweep::fold_of(path) {
        let name = &path[..path.len() - inner.len() - 2];
        return format!("{name}({})", label(inner));
    }
    let p = path
        .strip_prefix("totals.")
        .or_else(|| path.strip_prefix("flows."))
        .unwrap_or(path);
    let p = ["_bps", "_ps", "_bytes"]
        .iter()
        .find_map(|u| p.strip_suffix(u))
        .unwrap_or(p);
    p.replace("_ps.", ".").replace("_bps.", ".")
}

/// A metric cell in human units by its path's suffix: `_ps` a time, `_bps` a rate, `_bytes`
/// a size; other numbers as they are, with at most 4 significant decimals.
fn show(path: &str, v: Option<&serde_json::Value>) -> String {
    use serde_json::Value;
    let n = match v {
        None | Some(Value::Null) => return "-".into(),
        Some(Value::Number(n)) => n,
        Some(Value::String(s)) => return s.clone(),
        Some(x) => return x.to_string(),
    };
    let x = n.as_f64().unwrap_or(0.0);
    let path = crate::sweep::fold_of(path).1;
    let is = |u: &str| path.ends_with(u) || path.contains(&format!("{u}."));
    if is("_ps") {
        human_time(x)
    } else if is("_bps") {
        format!("{} Gb/s", significant(x / 1e9))
    } else if is("_bytes") {
        human_size(x)
    } else if n.is_u64() || n.is_i64() {
        n.to_string()
    } else {
        significant(x)
    }
}

/// Picoseconds in the unit that suits them, 4 significant digits: "4.296 s", "1.165 ms".
fn human_time(ps: f64) -> String {
    let (div, unit) = match ps.abs() {
        x if x >= 1e12 => (1e12, "s"),
        x if x >= 1e9 => (1e9, "ms"),
        x if x >= 1e6 => (1e6, "µs"),
        x if x >= 1e3 => (1e3, "ns"),
        _ => (1.0, "ps"),
    };
    format!("{} {unit}", significant(ps / div))
}

/// Bytes in the decimal unit that suits them, 4 significant digits: "8.583 MB".
fn human_size(b: f64) -> String {
    let (div, unit) = match b.abs() {
        x if x >= 1e9 => (1e9, "GB"),
        x if x >= 1e6 => (1e6, "MB"),
        x if x >= 1e3 => (1e3, "KB"),
        _ => (1.0, "B"),
    };
    format!("{} {unit}", significant(b / div))
}

/// `x` with 4 significant digits, no trailing zeros.
fn significant(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let digits = (3 - x.abs().log10().floor() as i32).clamp(0, 9) as usize;
    let s = format!("{x:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cells_are_in_human_units_and_columns_line_up() {
        assert_eq!(
            show("flows.f4.fct_ps", Some(&json!(4_295_632_544_920u64))),
            "4.296 s"
        );
        assert_eq!(
            show("flows.a.throughput_bps", Some(&json!(98_700_000_000.0))),
            "98.7 Gb/s"
        );
        assert_eq!(show("totals.lossless_drops", Some(&json!(0))), "0");
        assert_eq!(
            show("x.watermark_bytes", Some(&json!(750_125_952))),
            "750.1 MB"
        );
        assert_eq!(label("flows.victim.throughput_bps"), "victim.throughput");
        assert_eq!(label("totals.pfc_tx_frames"), "pfc_tx_frames");
        assert_eq!(label("max(flows.*.fct_ps)"), "max(*.fct)");
        assert_eq!(
            show("max(flows.*.fct_ps)", Some(&json!(1_383_600_000u64))),
            "1.384 ms"
        );
        let rows = vec![
            (
                "2m".to_string(),
                vec![(0, "totals.drops".to_string(), json!(0))],
            ),
            (
                "300m".to_string(),
                vec![(0, "totals.drops".to_string(), json!(123456))],
            ),
        ];
        let t = table("switches.tor.ports.cable", &rows);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "switches.tor.ports.cable   drops");
        assert_eq!(lines[1], "2m                             0");
        assert_eq!(lines[2], "300m                      123456");
    }
}
