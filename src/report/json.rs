//! Filling the report model ([`super::model`]) from the models at the end of a run: the
//! switch sections both engines share, and the simulator's flows, hosts and engine
//! counters.

use super::model::Counters;
use super::model::{
    AclRuleReport, DcqcnFlowReport, DeadlockReport, DeadlocksReport, EngineReport, FdbReport,
    FlowReport, GroupMemberReport, GroupReport, HostReport, InterruptedReport, LatencyReport,
    LedgerReport, LinkReport, LlrStallReport, LlrStallsReport, MeasureReport, OutputsReport,
    Percentiles, PfcReport, PgReport, PoolReport, PortReport, QueueReport, Report, SwitchReport,
    TcpReport, Totals, TransportReport, WatchdogReport,
};
use crate::measure::{PortShare, Window};
use crate::sim::outcome::Outcome;
use lossless_buffer_model::watchdog::QueueWatchdog;
use lossless_buffer_model::{Named, Time, PRIORITIES};
use lossless_pipeline::counters::{Ledger, PortCounters, PortTrimCounters};
use lossless_pipeline::Switch;
use lossless_ports::dcqcn::ReactionPoint;
use lossless_ports::flow::{FlowRx, FlowTx, Limit, Transport};

impl From<&Ledger> for LedgerReport {
    /// The switch's books (`still_queued` is the switch's to fill: it is not a counter).
    fn from(l: &Ledger) -> LedgerReport {
        LedgerReport {
            received: l.received,
            consumed: l.consumed,
            dropped_on_receive: l.dropped_on_receive,
            forwarded: l.forwarded,
            copies: l.copies,
            refused: l.refused,
            queued: l.queued,
            sent: l.sent,
            dropped_from_queue: l.dropped_from_queue,
            still_queued: 0,
        }
    }
}

impl From<&FlowRx> for LatencyReport {
    /// Latency of a flow's frames received in the measurement window, in picoseconds:
    /// p50/p99/p999 from the histogram (3 significant digits) clamped to the exact min and
    /// max.
    fn from(rx: &FlowRx) -> LatencyReport {
        let q = |x: f64| rx.latency_at(x).map(Time::as_ps);
        LatencyReport {
            p50: q(0.5),
            p99: q(0.99),
            p999: q(0.999),
            max: rx.latency_max.map(Time::as_ps),
            min: rx.latency_min.map(Time::as_ps),
        }
    }
}

impl From<&ReactionPoint> for DcqcnFlowReport {
    fn from(rp: &ReactionPoint) -> DcqcnFlowReport {
        DcqcnFlowReport {
            cnps: rp.cnps,
            rate_bps: rp.rate_bps(),
            target_bps: rp.target_bps(),
            alpha: rp.alpha(),
        }
    }
}

impl WatchdogReport {
    /// What the watchdog did to queue `queue`.
    fn of(queue: usize, w: &QueueWatchdog) -> WatchdogReport {
        WatchdogReport {
            queue,
            storms: w.storms,
            restorations: w.restorations,
            dropped_packets: w.dropped_packets,
            first_storm_ps: w.first_detected.map(|t| t.0),
            last_restored_ps: w.last_restored.map(|t| t.0),
            history_ps: w
                .history
                .iter()
                .map(|(d, r)| (d.0, r.map(|t| t.0)))
                .collect(),
        }
    }
}

fn pfc(c: &PortCounters, paused: [u64; PRIORITIES], share: &PortShare) -> PfcReport {
    PfcReport {
        tx_xoff: c.pfc.tx_xoff,
        tx_xon: c.pfc.tx_xon,
        rx_xoff: c.pfc.rx_xoff,
        rx_xon: c.pfc.rx_xon,
        rx_pause_ps: paused,
        rx_pause_fraction: share.paused,
        tx_frames: c.tx_pfc_frames,
        rx_frames: c.rx_pfc_frames,
        first_tx_xoff_ps: c.pfc.first_tx_xoff.map(|t| t.map(Time::as_ps)),
        last_tx_xon_ps: c.pfc.last_tx_xon.map(|t| t.map(Time::as_ps)),
        last_tx_xoff_ps: c.pfc.last_tx_xoff.map(|t| t.map(Time::as_ps)),
        pause_tx_frames: c.tx_pause_frames,
        pause_rx_frames: c.rx_pause_frames,
    }
}

