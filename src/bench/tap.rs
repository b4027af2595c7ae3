//! `lossless bench tap`: the TAP switch next to what a user would otherwise use, in one
//! run on one machine: iperf3 TCP, a 64-byte UDP flood (`lossless gen`, counted at the
//! receiving interface) and ping RTT between two network namespaces joined by
//!
//! 1. `lossless tap` (2 ports, 100G, unshaped, no pipeline latency) on TAPs,
//! 2. the same switch on veth ports (`iface:`) in a third namespace, as a container node,
//! 3. a plain copy loop: two threads, each reading one TAP and writing the other,
//! 4. a Linux bridge in a third namespace with veth pairs: the kernel doing what path 2
//!    does.
//!
//! TCP is measured twice: with the hosts' segmentation and receive offloads off (every
//! frame is a wire frame all the way), and on (Linux's default: a host hands over frames
//! of up to 64 KB, which the switch cuts into MTU frames, the copy loop passes through
//! whole with their virtio-net headers, and the bridge passes through whole).
//!
//! Every namespace, process and thread it makes is removed when it ends, failed or not
//! ([`NetLab`]'s `Drop`). Addresses are 198.18.0.1 and .2 only; traffic stays between the
//! namespaces.

use super::Machine;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A MAC nobody owns: flood frames cross the path and are dropped by the receiving kernel
/// at L2 after its interface counted them.
const SINK_MAC: &str = "02:00:00:00:0f:01";

/// One path's figures.
#[derive(Clone, Debug, Serialize)]
pub struct PathResult {
    /// `lossless tap`, `lossless tap (veth)`, `copy loop` or `linux bridge`.
    pub path: &'static str,
    /// iperf3 TCP, Gbit/s received, the hosts' offloads off.
    pub tcp_gbps: f64,
    /// iperf3 TCP, Gbit/s received, the hosts' segmentation and receive offloads on.
    pub tcp_offloads_gbps: f64,
    /// 64-byte frames per second that reached the receiving interface, millions.
    pub flood_mpps: f64,
    /// Average ping round trip, µs (100 pings, 10 ms apart).
    pub ping_avg_us: f64,
    /// Smallest ping round trip, µs.
    pub ping_min_us: f64,
}

/// The result of a run.
#[derive(Clone, Debug, Serialize)]
pub struct Result {
    /// The machine.
    pub machine: Machine,
    /// Seconds of each iperf3 and flood measurement.
    pub seconds: u32,
    /// The three paths.
    pub paths: Vec<PathResult>,
    /// lossless tap over the copy loop: TCP, flood, TCP with offloads on.
    pub vs_copy_loop: (f64, f64, f64),
    /// lossless tap over the Linux bridge: TCP, flood, TCP with offloads on.
    pub vs_bridge: (f64, f64, f64),
    /// lossless tap on veth ports over the Linux bridge of veths: TCP, flood, TCP with
    /// offloads on.
    pub veth_vs_bridge: (f64, f64, f64),
}

/// Why the benchmark cannot run here, if it cannot.
fn missing() -> Option<String> {
    let uid = Command::new("id").arg("-u").output().ok();
    if uid.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()) != Some("0".into()) {
        return Some("bench tap needs root (it makes network namespaces and TAP devices)".into());
    }
    if !Path::new("/dev/net/tun").exists() {
        return Some("/dev/net/tun is missing".into());
    }
    for tool in ["ip", "iperf3", "ping", "ethtool"] {
        let found = Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {tool}"))
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            return Some(format!(
                "`{tool}` is not installed (apt-get install iproute2 iperf3 iputils-ping ethtool)"
            ));
        }
    }
    None
}

