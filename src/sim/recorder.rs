//! What `--plot` draws, recorded in memory over the whole run in bounded memory: samples
//! every `interval`; when their number reaches the cap, neighbouring samples merge in pairs
//! (a level keeps its peak, a count its later value, a state whether it held at all) and
//! the interval doubles, so a run of any length fits and the figures reach its end. A
//! stretch in which nothing changes (the engine knows when the next thing will) is not
//! sampled at all: its first and last instants are, and it is listed as a gap, which the
//! figures compress on their time axis. Per switch port the ingress PGs (shared and headroom use, XOFF and XON levels)
//! and egress queues (bytes, WRED Kmin/Kmax) that held data, lossy ones included; pauses
//! and PFC frames per port and lossless priority; per host its pauses, PFC frames and
//! receive buffer; per flow the frame bits received, counted over their wire time; DCQCN
//! rates; each switch port's busy time; CE marks per WRED queue; drops by reason; the
//! bytes each next-hop group steered to each member; per credited CBFC channel of a
//! switch port or host, the credits its sender holds against its limit; and per LLR port,
//! the NACKs it sent and the frames it replayed.

use super::{HostNode, SwitchNode};
use lossless_buffer_model::{priorities_in, Time, PRIORITIES};
use lossless_pipeline::drop_reason::DropReason;
use lossless_ports::flow::FlowRx;

/// A flow as the recorder sees it: name, whether its sender runs DCQCN, its receiver.
pub type FlowView<'a> = (&'a str, bool, &'a FlowRx);

/// A series that stays 0 until its first nonzero value (nothing is stored before it).
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// Index of the first stored sample (None: all zero so far).
    pub start: Option<usize>,
    /// Values from `start` on.
    pub values: Vec<u64>,
}

impl Series {
    /// Sample `i` is `v`.
    fn push(&mut self, i: usize, v: u64) {
        if self.start.is_none() {
            if v == 0 {
                return;
            }
            self.start = Some(i);
        }
        self.values.push(v);
    }

    /// Sample `i` is `v`, stored even when 0 (a level that goes with another series).
    fn set(&mut self, i: usize, v: u64) {
        self.start.get_or_insert(i);
        self.values.push(v);
    }

    /// Sample `i`.
    pub fn at(&self, i: usize) -> u64 {
        match self.start {
            Some(s) if i >= s => self.values.get(i - s).copied().unwrap_or(0),
            _ => 0,
        }
    }

    /// Any nonzero sample?
    pub fn any(&self) -> bool {
        self.start.is_some()
    }

    /// The largest sample.
    pub fn max(&self) -> u64 {
        self.values.iter().copied().max().unwrap_or(0)
    }

    /// The smallest stored sample (0 when none).
    pub fn min(&self) -> u64 {
        self.values.iter().copied().min().unwrap_or(0)
    }

    /// Repeat the last sample (sample `i` is the one before it).
    fn hold(&mut self, i: usize) {
        if self.start.is_some() {
            let v = self.at(i - 1);
            self.values.push(v);
        }
    }

    /// Merge samples in pairs (of `n` in all) with `f`.
    fn coarsen(&mut self, n: usize, f: impl Fn(u64, u64) -> u64) {
        let Some(start) = self.start else { return };
        let from = start / 2;
        self.values = (from..n.div_ceil(2))
            .map(|k| match 2 * k + 1 < n {
                true => f(self.at(2 * k), self.at(2 * k + 1)),
                false => self.at(2 * k),
            })
            .collect();
        self.start = Some(from);
    }
}

/// Merge the samples of `v` in pairs with `f` (an odd last one stays as it is).
fn coarsen_vec<T: Copy>(v: &mut Vec<T>, f: impl Fn(T, T) -> T) {
    *v = v
        .chunks(2)
        .map(|c| match c {
            [a, b] => f(*a, *b),
            [a] => *a,
            _ => unreachable!(),
        })
        .collect();
}

/// Repeat the last sample of `v`.
fn hold_vec<T: Copy>(v: &mut Vec<T>) {
    if let Some(x) = v.last().copied() {
        v.push(x);
    }
}

