//! `lossless run`: the deterministic virtual-time engine.
//!
//! One thread, one event queue ordered by (time, sequence). Switches and host NICs are
//! sans-IO state machines driven with `receive` and `poll_due`; the engine moves frames
//! between them over links (wire time at the sender's port speed + propagation), wakes each
//! node at its next deadline, applies the scenario's scheduled events, and lets its
//! observers write pcap and CSV. Same scenario + seed ⇒ the same events in the same order ⇒
//! byte-identical outputs.
//!
//! * [`build`]: the nodes, from the scenario; [`cabling`]: who is cabled to whom.
//! * [`bound`]: when the run ends; [`queue`]: the event queue.
//! * [`observers`]: pcap captures and the time series ([`timeseries`]).
//! * [`outcome`]: the read-only view of a finished run that the report reads.

pub mod bound;
pub mod build;
pub mod cabling;
pub mod deadlock;
pub mod observers;
pub mod outcome;
pub mod pfc_log;
pub mod queue;
pub mod recorder;
pub mod timeseries;

use crate::config::{Action, EventSpec, Measure, Scenario, Target};
use crate::measure::{Samples, Window};
use cabling::{Cabling, Node, Peer};
use deadlock::DeadlockWatch;
use lossless_buffer_model::{Rate, Time};
use lossless_pipeline::wire::pfc::is_pfc;
use lossless_pipeline::{Packet, Switch};
use lossless_ports::flow::FlowRx;
use lossless_ports::host::{Host, Received};
use observers::Observers;
pub use observers::OutputFiles;
use queue::{EventQueue, Next};
use std::path::PathBuf;

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
    /// The scenario's scheduled event (index into its events).
    Scheduled(u32),
    /// Take a time-series sample.
    Sample,
    /// The measurement window opens (true) or closes (false): sample every port.
    Measure(bool),
    /// Look for a PFC deadlock (not counted in `events`: it changes nothing).
    DeadlockCheck,
    /// Record a sample for `--plot` (not counted in `events`).
    Record,
}

/// Options from the command line.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Override the scenario's seed.
    pub seed: Option<u64>,
    /// Override the scenario's duration.
    pub duration: Option<Time>,
    /// Override where pcap files go (all switch ports when the scenario names none).
    pub pcap_dir: Option<PathBuf>,
    /// Show a progress bar (only on a terminal, only after a second of wall time).
    pub progress: bool,
    /// Record samples for plots at this interval (`--plot`).
    pub record: Option<Time>,
    /// Record only in this window (`--plot-window`); default the whole run.
    pub record_window: Option<(Time, Time)>,
    /// Write every switch's PFC events here as JSON lines (`--pfc-log`).
    pub pfc_log: Option<PathBuf>,
}