/// The window the report's rates and fractions cover.
pub fn measure(w: &Window) -> MeasureReport {
    MeasureReport {
        from_ps: w.from.as_ps(),
        to_ps: w.to.as_ps(),
    }
}

fn port(
    sw: &Switch,
    si: usize,
    p: usize,
    end: Time,
    window: &Window,
    t: &mut Totals,
) -> PortReport {
    let cell = sw.mmu().cell();
    let port = &sw.ports()[p];
    let c = &port.link.tx.counters;
    t.pfc_tx += c.tx_pfc_frames;
    t.pfc_rx += c.rx_pfc_frames;
    t.pause_tx_frames += c.tx_pause_frames;
    let paused: [u64; PRIORITIES] = core::array::from_fn(|pr| sw.paused_time(p, pr, end).as_ps());
    let share = window.switch_port(si, p);
    let trims = sw.config().trimming.is_some();
    let queues = (0..PRIORITIES)
        .map(|q| {
            let (qc, b) = (&port.queue_counters[q], sw.mmu().queue(p, q));
            QueueReport {
                queue: q,
                tx_packets: qc.tx_packets,
                tx_bytes: qc.tx_bytes,
                drop_packets: qc.drop_packets,
                drop_bytes: qc.drop_bytes,
                ecn_marked: qc.ecn_marked,
                wred_drops: qc.wred_drops,
                watermark_bytes: b.watermark * cell,
                shared_watermark_bytes: b.shared_watermark * cell,
                trim: trims.then_some(Counters(qc.trim)),
            }
        })
        .collect();
    let pgs = (0..PRIORITIES)
        .map(|g| {
            let s = sw.mmu().pg(p, g);
            PgReport {
                pg: g,
                lossless: s.lossless,
                shared_watermark_bytes: s.shared_watermark * cell,
                headroom_watermark_bytes: s.headroom_watermark * cell,
                drop_packets: s.drop_packets,
            }
        })
        .collect();
    let pfcwd = port
        .watchdog
        .iter()
        .enumerate()
        .filter(|(_, w)| w.storms > 0)
        .map(|(q, w)| WatchdogReport::of(q, w))
        .collect();
    PortReport {
        port: sw.config().ports[p].name.clone(),
        speed_bps: sw.config().ports[p].speed.bps(),
        link_up: port.link.tx.link_up,
        rx_packets: c.rx_packets,
        rx_bytes: c.rx_bytes,
        rx_bad_fcs: c.rx_bad_fcs,
        tx_packets: c.tx_packets,
        tx_bytes: c.tx_bytes,
        tx_utilization: share.utilization,
        pfc: pfc(c, paused, &share),
        queues,
        pgs,
        pfcwd,
        cbfc: port.link.cbfc().map(super::model::CbfcReport::of),
        llr: port.link.llr().map(super::model::LlrReport::of),
        trim: trims.then(|| {
            let mut t = PortTrimCounters::default();
            for qc in &port.queue_counters {
                t += &qc.trim;
            }
            Counters(t)
        }),
    }
}

/// One switch's section (ports with PFC, queues and PGs; pools; drops; ledger; FDB), as of
/// `end`, with utilisation and pause fractions over `window` (in which the switch has
/// index `si`); adds to `t`.
pub fn switch_report(
    sw: &Switch,
    si: usize,
    end: Time,
    window: &Window,
    t: &mut Totals,
) -> SwitchReport {
    let cell = sw.mmu().cell();
    // A frame the wire corrupted is the wire's loss (`injected_drops`), not the switch's.
    let d = sw.drops();
    t.drops += d.total() - d.get(lossless_pipeline::drop_reason::DropReason::BadFcs);
    t.lossless_drops += sw.lossless_drops();
    t.ecn += sw.ecn_marked();
    let ports: Vec<PortReport> = (0..sw.ports().len())
        .map(|p| port(sw, si, p, end, window, t))
        .collect();
    let trim = sw.config().trimming.map(|_| {
        let mut sum = PortTrimCounters::default();
        for p in ports.iter().filter_map(|p| p.trim.as_ref()) {
            sum += &p.0;
        }
        Counters(sum)
    });
    let pools = sw
        .mmu()
        .pools
        .iter()
        .map(|p| PoolReport {
            name: p.spec.name.clone(),
            slice: p.slice,
            size_bytes: p.spec.size.get(),
            watermark_bytes: p.watermark * cell,
            headroom_size_bytes: p.spec.xoff.get(),
            headroom_watermark_bytes: p.headroom_watermark * cell,
        })
        .collect();
    SwitchReport {
        name: sw.config().name.clone(),
        ports,
        pools,
        drops_by_reason: sw
            .drops()
            .nonzero()
            .map(|(r, n)| (r.name().to_string(), n))
            .collect(),
        lossless_drops: sw.lossless_drops(),
        trim,
        ledger: LedgerReport {
            still_queued: sw.queued_frames(),
            ..sw.ledger().into()
        },
        fdb: sw.fdb().map(|f| FdbReport {
            learned_entries: f.learned_entries(end),
            aged_out: f.aged_out,
            flushed: f.flushed,
            full_misses: f.full_misses,
        }),
        groups: groups(sw, si, window),
        acl: acl(sw),
        p4: p4(sw),
    }
}

