//! `cbfc:` of a switch — UE credit-based flow control on the ports whose link protocol is
//! `cbfc` — and what it does to the buffer plan: a credited channel's receive buffer is
//! private to its port, so its PG gets a profile that reserves exactly the cells its
//! credits stand for and takes nothing from a shared pool (docs/scenario.md, `cbfc`;
//! docs/physics.md, "Credit-based flow control").

use super::buffer::Plan;
use crate::config::diag::{Diag, Diags, Key};
use crate::config::scenario::Attach;
use crate::config::schema::{CbfcRaw, PortsRaw, SwitchRaw};
use crate::config::values::line;
use lossless_buffer_model::mmu::{ProfileSpec, Threshold};
use lossless_buffer_model::{Bytes, Time, PRIORITIES};
use lossless_pipeline::config::{FlowControl, PortConfig, QosConfig};
use lossless_pipeline::link::cbfc::{
    CbfcSetup, CreditMode, IdleUpdates, IDENTITY, MAX_CREDITS, VCS,
};

type Result<T> = std::result::Result<T, Diag>;

/// Name the plan gives a credited channel's private PG profile.
pub const PRIVATE_PROFILE: &str = "cbfc_private";

/// Settle CBFC for switch `sw`: the setup of every port that speaks it (checked against
/// its MTU, warned about below line rate with a receiver that drains `turnaround` after
/// arrival).
pub fn resolve(
    d: &Diags,
    sw: &Key,
    raw_sw: &SwitchRaw,
    ports: &mut [PortConfig],
    attach: &[Option<Attach>],
    qos: &QosConfig,
    turnaround: Time,
) -> Result<()> {
    let k = sw.at("cbfc");
    let raw = raw_sw.cbfc.as_ref();
    let speakers: Vec<usize> = (0..ports.len())
        .filter(|&i| ports[i].flow_control.unwrap_or(qos.flow_control) == FlowControl::Cbfc)
        .collect();
    if speakers.is_empty() {
        if let Some(r) = raw {
            d.warn(
                line(r),
                &k,
                "no port speaks CBFC, so these settings are unused: set `qos.flow_control: cbfc` or a port's `flow_control: cbfc`",
            );
        }
        return Ok(());
    }
    let setup = match raw {
        Some(r) => setup(d, &k, &r.value, qos)?,
        None => CbfcSetup {
            credited: qos.pfc_enable as u32,
            rx_credits: credits_of(qos.pfc_enable as u32, DEFAULT_CREDITS),
            queue_to_vc: queue_channels(&IDENTITY, qos).expect("the identity map"),
            ..CbfcSetup::default()
        },
    };
    let mut short: Vec<(String, Vec<String>)> = Vec::new();
    for &i in &speakers {
        let port = &mut ports[i];
        if let Some(dev) = attach[i].as_ref().filter(|a| !a.faces_switch()) {
            let (at, key) = where_set(raw_sw, sw, i);
            return d.error(
                at,
                &key,
                format!(
                    "port {} speaks CBFC but `lossless tap` serves it with {} `{}`: a host's kernel sends no credit updates, so it would never be given credits (an interface with another lossless switch behind it is named with `link:`)",
                    port.name,
                    dev.kind(),
                    dev.name()
                ),
            );
        }
        let frame = setup.cost(port.mtu);
        for vc in (0..VCS).filter(|&v| setup.is_credited(v as u8)) {
            let have = match setup.mode {
                CreditMode::PerVc => setup.rx_credits[vc] as u64,
                CreditMode::PerPort => setup.port_credits(),
            };
            if have < frame {
                return d.error(
                    raw.and_then(|r| r.value.credits.as_ref().and_then(line).or(line(r))),
                    &k.at("credits"),
                    format!(
                        "VC {vc} has {have} credits of {} B but one {}-byte frame (port {}'s MTU) costs {frame}: credits below one maximum frame never let it start",
                        setup.credit_size, port.mtu, port.name
                    ),
                );
            }
        }
        // A `link:` port's round trip is the two switches' scheduling, not a cable: the
        // credits bound what is in flight either way, and no rate can be promised.
        let software = attach[i].is_some();
        if let Some(w) = below_line_rate(port, &setup, turnaround).filter(|_| !software) {
            match short.iter_mut().find(|(t, _)| *t == w) {
                Some((_, names)) => names.push(port.name.clone()),
                None => short.push((w, vec![port.name.clone()])),
            }
        }
        port.cbfc = setup;
        // Each message on a software cable is a system call on both switches: at idle
        // they say nothing new, so by default they are not sent there.
        if software && raw.is_none_or(|r| r.value.idle_updates.is_none()) {
            port.cbfc.idle_updates = IdleUpdates::OnDemand;
        }
    }
    let at = raw.and_then(|r| r.value.credits.as_ref().and_then(line).or(line(r)));
    for (text, names) in short {
        let ports = if names.len() == 1 { "port" } else { "ports" };
        d.warn(
            at,
            &k.at("credits"),
            format!("{ports} {}: {text}", names.join(", ")),
        );
    }
    Ok(())
}

