//! `forwarding:` of a switch: L2 (static FDB entries, learning limits and aging) or L3
//! (routes to next hops or to groups of them).

use crate::config::diag::{Diag, Diags, Key};
use crate::config::scenario::{HopAt, PendingMac};
use crate::config::schema::{ForwardingRaw, GroupRaw, Val};
use crate::config::values::{line, list_or_none};
use crate::config::words::ForwardingMode;
use lossless_buffer_model::{Named, Time};
use lossless_pipeline::config::{
    v4_key, FlowletConfig, Forwarding, Group, GroupMode, NextHop, PortConfig, Route, RouteTarget,
};

type Result<T> = std::result::Result<T, Diag>;

/// The forwarding of switch `sw` over its `ports`, and the next hops whose MAC is left to
/// the cabling.
pub fn resolve(
    d: &Diags,
    sw: &Key,
    f: &Val<ForwardingRaw>,
    ports: &[PortConfig],
) -> Result<(Forwarding, Vec<PendingMac>)> {
    let k = sw.at("forwarding");
    let fw = &f.value;
    match d.word::<ForwardingMode>(&fw.mode, &k.at("mode"))? {
        ForwardingMode::L2 => Ok((l2(d, &k, fw, ports)?, Vec::new())),
        ForwardingMode::L3 => l3(d, &k, fw, ports),
    }
}

fn port_index(d: &Diags, ports: &[PortConfig], v: &Val<String>, key: &Key) -> Result<u16> {
    match ports.iter().position(|p| p.name == v.value) {
        Some(i) => Ok(i as u16),
        None => d.error(
            line(v),
            key,
            format!(
                "unknown port `{}` (ports are {}…{})",
                v.value,
                ports[0].name,
                ports[ports.len() - 1].name
            ),
        ),
    }
}

fn l2(d: &Diags, k: &Key, fw: &ForwardingRaw, ports: &[PortConfig]) -> Result<Forwarding> {
    if let Some(routes) = &fw.routes {
        return d.error(
            routes.first().and_then(line),
            &k.at("routes"),
            "routes belong to mode: l3",
        );
    }
    let mut static_fdb = Vec::new();
    for (i, e) in fw.fdb.iter().flatten().enumerate() {
        let kk = k.at("fdb").index(i);
        let mac = d.mac(&e.value.mac, &kk.at("mac"))?;
        let port = port_index(d, ports, &e.value.port, &kk.at("port"))?;
        let vid = e.value.vlan.as_ref().map_or(0, |v| v.value);
        if vid > 4095 {
            return d.error(
                e.value.vlan.as_ref().and_then(line),
                &kk.at("vlan"),
                format!("VLAN {vid} is outside 0–4095"),
            );
        }
        static_fdb.push((vid, mac.0, port));
    }
    Ok(Forwarding::L2 {
        static_fdb,
        fdb_size: fw
            .fdb_size
            .as_ref()
            .map_or(Forwarding::DEFAULT_FDB_SIZE, |v| v.value as usize),
        fdb_aging: d
            .opt_unit(&fw.fdb_aging, &k.at("fdb_aging"))?
            .unwrap_or(Forwarding::DEFAULT_FDB_AGING),
    })
}

/// A next hop's MAC, or a placeholder and a pending entry when `mac:` is left out.
fn hop_mac(
    d: &Diags,
    mac: &Option<Val<String>>,
    at: Option<u64>,
    key: &Key,
    hop: HopAt,
    port: u16,
    pending: &mut Vec<PendingMac>,
) -> Result<[u8; 6]> {
    match mac {
        Some(m) => Ok(d.mac(m, &key.at("mac"))?.0),
        None => {
            pending.push(PendingMac {
                hop,
                port: port as usize,
                error: d.later(
                    at,
                    &key.at("mac"),
                    "not given, and nothing this file describes is cabled to the port to take \
                     it from (lossless tap always needs it)",
                ),
            });
            Ok([0; 6])
        }
    }
}