/// The switch's P4 program: its tables' entries, hits and misses, its counters and
/// registers.
fn p4(sw: &Switch) -> Option<crate::report::model::P4Report> {
    use crate::report::model::{P4Report, P4TableReport};
    let stage = sw.p4()?;
    let spec = sw.config().p4.as_ref()?;
    let m = &stage.model;
    let p = &m.program;
    let tables = p
        .tables
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let s = &m.tables.states[i];
            P4TableReport {
                name: t.name.clone(),
                entries: m
                    .tables
                    .entries(lossless_p4::program::TableId(i as u32))
                    .len(),
                hits: s.hits,
                misses: s.misses,
                direct_counter: t.direct_counter.clone(),
                entry_counts: match t.direct_counter {
                    Some(_) => s
                        .counts
                        .iter()
                        .enumerate()
                        .filter(|(_, (n, _))| *n > 0)
                        .map(|(k, (n, b))| (k, *n, *b))
                        .collect(),
                    None => Vec::new(),
                },
            }
        })
        .collect();
    let counters = p
        .counters
        .iter()
        .zip(&m.externs.counters)
        .map(|(c, cells)| {
            let nonzero = cells
                .iter()
                .enumerate()
                .filter(|(_, (n, _))| *n > 0)
                .map(|(i, (n, b))| (i, *n, *b))
                .collect();
            (c.name.clone(), nonzero)
        })
        .collect();
    let registers = p
        .registers
        .iter()
        .zip(&m.externs.registers)
        .map(|(r, cells)| {
            let nonzero = cells
                .iter()
                .enumerate()
                .filter(|(_, v)| **v != 0)
                .map(|(i, v)| (i, v.to_string()))
                .collect();
            (r.name.clone(), nonzero)
        })
        .collect();
    Some(P4Report {
        program: spec.file.clone(),
        queue_depth: lossless_buffer_model::Named::word(spec.depth_unit),
        tables,
        counters,
        registers,
        out_of_range: m.externs.out_of_range,
    })
}

/// Every ACL rule of `sw` with its counters, tables in order, rules in lookup order.
fn acl(sw: &Switch) -> Vec<AclRuleReport> {
    let acl = sw.acl();
    let mut out = Vec::new();
    for (t, table) in acl.tables().iter().enumerate() {
        for (r, rule) in table.rules.iter().enumerate() {
            let c = acl.counters(t, r);
            out.push(AclRuleReport {
                table: table.name.clone(),
                rule: rule.name.clone(),
                priority: rule.priority,
                action: rule.action.packet.word(),
                packets: c.packets,
                bytes: c.bytes,
            });
        }
    }
    out
}

/// The next-hop groups of switch `sw` (index `si`), with member bytes over `window`.
fn groups(sw: &Switch, si: usize, window: &Window) -> Vec<GroupReport> {
    let Some(groups) = sw.groups() else {
        return Vec::new();
    };
    groups
        .iter()
        .enumerate()
        .map(|(gi, (g, c))| {
            let in_window = window.group_bytes(si, gi);
            let total: u64 = in_window.iter().sum();
            let max = in_window.iter().copied().max().unwrap_or(0);
            GroupReport {
                name: g.name.clone(),
                mode: g.mode.word(),
                members: g
                    .members
                    .iter()
                    .enumerate()
                    .map(|(mi, m)| GroupMemberReport {
                        port: sw.config().ports[m.port as usize].name.clone(),
                        packets: c.member_packets[mi],
                        bytes: c.member_bytes[mi],
                        window_bytes: in_window[mi],
                    })
                    .collect(),
                balance: (total > 0).then(|| max as f64 * g.members.len() as f64 / total as f64),
                flowlets: c.flowlets,
                reassignments: c.reassignments,
                table_full: c.table_full,
            }
        })
        .collect()
}

