//! `lossless check`: the resolved buffer plan of each switch, per port group, with the
//! points where PFC acts and the minimum headroom the physics asks for.

use crate::config::{Attach, SwitchSpec};
use lossless_buffer_model::asic::Asic;
use lossless_buffer_model::headroom::{ieee_response_quanta, HeadroomNeed, SonicHeadroom};
use lossless_buffer_model::mmu::{
    Admission, Behaviour, Crossing, FirstLimit, PgFill, PoolCells, PoolKind, PoolUse, ProfileSpec,
    Threshold, XonLimit,
};
use lossless_buffer_model::scheduler::Discipline;
use lossless_buffer_model::{priorities_in, Named, PRIORITIES};
use lossless_pipeline::config::{FlowControl, Forwarding, Trust};
use lossless_pipeline::link::llr::LlrSetup;
use std::fmt::Write;

/// Shared limit of a profile at an empty pool (α·S capped at S, or static_th), and the
/// shared use at which it stops when it fills the pool alone (x = α·S/(1+α)), in bytes.
fn limits(p: &ProfileSpec, pool_size: u64) -> (u64, u64) {
    let (limit, alone) = match p.threshold {
        Threshold::Static(t) => (t.get(), t.get()),
        Threshold::Dynamic(n) if n >= 0 => (pool_size << n, (pool_size << n) / ((1 << n) + 1)),
        Threshold::Dynamic(n) => (pool_size >> -n, pool_size / ((1 << -n) + 1)),
    };
    (limit.min(pool_size), alone.min(pool_size))
}

/// The MMU's ASIC rules in words, the generic ones left out where they say nothing.
fn mmu_rules(b: &Behaviour) -> Vec<String> {
    let mut rules = Vec::new();
    match b.pg_fill {
        PgFill::ReserveFirst => {
            rules.push(format!(
                "the packet that crosses a lossless limit goes to {}",
                match b.crossing {
                    Crossing::Headroom => "headroom",
                    Crossing::Shared => "shared space (over the limit by that packet)",
                }
            ));
            rules.push(format!(
                "XON follows the {} limit",
                match b.xon_limit {
                    XonLimit::Live => "live",
                    XonLimit::Latched => "latched (at XOFF)",
                }
            ));
        }
        PgFill::SharedFirst => rules.push(
            "a PG fills its share of the pool first, then its own buffer (the reserve, then headroom from XOFF); XON once that buffer holds less than xon"
                .into(),
        ),
    }
    let when = |a: Admission| match a {
        Admission::After => "with the packet counted",
        Admission::Before => "as the packet finds it",
    };
    rules.push(format!(
        "a PG's limit is tested {}, a queue's {}",
        when(b.pg_admission),
        when(b.queue_admission)
    ));
    if b.first_limit == FirstLimit::Egress {
        rules.push("the queue's limit first (a packet over both is the queue's drop)".into());
    }
    if b.pool_cells == PoolCells::Up {
        rules.push("pool sizes round up to whole cells".into());
    }
    if b.pool_use == PoolUse::WithReserved {
        rules.push("an ingress pool's use counts its PGs' reserved cells".into());
    }
    rules
}

/// Bytes for tables: exact below 10 kB, else KB / MB with a few digits.
fn human(b: u64) -> String {
    if b < 10_000 {
        format!("{b}B")
    } else if b < 10_000_000 {
        format!("{:.1}KB", b as f64 / 1e3)
    } else {
        format!("{:.3}MB", b as f64 / 1e6)
    }
}

