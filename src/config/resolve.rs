//! Raw YAML → typed, validated, defaulted configuration. Every rule broken is reported with
//! the file, line and dotted key; every default is written down here once.

use super::common::{line, list_or_none, mac_from_str, Resolver};
use super::error::{ConfigError, ConfigWarning};
use super::raw::{self, Scalar, Val};
use lossless_buffer_model::headroom::HeadroomNeed;
use lossless_buffer_model::mmu::{Headroom, PoolKind, PoolSpec, ProfileSpec, Threshold};
use lossless_buffer_model::scheduler::Discipline;
use lossless_buffer_model::watchdog::{WatchdogAction, WatchdogConfig};
use lossless_buffer_model::wred::{ColorPolicy, Curve, MarkAt, WredProfile};
use lossless_buffer_model::{Bytes, Length, Rate, Time, PRIORITIES};
use lossless_pipeline::config::{
    Forwarding, Group, GroupMode, NextHop, PortConfig, QosConfig, Route, RouteTarget, SwitchConfig,
    Trust, DEFAULT_FDB_AGING, DEFAULT_FDB_SIZE,
};
use lossless_pipeline::presets::{identity8, port_mac, sonic_dscp_to_tc, switch_base_mac};
use std::collections::BTreeMap;

/// Default port speed.
pub const DEFAULT_SPEED: Rate = Rate::gbps(100);
/// Default cable length: 2 m.
pub const DEFAULT_CABLE: Length = Length(2_000);
/// Default largest frame (FCS included).
pub const DEFAULT_MTU: u32 = 9216;
/// Default pipeline latency.
pub const DEFAULT_PIPELINE_LATENCY: Time = Time::from_ns(500);
/// Default cell size.
pub const DEFAULT_CELL: Bytes = Bytes(256);
/// Most ports a switch may have.
pub const MAX_PORTS: u32 = 64;

/// One switch, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchSpec {
    /// What the pipeline needs.
    pub config: SwitchConfig,
    /// TAP device per port (`lossless tap`), when named.
    pub taps: Vec<Option<String>>,
    /// Profile name per (port, PG), for reports.
    pub pg_profile_names: Vec<String>,
    /// Profile name per (port, queue), for reports.
    pub queue_profile_names: Vec<String>,
    /// The buffer plan was the built-in default.
    pub default_buffer: bool,
}

/// A resolved scenario file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    /// Name (the file stem if not given).
    pub name: String,
    /// Seed.
    pub seed: u64,
    /// Run length, if given.
    pub duration: Option<Time>,
    /// Switches.
    pub switches: Vec<SwitchSpec>,
    /// Hosts, links, flows, events and outputs (for `lossless run`).
    pub sim: super::sim::SimSpec,
}

type Result<T> = std::result::Result<T, ConfigError>;

/// Resolve a parsed scenario file.
pub fn resolve(
    file: &str,
    stem: &str,
    raw: raw::ScenarioFile,
) -> std::result::Result<(Scenario, Vec<ConfigWarning>), ConfigError> {
    let r = Resolver {
        file,
        warnings: Default::default(),
    };
    let seed = raw.seed.as_ref().map_or(1, |s| s.value);
    let duration = r.opt(&raw.duration, "duration", Resolver::time)?;
    if duration == Some(Time::ZERO) {
        return r.error(
            raw.duration.as_ref().and_then(line),
            "duration",
            "a run needs a length above 0, such as 2ms (leave it out to run until idle)",
        );
    }
    if raw.switches.value.is_empty() {
        return r.error(
            line(&raw.switches),
            "switches",
            "at least one switch is needed",
        );
    }
    let mut switches = Vec::new();
    for (index, sw) in raw.switches.value.iter().enumerate() {
        if switches
            .iter()
            .any(|s: &SwitchSpec| s.config.name == sw.name.value)
        {
            return r.error(
                line(&sw.name),
                "switches.name",
                format!("switch `{}` is defined twice", sw.name.value),
            );
        }
        switches.push(resolve_switch(&r, sw, index, seed)?);
    }
    let sim = super::sim::resolve_sim(&r, stem, &raw, &switches, duration)?;
    let name = raw.name.map_or_else(|| stem.to_string(), |n| n.value);
    let warnings = r.warnings.into_inner();
    Ok((
        Scenario {
            name,
            seed,
            duration,
            switches,
            sim,
        },
        warnings,
    ))
}

fn resolve_switch(
    r: &Resolver,
    sw: &raw::SwitchRaw,
    index: usize,
    seed: u64,
) -> Result<SwitchSpec> {
    let name = sw.name.value.clone();
    let base_mac = match &sw.mac {
        None => switch_base_mac(index),
        Some(m) => {
            let mac = parse_mac(r, m, &format!("{name}.mac"))?;
            if mac[0] & 1 != 0 {
                return r.error(
                    line(m),
                    &format!("{name}.mac"),
                    format!("`{}` is a multicast address; a port's source MAC is unicast (first octet even)", m.value),
                );
            }
            mac
        }
    };
    let (ports, taps) = resolve_ports(r, &name, &sw.ports, base_mac)?;
    let pipeline_latency = r
        .opt(
            &sw.pipeline_latency,
            &format!("{name}.pipeline_latency"),
            Resolver::time,
        )?
        .unwrap_or(DEFAULT_PIPELINE_LATENCY);
    let default_qos = raw::QosRaw::default();
    let qos_raw = sw.qos.as_ref().map_or(&default_qos, |q| &q.value);
    let qos = resolve_qos(r, &name, qos_raw)?;
    let default_buffer = sw.buffer.is_none();
    let plan = match &sw.buffer {
        Some(b) => resolve_buffer(r, &name, b, &ports, &qos)?,
        None => default_plan(&ports, &qos),
    };
    check_headroom(r, &name, &ports, &taps, &plan)?;
    let forwarding = match &sw.forwarding {
        Some(f) => resolve_forwarding(r, &name, f, &ports)?,
        None => Forwarding::L2 {
            static_fdb: Vec::new(),
            fdb_size: DEFAULT_FDB_SIZE,
            fdb_aging: DEFAULT_FDB_AGING,
        },
    };
    Ok(SwitchSpec {
        config: SwitchConfig {
            name,
            ports,
            pipeline_latency,
            cell: plan.cell,
            pools: plan.pools,
            pg_profiles: plan.pg_profiles,
            queue_profiles: plan.queue_profiles,
            qos,
            forwarding,
            seed,
        },
        taps,
        pg_profile_names: plan.pg_names,
        queue_profile_names: plan.queue_names,
        default_buffer,
    })
}