/// Where port `i`'s link protocol is set: its own `flow_control`, else `qos.flow_control`.
fn where_set(raw: &SwitchRaw, sw: &Key, i: usize) -> (Option<u64>, Key) {
    if let Some(PortsRaw::List(list)) = raw.ports.as_ref().map(|p| &p.value) {
        if let Some(v) = list.get(i).and_then(|e| e.value.flow_control.as_ref()) {
            return (line(v), sw.at("ports").index(i).at("flow_control"));
        }
    }
    let q = raw.qos.as_ref().and_then(|q| q.value.flow_control.as_ref());
    (q.and_then(line), sw.at("qos").at("flow_control"))
}

/// The channels of `port` with fewer credits than line rate needs, and why, as a
/// warning's text without the port (ports with the same text share one warning): such a
/// channel still never drops, but its sender idles waiting for credits.
fn below_line_rate(port: &PortConfig, setup: &CbfcSetup, turnaround: Time) -> Option<String> {
    let need = setup.need(port.speed, port.propagation(), port.mtu, turnaround);
    let short: Vec<String> = (0..VCS)
        .filter(|&v| setup.is_credited(v as u8))
        .filter(|&v| {
            let have = match setup.mode {
                CreditMode::PerVc => setup.rx_credits[v] as u64,
                CreditMode::PerPort => setup.port_credits(),
            };
            have < need.worst
        })
        .map(|v| format!("VC {v} ({})", setup.rx_credits[v]))
        .collect();
    if short.is_empty() {
        return None;
    }
    Some(format!(
        "{} at {}, {} one way, MTU {}: line rate needs {} credits of {} B for {}-byte frames (the costliest per wire byte; {} for MTU frames): a credit is back {} after it leaves (frame, cable both ways, the receiver's {turnaround}, the CF_Update's spacing and one frame it waits behind); below that the sender idles waiting for credits",
        short.join(", "), port.speed, port.propagation(), port.mtu,
        need.worst, setup.credit_size, need.worst_frame, need.mtu_frames, need.round_trip
    ))
}

/// Credits of a credited channel when `cbfc.credits` is not given.
pub const DEFAULT_CREDITS: u32 = 1024;

/// `credits` on every channel of `mask`.
fn credits_of(mask: u32, credits: u32) -> [u32; VCS] {
    let mut out = [0; VCS];
    for (v, c) in out.iter_mut().enumerate() {
        if mask & (1 << v) != 0 {
            *c = credits;
        }
    }
    out
}

