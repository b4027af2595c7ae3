//! `lossless tap` between real hosts: network namespaces joined by the switch's TAP devices.
//!
//! Every test makes its own uniquely named namespaces (pid in the name), uses addresses in
//! 198.18.0.0/15 only, sends traffic only between those namespaces, bounds every wait in
//! time, and removes what it made (namespaces, processes it started, by pid) in a guard's
//! `Drop`, even when it fails. Without root, /dev/net/tun, ping or iperf3 the tests print
//! why and skip — except in CI (`CI` set), where skipping is a failure.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A unicast MAC behind port 0 that no host owns: frames to it cross the switch and are
/// dropped by the receiving kernel at L2, the cheapest sink (the load tests measure the
/// switch, not the receiver's UDP stack).
const SINK_MAC: &str = "02:00:00:00:0f:01";

/// TAP tests share the machine's two cores; run them one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn missing() -> Option<String> {
    let uid = Command::new("id")
        .arg("-u")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if uid.as_deref() != Some("0") {
        return Some("not root".into());
    }
    if !Path::new("/dev/net/tun").exists() {
        return Some("/dev/net/tun is missing".into());
    }
    for tool in ["ip", "ping", "iperf3"] {
        if Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {tool}"))
            .output()
            .map_or(true, |o| !o.status.success())
        {
            return Some(format!("`{tool}` is not installed (.ci/run installs it)"));
        }
    }
    None
}

/// Ok(guard) when the tests can run; None after printing why they are skipped.
fn prerequisites() -> Option<std::sync::MutexGuard<'static, ()>> {
    if let Some(why) = missing() {
        assert!(
            std::env::var("CI").is_err(),
            "TAP tests cannot run in CI: {why}"
        );
        eprintln!("skipping TAP test: {why}");
        return None;
    }
    Some(SERIAL.lock().unwrap_or_else(|e| e.into_inner()))
}