/// Every link of the scenario, both directions, utilisation over the window.
fn links(o: &Outcome) -> Vec<LinkReport> {
    let sc = o.scenario;
    let port_name = |p: crate::config::PortRef| {
        let sw = &sc.switches[p.switch].config;
        format!("{}:{}", sw.name, sw.ports[p.port].name)
    };
    let lost = |i: usize| o.injected.get(i).copied().unwrap_or_default();
    let hosts = sc.run.hosts.iter().enumerate().map(|(h, host)| LinkReport {
        a: host.name.clone(),
        b: port_name(host.attach),
        a_to_b_utilization: o.window.host(h).utilization,
        b_to_a_utilization: o
            .window
            .switch_port(host.attach.switch, host.attach.port)
            .utilization,
        a_to_b_injected_drops: lost(h)[0],
        b_to_a_injected_drops: lost(h)[1],
    });
    let n = sc.run.hosts.len();
    let links = sc.run.links.iter().enumerate().map(|(i, l)| LinkReport {
        a: port_name(l.a),
        b: port_name(l.b),
        a_to_b_utilization: o.window.switch_port(l.a.switch, l.a.port).utilization,
        b_to_a_utilization: o.window.switch_port(l.b.switch, l.b.port).utilization,
        a_to_b_injected_drops: lost(n + i)[0],
        b_to_a_injected_drops: lost(n + i)[1],
    });
    hosts.chain(links).collect()
}

/// What the deadlock indicator found, with each wait named `switch:Port qN`.
fn deadlocks(o: &Outcome) -> Option<DeadlocksReport> {
    let w = o.deadlocks?;
    let sc = o.scenario;
    let found = w
        .found()
        .iter()
        .map(|d| DeadlockReport {
            cycle: d
                .cycle
                .iter()
                .map(|x| {
                    let sw = &sc.switches[x.switch].config;
                    format!("{}:{} q{}", sw.name, sw.ports[x.port].name, x.queue)
                })
                .collect(),
            formed_ps: d.formed.as_ps(),
            detected_ps: d.detected.as_ps(),
            cleared_ps: d.cleared.map(Time::as_ps),
        })
        .collect();
    Some(DeadlocksReport {
        deadlock_time_ps: sc.run.deadlock_time.as_ps(),
        found,
        stopped_run: o.stopped_by_deadlock,
    })
}

/// What the LLR stall indicator found, each end named `switch:Port` or by its host.
fn llr_stalls(o: &Outcome) -> Option<LlrStallsReport> {
    use crate::sim::cabling::NodeId;
    let w = o.llr_stalls?;
    let sc = o.scenario;
    let name = |e: crate::sim::llr_stall::End| match e.node {
        NodeId::Switch(s) => {
            let sw = &sc.switches[s as usize].config;
            format!("{}:{}", sw.name, sw.ports[e.port as usize].name)
        }
        NodeId::Host(h) => sc.run.hosts[h as usize].name.clone(),
    };
    Some(LlrStallsReport {
        found: w
            .found()
            .iter()
            .map(|x| LlrStallReport {
                sender: name(x.sender),
                receiver: name(x.receiver),
                since_ps: x.since.as_ps(),
                detected_ps: x.detected.as_ps(),
            })
            .collect(),
        stopped_run: o.stopped_by_llr_stall,
    })
}

/// Flow completion time: first bit sent to last bit received, for a finite flow whose
/// every frame arrived (RC: to the last ACK; TCP: to the receiver's application reading the
/// last byte); and the same from the flow's `start`, which counts the time its first frame
/// waited to leave (a paused NIC, a connection being set up).
fn fct(o: &Outcome, i: usize) -> Option<(Time, Time)> {
    let def = &o.scenario.run.flows[i];
    let rx = o.flows_rx[i];
    let tx = o.hosts[def.src]
        .flows
        .iter()
        .find(|f| f.spec.id == def.spec.id)?;
    let (first, done) = fct_span(o, i, tx, rx)?;
    Some((done - first, done.saturating_sub(tx.spec.start)))
}