fn mac_text(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn threshold_text(t: Threshold) -> String {
    match t {
        Threshold::Static(b) => format!("static {b}"),
        Threshold::Dynamic(n) if n >= 0 => format!("α={}", 1u32 << n),
        Threshold::Dynamic(n) => format!("α=1/{}", 1u32 << -n),
    }
}

/// A map over 0…n−1: its most common value as the rest, the others one by one
/// (`1, 3→3, 4→4`); the identity as `identity`.
fn map_text(m: &[u8]) -> String {
    if m.iter().enumerate().all(|(i, v)| *v as usize == i) {
        return "identity".into();
    }
    let mut counts = [0usize; 8];
    for v in m {
        counts[*v as usize & 7] += 1;
    }
    let common = (0..8u8)
        .rev()
        .max_by_key(|&v| counts[v as usize])
        .unwrap_or(0);
    let rest: Vec<String> = m
        .iter()
        .enumerate()
        .filter(|(_, v)| **v != common)
        .map(|(i, v)| format!("{i}→{v}"))
        .collect();
    if rest.is_empty() {
        format!("all→{common}")
    } else {
        format!("{} (others→{common})", rest.join(", "))
    }
}

/// Render the plan of one switch.
pub fn render(spec: &SwitchSpec) -> String {
    let mut o = String::new();
    header(&mut o, spec);
    for members in port_groups(spec) {
        let first = members[0];
        let taps: Vec<_> = members
            .iter()
            .filter_map(|i| spec.attach[*i].as_ref())
            .collect();
        port_line(&mut o, spec, &members, &taps);
        let need = if spec.config.flow_control_of(first) == FlowControl::Cbfc {
            credits(&mut o, spec, first)
        } else {
            headroom(&mut o, spec, first, !taps.is_empty())
        };
        if let Some(l) = &spec.config.ports[first].llr {
            retry(&mut o, spec, first, l);
        }
        if let Some(h) = spec
            .config
            .port_headroom
            .get(first)
            .filter(|h| h.budget.get() > 0)
        {
            let cell = spec.config.cell;
            let _ = writeln!(
                o,
                "    port headroom, shared by its lossless PGs: {} = {} cells, {} of its own and the rest borrowed from the shared headroom pool",
                human(h.budget.get()),
                h.budget.cells(cell),
                human(h.private.get().min(h.budget.get()))
            );
        }
        pg_table(&mut o, spec, first, &need);
        queue_table(&mut o, spec, first);
    }
    o += &super::plan_acl::render(&spec.config.acl, &spec.config.ports);
    o
}

/// What a P4 switch forwards by: its program, and each table with its entries.
fn p4_summary(p4: &lossless_pipeline::p4::P4Spec) -> String {
    let m = &p4.model;
    let tables: Vec<String> = m
        .program
        .tables
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let n = m
                .tables
                .entries(lossless_p4::program::TableId(i as u32))
                .len();
            format!("{} {n}/{}", t.name, t.max_size)
        })
        .collect();
    format!(
        "P4 program {} ({} parse states; tables with entries/size: {}; queue depths in {})",
        p4.file,
        m.program.parse_states.len(),
        if tables.is_empty() {
            "none".to_string()
        } else {
            tables.join(", ")
        },
        lossless_buffer_model::Named::word(p4.depth_unit)
    )
}

