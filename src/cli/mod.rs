//! The command line: one file per subcommand, each with its arguments and what it does.

mod args;
mod bench;
mod check;
mod gen;
mod import;
mod run;
mod send_pfc;
mod show;
mod signals;
mod sweep;
mod sweep_merge;
mod tap;

use clap::{Parser, Subcommand};
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
    /// peer-response bound (or, on a TAP port, the engine's bounded cable). Errors name the
    /// file, line and key; exit status 1 on error. `--defaults` prints every default.
    Check(check::CheckArgs),
    /// Run a scenario in deterministic virtual time and report what happened.
    ///
    /// Hosts, flows and events come from the file (docs/scenario.md). The same file and seed give
    /// byte-identical JSON (except wall_time_s and output paths) and pcap. The text report
    /// shows PFC counters (in frames), queue and PG counters (each drop once, where it
    /// happened), watermarks and per-flow throughput, FCT and latency; lossless_drops is
    /// always printed because it must be 0. Throughput, utilisation, pause fractions and
    /// latency cover the file's `measure: {from, to}` window (default: the whole run).
    /// Latency percentiles are hdrhistogram values (3 significant digits) clamped to the
    /// exact min and max. Ctrl-C stops a run where it is and still writes its report,
    /// marked interrupted (exit status 130); docs/running.md defines every number.
    Run(Box<run::RunArgs>),
    /// Run the switch between real hosts: a TAP device or an existing interface per port,
    /// wall clock.
    ///
    /// Reads the file's (single) switch; `ports: {count: 2, speed: 1G, tap_prefix: ll}` opens
    /// ll0 and ll1: move the TAPs into network namespaces and bring them up (docs/tap.md).
    /// `ports: [{iface: eth1}, {iface: eth2}]` serves interfaces that exist, such as a
    /// containerlab node's veths; one deleted and made again under its name is attached
    /// again. `--metrics ADDR` serves live counters for Prometheus and `lossless show`.
    /// Each port is shaped to its speed, so queues, PFC and ECN happen with real
    /// traffic. Each TAP's kernel ring is bounded (1024 frames) and so is what one round
    /// reads from a port: `lossless check` prints the headroom that covers them. SIGINT,
    /// SIGTERM or SIGHUP stop it cleanly: the writers finish, the report
    /// is printed and --json written; the report accounts for every frame read, written,
    /// dropped by reason or lost in a TAP's kernel ring.
    Tap(tap::TapArgs),
    /// Turn another tool's configuration into a scenario file: `import sonic
    /// config_db.json` reads a SONiC switch's ports, buffers, QoS and ACLs.
    Import(import::ImportArgs),
    /// Print SONiC's tables (pfcstat, queuestat, watermarkstat) or the TAP ledger from a
    /// running `lossless tap --metrics ADDR`.
    Show(show::ShowArgs),
    /// Send 802.1Qbb PFC frames out of an interface (AF_PACKET; Linux itself cannot).
    SendPfc(send_pfc::SendPfcArgs),
    /// A PFC-honouring traffic generator on an interface (what an RDMA NIC does, and a
    /// Linux host does not): paces UDP or RoCEv2 frames, stops while its priority is
    /// paused, prints a JSON summary (also when stopped by Ctrl-C).
    Gen(gen::GenArgs),
    /// Benchmarks: the pipeline in-process, a scenario in the simulator, the TAP switch
    /// next to a Linux bridge (see BENCHMARKS.md for this machine's figures).
    Bench(bench::BenchArgs),
    /// Sweeps split over processes or machines: `sweep merge PART.json…` joins the row
    /// files of `lossless run FILE --sweep … --shard I/N --json PART.json` into what one
    /// process writes.
    Sweep(sweep_merge::SweepArgs),
}

/// Parse the command line and run the subcommand.
pub fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Check(a) => check::exec(a),
        Command::Run(a) => run::exec(*a),
        Command::Tap(a) => tap::exec(a),
        Command::Show(a) => show::exec(a),
        Command::Import(a) => import::exec(a),
        Command::SendPfc(a) => send_pfc::exec(a),
        Command::Gen(a) => gen::exec(a),
        Command::Bench(a) => bench::exec(a),
        Command::Sweep(a) => sweep_merge::exec(a),
    }
}
