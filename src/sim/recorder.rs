//! What `--plot` draws, recorded in memory at a fixed interval (at most a stated number of
//! samples): per switch port the ingress PGs (shared and headroom use, XOFF and XON levels)
//! and egress queues (bytes, WRED Kmin/Kmax) that held data, lossy ones included; pauses
//! and PFC frames per port and lossless priority; per host its pauses, PFC frames and
//! receive buffer; per flow the frame bits received, counted over their wire time; DCQCN
//! rates; each switch port's busy time; CE marks per WRED queue; drops by reason; and
//! the bytes each next-hop group steered to each member.

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

/// Everything recorded.
#[derive(Clone, Debug, Default)]
pub struct Recording {
    /// Sample times.
    pub times: Vec<Time>,
    /// Sampling stopped at the cap before the run ended.
    pub truncated: bool,
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
}

/// Samples the network into a [`Recording`] every `interval`, at most `max_samples` times.
#[derive(Clone, Debug)]
pub struct Recorder {
    /// Sampling interval.
    pub interval: Time,
    max_samples: usize,
    /// What it has recorded.
    pub rec: Recording,
    started: bool,
}

impl Recorder {
    /// A recorder sampling every `interval`, at most `max_samples` times; flows are
    /// sampled `flow_lag` late (see [`Recording::flow_lag`]).
    pub fn new(interval: Time, max_samples: usize, flow_lag: Time) -> Recorder {
        Recorder {
            interval,
            max_samples,
            rec: Recording {
                flow_lag,
                ..Recording::default()
            },
            started: false,
        }
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

    /// Take a sample at `now` (none past the cap; the recording says it was cut).
    pub fn sample(
        &mut self,
        now: Time,
        switches: &[SwitchNode],
        hosts: &[HostNode],
        flows: &[FlowView],
        link_bps: &[u64],
    ) {
        if !self.started {
            self.start(switches, hosts, flows);
        }
        if self.rec.times.len() >= self.max_samples {
            self.rec.truncated = true;
            return;
        }
        let i = self.rec.times.len();
        self.rec.times.push(now);
        self.switches(i, now, switches);
        let r = &mut self.rec;
        for (h, rec) in hosts.iter().zip(&mut r.hosts) {
            let host = &h.host;
            let m = host.tx.pause.paused_mask(now);
            rec.paused.push(core::array::from_fn(|q| m & (1 << q) != 0));
            let pfc = &host.tx.counters.pfc;
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
                    match r.resent.iter_mut().find(|(n, _)| *n == f.spec.name) {
                        Some(rec) => rec.1.push(resent),
                        None => r.resent.push((f.spec.name.clone(), vec![resent])),
                    }
                }
                let Some(rp) = &f.dcqcn else { continue };
                if let Some(rec) = r.dcqcn_rate.iter_mut().find(|(n, _)| *n == f.spec.name) {
                    rec.1.push(rp.rate_bps());
                }
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
                        rec.xoff_level.set(i, mmu.pg_limit_bytes(p, pg));
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
                let paused = port.tx.pause.paused_mask(now);
                let xoff = port.xoff_mask();
                for prio in priorities_in(c.qos.pfc_enable) {
                    let rec = &mut r.pauses[k];
                    rec.paused.push(paused & (1 << prio) != 0);
                    rec.xoff_sent.push(xoff & (1 << prio) != 0);
                    let pfc = &port.tx.counters.pfc;
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
