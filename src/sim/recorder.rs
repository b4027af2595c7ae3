//! What `--plot` draws, recorded in memory at a fixed interval: per switch port and lossless
//! priority the egress queue, the ingress PG's shared and headroom use with its XOFF and
//! XON levels, whether the port is paused and whether it holds its peer in XOFF; per host
//! whether it is paused; per flow the bytes received and its DCQCN rate; per switch port
//! the bytes sent (link utilisation); PFC frames sent and received (the timeline's ticks);
//! per queue with a WRED profile the frames sent and those marked CE.

use super::{HostNode, SwitchNode};
use lossless_buffer_model::{Time, PRIORITIES};
use lossless_ports::flow::FlowRx;

/// A flow as the recorder sees it: name, whether its sender runs DCQCN, its receiver.
pub type FlowView<'a> = (&'a str, bool, &'a FlowRx);

/// One (switch, port, priority): a series per quantity, one value per sample.
#[derive(Clone, Debug, Default)]
pub struct PortPrio {
    /// `switch:Port`.
    pub port: String,
    /// Priority (= PG = queue under the identity maps).
    pub prio: usize,
    /// Egress queue bytes.
    pub queue: Vec<u64>,
    /// Ingress PG shared bytes.
    pub pg_shared: Vec<u64>,
    /// Ingress PG headroom bytes.
    pub pg_headroom: Vec<u64>,
    /// The PG's XOFF point (its shared limit) at each sample, bytes.
    pub xoff_level: Vec<u64>,
    /// The PG's XON level at each sample, bytes.
    pub xon_level: Vec<u64>,
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

/// A host's pause state per sample.
#[derive(Clone, Debug, Default)]
pub struct HostPauses {
    /// Host name.
    pub name: String,
    /// Per priority, per sample.
    pub paused: Vec<[bool; PRIORITIES]>,
    /// PFC frames the NIC has sent, per priority, in all, per sample.
    pub pfc_tx: Vec<[u64; PRIORITIES]>,
}

/// Everything recorded.
#[derive(Clone, Debug, Default)]
pub struct Recording {
    /// Sample times.
    pub times: Vec<Time>,
    /// Switch ports × lossless priorities.
    pub ports: Vec<PortPrio>,
    /// Hosts.
    pub hosts: Vec<HostPauses>,
    /// Per flow: name and cumulative bytes received per sample.
    pub flow_rx: Vec<(String, Vec<u64>)>,
    /// Per flow with DCQCN: name and current rate (bit/s) per sample.
    pub dcqcn_rate: Vec<(String, Vec<f64>)>,
    /// Per switch port: `switch:Port`, its speed (bit/s) and cumulative bytes sent.
    pub port_tx: Vec<(String, u64, Vec<u64>)>,
    /// Queues with a WRED profile.
    pub marks: Vec<QueueMarks>,
}

/// Samples the network into a [`Recording`] every `interval`.
#[derive(Clone, Debug)]
pub struct Recorder {
    /// Sampling interval.
    pub interval: Time,
    /// What it has recorded.
    pub rec: Recording,
    started: bool,
}

impl Recorder {
    /// A recorder sampling every `interval`.
    pub fn new(interval: Time) -> Recorder {
        Recorder {
            interval,
            rec: Recording::default(),
            started: false,
        }
    }

