//! `lossless tap`: the switch between real hosts, one TAP per port, until stopped.

use super::args::{duration, load, period, print_out, stop_on_signals, write_json};
use clap::Args;
use lossless_sys::sched::Realtime;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct TapArgs {
    /// Switch YAML file (its one switch is served).
    file: PathBuf,
    /// Print a counters line this often (e.g. 1s; above 0). A closed stdout (`| head`) only
    /// ends the lines.
    #[arg(long, value_parser = period)]
    stats: Option<Duration>,
    /// Write the JSON report here when stopping.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Stop by itself after this long (default: until SIGINT, SIGTERM or SIGHUP).
    #[arg(long, value_parser = duration)]
    duration: Option<Duration>,
    /// No report on stdout when stopping.
    #[arg(long, short)]
    quiet: bool,
    /// Real-time priority (SCHED_FIFO) for the engine's threads: auto (when allowed), on
    /// (required) or off. Without it a busy machine delays the threads, and frames wait
    /// longer between the TAPs and the switch.
    #[arg(long, default_value = "auto")]
    realtime: Realtime,
}

pub fn exec(a: TapArgs) -> ExitCode {
    let Some(loaded) = load(&a.file) else {
        return ExitCode::FAILURE;
    };
    let sc = &loaded.scenario;
    let ignored = ignored_by_tap(sc);
    if !ignored.is_empty() {
        eprintln!(
            "warning: {}: `lossless tap` serves the switch between real hosts; it ignores {} \
             (they are for `lossless run`)",
            a.file.display(),
            ignored.join(", ")
        );
    }
    if sc.switches.len() != 1 {
        eprintln!(
            "error: {}: `lossless tap` serves one switch; the file has {}",
            a.file.display(),
            sc.switches.len()
        );
        return ExitCode::FAILURE;
    }
    if let Some(e) = crate::config::topology::neighbors::first_pending(&sc.switches) {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    let stop = match stop_on_signals() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot handle signals: {e}");
            return ExitCode::FAILURE;
        }
    };
    let spec = &sc.switches[0];
    let mut sw = match crate::tap::TapSwitch::open(spec, a.realtime) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {}: {e}", a.file.display());
            return ExitCode::FAILURE;
        }
    };
    let taps: Vec<_> = spec.taps.iter().flatten().cloned().collect();
    print_out(&format!(
        "lossless tap: switch `{}` serving {} (stop with Ctrl-C)\n",
        spec.config.name,
        taps.join(", ")
    ));
    let opts = crate::tap::TapOptions {
        stats: a.stats,
        duration: a.duration,
        realtime: a.realtime,
    };
    if let Err(e) = sw.serve(&stop, &opts) {
        sw.shutdown();
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    let report = sw.report();
    if let Some(path) = &a.json {
        if let Err(e) = write_json(path, &report.to_value()) {
            eprintln!("error: {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    if !a.quiet {
        print_out(&crate::report::text::render(&report));
    }
    ExitCode::SUCCESS
}

/// The keys of a scenario that only `lossless run` uses: simulated hosts and their traffic,
/// scheduled events, the file's run length, measurement window and output files (`tap` has
/// `--duration` and `--json`).
fn ignored_by_tap(sc: &crate::config::Scenario) -> Vec<String> {
    let r = &sc.run;
    let mut out = Vec::new();
    let mut count = |key: &str, n: usize| {
        if n > 0 {
            out.push(format!("{key} ({n})"));
        }
    };
    count("hosts", r.hosts.len());
    count("collectives", r.collectives.len());
    let queue_pairs: usize = r
        .collectives
        .iter()
        .map(|c| c.qps.iter().map(|q| q.0.len()).sum::<usize>())
        .sum();
    count("flows", r.flows.len() - queue_pairs);
    count("events", r.events.len());
    count(
        "links[].frame_error_rate",
        r.links
            .iter()
            .filter(|l| l.frame_error_rate != crate::config::ErrorRate::NONE)
            .count(),
    );
    if sc.duration.is_some() {
        out.push("duration (use --duration)".into());
    }
    if r.measure != crate::config::Measure::default() {
        out.push("measure".into());
    }
    if r.outputs.json.is_some() {
        out.push("outputs.json (use --json)".into());
    }
    if r.outputs.pcap.is_some() {
        out.push("outputs.pcap".into());
    }
    if r.outputs.timeseries.is_some() {
        out.push("outputs.timeseries".into());
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn keys_only_run_uses_are_named() {
        let l = crate::config::parse(
            "f.yaml",
            "f",
            "duration: 1ms\nmeasure: {from: 10us}\nswitches:\n  - name: s\n    ports: {count: 2}\n\
             hosts:\n  - {name: a, attach: s:Ethernet0}\n  - {name: b, attach: s:Ethernet1}\n\
             flows:\n  - {src: a, dst: b}\noutputs: {json: x.json}\n",
        )
        .unwrap();
        assert_eq!(
            super::ignored_by_tap(&l.scenario),
            [
                "hosts (2)",
                "flows (1)",
                "duration (use --duration)",
                "measure",
                "outputs.json (use --json)"
            ]
        );
        let l = crate::config::parse(
            "f.yaml",
            "f",
            "switches:\n  - name: s\n    ports: {count: 2}\n",
        )
        .unwrap();
        assert!(super::ignored_by_tap(&l.scenario).is_empty());
    }
}
