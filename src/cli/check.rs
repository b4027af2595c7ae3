//! `lossless check`: validate a file and print its resolved buffer plan, or the defaults.

use super::args::{load, print_out};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct CheckArgs {
    /// Scenario or switch YAML file.
    #[arg(required_unless_present = "defaults")]
    file: Option<PathBuf>,
    /// Print only errors and warnings, not the plan.
    #[arg(long, short)]
    quiet: bool,
    /// Print every default a file may leave out, and exit.
    #[arg(long)]
    defaults: bool,
}

pub fn exec(a: CheckArgs) -> ExitCode {
    if a.defaults {
        let rows = crate::config::defaults::table();
        let w = rows
            .iter()
            .map(|(k, _, _)| k.chars().count())
            .max()
            .unwrap_or(0);
        let mut out =
            String::from("Defaults of scenario and switch files (every key: docs/scenario.md):\n");
        for (key, value, meaning) in rows {
            out += &format!("  {key:<w$}  {value}\n  {:<w$}    ({meaning})\n", "");
        }
        print_out(&out);
        return ExitCode::SUCCESS;
    }
    let file = a.file.expect("clap requires a file without --defaults");
    let Some(loaded) = load(&file) else {
        return ExitCode::FAILURE;
    };
    let mut out = String::new();
    if !a.quiet {
        let s = &loaded.scenario;
        out += &format!(
            "{}: scenario `{}`, seed {}{}\n",
            file.display(),
            s.name,
            s.seed,
            s.duration
                .map_or(String::new(), |d| format!(", duration {d}"))
        );
        for sw in &s.switches {
            out += &crate::report::plan::render(sw);
        }
    }
    let n = loaded.warnings.len();
    out += &format!(
        "{}: OK ({n} warning{})\n",
        file.display(),
        if n == 1 { "" } else { "s" }
    );
    print_out(&out);
    ExitCode::SUCCESS
}