fn resolve_ports(
    r: &Resolver,
    sw: &str,
    p: &Val<raw::PortsRaw>,
    base_mac: [u8; 6],
) -> Result<(Vec<PortConfig>, Vec<Option<String>>)> {
    let key = format!("{sw}.ports");
    let mac_of = |i: usize| -> Result<[u8; 6]> {
        port_mac(base_mac, i).map_or_else(
            || {
                r.error(
                    line(p),
                    &format!("{sw}.mac"),
                    format!("base MAC + port {i} runs past ff:ff:ff:ff:ff:ff"),
                )
            },
            Ok,
        )
    };
    let mut ports = Vec::new();
    let mut taps = Vec::new();
    let mtu_of = |v: &Option<Val<Scalar>>, key: &str| -> Result<u32> {
        let Some(v) = v else { return Ok(DEFAULT_MTU) };
        let b = r.bytes(v, key)?.get();
        if !(64..=16_383).contains(&b) {
            return r.error(
                line(v),
                key,
                format!("{b} bytes is outside 64–16383 (largest frame, FCS included)"),
            );
        }
        Ok(b as u32)
    };
    match &p.value {
        raw::PortsRaw::Uniform(u) => {
            if u.count.value == 0 || u.count.value > MAX_PORTS {
                return r.error(
                    line(&u.count),
                    &format!("{key}.count"),
                    format!("{} ports: a switch has 1–{MAX_PORTS}", u.count.value),
                );
            }
            let speed = r
                .opt(&u.speed, &format!("{key}.speed"), Resolver::rate)?
                .unwrap_or(DEFAULT_SPEED);
            let cable = r
                .opt(&u.cable, &format!("{key}.cable"), Resolver::length)?
                .unwrap_or(DEFAULT_CABLE);
            let delay = r.opt(&u.delay, &format!("{key}.delay"), Resolver::time)?;
            if u.cable.is_some() && delay.is_some() {
                return r.error(line(&u.count), &key, "give `cable` or `delay`, not both");
            }
            let mtu = mtu_of(&u.mtu, &format!("{key}.mtu"))?;
            for i in 0..u.count.value as usize {
                ports.push(PortConfig {
                    name: format!("Ethernet{i}"),
                    speed,
                    cable,
                    delay,
                    mtu,
                    mac: mac_of(i)?,
                });
                taps.push(u.tap_prefix.as_ref().map(|t| format!("{}{i}", t.value)));
            }
        }
        raw::PortsRaw::List(list) => {
            if list.is_empty() || list.len() > MAX_PORTS as usize {
                return r.error(
                    line(p),
                    &key,
                    format!("{} ports: a switch has 1–{MAX_PORTS}", list.len()),
                );
            }
            for (i, e) in list.iter().enumerate() {
                let k = format!("{key}[{i}]");
                let name = e
                    .value
                    .name
                    .as_ref()
                    .map_or_else(|| format!("Ethernet{i}"), |n| n.value.clone());
                if ports.iter().any(|p: &PortConfig| p.name == name) {
                    return r.error(
                        line(e),
                        &format!("{k}.name"),
                        format!("port name `{name}` is used twice"),
                    );
                }
                let speed = r
                    .opt(&e.value.speed, &format!("{k}.speed"), Resolver::rate)?
                    .unwrap_or(DEFAULT_SPEED);
                let cable = r
                    .opt(&e.value.cable, &format!("{k}.cable"), Resolver::length)?
                    .unwrap_or(DEFAULT_CABLE);
                let delay = r.opt(&e.value.delay, &format!("{k}.delay"), Resolver::time)?;
                if e.value.cable.is_some() && delay.is_some() {
                    return r.error(line(e), &k, "give `cable` or `delay`, not both");
                }
                let mtu = mtu_of(&e.value.mtu, &format!("{k}.mtu"))?;
                ports.push(PortConfig {
                    name,
                    speed,
                    cable,
                    delay,
                    mtu,
                    mac: mac_of(i)?,
                });
                taps.push(e.value.tap.as_ref().map(|t| t.value.clone()));
            }
        }
    }
    Ok((ports, taps))
}

