//! A lab of network namespaces around a software switch: what `lossless bench tap` and the
//! TAP tests build their hosts with. A host is a namespace with one interface — a TAP the
//! switch made and the lab moved in, or one end of a veth pair whose other end is a port
//! of the switch (in the switch's namespace, as containerlab wires a node) or of a bridge.
//!
//! Its rules are the project's for anything that touches the network: every namespace it
//! makes is named after its tag (a prefix and this process's pid), hosts are addressed
//! in 198.18.0.0/24 only, traffic goes only between its namespaces, every wait is bounded
//! in time, and on drop it ends the processes it started (by their handles, so by pid)
//! and deletes its namespaces — with everything in them — even when a run fails.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A unicast MAC no host owns: frames to it cross the switch and are dropped by the
/// receiving kernel at L2 after its interface counted them (the cheapest sink).
pub const SINK_MAC: &str = "02:00:00:00:0f:01";

/// Why a lab cannot run on this machine (not root, no /dev/net/tun, one of `tools` not
/// installed), or None.
pub fn missing(tools: &[&str]) -> Option<String> {
    let uid = Command::new("id").arg("-u").output().ok();
    if uid.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()) != Some("0".into()) {
        return Some("not root (a lab makes network namespaces and TAP devices)".into());
    }
    if !Path::new("/dev/net/tun").exists() {
        return Some("/dev/net/tun is missing".into());
    }
    for tool in tools {
        let found = Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {tool}"))
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            return Some(format!("`{tool}` is not installed"));
        }
    }
    None
}

/// Run `args` and wait for it; Err only when it cannot be started.
pub fn output(args: &[&str]) -> Result<Output, String> {
    Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| format!("{}: {e}", args.join(" ")))
}

