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
    /// byte-identical JSON (except wall_time_s and output paths) and pcap. The text report
    /// shows PFC counters (in frames), queue and PG counters (each drop once, where it
    /// happened), watermarks and per-flow throughput, FCT and latency; lossless_drops is
    /// always printed because it must be 0. Throughput, utilisation, pause fractions and
    /// latency cover the file's `measure: {from, to}` window (default: the whole run).
    /// Latency percentiles are hdrhistogram values (3 significant digits) clamped to the
    /// exact min and max.
    Run(RunArgs),
    /// Run the switch between real hosts: one Linux TAP device per port, wall clock.
    ///
    /// Reads the file's (single) switch; `ports: {count: 2, speed: 1G, tap_prefix: ll}` opens
    /// ll0 and ll1. Move the TAPs into network namespaces and bring them up (README, "TAP
    /// switch"). Each port is shaped to its speed, so queues, PFC and ECN happen with real
    /// traffic. Each TAP's kernel ring is bounded (1024 frames) and so is each port's read
    /// queue: `lossless check` prints the headroom that covers them. SIGINT, SIGTERM or
    /// SIGHUP stop it cleanly: the read queues are drained, the writers finish, the report
    /// is printed and --json written; the report accounts for every frame read, written,
    /// dropped by reason or lost in a TAP's kernel ring.
    Tap(TapArgs),
    /// Send 802.1Qbb PFC frames out of an interface (AF_PACKET; Linux itself cannot).
    SendPfc(SendPfcArgs),
    /// A PFC-honouring traffic generator on an interface (what an RDMA NIC does, and a
    /// Linux host does not): paces UDP or RoCEv2 frames, stops while its priority is
    /// paused, prints a JSON summary.
    Gen(GenArgs),
}

#[derive(Args)]
struct TapArgs {
    /// Switch YAML file (its one switch is served).
    file: PathBuf,
    /// Print a counters line this often (e.g. 1s; above 0). A closed stdout (`| head`) only
    /// ends the lines.
    #[arg(long, value_parser = parse_period)]
    stats: Option<std::time::Duration>,
    /// Write the JSON report here when stopping.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Stop by itself after this long (default: until SIGINT/SIGTERM).
    #[arg(long, value_parser = parse_duration)]
    duration: Option<std::time::Duration>,
    /// No report on stdout when stopping.
    #[arg(long, short)]
    quiet: bool,
    /// Real-time priority (SCHED_FIFO) for the engine's threads: auto (when allowed), on
    /// (required) or off. Without it a busy machine delays the threads, and frames wait
    /// longer between the TAPs and the switch.
    #[arg(long, default_value = "auto")]
    realtime: lossless_sys::sched::Realtime,
}

#[derive(Args)]
struct SendPfcArgs {
    /// Interface to send on.
    #[arg(long)]
    iface: String,
    /// Priorities to pause, e.g. 3 or 3,4.
    #[arg(long, value_delimiter = ',', required = true)]
    prio: Vec<u8>,
    /// Pause time in quanta (512 bit times each); 0 sends XON.
    #[arg(long, default_value_t = 65535)]
    quanta: u16,
    /// Frames to send.
    #[arg(long, default_value_t = 1)]
    count: u64,
    /// Time between frames (e.g. 100us).
    #[arg(long, value_parser = parse_duration, default_value = "1ms")]
    interval: std::time::Duration,
}

