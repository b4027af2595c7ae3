//! `lossless run`: the deterministic virtual-time simulation of a scenario's fabric.
//!
//! Events in canonical order (the `lossless-engine` crate: by time, then the run's own
//! events, then node by node each node's arrivals by port and its wake-up). Switches and
//! host NICs are sans-IO state machines driven through the one `Node` interface; the
//! simulation moves frames between them over links, wakes each node at its next deadline,
//! applies the scenario's scheduled events, and lets its observers write pcap and CSV. The
//! nodes run in shares, one thread each ([`threads`]; one share on one thread by default
//! for small fabrics). Same scenario + seed ⇒ every node sees the same events in the same
//! order, on any number of threads ⇒ byte-identical outputs.
//!
//! * [`build`]: the nodes, from the scenario; [`cabling`]: who is cabled to whom.
//! * [`bound`]: when the run ends; [`options`]: what a run is given and counts of itself.
//! * [`share`]: the nodes one thread runs and what is pending for them; [`threads`]:
//!   shares side by side, window by window;
//! * [`network`]: frames between nodes (where virtual time advances for a node);
//!   [`loss`]: frames lost on the wire on purpose (error rates, `drop` events);
//!   [`scheduled`]: the scenario's events; [`periodic`]: the window's edges, samples and
//!   deadlock checks.
//! * [`observers`]: pcap captures and the time series ([`timeseries`]); [`recorder`]: what
//!   `--plot` draws; [`pfc_log`]: the PFC event log; [`deadlock`]: the deadlock indicator.
//! * [`outcome`]: the read-only view of a finished run that the report reads.

pub mod bound;
pub mod build;
pub mod cabling;
pub mod deadlock;
pub mod llr_stall;
pub mod loss;
mod network;
pub mod observers;
pub mod options;
pub mod outcome;
mod periodic;
pub mod pfc_log;
pub mod recorder;
mod scheduled;
mod share;
pub mod threads;
pub mod timeseries;

use crate::config::{Measure, Scenario};
use crate::measure::Samples;
use cabling::{Cabling, NodeId, Peer};
use deadlock::DeadlockWatch;
use llr_stall::LlrStallWatch;
use lossless_buffer_model::{Time, WireTimes};
use lossless_engine::{EventQueue, Key, Next, RunEvent};
use lossless_pipeline::config::FlowControl;
use lossless_pipeline::Switch;
use lossless_ports::host::Host;
pub use observers::OutputFiles;
use observers::{Observers, Taps};
pub use options::{EngineStats, Go, RunOptions, SimError, Threads, Tick};
use share::{Fabric, Placement, Reached, Share};

/// The run's own events: what happens to the whole fabric at one instant, before any node
/// acts at that instant.
enum Ev {
    /// The scenario's scheduled event (index into its events).
    Scheduled(u32),
    /// Take a time-series sample.
    Sample,
    /// The measurement window opens (true) or closes (false): sample every port.
    Measure(bool),
    /// Look for a PFC deadlock (not counted in `events`: it changes nothing).
    DeadlockCheck,
    /// Look for a stalled LLR link (not counted in `events`: it changes nothing).
    LlrCheck,
    /// Record a sample for `--plot` (not counted in `events`).
    Record,
}

impl Ev {
    /// Where the event sits among those of its instant ([`Key`]).
    fn key(&self) -> Key {
        match *self {
            Ev::Scheduled(i) => Key::run(RunEvent::Scheduled, i),
            Ev::Measure(open) => Key::run(RunEvent::Window, open as u32),
            Ev::Sample => Key::run(RunEvent::Sample, 0),
            Ev::Record => Key::run(RunEvent::Record, 0),
            Ev::DeadlockCheck => Key::run(RunEvent::DeadlockCheck, 0),
            Ev::LlrCheck => Key::run(RunEvent::LlrCheck, 0),
        }
    }
}

/// A switch in the simulation.
pub struct SwitchNode {
    /// The model.
    pub sw: Switch,
    /// Peer of each port (None: nothing cabled).
    pub peers: Vec<Option<Peer>>,
    /// Wire times of each port's frames at its line rate, read from the switch once: the
    /// engine puts frames on links while the switch is still emitting them.
    pub wires: Vec<WireTimes>,
    /// Wakes asked for at one instant in a row: (that instant, how many).
    same_time_wakes: (Time, u32),
    /// Captures of its ports.
    pub taps: Taps,
}

