//! `lossless bench`: pipeline, simulator and TAP benchmarks (BENCHMARKS.md has figures).

use super::args::{duration, load, print_out, run_length, save_json};
use crate::bench::{pipeline, sim, tap, valgrind};
use clap::{Args, Subcommand};
use lossless_buffer_model::Time;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    which: Which,
}

#[derive(Subcommand)]
enum Which {
    /// The switch pipeline fed in-process as fast as it goes: Mpps, Gbit/s, ns per frame.
    ///
    /// Frames come in on every port in turn (one per port per wire time, so no queue
    /// builds) and leave by the port opposite: parse, classify, FDB, MMU admit, enqueue,
    /// schedule and release per frame. `--instructions` adds the instructions per frame,
    /// counted by valgrind (deterministic: compare builds with it, not with wall time).
    Pipeline(PipelineArgs),
    /// A scenario run N times: packet-hops and simulated time per wall second.
    ///
    /// Median and spread of the runs; the scenario's pcap and CSV outputs are left out
    /// unless --with-outputs. `--instructions` adds the instructions per packet-hop from
    /// two runs under valgrind (the whole run and a fifth of it, so start-up cancels).
    /// It measures the binary it runs in: `scripts/build-pgo.sh` builds the fastest one
    /// (whole-program and profile-guided optimization, about a quarter fewer instructions
    /// than `cargo build --release`; BENCHMARKS.md).
    Sim(SimArgs),
    /// iperf3 TCP, a 64-byte UDP flood and ping through `lossless tap` (on TAPs and on
    /// veths), a plain TAP copy loop and a Linux bridge, in one run, with the ratios (root;
    /// needs iperf3).
    ///
    /// Sets up its own network namespaces (198.18.0.0/15 addresses only) and removes them
    /// whatever happens. The switch runs unshaped at 100G with no pipeline latency. TCP is
    /// measured twice: with every host's segmentation and receive offloads off (wire
    /// frames everywhere), and on (Linux's defaults: 64 KB super-frames, which the switch
    /// cuts and the copy loop and the bridge pass whole).
    Tap(TapArgs),
}