fn resolve_qos(r: &Resolver, sw: &str, q: &raw::QosRaw) -> Result<QosConfig> {
    let k = |s: &str| format!("{sw}.qos.{s}");
    let trust = match q.trust.as_ref().map(|t| (t.value.as_str(), line(t))) {
        None | Some(("dscp", _)) => Trust::Dscp,
        Some(("dot1p", _)) => Trust::Dot1p,
        Some((other, l)) => {
            return r.error(l, &k("trust"), format!("`{other}`: expected dscp or dot1p"))
        }
    };
    let mut dscp_to_tc = sonic_dscp_to_tc();
    if let Some(m) = &q.dscp_to_tc {
        if let Some(d) = m.value.get("default") {
            dscp_to_tc = [r.small(d, &k("dscp_to_tc.default"), 7)?; 64];
        }
        for (key, v) in &m.value {
            if key == "default" {
                continue;
            }
            let kk = k(&format!("dscp_to_tc.{key}"));
            let Ok(d) = key.parse::<u8>() else {
                return r.error(
                    line(v),
                    &kk,
                    format!("`{key}` is not a DSCP value (0–63) or `default`"),
                );
            };
            if d > 63 {
                return r.error(line(v), &kk, format!("DSCP {d} is outside 0–63"));
            }
            dscp_to_tc[d as usize] = r.small(v, &kk, 7)?;
        }
    }
    let map = |m: &Option<Val<BTreeMap<String, Val<i64>>>>,
               name: &str,
               base: [u8; 8]|
     -> Result<[u8; 8]> {
        match m {
            Some(m) => r.prio_map(m, &k(name), base, 7),
            None => Ok(base),
        }
    };
    let dot1p_to_tc = map(&q.dot1p_to_tc, "dot1p_to_tc", identity8())?;
    let tc_to_pg = map(&q.tc_to_pg, "tc_to_pg", identity8())?;
    let tc_to_queue = map(&q.tc_to_queue, "tc_to_queue", identity8())?;
    let tc_to_dot1p = q
        .tc_to_dot1p
        .as_ref()
        .map(|_| map(&q.tc_to_dot1p, "tc_to_dot1p", identity8()))
        .transpose()?;
    let pfc_enable = match &q.pfc_enable {
        None => (1 << 3) | (1 << 4),
        Some(list) => {
            let mut m = 0u8;
            for p in &list.value {
                m |= 1 << r.small(p, &k("pfc_enable"), 7)?;
            }
            m
        }
    };
    let pause_quanta = match &q.pause_quanta {
        None => 0xFFFF,
        Some(v) if (1..=65_535).contains(&v.value) => v.value as u16,
        Some(v) => {
            return r.error(
                line(v),
                &k("pause_quanta"),
                format!("{} quanta: a pause time is 1–65535 quanta", v.value),
            )
        }
    };
    let pfc_response = r
        .opt(&q.pfc_response, &k("pfc_response"), Resolver::time)?
        .unwrap_or(Time::ZERO);
    let mut scheduler = [Discipline::Dwrr(1); PRIORITIES];
    if let Some(s) = &q.scheduler {
        for (range, e) in &s.value {
            let kk = k(&format!("scheduler.{range}"));
            let mask = r.range(range, line(e), &kk)?;
            let d = match e.value.kind.value.as_str() {
                "strict" => {
                    if let Some(w) = &e.value.weight {
                        return r.error(
                            line(w),
                            &format!("{kk}.weight"),
                            "a strict queue has no weight",
                        );
                    }
                    Discipline::Strict
                }
                "dwrr" => {
                    let w = e.value.weight.as_ref().map_or(Ok(1), |w| {
                        if (1..=100).contains(&w.value) {
                            Ok(w.value as u32)
                        } else {
                            r.error(
                                line(w),
                                &format!("{kk}.weight"),
                                format!("weight {} is outside 1–100", w.value),
                            )
                        }
                    })?;
                    Discipline::Dwrr(w)
                }
                other => {
                    return r.error(
                        line(&e.value.kind),
                        &format!("{kk}.type"),
                        format!("`{other}`: expected strict or dwrr"),
                    )
                }
            };
            for (i, slot) in scheduler.iter_mut().enumerate() {
                if mask & (1 << i) != 0 {
                    *slot = d;
                }
            }
        }
    }
    let mut profiles = BTreeMap::new();
    if let Some(w) = &q.wred_profiles {
        for (name, p) in &w.value {
            profiles.insert(
                name.clone(),
                resolve_wred(r, &k(&format!("wred_profiles.{name}")), p)?,
            );
        }
    }
    let mut queue_wred = [None; PRIORITIES];
    if let Some(m) = &q.queue_wred {
        for (range, name) in &m.value {
            let kk = k(&format!("queue_wred.{range}"));
            let mask = r.range(range, line(name), &kk)?;
            let Some(p) = profiles.get(&name.value) else {
                let known: Vec<_> = profiles.keys().cloned().collect();
                return r.error(
                    line(name),
                    &kk,
                    format!(
                        "unknown WRED profile `{}` (defined: {})",
                        name.value,
                        list_or_none(&known)
                    ),
                );
            };
            for (i, slot) in queue_wred.iter_mut().enumerate() {
                if mask & (1 << i) != 0 {
                    *slot = Some(*p);
                }
            }
        }
    }
    let pfcwd = q
        .pfcwd
        .as_ref()
        .map(|w| resolve_pfcwd(r, &k("pfcwd"), w))
        .transpose()?;
    Ok(QosConfig {
        trust,
        dscp_to_tc,
        dot1p_to_tc,
        tc_to_pg,
        tc_to_queue,
        tc_to_dot1p,
        pfc_enable,
        pause_quanta,
        pfc_response,
        scheduler,
        queue_wred,
        pfcwd,
    })
}

fn resolve_wred(r: &Resolver, key: &str, p: &Val<raw::WredRaw>) -> Result<WredProfile> {
    let w = &p.value;
    let ecn_mask: u8 = match w.ecn.as_ref().map(|e| e.value.as_str()) {
        None | Some("ecn_none") => 0,
        Some("ecn_green") => 0b001,
        Some("ecn_yellow") => 0b010,
        Some("ecn_red") => 0b100,
        Some("ecn_green_yellow") => 0b011,
        Some("ecn_green_red") => 0b101,
        Some("ecn_yellow_red") => 0b110,
        Some("ecn_all") => 0b111,
        Some(other) => {
            return r.error(
                w.ecn.as_ref().and_then(line),
                &format!("{key}.ecn"),
                format!("`{other}`: expected ecn_none, ecn_green, ecn_yellow, ecn_red, ecn_green_yellow, ecn_green_red, ecn_yellow_red or ecn_all"),
            )
        }
    };
    let mark_at = match w.mark_at.as_ref().map(|m| (m.value.as_str(), line(m))) {
        None | Some(("enqueue", _)) => MarkAt::Enqueue,
        Some(("dequeue", _)) => MarkAt::Dequeue,
        Some((other, l)) => {
            return r.error(
                l,
                &format!("{key}.mark_at"),
                format!("`{other}`: expected enqueue or dequeue"),
            )
        }
    };
    let colour = |name: &str,
                  min: &Option<Val<Scalar>>,
                  max: &Option<Val<Scalar>>,
                  prob: &Option<Val<i64>>,
                  enable: &Option<Val<bool>>,
                  bit: u8|
     -> Result<ColorPolicy> {
        let kmin = r.opt(min, &format!("{key}.{name}_min"), Resolver::bytes)?;
        let kmax = r.opt(max, &format!("{key}.{name}_max"), Resolver::bytes)?;
        let curve = match (kmin, kmax) {
            (None, None) => {
                if let Some(p) = prob {
                    return r.error(
                        line(p),
                        &format!("{key}.{name}_drop_probability"),
                        format!("needs {name}_min and {name}_max"),
                    );
                }
                None
            }
            (Some(a), Some(b)) => {
                if a > b {
                    return r.error(
                        min.as_ref().and_then(line),
                        &format!("{key}.{name}_min"),
                        format!("Kmin {a} is above Kmax {b}"),
                    );
                }
                let pmax = match prob {
                    None => 100,
                    Some(p) if (0..=100).contains(&p.value) => p.value as u8,
                    Some(p) => {
                        return r.error(
                            line(p),
                            &format!("{key}.{name}_drop_probability"),
                            format!("{}% is outside 0–100", p.value),
                        )
                    }
                };
                Some(Curve {
                    min: a,
                    max: b,
                    max_probability: pmax,
                })
            }
            _ => {
                let l = min.as_ref().or(max.as_ref()).and_then(line);
                return r.error(
                    l,
                    &format!("{key}.{name}_min"),
                    format!("give both {name}_min and {name}_max"),
                );
            }
        };
        Ok(ColorPolicy {
            curve,
            wred: enable.as_ref().is_some_and(|e| e.value),
            ecn: ecn_mask & bit != 0,
        })
    };
    Ok(WredProfile {
        colors: [
            colour(
                "green",
                &w.green_min,
                &w.green_max,
                &w.green_drop_probability,
                &w.wred_green_enable,
                0b001,
            )?,
            colour(
                "yellow",
                &w.yellow_min,
                &w.yellow_max,
                &w.yellow_drop_probability,
                &w.wred_yellow_enable,
                0b010,
            )?,
            colour(
                "red",
                &w.red_min,
                &w.red_max,
                &w.red_drop_probability,
                &w.wred_red_enable,
                0b100,
            )?,
        ],
        mark_at,
    })
}

