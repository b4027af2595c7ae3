//! A lab of network namespaces around one `lossless tap` process, for the TAP tests: the
//! switch's ports are TAPs it creates (moved into the hosts' namespaces), or — as
//! containerlab wires a node — veth pairs with one end `eth1…ethN` in the switch's own
//! namespace and the other in each host's.
//!
//! Every lab makes its own uniquely named namespaces (pid in the name), uses addresses in
//! 198.18.0.0/15 only, sends traffic only between those namespaces, bounds every wait in
//! time, and removes what it made (namespaces, processes it started, by pid) in `Drop` (the
//! project's `lossless::netlab`, which `lossless bench tap` builds its labs with too), even
//! when a test fails. The tests need root, /dev/net/tun, ping and iperf3: they are
//! `#[ignore]`d for a plain `cargo test` and fail, saying what is missing, when run
//! without them (`scripts/test` installs them).
//!
//! A lab normally runs with a [`Hog`]: a busy loop on every core, so that what the tests
//! assert (nothing lost, rates held) holds on a machine that is busy, not just an idle one.

use lossless::netlab::{self, HostLink, NetLab};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;

use super::procs::Hog;
use std::time::{Duration, Instant};

pub use lossless::netlab::SINK_MAC;

/// TAP tests share the machine's two cores; run them one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// The lab's lock (TAP tests run one at a time), once what a lab needs is here: root,
/// /dev/net/tun and the programs it runs. Missing any is a failure that says which: these
/// tests are `#[ignore]`d for a plain `cargo test` ([`super::needs`]).
pub fn prerequisites() -> std::sync::MutexGuard<'static, ()> {
    if let Some(why) = netlab::missing(&["ip", "ping", "iperf3", "nsenter", "ethtool"]) {
        panic!(
            "this TAP test cannot run: {why} (scripts/test installs what it needs; run it as root)"
        );
    }
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Run `args`, panicking only if it cannot be started.
pub fn sh(args: &[&str]) -> Output {
    netlab::output(args).unwrap_or_else(|e| panic!("{e}"))
}

/// Run `args`, which must succeed.
pub fn must(args: &[&str]) {
    netlab::sh(args).unwrap_or_else(|e| panic!("{e}"));
}

/// The switch a lab runs: `ports` ports at `speed`, priority 3 lossless with the headroom
/// the TAP cable needs, a static FDB entry for [`SINK_MAC`] on port 0, and `forwarding`
/// extra keys (e.g. `fdb_aging: 1s`).
pub struct SwitchSpec<'a> {
    /// Ports.
    pub ports: usize,
    /// Speed of each.
    pub speed: &'a str,
    /// Pipeline latency.
    pub pipeline_latency: &'a str,
    /// Extra keys of `forwarding:` (", key: value" form), or "".
    pub forwarding: &'a str,
    /// Extra keys of `qos:` (", key: value" form), or "".
    pub qos: &'a str,
    /// Ports are existing veth ends (`iface: ethN`) in the switch's own namespace, not
    /// TAPs.
    pub veth: bool,
    /// The lossless PG's profile (priority 3).
    pub pg_lossless: &'a str,
    /// A `p4:` map (`{program: …, entries: …}`) run in place of `forwarding:`, or "".
    pub p4: &'a str,
}

/// The lossless PG's profile of a lab switch: XOFF when the PG holds a quarter of the
/// pool's free space, headroom for any TAP cable.
pub const PG_LOSSLESS: &str =
    "{pool: ingress_lossless_pool, dynamic_th: -2, xoff: 1.7MB, xon_offset: 64KB}";

