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
//! (the namespaces and processes by [`NetLab`], shared with the TAP tests). Addresses are 198.18.0.1 and .2 only; traffic stays between the
//! namespaces.

use super::Machine;
use crate::netlab::{self, host_ip, sh_in, HostLink, NetLab, SINK_MAC};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    netlab::missing(&["ip", "iperf3", "ping", "ethtool"]).map(|why| {
        format!("bench tap cannot run: {why} (it needs root, /dev/net/tun and: apt-get install iproute2 iperf3 iputils-ping ethtool)")
    })
}

/// The namespaces, processes and threads of one measurement, removed on drop.
struct BenchLab {
    net: NetLab,
    /// Tells the copy loop's threads to end.
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
    /// Interfaces whose offloads the TCP measurements turn on and off: (namespace, name).
    offload_devs: Vec<(String, String)>,
}

impl BenchLab {
    fn new(tag: &str) -> BenchLab {
        BenchLab {
            net: NetLab::new(&format!("lb{tag}")),
            stop: Arc::new(AtomicBool::new(false)),
            threads: Vec::new(),
            offload_devs: Vec::new(),
        }
    }

    /// Hosts 0 and 1, linked as `link(i)` says, their offloads off.
    fn hosts(&mut self, link: impl Fn(usize) -> HostLink) -> std::result::Result<(), String> {
        for i in 0..2 {
            self.net.add_host(i, &link(i))?;
            self.offload_devs.push((self.net.ns(i), self.net.dev(i)));
        }
        self.set_offloads(false);
        Ok(())
    }

    /// Turn segmentation and receive offloads of every host interface (and a bridge's
    /// ports) on or off. Best effort: a device that cannot offload keeps what it has.
    fn set_offloads(&self, on: bool) {
        for (ns, dev) in &self.offload_devs {
            let _ = NetLab::set_offloads(ns, dev, on);
        }
    }

    /// iperf3 TCP from host 0 to host 1 for `seconds`; Gbit/s received.
    fn tcp(&mut self, seconds: u32, port: u16) -> std::result::Result<f64, String> {
        self.net.iperf3_tcp(0, 1, port, seconds, &[])
    }