/// The flowlet settings of group `kk`: its keys, defaulted (a warning when given to a
/// group of another mode).
fn flowlet(d: &Diags, kk: &Key, g: &GroupRaw, mode: GroupMode) -> Result<Option<FlowletConfig>> {
    if mode != GroupMode::Flowlet {
        let given = [
            ("idle_time", g.idle_time.as_ref().and_then(line)),
            ("max_flows", g.max_flows.as_ref().and_then(line)),
            (
                "sampling_interval",
                g.sampling_interval.as_ref().and_then(line),
            ),
        ];
        let present = [
            g.idle_time.is_some(),
            g.max_flows.is_some(),
            g.sampling_interval.is_some(),
        ];
        // A warning, not an error: a lab switches `mode` and keeps its flowlet settings.
        for ((key, at), _) in given.iter().zip(present).filter(|(_, p)| *p) {
            d.warn(
                *at,
                &kk.at(key),
                format!(
                    "acts only in mode: flowlet; this group is {}, so it has no effect",
                    mode.word()
                ),
            );
        }
        return Ok(None);
    }
    let idle_time = d
        .opt_unit(&g.idle_time, &kk.at("idle_time"))?
        .unwrap_or(FlowletConfig::default().idle_time);
    let sampling_interval: Time = d
        .opt_unit(&g.sampling_interval, &kk.at("sampling_interval"))?
        .unwrap_or(FlowletConfig::default().sampling_interval);
    if sampling_interval == Time::ZERO {
        return d.error(
            g.sampling_interval.as_ref().and_then(line),
            &kk.at("sampling_interval"),
            "must be above 0, such as 16us",
        );
    }
    let max_flows = match &g.max_flows {
        None => FlowletConfig::default().max_flows,
        Some(v) if v.value >= 1 && v.value <= 1 << 20 => v.value as u32,
        Some(v) => {
            return d.error(
                line(v),
                &kk.at("max_flows"),
                format!("{} is outside 1–1048576", v.value),
            )
        }
    };
    Ok(Some(FlowletConfig {
        idle_time,
        max_flows,
        sampling_interval,
    }))
}

fn l3(
    d: &Diags,
    k: &Key,
    fw: &ForwardingRaw,
    ports: &[PortConfig],
) -> Result<(Forwarding, Vec<PendingMac>)> {
    let mut pending = Vec::new();
    let mut groups = Vec::new();
    for (gi, (name, g)) in fw.groups.iter().flatten().enumerate() {
        let kk = k.at("groups").at(name);
        let mode = match &g.value.mode {
            None => GroupMode::default(),
            Some(m) => d.word::<GroupMode>(m, &kk.at("mode"))?,
        };
        if g.value.members.is_empty() {
            return d.error(
                line(g),
                &kk.at("members"),
                "a group needs at least one member",
            );
        }
        let flowlet = flowlet(d, &kk, &g.value, mode)?;
        let mut members = Vec::new();
        for (i, m) in g.value.members.iter().enumerate() {
            let km = kk.at("members").index(i);
            let port = port_index(d, ports, &m.value.port, &km.at("port"))?;
            let hop = HopAt::Member {
                group: gi,
                member: i,
            };
            let mac = hop_mac(d, &m.value.mac, line(m), &km, hop, port, &mut pending)?;
            members.push(NextHop { port, mac });
        }
        groups.push(Group {
            name: name.clone(),
            mode,
            members,
            flowlet,
        });
    }
    let names: Vec<&str> = groups.iter().map(|g| g.name.as_str()).collect();
    let mut routes = Vec::new();
    for (i, rt) in fw.routes.iter().flatten().enumerate() {
        let kk = k.at("routes").index(i);
        let (prefix, len) = prefix(d, &rt.value.prefix, &kk.at("prefix"))?;
        let target = match (&rt.value.group, &rt.value.port, &rt.value.mac) {
            (Some(g), None, None) => match names.iter().position(|n| *n == g.value) {
                Some(i) => RouteTarget::Group(i as u16),
                None => {
                    return d.error(
                        line(g),
                        &kk.at("group"),
                        format!(
                            "unknown group `{}` (defined: {})",
                            g.value,
                            list_or_none(&names)
                        ),
                    )
                }
            },
            (None, Some(p), mac) => {
                let port = port_index(d, ports, p, &kk.at("port"))?;
                let mac = hop_mac(d, mac, line(rt), &kk, HopAt::Route(i), port, &mut pending)?;
                RouteTarget::NextHop(NextHop { port, mac })
            }
            _ => {
                return d.error(
                    line(rt),
                    &kk,
                    "a route needs `group`, or `port` (and the next hop's `mac`)",
                )
            }
        };
        routes.push(Route {
            prefix,
            len,
            target,
        });
    }
    Ok((Forwarding::L3 { routes, groups }, pending))
}