fn resolve_pfcwd(r: &Resolver, key: &str, w: &Val<raw::PfcwdRaw>) -> Result<WatchdogConfig> {
    let action = match w.value.action.as_ref().map(|a| (a.value.as_str(), line(a))) {
        None | Some(("drop", _)) => WatchdogAction::Drop,
        Some(("forward", _)) => WatchdogAction::Forward,
        Some(("alert", _)) => WatchdogAction::Alert,
        Some((other, l)) => {
            return r.error(
                l,
                &format!("{key}.action"),
                format!("`{other}`: expected drop, forward or alert"),
            )
        }
    };
    let detection_time = r
        .opt(
            &w.value.detection_time,
            &format!("{key}.detection_time"),
            Resolver::time,
        )?
        .unwrap_or(Time::from_ms(200));
    let restoration_time = r
        .opt(
            &w.value.restoration_time,
            &format!("{key}.restoration_time"),
            Resolver::time,
        )?
        .unwrap_or(Time::from_ms(200));
    let default_poll = Time(detection_time.min(restoration_time).as_ps() / 4).max(Time(1));
    let polling_interval = r
        .opt(
            &w.value.polling_interval,
            &format!("{key}.polling_interval"),
            Resolver::time,
        )?
        .unwrap_or(default_poll);
    if polling_interval == Time::ZERO || polling_interval > detection_time {
        return r.error(
            line(w),
            &format!("{key}.polling_interval"),
            format!(
                "{polling_interval} must be above 0 and at most detection_time {detection_time}"
            ),
        );
    }
    Ok(WatchdogConfig {
        action,
        detection_time,
        restoration_time,
        polling_interval,
    })
}

/// A buffer plan: pools and one profile per (port, PG) and (port, queue).
struct Plan {
    cell: Bytes,
    pools: Vec<PoolSpec>,
    pg_profiles: Vec<ProfileSpec>,
    queue_profiles: Vec<ProfileSpec>,
    pg_names: Vec<String>,
    queue_names: Vec<String>,
    /// Where each profile is defined, for warnings.
    profile_lines: BTreeMap<String, Option<u64>>,
}

/// Pool sizes of the default plan (32 MB of shared buffer, seen from ingress and egress).
const DEFAULT_LOSSLESS_POOL: Bytes = Bytes(24_000_000);
const DEFAULT_LOSSY_POOL: Bytes = Bytes(8_000_000);

/// The built-in Tomahawk-like plan (design §6 "Defaults").
fn default_plan(ports: &[PortConfig], qos: &QosConfig) -> Plan {
    let pool = |name: &str, kind, size| PoolSpec {
        name: name.into(),
        kind,
        size,
        xoff: Bytes(0),
    };
    let pools = vec![
        pool(
            "ingress_lossless_pool",
            PoolKind::Ingress,
            DEFAULT_LOSSLESS_POOL,
        ),
        pool("ingress_lossy_pool", PoolKind::Ingress, DEFAULT_LOSSY_POOL),
        pool(
            "egress_lossless_pool",
            PoolKind::Egress,
            DEFAULT_LOSSLESS_POOL,
        ),
        pool("egress_lossy_pool", PoolKind::Egress, DEFAULT_LOSSY_POOL),
    ];
    let lossless_pgs = lossless_pg_mask(qos);
    let lossless_queues = (0..PRIORITIES).fold(0u8, |m, t| {
        if qos.pfc_enable & (1 << t) != 0 {
            m | 1 << qos.tc_to_queue[t]
        } else {
            m
        }
    });
    let mut plan = Plan {
        cell: DEFAULT_CELL,
        pools,
        pg_profiles: vec![],
        queue_profiles: vec![],
        pg_names: vec![],
        queue_names: vec![],
        profile_lines: BTreeMap::new(),
    };
    for p in ports {
        // The larger of the two minimums (MTU frames in bytes, small frames in cells).
        let headroom = HeadroomNeed::ieee(p.speed, p.propagation(), p.mtu, DEFAULT_CELL).bytes();
        for pg in 0..PRIORITIES {
            let (spec, name) = if lossless_pgs & (1 << pg) != 0 {
                let h = Headroom {
                    xoff: headroom,
                    xon: Bytes(0),
                    xon_offset: Bytes(2 * p.mtu as u64),
                };
                (
                    ProfileSpec {
                        pool: 0,
                        reserved: Bytes(0),
                        threshold: Threshold::Dynamic(-3),
                        headroom: Some(h),
                    },
                    "pg_lossless_default",
                )
            } else {
                (
                    ProfileSpec {
                        pool: 1,
                        reserved: Bytes(0),
                        threshold: Threshold::Dynamic(3),
                        headroom: None,
                    },
                    "pg_lossy_default",
                )
            };
            plan.pg_profiles.push(spec);
            plan.pg_names.push(name.into());
        }
        for q in 0..PRIORITIES {
            let (spec, name) = if lossless_queues & (1 << q) != 0 {
                (
                    ProfileSpec {
                        pool: 2,
                        reserved: Bytes(0),
                        threshold: Threshold::Static(DEFAULT_LOSSLESS_POOL),
                        headroom: None,
                    },
                    "q_lossless_default",
                )
            } else {
                (
                    ProfileSpec {
                        pool: 3,
                        reserved: Bytes(1518),
                        threshold: Threshold::Dynamic(3),
                        headroom: None,
                    },
                    "q_lossy_default",
                )
            };
            plan.queue_profiles.push(spec);
            plan.queue_names.push(name.into());
        }
    }
    plan
}

