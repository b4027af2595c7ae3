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
    #[arg(long)]
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
}

pub fn exec(a: RunArgs) -> ExitCode {
    let Some(loaded) = load(&a.file) else {
        return ExitCode::FAILURE;
    };
    if let Some(e) = crate::config::topology::neighbors::first_pending(&loaded.scenario.switches) {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    let opts = RunOptions {
        seed: a.seed,
        duration: a.duration,
        pcap_dir: a.pcap_dir.clone(),
        progress: !a.quiet,
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
    let report = crate::report::json::report(&sim.outcome()).to_value();
    if let Some(path) = &json_path {
        if let Err(e) = write_json(path, &report) {
            eprintln!("error: {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    if !a.quiet {
        let mut text = crate::report::text::render(&report);
        if let Some(p) = &json_path {
            text += &format!("JSON report: {}\n", p.display());
        }
        print_out(&text);
    }
    ExitCode::SUCCESS
}