fn sh(args: &[&str]) -> Output {
    Command::new(args[0])
        .args(&args[1..])
        .output()
        .unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn must(args: &[&str]) {
    let o = sh(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A lab of namespaces around one `lossless tap` process; cleans up on drop.
struct Lab {
    tag: String,
    namespaces: Vec<String>,
    procs: Vec<Child>,
    switch: Option<Child>,
    dir: PathBuf,
}

impl Lab {
    fn new(tag: &str) -> Lab {
        let tag = format!("{tag}{}", std::process::id() % 100_000);
        let dir = std::env::temp_dir().join(format!("lossless-tap-{tag}"));
        std::fs::create_dir_all(&dir).unwrap();
        Lab {
            tag,
            namespaces: Vec::new(),
            procs: Vec::new(),
            switch: None,
            dir,
        }
    }

    /// A lab with a `ports`-port switch at `speed` and a host on every port.
    fn with_hosts(tag: &str, ports: usize, speed: &str, pipeline_latency: &str) -> Lab {
        let mut lab = Lab::new(tag);
        lab.start_switch(ports, speed, pipeline_latency);
        for i in 0..ports {
            lab.add_host(i);
        }
        lab
    }

    fn ns(&self, i: usize) -> String {
        format!("lossless-{}-{i}", self.tag)
    }

    fn tap(&self, i: usize) -> String {
        format!("{}t{i}", self.tag)
    }

    fn ip(i: usize) -> String {
        format!("198.18.0.{}", i + 1)
    }

    /// Start `lossless tap` on a switch with `ports` ports at `speed`; wait for its TAPs.
    fn start_switch(&mut self, ports: usize, speed: &str, pipeline_latency: &str) {
        let cfg = format!(
            "# test switch\nswitches:\n  - name: vsw\n    ports: {{count: {ports}, speed: {speed}, mtu: 1518, tap_prefix: {}t}}\n    pipeline_latency: {pipeline_latency}\n\
             \x20   buffer:\n      pools:\n        ingress_lossless_pool: {{type: ingress, size: 8MB}}\n        ingress_lossy_pool: {{type: ingress, size: 1MB}}\n\
             \x20       egress_lossless_pool: {{type: egress, size: 8MB, mode: static}}\n        egress_lossy_pool: {{type: egress, size: 1MB}}\n\
             \x20     profiles:\n        pg_lossless: {{pool: ingress_lossless_pool, dynamic_th: -2, xoff: 1536KiB, xon_offset: 64KB}}\n\
             \x20       q_lossless: {{pool: egress_lossless_pool, static_th: 8MB}}\n      pg: {{\"3\": pg_lossless}}\n      queue: {{\"3\": q_lossless}}\n\
             \x20   qos:\n      pfc_enable: [3]\n\
             \x20   forwarding: {{mode: l2, fdb: [{{mac: \"{SINK_MAC}\", port: Ethernet0}}]}}\n",
            self.tag
        );
        let path = self.dir.join("switch.yaml");
        std::fs::write(&path, cfg).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_lossless"))
            .args([
                "tap",
                path.to_str().unwrap(),
                "--quiet",
                "--json",
                self.dir.join("report.json").to_str().unwrap(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        self.switch = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while (0..ports).any(|i| !Path::new(&format!("/sys/class/net/{}", self.tap(i))).exists()) {
            assert!(Instant::now() < deadline, "TAP devices did not appear");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Namespace i with TAP i moved in, addressed 198.18.0.(i+1)/24, IPv6 off.
    fn add_host(&mut self, i: usize) {
        let (ns, tap) = (self.ns(i), self.tap(i));
        must(&["ip", "netns", "add", &ns]);
        self.namespaces.push(ns.clone());
        must(&["ip", "link", "set", &tap, "netns", &ns]);
        for cmd in [
            vec!["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"],
            vec!["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"],
            vec!["ip", "link", "set", "lo", "up"],
            vec![
                "ip",
                "addr",
                "add",
                &format!("{}/24", Lab::ip(i)),
                "dev",
                &tap,
            ],
            vec!["ip", "link", "set", &tap, "up"],
        ] {
            let mut full = vec!["ip", "netns", "exec", &ns];
            full.extend(cmd);
            must(&full);
        }
    }

    fn exec(&self, i: usize, args: &[&str]) -> Output {
        let ns = self.ns(i);
        let mut full = vec!["ip", "netns", "exec", &ns];
        full.extend_from_slice(args);
        sh(&full)
    }

    fn spawn(&mut self, i: usize, args: &[&str]) -> usize {
        let child = Command::new("ip")
            .args(["netns", "exec", &self.ns(i)])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        self.procs.push(child);
        self.procs.len() - 1
    }

    /// Wait (bounded) for a spawned process and return its stdout.
    fn wait(&mut self, k: usize, limit: Duration) -> String {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(_status) = self.procs[k].try_wait().unwrap() {
                let mut out = String::new();
                if let Some(mut s) = self.procs[k].stdout.take() {
                    std::io::Read::read_to_string(&mut s, &mut out).unwrap();
                }
                return out;
            }
            assert!(
                Instant::now() < deadline,
                "process {k} did not finish in {limit:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM the switch (by pid), wait for a clean exit, return its JSON report.
    fn stop_switch(&mut self) -> Value {
        let mut child = self.switch.take().expect("switch running");
        must(&["kill", "-TERM", &child.id().to_string()]);
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < deadline, "switch did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            std::io::Read::read_to_string(&mut e, &mut err).unwrap();
        }
        assert!(status.success(), "switch exited with {status}: {err}");
        serde_json::from_str(&std::fs::read_to_string(self.dir.join("report.json")).unwrap())
            .unwrap()
    }

    /// iperf3 client in namespace `from` toward a one-off server in `to`; Gbit/s received.
    fn iperf3_tcp(&mut self, from: usize, to: usize, port: u16, seconds: u32) -> f64 {
        let srv = self.spawn(
            to,
            &[
                "iperf3",
                "-s",
                "-1",
                "-B",
                &Lab::ip(to),
                "-p",
                &port.to_string(),
            ],
        );
        std::thread::sleep(Duration::from_millis(300));
        let o = self.exec(
            from,
            &[
                "iperf3",
                "-c",
                &Lab::ip(to),
                "-p",
                &port.to_string(),
                "-t",
                &seconds.to_string(),
                "-J",
            ],
        );
        self.wait(srv, Duration::from_secs(seconds as u64 + 10));
        let v: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|_| panic!("iperf3: {}", String::from_utf8_lossy(&o.stderr)));
        v["end"]["sum_received"]["bits_per_second"]
            .as_f64()
            .expect("iperf3 result")
            / 1e9
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for p in self.procs.iter_mut() {
            let _ = p.kill();
            let _ = p.wait();
        }
        if let Some(mut s) = self.switch.take() {
            let _ = s.kill();
            let _ = s.wait();
        }
        for ns in &self.namespaces {
            let _ = sh(&["ip", "netns", "del", ns]);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn loss_percent(ping: &Output) -> f64 {
    let text = String::from_utf8_lossy(&ping.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("packet loss"))
        .unwrap_or_else(|| panic!("ping said: {text}"));
    let pct = line.split(',').find(|p| p.contains("packet loss")).unwrap();
    pct.trim()
        .trim_end_matches("packet loss")
        .trim()
        .trim_end_matches('%')
        .parse()
        .unwrap()
}

#[test]
fn hundred_pings_through_the_tap_switch_lose_nothing() {
    let Some(_serial) = prerequisites() else {
        return;
    };
    let mut lab = Lab::with_hosts("p", 2, "1G", "2us");
    let ping = lab.exec(
        0,
        &["ping", "-c", "100", "-i", "0.01", "-W", "1", &Lab::ip(1)],
    );
    assert_eq!(loss_percent(&ping), 0.0);
    let r = lab.stop_switch();
    assert_eq!(r["totals"]["lossless_drops"], 0);
    assert!(r["switches"][0]["ports"][0]["rx_packets"].as_u64().unwrap() >= 100);
}

#[test]
fn iperf3_tcp_through_1g_shaped_ports_runs_near_1g() {
    let Some(_serial) = prerequisites() else {
        return;
    };
    let mut lab = Lab::with_hosts("s", 2, "1G", "2us");
    let gbps = lab.iperf3_tcp(0, 1, 5201, 3);
    eprintln!("iperf3 TCP through 1G-shaped ports: {gbps:.3} Gbit/s");
    assert!((0.85..=1.0).contains(&gbps), "{gbps} Gbit/s");
    lab.stop_switch();
}

#[test]
fn gen_senders_share_a_1g_port_losslessly_and_iperf3_udp_senders_do_not() {
    let Some(_serial) = prerequisites() else {
        return;
    };
    let mut lab = Lab::with_hosts("g", 3, "1G", "2us");
    // Let the switch learn everyone (no flooding when the load starts).
    for i in 1..3 {
        assert_eq!(
            loss_percent(&lab.exec(
                0,
                &["ping", "-c", "3", "-i", "0.05", "-W", "1", &Lab::ip(i)]
            )),
            0.0
        );
    }
    let dst = format!("{SINK_MAC}/{}", Lab::ip(0));
    let bin = env!("CARGO_BIN_EXE_lossless");
    let gens: Vec<usize> = (1..3)
        .map(|i| {
            let iface = lab.tap(i);
            lab.spawn(
                i,
                &[
                    bin,
                    "gen",
                    "--iface",
                    &iface,
                    "--dst",
                    &dst,
                    "--src-ip",
                    &Lab::ip(i),
                    "--dscp",
                    "3",
                    "--rate",
                    "1G",
                    "--link-speed",
                    "1G",
                    "--duration",
                    "3s",
                ],
            )
        })
        .collect();
    let summaries: Vec<Value> = gens
        .into_iter()
        .map(|k| serde_json::from_str(&lab.wait(k, Duration::from_secs(20))).unwrap())
        .collect();
    let r = lab.stop_switch();
    let ports = r["switches"][0]["ports"].as_array().unwrap();
    let tx_xoff: u64 = ports
        .iter()
        .map(|p| p["pfc"]["tx_xoff"][3].as_u64().unwrap())
        .sum();
    assert!(tx_xoff > 0, "the switch sent XOFF");
    assert_eq!(r["totals"]["lossless_drops"], 0, "{r}");
    for s in &summaries {
        // PFC frames captured on the sender's side, and half of the 1G egress each.
        assert!(s["pfc_rx_frames"].as_u64().unwrap() > 0, "{s}");
        let line_rate = s["line_rate_bps"].as_f64().unwrap() / 1e9;
        eprintln!(
            "gen on {}: {line_rate:.3} Gbit/s (line rate), paused {} ps",
            s["iface"], s["paused_ps"][3]
        );
        assert!((line_rate - 0.5).abs() <= 0.05, "{line_rate} Gbit/s: {s}");
    }

    // The same with iperf3 -u senders, which ignore PFC: the switch still sends XOFF, and
    // the lossless priority drops.
    let mut lab = Lab::with_hosts("u", 3, "1G", "2us");
    let servers: Vec<usize> = (1..3)
        .map(|i| {
            lab.spawn(
                0,
                &[
                    "iperf3",
                    "-s",
                    "-1",
                    "-B",
                    &Lab::ip(0),
                    "-p",
                    &(5300 + i).to_string(),
                ],
            )
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let clients: Vec<usize> = (1..3)
        .map(|i| {
            lab.spawn(
                i,
                &[
                    "iperf3",
                    "-u",
                    "-b",
                    "1G",
                    "-l",
                    "1472",
                    "--tos",
                    "0x0c",
                    "-t",
                    "3",
                    "-c",
                    &Lab::ip(0),
                    "-p",
                    &(5300 + i).to_string(),
                ],
            )
        })
        .collect();
    for k in clients.into_iter().chain(servers) {
        lab.wait(k, Duration::from_secs(20));
    }
    let r = lab.stop_switch();
    let ports = r["switches"][0]["ports"].as_array().unwrap();
    let tx_xoff: u64 = ports
        .iter()
        .map(|p| p["pfc"]["tx_xoff"][3].as_u64().unwrap())
        .sum();
    assert!(tx_xoff > 0, "PFC frames are sent");
    assert!(
        r["totals"]["lossless_drops"].as_u64().unwrap() > 0,
        "Linux ignores PFC: lossless drops follow"
    );
}

#[test]
fn injected_pfc_stops_priority_3_toward_a_host_and_xon_resumes_it() {
    let Some(_serial) = prerequisites() else {
        return;
    };
    let mut lab = Lab::with_hosts("f", 3, "1G", "2us");
    for i in 1..3 {
        lab.exec(
            0,
            &["ping", "-c", "2", "-i", "0.05", "-W", "1", &Lab::ip(i)],
        );
    }
    let bin = env!("CARGO_BIN_EXE_lossless");
    let tap0 = lab.tap(0);
    // Host 0 pauses priority 3 for 2 s (65535 quanta at 1G = 3.4 ms, refreshed every 1 ms).
    let storm = lab.spawn(
        0,
        &[
            bin,
            "send-pfc",
            "--iface",
            &tap0,
            "--prio",
            "3",
            "--quanta",
            "65535",
            "--count",
            "2000",
            "--interval",
            "1ms",
        ],
    );
    std::thread::sleep(Duration::from_millis(100));
    let dst = format!("{SINK_MAC}/{}", Lab::ip(0));
    let (t1, t2) = (lab.tap(1), lab.tap(2));
    let g3 = lab.spawn(
        1,
        &[
            bin,
            "gen",
            "--iface",
            &t1,
            "--dst",
            &dst,
            "--src-ip",
            &Lab::ip(1),
            "--dscp",
            "3",
            "--rate",
            "200M",
            "--duration",
            "1s",
        ],
    );
    let g0 = lab.spawn(
        2,
        &[
            bin,
            "gen",
            "--iface",
            &t2,
            "--dst",
            &dst,
            "--src-ip",
            &Lab::ip(2),
            "--dscp",
            "0",
            "--rate",
            "200M",
            "--duration",
            "1s",
        ],
    );
    let s3: Value = serde_json::from_str(&lab.wait(g3, Duration::from_secs(20))).unwrap();
    let s0: Value = serde_json::from_str(&lab.wait(g0, Duration::from_secs(20))).unwrap();
    // Priority 3 toward host 0 stopped: its sender was held back by the switch's XOFF.
    assert!(s3["pfc_rx_frames"].as_u64().unwrap() > 0);
    let paused3 = s3["paused_ps"][3].as_u64().unwrap() as f64 / 1e12;
    assert!(paused3 > 0.5, "priority-3 sender paused {paused3} s of 1 s");
    // Priority 0 (DSCP 0 → TC 1) kept flowing at its rate.
    let rate0 = s0["line_rate_bps"].as_f64().unwrap() / 1e9;
    assert!((rate0 - 0.2).abs() < 0.03, "{rate0}");
    lab.wait(storm, Duration::from_secs(10));
    // XON: priority 3 resumes and what waited is delivered.
    let xon = lab.exec(
        0,
        &[
            bin, "send-pfc", "--iface", &tap0, "--prio", "3", "--quanta", "0",
        ],
    );
    assert!(xon.status.success());
    std::thread::sleep(Duration::from_millis(300));
    let r = lab.stop_switch();
    let p0 = &r["switches"][0]["ports"][0];
    assert!(p0["pfc"]["rx_xoff"][3].as_u64().unwrap() >= 1000);
    assert!(p0["pfc"]["rx_xon"][3].as_u64().unwrap() >= 1);
    let q3_out = p0["queues"][3]["tx_packets"].as_u64().unwrap();
    assert_eq!(
        q3_out,
        s3["frames"].as_u64().unwrap(),
        "every priority-3 frame was delivered after the XON"
    );
    assert_eq!(r["totals"]["lossless_drops"], 0);
}

#[test]
fn deleting_one_namespace_leaves_the_others_served_and_sigterm_stops_cleanly() {
    let Some(_serial) = prerequisites() else {
        return;
    };
    let mut lab = Lab::with_hosts("d", 3, "1G", "2us");
    let flood = lab.spawn(
        0,
        &["ping", "-c", "400", "-i", "0.005", "-W", "1", &Lab::ip(1)],
    );
    std::thread::sleep(Duration::from_millis(300));
    // Delete host 2's namespace (and with it its TAP) while traffic flows.
    let ns2 = lab.ns(2);
    must(&["ip", "netns", "del", &ns2]);
    lab.namespaces.retain(|n| *n != ns2);
    lab.wait(flood, Duration::from_secs(20));
    let ping = lab.exec(
        0,
        &["ping", "-c", "50", "-i", "0.01", "-W", "1", &Lab::ip(1)],
    );
    assert_eq!(
        loss_percent(&ping),
        0.0,
        "forwarding between the others continues"
    );
    let r = lab.stop_switch();
    let gone = r["tap"]["ports_gone"].as_array().unwrap();
    assert_eq!(gone.len(), 1, "{r}");
    assert_eq!(r["switches"][0]["ports"][2]["link_up"], false);
}

/// Measures (prints) TCP throughput of the unshaped switch next to a Linux bridge and a
/// plain 2-thread TAP copy loop in the same run; asserts only that each carried traffic.
#[test]
fn throughput_next_to_a_linux_bridge_and_a_tap_copy_loop() {
    let Some(_serial) = prerequisites() else {
        return;
    };
    let mut lab = Lab::with_hosts("t", 2, "100G", "0ns");
    lab.exec(
        0,
        &["ping", "-c", "2", "-i", "0.05", "-W", "1", &Lab::ip(1)],
    );
    let switch = lab.iperf3_tcp(0, 1, 5401, 3);
    lab.stop_switch();
    drop(lab);

    // A plain copy loop: two threads, each reading one TAP and writing the other.
    let mut lab = Lab::new("c");
    let taps: Vec<_> = (0..2)
        .map(|i| std::sync::Arc::new(lossless_ports::sys::Tap::open(&lab.tap(i)).unwrap()))
        .collect();
    for i in 0..2 {
        lab.add_host(i);
    }
    for i in 0..2 {
        let (from, to) = (
            std::sync::Arc::clone(&taps[i]),
            std::sync::Arc::clone(&taps[1 - i]),
        );
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 65_536];
            while let Ok(n) = from.read(&mut buf) {
                let _ = to.write(&buf[..n]);
            }
        });
    }
    let copy = lab.iperf3_tcp(0, 1, 5402, 3);
    drop(lab);

    // A Linux bridge in a third namespace, veth pairs to the two hosts.
    let mut lab = Lab::new("b");
    let nsb = lab.ns(9);
    must(&["ip", "netns", "add", &nsb]);
    lab.namespaces.push(nsb.clone());
    must(&[
        "ip", "netns", "exec", &nsb, "ip", "link", "add", "br0", "type", "bridge",
    ]);
    must(&[
        "ip", "netns", "exec", &nsb, "ip", "link", "set", "br0", "up",
    ]);
    for i in 0..2 {
        let ns = lab.ns(i);
        must(&["ip", "netns", "add", &ns]);
        lab.namespaces.push(ns.clone());
        let (a, b) = (format!("{}v{i}", lab.tag), format!("{}w{i}", lab.tag));
        must(&[
            "ip", "netns", "exec", &nsb, "ip", "link", "add", &a, "type", "veth", "peer", "name",
            &b, "netns", &ns,
        ]);
        must(&[
            "ip", "netns", "exec", &nsb, "ip", "link", "set", &a, "master", "br0", "up",
        ]);
        must(&[
            "ip",
            "netns",
            "exec",
            &ns,
            "sysctl",
            "-qw",
            "net.ipv6.conf.all.disable_ipv6=1",
        ]);
        must(&[
            "ip",
            "netns",
            "exec",
            &ns,
            "ip",
            "addr",
            "add",
            &format!("{}/24", Lab::ip(i)),
            "dev",
            &b,
        ]);
        must(&["ip", "netns", "exec", &ns, "ip", "link", "set", &b, "up"]);
        // Offloads off, as the design's measured floors were taken.
        let _ = sh(&[
            "ip", "netns", "exec", &ns, "ethtool", "-K", &b, "tso", "off", "gso", "off", "gro",
            "off",
        ]);
    }
    let bridge = lab.iperf3_tcp(0, 1, 5403, 3);
    drop(lab);
    eprintln!("iperf3 TCP, same run: lossless tap (unshaped) {switch:.2} Gbit/s, 2-thread TAP copy loop {copy:.2} Gbit/s, Linux bridge (offloads off) {bridge:.2} Gbit/s");
    assert!(switch > 0.1 && copy > 0.1 && bridge > 0.1);
}

#[test]
fn a_tap_whose_link_goes_down_is_marked_down_counted_and_served_again() {
    let Some(_serial) = prerequisites() else {
        return;
    };
    let mut lab = Lab::with_hosts("l", 2, "1G", "2us");
    assert_eq!(
        loss_percent(&lab.exec(
            0,
            &["ping", "-c", "3", "-i", "0.05", "-W", "1", &Lab::ip(1)]
        )),
        0.0
    );
    let tap1 = lab.tap(1);
    let o = lab.exec(1, &["ip", "link", "set", &tap1, "down"]);
    assert!(o.status.success());
    assert_eq!(
        loss_percent(&lab.exec(
            0,
            &["ping", "-c", "5", "-i", "0.05", "-W", "1", &Lab::ip(1)]
        )),
        100.0
    );
    let o = lab.exec(1, &["ip", "link", "set", &tap1, "up"]);
    assert!(o.status.success());
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        loss_percent(&lab.exec(
            0,
            &["ping", "-c", "20", "-i", "0.05", "-W", "1", &Lab::ip(1)]
        )),
        0.0,
        "served again"
    );
    let r = lab.stop_switch();
    assert!(r["tap"]["tx_errors"].as_u64().unwrap() > 0, "{}", r["tap"]);
    assert!(
        r["tap"]["link_changes"].as_u64().unwrap() >= 1,
        "{}",
        r["tap"]
    );
}