/// Run `args`; an error says which command failed and what it printed.
fn sh(args: &[&str]) -> std::result::Result<Output, String> {
    let o = Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| format!("{}: {e}", args.join(" ")))?;
    if !o.status.success() {
        return Err(format!(
            "{}: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    Ok(o)
}

/// The namespaces and processes of one measurement, removed on drop.
struct NetLab {
    tag: String,
    namespaces: Vec<String>,
    children: Vec<Child>,
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
    /// Interfaces whose offloads the TCP measurements turn on and off: (namespace, name).
    offload_devs: Vec<(String, String)>,
}

impl NetLab {
    fn new(tag: &str) -> NetLab {
        NetLab {
            tag: format!("lb{tag}{}", std::process::id() % 100_000),
            namespaces: Vec::new(),
            children: Vec::new(),
            stop: Arc::new(AtomicBool::new(false)),
            threads: Vec::new(),
            offload_devs: Vec::new(),
        }
    }

    fn ns(&self, i: usize) -> String {
        format!("{}-{i}", self.tag)
    }

    fn tap(&self, i: usize) -> String {
        format!("{}t{i}", self.tag)
    }

    fn ip(i: usize) -> String {
        format!("198.18.0.{}", i + 1)
    }

    fn add_ns(&mut self, i: usize) -> std::result::Result<String, String> {
        let ns = self.ns(i);
        sh(&["ip", "netns", "add", &ns])?;
        self.namespaces.push(ns.clone());
        self.exec(i, &["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"])?;
        self.exec(i, &["ip", "link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// Host `i`: its namespace with interface `dev` moved in (unless already there),
    /// addressed, up, offloads off.
    fn host(&mut self, i: usize, dev: &str, move_in: bool) -> std::result::Result<(), String> {
        let ns = if move_in {
            let ns = self.add_ns(i)?;
            sh(&["ip", "link", "set", dev, "netns", &ns])?;
            ns
        } else {
            self.ns(i)
        };
        let addr = format!("{}/24", Self::ip(i));
        sh(&[
            "ip", "netns", "exec", &ns, "ip", "addr", "add", &addr, "dev", dev,
        ])?;
        sh(&["ip", "netns", "exec", &ns, "ip", "link", "set", dev, "up"])?;
        self.offload_devs.push((ns, dev.to_string()));
        self.set_offloads(false);
        Ok(())
    }

    /// Turn segmentation and receive offloads of every host interface (and a bridge's
    /// ports) on or off. Best effort: a device that cannot offload keeps what it has.
    fn set_offloads(&self, on: bool) {
        let v = if on { "on" } else { "off" };
        for (ns, dev) in &self.offload_devs {
            let _ = sh(&[
                "ip", "netns", "exec", ns, "ethtool", "-K", dev, "tso", v, "gso", v, "gro", v,
            ]);
        }
    }

    fn exec(&self, i: usize, args: &[&str]) -> std::result::Result<Output, String> {
        let ns = self.ns(i);
        let mut full = vec!["ip", "netns", "exec", &ns];
        full.extend_from_slice(args);
        sh(&full)
    }

    fn spawn(&mut self, i: usize, args: &[&str]) -> std::result::Result<(), String> {
        let child = Command::new("ip")
            .args(["netns", "exec", &self.ns(i)])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e}", args.join(" ")))?;
        self.children.push(child);
        Ok(())
    }

    /// iperf3 TCP from host 0 to host 1 for `seconds`; Gbit/s received.
    fn tcp(&mut self, seconds: u32, port: u16) -> std::result::Result<f64, String> {
        let p = port.to_string();
        self.spawn(1, &["iperf3", "-s", "-1", "-B", &Self::ip(1), "-p", &p])?;
        std::thread::sleep(Duration::from_millis(300));
        let o = self.exec(
            0,
            &[
                "iperf3",
                "-c",
                &Self::ip(1),
                "-p",
                &p,
                "-t",
                &seconds.to_string(),
                "-J",
            ],
        )?;
        let v: serde_json::Value =
            serde_json::from_slice(&o.stdout).map_err(|e| format!("iperf3 output: {e}"))?;
        v["end"]["sum_received"]["bits_per_second"]
            .as_f64()
            .map(|b| b / 1e9)
            .ok_or_else(|| "iperf3 gave no result".into())
    }

    /// Ping host 1 from host 0 100 times, 10 ms apart: (avg, min) µs.
    fn ping(&self) -> std::result::Result<(f64, f64), String> {
        let o = self.exec(
            0,
            &[
                "ping",
                "-q",
                "-c",
                "100",
                "-i",
                "0.01",
                "-W",
                "1",
                &Self::ip(1),
            ],
        )?;
        let text = String::from_utf8_lossy(&o.stdout);
        // rtt min/avg/max/mdev = 0.148/0.446/1.2/0.1 ms
        let nums = text
            .lines()
            .find(|l| l.contains("min/avg/max"))
            .and_then(|l| l.split('=').nth(1))
            .ok_or_else(|| format!("ping printed no round trips: {text}"))?;
        let v: Vec<f64> = nums
            .trim()
            .trim_end_matches("ms")
            .split('/')
            .filter_map(|x| x.trim().parse().ok())
            .collect();
        match v.as_slice() {
            [min, avg, ..] => Ok((avg * 1000.0, min * 1000.0)),
            _ => Err(format!("ping: cannot read `{nums}`")),
        }
    }

    /// A 64-byte flood from host 0 (`lossless gen` on `dev0`) for `seconds`; millions of
    /// frames per second counted by host 1's `dev1`.
    fn flood(
        &mut self,
        exe: &Path,
        dev0: &str,
        dev1: &str,
        seconds: u32,
    ) -> std::result::Result<f64, String> {
        let rx = |lab: &NetLab| -> std::result::Result<u64, String> {
            let path = format!("/sys/class/net/{dev1}/statistics/rx_packets");
            let o = lab.exec(1, &["cat", &path])?;
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .parse()
                .map_err(|e| format!("{path}: {e}"))
        };
        let before = rx(self)?;
        let dst = format!("{SINK_MAC}/{}", Self::ip(1));
        let exe = exe.display().to_string();
        let secs = format!("{seconds}s");
        let start = Instant::now();
        self.exec(
            0,
            &[
                &exe,
                "gen",
                "--iface",
                dev0,
                "--dst",
                &dst,
                "--src-ip",
                &Self::ip(0),
                "--frame",
                "64",
                "--rate",
                "100G",
                "--link-speed",
                "100G",
                "--duration",
                &secs,
                "--realtime",
                "off",
            ],
        )?;
        let wall = start.elapsed().as_secs_f64().max(seconds as f64);
        std::thread::sleep(Duration::from_millis(200));
        Ok((rx(self)? - before) as f64 / wall / 1e6)
    }
}

impl Drop for NetLab {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        for ns in &self.namespaces {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

/// Measure one path once it is set up: TCP, ping, flood.
fn measure(
    lab: &mut NetLab,
    path: &'static str,
    exe: &Path,
    devs: (&str, &str),
    seconds: u32,
    port: u16,
) -> std::result::Result<PathResult, String> {
    // Learn both ways first (ARP, the switch's FDB).
    let _ = lab.exec(
        0,
        &["ping", "-c", "2", "-i", "0.05", "-W", "1", &NetLab::ip(1)],
    );
    let tcp_gbps = lab.tcp(seconds, port)?;
    let (ping_avg_us, ping_min_us) = lab.ping()?;
    let flood_mpps = lab.flood(exe, devs.0, devs.1, seconds)?;
    lab.set_offloads(true);
    let tcp_offloads_gbps = lab.tcp(seconds, port + 10)?;
    Ok(PathResult {
        path,
        tcp_gbps,
        tcp_offloads_gbps,
        flood_mpps,
        ping_avg_us,
        ping_min_us,
    })
}

fn switch_path(
    exe: &Path,
    seconds: u32,
    scratch: &Path,
) -> std::result::Result<PathResult, String> {
    let mut lab = NetLab::new("s");
    let dir: PathBuf = scratch.join(format!("{}-bench", lab.tag));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let cfg = dir.join("switch.yaml");
    let text = format!(
        "# bench tap: two unshaped 100G ports, no pipeline latency\nswitches:\n  - name: vsw\n    ports: {{count: 2, speed: 100G, mtu: 1518, tap_prefix: {}t}}\n    pipeline_latency: 0ns\n",
        lab.tag
    );
    std::fs::write(&cfg, text).map_err(|e| format!("{}: {e}", cfg.display()))?;
    let child = Command::new(exe)
        .args(["tap", &cfg.display().to_string(), "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("lossless tap: {e}"))?;
    lab.children.push(child);
    let deadline = Instant::now() + Duration::from_secs(10);
    while (0..2).any(|i| !Path::new(&format!("/sys/class/net/{}", lab.tap(i))).exists()) {
        if Instant::now() > deadline {
            return Err("lossless tap did not open its TAPs in 10 s".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let (t0, t1) = (lab.tap(0), lab.tap(1));
    lab.host(0, &t0, true)?;
    lab.host(1, &t1, true)?;
    let r = measure(&mut lab, "lossless tap", exe, (&t0, &t1), seconds, 5501);
    let _ = std::fs::remove_dir_all(&dir);
    r
}

/// The switch on veth ports: its own namespace with `eth1`, `eth2`, each the peer of a
/// host's veth end, as containerlab wires a node.
fn switch_veth_path(
    exe: &Path,
    seconds: u32,
    scratch: &Path,
) -> std::result::Result<PathResult, String> {
    let mut lab = NetLab::new("v");
    let nss = lab.add_ns(9)?;
    let mut devs = Vec::new();
    for i in 0..2 {
        let ns = lab.add_ns(i)?;
        let (eth, host) = (format!("eth{}", i + 1), format!("{}w{i}", lab.tag));
        sh(&[
            "ip", "netns", "exec", &nss, "ip", "link", "add", &eth, "type", "veth", "peer", "name",
            &host, "netns", &ns,
        ])?;
        sh(&["ip", "netns", "exec", &nss, "ip", "link", "set", &eth, "up"])?;
        lab.host(i, &host, false)?;
        devs.push(host);
    }
    let dir: PathBuf = scratch.join(format!("{}-bench", lab.tag));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let cfg = dir.join("switch.yaml");
    let text = "# bench tap: two unshaped 100G veth ports, no pipeline latency
switches:
  - name: vsw
    ports: [{iface: eth1, speed: 100G, mtu: 1518}, {iface: eth2, speed: 100G, mtu: 1518}]
    pipeline_latency: 0ns
";
    std::fs::write(&cfg, text).map_err(|e| format!("{}: {e}", cfg.display()))?;
    let exe_s = exe.display().to_string();
    let child = Command::new("ip")
        .args([
            "netns",
            "exec",
            &nss,
            &exe_s,
            "tap",
            &cfg.display().to_string(),
            "--quiet",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("lossless tap: {e}"))?;
    lab.children.push(child);
    // Attached once the switch's namespace lists its two packet sockets, bound.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let o = sh(&["ip", "netns", "exec", &nss, "cat", "/proc/net/packet"])?;
        if lossless_sys::packet::bound_sockets(&String::from_utf8_lossy(&o.stdout)) >= 2 {
            break;
        }
        if Instant::now() > deadline {
            return Err("lossless tap did not attach to its veths in 10 s".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let r = measure(
        &mut lab,
        "lossless tap (veth)",
        exe,
        (&devs[0], &devs[1]),
        seconds,
        5504,
    );
    let _ = std::fs::remove_dir_all(&dir);
    r
}

fn copy_loop_path(exe: &Path, seconds: u32) -> std::result::Result<PathResult, String> {
    use lossless_sys::tap::{Offloads, Tap};
    let mut lab = NetLab::new("c");
    let (t0, t1) = (lab.tap(0), lab.tap(1));
    // Offering the hosts their offloads, the loop passes each read on as it came: frame
    // and virtio-net header, a super-frame whole.
    let open = |t: &str| {
        Tap::open(t, None, Offloads::Segmentation)
            .map(Arc::new)
            .map_err(|e| format!("TAP {t}: {e}"))
    };
    let taps = [open(&t0)?, open(&t1)?];
    lab.host(0, &t0, true)?;
    lab.host(1, &t1, true)?;
    for i in 0..2 {
        let (from, to) = (Arc::clone(&taps[i]), Arc::clone(&taps[1 - i]));
        let stop = Arc::clone(&lab.stop);
        lab.threads.push(std::thread::spawn(move || {
            let mut buf = vec![0u8; 65_536];
            while !stop.load(Ordering::Relaxed) {
                match from.read_timeout(&mut buf, Duration::from_millis(100)) {
                    Ok(Some(0)) | Err(_) => break,
                    Ok(Some(n)) => {
                        let _ = to.write_as_read(&buf[..n]);
                    }
                    Ok(None) => {}
                }
            }
        }));
    }
    measure(&mut lab, "copy loop", exe, (&t0, &t1), seconds, 5502)
}

fn bridge_path(exe: &Path, seconds: u32) -> std::result::Result<PathResult, String> {
    let mut lab = NetLab::new("b");
    let nsb = lab.add_ns(9)?;
    sh(&[
        "ip", "netns", "exec", &nsb, "ip", "link", "add", "br0", "type", "bridge",
    ])?;
    sh(&[
        "ip", "netns", "exec", &nsb, "ip", "link", "set", "br0", "up",
    ])?;
    let mut devs = Vec::new();
    for i in 0..2 {
        let ns = lab.add_ns(i)?;
        let (a, b) = (format!("{}v{i}", lab.tag), format!("{}w{i}", lab.tag));
        sh(&[
            "ip", "netns", "exec", &nsb, "ip", "link", "add", &a, "type", "veth", "peer", "name",
            &b, "netns", &ns,
        ])?;
        sh(&[
            "ip", "netns", "exec", &nsb, "ip", "link", "set", &a, "master", "br0", "up",
        ])?;
        lab.offload_devs.push((nsb.clone(), a.clone()));
        lab.host(i, &b, false)?;
        devs.push(b);
    }
    measure(
        &mut lab,
        "linux bridge",
        exe,
        (&devs[0], &devs[1]),
        seconds,
        5503,
    )
}

/// Run the four measurements, one after the other, with `exe` as `lossless`.
pub fn run(exe: &Path, seconds: u32, scratch: &Path) -> std::result::Result<Result, String> {
    if let Some(why) = missing() {
        return Err(why);
    }
    if seconds == 0 {
        return Err("--seconds 0: measurements need at least a second".into());
    }
    let sw = switch_path(exe, seconds, scratch)?;
    let veth = switch_veth_path(exe, seconds, scratch)?;
    let copy = copy_loop_path(exe, seconds)?;
    let bridge = bridge_path(exe, seconds)?;
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    let vs = |a: &PathResult, b: &PathResult| {
        (
            ratio(a.tcp_gbps, b.tcp_gbps),
            ratio(a.flood_mpps, b.flood_mpps),
            ratio(a.tcp_offloads_gbps, b.tcp_offloads_gbps),
        )
    };
    Ok(Result {
        machine: Machine::here(),
        seconds,
        vs_copy_loop: vs(&sw, &copy),
        vs_bridge: vs(&sw, &bridge),
        veth_vs_bridge: vs(&veth, &bridge),
        paths: vec![sw, veth, copy, bridge],
    })
}

/// The text summary.
pub fn render(r: &Result) -> String {
    let mut o = format!(
        "bench tap: {} s per measurement, one run, {} ({} CPUs)\n  {:<20} {:>12} {:>12} {:>11} {:>12} {:>12}\n  {:<20} {:>12} {:>12}\n",
        r.seconds, r.machine.cpu_model, r.machine.cpus, "path", "TCP Gbit/s", "TCP Gbit/s", "64 B Mpps", "ping avg µs", "ping min µs",
        "", "offloads off", "offloads on"
    );
    for p in &r.paths {
        o += &format!(
            "  {:<20} {:>12.2} {:>12.2} {:>11.3} {:>12.0} {:>12.0}\n",
            p.path, p.tcp_gbps, p.tcp_offloads_gbps, p.flood_mpps, p.ping_avg_us, p.ping_min_us
        );
    }
    let line = |name: &str, (tcp, flood, on): (f64, f64, f64)| {
        format!("  {name}: TCP {tcp:.2}× (offloads on {on:.2}×), flood {flood:.2}×\n")
    };
    o += &line("lossless tap / copy loop", r.vs_copy_loop);
    o += &line("lossless tap / Linux bridge", r.vs_bridge);
    o += &line(
        "lossless tap on veths / Linux bridge of veths",
        r.veth_vs_bridge,
    );
    o
}
