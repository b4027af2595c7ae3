//! `lossless`: an emulator of a lossless Ethernet switch ASIC (shared buffer, PFC, ECN).

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "lossless",
    version,
    about = "Emulate a lossless Ethernet switch: shared buffer, headroom, PFC, WRED/ECN, DWRR",
    long_about = "Emulate a lossless Ethernet switch ASIC: ingress parsing, a shared-buffer MMU with \
                  headroom, 802.1Qbb PFC, WRED/ECN marking and strict/DWRR scheduling.\n\n\
                  Start with `lossless check configs/switch-4port.yaml` to see how a buffer plan \
                  resolves: where each lossless PG sends XOFF and XON, and whether its headroom \
                  covers what physics says can still arrive after a pause."
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check { file, quiet } => check(&file, quiet),
    }
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
