//! What the subcommands share: value parsers, loading a scenario, writing output that may
//! meet a closed pipe, and stopping on signals.

use lossless_buffer_model::{Rate, Time};
use lossless_sys::output::OutputFile;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// A wall-clock duration such as `5s` or `100us`.
pub fn duration(s: &str) -> Result<Duration, String> {
    let t = s.parse::<Time>().map_err(|e| e.to_string())?;
    Ok(t.to_duration())
}

/// A period above 0.
pub fn period(s: &str) -> Result<Duration, String> {
    match duration(s)? {
        d if d.is_zero() => Err("a period needs to be above 0, such as 1s".into()),
        d => Ok(d),
    }
}

/// A virtual-time run length above 0.
pub fn run_length(s: &str) -> Result<Time, String> {
    match s.parse::<Time>().map_err(|e| e.to_string())? {
        Time::ZERO => Err("a run needs a length above 0, such as 2ms".into()),
        t => Ok(t),
    }
}

/// A rate in bits per second.
pub fn rate(s: &str) -> Result<Rate, String> {
    s.parse()
        .map_err(|e: lossless_buffer_model::units::UnitError| e.to_string())
}

/// Load a scenario, printing its warnings; None (after printing the error) when it is bad.
pub fn load(file: &Path) -> Option<crate::config::Loaded> {
    match crate::config::load(file) {
        Ok(l) => {
            for w in &l.warnings {
                eprintln!("warning: {w}");
            }
            Some(l)
        }
        Err(e) => {
            eprintln!("error: {e}");
            None
        }
    }
}

/// Print `text` on stdout; a closed stdout (`| head`) is not an error worth a panic.
pub fn print_out(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
}

/// Open `path` for a JSON report (its directory must exist: see [`crate::outdir`]): before
/// a long run, so that a path that cannot be written fails at once.
pub fn open_json(path: &Path) -> std::io::Result<OutputFile> {
    OutputFile::create(path)
}

/// Write `report` as pretty JSON to `path` at once (through a temporary file).
pub fn save_json(path: &Path, report: &serde_json::Value) -> std::io::Result<()> {
    write_json(open_json(path)?, report)
}

/// Write `report` as pretty JSON into `out`, which then takes its name.
pub fn write_json(mut out: OutputFile, report: &serde_json::Value) -> std::io::Result<()> {
    // Streamed: a large fabric's report would otherwise be held twice, as a value and as
    // its text.
    serde_json::to_writer_pretty(&mut out, report)?;
    out.write_all(b"\n")?;
    out.commit()
}

/// Paths written, for a `plots: …` line.
pub fn path_list(files: &[std::path::PathBuf]) -> String {
    files
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