/// PGs that carry a PFC-enabled priority.
fn lossless_pg_mask(qos: &QosConfig) -> u8 {
    (0..PRIORITIES).fold(0u8, |m, t| {
        if qos.pfc_enable & (1 << t) != 0 {
            m | 1 << qos.tc_to_pg[t]
        } else {
            m
        }
    })
}

fn resolve_buffer(
    r: &Resolver,
    sw: &str,
    b: &Val<raw::BufferRaw>,
    ports: &[PortConfig],
    qos: &QosConfig,
) -> Result<Plan> {
    let k = |s: &str| format!("{sw}.buffer.{s}");
    let cell = r
        .opt(&b.value.cell, &k("cell"), Resolver::bytes)?
        .unwrap_or(DEFAULT_CELL);
    if cell.get() < 64 || cell.get() > 65_536 {
        return r.error(
            b.value.cell.as_ref().and_then(line),
            &k("cell"),
            format!("{cell}: a cell is 64 B–64 KiB"),
        );
    }
    // Pools.
    let mut pools = Vec::new();
    let mut pool_static = Vec::new();
    for (name, p) in &b.value.pools.value {
        let kk = k(&format!("pools.{name}"));
        let kind = match p.value.kind.value.as_str() {
            "ingress" => PoolKind::Ingress,
            "egress" => PoolKind::Egress,
            other => {
                return r.error(
                    line(&p.value.kind),
                    &format!("{kk}.type"),
                    format!("`{other}`: expected ingress or egress"),
                )
            }
        };
        let size = r.bytes(&p.value.size, &format!("{kk}.size"))?;
        if size.get() < cell.get() {
            return r.error(
                line(&p.value.size),
                &format!("{kk}.size"),
                format!("{size} is smaller than one cell ({cell})"),
            );
        }
        let is_static = match p.value.mode.as_ref().map(|m| (m.value.as_str(), line(m))) {
            None | Some(("dynamic", _)) => false,
            Some(("static", _)) => true,
            Some((other, l)) => {
                return r.error(
                    l,
                    &format!("{kk}.mode"),
                    format!("`{other}`: expected static or dynamic"),
                )
            }
        };
        let xoff = r
            .opt(&p.value.xoff, &format!("{kk}.xoff"), Resolver::bytes)?
            .unwrap_or(Bytes(0));
        if xoff.get() > 0 && kind == PoolKind::Egress {
            return r.error(
                p.value.xoff.as_ref().and_then(line),
                &format!("{kk}.xoff"),
                "a shared headroom pool belongs to an ingress pool",
            );
        }
        pools.push(PoolSpec {
            name: name.clone(),
            kind,
            size,
            xoff,
        });
        pool_static.push(is_static);
    }
    let pool_index = |name: &Val<String>, key: &str| -> Result<usize> {
        pools.iter().position(|p| p.name == name.value).map_or_else(
            || {
                let known: Vec<_> = pools.iter().map(|p| p.name.clone()).collect();
                r.error(
                    line(name),
                    key,
                    format!(
                        "unknown pool `{}` (defined: {})",
                        name.value,
                        list_or_none(&known)
                    ),
                )
            },
            Ok,
        )
    };
    // Profiles.
    let mut profiles: BTreeMap<String, (ProfileSpec, Option<u64>)> = BTreeMap::new();
    for (name, p) in &b.value.profiles.value {
        let kk = k(&format!("profiles.{name}"));
        let pr = &p.value;
        let pool = pool_index(&pr.pool, &format!("{kk}.pool"))?;
        let reserved = r
            .opt(&pr.size, &format!("{kk}.size"), Resolver::bytes)?
            .unwrap_or(Bytes(0));
        let threshold = match (&pr.dynamic_th, &pr.static_th) {
            (Some(_), Some(s)) => {
                return r.error(line(s), &kk, "give dynamic_th or static_th, not both")
            }
            (None, None) => {
                return r.error(
                    line(p),
                    &kk,
                    "needs dynamic_th (α = 2^n, n in −8..7) or static_th (bytes)",
                )
            }
            (Some(d), None) => {
                if !(-8..=7).contains(&d.value) {
                    return r.error(
                        line(d),
                        &format!("{kk}.dynamic_th"),
                        format!("{} is outside −8..7 (α = 2^dynamic_th)", d.value),
                    );
                }
                if pool_static[pool] {
                    return r.error(
                        line(d),
                        &format!("{kk}.dynamic_th"),
                        format!("pool `{}` is static: use static_th", pools[pool].name),
                    );
                }
                Threshold::Dynamic(d.value as i8)
            }
            (None, Some(s)) => {
                let v = r.bytes(s, &format!("{kk}.static_th"))?;
                if !pool_static[pool]
                    && pools[pool].kind == PoolKind::Ingress
                    && v > pools[pool].size
                {
                    r.warn(
                        line(s),
                        &format!("{kk}.static_th"),
                        format!(
                            "{v} is above the pool's size {}: the pool runs out first",
                            pools[pool].size
                        ),
                    );
                }
                Threshold::Static(v)
            }
        };
        let xoff = r.opt(&pr.xoff, &format!("{kk}.xoff"), Resolver::bytes)?;
        let headroom = match xoff {
            None => {
                for (field, v) in [("xon", &pr.xon), ("xon_offset", &pr.xon_offset)] {
                    if let Some(v) = v {
                        return r.error(
                            line(v),
                            &format!("{kk}.{field}"),
                            "only a lossless profile (with xoff) has XON settings",
                        );
                    }
                }
                None
            }
            Some(xoff) => {
                if pools[pool].kind != PoolKind::Ingress {
                    return r.error(
                        pr.xoff.as_ref().and_then(line),
                        &format!("{kk}.xoff"),
                        "headroom (xoff) belongs to ingress PG profiles",
                    );
                }
                let xon = r
                    .opt(&pr.xon, &format!("{kk}.xon"), Resolver::bytes)?
                    .unwrap_or(Bytes(0));
                let xon_offset = r
                    .opt(&pr.xon_offset, &format!("{kk}.xon_offset"), Resolver::bytes)?
                    .unwrap_or(Bytes(0));
                // XOFF point of this PG filling the pool alone: x = α·S/(1 + α), or static_th.
                let s = pools[pool].size.get();
                let (xoff_point, how) = match threshold {
                    Threshold::Static(t) => (t.get(), format!("static_th {t}")),
                    Threshold::Dynamic(n) => {
                        let x = if n >= 0 {
                            (s << n) / ((1 << n) + 1)
                        } else {
                            s / ((1 << -n) + 1)
                        };
                        (
                            x,
                            format!("α·S/(1+α) with α = 2^{n}, S = {}", pools[pool].size),
                        )
                    }
                };
                if xon.get() >= xoff_point {
                    return r.error(
                        pr.xon.as_ref().and_then(line).or(line(p)),
                        &format!("{kk}.xon"),
                        format!(
                            "{xon} is at or above the XOFF point, {how} = {}",
                            Bytes(xoff_point)
                        ),
                    );
                }
                if xon_offset.get() >= xoff_point {
                    return r.error(pr.xon_offset.as_ref().and_then(line).or(line(p)), &format!("{kk}.xon_offset"), format!("{xon_offset} is at or above the XOFF point, {how} = {}: XON would never come", Bytes(xoff_point)));
                }
                if xoff.get() == 0 {
                    r.warn(pr.xoff.as_ref().and_then(line), &format!("{kk}.xoff"), "0 bytes of headroom (a PG's xoff bounds its headroom, with a shared headroom pool too): lossless traffic will drop");
                }
                Some(Headroom {
                    xoff,
                    xon,
                    xon_offset,
                })
            }
        };
        let own = reserved.get() + xoff.map_or(0, |x| x.get());
        if own > pools[pool].size.get() {
            return r.error(
                line(p),
                &kk,
                format!(
                    "reserved {reserved} + headroom {} = {} is beyond pool `{}` of {}",
                    xoff.unwrap_or_default(),
                    Bytes(own),
                    pools[pool].name,
                    pools[pool].size
                ),
            );
        }
        profiles.insert(
            name.clone(),
            (
                ProfileSpec {
                    pool,
                    reserved,
                    threshold,
                    headroom,
                },
                line(p),
            ),
        );
    }
    // Lossy defaults for PGs and queues nobody named.
    let pick_pool = |kind: PoolKind, preferred: &str| {
        pools
            .iter()
            .position(|p| p.name == preferred)
            .or_else(|| pools.iter().position(|p| p.kind == kind))
    };
    let lossy_default = |kind: PoolKind, preferred: &str, reserved: u64| -> Option<ProfileSpec> {
        let pool = pick_pool(kind, preferred)?;
        let threshold = if pool_static[pool] {
            Threshold::Static(pools[pool].size)
        } else {
            Threshold::Dynamic(3)
        };
        Some(ProfileSpec {
            pool,
            reserved: Bytes(reserved),
            threshold,
            headroom: None,
        })
    };
    let Some(pg_default) = lossy_default(PoolKind::Ingress, "ingress_lossy_pool", 0) else {
        return r.error(
            line(&b.value.pools),
            &k("pools"),
            "needs at least one ingress pool",
        );
    };
    let Some(q_default) = lossy_default(PoolKind::Egress, "egress_lossy_pool", 0) else {
        return r.error(
            line(&b.value.pools),
            &k("pools"),
            "needs at least one egress pool",
        );
    };
    let assign = |map: &BTreeMap<String, Val<String>>,
                  what: &str,
                  kind: PoolKind,
                  default: &ProfileSpec,
                  default_name: &str|
     -> Result<Vec<(ProfileSpec, String, Option<u64>)>> {
        let mut out = vec![(default.clone(), default_name.to_string(), None); PRIORITIES];
        let mut seen = 0u8;
        for (range, name) in map {
            let kk = k(&format!("{what}.{range}"));
            let mask = r.range(range, line(name), &kk)?;
            if seen & mask != 0 {
                return r.error(
                    line(name),
                    &kk,
                    format!(
                        "{what} {} is given a profile twice",
                        (0..8).find(|i| seen & mask & (1 << i) != 0).unwrap_or(0)
                    ),
                );
            }
            seen |= mask;
            let Some((spec, _)) = profiles.get(&name.value) else {
                let known: Vec<_> = profiles.keys().cloned().collect();
                return r.error(
                    line(name),
                    &kk,
                    format!(
                        "unknown profile `{}` (defined: {})",
                        name.value,
                        list_or_none(&known)
                    ),
                );
            };
            if pools[spec.pool].kind != kind {
                return r.error(
                    line(name),
                    &kk,
                    format!(
                        "profile `{}` draws from {} pool `{}`; a {what} needs an {} pool",
                        name.value,
                        kind_name(pools[spec.pool].kind),
                        pools[spec.pool].name,
                        kind_name(kind)
                    ),
                );
            }
            for (i, slot) in out.iter_mut().enumerate() {
                if mask & (1 << i) != 0 {
                    *slot = (spec.clone(), name.value.clone(), line(name));
                }
            }
        }
        Ok(out)
    };
    let pgs = assign(
        &b.value.pg,
        "pg",
        PoolKind::Ingress,
        &pg_default,
        "pg_lossy_default",
    )?;
    let queues = assign(
        &b.value.queue,
        "queue",
        PoolKind::Egress,
        &q_default,
        "q_lossy_default",
    )?;
    // Every PFC-enabled priority needs a lossless PG.
    for t in 0..PRIORITIES {
        if qos.pfc_enable & (1 << t) != 0 {
            let pg = qos.tc_to_pg[t] as usize;
            if pgs[pg].0.headroom.is_none() {
                return r.error(pgs[pg].2, &k(&format!("pg.{pg}")), format!("PFC is enabled on priority {t}, which maps to PG {pg}, but profile `{}` has no xoff: a PFC priority needs a lossless PG profile", pgs[pg].1));
            }
        }
    }
    let profile_lines = profiles.iter().map(|(n, (_, l))| (n.clone(), *l)).collect();
    let mut plan = Plan {
        cell,
        pools,
        pg_profiles: vec![],
        queue_profiles: vec![],
        pg_names: vec![],
        queue_names: vec![],
        profile_lines,
    };
    for _ in ports {
        for (spec, name, _) in &pgs {
            plan.pg_profiles.push(spec.clone());
            plan.pg_names.push(name.clone());
        }
        for (spec, name, _) in &queues {
            plan.queue_profiles.push(spec.clone());
            plan.queue_names.push(name.clone());
        }
    }
    // Σ pools + Σ reservations + Σ headroom ≤ total.
    if let Some(total_v) = &b.value.total {
        let total = r.bytes(total_v, &k("total"))?;
        let pools_sum: u64 = plan.pools.iter().map(|p| p.size.get() + p.xoff.get()).sum();
        let reserved: u64 = plan
            .pg_profiles
            .iter()
            .chain(&plan.queue_profiles)
            .map(|p| p.reserved.get())
            .sum();
        let headroom: u64 = plan
            .pg_profiles
            .iter()
            .filter(|p| plan.pools[p.pool].xoff.get() == 0)
            .map(|p| p.headroom.map_or(0, |h| h.xoff.get()))
            .sum();
        let need = pools_sum + reserved + headroom;
        if need > total.get() {
            return r.error(
                line(total_v),
                &k("total"),
                format!(
                    "pools {} + reservations {} + headroom {} = {} exceed the total {} by {} bytes",
                    Bytes(pools_sum),
                    Bytes(reserved),
                    Bytes(headroom),
                    Bytes(need),
                    total,
                    need - total.get()
                ),
            );
        }
    }
    Ok(plan)
}