#[derive(Args)]
pub struct PipelineArgs {
    /// Switch ports (2–256).
    #[arg(long, default_value_t = 2)]
    ports: usize,
    /// Frame length in bytes, FCS included (64–9216).
    #[arg(long, default_value_t = 64)]
    frame: u32,
    /// Distinct flows (MAC and UDP port pairs) spread over the ports.
    #[arg(long, default_value_t = 64)]
    flows: usize,
    /// How long to run, wall clock (e.g. 2s).
    #[arg(long, value_parser = duration, default_value = "2s")]
    duration: Duration,
    /// Run exactly this many frames instead of --duration.
    #[arg(long)]
    frames: Option<u64>,
    /// Also count instructions per frame under valgrind (cachegrind).
    #[arg(long)]
    instructions: bool,
    /// Run this P4 program (p4c's BMv2 JSON for v1model) in place of the fixed
    /// pipeline's forwarding. A frame for port P is addressed to 198.19.0.P: give
    /// --p4-entries that route those (configs/p4/bench-entries.txt does for
    /// configs/p4/router.json).
    #[arg(long, value_name = "FILE.json")]
    p4: Option<PathBuf>,
    /// The program's table entries: simple_switch_CLI commands, or a runtime JSON.
    #[arg(long, value_name = "FILE", requires = "p4")]
    p4_entries: Option<PathBuf>,
    /// Write the result as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// No text summary.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Args)]
pub struct SimArgs {
    /// Scenario YAML file, e.g. configs/bench/incast-8to1.yaml.
    file: PathBuf,
    /// Runs (median and spread are over these).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Override the scenario's duration (e.g. 10ms).
    #[arg(long, value_parser = run_length)]
    duration: Option<Time>,
    /// Write the scenario's pcap and CSV outputs too (left out by default).
    #[arg(long)]
    with_outputs: bool,
    /// Run the fabric on N threads, as `lossless run --threads` (default: as `run`
    /// chooses). Instructions are counted on one thread whatever this says.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: Option<u16>,
    /// Also count instructions per packet-hop under valgrind (cachegrind), on one thread.
    #[arg(long)]
    instructions: bool,
    /// Write the result as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// No text summary.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Args)]
pub struct TapArgs {
    /// Seconds of each iperf3 and flood measurement.
    #[arg(long, default_value_t = 5)]
    seconds: u32,
    /// Write the result as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
}

pub fn exec(a: BenchArgs) -> ExitCode {
    let done = match a.which {
        Which::Pipeline(p) => bench_pipeline(p),
        Which::Sim(s) => bench_sim(s),
        Which::Tap(t) => bench_tap(t),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Write `value` to `path` when given.
fn json_out(path: &Option<PathBuf>, value: &impl serde::Serialize) -> Result<(), String> {
    let Some(path) = path else { return Ok(()) };
    let v = serde_json::to_value(value).map_err(|e| e.to_string())?;
    save_json(path, &v).map_err(|e| e.to_string())
}

fn need_valgrind() -> Result<(), String> {
    if valgrind::available() {
        Ok(())
    } else {
        Err("--instructions needs valgrind (apt-get install valgrind)".into())
    }
}

fn bench_pipeline(a: PipelineArgs) -> Result<(), String> {
    let setup = pipeline::Setup {
        ports: a.ports,
        frame: a.frame,
        flows: a.flows,
        duration: a.duration,
        frames: a.frames,
        p4: match &a.p4 {
            Some(program) => Some(std::sync::Arc::new(crate::config::switch::p4::load_files(
                program,
                a.p4_entries.as_deref(),
            )?)),
            None => None,
        },
    };
    pipeline::validate(&setup)?;
    if a.instructions {
        need_valgrind()?;
    }
    let mut r = pipeline::run(&setup)?;
    if a.instructions {
        let scratch = std::env::temp_dir();
        let count = |frames: u64| {
            let mut p4 = Vec::new();
            for (flag, path) in [("--p4", &a.p4), ("--p4-entries", &a.p4_entries)] {
                if let Some(p) = path {
                    p4.push(flag.to_string());
                    p4.push(p.display().to_string());
                }
            }
            let args: Vec<String> = [
                "bench",
                "pipeline",
                "--quiet",
                "--ports",
                &a.ports.to_string(),
                "--frame",
                &a.frame.to_string(),
                "--flows",
                &a.flows.to_string(),
                "--frames",
                &frames.to_string(),
            ]
            .iter()
            .map(|s| s.to_string())
            .chain(p4)
            .collect();
            valgrind::instructions(&args, &scratch)
        };
        let (small, large) = (100_000u64, 500_000u64);
        let (i1, i2) = (count(small)?, count(large)?);
        r.instructions_per_frame = Some(i2.saturating_sub(i1) as f64 / (large - small) as f64);
    }
    json_out(&a.json, &r)?;
    if !a.quiet {
        print_out(&pipeline::render(&r));
    }
    Ok(())
}

fn bench_sim(a: SimArgs) -> Result<(), String> {
    let Some(loaded) = load(&a.file) else {
        return Err(format!("{}: not a valid scenario", a.file.display()));
    };
    if a.instructions {
        need_valgrind()?;
    }
    let opts = sim::Options {
        runs: a.runs,
        outputs: a.with_outputs,
        duration: a.duration,
        threads: a.threads.map(usize::from),
    };
    let mut r = sim::run(&loaded.scenario, opts)?;
    if a.instructions {
        let end = Time(r.sim_time_ps);
        r.instructions_per_hop = Some(sim::instructions_per_hop(
            &a.file,
            end,
            a.with_outputs,
            &std::env::temp_dir(),
        )?);
    }
    json_out(&a.json, &r)?;
    if !a.quiet {
        print_out(&sim::render(&r));
    }
    Ok(())
}

fn bench_tap(a: TapArgs) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("this binary: {e}"))?;
    let r = tap::run(&exe, a.seconds, Path::new(&std::env::temp_dir()))?;
    json_out(&a.json, &r)?;
    print_out(&tap::render(&r));
    Ok(())
}