#[derive(Args)]
struct GenArgs {
    /// Interface to send on.
    #[arg(long)]
    iface: String,
    /// Destination as MAC/IP, e.g. 02:00:00:00:00:02/198.18.0.2.
    #[arg(long)]
    dst: String,
    /// Source IPv4 address.
    #[arg(long, default_value = "198.18.0.100")]
    src_ip: std::net::Ipv4Addr,
    /// DSCP of the frames.
    #[arg(long, default_value_t = 3)]
    dscp: u8,
    /// ECN field: not_ect, ect0, ect1 or ce.
    #[arg(long, default_value = "not_ect")]
    ecn: String,
    /// PFC priority the traffic is queued on (default: SONiC's map of the DSCP: 3→3, 4→4, 48→6, else 1).
    #[arg(long)]
    priority: Option<u8>,
    /// Offered rate in line-rate bits (frame + 20 bytes of preamble and gap), e.g. 1G.
    #[arg(long, value_parser = parse_rate, default_value = "1G")]
    rate: lossless_buffer_model::Rate,
    /// Frame length in bytes, FCS included (64 up to the interface's MTU + 18).
    #[arg(long, default_value_t = 1518)]
    frame: u32,
    /// How long to send (e.g. 5s).
    #[arg(long, value_parser = parse_duration, default_value = "5s")]
    duration: std::time::Duration,
    /// Send RoCEv2 (BTH on UDP 4791) instead of plain UDP.
    #[arg(long)]
    rocev2: bool,
    /// Speed of the link, to turn pause quanta into time.
    #[arg(long, value_parser = parse_rate, default_value = "1G")]
    link_speed: lossless_buffer_model::Rate,
    /// UDP destination port of plain UDP frames.
    #[arg(long, default_value_t = 5001)]
    dst_port: u16,
    /// Real-time priority (SCHED_FIFO) for the sender: auto (when allowed), on or off.
    #[arg(long, default_value = "auto")]
    realtime: lossless_sys::sched::Realtime,
}

fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let t = s.parse::<Time>().map_err(|e| e.to_string())?;
    Ok(std::time::Duration::from_nanos(t.as_ps() / 1000))
}

fn parse_period(s: &str) -> Result<std::time::Duration, String> {
    match parse_duration(s)? {
        d if d.is_zero() => Err("a period needs to be above 0, such as 1s".into()),
        d => Ok(d),
    }
}

/// A flag set by SIGINT, SIGTERM or SIGHUP.
fn stop_on_signals() -> std::io::Result<std::sync::Arc<std::sync::atomic::AtomicBool>> {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(sig, std::sync::Arc::clone(&stop))?;
    }
    Ok(stop)
}

/// Print `text` on stdout; a closed stdout (`| head`) is not an error worth a panic.
fn print_out(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
}

fn parse_rate(s: &str) -> Result<lossless_buffer_model::Rate, String> {
    s.parse()
        .map_err(|e: lossless_buffer_model::units::UnitError| e.to_string())
}

#[derive(Args)]
struct RunArgs {
    /// Scenario YAML file, e.g. configs/labs/incast-pfc.yaml.
    file: PathBuf,
    /// Write the JSON report here (overrides outputs.json).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write pcap files into this directory: those of outputs.pcap, or, when the file has
    /// none, one per switch port.
    #[arg(long)]
    pcap_dir: Option<PathBuf>,
    /// Override the scenario's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Override the scenario's duration (e.g. 2ms; above 0).
    #[arg(long, value_parser = parse_run_length)]
    duration: Option<Time>,
    /// No text report and no progress bar.
    #[arg(long, short)]
    quiet: bool,
}