    /// A 64-byte flood from host 0 (`lossless gen` on its interface) for `seconds`;
    /// millions of frames per second counted by host 1's interface.
    fn flood(&mut self, exe: &Path, seconds: u32) -> std::result::Result<f64, String> {
        let (dev0, dev1) = (self.net.dev(0), self.net.dev(1));
        let rx = |lab: &NetLab| -> std::result::Result<u64, String> {
            let path = format!("/sys/class/net/{dev1}/statistics/rx_packets");
            let o = lab.exec(1, &["cat", &path])?;
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .parse()
                .map_err(|e| format!("{path}: {e}"))
        };
        let before = rx(&self.net)?;
        let dst = format!("{SINK_MAC}/{}", host_ip(1));
        let exe = exe.display().to_string();
        let secs = format!("{seconds}s");
        let start = Instant::now();
        self.net.exec(
            0,
            &[
                &exe,
                "gen",
                "--iface",
                &dev0,
                "--dst",
                &dst,
                "--src-ip",
                &host_ip(0),
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
        Ok((rx(&self.net)? - before) as f64 / wall / 1e6)
    }
}

impl Drop for BenchLab {
    /// The copy loop's threads end first; the lab's processes and namespaces go with
    /// `net`.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Measure one path once it is set up: TCP, ping, flood, TCP with offloads on.
fn measure(
    lab: &mut BenchLab,
    path: &'static str,
    exe: &Path,
    seconds: u32,
    port: u16,
) -> std::result::Result<PathResult, String> {
    // Learn both ways first (ARP, the switch's FDB).
    let _ = lab.net.ping(0, 1, 2, "0.05");
    let tcp_gbps = lab.tcp(seconds, port)?;
    let rtt = lab
        .net
        .ping(0, 1, 100, "0.01")?
        .rtt
        .ok_or("ping: no reply came back")?;
    let flood_mpps = lab.flood(exe, seconds)?;
    lab.set_offloads(true);
    let tcp_offloads_gbps = lab.tcp(seconds, port + 10)?;
    Ok(PathResult {
        path,
        tcp_gbps,
        tcp_offloads_gbps,
        flood_mpps,
        ping_avg_us: rtt.avg_us,
        ping_min_us: rtt.min_us,
    })
}

/// Write the bench switch's config `text` in a directory of its own under `scratch`,
/// removed when the returned guard drops.
fn switch_config(
    lab: &BenchLab,
    scratch: &Path,
    text: &str,
) -> std::result::Result<(ScratchDir, PathBuf), String> {
    let dir = ScratchDir(scratch.join(format!("{}-bench", lab.net.tag())));
    std::fs::create_dir_all(&dir.0).map_err(|e| format!("{}: {e}", dir.0.display()))?;
    let cfg = dir.0.join("switch.yaml");
    std::fs::write(&cfg, text).map_err(|e| format!("{}: {e}", cfg.display()))?;
    Ok((dir, cfg))
}

/// A scratch directory, removed on drop.
struct ScratchDir(PathBuf);

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Start `exe tap CFG --quiet` in namespace `ns` (or this one), ended with the lab.
fn start_switch(
    lab: &mut BenchLab,
    exe: &Path,
    cfg: &Path,
    ns: Option<&str>,
) -> std::result::Result<(), String> {
    let (exe, cfg) = (exe.display().to_string(), cfg.display().to_string());
    let args = [exe.as_str(), "tap", cfg.as_str(), "--quiet"];
    match ns {
        Some(ns) => {
            lab.net.spawn_in(ns, &args, false)?;
        }
        None => {
            let child = Command::new(&exe)
                .args(&args[1..])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("lossless tap: {e}"))?;
            lab.net.adopt(child);
        }
    }
    Ok(())
}

fn switch_path(
    exe: &Path,
    seconds: u32,
    scratch: &Path,
) -> std::result::Result<PathResult, String> {
    let mut lab = BenchLab::new("s");
    let text = format!(
        "# bench tap: two unshaped 100G ports, no pipeline latency\nswitches:\n  - name: vsw\n    ports: {{count: 2, speed: 100G, mtu: 1518, tap_prefix: {}t}}\n    pipeline_latency: 0ns\n",
        lab.net.tag()
    );
    let (_dir, cfg) = switch_config(&lab, scratch, &text)?;
    start_switch(&mut lab, exe, &cfg, None)?;
    netlab::wait_for_devices(&[lab.net.dev(0), lab.net.dev(1)], Duration::from_secs(10))
        .map_err(|e| format!("lossless tap did not open its TAPs: {e}"))?;
    lab.hosts(|_| HostLink::Move)?;
    measure(&mut lab, "lossless tap", exe, seconds, 5501)
}

/// The switch on veth ports: its own namespace with `eth1`, `eth2`, each the peer of a
/// host's veth end, as containerlab wires a node.
fn switch_veth_path(
    exe: &Path,
    seconds: u32,
    scratch: &Path,
) -> std::result::Result<PathResult, String> {
    let mut lab = BenchLab::new("v");
    let nss = lab.net.switch_ns();
    lab.net.add_namespace(&nss)?;
    lab.hosts(|i| HostLink::Veth {
        ns: nss.clone(),
        peer: format!("eth{}", i + 1),
    })?;
    let text = "# bench tap: two unshaped 100G veth ports, no pipeline latency
switches:
  - name: vsw
    ports: [{iface: eth1, speed: 100G, mtu: 1518}, {iface: eth2, speed: 100G, mtu: 1518}]
    pipeline_latency: 0ns
";
    let (_dir, cfg) = switch_config(&lab, scratch, text)?;
    start_switch(&mut lab, exe, &cfg, Some(&nss))?;
    netlab::wait_for_bound_sockets(&nss, 2, Duration::from_secs(10))
        .map_err(|e| format!("lossless tap did not attach to its veths: {e}"))?;
    measure(&mut lab, "lossless tap (veth)", exe, seconds, 5504)
}

fn copy_loop_path(exe: &Path, seconds: u32) -> std::result::Result<PathResult, String> {
    use lossless_sys::tap::{Offloads, Tap};
    let mut lab = BenchLab::new("c");
    // Offering the hosts their offloads, the loop passes each read on as it came: frame
    // and virtio-net header, a super-frame whole.
    let open = |t: &str| {
        Tap::open(t, None, Offloads::Segmentation)
            .map(Arc::new)
            .map_err(|e| format!("TAP {t}: {e}"))
    };
    let taps = [open(&lab.net.dev(0))?, open(&lab.net.dev(1))?];
    lab.hosts(|_| HostLink::Move)?;
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
    measure(&mut lab, "copy loop", exe, seconds, 5502)
}

fn bridge_path(exe: &Path, seconds: u32) -> std::result::Result<PathResult, String> {
    let mut lab = BenchLab::new("b");
    let nsb = lab.net.switch_ns();
    lab.net.add_namespace(&nsb)?;
    sh_in(&nsb, &["ip", "link", "add", "br0", "type", "bridge"])?;
    sh_in(&nsb, &["ip", "link", "set", "br0", "up"])?;
    let port = |lab: &BenchLab, i: usize| format!("{}v{i}", lab.net.tag());
    let ports = [port(&lab, 0), port(&lab, 1)];
    for p in &ports {
        lab.offload_devs.push((nsb.clone(), p.clone()));
    }
    lab.hosts(|i| HostLink::Veth {
        ns: nsb.clone(),
        peer: ports[i].clone(),
    })?;
    for p in &ports {
        sh_in(&nsb, &["ip", "link", "set", p, "master", "br0", "up"])?;
    }
    measure(&mut lab, "linux bridge", exe, seconds, 5503)
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
