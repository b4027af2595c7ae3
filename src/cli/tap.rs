//! `lossless tap`: the switch between real hosts, one TAP per port, until stopped.

use super::args::{duration, load, open_json, period, print_out, write_json};
use super::signals::Signals;
use clap::Args;
use lossless_sys::sched::Realtime;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct TapArgs {
    /// Switch YAML file (its one switch is served). Without it, the YAML is read from the
    /// environment variable LOSSLESS_CONFIG (a container started with no files bound in),
    /// else from the file LOSSLESS_CONFIG_FILE names (the container image sets
    /// /etc/lossless/switch.yaml).
    file: Option<PathBuf>,
    /// Print a counters line this often (e.g. 1s; above 0): frames, drops, kernel ring
    /// drops, PFC frames, and the stall detector's longest gap between the pipeline
    /// thread's turns (above 50 ms: the machine did not run the switch). A closed stdout
    /// (`| head`) only ends the lines.
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
    /// Serve live counters on this address (e.g. 127.0.0.1:9464): /metrics for
    /// Prometheus, /json for the report so far, /show/TABLE (pfc, queue, watermark, cbfc,
    /// llr, trim, ledger, p4) for `lossless show`.
    #[arg(long, value_name = "ADDR")]
    metrics: Option<std::net::SocketAddr>,
    /// Append the report so far to this file as one JSON line per --stats interval
    /// (every second without --stats).
    #[arg(long, value_name = "PATH")]
    stats_json: Option<PathBuf>,
    /// Wait this long for the ports' interfaces to appear before serving (a container
    /// whose links are plugged in after it starts, as containerlab does). Default: they
    /// must exist at start.
    #[arg(long, value_parser = duration, value_name = "DURATION")]
    wait_for_interfaces: Option<Duration>,
}

/// The configuration's YAML when no file is named.
const CONFIG_ENV: &str = "LOSSLESS_CONFIG";
/// The configuration's file when no file is named and [`CONFIG_ENV`] is not set.
const CONFIG_FILE_ENV: &str = "LOSSLESS_CONFIG_FILE";

/// The scenario from the file, or from [`CONFIG_ENV`], or from the file
/// [`CONFIG_FILE_ENV`] names; with the name errors and warnings use.
fn load_config(file: &Option<PathBuf>) -> Option<(crate::config::Loaded, String)> {
    let from_env = std::env::var_os(CONFIG_FILE_ENV).map(PathBuf::from);
    match file {
        Some(f) => load(f).map(|l| (l, f.display().to_string())),
        None if std::env::var_os(CONFIG_ENV).is_none() && from_env.is_some() => {
            let f = from_env.expect("checked");
            load(&f).map(|l| (l, f.display().to_string()))
        }
        None => {
            let Ok(text) = std::env::var(CONFIG_ENV) else {
                eprintln!("error: give a switch file, or its YAML in the environment variable {CONFIG_ENV} (or its path in {CONFIG_FILE_ENV})");
                return None;
            };
            match crate::config::parse(CONFIG_ENV, "switch", &text) {
                Ok(l) => {
                    for w in &l.warnings {
                        eprintln!("warning: {w}");
                    }
                    Some((l, CONFIG_ENV.to_string()))
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    None
                }
            }
        }
    }
}