/// `198.18.1.0/24` or an IPv6 prefix, as (128-bit key, length over 128 bits).
fn prefix(d: &Diags, v: &Val<String>, key: &Key) -> Result<(u128, u8)> {
    let parsed = v.value.split_once('/').and_then(|(addr, len)| {
        let len = len.parse::<u8>().ok()?;
        if let Ok(a) = addr.parse::<std::net::Ipv4Addr>() {
            return (len <= 32).then(|| (v4_key(a.octets()), 96 + len));
        }
        let a = addr.parse::<std::net::Ipv6Addr>().ok()?;
        (len <= 128).then(|| (u128::from(a), len))
    });
    match parsed {
        Some(p) => Ok(p),
        None => d.error(
            line(v),
            key,
            format!(
                "`{}` is not a prefix such as 198.18.1.0/24 or 2001:db8::/32",
                v.value
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use lossless_buffer_model::Time;
    use lossless_pipeline::config::{Forwarding, GroupMode, RouteTarget};

    fn fwd(f: &str) -> Result<Forwarding, crate::config::ConfigError> {
        let text =
            format!("switches:\n  - name: s\n    ports: {{count: 3}}\n    forwarding: {f}\n");
        parse("f.yaml", "f", &text).map(|l| l.scenario.switches[0].config.forwarding.clone())
    }

    #[test]
    fn l3_routes_reach_groups_and_next_hops() {
        let f = fwd("{mode: l3, groups: {up: {mode: per_packet, members: [{port: Ethernet1, mac: \"02:00:00:00:00:01\"}]}}, routes: [{prefix: 198.18.1.0/24, group: up}, {prefix: \"2001:db8::/32\", port: Ethernet2, mac: \"02:00:00:00:00:02\"}]}").unwrap();
        let Forwarding::L3 { routes, groups } = f else {
            panic!("l3")
        };
        assert_eq!(groups[0].mode, GroupMode::PerPacket);
        assert_eq!(
            (routes[0].len, routes[0].target),
            (120, RouteTarget::Group(0))
        );
        assert_eq!(routes[1].len, 32);
    }

    #[test]
    fn flowlet_groups_default_to_sai_ars_values() {
        let f = fwd("{mode: l3, groups: {up: {mode: flowlet, idle_time: 20us, members: [{port: Ethernet1, mac: \"02:00:00:00:00:01\"}]}}}").unwrap();
        let Forwarding::L3 { groups, .. } = f else {
            panic!("l3")
        };
        let fl = groups[0].flowlet.unwrap();
        assert_eq!(groups[0].mode, GroupMode::Flowlet);
        assert_eq!(fl.idle_time, Time::from_us(20));
        assert_eq!(fl.max_flows, 512);
        assert_eq!(fl.sampling_interval, Time::from_us(16));
    }

    #[test]
    fn flowlet_keys_on_another_mode_warn() {
        let text = "switches:\n  - name: s\n    ports: {count: 3}\n    forwarding: {mode: l3, groups: {g: {mode: hash, idle_time: 1us, members: [{port: Ethernet1, mac: \"02:00:00:00:00:01\"}]}}}\n";
        let l = parse("f.yaml", "f", text).unwrap();
        assert!(l.warnings.iter().any(|w| w.to_string().contains(
            "s.forwarding.groups.g.idle_time: acts only in mode: flowlet; this group is hash"
        )));
    }

    #[test]
    fn a_missing_mac_is_left_to_the_cabling() {
        let text = "switches:\n  - name: s\n    ports: {count: 3}\n    forwarding: {mode: l3, routes: [{prefix: 10.0.0.0/8, port: Ethernet1}]}\n";
        let l = parse("f.yaml", "f", text).unwrap();
        let p = &l.scenario.switches[0].pending_macs;
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].port, 1);
        assert!(p[0]
            .error
            .to_string()
            .starts_with("f.yaml:4: s.forwarding.routes[0].mac: not given"));
    }

    #[test]
    fn each_rule_names_its_key() {
        for (f, expect) in [
            ("{mode: l4}", "s.forwarding.mode: `l4`: expected l2 or l3"),
            ("{mode: l2, fdb: [{mac: \"02:00:00:00:00:01\", port: Ethernet9}]}", "s.forwarding.fdb[0].port: unknown port `Ethernet9` (ports are Ethernet0…Ethernet2)"),
            ("{mode: l3, routes: [{prefix: 10.0.0.0/33, group: g}]}", "s.forwarding.routes[0].prefix: `10.0.0.0/33` is not a prefix"),
            ("{mode: l3, groups: {g: {mode: flowlet, members: []}}}", "s.forwarding.groups.g.members: a group needs at least one member"),
            ("{mode: l3, groups: {g: {mode: flowlet, max_flows: 0, members: [{port: Ethernet1}]}}}", "s.forwarding.groups.g.max_flows: 0 is outside 1–1048576"),
            ("{mode: l3, groups: {g: {mode: flowlet, sampling_interval: 0us, members: [{port: Ethernet1}]}}}", "s.forwarding.groups.g.sampling_interval: must be above 0"),
            ("{mode: l3, routes: [{prefix: 10.0.0.0/8}]}", "s.forwarding.routes[0]: a route needs `group`, or `port`"),
        ] {
            let e = fwd(f).unwrap_err().to_string();
            assert!(e.contains(expect), "{e}");
        }
    }
}