/// A host in the simulation.
pub struct HostNode {
    /// The NIC model, its flows and its flows' receivers.
    pub host: Host,
    /// The switch port it is cabled to.
    pub peer: Peer,
    /// Wire times of its frames at its line rate.
    pub wire: WireTimes,
    /// Wakes asked for at one instant in a row: (that instant, how many).
    same_time_wakes: (Time, u32),
}

/// The longest wire time of a frame on any host's link: its port's MTU at its speed.
fn longest_frame(s: &Scenario) -> Time {
    s.run
        .hosts
        .iter()
        .map(|h| {
            let p = &s.switches[h.attach.switch].config.ports[h.attach.port];
            p.speed.wire_time(p.mtu as u64)
        })
        .max()
        .unwrap_or(Time::ZERO)
}

/// A simulation built from a scenario.
pub struct Sim {
    scenario: Scenario,
    seed: u64,
    end: Time,
    until_idle: bool,
    /// Some port speaks CBFC: its credit updates may stay on the wire when all is idle.
    credit_links: bool,
    /// Events of the scenario (`events:`) not yet handled: while one is to come, a port
    /// that holds frames it cannot send (its transmitter disabled, its link down) is
    /// waiting for it, not idle.
    scheduled_left: u32,
    now: Time,
    /// The run's own events.
    queue: EventQueue<Ev>,
    switches: Vec<SwitchNode>,
    hosts: Vec<HostNode>,
    cabling: Cabling,
    links_up: Vec<bool>,
    /// Frames lost on the wire on purpose: each share draws for the links its nodes send
    /// on; summed here when the run ends.
    loss: loss::Loss,
    /// The nodes in shares, each with its pending events and frames on the wire.
    shares: Vec<Share>,
    /// Which share runs each node.
    placement: Placement,
    /// How far past the earliest pending event every share may run (several shares).
    lookahead: Time,
    /// The first capture write that failed outside the shares (an injected frame).
    failed: Option<SimError>,
    observers: Observers,
    measure: Measure,
    /// Port samples where the measurement window opened and closed.
    window_open: Option<(Time, Samples)>,
    window_close: Option<(Time, Samples)>,
    stats: EngineStats,
    /// The deadlock indicator (scenarios with switch-to-switch links).
    deadlocks: Option<DeadlockWatch>,
    /// The run stopped early: it waits for idle, and a deadlock that no watchdog can break
    /// means it never would be.
    stopped_by_deadlock: bool,
    /// The LLR stall indicator (scenarios where an LLR link can stall for good).
    llr_stalls: Option<LlrStallWatch>,
    /// The run stopped early: it waits for idle, and an LLR link stalled for good.
    stopped_by_llr_stall: bool,
    /// The run was stopped before its end by its caller (Ctrl-C): it ends where it was;
    /// the end it was going to (None: when idle).
    interrupted: Option<Option<Time>>,
    /// Samples for `--plot`.
    recorder: Option<recorder::Recorder>,
    record_window: Option<(Time, Time)>,
    /// The PFC log's file, opened when the run was built (written when it ends).
    pfc_log: Option<lossless_sys::output::OutputFile>,
    /// An output file that could not be written at the end (the PFC log): the run and
    /// its report stand, and the caller says what failed after them.
    output_error: Option<SimError>,
    /// Why the run takes one thread where `--threads` asked for more (they would not pay
    /// off).
    threads_note: Option<String>,
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
        let mut hosts = build::hosts(&scenario, seed, &cabling);
        build::exchange_credits(&scenario, &mut switches, &mut hosts, &cabling);
        if opts.record.is_some() {
            let lag = longest_frame(&scenario);
            for h in &mut hosts {
                h.host.track_wire_time(lag);
            }
        }
        let observers = Observers::create(&scenario, opts, &mut switches, &hosts)?;
        let mut threads_note = None;
        let threads = if b.until_idle || observers.on_change() {
            1
        } else {
            let every = threads::shortest_period(&scenario, opts.record);
            match opts.threads {
                Threads::Auto => threads::auto(&switches, &hosts, every),
                Threads::Exactly(n) => n,
                Threads::Asked(n) if n <= 1 => n,
                Threads::Asked(n) => match threads::why_no_gain(&switches, &hosts, every, n) {
                    Some(why) => {
                        threads_note = Some(why);
                        1
                    }
                    None => n,
                },
            }
        };
        let plan = threads::plan(&switches, &hosts, threads);
        let loss = loss::Loss::of(&scenario, seed);
        let count = plan.shares.len();
        let shares: Vec<Share> = plan
            .shares
            .into_iter()
            .enumerate()
            .map(|(i, nodes)| Share::new(i as u32, count, nodes, loss.clone()))
            .collect();
        let pfc_log = match &opts.pfc_log {
            Some(path) => Some(lossless_sys::output::OutputFile::create(path).map_err(
                |source| SimError::Output {
                    path: path.clone(),
                    source,
                },
            )?),
            None => None,
        };
        let llr_stalls = LlrStallWatch::new(&cabling, &switches, &hosts);
        Ok(Sim {
            seed,
            end: b.end,
            until_idle: b.until_idle,
            credit_links: scenario.switches.iter().any(|s| {
                (0..s.config.ports.len()).any(|p| s.config.flow_control_of(p) == FlowControl::Cbfc)
            }),
            scheduled_left: 0,
            now: Time::ZERO,
            queue: EventQueue::new(),
            switches,
            hosts,
            links_up: vec![true; cabling.links],
            loss,
            shares,
            placement: plan.placement,
            lookahead: plan.lookahead.unwrap_or(Time(u64::MAX)),
            failed: None,
            cabling,
            observers,
            measure: scenario.run.measure,
            window_open: None,
            window_close: None,
            stats: EngineStats::default(),
            deadlocks: (!scenario.run.links.is_empty())
                .then(|| DeadlockWatch::new(scenario.run.deadlock_time)),
            stopped_by_deadlock: false,
            llr_stalls,
            stopped_by_llr_stall: false,
            interrupted: None,
            recorder: opts.record.map(|every| {
                recorder::Recorder::new(every, opts.max_plot_samples, longest_frame(&scenario))
            }),
            record_window: opts.record_window,
            pfc_log,
            output_error: None,
            threads_note,
            scenario,
        })
    }

    /// The output file that could not be written when the run ended, if one could not
    /// (the run's report stands without it).
    pub fn take_output_error(&mut self) -> Option<SimError> {
        self.output_error.take()
    }

    /// Why the run takes one thread where `--threads N` asked for more: threads would
    /// make it slower (`--force-threads` takes them anyway).
    pub fn threads_note(&self) -> Option<&str> {
        self.threads_note.as_deref()
    }

    /// Why the run takes one thread whatever `--threads` says (None: it takes them).
    pub fn one_thread_because(&self) -> Option<&'static str> {
        if self.until_idle {
            Some("waits for idle (no duration), which is looked for at every instant")
        } else if self.observers.on_change() {
            Some("writes its time series at every change (`sample: change`)")
        } else {
            None
        }
    }

    /// Current virtual time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedule the run's own event `ev` at `t`.
    fn push(&mut self, t: Time, ev: Ev) {
        self.queue.push(t, ev.key(), ev);
    }

    /// The first event of everything that runs on its own: scheduled events, the window's
    /// edges, samples, checks, and every node's first deadline.
    fn start(&mut self) {
        for i in 0..self.scenario.run.events.len() {
            let at = self.scenario.run.events[i].at;
            if at <= self.end {
                self.push(at, Ev::Scheduled(i as u32));
                self.scheduled_left += 1;
            }
        }
        if let Some(from) = self.observers.series_from().filter(|f| *f <= self.end) {
            self.push(from, Ev::Sample);
        }
        if self.measure.from == Time::ZERO {
            self.sample_window(true);
        } else if self.measure.from <= self.end {
            self.push(self.measure.from, Ev::Measure(true));
        }
        if let Some(to) = self.measure.to.filter(|t| *t < self.end) {
            self.push(to, Ev::Measure(false));
        }
        if self.recorder.is_some() {
            let from = self.record_window.map_or(Time::ZERO, |w| w.0);
            if from <= self.end {
                self.push(from, Ev::Record);
            }
        }
        if let Some(w) = &self.deadlocks {
            let first = w.next_check(Time::ZERO);
            if first <= self.end {
                self.push(first, Ev::DeadlockCheck);
            }
        }
        if let Some(w) = &self.llr_stalls {
            let first = w.period();
            if first <= self.end {
                self.push(first, Ev::LlrCheck);
            }
        }
        for h in 0..self.hosts.len() {
            self.schedule(NodeId::Host(h as u32));
        }
        for s in 0..self.switches.len() {
            self.schedule(NodeId::Switch(s as u32));
        }
    }

    /// Run to the end; `tick` is called now and then with where the run stands, and may
    /// stop it there ([`Go::Stop`]: the run ends at the time reached, marked interrupted).
    ///
    /// Instant by instant: the run's own events at an instant first, with the whole fabric
    /// there; then the nodes' events up to the next of the run's own (the shares side by
    /// side) or, when something looks at every instant (a run waiting for idle, a time
    /// series written at every change), up to the end of the instant.
    pub fn run(&mut self, mut tick: impl FnMut(Tick) -> Go) -> Result<(), SimError> {
        let wall = std::time::Instant::now();
        self.start();
        let per_instant = self.until_idle || self.observers.on_change();
        let end = (!self.until_idle).then_some(self.end);
        loop {
            let run_next = self.queue.next_time();
            let nodes_next = self
                .shares
                .iter_mut()
                .filter_map(|s| s.queue.next_time())
                .min();
            let Some(t) = run_next.into_iter().chain(nodes_next).min() else {
                break;
            };
            if t > self.end {
                break;
            }
            // A run waiting for idle ends once an instant is done and leaves the network
            // idle: checked when the next instant begins, so that every event of an
            // instant is handled (whether one node's event left the network idle before
            // another's at that instant depends on the order between them).
            if t > self.now && self.until_idle && self.idle() {
                break;
            }
            self.now = t;
            self.observers.instant(t, &self.switches, &mut self.hosts)?;
            if run_next != Some(t) {
                let limit = run_next
                    .unwrap_or(Time(u64::MAX))
                    .min(self.end.saturating_add(Time(1)));
                let limit = if per_instant {
                    limit.min(t + Time(1))
                } else {
                    limit
                };
                if self.advance(limit, end, &mut tick) == Go::Stop {
                    self.interrupted = Some(end);
                    break;
                }
                if let Some(e) = self.failure() {
                    return Err(e);
                }
                continue;
            }
            let Some((_, Next::Event(ev))) = self.queue.pop() else {
                unreachable!("the run's own events are events, not wake-ups");
            };
            match ev {
                // Watching changes nothing, so it is not counted as an event.
                Ev::Record => {
                    self.record();
                    continue;
                }
                Ev::DeadlockCheck => {
                    if self.check_deadlock() {
                        self.stopped_by_deadlock = true;
                        break;
                    }
                    continue;
                }
                Ev::LlrCheck => {
                    if self.check_llr_stall() {
                        self.stopped_by_llr_stall = true;
                        break;
                    }
                    continue;
                }
                Ev::Scheduled(i) => {
                    self.scheduled_left -= 1;
                    self.scheduled_event(i as usize)
                }
                Ev::Sample => self.sample()?,
                Ev::Measure(open) => self.sample_window(open),
            }
            self.stats.events += 1;
            if let Some(e) = self.failure() {
                return Err(e);
            }
        }
        self.finish(wall)
    }

    /// Handle the nodes' events before `limit`: on this thread with one share, side by
    /// side with several. Stops early when `tick` says so.
    fn advance(&mut self, limit: Time, end: Option<Time>, tick: &mut impl FnMut(Tick) -> Go) -> Go {
        let fabric = Fabric {
            placement: &self.placement,
            links_up: &self.links_up,
            switches: self.switches.len(),
            end: self.end,
        };
        if let [share] = self.shares.as_mut_slice() {
            let mut all = share::All {
                switches: &mut self.switches,
                hosts: &mut self.hosts,
            };
            loop {
                let reached = share.run_until(limit, &mut all, fabric, true);
                self.now = self.now.max(share.last);
                if reached == Reached::Limit {
                    return Go::On;
                }
                if tick(Tick { now: self.now, end }) == Go::Stop {
                    return Go::Stop;
                }
            }
        }
        let (go, reached) = threads::advance(
            &mut self.shares,
            &mut self.switches,
            &mut self.hosts,
            fabric,
            self.lookahead,
            limit,
            end,
            tick,
        );
        let last = self
            .shares
            .iter()
            .map(|s| s.last)
            .max()
            .unwrap_or(Time::ZERO);
        self.now = match go {
            Go::On => self.now.max(last),
            Go::Stop => self.now.max(reached),
        };
        go
    }

    /// The first capture write that failed, if any (taken: the run stops with it).
    fn failure(&mut self) -> Option<SimError> {
        self.failed
            .take()
            .or_else(|| self.shares.iter_mut().find_map(|s| s.failed.take()))
    }

    /// Close the run: its end, the window's last edge, the files, the hosts' counts.
    fn finish(&mut self, wall: std::time::Instant) -> Result<(), SimError> {
        if self.until_idle || self.interrupted.is_some() {
            self.end = self.now;
        } else {
            self.now = self.end;
        }
        if self.window_close.is_none() {
            self.sample_window(false);
        }
        self.record_end();
        for share in &mut self.shares {
            self.stats.add(&share.stats);
            for (sum, drawn) in self.loss.injected.iter_mut().zip(&share.loss.injected) {
                sum[0] += drawn[0];
                sum[1] += drawn[1];
            }
        }
        self.observers.finish(&mut self.switches, &mut self.hosts)?;
        if let Some(out) = self.pfc_log.take() {
            let path = out.path().to_path_buf();
            match pfc_log::write(out, self.switches.iter_mut().map(|n| &mut n.sw)) {
                Ok(_) => self.observers.files.pfc_log = Some(path),
                Err(source) => self.output_error = Some(SimError::Output { path, source }),
            }
        }
        self.stats.misdelivered = self.hosts.iter().map(|h| h.host.misdelivered).sum();
        self.stats.host_drops = self.hosts.iter().map(|h| h.host.dropped).sum();
        self.stats.wall_time_s = wall.elapsed().as_secs_f64();
        self.stats.threads = self.shares.len();
        Ok(())
    }

    /// Nothing on the wire, all flows done, every switch queue empty, nothing pending on
    /// any NIC — link upkeep aside: CBFC's periodic credit updates go on for ever on a
    /// settled link (every credit back, nothing held), so they neither keep the run going
    /// nor count as traffic on the wire. A port or NIC that holds frames it cannot send
    /// (nothing it could start, at any time, as things stand) is idle only once no event
    /// of the scenario is left that could move them (a transmitter enabled, a link
    /// brought up). Out of line: asked at every new instant of a run waiting for idle, it
    /// should not weigh on the loop of every other run.
    #[inline(never)]
    fn idle(&self) -> bool {
        let wire_empty = self.wire_empty();
        if !wire_empty && !self.credit_links {
            return false;
        }
        let stuck_is_idle = self.scheduled_left == 0;
        self.hosts.iter().all(|h| {
            h.host.flows_done(self.now)
                && (h.host.settled() || (stuck_is_idle && h.host.next_transmit().is_none()))
        }) && self.switches.iter().all(|s| {
            (0..s.sw.ports().len())
                .all(|p| s.sw.settled(p) || (stuck_is_idle && s.sw.next_transmit(p).is_none()))
        }) && (wire_empty || self.shares.iter().all(|s| s.on_wire.only_upkeep()))
    }

    /// No frame is on any wire (between shares, none is: what crosses is handed over
    /// before the run's own events).
    fn wire_empty(&self) -> bool {
        self.shares.iter().all(|s| s.on_wire.is_empty())
    }

    /// Node `id`'s share and local number there.
    fn placed(&self, id: NodeId) -> (usize, usize) {
        let (share, local) = self.placement.of[id.number(self.switches.len())];
        (share as usize, local as usize)
    }

    /// When the node numbered `i` (switches, then hosts) is next woken, if it is.
    fn wake_time(&self, i: usize) -> Option<Time> {
        let (share, local) = self.placement.of[i];
        self.shares[share as usize].queue.wake_time(local as usize)
    }

    /// Make sure node `id` is woken at its next deadline (not at all past the run's end).
    fn schedule(&mut self, id: NodeId) {
        let (share, local) = self.placed(id);
        let (node, same): (&mut dyn lossless_pipeline::Node, _) = match id {
            NodeId::Switch(s) => {
                let n = &mut self.switches[s as usize];
                (&mut n.sw, &mut n.same_time_wakes)
            }
            NodeId::Host(h) => {
                let n = &mut self.hosts[h as usize];
                (&mut n.host, &mut n.same_time_wakes)
            }
        };
        self.shares[share].wake_at(node, same, self.end, self.now, local);
    }

    /// What `--plot` recorded (None without it).
    pub fn recording(&self) -> Option<&recorder::Recording> {
        self.recorder.as_ref().map(|r| &r.rec)
    }

    /// What `--plot` recorded, the rest of the run freed (its queued frames, tables and
    /// histograms: once the report is built, a large fabric's JSON need not sit beside them).
    pub fn into_recording(self) -> Option<recorder::Recording> {
        self.recorder.map(|r| r.rec)
    }
}