fn kind_name(k: PoolKind) -> &'static str {
    match k {
        PoolKind::Ingress => "ingress",
        PoolKind::Egress => "egress",
    }
}

/// Warn where a lossless PG's headroom is below either computed minimum: the physics
/// formula in bytes (frames of the MTU), or the cells that a stream of the worst frame size
/// takes (small frames each fill a whole cell).
fn check_headroom(
    r: &Resolver,
    sw: &str,
    ports: &[PortConfig],
    taps: &[Option<String>],
    plan: &Plan,
) -> Result<()> {
    let mut warned = std::collections::BTreeSet::new();
    for (i, p) in plan.pg_profiles.iter().enumerate() {
        let Some(h) = p.headroom else { continue };
        let port = &ports[i / PRIORITIES];
        if let Some(tap) = &taps[i / PRIORITIES] {
            // A TAP port's cable is the engine's bounded queues, not a wire.
            let (cells, frame) = crate::tap::cable::worst_cells(port.mtu, plan.cell);
            let have = h.xoff.cells(plan.cell);
            let name = &plan.pg_names[i];
            if have < cells && warned.insert((name.clone(), Bytes(cells))) {
                r.warn(
                    plan.profile_lines.get(name).copied().flatten(),
                    &format!("{sw}.buffer.profiles.{name}.xoff"),
                    format!(
                        "headroom {} is {have} cells of {}; a TAP port ({tap}) can hold {cells} cells of frames after XOFF (its kernel ring, read queue and frames in hand, as {frame}-byte frames): {} are needed, or lossless drops are possible",
                        h.xoff, plan.cell, Bytes(cells * plan.cell.get())
                    ),
                );
            }
            continue;
        }
        let need = HeadroomNeed::ieee(port.speed, port.propagation(), port.mtu, plan.cell);
        let name = &plan.pg_names[i];
        let at = plan.profile_lines.get(name).copied().flatten();
        let key = format!("{sw}.buffer.profiles.{name}.xoff");
        let mtu_min = need.budget.total();
        let have_cells = h.xoff.cells(plan.cell);
        if h.xoff < mtu_min {
            if warned.insert((name.clone(), mtu_min)) {
                r.warn(at, &key, format!(
                    "headroom {} is below the minimum {} for {} at {}, {} one way, MTU {} and the IEEE peer response: lossless drops are possible",
                    h.xoff, mtu_min, port.name, port.speed, port.propagation(), port.mtu
                ));
            }
        } else if have_cells < need.frame_cells && warned.insert((name.clone(), mtu_min)) {
            r.warn(at, &key, format!(
                "headroom {} is {have_cells} cells of {}; after XOFF up to {} frames of {} B may arrive on {} ({}, {} one way, IEEE peer response), one cell each or more: {} cells = {} are needed, or lossless drops are possible with small frames",
                h.xoff, plan.cell, need.frame_cells / need.frame.div_ceil(plan.cell.get() as u32) as u64,
                need.frame, port.name, port.speed, port.propagation(), need.frame_cells, Bytes(need.frame_cells * plan.cell.get())
            ));
        }
    }
    Ok(())
}

