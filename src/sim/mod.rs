//! `lossless run`: the deterministic virtual-time engine.
//!
//! One thread, one event queue ordered by (time, sequence). Switches and host NICs are
//! sans-IO state machines; the engine moves frames between them over links (wire time at
//! the sender's port speed + propagation), wakes each node at its next deadline, applies
//! scheduled events, samples time series and writes pcap. Same scenario + seed ⇒ the same
//! events in the same order ⇒ byte-identical outputs.

pub mod queue;
pub mod timeseries;
pub mod topology;

use crate::config::sim::{Action, EventSpec, Measure, Target, DEFAULT_SNAPLEN};
use crate::config::Scenario;
use crate::measure::{Samples, Window};
use lossless_buffer_model::{Rate, Time};
use lossless_pipeline::wire::pfc::is_pfc;
use lossless_pipeline::{Packet, Switch};
use lossless_ports::flow::{FlowRx, FlowTx, Limit};
use lossless_ports::host::{Host, Received};
use lossless_sys::capture::Capture;
use queue::{EventQueue, Next};
use std::path::PathBuf;
use topology::{Node, Peer};

/// Same-time wakes of one node after which the engine assumes a stuck deadline and moves on
/// by a picosecond (counted as a stall; never expected).
const MAX_SAME_TIME_WAKES: u32 = 10_000;

/// What the engine does next.
enum Ev {
    /// The last bit of `pkt` reaches `node`'s `port` over `link`.
    Arrive {
        node: Node,
        port: u16,
        link: u32,
        pkt: Packet,
    },
    /// A scheduled scenario event (index).
    User(u32),
    /// Take a time-series sample.
    Sample,
    /// The measurement window opens (true) or closes (false): sample every port.
    Measure(bool),
}

/// Options from the command line.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Override the scenario's seed.
    pub seed: Option<u64>,
    /// Override the scenario's duration.
    pub duration: Option<Time>,
    /// Override where pcap files go.
    pub pcap_dir: Option<PathBuf>,
    /// Show a progress bar (only on a terminal, only after a second of wall time).
    pub progress: bool,
}

/// A switch in the simulation.
pub struct SwitchNode {
    /// The model.
    pub sw: Switch,
    /// Peer of each port (None: nothing cabled).
    pub peers: Vec<Option<Peer>>,
    captures: Vec<Option<Capture>>,
    same_time_wakes: u32,
}

/// A host in the simulation.
pub struct HostNode {
    /// The NIC model and its flows.
    pub host: Host,
    /// The switch port it is cabled to.
    pub peer: Peer,
    same_time_wakes: u32,
}

/// Counters of the engine itself.
#[derive(Clone, Debug, Default)]
pub struct EngineStats {
    /// Events processed.
    pub events: u64,
    /// Frames carried over a link (one per hop).
    pub packet_hops: u64,
    /// Frames sent out of a port with nothing cabled to it.
    pub unconnected_drops: u64,
    /// Frames lost because their link was down when they arrived.
    pub link_down_drops: u64,
    /// Data frames that reached a host other than their flow's destination.
    pub misdelivered: u64,
    /// Data frames dropped by a host NIC (receive buffer full, unparseable).
    pub host_drops: u64,
    /// Deadlines that did not advance (a model bug if ever nonzero).
    pub stalls: u64,
    /// PFC frames on a link at the end of the run (sent, not yet received).
    pub pfc_in_flight: u64,
    /// Wall-clock seconds the run took.
    pub wall_time_s: f64,
}

/// A simulation built from a scenario.
pub struct Sim {
    /// The scenario as resolved.
    pub scenario: Scenario,
    /// Seed in use.
    pub seed: u64,
    /// End of the run.
    pub end: Time,
    /// Stop as soon as all finite flows are delivered and the network is idle.
    until_idle: bool,
    now: Time,
    queue: EventQueue<Ev>,
    /// Switches.
    pub switches: Vec<SwitchNode>,
    /// Hosts.
    pub hosts: Vec<HostNode>,
    /// Receiver statistics per flow (index = flow id − 1).
    pub flows_rx: Vec<FlowRx>,
    flow_dst: Vec<usize>,
    flow_src: Vec<usize>,
    links_up: Vec<bool>,
    in_flight: u64,
    events: Vec<EventSpec>,
    sampler: Option<timeseries::Sampler>,
    measure: Measure,
    /// Port samples where the measurement window opened.
    window_open: Option<(Time, Samples)>,
    /// Port samples where the measurement window closed.
    window_close: Option<(Time, Samples)>,
    /// Files the run writes (besides the JSON report).
    pub files: OutputFiles,
    /// Engine counters.
    pub stats: EngineStats,
}

