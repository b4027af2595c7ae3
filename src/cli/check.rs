//! `lossless check`: validate a file and print its resolved buffer plan, or the defaults.

use super::args::{load, print_out};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct CheckArgs {
    /// Scenario or switch YAML files (each checked; exit status 1 when any fails).
    #[arg(required_unless_present = "defaults")]
    files: Vec<PathBuf>,
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
    let mut ok = true;
    for file in &a.files {
        ok &= check(file, a.quiet);
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Check one file, print its plan (unless `quiet`); false when it is refused.
fn check(file: &Path, quiet: bool) -> bool {
    let Some(loaded) = load(file) else {
        return false;
    };
    let s = &loaded.scenario;
    // A scenario (hosts, flows or links: something only `lossless run` uses) is refused here
    // for what `run` would refuse it for.
    if !s.run.hosts.is_empty() || !s.run.flows.is_empty() || !s.run.links.is_empty() {
        if let Err(e) = crate::sim::bound::bound(s, s.duration) {
            eprintln!("error: {}: {e}", file.display());
            return false;
        }
        if let Some(e) = crate::config::topology::neighbors::first_pending(&s.switches) {
            eprintln!("error: {e}");
            return false;
        }
    }
    let mut out = String::new();
    if !quiet {
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
        out += &crate::report::plan_transports::render(s);
    }
    let n = loaded.warnings.len();
    out += &format!(
        "{}: OK ({n} warning{})\n",
        file.display(),
        if n == 1 { "" } else { "s" }
    );
    print_out(&out);
    true
}
