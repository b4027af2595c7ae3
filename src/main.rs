//! `lossless`: an emulator of a lossless Ethernet switch ASIC (shared buffer, PFC, ECN).

use clap::{Args, Parser, Subcommand};
use lossless::sim::{RunOptions, Sim};
use lossless_buffer_model::Time;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "lossless",
    version,
    about = "Emulate a lossless Ethernet switch: shared buffer, headroom, PFC, WRED/ECN, DWRR",
    long_about = "Emulate a lossless Ethernet switch ASIC: ingress parsing, a shared-buffer MMU with \
                  headroom, 802.1Qbb PFC, WRED/ECN marking and strict/DWRR scheduling.\n\n\
                  Start with `lossless run configs/labs/incast-pfc.yaml` to watch PFC keep a 3-to-1 \
                  incast lossless, and `lossless check FILE` to see how a buffer plan resolves: \
                  where each lossless PG sends XOFF and XON, and whether its headroom covers what \
                  physics says can still arrive after a pause."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validate a scenario or switch file and print the resolved buffer plan per port.
    ///
    /// Every default is filled in and printed: pools, the profile of each PG and queue,
    /// the shared limit at an empty pool, the XOFF and XON points of each lossless PG, its
    /// headroom, and the minimum headroom computed from speed, cable, MTU and the IEEE
    /// peer-response bound. Errors name the file, line and key; exit status 1 on error.
    Check {
        /// Scenario or switch YAML file.
        file: PathBuf,
        /// Print only errors and warnings, not the plan.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Run a scenario in deterministic virtual time and report what happened.
    ///
    /// Hosts, flows and events come from the file (design §6). The same file and seed give
    /// byte-identical JSON (except wall_time_s) and pcap. The text report shows PFC
    /// counters, queue counters, watermarks and per-flow throughput, FCT and latency;
    /// lossless_drops is always printed because it must be 0.
    Run(RunArgs),
}

#[derive(Args)]
struct RunArgs {
    /// Scenario YAML file, e.g. configs/labs/incast-pfc.yaml.
    file: PathBuf,
    /// Write the JSON report here (overrides outputs.json).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write pcap files of outputs.pcap.ports into this directory.
    #[arg(long)]
    pcap_dir: Option<PathBuf>,
    /// Override the scenario's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Override the scenario's duration (e.g. 2ms).
    #[arg(long, value_parser = parse_time)]
    duration: Option<Time>,
    /// No text report and no progress bar.
    #[arg(long, short)]
    quiet: bool,
}

fn parse_time(s: &str) -> Result<Time, String> {
    s.parse::<Time>().map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check { file, quiet } => check(&file, quiet),
        Command::Run(args) => run(args),
    }
}

fn run(a: RunArgs) -> ExitCode {
    let loaded = match lossless::config::load(&a.file) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    for w in &loaded.warnings {
        eprintln!("warning: {w}");
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
        .or_else(|| loaded.scenario.sim.outputs.json.clone());
    let mut sim = match Sim::new(loaded.scenario, &opts) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {}: {e}", a.file.display());
            return ExitCode::FAILURE;
        }
    };
    let mut bar = lossless::report::progress::Progress::new(opts.progress);
    if let Err(e) = sim.run(|f| bar.update(f)) {
        bar.finish();
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    bar.finish();
    let report = lossless::report::json::report(&sim);
    if let Some(path) = &json_path {
        let write = || -> std::io::Result<()> {
            if let Some(d) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(d)?;
            }
            std::fs::write(
                path,
                serde_json::to_string_pretty(&report).expect("a JSON value serializes") + "\n",
            )
        };
        if let Err(e) = write() {
            eprintln!("error: {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    if !a.quiet {
        print!("{}", lossless::report::text::render(&report));
        if let Some(p) = &json_path {
            println!("JSON report: {}", p.display());
        }
    }
    ExitCode::SUCCESS
}

fn check(file: &std::path::Path, quiet: bool) -> ExitCode {
    match lossless::config::load(file) {
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
        Ok(loaded) => {
            for w in &loaded.warnings {
                eprintln!("warning: {w}");
            }
            if !quiet {
                let s = &loaded.scenario;
                println!(
                    "{}: scenario `{}`, seed {}{}",
                    file.display(),
                    s.name,
                    s.seed,
                    s.duration
                        .map_or(String::new(), |d| format!(", duration {d}"))
                );
                for sw in &s.switches {
                    print!("{}", lossless::report::plan::render(sw));
                }
            }
            println!(
                "{}: OK ({} warning{})",
                file.display(),
                loaded.warnings.len(),
                if loaded.warnings.len() == 1 { "" } else { "s" }
            );
            ExitCode::SUCCESS
        }
    }
}