/// Run `args`, which must succeed; Err says which command failed and what it printed.
pub fn sh(args: &[&str]) -> Result<Output, String> {
    let o = output(args)?;
    if !o.status.success() {
        return Err(format!(
            "{}: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    Ok(o)
}

/// `args` run in namespace `ns`.
fn in_ns<'a>(ns: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut full = vec!["ip", "netns", "exec", ns];
    full.extend_from_slice(args);
    full
}

/// Run `args` in namespace `ns`, which must succeed.
pub fn sh_in(ns: &str, args: &[&str]) -> Result<Output, String> {
    sh(&in_ns(ns, args))
}

/// Run `args` in namespace `ns` and wait for it, whatever its exit status (a ping that
/// lost replies).
pub fn output_in(ns: &str, args: &[&str]) -> Result<Output, String> {
    output(&in_ns(ns, args))
}

/// Address of host `i`: 198.18.0.(i+1).
pub fn host_ip(i: usize) -> String {
    format!("198.18.0.{}", i + 1)
}

/// Wait, at most `limit`, until every interface of `names` exists (TAPs a switch makes).
pub fn wait_for_devices(names: &[String], limit: Duration) -> Result<(), String> {
    let deadline = Instant::now() + limit;
    while let Some(n) = names
        .iter()
        .find(|n| !Path::new(&format!("/sys/class/net/{n}")).exists())
    {
        if Instant::now() > deadline {
            return Err(format!("interface {n} did not appear in {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// Packet sockets bound to an interface in namespace `ns`.
pub fn bound_sockets(ns: &str) -> Result<usize, String> {
    let o = sh_in(ns, &["cat", "/proc/net/packet"])?;
    Ok(lossless_sys::packet::bound_sockets(
        &String::from_utf8_lossy(&o.stdout),
    ))
}

/// Wait, at most `limit`, until namespace `ns` has `n` bound packet sockets: a switch
/// attached to its interfaces there (a frame a host sends before the bind is counted by
/// the kernel and never read).
pub fn wait_for_bound_sockets(ns: &str, n: usize, limit: Duration) -> Result<(), String> {
    let deadline = Instant::now() + limit;
    while bound_sockets(ns)? < n {
        if Instant::now() > deadline {
            return Err(format!(
                "no {n} bound packet sockets in namespace {ns} after {limit:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// How host `i`'s interface, named [`NetLab::dev`]`(i)`, reaches the switch.
#[derive(Clone, Debug)]
pub enum HostLink {
    /// It exists in this namespace (a TAP the switch made): moved into the host's.
    Move,
    /// A veth pair made for it, its peer `peer` (up) in namespace `ns` — a switch's or a
    /// bridge's port.
    Veth {
        /// Namespace of the peer end.
        ns: String,
        /// Name of the peer end.
        peer: String,
    },
}

/// Round trips of a ping run, µs.
#[derive(Clone, Copy, Debug)]
pub struct Rtt {
    /// Smallest.
    pub min_us: f64,
    /// Average.
    pub avg_us: f64,
}

/// What a ping run printed: its loss and, when any reply came, its round trips.
#[derive(Clone, Copy, Debug)]
pub struct Ping {
    /// Echo requests without a reply, in %.
    pub loss_percent: f64,
    /// Round trips, when any reply came.
    pub rtt: Option<Rtt>,
}

impl Ping {
    /// Read ping's summary (`… 0% packet loss …`, `rtt min/avg/max/mdev = a/b/c/d ms`).
    pub fn parse(text: &str) -> Result<Ping, String> {
        let loss = text
            .lines()
            .flat_map(|l| l.split(','))
            .find(|p| p.contains("packet loss"))
            .ok_or_else(|| format!("ping printed no loss: {text}"))?;
        let loss_percent = loss
            .trim()
            .trim_end_matches("packet loss")
            .trim()
            .trim_end_matches('%')
            .parse()
            .map_err(|_| format!("ping: cannot read `{loss}`"))?;
        let rtt = text
            .lines()
            .find(|l| l.contains("min/avg/max"))
            .and_then(|l| l.split('=').nth(1))
            .map(|nums| {
                let v: Vec<f64> = nums
                    .trim()
                    .trim_end_matches("ms")
                    .split('/')
                    .filter_map(|x| x.trim().parse().ok())
                    .collect();
                match v.as_slice() {
                    [min, avg, ..] => Ok(Rtt {
                        min_us: min * 1000.0,
                        avg_us: avg * 1000.0,
                    }),
                    _ => Err(format!("ping: cannot read `{nums}`")),
                }
            })
            .transpose()?;
        Ok(Ping { loss_percent, rtt })
    }
}

/// The namespaces and processes of one lab, removed on drop.
#[derive(Debug)]
pub struct NetLab {
    tag: String,
    namespaces: Vec<String>,
    children: Vec<Child>,
}

impl NetLab {
    /// An empty lab whose names start with `prefix` and this process's pid (keep `prefix`
    /// short: an interface name has at most 15 characters).
    pub fn new(prefix: &str) -> NetLab {
        NetLab {
            tag: format!("{prefix}{}", std::process::id() % 100_000),
            namespaces: Vec::new(),
            children: Vec::new(),
        }
    }

    /// The prefix of every name it makes.
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// Namespace of host `i`.
    pub fn ns(&self, i: usize) -> String {
        format!("lossless-{}-{i}", self.tag)
    }

    /// Namespace of the lab's switch or bridge, when it has its own.
    pub fn switch_ns(&self) -> String {
        format!("lossless-{}-sw", self.tag)
    }

    /// Host `i`'s interface (a TAP of a switch whose prefix is `{tag}t`, or a veth end).
    pub fn dev(&self, i: usize) -> String {
        format!("{}t{i}", self.tag)
    }

    /// Make namespace `ns`, deleted with the lab: IPv6 off, so that its kernel sends
    /// nothing of its own, and loopback up.
    pub fn add_namespace(&mut self, ns: &str) -> Result<(), String> {
        sh(&["ip", "netns", "add", ns])?;
        self.namespaces.push(ns.to_string());
        sh_in(ns, &["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"])?;
        sh_in(
            ns,
            &["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"],
        )?;
        sh_in(ns, &["ip", "link", "set", "lo", "up"])?;
        Ok(())
    }

    /// Name `ns` the network namespace of process `pid` (a container's), as `ip netns`
    /// sees it; the name goes with the lab, the namespace with its process.
    pub fn attach_namespace(&mut self, ns: &str, pid: &str) -> Result<(), String> {
        sh(&["ip", "netns", "attach", ns, pid])?;
        self.namespaces.push(ns.to_string());
        Ok(())
    }

    /// Delete namespace `ns` now (a host that goes away, and its interfaces with it).
    pub fn delete_namespace(&mut self, ns: &str) -> Result<(), String> {
        sh(&["ip", "netns", "del", ns])?;
        self.namespaces.retain(|n| n != ns);
        Ok(())
    }

    /// Host `i`: namespace [`Self::ns`]`(i)` with interface [`Self::dev`]`(i)`, linked as
    /// `link` says, addressed [`host_ip`]`(i)`/24 and up.
    pub fn add_host(&mut self, i: usize, link: &HostLink) -> Result<(), String> {
        let (ns, dev) = (self.ns(i), self.dev(i));
        self.add_namespace(&ns)?;
        match link {
            HostLink::Move => {
                sh(&["ip", "link", "set", &dev, "netns", &ns])?;
            }
            HostLink::Veth { ns: peer_ns, peer } => {
                sh(&[
                    "ip", "link", "add", &dev, "netns", &ns, "type", "veth", "peer", "name", peer,
                    "netns", peer_ns,
                ])?;
                sh_in(peer_ns, &["ip", "link", "set", peer, "up"])?;
            }
        }
        let addr = format!("{}/24", host_ip(i));
        sh_in(&ns, &["ip", "addr", "add", &addr, "dev", &dev])?;
        sh_in(&ns, &["ip", "link", "set", &dev, "up"])?;
        Ok(())
    }

    /// Turn segmentation and receive offloads of `dev` in `ns` on or off.
    pub fn set_offloads(ns: &str, dev: &str, on: bool) -> Result<(), String> {
        let v = if on { "on" } else { "off" };
        sh_in(ns, &["ethtool", "-K", dev, "tso", v, "gso", v, "gro", v]).map(|_| ())
    }

    /// Run `args` in host `i`'s namespace, which must succeed.
    pub fn exec(&self, i: usize, args: &[&str]) -> Result<Output, String> {
        sh_in(&self.ns(i), args)
    }

    /// Run `args` in host `i`'s namespace, whatever its exit status.
    pub fn output(&self, i: usize, args: &[&str]) -> Result<Output, String> {
        output_in(&self.ns(i), args)
    }

    /// Start `args` in namespace `ns` (`ip netns exec` execs it: the child's pid is the
    /// command's), ended with the lab; with `capture`, its stdout and stderr are piped.
    /// Its handle.
    pub fn spawn_in(&mut self, ns: &str, args: &[&str], capture: bool) -> Result<usize, String> {
        let (out, err) = match capture {
            true => (Stdio::piped(), Stdio::piped()),
            false => (Stdio::null(), Stdio::null()),
        };
        let child = Command::new("ip")
            .args(["netns", "exec", ns])
            .args(args)
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("{}: {e}", args.join(" ")))?;
        Ok(self.adopt(child))
    }

    /// End `child` with the lab (a process started elsewhere); its handle.
    pub fn adopt(&mut self, child: Child) -> usize {
        self.children.push(child);
        self.children.len() - 1
    }

    /// The process of handle `k`.
    pub fn child(&mut self, k: usize) -> &mut Child {
        &mut self.children[k]
    }

    /// `count` pings from host `from` to host `to`, `interval` seconds apart (ping's
    /// `-i`), each given a second to come back.
    pub fn ping(&self, from: usize, to: usize, count: u32, interval: &str) -> Result<Ping, String> {
        let o = self.output(
            from,
            &[
                "ping",
                "-q",
                "-c",
                &count.to_string(),
                "-i",
                interval,
                "-W",
                "1",
                &host_ip(to),
            ],
        )?;
        Ping::parse(&String::from_utf8_lossy(&o.stdout))
    }

    /// iperf3 TCP from host `from` to a one-off server in host `to` on `port` for
    /// `seconds`, the client given `extra` arguments too (`--tos 12`); Gbit/s received.
    pub fn iperf3_tcp(
        &mut self,
        from: usize,
        to: usize,
        port: u16,
        seconds: u32,
        extra: &[&str],
    ) -> Result<f64, String> {
        let (dst, port) = (host_ip(to), port.to_string());
        let srv = self.spawn_in(
            &self.ns(to),
            &["iperf3", "-s", "-1", "-B", &dst, "-p", &port],
            false,
        )?;
        std::thread::sleep(Duration::from_millis(300));
        let secs = seconds.to_string();
        let mut args = vec!["iperf3", "-c", &dst, "-p", &port, "-t", &secs, "-J"];
        args.extend_from_slice(extra);
        let o = self.output(from, &args)?;
        // The server ends after its one test; bounded, in case the client never reached it.
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.children[srv].try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).map_err(|_| {
            format!(
                "iperf3 gave no JSON: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            )
        })?;
        v["end"]["sum_received"]["bits_per_second"]
            .as_f64()
            .map(|b| b / 1e9)
            .ok_or_else(|| format!("iperf3 gave no result: {}", v["error"]))
    }
}

impl Drop for NetLab {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        for ns in &self.namespaces {
            let _ = output(&["ip", "netns", "del", ns]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ping_summaries_are_read_with_and_without_replies() {
        let ok = "--- 198.18.0.2 ping statistics ---\n100 packets transmitted, 100 received, 0% packet loss, time 1010ms\nrtt min/avg/max/mdev = 0.008/0.017/0.091/0.010 ms\n";
        let p = Ping::parse(ok).unwrap();
        assert_eq!(p.loss_percent, 0.0);
        let rtt = p.rtt.unwrap();
        assert!((rtt.min_us - 8.0).abs() < 1e-9 && (rtt.avg_us - 17.0).abs() < 1e-9);
        let lost = "5 packets transmitted, 0 received, +5 errors, 100% packet loss, time 4090ms\n";
        let p = Ping::parse(lost).unwrap();
        assert_eq!(p.loss_percent, 100.0);
        assert!(p.rtt.is_none());
        let partial = "20 packets transmitted, 15 received, 25% packet loss, time 950ms\nrtt min/avg/max/mdev = 0.1/0.2/0.3/0.0 ms\n";
        assert_eq!(Ping::parse(partial).unwrap().loss_percent, 25.0);
        assert!(Ping::parse("ping: connect: Network is unreachable\n").is_err());
    }
}