/// When a finite flow's first bit was sent and when it completed.
fn fct_span(o: &Outcome, i: usize, tx: &FlowTx, rx: &FlowRx) -> Option<(Time, Time)> {
    let def = &o.scenario.run.flows[i];
    if let Transport::Tcp(_) = tx.spec.transport {
        // Complete when the receiver's application has read every byte.
        let done = o.hosts[def.dst].tcp()?.stats(def.spec.id, false)?.done?;
        return Some((tx.first_tx?, done));
    }
    if let Some(rc) = &tx.rc {
        // Complete when every message is acknowledged: the last ACK ends the flow.
        let all = tx.finished(o.end) && rc.error_at.is_none() && rc.outstanding_messages() == 0;
        return match (all, rc.stats.completions.last(), tx.first_tx) {
            (true, Some((_, done)), Some(first)) => Some((first, *done)),
            _ => None,
        };
    }
    let finite = !matches!(def.spec.limit, Limit::Unbounded);
    (finite && tx.finished(o.end) && rx.rx_packets == tx.tx_packets && rx.rx_packets > 0).then(
        || {
            (
                tx.first_tx.unwrap_or_default(),
                rx.last_rx.unwrap_or_default(),
            )
        },
    )
}

/// A TCP flow's counters, from its two ends' stacks.
fn tcp(o: &Outcome, i: usize, tx: &FlowTx, running: bool) -> Option<TcpReport> {
    let Transport::Tcp(t) = tx.spec.transport else {
        return None;
    };
    let def = &o.scenario.run.flows[i];
    let snd = o.hosts[def.src].tcp()?.stats(def.spec.id, true)?;
    let rcv = o.hosts[def.dst].tcp()?.stats(def.spec.id, false)?;
    Some(TcpReport {
        kind: "tcp",
        congestion: t.congestion.word(),
        mss: t.ip_mtu - 40,
        segments: snd.segments,
        retransmitted_segments: snd.retransmitted_segments,
        retransmitted_bytes: snd.retransmitted_bytes,
        delivered_bytes: rcv.delivered_bytes,
        goodput_bps: o.flows_rx[i].goodput_bps(running.then_some(o.window.to)),
        established_ps: snd.established.map(Time::as_ps),
        rtt_ps: Percentiles::of(snd.rtt.clone()),
    })
}

/// An RC flow's transport counters, from its requester and its responder.
fn transport(o: &Outcome, i: usize, tx: &FlowTx, running: bool) -> Option<TransportReport> {
    let (rc, Transport::Rc(cfg)) = (tx.rc.as_ref()?, &tx.spec.transport) else {
        return None;
    };
    let def = &o.scenario.run.flows[i];
    let rx = o.flows_rx[i];
    let rsp = o.hosts[def.dst].responder(def.spec.id)?;
    let s = &rc.stats;
    Some(TransportReport {
        kind: "rc",
        recovery: cfg.config.recovery.word(),
        retransmitted_packets: s.retransmitted_packets,
        retransmitted_bytes: s.retransmitted_bytes,
        naks_sent: rsp.stats.naks_sent,
        naks_received: s.naks_received,
        acks_sent: rsp.stats.acks_sent,
        timeouts: s.timeouts,
        duplicates: rsp.stats.duplicates,
        out_of_order: rsp.stats.out_of_order,
        delivered_bytes: rsp.stats.delivered_bytes,
        goodput_bps: rx.goodput_bps(running.then_some(o.window.to)),
        messages_completed: s.messages_completed,
        messages_outstanding: rc.outstanding_messages() as u64,
        message_fct_ps: Percentiles::of(
            s.completions
                .iter()
                .map(|(posted, done)| (*done - *posted).as_ps())
                .collect(),
        ),
        qp_error_ps: rc.error_at.map(Time::as_ps),
    })
}