    fn start(&mut self, switches: &[SwitchNode], hosts: &[HostNode], flows: &[FlowView]) {
        self.started = true;
        for s in switches {
            let c = s.sw.config();
            for port in c.ports.iter() {
                let name = format!("{}:{}", c.name, port.name);
                for prio in (0..PRIORITIES).filter(|q| c.qos.pfc_enable & (1 << q) != 0) {
                    self.rec.ports.push(PortPrio {
                        port: name.clone(),
                        prio,
                        ..PortPrio::default()
                    });
                }
                for queue in (0..PRIORITIES).filter(|q| c.qos.queue_wred[*q].is_some()) {
                    self.rec.marks.push(QueueMarks {
                        port: name.clone(),
                        queue,
                        ..QueueMarks::default()
                    });
                }
                self.rec.port_tx.push((name, port.speed.bps(), Vec::new()));
            }
        }
        for h in hosts {
            self.rec.hosts.push(HostPauses {
                name: h.host.name.clone(),
                ..HostPauses::default()
            });
        }
        for (name, dcqcn, _) in flows {
            self.rec.flow_rx.push((name.to_string(), Vec::new()));
            if *dcqcn {
                self.rec.dcqcn_rate.push((name.to_string(), Vec::new()));
            }
        }
    }

    /// Take a sample at `now`.
    pub fn sample(
        &mut self,
        now: Time,
        switches: &[SwitchNode],
        hosts: &[HostNode],
        flows: &[FlowView],
    ) {
        if !self.started {
            self.start(switches, hosts, flows);
        }
        self.rec.times.push(now);
        let mut k = 0;
        let mut tx = 0;
        let mut m = 0;
        for s in switches {
            let sw = &s.sw;
            let mmu = sw.mmu();
            let cell = mmu.cell();
            let c = sw.config();
            for (p, port) in sw.ports().iter().enumerate() {
                let paused = port.tx.pause.paused_mask(now);
                let xoff = port.xoff_mask();
                for prio in (0..PRIORITIES).filter(|q| c.qos.pfc_enable & (1 << q) != 0) {
                    let (pg, q) = (mmu.pg(p, prio), mmu.queue(p, prio));
                    let (limit, xon) =
                        (mmu.pg_limit_bytes(p, prio), mmu.pg_xon_level_bytes(p, prio));
                    let r = &mut self.rec.ports[k];
                    r.queue.push(q.used() * cell);
                    r.pg_shared.push(pg.shared_used * cell);
                    r.pg_headroom.push(pg.headroom_used * cell);
                    r.xoff_level.push(limit);
                    r.xon_level.push(xon);
                    r.paused.push(paused & (1 << prio) != 0);
                    r.xoff_sent.push(xoff & (1 << prio) != 0);
                    let pfc = &port.tx.counters.pfc;
                    r.pfc_tx.push(pfc.tx_xoff[prio] + pfc.tx_xon[prio]);
                    r.pfc_rx.push(pfc.rx_xoff[prio] + pfc.rx_xon[prio]);
                    r.stormed.push(port.watchdog[prio].stormed);
                    k += 1;
                }
                for queue in (0..PRIORITIES).filter(|q| c.qos.queue_wred[*q].is_some()) {
                    let qc = &port.queue_counters[queue];
                    let r = &mut self.rec.marks[m];
                    r.tx.push(qc.tx_packets);
                    r.marked.push(qc.ecn_marked);
                    m += 1;
                }
                self.rec.port_tx[tx].2.push(port.tx.counters.tx_bytes);
                tx += 1;
            }
        }
        for (h, rec) in hosts.iter().zip(&mut self.rec.hosts) {
            let m = h.host.tx.pause.paused_mask(now);
            rec.paused.push(core::array::from_fn(|q| m & (1 << q) != 0));
            let pfc = &h.host.tx.counters.pfc;
            rec.pfc_tx
                .push(core::array::from_fn(|q| pfc.tx_xoff[q] + pfc.tx_xon[q]));
        }
        for ((_, _, rx), rec) in flows.iter().zip(&mut self.rec.flow_rx) {
            rec.1.push(rx.rx_bytes);
        }
        for h in hosts {
            for f in &h.host.flows {
                let Some(rp) = &f.dcqcn else { continue };
                if let Some(rec) = self
                    .rec
                    .dcqcn_rate
                    .iter_mut()
                    .find(|(n, _)| *n == f.spec.name)
                {
                    rec.1.push(rp.rate_bps());
                }
            }
        }
    }
}