/// The settings of `cbfc:`, checked against the bounds SAI gives them.
fn setup(d: &Diags, k: &Key, r: &CbfcRaw, qos: &QosConfig) -> Result<CbfcSetup> {
    let def = CbfcSetup::default();
    let credit_size = d
        .opt_unit_in(
            &r.credit_size,
            &k.at("credit_size"),
            Bytes(16)..=Bytes(16_384),
            "a credit stands for 16 B to 16 KiB (SAI's default is 128 B)",
        )?
        .map_or(def.credit_size, |b| b.get() as u32);
    let overhead = match &r.packet_overhead {
        None => def.overhead,
        Some(v) => d.int_in(v, &k.at("packet_overhead"), -16, 127, "packet overhead ")? as i32,
    };
    // A port has up to 32 channels; each traffic class is on one (TC n on VC n unless
    // `tc_to_vc` says otherwise), and each queue on the channel of its classes.
    let mut tc_to_vc = IDENTITY;
    for (tc, v) in r.tc_to_vc.iter().flat_map(|m| &m.value) {
        let kk = k.at("tc_to_vc").at(tc);
        let Some(t) = tc.parse::<usize>().ok().filter(|&t| t < PRIORITIES) else {
            return d.error(
                line(v),
                &kk,
                format!("`{tc}`: keys are traffic classes 0–7"),
            );
        };
        tc_to_vc[t] = d.int_in(v, &kk, 0, VCS as i64 - 1, "VC ")? as u8;
    }
    let queue_to_vc = match queue_channels(&tc_to_vc, qos) {
        Ok(m) => m,
        Err((q, a, b)) => {
            return d.error(
                r.tc_to_vc.as_ref().and_then(line),
                &k.at("tc_to_vc"),
                format!(
                    "queue {q} holds traffic classes on VC {a} and on VC {b} (qos.tc_to_queue): a queue sends on one channel, so the classes of a queue must share one"
                ),
            )
        }
    };
    let credited = match &r.vcs {
        None => (0..PRIORITIES)
            .filter(|t| qos.pfc_enable & (1 << t) != 0)
            .fold(0u32, |m, t| m | 1 << tc_to_vc[t]),
        Some(list) => {
            let mut m = 0u32;
            for v in &list.value {
                m |= 1 << d.int_in(v, &k.at("vcs"), 0, VCS as i64 - 1, "VC ")?;
            }
            m
        }
    };
    let carried = tc_to_vc.iter().fold(0u32, |m, &v| m | 1 << v);
    if credited & !carried != 0 {
        d.warn(
            r.vcs.as_ref().and_then(line),
            &k.at("vcs"),
            format!(
                "VC {} is credited but no traffic class is on it (tc_to_vc): its credits are never used",
                list(credited & !carried)
            ),
        );
    }
    let all = match &r.credits {
        None => DEFAULT_CREDITS,
        Some(v) => d.int_in(v, &k.at("credits"), 1, MAX_CREDITS as i64, "credits ")? as u32,
    };
    let mut rx_credits = credits_of(credited, all);
    for (vc, v) in r.vc_credits.iter().flat_map(|m| &m.value) {
        let kk = k.at("vc_credits").at(vc);
        let Some(n) = vc
            .parse::<usize>()
            .ok()
            .filter(|&n| credited & (1 << n.min(31)) != 0)
        else {
            return d.error(
                line(v),
                &kk,
                format!("`{vc}` is not a credited VC (`vcs` are {})", list(credited)),
            );
        };
        rx_credits[n] = d.int_in(v, &kk, 1, MAX_CREDITS as i64, "credits ")? as u32;
    }
    let mode = d.opt_word(&r.mode, &k.at("mode"))?.unwrap_or(def.mode);
    let cf_min_spacing = d
        .opt_unit_in(
            &r.cf_min_spacing,
            &k.at("cf_min_spacing"),
            Bytes(800)..=Bytes(u64::MAX),
            "CF_Updates are at least 800 B apart (SAI)",
        )?
        .unwrap_or(def.cf_min_spacing);
    const MAX_SPACING: &str = "the maximum spacing is 16 KiB to 1 MiB in steps of 16 KiB (SAI)";
    let cf_max_spacing = d
        .opt_unit_in(
            &r.cf_max_spacing,
            &k.at("cf_max_spacing"),
            Bytes(16_384)..=Bytes(1 << 20),
            MAX_SPACING,
        )?
        .unwrap_or(def.cf_max_spacing);
    if !cf_max_spacing.get().is_multiple_of(16_384) {
        return d.error(
            r.cf_max_spacing.as_ref().and_then(line),
            &k.at("cf_max_spacing"),
            format!("{cf_max_spacing}: {MAX_SPACING}"),
        );
    }
    if cf_max_spacing < cf_min_spacing {
        return d.error(
            r.cf_max_spacing.as_ref().and_then(line),
            &k.at("cf_max_spacing"),
            format!("{cf_max_spacing} is below cf_min_spacing {cf_min_spacing}"),
        );
    }
    let cc_interval = d
        .opt_unit_in(
            &r.cc_interval,
            &k.at("cc_interval"),
            Time::from_us(1)..=Time::from_ms(250),
            "the CC_Update timer is 1 µs to 250 ms (SAI)",
        )?
        .unwrap_or(def.cc_interval);
    Ok(CbfcSetup {
        credit_size,
        overhead,
        credited,
        tc_to_vc,
        queue_to_vc,
        rx_credits,
        mode,
        cf_min_spacing,
        cf_max_spacing,
        cc_interval,
        idle_updates: d
            .opt_word(&r.idle_updates, &k.at("idle_updates"))?
            .unwrap_or(def.idle_updates),
    })
}

