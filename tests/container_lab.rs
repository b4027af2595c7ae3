//! The container image wired as containerlab wires a node, without containerlab: the image
//! built with podman (scripts/container-image.sh, nothing fetched), started with
//! `--network none`, then veth pairs made with one end in the container's network
//! namespace as `eth1`, `eth2` (what containerlab does) and the other in a host namespace
//! each (the TAP tests' harness, `lossless::netlab`). Ping, iperf3 and an injected PFC frame cross it; its counters are read
//! live (inside its namespace) and must equal the report it writes when stopped.
//!
//! Addresses are in 198.18.0.0/15; the guard removes the container, the image and the
//! namespaces even when the test fails. Without root or podman the test says so and skips,
//! except in CI, where it must run (.ci/run installs podman and runc).

mod common;

use common::lab::{loss_percent, must, sh};
use lossless::netlab::{self, HostLink, NetLab};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// What the container test needs, or why it cannot run.
fn missing() -> Option<String> {
    let id = sh(&["id", "-u"]);
    if String::from_utf8_lossy(&id.stdout).trim() != "0" {
        return Some("not root".into());
    }
    for tool in [
        "podman", "runc", "ip", "nsenter", "ping", "iperf3", "curl", "ethtool",
    ] {
        if !sh(&["sh", "-c", &format!("command -v {tool}")])
            .status
            .success()
        {
            return Some(format!("`{tool}` is not installed"));
        }
    }
    None
}

/// A container of the image with its hosts; removes all of it on drop (the container and
/// the image here, then the hosts' namespaces and the container's name for its own with
/// `net`).
struct Node {
    dir: PathBuf,
    conf: PathBuf,
    image: String,
    container: String,
    /// The hosts, host `i - 1` on the container's `eth{i}`; the container's namespace is
    /// [`NetLab::switch_ns`] once it runs.
    net: NetLab,
}