/// Mix `x` into the fingerprint `h` of a sample.
fn mix(h: &mut u64, x: u64) {
    *h = (h.rotate_left(5) ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
}

/// An ingress PG of one switch port.
#[derive(Clone, Debug, Default)]
pub struct PgSeries {
    /// `switch:Port`.
    pub port: String,
    /// PG index.
    pub pg: usize,
    /// Lossless (has headroom and sends PFC).
    pub lossless: bool,
    /// Its headroom, bytes (0 for a lossy PG).
    pub headroom_capacity: u64,
    /// Shared bytes in use.
    pub shared: Series,
    /// Headroom bytes in use.
    pub headroom: Series,
    /// The XOFF point (its live shared limit), bytes, from the first sample with data.
    pub xoff_level: Series,
    /// The XON level, bytes (lossless PGs).
    pub xon_level: Series,
}

/// An egress queue of one switch port.
#[derive(Clone, Debug, Default)]
pub struct QueueSeries {
    /// `switch:Port`.
    pub port: String,
    /// Queue index.
    pub queue: usize,
    /// Carries a PFC-enabled priority.
    pub lossless: bool,
    /// WRED/ECN Kmin and Kmax of its green curve, bytes.
    pub wred: Option<(u64, u64)>,
    /// Bytes queued.
    pub bytes: Series,
}

/// One (switch port, lossless priority) of the pause timeline.
#[derive(Clone, Debug, Default)]
pub struct PausePrio {
    /// `switch:Port`.
    pub port: String,
    /// Priority.
    pub prio: usize,
    /// The port may not send this priority (a pause received is in effect).
    pub paused: Vec<bool>,
    /// The port holds its peer in XOFF for this priority.
    pub xoff_sent: Vec<bool>,
    /// PFC frames (XOFF and XON) the port has sent for this priority, in all.
    pub pfc_tx: Vec<u64>,
    /// PFC frames the port has received for this priority, in all.
    pub pfc_rx: Vec<u64>,
    /// The PFC watchdog holds this queue stormed (its action applies).
    pub stormed: Vec<bool>,
}

/// A host NIC per sample.
#[derive(Clone, Debug, Default)]
pub struct HostSeries {
    /// Host name.
    pub name: String,
    /// Per priority, per sample.
    pub paused: Vec<[bool; PRIORITIES]>,
    /// PFC frames the NIC has sent, per priority, in all, per sample.
    pub pfc_tx: Vec<[u64; PRIORITIES]>,
    /// Its receive buffer's size, XOFF and XON levels, bytes (None: unbounded).
    pub rx_levels: Option<(u64, u64, u64)>,
    /// Receive-buffer occupancy, bytes.
    pub rx_buffer: Series,
}

/// A queue with a WRED profile: frames sent and frames marked CE, in all, per sample.
#[derive(Clone, Debug, Default)]
pub struct QueueMarks {
    /// `switch:Port`.
    pub port: String,
    /// Queue index.
    pub queue: usize,
    /// Frames the queue has sent.
    pub tx: Vec<u64>,
    /// Frames it has marked CE.
    pub marked: Vec<u64>,
}

/// Frames dropped in all, per sample, by one switch for one reason (or its lossless ones).
#[derive(Clone, Debug, Default)]
pub struct DropSeries {
    /// Switch name, or `hosts` for the host NICs' drops.
    pub node: String,
    /// The reason's report name; `lossless` for the switch's lossless drops (any reason).
    pub reason: String,
    /// Cumulative frames.
    pub frames: Series,
}

/// A next-hop group's members: bytes steered to each, in all, per sample.
#[derive(Clone, Debug, Default)]
pub struct GroupSeries {
    /// `switch:group`.
    pub name: String,
    /// Per member: its port and cumulative bytes.
    pub members: Vec<(String, Series)>,
}

/// A flow's received frame bits, counted over their wire time, per sample at the sample
/// time less [`Recording::flow_lag`] (when every frame on the wire then has arrived).
#[derive(Clone, Debug, Default)]
pub struct FlowSeries {
    /// Flow name.
    pub name: String,
    /// Line rate of the receiving host's link, bit/s.
    pub link_bps: u64,
    /// Cumulative bits.
    pub bits: Vec<f64>,
}

/// One credited CBFC channel of a switch port or host NIC, as its sender sees it.
#[derive(Clone, Debug, Default)]
pub struct CreditSeries {
    /// `switch:Port` or the host.
    pub port: String,
    /// The virtual channel.
    pub vc: usize,
    /// Credits the peer's receiver gave it (its limit).
    pub limit: u64,
    /// Credits in use (consumed, not yet freed by a CF_Update).
    pub used: Series,
}

/// One switch port or host NIC that speaks LLR: what it asked for and what it sent again.
#[derive(Clone, Debug, Default)]
pub struct LlrSeries {
    /// `switch:Port` or the host.
    pub port: String,
    /// NACKs it had sent, in all (its receiver asking for a replay).
    pub nacks: Series,
    /// Frames it had replayed, in all (its sender answering a NACK or its timer).
    pub replayed: Series,
}

/// Everything recorded.
#[derive(Clone, Debug, Default)]
pub struct Recording {
    /// Sample times (each sample stands for the interval that ends there).
    pub times: Vec<Time>,
    /// The interval samples were taken at last (it doubles as the run grows).
    pub interval: Time,
    /// Times the samples merged in pairs.
    pub coarsened: u32,
    /// Stretches (from, to) in which nothing changed and no sample was taken: the samples
    /// at `from` and at `to` are equal.
    pub gaps: Vec<(Time, Time)>,
    /// Ingress PGs of every switch port.
    pub pgs: Vec<PgSeries>,
    /// Egress queues of every switch port.
    pub queues: Vec<QueueSeries>,
    /// Switch ports × lossless priorities, for the pause timeline.
    pub pauses: Vec<PausePrio>,
    /// Hosts.
    pub hosts: Vec<HostSeries>,
    /// Flows.
    pub flows: Vec<FlowSeries>,
    /// Flows' bits are those received by `times[i] − flow_lag`: the longest frame's wire
    /// time on any host link, so that frames still arriving are counted.
    pub flow_lag: Time,
    /// Per flow with DCQCN: name and current rate (bit/s) per sample.
    pub dcqcn_rate: Vec<(String, Vec<f64>)>,
    /// Per RC flow: name and the packets it had re-sent by each sample.
    pub resent: Vec<(String, Vec<u64>)>,
    /// Per switch port: `switch:Port` and the time its transmitter had been busy.
    pub port_busy: Vec<(String, Vec<Time>)>,
    /// Queues with a WRED profile.
    pub marks: Vec<QueueMarks>,
    /// Drops by node and reason.
    pub drops: Vec<DropSeries>,
    /// Next-hop groups.
    pub groups: Vec<GroupSeries>,
    /// Credited CBFC channels: switch ports' first, then hosts'.
    pub credits: Vec<CreditSeries>,
    /// LLR ports: switch ports' first, then hosts'.
    pub llr: Vec<LlrSeries>,
}

/// Samples the network into a [`Recording`] every `interval`, keeping at most
/// `max_samples` samples (merging them in pairs, the interval doubled, when it would hold
/// more).
#[derive(Clone, Debug)]
pub struct Recorder {
    /// Sampling interval now.
    pub interval: Time,
    max_samples: usize,
    /// What it has recorded.
    pub rec: Recording,
    started: bool,
    /// The fingerprint of the last sample's values.
    last: Option<u64>,
}

impl Recorder {
    /// A recorder sampling every `interval`, keeping at most `max_samples` samples (at
    /// least 16); flows are sampled `flow_lag` late (see [`Recording::flow_lag`]).
    pub fn new(interval: Time, max_samples: usize, flow_lag: Time) -> Recorder {
        Recorder {
            interval,
            max_samples: max_samples.max(16),
            rec: Recording {
                flow_lag,
                interval,
                ..Recording::default()
            },
            started: false,
            last: None,
        }
    }

    /// The time of the last sample.
    pub fn last_time(&self) -> Option<Time> {
        self.rec.times.last().copied()
    }

    /// Nothing changes until `until`: a sample equal to the last one is put there, and the
    /// stretch from the last sample is a gap.
    pub fn hold(&mut self, until: Time) {
        let Some(from) = self.last_time().filter(|t| until > *t) else {
            return;
        };
        if self.rec.times.len() + 1 >= self.max_samples {
            self.coarsen();
        }
        let r = &mut self.rec;
        let i = r.times.len();
        r.times.push(until);
        r.gaps.push((from, until));
        for p in &mut r.pgs {
            for s in [
                &mut p.shared,
                &mut p.headroom,
                &mut p.xoff_level,
                &mut p.xon_level,
            ] {
                s.hold(i);
            }
        }
        for q in &mut r.queues {
            q.bytes.hold(i);
        }
        for p in &mut r.pauses {
            hold_vec(&mut p.paused);
            hold_vec(&mut p.xoff_sent);
            hold_vec(&mut p.pfc_tx);
            hold_vec(&mut p.pfc_rx);
            hold_vec(&mut p.stormed);
        }
        for h in &mut r.hosts {
            hold_vec(&mut h.paused);
            hold_vec(&mut h.pfc_tx);
            h.rx_buffer.hold(i);
        }
        for f in &mut r.flows {
            hold_vec(&mut f.bits);
        }
        for (_, v) in &mut r.dcqcn_rate {
            hold_vec(v);
        }
        for (_, v) in &mut r.resent {
            hold_vec(v);
        }
        for (_, v) in &mut r.port_busy {
            hold_vec(v);
        }
        for m in &mut r.marks {
            hold_vec(&mut m.tx);
            hold_vec(&mut m.marked);
        }
        for d in &mut r.drops {
            d.frames.hold(i);
        }
        for g in &mut r.groups {
            for (_, s) in &mut g.members {
                s.hold(i);
            }
        }
        for c in &mut r.credits {
            c.used.hold(i);
        }
        for l in &mut r.llr {
            l.nacks.hold(i);
            l.replayed.hold(i);
        }
    }

    /// Merge the samples in pairs and double the interval: a level keeps the peak of the
    /// two, a count (or a time busy) the later, a state whether it held in either.
    fn coarsen(&mut self) {
        let r = &mut self.rec;
        let n = r.times.len();
        let (max, last) = (|a: u64, b: u64| a.max(b), |_: u64, b: u64| b);
        coarsen_vec(&mut r.times, |_, b| b);
        for p in &mut r.pgs {
            for s in [
                &mut p.shared,
                &mut p.headroom,
                &mut p.xoff_level,
                &mut p.xon_level,
            ] {
                s.coarsen(n, max);
            }
        }
        for q in &mut r.queues {
            q.bytes.coarsen(n, max);
        }
        for p in &mut r.pauses {
            coarsen_vec(&mut p.paused, |a, b| a || b);
            coarsen_vec(&mut p.xoff_sent, |a, b| a || b);
            coarsen_vec(&mut p.stormed, |a, b| a || b);
            coarsen_vec(&mut p.pfc_tx, last);
            coarsen_vec(&mut p.pfc_rx, last);
        }
        for h in &mut r.hosts {
            coarsen_vec(&mut h.paused, |a, b| core::array::from_fn(|q| a[q] || b[q]));
            coarsen_vec(&mut h.pfc_tx, |_, b| b);
            h.rx_buffer.coarsen(n, max);
        }
        for f in &mut r.flows {
            coarsen_vec(&mut f.bits, |_, b| b);
        }
        for (_, v) in &mut r.dcqcn_rate {
            coarsen_vec(v, |_, b| b);
        }
        for (_, v) in &mut r.resent {
            coarsen_vec(v, last);
        }
        for (_, v) in &mut r.port_busy {
            coarsen_vec(v, |_, b| b);
        }
        for m in &mut r.marks {
            coarsen_vec(&mut m.tx, last);
            coarsen_vec(&mut m.marked, last);
        }
        for d in &mut r.drops {
            d.frames.coarsen(n, last);
        }
        for g in &mut r.groups {
            for (_, s) in &mut g.members {
                s.coarsen(n, last);
            }
        }
        for c in &mut r.credits {
            c.used.coarsen(n, max);
        }
        for l in &mut r.llr {
            l.nacks.coarsen(n, last);
            l.replayed.coarsen(n, last);
        }
        self.interval = Time(self.interval.as_ps() * 2);
        r.interval = self.interval;
        r.coarsened += 1;
    }

    /// The fingerprint of sample `i`'s values (equal fingerprints: nothing changed).
    fn fingerprint(&self, i: usize) -> u64 {
        let r = &self.rec;
        let mut h = 0u64;
        for p in &r.pgs {
            for s in [&p.shared, &p.headroom, &p.xoff_level, &p.xon_level] {
                mix(&mut h, s.at(i));
            }
        }
        for q in &r.queues {
            mix(&mut h, q.bytes.at(i));
        }
        for p in &r.pauses {
            mix(
                &mut h,
                u64::from(p.paused[i]) | u64::from(p.xoff_sent[i]) << 1,
            );
            mix(&mut h, u64::from(p.stormed[i]));
            mix(&mut h, p.pfc_tx[i] ^ p.pfc_rx[i].rotate_left(32));
        }
        for host in &r.hosts {
            mix(
                &mut h,
                host.paused[i].iter().fold(0, |m, b| m << 1 | u64::from(*b)),
            );
            mix(&mut h, host.pfc_tx[i].iter().sum());
            mix(&mut h, host.rx_buffer.at(i));
        }
        for f in &r.flows {
            mix(&mut h, f.bits[i].to_bits());
        }
        for (_, v) in &r.dcqcn_rate {
            mix(&mut h, v[i].to_bits());
        }
        for (_, v) in &r.resent {
            mix(&mut h, v[i]);
        }
        for (_, v) in &r.port_busy {
            mix(&mut h, v[i].as_ps());
        }
        for m in &r.marks {
            mix(&mut h, m.tx[i] ^ m.marked[i].rotate_left(32));
        }
        for d in &r.drops {
            mix(&mut h, d.frames.at(i));
        }
        for g in &r.groups {
            for (_, s) in &g.members {
                mix(&mut h, s.at(i));
            }
        }
        for c in &r.credits {
            mix(&mut h, c.used.at(i));
        }
        for l in &r.llr {
            mix(&mut h, l.nacks.at(i) ^ l.replayed.at(i).rotate_left(32));
        }
        h
    }

    fn start(&mut self, switches: &[SwitchNode], hosts: &[HostNode], flows: &[FlowView]) {
        self.started = true;
        let r = &mut self.rec;
        for s in switches {
            let (c, mmu) = (s.sw.config(), s.sw.mmu());
            for (p, port) in c.ports.iter().enumerate() {
                let name = format!("{}:{}", c.name, port.name);
                for g in 0..PRIORITIES {
                    let pg = mmu.pg(p, g);
                    r.pgs.push(PgSeries {
                        port: name.clone(),
                        pg: g,
                        lossless: pg.lossless,
                        headroom_capacity: pg.headroom_cells * mmu.cell(),
                        ..PgSeries::default()
                    });
                }
                for q in 0..PRIORITIES {
                    let wred = c.qos.queue_wred[q].and_then(|w| w.colors[0].curve);
                    r.queues.push(QueueSeries {
                        port: name.clone(),
                        queue: q,
                        lossless: c.qos.lossless_queues() & (1 << q) != 0,
                        wred: wred.map(|cv| (cv.min.get(), cv.max.get())),
                        ..QueueSeries::default()
                    });
                    if c.qos.queue_wred[q].is_some() {
                        r.marks.push(QueueMarks {
                            port: name.clone(),
                            queue: q,
                            ..QueueMarks::default()
                        });
                    }
                }
                for prio in priorities_in(c.qos.pfc_enable) {
                    r.pauses.push(PausePrio {
                        port: name.clone(),
                        prio,
                        ..PausePrio::default()
                    });
                }
                r.port_busy.push((name, Vec::new()));
            }
            for reason in DropReason::ALL {
                r.drops.push(DropSeries {
                    node: c.name.clone(),
                    reason: reason.name().into(),
                    ..DropSeries::default()
                });
            }
            r.drops.push(DropSeries {
                node: c.name.clone(),
                reason: "lossless".into(),
                ..DropSeries::default()
            });
            for (g, _) in s.sw.groups().into_iter().flat_map(|g| g.iter()) {
                r.groups.push(GroupSeries {
                    name: format!("{}:{}", c.name, g.name),
                    members: g
                        .members
                        .iter()
                        .map(|m| (c.ports[m.port as usize].name.clone(), Series::default()))
                        .collect(),
                });
            }
        }
        for s in switches {
            let c = s.sw.config();
            for (p, port) in s.sw.ports().iter().enumerate() {
                credit_series(
                    &mut r.credits,
                    format!("{}:{}", c.name, c.ports[p].name),
                    &port.link,
                );
            }
        }
        for h in hosts {
            credit_series(&mut r.credits, h.host.name.clone(), &h.host.link);
        }
        for s in switches {
            let c = s.sw.config();
            for (p, port) in s.sw.ports().iter().enumerate() {
                if port.link.llr().is_some() {
                    r.llr.push(LlrSeries {
                        port: format!("{}:{}", c.name, c.ports[p].name),
                        ..LlrSeries::default()
                    });
                }
            }
        }
        for h in hosts.iter().filter(|h| h.host.link.llr().is_some()) {
            r.llr.push(LlrSeries {
                port: h.host.name.clone(),
                ..LlrSeries::default()
            });
        }
        r.drops.push(DropSeries {
            node: "hosts".into(),
            reason: "nic".into(),
            ..DropSeries::default()
        });
        for h in hosts {
            r.hosts.push(HostSeries {
                name: h.host.name.clone(),
                rx_levels: h
                    .host
                    .nic()
                    .rx_buffer
                    .map(|b| (b.size.get(), b.xoff.get(), b.xon.get())),
                ..HostSeries::default()
            });
        }
        for h in hosts {
            for f in h.host.flows.iter().filter(|f| f.rc.is_some()) {
                r.resent.push((f.spec.name.clone(), Vec::new()));
            }
        }
        for (name, dcqcn, _) in flows {
            r.flows.push(FlowSeries {
                name: name.to_string(),
                ..FlowSeries::default()
            });
            if *dcqcn {
                r.dcqcn_rate.push((name.to_string(), Vec::new()));
            }
        }
    }

    /// Take a sample at `now` (merging the samples first when there are as many as the
    /// cap). True when something differs from the last sample.
    pub fn sample(
        &mut self,
        now: Time,
        switches: &[SwitchNode],
        hosts: &[HostNode],
        flows: &[FlowView],
        link_bps: &[u64],
    ) -> bool {
        if !self.started {
            self.start(switches, hosts, flows);
        }
        if self.rec.times.len() >= self.max_samples {
            self.coarsen();
        }
        let i = self.rec.times.len();
        self.rec.times.push(now);
        self.switches(i, now, switches);
        self.credits(i, switches, hosts);
        self.llr(i, switches, hosts);
        let r = &mut self.rec;
        for (h, rec) in hosts.iter().zip(&mut r.hosts) {
            let host = &h.host;
            let m = host.link.paused_mask(now);
            rec.paused.push(core::array::from_fn(|q| m & (1 << q) != 0));
            let pfc = &host.link.tx.counters.pfc;
            rec.pfc_tx
                .push(core::array::from_fn(|q| pfc.tx_xoff[q] + pfc.tx_xon[q]));
            if rec.rx_levels.is_some() {
                rec.rx_buffer.push(i, host.occupancy_at(now));
            }
        }
        let host_drops: u64 = hosts.iter().map(|h| h.host.dropped).sum();
        if let Some(d) = r.drops.last_mut() {
            d.frames.push(i, host_drops);
        }
        let at = now.saturating_sub(r.flow_lag);
        for (((_, _, rx), rec), bps) in flows.iter().zip(&mut r.flows).zip(link_bps) {
            rec.link_bps = *bps;
            rec.bits.push(rx.bits_by(at));
        }
        for h in hosts.iter() {
            for f in &h.host.flows {
                if let Some(rc) = &f.rc {
                    let resent = rc.stats.retransmitted_packets;
                    if let Some(rec) = r.resent.iter_mut().find(|(n, _)| *n == f.spec.name) {
                        rec.1.push(resent);
                    }
                }
                let Some(rp) = &f.dcqcn else { continue };
                if let Some(rec) = r.dcqcn_rate.iter_mut().find(|(n, _)| *n == f.spec.name) {
                    rec.1.push(rp.rate_bps());
                }
            }
        }
        let fp = self.fingerprint(i);
        self.last.replace(fp) != Some(fp)
    }

    /// Sample `i` of every LLR port's NACKs and replayed frames.
    fn llr(&mut self, i: usize, switches: &[SwitchNode], hosts: &[HostNode]) {
        if self.rec.llr.is_empty() {
            return;
        }
        let links = switches
            .iter()
            .flat_map(|s| s.sw.ports().iter().map(|p| &p.link))
            .chain(hosts.iter().map(|h| &h.host.link));
        for (l, rec) in links.filter_map(|l| l.llr()).zip(&mut self.rec.llr) {
            rec.nacks.push(i, l.counters.tx_nack_ctl_os);
            rec.replayed.push(i, l.counters.tx_replayed_frames);
        }
    }

    /// Sample `i` of every credited channel's credits in use.
    fn credits(&mut self, i: usize, switches: &[SwitchNode], hosts: &[HostNode]) {
        if self.rec.credits.is_empty() {
            return;
        }
        let links = switches
            .iter()
            .flat_map(|s| s.sw.ports().iter().map(|p| &p.link))
            .chain(hosts.iter().map(|h| &h.host.link));
        let mut k = 0;
        for link in links {
            let Some(c) = link.cbfc() else { continue };
            for vc in credited(c) {
                self.rec.credits[k].used.push(i, c.sender.used(vc));
                k += 1;
            }
        }
    }

    /// Sample `i` of every switch: buffers, pauses, busy time, marks, drops, groups.
    fn switches(&mut self, i: usize, now: Time, switches: &[SwitchNode]) {
        let r = &mut self.rec;
        let (mut g, mut q, mut k, mut tx, mut m, mut d, mut grp) = (0, 0, 0, 0, 0, 0, 0);
        for s in switches {
            let sw = &s.sw;
            let (mmu, c) = (sw.mmu(), sw.config());
            let cell = mmu.cell();
            for (p, port) in sw.ports().iter().enumerate() {
                for pg in 0..PRIORITIES {
                    let st = mmu.pg(p, pg);
                    let rec = &mut r.pgs[g];
                    rec.shared.push(i, st.shared_used * cell);
                    rec.headroom.push(i, st.headroom_used * cell);
                    if rec.shared.any() || rec.headroom.any() {
                        // Levels from the first sample with data on.
                        // A lossy PG's level is where it drops: no higher than its
                        // pool lets it reach.
                        let level = if rec.lossless {
                            mmu.pg_limit_bytes(p, pg)
                        } else {
                            mmu.pg_reach_bytes(p, pg)
                        };
                        rec.xoff_level.set(i, level);
                        if rec.lossless {
                            rec.xon_level.set(i, mmu.pg_xon_level_bytes(p, pg));
                        }
                    }
                    g += 1;
                }
                for queue in 0..PRIORITIES {
                    r.queues[q].bytes.push(i, mmu.queue(p, queue).used() * cell);
                    q += 1;
                }
                let paused = port.link.paused_mask(now);
                let xoff = port.xoff_mask();
                for prio in priorities_in(c.qos.pfc_enable) {
                    let rec = &mut r.pauses[k];
                    rec.paused.push(paused & (1 << prio) != 0);
                    rec.xoff_sent.push(xoff & (1 << prio) != 0);
                    let pfc = &port.link.tx.counters.pfc;
                    rec.pfc_tx.push(pfc.tx_xoff[prio] + pfc.tx_xon[prio]);
                    rec.pfc_rx.push(pfc.rx_xoff[prio] + pfc.rx_xon[prio]);
                    rec.stormed.push(port.watchdog[prio].stormed);
                    k += 1;
                }
                for queue in (0..PRIORITIES).filter(|x| c.qos.queue_wred[*x].is_some()) {
                    let qc = &port.queue_counters[queue];
                    r.marks[m].tx.push(qc.tx_packets);
                    r.marks[m].marked.push(qc.ecn_marked);
                    m += 1;
                }
                r.port_busy[tx].1.push(port.busy_time(now));
                tx += 1;
            }
            for reason in DropReason::ALL {
                r.drops[d].frames.push(i, sw.drops().get(*reason));
                d += 1;
            }
            r.drops[d].frames.push(i, sw.lossless_drops());
            d += 1;
            for (_, counters) in sw.groups().into_iter().flat_map(|g| g.iter()) {
                for (mi, (_, series)) in r.groups[grp].members.iter_mut().enumerate() {
                    series.push(i, counters.member_bytes[mi]);
                }
                grp += 1;
            }
        }
    }
}

/// The credited channels of a port's CBFC.
fn credited(c: &lossless_pipeline::link::cbfc::CbfcLink) -> impl Iterator<Item = usize> + '_ {
    (0..lossless_pipeline::link::cbfc::VCS).filter(|&v| c.setup.is_credited(v as u8))
}

/// A series for each credited channel of `link`, named `name`.
fn credit_series(
    out: &mut Vec<CreditSeries>,
    name: String,
    link: &lossless_pipeline::link::LinkLayer,
) {
    let Some(c) = link.cbfc() else { return };
    for vc in credited(c) {
        out.push(CreditSeries {
            port: name.clone(),
            vc,
            limit: c.sender.limit(vc),
            ..CreditSeries::default()
        });
    }
}