/// The switch, its QoS and its pools.
fn header(o: &mut String, spec: &SwitchSpec) {
    let c = &spec.config;
    let fwd = match (&c.p4, &c.forwarding) {
        (Some(p4), _) => p4_summary(p4),
        (
            None,
            Forwarding::L2 {
                static_fdb,
                fdb_size,
                fdb_aging,
            },
        ) => format!(
            "L2 (FDB {fdb_size} learned + {} static, aging {})",
            static_fdb.len(),
            if *fdb_aging == lossless_buffer_model::Time::ZERO {
                "off".to_string()
            } else {
                fdb_aging.to_string()
            }
        ),
        (None, Forwarding::L3 { routes, groups }) => {
            format!("L3 ({} routes, {} groups)", routes.len(), groups.len())
        }
    };
    let _ = writeln!(
        o,
        "switch {}: {} ports (MACs {} + port index), {fwd}, pipeline latency {}, cell {}{}",
        c.name,
        c.ports.len(),
        mac_text(c.ports[0].mac),
        c.pipeline_latency,
        c.cell,
        if spec.default_buffer {
            " (default buffer plan)"
        } else {
            ""
        }
    );
    let q = &c.qos;
    let pfc: Vec<String> = priorities_in(q.pfc_enable).map(|p| p.to_string()).collect();
    let _ = writeln!(
        o,
        "  qos: trust {}, PFC on priorities [{}]{}, XOFF quanta {}, PFC response {}{}",
        match q.trust {
            Trust::Dscp => "dscp",
            Trust::Dot1p => "dot1p",
        },
        pfc.join(", "),
        match (q.flow_control, q.pfc_asym) {
            (FlowControl::Pause, _) => {
                " decide XOFF/XON, sent as 802.3x PAUSE (the whole link, every priority)"
            }
            (FlowControl::Pfc, true) => " (asymmetric: received PFC honoured on every priority)",
            (FlowControl::Pfc, false) => "",
            (FlowControl::Cbfc, _) => " (ports speak CBFC: credits, no pause frames)",
            (FlowControl::None, _) => " (no link-level flow control)",
        },
        q.pause_quanta,
        q.pfc_response,
        q.pfcwd.map_or(String::new(), |w| format!(
            ", PFC watchdog {:?} after {} (restore after {})",
            w.action, w.detection_time, w.restoration_time
        ))
    );
    let _ = writeln!(
        o,
        "  maps: dscp→tc {}; dot1p→tc {}; tc→pg {}; tc→queue {}",
        map_text(&q.dscp_to_tc),
        map_text(&q.dot1p_to_tc),
        map_text(&q.tc_to_pg),
        map_text(&q.tc_to_queue)
    );
    if spec.asic != Asic::Generic {
        let chip = spec.asic.profile();
        let _ = writeln!(
            o,
            "  asic: {} (sets cell {}, {} slice(s), ingress sizes {} and the MMU rules below; keys given in the file override it)",
            spec.asic.word(),
            chip.cell.map_or("-".into(), |c| c.to_string()),
            chip.slices,
            chip.ingress_sizes.word()
        );
    }
    if c.mmu != Behaviour::default() {
        let _ = writeln!(o, "  mmu: {}", mmu_rules(&c.mmu).join("; "));
    }
    if c.slices.count > 1 {
        let n = c.ports.len();
        let of: Vec<String> = (0..n)
            .map(|i| format!("{} {}", c.ports[i].name, c.slices.slice_of(i, n)))
            .collect();
        let _ = writeln!(
            o,
            "  slices: {} (each holds 1/{} of every pool below; port → slice: {})",
            c.slices.count,
            c.slices.count,
            of.join(", ")
        );
    }
    let _ = writeln!(o, "  pools:");
    for p in &c.pools {
        let kind = match p.kind {
            PoolKind::Ingress => "ingress",
            PoolKind::Egress => "egress",
        };
        let shp = if p.xoff.get() > 0 {
            format!(", shared headroom pool {}", p.xoff)
        } else {
            String::new()
        };
        let _ = writeln!(o, "    {:<24} {kind:<8} shared {}{shp}", p.name, p.size);
    }
}

/// Ports of the same speed, propagation and MTU, in order of their first member.
fn port_groups(spec: &SwitchSpec) -> Vec<Vec<usize>> {
    // Ports alike in speed, propagation, MTU, link protocol and retry share one block.
    type Alike = (u64, u64, u32, FlowControl, Option<LlrSetup>);
    let mut groups: Vec<(Vec<usize>, Alike)> = Vec::new();
    for (i, p) in spec.config.ports.iter().enumerate() {
        let key = (
            p.speed.bps(),
            p.propagation().as_ps(),
            p.mtu,
            spec.config.flow_control_of(i),
            p.llr,
        );
        match groups.iter_mut().find(|(_, k)| *k == key) {
            Some((v, _)) => v.push(i),
            None => groups.push((vec![i], key)),
        }
    }
    groups.into_iter().map(|(m, _)| m).collect()
}

/// ", TAP ll0, ll1, interface eth1": the devices `lossless tap` serves the ports with.
fn device_list(devices: &[&Attach]) -> String {
    let mut o = String::new();
    for (word, tap) in [("TAP", true), ("interface", false)] {
        let names: Vec<&str> = devices
            .iter()
            .filter(|a| matches!(a, Attach::Tap(_)) == tap)
            .map(|a| a.name())
            .collect();
        if !names.is_empty() {
            let _ = write!(o, ", {word} {}", names.join(", "));
        }
    }
    o
}

