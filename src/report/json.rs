//! The JSON report of a run. The keys of design §7 are a contract: tests and users read
//! them. Extra keys may be added; none may be renamed.

use crate::measure::{PortShare, Window};
use crate::sim::Sim;
use lossless_buffer_model::{Time, PRIORITIES};
use lossless_pipeline::counters::PortCounters;
use lossless_pipeline::Switch;
use lossless_ports::flow::FlowRx;
use serde_json::{json, Value};

fn pfc(c: &PortCounters, paused: [u64; PRIORITIES], share: &PortShare) -> Value {
    json!({
        "tx_xoff": c.pfc.tx_xoff,
        "tx_xon": c.pfc.tx_xon,
        "rx_xoff": c.pfc.rx_xoff,
        "rx_xon": c.pfc.rx_xon,
        "rx_pause_ps": paused,
        "rx_pause_fraction": share.paused,
        "tx_frames": c.tx_pfc_frames,
        "rx_frames": c.rx_pfc_frames,
    })
}

/// Latency of a flow's frames received in the measurement window, in picoseconds:
/// p50/p99/p999 from the histogram (3 significant digits) clamped to the exact min and max.
pub fn latency(rx: &FlowRx) -> Value {
    let q = |x: f64| rx.latency_at(x).map(Time::as_ps);
    json!({
        "p50": q(0.5),
        "p99": q(0.99),
        "p999": q(0.999),
        "max": rx.latency_max.map(Time::as_ps),
        "min": rx.latency_min.map(Time::as_ps),
    })
}

/// The `measure` object: the window the report's rates and fractions cover.
pub fn measure(w: &Window) -> Value {
    json!({"from_ps": w.from.as_ps(), "to_ps": w.to.as_ps()})
}

/// Flow completion time: first bit sent to last bit received, for a finite flow whose
/// every frame arrived.
pub fn fct(sim: &Sim, i: usize) -> Option<Time> {
    let def = &sim.scenario.sim.flows[i];
    let rx = &sim.flows_rx[i];
    let tx = sim.hosts[def.src]
        .host
        .flows
        .iter()
        .find(|f| f.spec.id == def.spec.id)?;
    let finite = !matches!(def.spec.limit, lossless_ports::flow::Limit::Unbounded);
    (finite && tx.finished(sim.end) && rx.rx_packets == tx.tx_packets && rx.rx_packets > 0)
        .then(|| rx.last_rx.unwrap_or_default() - tx.first_tx.unwrap_or_default())
}

/// Totals accumulated while the switch and host sections are built.
#[derive(Clone, Copy, Debug, Default)]
pub struct Totals {
    /// Frames dropped anywhere.
    pub drops: u64,
    /// Frames of lossless PGs dropped by a switch MMU.
    pub lossless_drops: u64,
    /// PFC frames sent by switches and hosts.
    pub pfc_tx: u64,
    /// PFC frames received by switches and hosts.
    pub pfc_rx: u64,
    /// Frames marked CE.
    pub ecn: u64,
    /// PFC frames sent and not yet received when the run ended.
    pub pfc_in_flight: u64,
}

impl Totals {
    /// The `totals` object of the contract.
    pub fn json(&self) -> Value {
        json!({
            "drops": self.drops,
            "lossless_drops": self.lossless_drops,
            "pfc_tx_frames": self.pfc_tx,
            "pfc_rx_frames": self.pfc_rx,
            "pfc_in_flight_frames": self.pfc_in_flight,
            "ecn_marked": self.ecn,
        })
    }
}

