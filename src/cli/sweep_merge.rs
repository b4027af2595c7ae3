//! `lossless sweep merge PART.json…`: the row files of a sweep's shares joined into the
//! rows, table and figure one process would have made.

use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct SweepArgs {
    #[command(subcommand)]
    command: SweepCommand,
}

#[derive(Subcommand)]
enum SweepCommand {
    /// Join the `--json` row files of a sweep's shares (`lossless run FILE --sweep …
    /// --shard I/N --json PART`) into the rows one process writes, print the table, and
    /// with --plot draw the figure.
    ///
    /// Files of another sweep (file, key, values or metrics differ), a value run by two
    /// files, and a value no file holds are errors that name the files and the values.
    /// The merged JSON is byte for byte what `lossless run FILE --sweep … --json` writes.
    Merge(MergeArgs),
}

#[derive(Args)]
struct MergeArgs {
    /// Row files, one per share, in any order.
    #[arg(required = true, value_name = "PART.json")]
    parts: Vec<PathBuf>,
    /// Write the merged rows here.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Draw each metric against the swept value: DIR/sweep.svg and DIR/index.html.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// No table on stdout.
    #[arg(long, short)]
    quiet: bool,
}

pub fn exec(a: SweepArgs) -> ExitCode {
    let SweepCommand::Merge(m) = a.command;
    match merge(&m) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn merge(m: &MergeArgs) -> Result<(), String> {
    let mut parts = Vec::new();
    for p in &m.parts {
        let name = p.display().to_string();
        let text = crate::config::input::read_text(p).map_err(|e| format!("{name}: {e}"))?;
        let report: crate::sweep::SweepReport = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{name}: not the --json rows of a sweep (lossless run FILE --sweep … --json): {e}"
            )
        })?;
        parts.push((name, report));
    }
    let merged = crate::sweep::merge(parts)?;
    let json = super::sweep::outputs(m.json.as_deref(), m.plot.as_deref())?;
    super::sweep::present(&merged, json, m.plot.as_deref(), m.quiet)
}