/// The group's ports and their physics.
fn port_line(o: &mut String, spec: &SwitchSpec, members: &[usize], devices: &[&Attach]) {
    let c = &spec.config;
    let port = &c.ports[members[0]];
    let names = if members.len() == 1 {
        port.name.clone()
    } else {
        format!(
            "{} (and {} more: {})",
            port.name,
            members.len() - 1,
            members[1..]
                .iter()
                .map(|i| c.ports[*i].name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let _ = writeln!(
        o,
        "  port {names}: {}, {} one way ({}), MTU {}{}",
        port.speed,
        port.propagation(),
        match port.delay {
            Some(d) => format!("delay {d}"),
            None => format!("cable {}", port.cable),
        },
        port.mtu,
        device_list(devices)
    );
}

/// What a lossless PG's headroom must hold on a port, in cells, and why.
struct Need {
    /// The byte budget of MTU frames (the physics formula).
    budget: lossless_buffer_model::Bytes,
    /// On a TAP port: no byte budget, only the cable's cells.
    tap: bool,
    /// The minimum in cells that applies.
    min_cells: u64,
    /// Which minimum it is, for the LOW warning.
    why: String,
}

/// The minimum headroom of port `first`'s group (printed), for the PG table's verdicts.
fn headroom(o: &mut String, spec: &SwitchSpec, first: usize, tap: bool) -> Need {
    let c = &spec.config;
    let port = &c.ports[first];
    let need = HeadroomNeed::ieee(port.speed, port.propagation(), port.mtu, c.cell);
    let b = need.budget;
    if tap {
        let (cells, frame) = crate::cable::worst_cells(port.mtu, c.cell);
        let ring = match spec.attach[first] {
            Some(Attach::Iface(_) | Attach::Link(_)) => "socket receive ring",
            _ => "kernel ring",
        };
        let _ = writeln!(
            o,
            "    software cable: {ring} {} frames + read queue {} + {} frames in hand; minimum headroom {cells} cells = {} (as {frame}-byte frames)",
            crate::cable::RING_FRAMES,
            lossless_buffer_model::Bytes(crate::cable::READ_QUEUE_BYTES as u64),
            crate::cable::FRAMES_IN_HAND,
            human(cells * c.cell.get())
        );
        return Need {
            budget: b.total(),
            tap,
            min_cells: cells,
            why: "software cable's".to_string(),
        };
    }
    let quanta = ieee_response_quanta(port.speed);
    let _ = writeln!(o, "    minimum headroom for {}-byte frames: {} = frame {} + own frame in flight {} + PFC frame {} + cable round trip {} + peer response {} ({quanta} quanta) + peer frame {}; {} cells",
        port.mtu, human(b.total().get()), b.crossing_frame, b.own_frame_in_flight, b.pfc_frame, b.cable_round_trip, b.peer_response, b.peer_frame_in_flight, need.mtu_cells);
    let _ = writeln!(
        o,
        "    minimum headroom for {}-byte frames (one cell of {} or more each): {} cells = {}",
        need.frame,
        c.cell,
        need.frame_cells,
        human(need.frame_cells * c.cell.get())
    );
    let which = if need.small_frames_apply() {
        need.frame
    } else {
        port.mtu
    };
    let _ = writeln!(
        o,
        "    applies: the larger, {} cells = {} ({which}-byte frames)",
        need.cells(),
        human(need.bytes().get()),
    );
    // SONiC's port MTU is the IP MTU; its cable is metres of light at 1.98e8 m/s.
    let sonic_mtu = port.mtu.saturating_sub(22);
    let cable_m = match port.delay {
        Some(d) => d.as_ps() as f64 * 2e8 / 1e12,
        None => port.cable.0 as f64 / 1000.0,
    };
    let sonic = SonicHeadroom::new(port.speed, cable_m, sonic_mtu, c.cell).xoff();
    let _ = writeln!(
        o,
        "    SONiC's dynamic-model xoff (sonic-swss buffer_headroom_mellanox.lua; port MTU {sonic_mtu}, lossless MTU 1024, every packet small, no MAC/PHY delay): {} = {} cells",
        human(sonic.get()),
        sonic.get().div_ceil(c.cell.get())
    );
    Need {
        budget: b.total(),
        tap,
        min_cells: need.frame_cells,
        why: format!("{}-byte-frame minimum of", need.frame),
    }
}

/// Port `first`'s CBFC: its credit settings, each credited channel's credits and buffer,
/// and the credits line rate needs (docs/physics.md, "Credits for line rate").
fn credits(o: &mut String, spec: &SwitchSpec, first: usize) -> Need {
    let c = &spec.config;
    let (port, s) = (&c.ports[first], &c.ports[first].cbfc);
    let _ = writeln!(
        o,
        "    CBFC: credits of {} B (a frame costs ceil((length {:+}) / {})), {} limits, CF_Update every {} to {}, CC_Update every {}, idle updates {}",
        s.credit_size, s.overhead, s.credit_size, s.mode.word(), s.cf_min_spacing, s.cf_max_spacing, s.cc_interval, s.idle_updates.word()
    );
    let vcs: Vec<String> = (0..lossless_pipeline::link::cbfc::VCS)
        .filter(|&v| s.is_credited(v as u8))
        .map(|v| {
            let n = s.rx_credits[v] as u64;
            format!("VC {v} {n} credits ({})", human(n * s.credit_size as u64))
        })
        .collect();
    let _ = writeln!(o, "    credited: {}", vcs.join(", "));
    if s.tc_to_vc != lossless_pipeline::link::cbfc::IDENTITY {
        let map: Vec<String> = (0..lossless_buffer_model::PRIORITIES)
            .map(|tc| format!("TC {tc} → VC {}", s.tc_to_vc[tc]))
            .collect();
        let _ = writeln!(
            o,
            "    channels: {} (queues on their classes' channel)",
            map.join(", ")
        );
    }
    let need = s.need(port.speed, port.propagation(), port.mtu, c.pipeline_latency);
    let _ = writeln!(
        o,
        "    line rate needs {} credits per VC ({}-byte frames, the costliest per wire byte; {} for MTU frames): a credit is back {} after it leaves",
        need.worst, need.worst_frame, need.mtu_frames, need.round_trip
    );
    Need {
        budget: lossless_buffer_model::Bytes(0),
        tap: false,
        min_cells: 0,
        why: String::new(),
    }
}

/// Port `first`'s LLR: its profile and the replay buffer line rate needs (docs/physics.md,
/// "Replay buffer for line rate").
fn retry(o: &mut String, spec: &SwitchSpec, first: usize, l: &LlrSetup) {
    use lossless_buffer_model::Named;
    let port = &spec.config.ports[first];
    let timer = if l.replay_timer == lossless_buffer_model::Time::ZERO {
        "off".to_string()
    } else {
        l.replay_timer.to_string()
    };
    let replays = match l.max_replay_count {
        lossless_pipeline::link::llr::UNLIMITED_REPLAYS => "unlimited replays".to_string(),
        1 => "1 replay".to_string(),
        n => format!("{n} replays"),
    };
    let _ = writeln!(
        o,
        "    LLR: replay buffer {} frames / {}, replay timer {timer}, {replays} before FLUSH, ACK every {}, init {} / flush {}{}",
        l.max_frames,
        human(l.max_bytes),
        l.ctlos_spacing,
        l.init_action.word(),
        l.flush_action.word(),
        if l.re_init_on_flush { ", re-INIT on FLUSH" } else { "" }
    );
    let need = l.need(port.speed, port.propagation(), port.mtu);
    let _ = writeln!(
        o,
        "    line rate needs a replay buffer of {} and {} frames: a frame's copy is freed {} after it leaves",
        human(need.bytes),
        need.frames,
        need.round_trip
    );
}

/// The PGs of port `first`: profile, pool, limits, XOFF and XON points, headroom, verdict.
fn pg_table(o: &mut String, spec: &SwitchSpec, first: usize, need: &Need) {
    let c = &spec.config;
    let (q, port) = (&c.qos, &c.ports[first]);
    let _ = writeln!(
        o,
        "    {:<3} {:<5} {:<22} {:<22} {:>9} {:>12} {:>10} {:>10} {:>10}  kind",
        "PG", "prio", "profile", "pool", "reserved", "limit@empty", "XOFF at", "XON at", "headroom",
    );
    for pg in 0..PRIORITIES {
        let p = c.pg_profile(first, pg);
        let pool = &c.pools[p.pool];
        // A sliced buffer: the PG meets its slice's share of the pool.
        let (limit, xoff_at) = limits(p, pool.size.get() / c.slices.count.max(1) as u64);
        let prios: String = (0..8)
            .filter(|t| q.tc_to_pg[*t] == pg as u8)
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let (xoff_s, xon_s, hr_s, status) = match p.headroom {
            Some(h) => {
                // A pool-first PG: XOFF once its share is full and its reserve too, XON when
                // its own buffer is back under xon (as the PG's whole use).
                let (xoff_at, xon) = match c.mmu.pg_fill {
                    PgFill::ReserveFirst => (
                        xoff_at,
                        h.xon.get().max(xoff_at.saturating_sub(h.xon_offset.get())),
                    ),
                    PgFill::SharedFirst => (xoff_at + p.reserved.get(), xoff_at + h.xon.get()),
                };
                let hr = if pool.xoff.get() > 0 {
                    format!("{} +SHP", h.xoff)
                } else {
                    h.xoff.to_string()
                };
                let status = if !need.tap && h.xoff < need.budget {
                    format!(
                        "LOW: below the {}-byte-frame minimum {}",
                        port.mtu,
                        human(need.budget.get())
                    )
                } else if h.xoff.cells(c.cell) < need.min_cells {
                    format!(
                        "LOW: {} cells, below the {} {}",
                        h.xoff.cells(c.cell),
                        need.why,
                        need.min_cells
                    )
                } else {
                    "lossless".into()
                };
                (human(xoff_at), human(xon), hr, status)
            }
            None if spec.pg_profile_name(first, pg)
                == crate::config::switch::cbfc::PRIVATE_PROFILE =>
            {
                (
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "credited (private to the port)".into(),
                )
            }
            None => ("-".into(), "-".into(), "-".into(), "lossy".into()),
        };
        let _ = writeln!(
            o,
            "    {pg:<3} {prios:<5} {:<22} {:<22} {:>9} {:>12} {:>10} {:>10} {:>10}  {status} ({})",
            spec.pg_profile_name(first, pg),
            pool.name,
            human(p.reserved.get()),
            human(limit),
            xoff_s,
            xon_s,
            hr_s,
            threshold_text(p.threshold)
        );
    }
}

/// The queues of port `first`: profile, pool, limit, scheduler, WRED/ECN.
fn queue_table(o: &mut String, spec: &SwitchSpec, first: usize) {
    let c = &spec.config;
    let q = &c.qos;
    let _ = writeln!(
        o,
        "    {:<3} {:<22} {:<22} {:>9} {:>12}  {:<12} WRED/ECN",
        "Q", "profile", "pool", "reserved", "limit@empty", "scheduler"
    );
    for qi in 0..PRIORITIES {
        let p = c.queue_profile(first, qi);
        let pool = &c.pools[p.pool];
        let (limit, _) = limits(p, pool.size.get() / c.slices.count.max(1) as u64);
        let sched = match q.scheduler[qi] {
            Discipline::Strict => "strict".to_string(),
            Discipline::Dwrr(w) => format!("dwrr w={w}"),
        };
        let wred = q.queue_wred[qi].map_or("-".to_string(), |w| {
            let g = w.colors[0];
            match g.curve {
                Some(cv) => format!(
                    "green {}–{} {}%{}{}",
                    cv.min,
                    cv.max,
                    cv.max_probability,
                    if g.ecn { " ECN" } else { "" },
                    if g.wred { " drop" } else { "" }
                ),
                None => "no green curve".into(),
            }
        });
        let _ = writeln!(
            o,
            "    {qi:<3} {:<22} {:<22} {:>9} {:>12}  {sched:<12} {wred} ({})",
            spec.queue_profile_name(first, qi),
            pool.name,
            human(p.reserved.get()),
            human(limit),
            threshold_text(p.threshold)
        );
    }
}