/// Wait (up to `limit`) until every interface port's interface exists; Err names those
/// still missing.
fn wait_for_interfaces(spec: &crate::config::SwitchSpec, limit: Duration) -> Result<(), String> {
    let names: Vec<&str> = spec
        .attach
        .iter()
        .flatten()
        .filter_map(|a| match a {
            crate::config::Attach::Iface(n) | crate::config::Attach::Link(n) => Some(n.as_str()),
            crate::config::Attach::Tap(_) => None,
        })
        .collect();
    // containerlab tells a node how many data interfaces it will plug in.
    if let Some(n) = std::env::var("CLAB_INTFS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        if n != names.len() {
            eprintln!(
                "warning: containerlab gives this node {n} interfaces (CLAB_INTFS); the switch serves {}: {}",
                names.len(),
                names.join(", ")
            );
        }
    }
    let deadline = std::time::Instant::now() + limit;
    let mut told = false;
    loop {
        let missing: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| lossless_sys::netdev::if_index(n).is_err())
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        if std::time::Instant::now() >= deadline {
            return Err(format!(
                "interfaces {} did not appear within {limit:?}",
                missing.join(", ")
            ));
        }
        if !told {
            eprintln!("lossless tap: waiting for {}", missing.join(", "));
            told = true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub fn exec(a: TapArgs) -> ExitCode {
    let Some((loaded, source)) = load_config(&a.file) else {
        return ExitCode::FAILURE;
    };
    let sc = &loaded.scenario;
    let ignored = ignored_by_tap(sc);
    if !ignored.is_empty() {
        eprintln!(
            "warning: {}: `lossless tap` serves the switch between real hosts; it ignores {} \
             (they are for `lossless run`)",
            source,
            ignored.join(", ")
        );
    }
    if sc.switches.len() != 1 {
        eprintln!(
            "error: {}: `lossless tap` serves one switch; the file has {}",
            source,
            sc.switches.len()
        );
        return ExitCode::FAILURE;
    }
    if let Some(e) = crate::config::topology::neighbors::first_pending(&sc.switches) {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    let stop = match Signals::catch() {
        Ok(s) => s.stop,
        Err(e) => {
            eprintln!("error: cannot handle signals: {e}");
            return ExitCode::FAILURE;
        }
    };
    let spec = &sc.switches[0];
    // The metrics address first: one in use fails before any device is touched.
    let listener = match a.metrics.map(crate::tap::metrics::bind).transpose() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The report's file is opened now: a path that cannot be written fails before the
    // switch serves, not when it stops.
    let json = match a.json.as_deref().map(open_json).transpose() {
        Ok(j) => j,
        Err(e) => {
            eprintln!("error: --json {e}");
            return ExitCode::FAILURE;
        }
    };
    // --stats-json appends: the file is made (or must be writable) before serving.
    if let Some(p) = &a.stats_json {
        let opened = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p);
        if let Err(e) = opened {
            eprintln!("error: --stats-json {}", lossless_sys::output::named(p, e));
            return ExitCode::FAILURE;
        }
    }
    if let Some(limit) = a.wait_for_interfaces {
        if let Err(e) = wait_for_interfaces(spec, limit) {
            eprintln!("error: {source}: {e}");
            return ExitCode::FAILURE;
        }
    }
    let mut sw = match crate::tap::TapSwitch::open(spec, a.realtime) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {}: {e}", source);
            return ExitCode::FAILURE;
        }
    };
    let taps: Vec<_> = spec
        .attach
        .iter()
        .flatten()
        .map(|a| format!("{} {}", a.kind(), a.name()))
        .collect();
    print_out(&format!(
        "lossless tap: switch `{}` serving {} (stop with Ctrl-C)\n",
        spec.config.name,
        taps.join(", ")
    ));
    let mut live = None;
    if let Some(l) = listener {
        let addr = l
            .local_addr()
            .map_or_else(|_| "?".into(), |a| a.to_string());
        let shared = std::sync::Arc::new(crate::tap::live::Live::default());
        if let Err(e) = crate::tap::metrics::serve(l, std::sync::Arc::clone(&shared)) {
            eprintln!("error: --metrics: {e}");
            return ExitCode::FAILURE;
        }
        print_out(&format!(
            "lossless tap: live counters on http://{addr}/metrics\n"
        ));
        live = Some(shared);
    }
    let opts = crate::tap::TapOptions {
        stats: a.stats,
        duration: a.duration,
        realtime: a.realtime,
        live: live.clone(),
        stats_json: a.stats_json.clone(),
    };
    if let Err(e) = sw.serve(&stop, &opts) {
        sw.shutdown();
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    let report = sw.report();
    if let Some(live) = &live {
        live.finish(report.clone());
    }
    // The text report first: it is printed even when the JSON cannot be written.
    if !a.quiet {
        print_out(&crate::report::text::render(&report));
    }
    if let Some(file) = json {
        if let Err(e) = write_json(file, &report.to_value()) {
            eprintln!("error: --json {e}");
            return ExitCode::FAILURE;
        }
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