/// Each queue's channel: that of the traffic classes `qos.tc_to_queue` puts on it (a
/// queue no class uses keeps the channel of its own number); Err((queue, vc, other vc))
/// when a queue holds classes of two channels.
fn queue_channels(
    tc_to_vc: &[u8; PRIORITIES],
    qos: &QosConfig,
) -> std::result::Result<[u8; PRIORITIES], (usize, u8, u8)> {
    let mut out = IDENTITY;
    let mut set = [false; PRIORITIES];
    for (tc, &vc) in tc_to_vc.iter().enumerate() {
        let q = qos.tc_to_queue[tc] as usize;
        if set[q] && out[q] != vc {
            return Err((q, out[q], vc));
        }
        out[q] = vc;
        set[q] = true;
    }
    Ok(out)
}

/// The channels of `mask`, as `3, 4`.
fn list(mask: u32) -> String {
    let v: Vec<String> = (0..VCS)
        .filter(|v| mask & (1 << v) != 0)
        .map(|v| v.to_string())
        .collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// Give every CBFC port's credited PGs their private profiles in `plan`.
pub fn reserve_all(plan: &mut Plan, ports: &[PortConfig], qos: &QosConfig) {
    for (i, p) in ports.iter().enumerate() {
        if p.flow_control.unwrap_or(qos.flow_control) == FlowControl::Cbfc {
            reserve(plan, i, &p.cbfc, qos);
        }
    }
}

/// Give port `port`'s credited PGs their private profiles: reserved = the cells the
/// credits of the channels mapped to the PG can fill, nothing shared, no headroom (the
/// sender stops before the buffer is full, so nothing arrives after a "stop"). A frame
/// costing n credits fills at most n × `ceil(credit_size / cell)` cells, n more when a
/// negative overhead lets it cost less than its bytes. In per-port mode one channel may use the port's
/// whole credit, so each credited PG may also take the rest of it from its pool.
fn reserve(plan: &mut Plan, port: usize, setup: &CbfcSetup, qos: &QosConfig) {
    let cell = plan.cell.get();
    let per_credit = (setup.credit_size as u64).div_ceil(cell) + u64::from(setup.overhead < 0);
    // The credited channels of each PG's classes (a channel shared by classes of one PG
    // counts once; one whose classes go to several PGs may fill each).
    let mut channels = [0u32; PRIORITIES];
    for tc in 0..PRIORITIES {
        let vc = setup.vc_of_tc(tc as u8);
        if setup.is_credited(vc) {
            channels[qos.tc_to_pg[tc] as usize] |= 1 << vc;
        }
    }
    let credits = channels.map(|m| {
        (0..VCS)
            .filter(|v| m & (1 << v) != 0)
            .map(|v| setup.rx_credits[v] as u64)
            .sum::<u64>()
    });
    for (pg, &c) in credits.iter().enumerate().filter(|(_, &c)| c > 0) {
        let i = port * PRIORITIES + pg;
        let shared = match setup.mode {
            CreditMode::PerVc => 0,
            CreditMode::PerPort => (setup.port_credits() - c) * per_credit * cell,
        };
        plan.pg_profiles[i] = ProfileSpec {
            pool: plan.pg_profiles[i].pool,
            reserved: Bytes(c * per_credit * cell),
            threshold: Threshold::Static(Bytes(shared)),
            headroom: None,
        };
        plan.pg_names[i] = PRIVATE_PROFILE.to_string();
    }
}