/// The output files of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutputFiles {
    /// One pcap file per captured port.
    pub pcap: Vec<PathBuf>,
    /// The CSV time series.
    pub timeseries: Option<PathBuf>,
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// Nothing bounds the run.
    #[error("{0}")]
    Unbounded(String),
    /// An output file could not be created.
    #[error("{path}: {source}")]
    Output {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl Sim {
    /// Build the simulation: switches with static FDB entries toward every host, hosts with
    /// their flows, links, captures and the time-series writer.
    pub fn new(mut scenario: Scenario, opts: &RunOptions) -> Result<Sim, SimError> {
        let seed = opts.seed.unwrap_or(scenario.seed);
        let duration = opts.duration.or(scenario.duration);
        let all_finite = scenario
            .sim
            .flows
            .iter()
            .all(|f| f.spec.limit != Limit::Unbounded || f.spec.stop.is_some());
        let (end, until_idle) = match duration {
            Some(d) => (d, false),
            None if all_finite
                && !scenario.sim.flows.is_empty()
                && scenario
                    .switches
                    .iter()
                    .all(|s| s.config.qos.pfcwd.is_none()) =>
            {
                (Time::MAX, true)
            }
            None => {
                return Err(SimError::Unbounded(format!(
                "scenario `{}` has no duration and {}: give `duration:` in the file or --duration",
                scenario.name,
                if scenario.sim.flows.is_empty() {
                    "no flows"
                } else if all_finite {
                    "a PFC watchdog that polls forever"
                } else {
                    "flows without size, packets or stop"
                }
            )))
            }
        };
        topology::install_host_routes(&mut scenario);
        let wiring = topology::wire(&scenario);
        // `--pcap-dir` without `outputs.pcap` in the file captures every switch port.
        let pcap = match (&scenario.sim.outputs.pcap, &opts.pcap_dir) {
            (Some(p), dir) => Some((
                p.ports.clone(),
                p.snaplen,
                dir.clone().unwrap_or(p.dir.clone()),
            )),
            (None, Some(dir)) => {
                let all = (0..scenario.switches.len())
                    .flat_map(|s| (0..scenario.switches[s].config.ports.len()).map(move |p| (s, p)))
                    .collect();
                Some((all, DEFAULT_SNAPLEN, dir.clone()))
            }
            (None, None) => None,
        };
        let mut files = OutputFiles::default();
        let mut switches = Vec::new();
        for (si, spec) in scenario.switches.iter().enumerate() {
            let mut cfg = spec.config.clone();
            cfg.seed = seed.wrapping_add(si as u64);
            let n = cfg.ports.len();
            let mut captures: Vec<Option<Capture>> = (0..n).map(|_| None).collect();
            if let Some((ports, snaplen, dir)) = &pcap {
                for &(s, port) in ports {
                    if s == si {
                        let path = dir.join(format!("{}-{}.pcap", cfg.name, cfg.ports[port].name));
                        let cap = Capture::create(&path, *snaplen).map_err(|source| {
                            SimError::Output {
                                path: path.clone(),
                                source,
                            }
                        })?;
                        captures[port] = Some(cap);
                        files.pcap.push(path);
                    }
                }
            }
            switches.push(SwitchNode {
                sw: Switch::new(cfg),
                peers: wiring.switch_peers[si].clone(),
                captures,
                same_time_wakes: 0,
            });
        }
        let mut hosts = Vec::new();
        for (hi, h) in scenario.sim.hosts.iter().enumerate() {
            let flows: Vec<FlowTx> = scenario
                .sim
                .flows
                .iter()
                .filter(|f| f.src == hi)
                .map(|f| FlowTx::new(f.spec.clone()).expect("frame sizes validated by the config"))
                .collect();
            let speed: Rate = scenario.switches[h.attach.0].config.ports[h.attach.1].speed;
            let host = Host::new(h.name.clone(), h.mac, speed, h.nic, flows);
            hosts.push(HostNode {
                host,
                peer: wiring.host_peers[hi],
                same_time_wakes: 0,
            });
        }
        files.timeseries = scenario
            .sim
            .outputs
            .timeseries
            .as_ref()
            .map(|t| t.csv.clone());
        let sampler = match &scenario.sim.outputs.timeseries {
            Some(ts) => Some(timeseries::Sampler::create(&ts.csv, ts.interval).map_err(
                |source| SimError::Output {
                    path: ts.csv.clone(),
                    source,
                },
            )?),
            None => None,
        };
        let measure = scenario.sim.measure;
        let flows_rx = scenario
            .sim
            .flows
            .iter()
            .map(|_| FlowRx::new(measure.from, measure.to.unwrap_or(Time::MAX)))
            .collect();
        let flow_dst = scenario.sim.flows.iter().map(|f| f.dst).collect();
        let flow_src = scenario.sim.flows.iter().map(|f| f.src).collect();
        let events = scenario.sim.events.clone();
        Ok(Sim {
            seed,
            end,
            until_idle,
            now: Time::ZERO,
            queue: EventQueue::new(),
            switches,
            hosts,
            flows_rx,
            flow_dst,
            flow_src,
            links_up: vec![true; wiring.links],
            in_flight: 0,
            events,
            sampler,
            measure,
            window_open: None,
            window_close: None,
            files,
            stats: EngineStats::default(),
            scenario,
        })
    }

    /// Index of `node` in the wake-up heap: switches first, then hosts.
    fn wake_index(&self, node: Node) -> usize {
        match node {
            Node::Switch(s) => s as usize,
            Node::Host(h) => self.switches.len() + h as usize,
        }
    }

    fn node_of(&self, i: usize) -> Node {
        if i < self.switches.len() {
            Node::Switch(i as u32)
        } else {
            Node::Host((i - self.switches.len()) as u32)
        }
    }

    /// Current virtual time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Run to the end; `progress` is called now and then with the fraction done.
    pub fn run(&mut self, mut progress: impl FnMut(f64)) -> Result<(), SimError> {
        let wall = std::time::Instant::now();
        for (i, e) in self.events.iter().enumerate() {
            if e.at <= self.end {
                self.queue.push(e.at, Ev::User(i as u32));
            }
        }
        if self.sampler.is_some() {
            self.queue.push(Time::ZERO, Ev::Sample);
        }
        if self.measure.from == Time::ZERO {
            self.sample_window(true);
        } else if self.measure.from <= self.end {
            self.queue.push(self.measure.from, Ev::Measure(true));
        }
        if let Some(to) = self.measure.to.filter(|t| *t < self.end) {
            self.queue.push(to, Ev::Measure(false));
        }
        for h in 0..self.hosts.len() {
            self.schedule(Node::Host(h as u32));
        }
        for s in 0..self.switches.len() {
            self.schedule(Node::Switch(s as u32));
        }
        while let Some((t, ev)) = self.queue.pop() {
            if t > self.end {
                break;
            }
            self.now = t;
            self.stats.events += 1;
            match ev {
                Next::Event(Ev::Arrive {
                    node,
                    port,
                    link,
                    pkt,
                }) => {
                    self.in_flight -= 1;
                    if is_pfc(&pkt.data) {
                        self.stats.pfc_in_flight -= 1;
                    }
                    self.arrive(node, port as usize, link, pkt);
                }
                Next::Wake(i) => self.wake(self.node_of(i)),
                Next::Event(Ev::User(i)) => self.user_event(i as usize),
                Next::Event(Ev::Sample) => self.sample()?,
                Next::Event(Ev::Measure(open)) => self.sample_window(open),
            }
            if self.stats.events & 0xFFFF == 0 {
                progress(if self.until_idle {
                    0.0
                } else {
                    t.as_ps() as f64 / self.end.as_ps().max(1) as f64
                });
            }
            if self.until_idle && self.in_flight == 0 && self.idle() {
                break;
            }
        }
        if self.until_idle {
            self.end = self.now;
        } else {
            self.now = self.end;
        }
        progress(1.0);
        if self.window_close.is_none() {
            self.sample_window(false);
        }
        if let Some(s) = self.sampler.take() {
            s.finish().map_err(|source| SimError::Output {
                path: PathBuf::from("time series"),
                source,
            })?;
        }
        for s in &mut self.switches {
            for c in s.captures.iter_mut().filter_map(Option::take) {
                c.finish().map_err(|source| SimError::Output {
                    path: PathBuf::from("pcap"),
                    source,
                })?;
            }
        }
        self.stats.wall_time_s = wall.elapsed().as_secs_f64();
        Ok(())
    }

    /// Sample every port where the measurement window opens or closes.
    fn sample_window(&mut self, open: bool) {
        let samples = Samples::take(
            self.switches.iter().map(|n| &n.sw),
            self.hosts.iter().map(|n| &n.host),
            self.now,
        );
        if open {
            self.window_open = Some((self.now, samples));
        } else {
            self.window_close = Some((self.now, samples));
        }
    }

    /// The measurement window as run (after `run`): from `measure.from` (or 0) to
    /// `measure.to` or the end of the run, whichever came first.
    pub fn window(&self) -> Window {
        let end = self.window_close.clone().unwrap_or_else(|| {
            let s = Samples::take(
                self.switches.iter().map(|n| &n.sw),
                self.hosts.iter().map(|n| &n.host),
                self.end,
            );
            (self.end, s)
        });
        // A run that ended before the window opened has an empty window at its end.
        let start = self.window_open.clone().unwrap_or_else(|| end.clone());
        Window {
            from: start.0,
            to: end.0,
            start: start.1,
            end: end.1,
        }
    }

    /// All flows done, every switch queue empty, nothing pending on any NIC.
    fn idle(&self) -> bool {
        self.hosts
            .iter()
            .all(|h| h.host.flows_done(self.now) && h.host.next_transmit().is_none())
            && self
                .switches
                .iter()
                .all(|s| (0..s.sw.ports().len()).all(|p| s.sw.next_transmit(p).is_none()))
    }

    fn arrive(&mut self, node: Node, port: usize, link: u32, pkt: Packet) {
        if !self.links_up[link as usize] {
            self.stats.link_down_drops += 1;
            return;
        }
        let now = self.now;
        match node {
            Node::Switch(s) => {
                let n = &mut self.switches[s as usize];
                if let Some(c) = &mut n.captures[port] {
                    let _ = c.record(now, &pkt);
                }
                n.sw.receive(port, pkt, now);
            }
            Node::Host(h) => {
                let hn = &mut self.hosts[h as usize];
                match hn.host.receive(pkt, now) {
                    Received::Data(pkt) => {
                        let f = pkt.meta.flow as usize;
                        if f == 0 || f > self.flows_rx.len() || self.flow_dst[f - 1] != h as usize {
                            self.stats.misdelivered += 1;
                            hn.host.recycle(pkt.data);
                        } else {
                            self.flows_rx[f - 1].record(&pkt, now, hn.host.speed);
                            // The buffer goes back to the flow's sender, which needs it next.
                            let src = self.flow_src[f - 1];
                            self.hosts[src].host.recycle(pkt.data);
                        }
                    }
                    Received::Pfc(buf) => hn.host.recycle(buf),
                    Received::Dropped(pkt) => {
                        self.stats.host_drops += 1;
                        hn.host.recycle(pkt.data);
                    }
                }
            }
        }
        self.schedule(node);
    }

    /// Put a frame that starts leaving `node`'s `port` now onto its link.
    fn transmit(&mut self, from: Node, port: usize, pkt: Packet, speed: Rate) {
        let peer = match from {
            Node::Switch(s) => {
                let n = &mut self.switches[s as usize];
                if let Some(c) = &mut n.captures[port] {
                    let _ = c.record(self.now, &pkt);
                }
                n.peers[port]
            }
            Node::Host(h) => Some(self.hosts[h as usize].peer),
        };
        let Some(peer) = peer else {
            self.stats.unconnected_drops += 1;
            return;
        };
        if !self.links_up[peer.link as usize] {
            self.stats.link_down_drops += 1;
            return;
        }
        let at = self.now + speed.wire_time(pkt.len as u64) + peer.propagation;
        self.stats.packet_hops += 1;
        if is_pfc(&pkt.data) {
            self.stats.pfc_in_flight += 1;
        }
        self.in_flight += 1;
        self.queue.push(
            at,
            Ev::Arrive {
                node: peer.node,
                port: peer.port,
                link: peer.link,
                pkt,
            },
        );
    }

    fn wake(&mut self, node: Node) {
        let now = self.now;
        match node {
            Node::Switch(s) => {
                let n = &mut self.switches[s as usize];
                if n.sw.poll_timeout().is_some_and(|t| t <= now) {
                    n.sw.handle_timeout(now);
                }
                for p in 0..n.sw.ports().len() {
                    let n = &mut self.switches[s as usize];
                    if n.sw.next_transmit(p).is_some_and(|t| t <= now) {
                        if let Some(pkt) = n.sw.poll_transmit(p, now) {
                            let speed = n.sw.config().ports[p].speed;
                            self.transmit(node, p, pkt, speed);
                        }
                    }
                }
            }
            Node::Host(h) => {
                let n = &mut self.hosts[h as usize];
                n.host.handle_timeout(now);
                if n.host.next_transmit().is_some_and(|t| t <= now) {
                    if let Some(pkt) = n.host.poll_transmit(now) {
                        let speed = n.host.speed;
                        self.transmit(node, 0, pkt, speed);
                    }
                }
            }
        }
        self.schedule(node);
    }

    /// Make sure `node` is woken at its next deadline.
    fn schedule(&mut self, node: Node) {
        let now = self.now;
        let idx = self.wake_index(node);
        let (deadline, same) = match node {
            Node::Switch(s) => {
                let n = &mut self.switches[s as usize];
                (n.sw.poll_timeout(), &mut n.same_time_wakes)
            }
            Node::Host(h) => {
                let n = &mut self.hosts[h as usize];
                (n.host.poll_timeout(), &mut n.same_time_wakes)
            }
        };
        let Some(mut t) = deadline.filter(|t| *t <= self.end) else {
            self.queue.cancel_wake(idx);
            return;
        };
        if t <= now {
            t = now;
            *same += 1;
            if *same > MAX_SAME_TIME_WAKES {
                t = now + Time(1);
                *same = 0;
                self.stats.stalls += 1;
            }
        } else {
            *same = 0;
        }
        if self.queue.wake_time(idx) != Some(t) {
            self.queue.set_wake(idx, t);
        }
    }

    fn user_event(&mut self, i: usize) {
        let now = self.now;
        let ev = self.events[i].clone();
        match (ev.target, ev.action) {
            (Target::Switch((s, p)), Action::Tx(on)) => {
                self.switches[s].sw.set_tx_enabled(p, on, now)
            }
            (Target::Host(h), Action::Tx(on)) => self.hosts[h].host.tx_enabled = on,
            (target, Action::Link(up)) => {
                let (link, ends) = topology::link_ends(&self.switches, &self.hosts, target);
                if let Some(link) = link {
                    self.links_up[link as usize] = up;
                }
                for end in ends {
                    match end {
                        (Node::Switch(s), p) => {
                            self.switches[s as usize].sw.set_link(p as usize, up, now)
                        }
                        (Node::Host(h), _) => {
                            let host = &mut self.hosts[h as usize].host;
                            host.link_up = up;
                            if !up {
                                host.pause.clear(now);
                            }
                        }
                    }
                    self.schedule(end.0);
                }
            }
            (Target::Switch((s, p)), Action::Inject(data, len)) => {
                let n = &mut self.switches[s];
                let pkt = Packet::new(data, len);
                if let Some(c) = &mut n.captures[p] {
                    let _ = c.record(now, &pkt);
                }
                n.sw.receive(p, pkt, now);
            }
            (Target::Host(_), Action::Inject(..)) => unreachable!("rejected by the config"),
        }
        match ev.target {
            Target::Switch((s, _)) => self.schedule(Node::Switch(s as u32)),
            Target::Host(h) => self.schedule(Node::Host(h as u32)),
        }
    }

    fn sample(&mut self) -> Result<(), SimError> {
        let now = self.now;
        let Some(s) = &mut self.sampler else {
            return Ok(());
        };
        s.sample(now, &self.switches, &mut self.hosts)
            .map_err(|source| SimError::Output {
                path: PathBuf::from("time series"),
                source,
            })?;
        let next = now + s.interval();
        if next <= self.end
            && !(self.until_idle && self.in_flight == 0 && now > Time::ZERO && self.idle())
        {
            self.queue.push(next, Ev::Sample);
        }
        Ok(())
    }
}