/// A switch in the simulation.
pub struct SwitchNode {
    /// The model.
    pub sw: Switch,
    /// Peer of each port (None: nothing cabled).
    pub peers: Vec<Option<Peer>>,
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

/// Why a run could not start, or stopped.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// Nothing bounds the run.
    #[error("{0}")]
    Unbounded(String),
    /// The scenario leaves something to the cabling that the cabling does not give.
    #[error("{0}")]
    Config(crate::config::Diag),
    /// An output file could not be created or written.
    #[error("{path}: {source}")]
    Output {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// A simulation built from a scenario.
pub struct Sim {
    scenario: Scenario,
    seed: u64,
    end: Time,
    until_idle: bool,
    now: Time,
    queue: EventQueue<Ev>,
    switches: Vec<SwitchNode>,
    hosts: Vec<HostNode>,
    cabling: Cabling,
    flows_rx: Vec<FlowRx>,
    links_up: Vec<bool>,
    in_flight: u64,
    observers: Observers,
    measure: Measure,
    /// Port samples where the measurement window opened and closed.
    window_open: Option<(Time, Samples)>,
    window_close: Option<(Time, Samples)>,
    /// Frames a node starts in one wake-up (kept to reuse its allocation).
    outbox: Vec<(usize, Packet)>,
    stats: EngineStats,
    /// The deadlock indicator (scenarios with switch-to-switch links).
    deadlocks: Option<DeadlockWatch>,
    /// The run stopped early: it waits for idle, and a deadlock that no watchdog can break
    /// means it never would be.
    stopped_by_deadlock: bool,
    /// Samples for `--plot`.
    recorder: Option<recorder::Recorder>,
    record_window: Option<(Time, Time)>,
    pfc_log: Option<PathBuf>,
}

impl Sim {
    /// Build the simulation of `scenario`: its end, nodes, cabling and output files.
    pub fn new(scenario: Scenario, opts: &RunOptions) -> Result<Sim, SimError> {
        if let Some(e) = crate::config::topology::neighbors::first_pending(&scenario.switches) {
            return Err(SimError::Config(e.clone()));
        }
        let seed = opts.seed.unwrap_or(scenario.seed);
        let b = bound::bound(&scenario, opts.duration.or(scenario.duration))?;
        let cabling = Cabling::of(&scenario);
        let mut switches = build::switches(&scenario, seed, &cabling);
        if opts.pfc_log.is_some() {
            for s in &mut switches {
                s.sw.log_pfc(true);
            }
        }
        let hosts = build::hosts(&scenario, &cabling);
        let observers = Observers::create(&scenario, opts, &switches, &hosts)?;
        let measure = scenario.run.measure;
        let flows_rx = scenario
            .run
            .flows
            .iter()
            .map(|_| FlowRx::new(measure.from, measure.to.unwrap_or(Time::MAX)))
            .collect();
        Ok(Sim {
            seed,
            end: b.end,
            until_idle: b.until_idle,
            now: Time::ZERO,
            queue: EventQueue::new(),
            switches,
            hosts,
            links_up: vec![true; cabling.links],
            cabling,
            flows_rx,
            in_flight: 0,
            observers,
            measure,
            window_open: None,
            window_close: None,
            outbox: Vec::new(),
            stats: EngineStats::default(),
            deadlocks: (!scenario.run.links.is_empty())
                .then(|| DeadlockWatch::new(scenario.run.deadlock_time)),
            stopped_by_deadlock: false,
            recorder: opts.record.map(recorder::Recorder::new),
            record_window: opts.record_window,
            pfc_log: opts.pfc_log.clone(),
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
        for (i, e) in self.scenario.run.events.iter().enumerate() {
            if e.at <= self.end {
                self.queue.push(e.at, Ev::Scheduled(i as u32));
            }
        }
        if let Some(from) = self.observers.series_from().filter(|f| *f <= self.end) {
            self.queue.push(from, Ev::Sample);
        }
        if self.measure.from == Time::ZERO {
            self.sample_window(true);
        } else if self.measure.from <= self.end {
            self.queue.push(self.measure.from, Ev::Measure(true));
        }
        if let Some(to) = self.measure.to.filter(|t| *t < self.end) {
            self.queue.push(to, Ev::Measure(false));
        }
        if self.recorder.is_some() {
            let from = self.record_window.map_or(Time::ZERO, |w| w.0);
            if from <= self.end {
                self.queue.push(from, Ev::Record);
            }
        }
        if let Some(w) = &self.deadlocks {
            let first = w.next_check(Time::ZERO);
            if first <= self.end {
                self.queue.push(first, Ev::DeadlockCheck);
            }
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
            self.observers.instant(t, &self.switches, &mut self.hosts)?;
            if matches!(ev, Next::Event(Ev::Record)) {
                self.record();
                continue;
            }
            if matches!(ev, Next::Event(Ev::DeadlockCheck)) {
                if self.check_deadlock() {
                    self.stopped_by_deadlock = true;
                    break;
                }
                continue;
            }
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
                Next::Event(Ev::Scheduled(i)) => self.scheduled_event(i as usize),
                Next::Event(Ev::Sample) => self.sample()?,
                Next::Event(Ev::Measure(open)) => self.sample_window(open),
                Next::Event(Ev::DeadlockCheck | Ev::Record) => unreachable!("handled above"),
            }
            if let Some(e) = self.observers.failure() {
                return Err(e);
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
        self.observers.finish(&self.switches, &mut self.hosts)?;
        if let Some(path) = self.pfc_log.clone() {
            pfc_log::write(&path, self.switches.iter_mut().map(|n| &mut n.sw)).map_err(
                |source| SimError::Output {
                    path: path.clone(),
                    source,
                },
            )?;
            self.observers.files.pfc_log = Some(path);
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
    fn window(&self) -> Window {
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
                self.observers.frame(s as usize, port, now, &pkt);
                self.switches[s as usize].sw.receive(port, pkt, now);
            }
            Node::Host(h) => self.deliver(h as usize, pkt),
        }
        self.schedule(node);
    }

    /// A frame's last bit reached host `h`'s NIC.
    fn deliver(&mut self, h: usize, pkt: Packet) {
        let now = self.now;
        let hn = &mut self.hosts[h];
        match hn.host.receive(pkt, now) {
            Received::Data(pkt) => {
                let f = pkt.meta.flow as usize;
                let flows = &self.scenario.run.flows;
                if f == 0 || f > flows.len() || flows[f - 1].dst != h {
                    self.stats.misdelivered += 1;
                    hn.host.recycle(pkt.data);
                } else {
                    self.flows_rx[f - 1].record(&pkt, now, hn.host.speed);
                    // The buffer goes back to the flow's sender, which needs it next.
                    let src = flows[f - 1].src;
                    self.hosts[src].host.recycle(pkt.data);
                }
            }
            Received::Pfc(buf) | Received::Cnp(buf) => hn.host.recycle(buf),
            Received::Dropped(pkt) => {
                self.stats.host_drops += 1;
                hn.host.recycle(pkt.data);
            }
        }
    }

    /// Put a frame that starts leaving `from`'s `port` now onto its link.
    fn transmit(&mut self, from: Node, port: usize, pkt: Packet, speed: Rate) {
        let peer = match from {
            Node::Switch(s) => {
                self.observers.frame(s as usize, port, self.now, &pkt);
                self.switches[s as usize].peers[port]
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
        let mut out = std::mem::take(&mut self.outbox);
        match node {
            Node::Switch(s) => {
                let sw = &mut self.switches[s as usize].sw;
                sw.poll_due(now, |port, pkt| out.push((port, pkt)));
                for (port, pkt) in out.drain(..) {
                    let speed = self.switches[s as usize].sw.config().ports[port].speed;
                    self.transmit(node, port, pkt, speed);
                }
            }
            Node::Host(h) => {
                let host = &mut self.hosts[h as usize].host;
                let speed = host.speed;
                host.poll_due(now, |pkt| out.push((0, pkt)));
                for (_, pkt) in out.drain(..) {
                    self.transmit(node, 0, pkt, speed);
                }
            }
        }
        self.outbox = out;
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

    /// The scenario's `i`-th event happens now.
    fn scheduled_event(&mut self, i: usize) {
        let now = self.now;
        let EventSpec { target, action, .. } = self.scenario.run.events[i].clone();
        match (target, action) {
            (Target::Switch(p), Action::Tx(on)) => {
                self.switches[p.switch].sw.set_tx_enabled(p.port, on, now)
            }
            (Target::Host(h), Action::Tx(on)) => self.hosts[h].host.tx_enabled = on,
            (target, Action::Link(up)) => {
                let (link, ends) = self.cabling.link_ends(target);
                if let Some(link) = link {
                    self.links_up[link as usize] = up;
                }
                for (node, port) in ends {
                    match node {
                        Node::Switch(s) => {
                            self.switches[s as usize]
                                .sw
                                .set_link(port as usize, up, now)
                        }
                        Node::Host(h) => self.hosts[h as usize].host.set_link(up, now),
                    }
                    self.schedule(node);
                }
            }
            (Target::Switch(p), Action::Inject(data, len)) => {
                let pkt = Packet::new(data, len);
                self.observers.frame(p.switch, p.port, now, &pkt);
                self.switches[p.switch].sw.receive(p.port, pkt, now);
            }
            (Target::Host(h), Action::Drain(rate)) => self.hosts[h].host.set_drain(rate, now),
            (Target::Host(_), Action::Inject(..)) | (Target::Switch(_), Action::Drain(_)) => {
                unreachable!("rejected by the config")
            }
        }
        match target {
            Target::Switch(p) => self.schedule(Node::Switch(p.switch as u32)),
            Target::Host(h) => self.schedule(Node::Host(h as u32)),
        }
    }

    /// Run the deadlock indicator now and schedule its next check. True when the run should
    /// stop: it waits for idle, and a deadlock stands that no watchdog on its switches can
    /// break.
    fn check_deadlock(&mut self) -> bool {
        let now = self.now;
        let Some(w) = &mut self.deadlocks else {
            return false;
        };
        let new = w.check(now, &self.switches);
        let next = w.next_check(now);
        if new && self.until_idle {
            let d = w.found().last().expect("a new deadlock");
            let breakable = d
                .cycle
                .iter()
                .any(|x| self.switches[x.switch].sw.config().qos.pfcwd.is_some());
            if !breakable {
                return true;
            }
        }
        let done = self.until_idle && self.in_flight == 0 && self.idle();
        if next <= self.end && !done {
            self.queue.push(next, Ev::DeadlockCheck);
        }
        false
    }

    /// Take a `--plot` sample and schedule the next.
    fn record(&mut self) {
        let now = self.now;
        let Some(r) = &mut self.recorder else { return };
        let names: Vec<(String, bool)> = self
            .scenario
            .run
            .flows
            .iter()
            .map(|f| {
                let dcqcn = self.hosts[f.src]
                    .host
                    .flows
                    .iter()
                    .any(|t| t.spec.id == f.spec.id && t.dcqcn.is_some());
                (f.spec.name.clone(), dcqcn)
            })
            .collect();
        r.sample(now, &self.switches, &self.hosts, &self.flows_rx, &names);
        let next = now + r.interval;
        let done = self.until_idle && self.in_flight == 0 && now > Time::ZERO && self.idle();
        let to = self.record_window.map_or(self.end, |w| w.1.min(self.end));
        if next <= to && !done {
            self.queue.push(next, Ev::Record);
        }
    }

    /// What `--plot` recorded (None without it).
    pub fn recording(&self) -> Option<&recorder::Recording> {
        self.recorder.as_ref().map(|r| &r.rec)
    }

    fn sample(&mut self) -> Result<(), SimError> {
        let now = self.now;
        self.observers
            .sample(now, &self.switches, &mut self.hosts)?;
        let next = self.observers.next_sample_after(now);
        if let Some(next) = next.filter(|n| *n <= self.end) {
            if !(self.until_idle && self.in_flight == 0 && now > Time::ZERO && self.idle()) {
                self.queue.push(next, Ev::Sample);
            }
        }
        Ok(())
    }
}