/// One switch's section of the report (ports with PFC, queues and PGs; pools; drops), as of
/// `end` (for pause durations), with utilisation and pause fractions over `window` (in
/// which the switch has index `si`); adds to `t`.
pub fn switch_report(sw: &Switch, si: usize, end: Time, window: &Window, t: &mut Totals) -> Value {
    let cell = sw.mmu().cell();
    t.drops += sw.drops().total();
    t.lossless_drops += sw.lossless_drops();
    t.ecn += sw.ecn_marked();
    let ports: Vec<Value> = sw
        .ports()
        .iter()
        .enumerate()
        .map(|(p, port)| {
            let c = &port.counters;
            t.pfc_tx += c.tx_pfc_frames;
            t.pfc_rx += c.rx_pfc_frames;
            let paused: [u64; PRIORITIES] = core::array::from_fn(|pr| sw.paused_time(p, pr, end).as_ps());
            let queues: Vec<Value> = (0..PRIORITIES)
                .map(|q| {
                    let qc = &port.queue_counters[q];
                    let b = &sw.mmu().queues[p * PRIORITIES + q];
                    json!({
                        "queue": q, "tx_packets": qc.tx_packets, "tx_bytes": qc.tx_bytes,
                        "drop_packets": qc.drop_packets, "drop_bytes": qc.drop_bytes,
                        "ecn_marked": qc.ecn_marked, "wred_drops": qc.wred_drops,
                        "watermark_bytes": b.watermark * cell,
                        "shared_watermark_bytes": b.shared_watermark * cell,
                    })
                })
                .collect();
            let pgs: Vec<Value> = (0..PRIORITIES)
                .map(|g| {
                    let s = &sw.mmu().pgs[p * PRIORITIES + g];
                    json!({
                        "pg": g, "lossless": s.lossless,
                        "shared_watermark_bytes": s.shared_watermark * cell,
                        "headroom_watermark_bytes": s.headroom_watermark * cell,
                        "drop_packets": s.drop_packets,
                    })
                })
                .collect();
            let wd: Vec<Value> = port
                .watchdog
                .iter()
                .enumerate()
                .filter(|(_, w)| w.storms > 0)
                .map(|(q, w)| json!({"queue": q, "storms": w.storms, "restorations": w.restorations, "dropped_packets": w.dropped_packets}))
                .collect();
            let share = window.switch_port(si, p);
            json!({
                "port": sw.config().ports[p].name,
                "speed_bps": sw.config().ports[p].speed.bps(),
                "link_up": port.link_up,
                "rx_packets": c.rx_packets, "rx_bytes": c.rx_bytes,
                "tx_packets": c.tx_packets, "tx_bytes": c.tx_bytes,
                "tx_utilization": share.utilization,
                "pfc": pfc(c, paused, &share),
                "queues": queues,
                "pgs": pgs,
                "pfcwd": wd,
            })
        })
        .collect();
    let pools: Vec<Value> = sw
        .mmu()
        .pools
        .iter()
        .map(|p| {
            json!({
                "name": p.spec.name,
                "size_bytes": p.spec.size.get(),
                "watermark_bytes": p.watermark * cell,
                "headroom_size_bytes": p.spec.xoff.get(),
                "headroom_watermark_bytes": p.headroom_watermark * cell,
            })
        })
        .collect();
    let drops: serde_json::Map<String, Value> = sw
        .drops()
        .nonzero()
        .map(|(r, n)| (r.name().to_string(), json!(n)))
        .collect();
    let l = sw.ledger();
    let fdb = sw.fdb().map(|f| {
        json!({
            "learned_entries": f.learned_entries(end),
            "aged_out": f.aged_out,
            "flushed": f.flushed,
            "full_misses": f.full_misses,
        })
    });
    json!({
        "name": sw.config().name,
        "ports": ports,
        "pools": pools,
        "drops_by_reason": drops,
        "lossless_drops": sw.lossless_drops(),
        "ledger": {
            "received": l.received,
            "consumed": l.consumed,
            "dropped_on_receive": l.dropped_on_receive,
            "forwarded": l.forwarded,
            "copies": l.copies,
            "refused": l.refused,
            "queued": l.queued,
            "sent": l.sent,
            "dropped_from_queue": l.dropped_from_queue,
            "still_queued": sw.queued_frames(),
        },
        "fdb": fdb,
    })
}