impl SwitchSpec<'static> {
    /// `ports` ports at `speed`, a 2 µs pipeline, nothing extra.
    pub fn new(ports: usize, speed: &'static str) -> SwitchSpec<'static> {
        SwitchSpec {
            ports,
            speed,
            pipeline_latency: "2us",
            forwarding: "",
            qos: "",
            veth: false,
            pg_lossless: PG_LOSSLESS,
            p4: "",
        }
    }

    /// `ports` veth ports at `speed`, a 2 µs pipeline.
    pub fn veth(ports: usize, speed: &'static str) -> SwitchSpec<'static> {
        SwitchSpec {
            veth: true,
            ..SwitchSpec::new(ports, speed)
        }
    }
}

/// A lab of namespaces around one `lossless tap` process.
pub struct Lab {
    /// Unique tag (prefix of every name).
    pub tag: String,
    /// Its namespaces and the processes it started (both removed on drop).
    pub net: NetLab,
    /// The switch process.
    pub switch: Option<Child>,
    /// Its temp directory.
    pub dir: PathBuf,
    /// Ports are veth pairs, the switch in its own namespace.
    pub veth: bool,
    _hog: Option<Hog>,
}

impl Lab {
    /// An empty lab; with `hog`, a busy loop on every core while it lives.
    pub fn new(tag: &str, hog: bool) -> Lab {
        let net = NetLab::new(tag);
        let tag = net.tag().to_string();
        let dir = std::env::temp_dir().join(format!("lossless-tap-{tag}"));
        std::fs::create_dir_all(&dir).unwrap();
        Lab {
            tag,
            net,
            switch: None,
            dir,
            veth: false,
            _hog: hog.then(Hog::start),
        }
    }

    /// A lab (with a hog) of a `ports`-port switch at `speed` and a host on every port.
    pub fn with_hosts(tag: &str, ports: usize, speed: &str, pipeline_latency: &str) -> Lab {
        let spec = SwitchSpec {
            ports,
            speed,
            pipeline_latency,
            forwarding: "",
            qos: "",
            veth: false,
            pg_lossless: PG_LOSSLESS,
            p4: "",
        };
        Lab::with(tag, true, &spec, &[])
    }

    /// A lab of switch `spec` (run with `args` besides the defaults), a host on every
    /// port, with or without a hog. Veth ports exist before the switch starts (as
    /// containerlab makes them); TAPs are made by the switch and then moved to the hosts.
    pub fn with(tag: &str, hog: bool, spec: &SwitchSpec, args: &[&str]) -> Lab {
        let mut lab = Lab::new(tag, hog);
        lab.veth = spec.veth;
        if spec.veth {
            lab.add_switch_namespace();
            for i in 0..spec.ports {
                lab.add_host(i);
            }
            lab.start_switch(spec, args);
        } else {
            lab.start_switch(spec, args);
            for i in 0..spec.ports {
                lab.add_host(i);
            }
        }
        lab
    }

    /// The switch's namespace (veth labs): IPv6 off, so that its kernel sends nothing of
    /// its own out of the ports.
    fn add_switch_namespace(&mut self) {
        let ns = self.switch_ns();
        self.add_namespace(&ns);
    }

    /// A namespace `ns` this lab deletes: IPv6 off, so that its kernel sends nothing of
    /// its own, and loopback up.
    pub fn add_namespace(&mut self, ns: &str) {
        self.net.add_namespace(ns).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Run `args` in namespace `ns`, which must succeed.
    pub fn must_in(ns: &str, args: &[&str]) {
        netlab::sh_in(ns, args).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Start `lossless tap CFG --quiet --json REPORT` in namespace `ns` (`ip netns exec`
    /// execs it: the handle's pid is the switch's); its handle.
    pub fn spawn_tap(&mut self, ns: &str, cfg: &Path, report: &Path) -> usize {
        let (cfg, report) = (cfg.to_str().unwrap(), report.to_str().unwrap());
        let bin = env!("CARGO_BIN_EXE_lossless");
        self.spawn_in(ns, &[bin, "tap", cfg, "--quiet", "--json", report])
    }

    /// SIGTERM process `k` (by pid) and wait, at most `limit`, for it to exit cleanly;
    /// its stderr.
    pub fn terminate(&mut self, k: usize, limit: Duration) -> String {
        must(&["kill", "-TERM", &self.proc(k).id().to_string()]);
        exit_cleanly(self.proc(k), limit, &format!("process {k}"))
    }

    /// The process of handle `k`.
    pub fn proc(&mut self, k: usize) -> &mut Child {
        self.net.child(k)
    }

    /// Namespace of the switch (veth labs).
    pub fn switch_ns(&self) -> String {
        self.net.switch_ns()
    }

    /// The switch's interface of port `i` (veth labs), as containerlab names it.
    pub fn switch_iface(i: usize) -> String {
        format!("eth{}", i + 1)
    }

    /// Namespace of host `i`.
    pub fn ns(&self, i: usize) -> String {
        self.net.ns(i)
    }

    /// TAP of port `i` (in veth labs, host `i`'s end of its veth pair).
    pub fn tap(&self, i: usize) -> String {
        self.net.dev(i)
    }

    /// Address of host `i`.
    pub fn ip(i: usize) -> String {
        netlab::host_ip(i)
    }

    /// Where the switch writes its JSON report.
    pub fn report_path(&self) -> PathBuf {
        self.dir.join("report.json")
    }

    /// Start `lossless tap` on switch `spec` with `args`; wait for its TAPs, or for its
    /// sockets on the veth ports.
    pub fn start_switch(&mut self, spec: &SwitchSpec, args: &[&str]) {
        let ports = if spec.veth {
            let list: Vec<String> = (0..spec.ports)
                .map(|i| {
                    format!(
                        "{{iface: {}, speed: {}, mtu: 1518}}",
                        Lab::switch_iface(i),
                        spec.speed
                    )
                })
                .collect();
            format!("[{}]", list.join(", "))
        } else {
            format!(
                "{{count: {}, speed: {}, mtu: 1518, tap_prefix: {}t}}",
                spec.ports, spec.speed, self.tag
            )
        };
        let cfg = format!(
            "# test switch\nswitches:\n  - name: vsw\n    ports: {ports}\n    pipeline_latency: {}\n\
             \x20   buffer:\n      pools:\n        ingress_lossless_pool: {{type: ingress, size: 8MB}}\n        ingress_lossy_pool: {{type: ingress, size: 1MB}}\n\
             \x20       egress_lossless_pool: {{type: egress, size: 16MB, mode: static}}\n        egress_lossy_pool: {{type: egress, size: 1MB}}\n\
             \x20     profiles:\n        pg_lossless: {}\n\
             \x20       q_lossless: {{pool: egress_lossless_pool, static_th: 16MB}}\n      pg: {{\"3\": pg_lossless}}\n      queue: {{\"3\": q_lossless}}\n\
             \x20   qos: {{pfc_enable: [3]{}}}\n\
             \x20   {}\n",
            spec.pipeline_latency,
            spec.pg_lossless,
            spec.qos,
            match spec.p4 {
                "" => format!(
                    "forwarding: {{mode: l2, fdb: [{{mac: \"{SINK_MAC}\", port: Ethernet0}}]{}}}",
                    spec.forwarding
                ),
                p4 => format!("p4: {p4}"),
            }
        );
        let path = self.dir.join("switch.yaml");
        std::fs::write(&path, cfg).unwrap();
        let report = self.report_path();
        let mut cmd = if spec.veth {
            // `ip netns exec` execs the switch itself: the child's pid is the switch's.
            let mut c = Command::new("ip");
            c.args([
                "netns",
                "exec",
                &self.switch_ns(),
                env!("CARGO_BIN_EXE_lossless"),
            ]);
            c
        } else {
            Command::new(env!("CARGO_BIN_EXE_lossless"))
        };
        let child = cmd
            .args(["tap", path.to_str().unwrap(), "--quiet", "--json"])
            .arg(report)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        self.switch = Some(child);
        let limit = Duration::from_secs(10);
        if spec.veth {
            // One packet socket per port, bound, listed by the switch's namespace: a host that
            // sent before the bind would be counted by the kernel and never read.
            netlab::wait_for_bound_sockets(&self.switch_ns(), spec.ports, limit)
                .unwrap_or_else(|e| panic!("the switch did not attach to its interfaces: {e}"));
            return;
        }
        let taps: Vec<String> = (0..spec.ports).map(|i| self.tap(i)).collect();
        netlab::wait_for_devices(&taps, limit)
            .unwrap_or_else(|e| panic!("TAP devices did not appear: {e}"));
    }

    /// Packet sockets bound to an interface in namespace `ns` (a switch's, in veth labs).
    pub fn packet_sockets(ns: &str) -> usize {
        netlab::bound_sockets(ns).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Namespace i with TAP i moved in (or the host end of veth pair i, whose other end is
    /// the switch's `eth(i+1)`), addressed 198.18.0.(i+1)/24, IPv6 off. Offloads stay as
    /// Linux sets them (checksum and segmentation on), as a container's are.
    pub fn add_host(&mut self, i: usize) {
        let link = match self.veth {
            true => HostLink::Veth {
                ns: self.switch_ns(),
                peer: Lab::switch_iface(i),
            },
            false => HostLink::Move,
        };
        self.net
            .add_host(i, &link)
            .unwrap_or_else(|e| panic!("{e}"));
    }

    /// Set host `i`'s side of its TAP `up` or `down`, as the host would.
    pub fn set_host_link(&self, i: usize, state: &str) {
        let tap = self.tap(i);
        let o = self.exec(i, &["ip", "link", "set", &tap, state]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }

    /// Delete host `i`'s namespace (and with it its TAP).
    pub fn delete_host(&mut self, i: usize) {
        let ns = self.ns(i);
        self.net
            .delete_namespace(&ns)
            .unwrap_or_else(|e| panic!("{e}"));
    }

    /// Run `args` in host `i`'s namespace.
    pub fn exec(&self, i: usize, args: &[&str]) -> Output {
        self.net.output(i, args).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Start `args` in host `i`'s namespace; returns its handle.
    pub fn spawn(&mut self, i: usize, args: &[&str]) -> usize {
        self.spawn_in(&self.ns(i), args)
    }

    /// Start `args` in namespace `ns`; returns its handle.
    pub fn spawn_in(&mut self, ns: &str, args: &[&str]) -> usize {
        self.net
            .spawn_in(ns, args, true)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Wait (bounded) for a spawned process and return its stdout.
    pub fn wait(&mut self, k: usize, limit: Duration) -> String {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(_status) = self.proc(k).try_wait().unwrap() {
                let mut out = String::new();
                if let Some(mut s) = self.proc(k).stdout.take() {
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

    /// Ping host `to` from host `from` `count` times, `interval` s apart; the loss in %.
    pub fn ping(&self, from: usize, to: usize, count: u32, interval: &str) -> f64 {
        self.net
            .ping(from, to, count, interval)
            .unwrap_or_else(|e| panic!("{e}"))
            .loss_percent
    }

    /// Send `sig` to the switch (by pid).
    pub fn signal_switch(&self, sig: &str) {
        let pid = self
            .switch
            .as_ref()
            .expect("switch running")
            .id()
            .to_string();
        must(&["kill", &format!("-{sig}"), &pid]);
    }

    /// Stop the switch with `sig`, wait for a clean exit, return its JSON report.
    pub fn stop_switch_with(&mut self, sig: &str) -> Value {
        self.signal_switch(sig);
        let mut child = self.switch.take().expect("switch running");
        exit_cleanly(
            &mut child,
            Duration::from_secs(10),
            &format!("switch (SIG{sig})"),
        );
        serde_json::from_str(&std::fs::read_to_string(self.report_path()).unwrap()).unwrap()
    }

    /// SIGTERM the switch, wait for a clean exit, return its JSON report.
    pub fn stop_switch(&mut self) -> Value {
        self.stop_switch_with("TERM")
    }

    /// iperf3 client in namespace `from` toward a one-off server in `to`, with the
    /// client's `extra` arguments (`--tos 12`); Gbit/s received.
    pub fn iperf3_tcp(
        &mut self,
        from: usize,
        to: usize,
        port: u16,
        secs: u32,
        extra: &[&str],
    ) -> f64 {
        let r = self.net.iperf3_tcp(from, to, port, secs, extra);
        r.unwrap_or_else(|e| panic!("{e}"))
    }

    /// Start `lossless gen` in host `i`'s namespace toward [`SINK_MAC`] with `args` added.
    pub fn gen(&mut self, i: usize, args: &[&str]) -> usize {
        let (iface, dst) = (self.tap(i), format!("{SINK_MAC}/{}", Lab::ip(0)));
        let src = Lab::ip(i);
        let mut full = vec![
            env!("CARGO_BIN_EXE_lossless"),
            "gen",
            "--iface",
            &iface,
            "--dst",
            &dst,
            "--src-ip",
            &src,
        ];
        full.extend_from_slice(args);
        self.spawn(i, &full)
    }
}

impl Drop for Lab {
    /// The switch ends here; the processes the lab started and its namespaces go with
    /// `net`.
    fn drop(&mut self) {
        if let Some(mut s) = self.switch.take() {
            let _ = s.kill();
            let _ = s.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Wait, at most `limit`, for `child` to exit, and require a clean exit; its stderr.
fn exit_cleanly(child: &mut Child, limit: Duration, what: &str) -> String {
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "{what} did not stop in {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        std::io::Read::read_to_string(&mut e, &mut err).unwrap();
    }
    assert!(status.success(), "{what} exited with {status}: {err}");
    err
}

/// The loss in % that ping printed.
pub fn loss_percent(ping: &Output) -> f64 {
    netlab::Ping::parse(&String::from_utf8_lossy(&ping.stdout))
        .unwrap_or_else(|e| panic!("{e}"))
        .loss_percent
}