impl Node {
    /// podman with this test's settings: runc, cgroupfs, no default ulimits (what this
    /// machine's podman needs), from a containers.conf of its own.
    fn podman(&self, args: &[&str]) -> std::process::Output {
        Command::new("podman")
            .env("CONTAINERS_CONF", &self.conf)
            .args(["--runtime", "runc", "--cgroup-manager", "cgroupfs"])
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("podman {args:?}: {e}"))
    }

    fn podman_ok(&self, args: &[&str]) -> String {
        let o = self.podman(args);
        assert!(
            o.status.success(),
            "podman {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }

    fn pid(&self) -> String {
        self.podman_ok(&["inspect", "-f", "{{.State.Pid}}", &self.container])
    }

    fn logs(&self) -> String {
        let o = self.podman(&["logs", &self.container]);
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    }

    /// Run `args` inside the container's network namespace (tools of this machine).
    fn in_node(&self, args: &[&str]) -> std::process::Output {
        netlab::output_in(&self.net.switch_ns(), args).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Run `args` in the namespace of the host on the container's `eth{i}`.
    fn in_host(&self, i: usize, args: &[&str]) -> std::process::Output {
        self.net
            .output(i - 1, args)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Give the running container's namespace a name, as `ip netns` sees it, so that hosts
    /// can be linked to it.
    fn name_namespace(&mut self) {
        let (ns, pid) = (self.net.switch_ns(), self.pid());
        self.net
            .attach_namespace(&ns, &pid)
            .unwrap_or_else(|e| panic!("{e}"));
    }

    /// Link `eth{i}` of the container to a host of its own (198.18.0.i/24), as
    /// containerlab does: a veth pair with one end in the container's namespace, `eth{i}`.
    fn link(&mut self, i: usize) {
        let link = HostLink::Veth {
            ns: self.net.switch_ns(),
            peer: format!("eth{i}"),
        };
        self.net
            .add_host(i - 1, &link)
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.podman(&["rm", "-f", "-t", "2", &self.container]);
        let _ = self.podman(&["rmi", "-f", &self.image]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn wait_for(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !ok() {
        assert!(
            Instant::now() < deadline,
            "{what} did not happen in {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Build the image from the binary under test, with the script users run.
fn build_image(node: &Node) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/container-image.sh");
    let o = Command::new(script)
        .arg(&node.image)
        .env("BIN", env!("CARGO_BIN_EXE_lossless"))
        .env("CONTAINERS_CONF", &node.conf)
        .env("ENGINE", "podman")
        .env("PODMAN_OPTS", "--runtime runc --cgroup-manager cgroupfs")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "image build: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The node's switch file: two 1G interface ports, priority 3 lossless.
fn write_switch(dir: &std::path::Path) {
    std::fs::write(
        dir.join("cfg/switch.yaml"),
        "# containerlab node: the links arrive as eth1, eth2\nswitches:\n  - name: clab-sw\n    \
         ports: [{iface: eth1, speed: 1G, mtu: 1518}, {iface: eth2, speed: 1G, mtu: 1518}]\n    \
         buffer:\n      pools:\n        ingress_lossless_pool: {type: ingress, size: 8MB}\n        \
         egress_lossless_pool: {type: egress, size: 8MB, mode: static}\n      profiles:\n        \
         pg_lossless: {pool: ingress_lossless_pool, dynamic_th: -2, xoff: 1.7MB, xon_offset: 64KB}\n        \
         q_lossless: {pool: egress_lossless_pool, static_th: 8MB}\n      pg: {\"3\": pg_lossless}\n      \
         queue: {\"3\": q_lossless}\n    qos: {pfc_enable: [3]}\n    forwarding: {mode: l2}\n",
    )
    .unwrap();
}

/// Build the image, write the node's switch file and start the container with no network,
/// as containerlab starts a node before it plugs the links in.
fn start_node() -> Node {
    let net = NetLab::new("k");
    let tag = net.tag().to_string();
    let dir = std::env::temp_dir().join(format!("lossless-container-{tag}"));
    std::fs::create_dir_all(dir.join("cfg")).unwrap();
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let conf = dir.join("containers.conf");
    std::fs::write(
        &conf,
        "[containers]\ndefault_ulimits = []\n[engine]\nruntime = \"runc\"\ncgroup_manager = \"cgroupfs\"\nevents_logger = \"file\"\n",
    )
    .unwrap();
    let mut node = Node {
        image: format!("localhost/lossless-test:{tag}"),
        container: format!("lossless-test-{tag}"),
        dir: dir.clone(),
        conf: conf.clone(),
        net,
    };
    build_image(&node);
    write_switch(&dir);
    let cfg = format!("{}:/etc/lossless:ro", dir.join("cfg").display());
    let out = format!("{}:/out", dir.join("out").display());
    node.podman_ok(&[
        "run",
        "-d",
        "--name",
        &node.container.clone(),
        "--network",
        "none",
        "--cap-add",
        "NET_ADMIN,NET_RAW",
        // The node's own kernel stays quiet on its ports (no IPv6 neighbour discovery).
        "--sysctl",
        "net.ipv6.conf.all.disable_ipv6=1",
        "-e",
        "CLAB_INTFS=2",
        "-v",
        &cfg,
        "-v",
        &out,
        &node.image.clone(),
        "--wait-for-interfaces",
        "60s",
        "--metrics",
        "127.0.0.1:9464",
        "--json",
        "/out/report.json",
    ]);
    node.name_namespace();
    node
}

#[test]
#[ignore = "needs root and podman, runc, iproute2, util-linux, iputils-ping, iperf3, curl, ethtool (scripts/test)"]
fn the_image_serves_veths_plugged_in_as_containerlab_plugs_them() {
    if let Some(why) = missing() {
        panic!("this container test cannot run: {why} (scripts/test installs what it needs)");
    }
    let mut node = start_node();
    let dir = node.dir.clone();
    // It waits for its links before serving.
    wait_for("the wait message", Duration::from_secs(20), || {
        node.logs().contains("waiting for eth1, eth2")
    });
    node.link(1);
    node.link(2);
    wait_for("serving", Duration::from_secs(20), || {
        node.logs().contains("serving iface eth1, iface eth2")
    });
    let ping = node.net.ping(0, 1, 50, "0.01").unwrap();
    assert_eq!(ping.loss_percent, 0.0, "{}", node.logs());
    let gbps = node.net.iperf3_tcp(0, 1, 5201, 2, &[]).unwrap();
    eprintln!("iperf3 TCP through the container's 1G ports: {gbps:.3} Gbit/s");
    assert!(gbps > 0.5, "{gbps} Gbit/s");
    // A PFC frame from host 1 is counted on eth1 (Ethernet0), priority 3.
    let bin = env!("CARGO_BIN_EXE_lossless");
    let h1 = node.net.dev(0);
    let o = node.in_host(
        1,
        &[
            bin, "send-pfc", "--iface", &h1, "--prio", "3", "--quanta", "100", "--count", "3",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::thread::sleep(Duration::from_millis(300));
    // Live: the Prometheus endpoint inside the node's namespace, and `lossless show` in it.
    let metrics = String::from_utf8_lossy(
        &node
            .in_node(&[
                "curl",
                "-s",
                "--max-time",
                "5",
                "http://127.0.0.1:9464/metrics",
            ])
            .stdout,
    )
    .to_string();
    let rx_pfc =
        "lossless_pfc_rx_frames_total{switch=\"clab-sw\",port=\"Ethernet0\",priority=\"3\"} 3";
    assert!(metrics.contains(rx_pfc), "{metrics}");
    let show = node.podman_ok(&[
        "exec",
        &node.container.clone(),
        "/lossless",
        "show",
        "pfc",
        "--from",
        "127.0.0.1:9464",
    ]);
    assert!(show.contains("PFC Rx"), "{show}");
    let live: Value = serde_json::from_slice(
        &node
            .in_node(&[
                "curl",
                "-s",
                "--max-time",
                "5",
                "http://127.0.0.1:9464/json",
            ])
            .stdout,
    )
    .unwrap();
    // Stopped as containerlab stops it (SIGTERM): the report is written on the way out.
    node.podman_ok(&["stop", "-t", "10", &node.container.clone()]);
    let r: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("out/report.json"))
            .unwrap_or_else(|e| panic!("no report: {e}\n{}", node.logs())),
    )
    .unwrap();
    let (lp, fp) = (&live["switches"][0]["ports"], &r["switches"][0]["ports"]);
    for i in 0..2 {
        for k in ["rx_packets", "tx_packets", "rx_bytes", "tx_bytes"] {
            assert_eq!(u(&lp[i][k]), u(&fp[i][k]), "port {i} {k}");
        }
        assert_eq!(lp[i]["pfc"]["rx_xoff"], fp[i]["pfc"]["rx_xoff"]);
    }
    assert_eq!(u(&fp[0]["pfc"]["rx_xoff"][3]), 3);
    for k in ["read_frames", "written_frames"] {
        assert_eq!(u(&live["tap"][k]), u(&r["tap"][k]), "{k}");
    }
    assert_eq!(r["totals"]["lossless_drops"], 0);
    common::ledger::assert_accounted(&r);
}

/// A containerlab `linux` node of the example, started as containerlab starts one.
struct ClabNode {
    name: String,
    container: String,
    /// Interfaces its links give it.
    links: usize,
}

/// The example's lab (deploy/containerlab/lossless.clab.yml) deployed as containerlab
/// deploys it — its nodes started from the images this repository builds, with their
/// sysctls, binds and CLAB_INTFS, no network of their own; then each link a veth pair
/// between two nodes' namespaces, named as its endpoints say, at its MTU; then each node's
/// `exec` commands — with podman and nothing fetched. (containerlab's management network,
/// `eth0` on every node, is left out: it carries no lab traffic.) Removes everything on drop.
struct ClabLab {
    conf: PathBuf,
    images: Vec<String>,
    nodes: Vec<ClabNode>,
}

impl ClabLab {
    fn podman(&self, args: &[&str]) -> std::process::Output {
        Command::new("podman")
            .env("CONTAINERS_CONF", &self.conf)
            .args(["--runtime", "runc", "--cgroup-manager", "cgroupfs"])
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("podman {args:?}: {e}"))
    }

    fn podman_ok(&self, args: &[&str]) -> String {
        let o = self.podman(args);
        assert!(
            o.status.success(),
            "podman {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }

    fn container(&self, node: &str) -> String {
        self.nodes
            .iter()
            .find(|n| n.name == node)
            .unwrap_or_else(|| panic!("no node {node}"))
            .container
            .clone()
    }

    fn pid(&self, node: &str) -> String {
        self.podman_ok(&["inspect", "-f", "{{.State.Pid}}", &self.container(node)])
    }

    fn exec(&self, node: &str, args: &[&str]) -> std::process::Output {
        let c = self.container(node);
        let mut full = vec!["exec", c.as_str()];
        full.extend_from_slice(args);
        self.podman(&full)
    }

    fn logs(&self, node: &str) -> String {
        let o = self.podman(&["logs", &self.container(node)]);
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    }
}

impl Drop for ClabLab {
    fn drop(&mut self) {
        for n in &self.nodes {
            let _ = self.podman(&["rm", "-f", "-t", "2", &n.container]);
        }
        for i in &self.images {
            let _ = self.podman(&["rmi", "-f", i]);
        }
        if let Some(d) = self.conf.parent() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// Build image `tag` with the script users run (`--host` for the hosts' image).
fn build_with_script(conf: &std::path::Path, host: bool, tag: &str) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/container-image.sh");
    let mut cmd = Command::new(script);
    if host {
        cmd.arg("--host");
    }
    let o = cmd
        .arg(tag)
        .env("BIN", env!("CARGO_BIN_EXE_lossless"))
        .env("ENGINE", "podman")
        .env("CONTAINERS_CONF", conf)
        .env("ENGINE_OPTS", "--runtime runc --cgroup-manager cgroupfs")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "image build: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Deploy the example as containerlab would (see [`ClabLab`]).
fn deploy_example() -> ClabLab {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let clab_dir = root.join("deploy/containerlab");
    let topo: Value = serde_saphyr::from_str(
        &std::fs::read_to_string(clab_dir.join("lossless.clab.yml")).unwrap(),
    )
    .unwrap();
    let tag = format!("x{}", std::process::id() % 100_000);
    let dir = std::env::temp_dir().join(format!("lossless-clab-{tag}"));
    std::fs::create_dir_all(&dir).unwrap();
    let conf = dir.join("containers.conf");
    std::fs::write(
        &conf,
        "[containers]\ndefault_ulimits = []\n[engine]\nruntime = \"runc\"\ncgroup_manager = \"cgroupfs\"\nevents_logger = \"file\"\n",
    )
    .unwrap();
    // The images the file names, built under names of this test's own.
    let mut lab = ClabLab {
        conf: conf.clone(),
        images: Vec::new(),
        nodes: Vec::new(),
    };
    let nodes = topo["topology"]["nodes"].as_object().unwrap();
    let links = topo["topology"]["links"].as_array().unwrap();
    let mut renamed = std::collections::BTreeMap::new();
    for n in nodes.values() {
        let image = n["image"].as_str().unwrap().to_string();
        if renamed.contains_key(&image) {
            continue;
        }
        let local = format!("localhost/{}-{tag}", image.replace(':', "-"));
        build_with_script(&conf, image.starts_with("lossless-host"), &local);
        lab.images.push(local.clone());
        renamed.insert(image, local);
    }
    let lab_name = topo["name"].as_str().unwrap();
    let ends = |node: &str| {
        links
            .iter()
            .flat_map(|l| l["endpoints"].as_array().unwrap())
            .filter(|e| e.as_str().unwrap().split(':').next() == Some(node))
            .count()
    };
    for (name, n) in nodes {
        assert_eq!(n["kind"], "linux", "{name}: the test deploys linux nodes");
        let container = format!("clab-{lab_name}-{name}-{tag}");
        let mut args: Vec<String> = [
            "run",
            "-d",
            "--name",
            &container,
            "--hostname",
            name,
            "--network",
            "none",
            "--cap-add",
            "NET_ADMIN,NET_RAW",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(["-e".into(), format!("CLAB_INTFS={}", ends(name))]);
        for (k, v) in n["sysctls"].as_object().into_iter().flatten() {
            args.extend(["--sysctl".into(), format!("{k}={v}")]);
        }
        for b in n["binds"].as_array().into_iter().flatten() {
            let b = b.as_str().unwrap();
            // Relative host paths are the topology file's directory's.
            let (host, rest) = b.split_once(':').unwrap();
            args.extend([
                "-v".into(),
                format!("{}:{rest}", clab_dir.join(host).display()),
            ]);
        }
        args.push(renamed[n["image"].as_str().unwrap()].clone());
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        lab.podman_ok(&argv);
        lab.nodes.push(ClabNode {
            name: name.clone(),
            container,
            links: ends(name),
        });
    }
    // The links, once every node runs.
    for (k, l) in links.iter().enumerate() {
        let e: Vec<&str> = l["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        let (a, b) = (e[0].split_once(':').unwrap(), e[1].split_once(':').unwrap());
        let mtu = l["mtu"].as_u64().unwrap_or(9500).to_string();
        let (ta, tb) = (format!("{tag}a{k}"), format!("{tag}b{k}"));
        let (pa, pb) = (lab.pid(a.0), lab.pid(b.0));
        must(&[
            "ip", "link", "add", &ta, "netns", &pa, "type", "veth", "peer", "name", &tb, "netns",
            &pb,
        ]);
        for (pid, tmp, name) in [(&pa, &ta, a.1), (&pb, &tb, b.1)] {
            must(&[
                "nsenter", "-t", pid, "-n", "ip", "link", "set", tmp, "name", name,
            ]);
            must(&[
                "nsenter", "-t", pid, "-n", "ip", "link", "set", name, "mtu", &mtu,
            ]);
            must(&["nsenter", "-t", pid, "-n", "ip", "link", "set", name, "up"]);
        }
    }
    // Each node's exec commands, split into words as containerlab runs them.
    for (name, n) in nodes {
        for cmd in n["exec"].as_array().into_iter().flatten() {
            let words: Vec<&str> = cmd.as_str().unwrap().split_whitespace().collect();
            let o = lab.exec(name, &words);
            assert!(
                o.status.success(),
                "{name}: `{}`: {}",
                words.join(" "),
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
    lab
}

#[test]
#[ignore = "needs root and podman, runc, iproute2, util-linux, iputils-ping, iperf3, curl, ethtool (scripts/test)"]
fn the_containerlab_example_deploys_offline_with_the_repositorys_images() {
    if let Some(why) = missing() {
        panic!("this container test cannot run: {why} (scripts/test installs what it needs)");
    }
    let lab = deploy_example();
    assert_eq!(lab.nodes.iter().filter(|n| n.links > 0).count(), 4);
    wait_for("serving", Duration::from_secs(30), || {
        lab.logs("sw")
            .contains("serving iface eth1, iface eth2, iface eth3")
    });
    for (from, to) in [
        ("h1", "198.18.0.2"),
        ("h3", "198.18.0.1"),
        ("h2", "198.18.0.3"),
    ] {
        let o = lab.exec(from, &["ping", "-c", "20", "-i", "0.05", "-W", "1", to]);
        assert_eq!(loss_percent(&o), 0.0, "{from} → {to}: {}", lab.logs("sw"));
    }
    // TCP at the links' MTU crosses the switch's 1G ports (the host image's iperf3).
    let srv = lab.container("h2");
    let server = Command::new("podman")
        .env("CONTAINERS_CONF", &lab.conf)
        .args(["--runtime", "runc", "--cgroup-manager", "cgroupfs"])
        .args(["exec", &srv, "iperf3", "-s", "-1", "-B", "198.18.0.2"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut server = common::procs::Reaper(Some(server));
    std::thread::sleep(Duration::from_millis(500));
    let c = lab.exec("h1", &["iperf3", "-c", "198.18.0.2", "-t", "2", "-J"]);
    let v: Value = serde_json::from_slice(&c.stdout)
        .unwrap_or_else(|_| panic!("iperf3: {}", String::from_utf8_lossy(&c.stderr)));
    let gbps = v["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap()
        / 1e9;
    server.wait(Duration::from_secs(10));
    eprintln!("iperf3 TCP h1 → h2 in the containerlab example: {gbps:.3} Gbit/s");
    assert!(gbps > 0.5, "{gbps} Gbit/s");
    // The README's command: the switch's tables from inside its node.
    let show = lab.podman_ok(&[
        "exec",
        &lab.container("sw"),
        "/lossless",
        "show",
        "queue",
        "--from",
        "127.0.0.1:9464",
    ]);
    assert!(show.contains("Egress queues"), "{show}");
    let ledger = lab.podman_ok(&[
        "exec",
        &lab.container("sw"),
        "/lossless",
        "show",
        "ledger",
        "--from",
        "127.0.0.1:9464",
    ]);
    // Every port read frames, and none too long for its ring (the links' MTU fits).
    let rows: Vec<Vec<&str>> = ledger
        .lines()
        .filter(|l| l.starts_with("Ethernet"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 3, "{ledger}");
    for r in rows {
        // Port, "iface", name, state, read, written, write errors, overruns, oversize, ring.
        assert!(r[4].parse::<u64>().unwrap() > 0, "{ledger}");
        assert_eq!(r[8], "0", "{ledger}");
    }
}