/// Load a scenario, printing its warnings; None (after printing the error) when it is bad.
fn load(file: &std::path::Path) -> Option<lossless::config::Loaded> {
    match lossless::config::load(file) {
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

fn parse_run_length(s: &str) -> Result<Time, String> {
    match s.parse::<Time>().map_err(|e| e.to_string())? {
        Time::ZERO => Err("a run needs a length above 0, such as 2ms".into()),
        t => Ok(t),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check { file, quiet } => check(&file, quiet),
        Command::Run(args) => run(args),
        Command::Tap(args) => tap(args),
        Command::SendPfc(a) => {
            let prios = a
                .prio
                .iter()
                .fold(0u8, |m, p| if *p < 8 { m | 1 << p } else { m });
            if a.prio.iter().any(|p| *p > 7) {
                eprintln!("error: --prio takes priorities 0–7");
                return ExitCode::FAILURE;
            }
            match lossless::tools::send_pfc::send_pfc(
                &a.iface, prios, a.quanta, a.count, a.interval,
            ) {
                Ok(n) => {
                    println!(
                        "sent {n} PFC frame(s) on {}: priorities {:?}, {} quanta",
                        a.iface, a.prio, a.quanta
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {}: {e}", a.iface);
                    ExitCode::FAILURE
                }
            }
        }
        Command::Gen(a) => gen(a),
    }
}

fn gen(a: GenArgs) -> ExitCode {
    let Some((mac, ip)) = a.dst.split_once('/') else {
        eprintln!("error: --dst takes MAC/IP, e.g. 02:00:00:00:00:02/198.18.0.2");
        return ExitCode::FAILURE;
    };
    let mac_parts: Vec<_> = mac
        .split(':')
        .filter_map(|p| u8::from_str_radix(p, 16).ok())
        .collect();
    let (Ok(dst_mac), Ok(dst_ip)) = (
        <[u8; 6]>::try_from(mac_parts.as_slice()),
        ip.parse::<std::net::Ipv4Addr>(),
    ) else {
        eprintln!(
            "error: --dst `{}` is not MAC/IP, e.g. 02:00:00:00:00:02/198.18.0.2",
            a.dst
        );
        return ExitCode::FAILURE;
    };
    let ecn = match a.ecn.as_str() {
        "not_ect" => 0,
        "ect1" => 1,
        "ect0" => 2,
        "ce" => 3,
        other => {
            eprintln!("error: --ecn `{other}`: expected not_ect, ect0, ect1 or ce");
            return ExitCode::FAILURE;
        }
    };
    if a.dscp > 63 || a.priority.is_some_and(|p| p > 7) {
        eprintln!("error: --dscp takes 0–63 and --priority 0–7");
        return ExitCode::FAILURE;
    }
    let priority = a
        .priority
        .unwrap_or(lossless_pipeline::presets::sonic_dscp_to_tc()[a.dscp as usize]);
    let cfg = lossless::tools::gen::GenConfig {
        iface: a.iface.clone(),
        dst_mac,
        dst_ip: dst_ip.octets(),
        src_ip: a.src_ip.octets(),
        dscp: a.dscp,
        ecn,
        priority,
        rate: a.rate,
        frame: a.frame,
        duration: a.duration,
        rocev2: a.rocev2,
        link_speed: a.link_speed,
        dst_port: a.dst_port,
        realtime: a.realtime,
    };
    let stop = match stop_on_signals() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot handle signals: {e}");
            return ExitCode::FAILURE;
        }
    };
    match lossless::tools::gen::gen(&cfg, &stop) {
        Ok(v) => {
            print_out(&(serde_json::to_string_pretty(&v).expect("JSON") + "\n"));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}: {e}", a.iface);
            ExitCode::FAILURE
        }
    }
}

fn tap(a: TapArgs) -> ExitCode {
    let Some(loaded) = load(&a.file) else {
        return ExitCode::FAILURE;
    };
    let sc = &loaded.scenario;
    if sc.switches.len() != 1 {
        eprintln!(
            "error: {}: `lossless tap` serves one switch; the file has {}",
            a.file.display(),
            sc.switches.len()
        );
        return ExitCode::FAILURE;
    }
    let stop = match stop_on_signals() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot handle signals: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut sw = match lossless::tap::TapSwitch::open(&sc.switches[0], a.realtime) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {}: {e}", a.file.display());
            return ExitCode::FAILURE;
        }
    };
    let taps: Vec<_> = sc.switches[0].taps.iter().flatten().cloned().collect();
    print_out(&format!(
        "lossless tap: switch `{}` serving {} (stop with Ctrl-C)\n",
        sc.switches[0].config.name,
        taps.join(", ")
    ));
    let opts = lossless::tap::TapOptions {
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
        let text = serde_json::to_string_pretty(&report).expect("JSON") + "\n";
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("error: {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    if !a.quiet {
        print_out(&lossless::report::text::render(&report));
    }
    ExitCode::SUCCESS
}

fn run(a: RunArgs) -> ExitCode {
    let Some(loaded) = load(&a.file) else {
        return ExitCode::FAILURE;
    };
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
        let mut text = lossless::report::text::render(&report);
        if let Some(p) = &json_path {
            text += &format!("JSON report: {}\n", p.display());
        }
        print_out(&text);
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