fn flow(o: &Outcome, i: usize) -> FlowReport {
    let def = &o.scenario.run.flows[i];
    let rx = o.flows_rx[i];
    let tx = o.hosts[def.src]
        .flows
        .iter()
        .find(|f| f.spec.id == def.spec.id);
    // With a measurement window, a flow still running when it closes is measured to its
    // end (the flows through one link then sum to at most its rate).
    let running = o.windowed
        && (rx.last_rx.is_some_and(|l| l > o.window.to)
            || tx.is_some_and(|t| !t.finished(o.end) || t.tx_packets > rx.rx_packets));
    FlowReport {
        name: def.spec.name.clone(),
        src: o.scenario.run.hosts[def.src].name.clone(),
        dst: o.scenario.run.hosts[def.dst].name.clone(),
        priority: def.spec.priority,
        tx_packets: tx.map_or(0, |t| t.tx_packets),
        tx_bytes: tx.map_or(0, |t| t.tx_bytes),
        rx_packets: rx.rx_packets,
        rx_bytes: rx.rx_bytes,
        reordered: rx.reordered,
        trimmed_packets: rx.trimmed,
        last_rx_ps: rx.last_rx.map(Time::as_ps),
        longest_gap_ps: rx.longest_gap.map(|(_, g)| g.as_ps()),
        longest_gap_from_ps: rx.longest_gap.map(|(t, _)| t.as_ps()),
        ce_marked: rx.ce_marked,
        skipped_slots: tx.map_or(0, |t| t.skipped_slots),
        throughput_bps: rx.throughput_bps(running.then_some(o.window.to)),
        window_rate_bps: rx.window_rate_bps(o.window.to),
        fct_ps: fct(o, i).map(|(f, _)| f.as_ps()),
        fct_from_start_ps: fct(o, i).map(|(_, s)| s.as_ps()),
        latency_ps: rx.into(),
        dcqcn: tx.and_then(|t| t.dcqcn.as_ref()).map(DcqcnFlowReport::from),
        transport: tx.and_then(|t| transport(o, i, t, running)),
        tcp: tx.and_then(|t| tcp(o, i, t, running)),
    }
}

/// The report of a simulation run.
pub fn report(o: &Outcome) -> Report {
    let st = o.stats;
    let mut t = Totals {
        drops: st.link_down_drops + st.unconnected_drops + st.host_drops,
        pfc_in_flight: st.pfc_in_flight,
        injected_drops: o.injected.iter().map(|[a, b]| a + b).sum(),
        queued_at_end_frames: o.switches.iter().map(|s| s.queued_frames()).sum(),
        ..Totals::default()
    };
    let switches = o
        .switches
        .iter()
        .enumerate()
        .map(|(si, sw)| switch_report(sw, si, o.end, &o.window, &mut t))
        .collect();
    let flows: Vec<FlowReport> = (0..o.scenario.run.flows.len())
        .map(|i| flow(o, i))
        .collect();
    let hosts = o
        .hosts
        .iter()
        .enumerate()
        .map(|(hi, host)| {
            let c = &host.link.tx.counters;
            t.pfc_tx += c.tx_pfc_frames;
            t.pfc_rx += c.rx_pfc_frames;
            t.pause_tx_frames += c.tx_pause_frames;
            let paused: [u64; PRIORITIES] =
                core::array::from_fn(|p| host.paused_time(p, o.end).as_ps());
            let share = o.window.host(hi);
            HostReport {
                name: host.name.clone(),
                pfc: pfc(c, paused, &share),
                paused_ps: paused,
                paused_fraction: share.paused,
                tx_utilization: share.utilization,
                tx_packets: c.tx_packets,
                tx_bytes: c.tx_bytes,
                rx_packets: c.rx_packets,
                rx_bytes: c.rx_bytes,
                rx_bad_fcs: c.rx_bad_fcs,
                rx_drops: host.rx_drops,
                rx_buffer_watermark_bytes: host.rx_watermark,
                cnps_sent: host.nic().dcqcn.map(|_| host.np.sent),
                cbfc: host.link.cbfc().map(super::model::CbfcReport::of),
                llr: host.link.llr().map(super::model::LlrReport::of),
            }
        })
        .collect();
    Report {
        name: o.scenario.name.clone(),
        seed: o.seed,
        sim_time_ps: o.end.as_ps(),
        measure: measure(&o.window),
        wall_time_s: st.wall_time_s,
        events: st.events,
        threads: st.threads,
        packet_hops: Some(st.packet_hops),
        totals: t,
        engine: Some(EngineReport {
            unconnected_drops: st.unconnected_drops,
            link_down_drops: st.link_down_drops,
            host_drops: st.host_drops,
            misdelivered: st.misdelivered,
            stalls: st.stalls,
        }),
        switches,
        collectives: super::collective::reports(o, &flows),
        flows,
        hosts,
        links: links(o),
        deadlocks: deadlocks(o),
        llr_stalls: llr_stalls(o),
        outputs: Some(OutputsReport {
            pcap: o.files.pcap.clone(),
            timeseries: o.files.timeseries.clone(),
            pfc_log: o.files.pfc_log.clone(),
            created_dirs: o.files.created.0.clone(),
            timeseries_cut: o.files.timeseries_cut,
        }),
        tap: None,
        interrupted: o.interrupted.map(|planned| InterruptedReport {
            by: String::new(),
            planned_end_ps: planned.map(Time::as_ps),
        }),
    }
}