/// Build the report of a simulation run.
pub fn report(sim: &Sim) -> Value {
    let end = sim.end;
    let window = sim.window();
    let windowed = sim.scenario.sim.measure != Default::default();
    let mut t = Totals {
        drops: sim.stats.link_down_drops + sim.stats.unconnected_drops + sim.stats.host_drops,
        pfc_in_flight: sim.stats.pfc_in_flight,
        ..Totals::default()
    };
    let switches: Vec<Value> = sim
        .switches
        .iter()
        .enumerate()
        .map(|(si, n)| switch_report(&n.sw, si, end, &window, &mut t))
        .collect();
    let flows: Vec<Value> = sim
        .scenario
        .sim
        .flows
        .iter()
        .enumerate()
        .map(|(i, def)| {
            let rx = &sim.flows_rx[i];
            let tx = sim.hosts[def.src]
                .host
                .flows
                .iter()
                .find(|f| f.spec.id == def.spec.id);
            // With a measurement window, a flow still running when it closes is measured
            // to its end (the flows through one link then sum to at most its rate).
            let running = windowed
                && (rx.last_rx.is_some_and(|l| l > window.to)
                    || tx.is_some_and(|t| !t.finished(end) || t.tx_packets > rx.rx_packets));
            json!({
                "name": def.spec.name,
                "src": sim.scenario.sim.hosts[def.src].name,
                "dst": sim.scenario.sim.hosts[def.dst].name,
                "priority": def.spec.priority,
                "tx_packets": tx.map_or(0, |t| t.tx_packets),
                "tx_bytes": tx.map_or(0, |t| t.tx_bytes),
                "rx_packets": rx.rx_packets,
                "rx_bytes": rx.rx_bytes,
                "reordered": rx.reordered,
                "ce_marked": rx.ce_marked,
                "skipped_slots": tx.map_or(0, |t| t.skipped_slots),
                "throughput_bps": rx.throughput_bps(running.then_some(window.to)),
                "fct_ps": fct(sim, i).map(Time::as_ps),
                "latency_ps": latency(rx),
            })
        })
        .collect();
    let hosts: Vec<Value> = sim
        .hosts
        .iter()
        .enumerate()
        .map(|(hi, h)| {
            let host = &h.host;
            let c = &host.counters;
            t.pfc_tx += c.tx_pfc_frames;
            t.pfc_rx += c.rx_pfc_frames;
            let paused: [u64; PRIORITIES] =
                core::array::from_fn(|p| host.paused_time(p, end).as_ps());
            let share = window.host(hi);
            json!({
                "name": host.name,
                "pfc": pfc(c, paused, &share),
                "paused_ps": paused,
                "paused_fraction": share.paused,
                "tx_utilization": share.utilization,
                "tx_packets": c.tx_packets, "tx_bytes": c.tx_bytes,
                "rx_packets": c.rx_packets, "rx_bytes": c.rx_bytes,
                "rx_drops": host.rx_drops,
                "rx_buffer_watermark_bytes": host.rx_watermark,
            })
        })
        .collect();
    let st = &sim.stats;
    json!({
        "name": sim.scenario.name,
        "seed": sim.seed,
        "sim_time_ps": end.as_ps(),
        "measure": measure(&window),
        "wall_time_s": st.wall_time_s,
        "events": st.events,
        "packet_hops": st.packet_hops,
        "totals": t.json(),
        "engine": {
            "unconnected_drops": st.unconnected_drops,
            "link_down_drops": st.link_down_drops,
            "host_drops": st.host_drops,
            "misdelivered": st.misdelivered,
            "stalls": st.stalls,
        },
        "switches": switches,
        "flows": flows,
        "hosts": hosts,
        "outputs": {
            "pcap": sim.files.pcap,
            "timeseries": sim.files.timeseries,
        },
    })
}
