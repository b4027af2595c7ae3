//! `lossless bench sim FILE`: the scenario run N times in this process; packet-hops (frames
//! put on a link) and simulated time per wall second, median and spread; with valgrind,
//! the instructions per packet-hop (two run lengths under cachegrind, so start-up cancels).

use super::{valgrind, Machine, Spread};
use crate::config::Scenario;
use crate::sim::{RunOptions, Sim};
use lossless_buffer_model::Time;
use serde::Serialize;
use std::path::Path;

/// What a benchmark of a scenario measured.
#[derive(Clone, Debug, Serialize)]
pub struct Result {
    /// The machine.
    pub machine: Machine,
    /// The scenario's name.
    pub scenario: String,
    /// Whether its pcap and CSV outputs were written.
    pub outputs: bool,
    /// Runs.
    pub runs: usize,
    /// Threads the fabric ran on.
    pub threads: usize,
    /// Simulated time per run, ps.
    pub sim_time_ps: u64,
    /// Packet-hops per run.
    pub packet_hops: u64,
    /// Engine events per run.
    pub events: u64,
    /// Wall seconds per run.
    pub wall_s: Spread,
    /// Million packet-hops per wall second.
    pub mhops_per_s: Spread,
    /// Simulated time per wall second (a ratio: 0.16 = 160 ms simulated per second).
    pub sim_per_wall: Spread,
    /// Instructions per packet-hop (cachegrind), when measured.
    pub instructions_per_hop: Option<f64>,
}

/// How to run the scenario.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Runs.
    pub runs: usize,
    /// Write the scenario's pcap and CSV outputs (default: leave them out).
    pub outputs: bool,
    /// Override the run length.
    pub duration: Option<Time>,
    /// Threads (None: as `lossless run` chooses).
    pub threads: Option<usize>,
}

/// One run of `scenario`: (sim time, hops, events, wall, threads).
fn once(
    scenario: &Scenario,
    opts: Options,
) -> std::result::Result<(Time, u64, u64, f64, usize), String> {
    let mut sc = scenario.clone();
    if !opts.outputs {
        sc.run.outputs.pcap = None;
        sc.run.outputs.timeseries = None;
    }
    let ro = RunOptions {
        duration: opts.duration,
        threads: opts
            .threads
            .map_or(crate::sim::Threads::Auto, crate::sim::Threads::Exactly),
        ..RunOptions::default()
    };
    let mut sim = Sim::new(sc, &ro).map_err(|e| e.to_string())?;
    sim.run(|_| crate::sim::Go::On).map_err(|e| e.to_string())?;
    let o = sim.outcome();
    Ok((
        o.end,
        o.stats.packet_hops,
        o.stats.events,
        o.stats.wall_time_s,
        o.stats.threads,
    ))
}

/// Run `scenario` `opts.runs` times.
pub fn run(scenario: &Scenario, opts: Options) -> std::result::Result<Result, String> {
    let runs = opts.runs;
    if runs == 0 {
        return Err("--runs 0: at least one run".into());
    }
    let mut walls = Vec::new();
    let mut first = None;
    for _ in 0..runs {
        let (end, hops, events, wall, threads) = once(scenario, opts)?;
        first.get_or_insert((end, hops, events, threads));
        walls.push(wall.max(1e-9));
    }
    let (end, hops, events, threads) = first.expect("at least one run");
    let per = |f: &dyn Fn(f64) -> f64| Spread::of(&walls.iter().map(|w| f(*w)).collect::<Vec<_>>());
    Ok(Result {
        machine: Machine::here(),
        scenario: scenario.name.clone(),
        outputs: opts.outputs,
        runs,
        threads,
        sim_time_ps: end.as_ps(),
        packet_hops: hops,
        events,
        wall_s: per(&|w| w),
        mhops_per_s: per(&|w| hops as f64 / w / 1e6),
        sim_per_wall: per(&|w| end.as_ps() as f64 / 1e12 / w),
        instructions_per_hop: None,
    })
}

/// Instructions per packet-hop of `file`: one `bench sim` run under cachegrind for the
/// whole run length `end` and one for a fifth of it; the difference over the difference in
/// hops.
pub fn instructions_per_hop(
    file: &Path,
    end: Time,
    outputs: bool,
    scratch: &Path,
) -> std::result::Result<f64, String> {
    let measure = |t: Time| -> std::result::Result<(u64, u64), String> {
        let json = scratch.join(format!("bench-sim-{}.json", t.as_ps()));
        let mut args: Vec<String> = vec![
            "bench".into(),
            "sim".into(),
            file.display().to_string(),
            "--runs".into(),
            "1".into(),
            "--duration".into(),
            format!("{}ps", t.as_ps()),
            "--quiet".into(),
            "--threads".into(),
            "1".into(),
            "--json".into(),
            json.display().to_string(),
        ];
        if outputs {
            args.push("--with-outputs".into());
        }
        let ir = valgrind::instructions(&args, scratch)?;
        let text =
            std::fs::read_to_string(&json).map_err(|e| format!("{}: {e}", json.display()))?;
        let _ = std::fs::remove_file(&json);
        let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        let hops = v["packet_hops"]
            .as_u64()
            .ok_or("report without packet_hops")?;
        Ok((ir, hops))
    };
    let short = Time((end.as_ps() / 5).max(1));
    let (i1, h1) = measure(short)?;
    let (i2, h2) = measure(end)?;
    if h2 <= h1 {
        return Err(format!(
            "the run carries no more frames in {end} than in {short}: nothing to divide by"
        ));
    }
    Ok(i2.saturating_sub(i1) as f64 / (h2 - h1) as f64)
}

/// The text summary.
pub fn render(r: &Result) -> String {
    let mut o =
        format!(
        "bench sim {}: {} runs of {} simulated on {} thread{}, {} packet-hops, {} events each{}; {} ({} CPUs)\n",
        r.scenario,
        r.runs,
        Time(r.sim_time_ps),
        r.threads,
        if r.threads == 1 { "" } else { "s" },
        r.packet_hops,
        r.events,
        if r.outputs { ", with outputs" } else { ", no outputs" },
        r.machine.cpu_model,
        r.machine.cpus
    );
    let s = |x: &Spread, unit: &str| {
        format!("{:.3}{unit} (min {:.3}, max {:.3})", x.median, x.min, x.max)
    };
    o += &format!("  wall per run       {}\n", s(&r.wall_s, " s"));
    o += &format!("  packet-hops/s      {}\n", s(&r.mhops_per_s, " M"));
    o += &format!("  simulated per wall {}\n", s(&r.sim_per_wall, ""));
    match r.instructions_per_hop {
        Some(i) => o += &format!("  {i:.0} instructions per packet-hop (cachegrind)\n"),
        None => o += "  instructions per packet-hop: add --instructions (runs valgrind)\n",
    }
    o
}
