//! Live counters of `lossless tap --metrics`: scraped by a real Prometheus server, checked
//! by `promtool`, printed by `lossless show`, and equal to the final JSON once traffic
//! stops. Prometheus listens and scrapes on 127.0.0.1 only.

mod common;

use common::lab::{prerequisites, sh, Lab, SwitchSpec};
use serde_json::Value;
use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A port on 127.0.0.1 nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `lossless show ...` with `args`.
fn show(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_lossless"))
        .arg("show")
        .args(args)
        .output()
        .unwrap()
}

/// A Prometheus server scraping `target` every second, killed (by pid) on drop.
struct Prometheus {
    child: Child,
    dir: std::path::PathBuf,
    api: String,
}

impl Prometheus {
    fn start(target: &str) -> Prometheus {
        common::needs::tools(&[("prometheus", "prometheus"), ("promtool", "prometheus")]);
        let dir = std::env::temp_dir().join(format!("lossless-prom-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = dir.join("prometheus.yml");
        std::fs::write(
            &cfg,
            format!(
                "global: {{scrape_interval: 1s, scrape_timeout: 1s}}\n\
                 scrape_configs:\n  - job_name: lossless\n    static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .unwrap();
        let listen = format!("127.0.0.1:{}", free_port());
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", cfg.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={listen}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Prometheus {
            child,
            dir,
            api: format!("http://{listen}/api/v1"),
        }
    }

    /// The value of instant query `q` once it has one (bounded wait).
    fn query(&self, q: &str, limit: Duration) -> f64 {
        let deadline = Instant::now() + limit;
        loop {
            let o = sh(&[
                "curl",
                "-s",
                "--max-time",
                "2",
                "-G",
                &format!("{}/query", self.api),
                "--data-urlencode",
                &format!("query={q}"),
            ]);
            if let Ok(v) = serde_json::from_slice::<Value>(&o.stdout) {
                if let Some(x) = v["data"]["result"][0]["value"][1].as_str() {
                    return x.parse().unwrap();
                }
            }
            assert!(Instant::now() < deadline, "Prometheus never answered {q}");
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
#[ignore = "needs root, /dev/net/tun and iproute2, iputils-ping, iperf3, ethtool, util-linux, prometheus (scripts/test)"]
fn prometheus_scrapes_the_live_counters_and_they_match_the_final_report() {
    let _serial = prerequisites();
    let addr = format!("127.0.0.1:{}", free_port());
    let spec = SwitchSpec::new(2, "1G");
    let stats = std::env::temp_dir().join(format!("lossless-stats-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&stats);
    let mut lab = Lab::with(
        "m",
        true,
        &spec,
        &["--metrics", &addr, "--stats-json", stats.to_str().unwrap()],
    );
    let prom = Prometheus::start(&addr);
    assert_eq!(lab.ping(0, 1, 50, "0.01"), 0.0);
    // Prometheus scraped the switch and can answer from what it stored.
    let rx = prom.query(
        "sum(lossless_port_rx_packets_total{port=\"Ethernet0\"}) >= 50",
        Duration::from_secs(20),
    );
    assert!(rx >= 50.0, "{rx}");
    let up = prom.query("up{job=\"lossless\"}", Duration::from_secs(10));
    assert_eq!(up, 1.0);

    lint_exposition(&addr);
    show_tables(&addr);

    // Quiet now: the last live report is the final one.
    std::thread::sleep(Duration::from_millis(300));
    let live: Value = serde_json::from_slice(
        &sh(&[
            "curl",
            "-s",
            "--max-time",
            "5",
            &format!("http://{addr}/json"),
        ])
        .stdout,
    )
    .unwrap();
    let r = lab.stop_switch();
    for key in ["switches", "totals"] {
        let (a, b) = (&live[key], &r[key]);
        // Utilisation and time-based fractions move with the clock; every counter must not.
        let strip = |v: &Value| {
            let mut v = v.clone();
            scrub(&mut v);
            v
        };
        assert_eq!(strip(a), strip(b), "{key}: live and final differ");
    }
    for k in [
        "read_frames",
        "written_frames",
        "write_errors",
        "write_overruns",
    ] {
        assert_eq!(u(&live["tap"][k]), u(&r["tap"][k]), "{k}");
    }
    assert!(u(&r["tap"]["read_frames"]) >= 100);
    // One JSON line per second while it ran.
    let lines = std::fs::read_to_string(&stats).unwrap();
    let _ = std::fs::remove_file(&stats);
    assert!(lines.lines().count() >= 2, "{lines}");
    for l in lines.lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        assert!(v["tap"]["read_frames"].is_u64());
    }
}

/// The exposition passes promtool's lint and has the families the issue names.
fn lint_exposition(addr: &str) {
    // The exposition passes promtool's lint.
    let body = sh(&[
        "curl",
        "-s",
        "--max-time",
        "5",
        &format!("http://{addr}/metrics"),
    ])
    .stdout;
    let mut lint = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    lint.stdin.take().unwrap().write_all(&body).unwrap();
    let lint = lint.wait_with_output().unwrap();
    assert!(
        lint.status.success(),
        "promtool: {}{}",
        String::from_utf8_lossy(&lint.stdout),
        String::from_utf8_lossy(&lint.stderr)
    );
    let text = String::from_utf8_lossy(&body);
    for family in [
        "lossless_pfc_tx_frames_total{switch=\"vsw\",port=\"Ethernet0\",priority=\"3\"}",
        "lossless_queue_watermark_bytes{",
        "lossless_pg_headroom_watermark_bytes{",
        "lossless_pool_watermark_bytes{",
        "lossless_tap_read_frames_total{",
    ] {
        assert!(text.contains(family), "{family} missing");
    }
}

/// `lossless show` prints SONiC's tables from the running switch.
fn show_tables(addr: &str) {
    // `lossless show` prints SONiC's tables from the running switch.
    for (table, header) in [
        ("pfc", "PFC Rx: frames"),
        ("queue", "Egress queues"),
        ("watermark", "Pool watermarks"),
        ("ledger", "Written"),
    ] {
        let o = show(&[table, "--from", addr]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{table}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(out.contains(header), "{table}: {out}");
    }
}

/// Remove the keys that depend on when the report was taken (utilisation and pause
/// fractions over the time served, timestamps of the window).
fn scrub(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|k, _| {
                !(k.contains("utilization")
                    || k.contains("fraction")
                    || k.ends_with("_bps")
                    || k == "sim_time_ps")
            });
            m.values_mut().for_each(scrub);
        }
        Value::Array(a) => a.iter_mut().for_each(scrub),
        _ => {}
    }
}

#[test]
#[ignore = "needs root, /dev/net/tun and iproute2, iputils-ping, iperf3, ethtool, util-linux (scripts/test)"]
fn show_against_nothing_and_a_metrics_address_in_use_are_one_line_errors() {
    let _serial = prerequisites();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let dir = std::env::temp_dir().join(format!("lossless-metrics-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("s.yaml");
    std::fs::write(
        &cfg,
        "switches:\n  - name: s\n    ports: {count: 1, tap_prefix: lmq}\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args([
            "tap",
            cfg.to_str().unwrap(),
            "--metrics",
            &addr,
            "--duration",
            "1s",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| !l.starts_with("warning:")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].contains(&format!("--metrics {addr}: the address is in use")),
        "{err}"
    );
    // No TAP was made: the address is checked first.
    assert!(!std::path::Path::new("/sys/class/net/lmq0").exists());
    drop(taken);
    let free = format!("127.0.0.1:{}", free_port());
    let o = show(&["pfc", "--from", &free]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("nothing is listening on {free}")),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The first line of what `addr` answers to `request` (bounded wait).
fn status_line(addr: &str, request: &[u8]) -> String {
    use std::io::Read;
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    // A server may answer (and close) before taking the whole request.
    let _ = s.write_all(request);
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    String::from_utf8_lossy(&got)
        .lines()
        .next()
        .unwrap_or("(nothing)")
        .to_string()
}

/// Kilobytes of `pid`'s peak resident memory (VmHWM).
fn peak_rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
#[ignore = "needs root, /dev/net/tun and iproute2, iputils-ping, iperf3, ethtool, util-linux (scripts/test)"]
fn no_client_can_hold_the_endpoint_and_malformed_requests_get_4xx() {
    let _serial = prerequisites();
    let addr = format!("127.0.0.1:{}", free_port());
    let spec = SwitchSpec::new(2, "1G");
    let lab = Lab::with("h", true, &spec, &["--metrics", &addr]);
    let pid = lab.switch.as_ref().unwrap().id();
    let scrape = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_eq!(status_line(&addr, scrape), "HTTP/1.1 200 OK");

    // 200 clients that send one byte of a request and then nothing more, and one that sends
    // a 200 MB request line.
    let slow: Vec<std::net::TcpStream> = (0..200)
        .map(|_| {
            let mut c = std::net::TcpStream::connect(&addr).unwrap();
            c.write_all(b"G").unwrap();
            c
        })
        .collect();
    let big = {
        let addr = addr.clone();
        std::thread::spawn(move || {
            let mut c = std::net::TcpStream::connect(&addr).unwrap();
            c.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
            let chunk = vec![b'a'; 1 << 20];
            let _ = c.write_all(b"GET /");
            let mut sent = 0usize;
            while sent < 200 << 20 {
                if c.write_all(&chunk).is_err() {
                    break; // the server closed it: the line is over its limit
                }
                sent += chunk.len();
            }
            sent
        })
    };
    // Meanwhile a scrape is answered at once (the switch hands a report over at most
    // 50 ms after it is asked; 1 s leaves room for a busy machine).
    let t = Instant::now();
    assert_eq!(status_line(&addr, scrape), "HTTP/1.1 200 OK");
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    let sent = big.join().unwrap();
    assert!(sent < 200 << 20, "the 200 MB line was read whole");
    let t = Instant::now();
    assert_eq!(status_line(&addr, scrape), "HTTP/1.1 200 OK");
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    drop(slow);
    let peak = peak_rss_kb(pid);
    assert!(peak < 64 * 1024, "peak resident memory {peak} kB");

    // Malformed requests get a 4xx, never silence or a 200.
    for (request, want) in [
        (&b"\x00\xff\xfegarbage\r\n\r\n"[..], "400"),
        (b"GET /\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n", "400"),
        (b"GET /metrics\r\n\r\n", "400"),
        (b"GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n", "404"),
    ] {
        let got = status_line(&addr, request);
        assert!(
            got.starts_with(&format!("HTTP/1.1 {want}")),
            "{:?}: {got}",
            String::from_utf8_lossy(request)
        );
    }
    // A 10 MB POST is read and answered 405, not reset.
    let mut post = format!(
        "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n",
        10_000_000
    )
    .into_bytes();
    post.extend(std::iter::repeat_n(b'x', 10_000_000));
    assert_eq!(status_line(&addr, &post), "HTTP/1.1 405 Method Not Allowed");
    assert!(peak_rss_kb(pid) < 64 * 1024);
    drop(lab);
}