fn parse_mac(r: &Resolver, v: &Val<String>, key: &str) -> Result<[u8; 6]> {
    mac_from_str(&v.value).map_or_else(
        || {
            r.error(
                line(v),
                key,
                format!(
                    "`{}` is not a MAC address such as 02:00:00:00:00:01",
                    v.value
                ),
            )
        },
        Ok,
    )
}

fn port_index(r: &Resolver, ports: &[PortConfig], v: &Val<String>, key: &str) -> Result<u16> {
    ports
        .iter()
        .position(|p| p.name == v.value)
        .map(|i| i as u16)
        .map_or_else(
            || {
                r.error(
                    line(v),
                    key,
                    format!(
                        "unknown port `{}` (ports are {}…{})",
                        v.value,
                        ports[0].name,
                        ports[ports.len() - 1].name
                    ),
                )
            },
            Ok,
        )
}

fn resolve_forwarding(
    r: &Resolver,
    sw: &str,
    f: &Val<raw::ForwardingRaw>,
    ports: &[PortConfig],
) -> Result<Forwarding> {
    let k = |s: &str| format!("{sw}.forwarding.{s}");
    let fw = &f.value;
    match fw.mode.value.as_str() {
        "l2" => {
            if let Some(routes) = &fw.routes {
                return r.error(
                    routes.first().and_then(line),
                    &k("routes"),
                    "routes belong to mode: l3",
                );
            }
            let mut static_fdb = Vec::new();
            for (i, e) in fw.fdb.iter().flatten().enumerate() {
                let kk = k(&format!("fdb[{i}]"));
                let mac = parse_mac(r, &e.value.mac, &format!("{kk}.mac"))?;
                let port = port_index(r, ports, &e.value.port, &format!("{kk}.port"))?;
                let vid = e.value.vlan.as_ref().map_or(0, |v| v.value);
                if vid > 4095 {
                    return r.error(
                        e.value.vlan.as_ref().and_then(line),
                        &format!("{kk}.vlan"),
                        format!("VLAN {vid} is outside 0–4095"),
                    );
                }
                static_fdb.push((vid, mac, port));
            }
            let fdb_size = fw
                .fdb_size
                .as_ref()
                .map_or(DEFAULT_FDB_SIZE, |v| v.value as usize);
            let fdb_aging = r
                .opt(&fw.fdb_aging, &k("fdb_aging"), Resolver::time)?
                .unwrap_or(DEFAULT_FDB_AGING);
            Ok(Forwarding::L2 {
                static_fdb,
                fdb_size,
                fdb_aging,
            })
        }
        "l3" => {
            let mut groups = Vec::new();
            let mut group_names = Vec::new();
            for (name, g) in fw.groups.iter().flatten() {
                let kk = k(&format!("groups.{name}"));
                let mode =
                    match g.value.mode.as_ref().map(|m| (m.value.as_str(), line(m))) {
                        None | Some(("hash", _)) => GroupMode::Hash,
                        Some(("per_packet", _)) => GroupMode::PerPacket,
                        Some(("fixed", _)) => GroupMode::Fixed,
                        Some(("flowlet", l)) => return r.error(
                            l,
                            &format!("{kk}.mode"),
                            "flowlet groups (dynamic load balancing) are not built yet; use hash",
                        ),
                        Some((other, l)) => {
                            return r.error(
                                l,
                                &format!("{kk}.mode"),
                                format!("`{other}`: expected hash, per_packet or fixed"),
                            )
                        }
                    };
                if g.value.members.is_empty() {
                    return r.error(
                        line(g),
                        &format!("{kk}.members"),
                        "a group needs at least one member",
                    );
                }
                let mut members = Vec::new();
                for (i, m) in g.value.members.iter().enumerate() {
                    let port =
                        port_index(r, ports, &m.value.port, &format!("{kk}.members[{i}].port"))?;
                    let mac = parse_mac(r, &m.value.mac, &format!("{kk}.members[{i}].mac"))?;
                    members.push(NextHop { port, mac });
                }
                groups.push(Group {
                    name: name.clone(),
                    mode,
                    members,
                });
                group_names.push(name.clone());
            }
            let mut routes = Vec::new();
            for (i, rt) in fw.routes.iter().flatten().enumerate() {
                let kk = k(&format!("routes[{i}]"));
                let (prefix, len) = parse_prefix(r, &rt.value.prefix, &format!("{kk}.prefix"))?;
                let target = match (&rt.value.group, &rt.value.port, &rt.value.mac) {
                    (Some(g), None, None) => match group_names.iter().position(|n| *n == g.value) {
                        Some(i) => RouteTarget::Group(i as u16),
                        None => {
                            return r.error(
                                line(g),
                                &format!("{kk}.group"),
                                format!(
                                    "unknown group `{}` (defined: {})",
                                    g.value,
                                    list_or_none(&group_names)
                                ),
                            )
                        }
                    },
                    (None, Some(p), Some(m)) => RouteTarget::NextHop(NextHop {
                        port: port_index(r, ports, p, &format!("{kk}.port"))?,
                        mac: parse_mac(r, m, &format!("{kk}.mac"))?,
                    }),
                    _ => {
                        return r.error(line(rt), &kk, "a route needs `group`, or `port` and `mac`")
                    }
                };
                routes.push(Route {
                    prefix,
                    len,
                    target,
                });
            }
            Ok(Forwarding::L3 { routes, groups })
        }
        other => r.error(
            line(&fw.mode),
            &k("mode"),
            format!("`{other}`: expected l2 or l3"),
        ),
    }
}

fn parse_prefix(r: &Resolver, v: &Val<String>, key: &str) -> Result<(u128, u8)> {
    let bad = || {
        r.error(
            line(v),
            key,
            format!(
                "`{}` is not a prefix such as 198.18.1.0/24 or 2001:db8::/32",
                v.value
            ),
        )
    };
    let Some((addr, len)) = v.value.split_once('/') else {
        return bad();
    };
    let Ok(len) = len.parse::<u8>() else {
        return bad();
    };
    if let Ok(a) = addr.parse::<std::net::Ipv4Addr>() {
        if len > 32 {
            return bad();
        }
        return Ok((lossless_pipeline::config::v4_key(a.octets()), 96 + len));
    }
    if let Ok(a) = addr.parse::<std::net::Ipv6Addr>() {
        if len > 128 {
            return bad();
        }
        return Ok((u128::from(a), len));
    }
    bad()
}
