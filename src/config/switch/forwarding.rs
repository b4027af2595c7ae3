//! `forwarding:` of a switch: L2 (static FDB entries, learning limits and aging) or L3
//! (routes to next hops or to groups of them).

use crate::config::defaults;
use crate::config::diag::{Diag, Diags, Key};
use crate::config::schema::{ForwardingRaw, Val};
use crate::config::values::{line, list_or_none};
use crate::config::words::ForwardingMode;
use lossless_pipeline::config::{
    v4_key, Forwarding, Group, GroupMode, NextHop, PortConfig, Route, RouteTarget,
};

type Result<T> = std::result::Result<T, Diag>;

/// L2 forwarding with nothing configured.
pub fn default_l2() -> Forwarding {
    Forwarding::L2 {
        static_fdb: Vec::new(),
        fdb_size: defaults::FDB_SIZE,
        fdb_aging: defaults::FDB_AGING,
    }
}

/// The forwarding of switch `sw` over its `ports`.
pub fn resolve(
    d: &Diags,
    sw: &Key,
    f: &Val<ForwardingRaw>,
    ports: &[PortConfig],
) -> Result<Forwarding> {
    let k = sw.at("forwarding");
    let fw = &f.value;
    match d.word::<ForwardingMode>(&fw.mode, &k.at("mode"))? {
        ForwardingMode::L2 => l2(d, &k, fw, ports),
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
            .map_or(defaults::FDB_SIZE, |v| v.value as usize),
        fdb_aging: d
            .opt_unit(&fw.fdb_aging, &k.at("fdb_aging"))?
            .unwrap_or(defaults::FDB_AGING),
    })
}

fn l3(d: &Diags, k: &Key, fw: &ForwardingRaw, ports: &[PortConfig]) -> Result<Forwarding> {
    let mut groups = Vec::new();
    for (name, g) in fw.groups.iter().flatten() {
        let kk = k.at("groups").at(name);
        let mode = match &g.value.mode {
            None => defaults::GROUP_MODE,
            Some(m) if m.value == "flowlet" => {
                return d.error(
                    line(m),
                    &kk.at("mode"),
                    "flowlet groups (dynamic load balancing) are not built yet; use hash",
                )
            }
            Some(m) => d.word::<GroupMode>(m, &kk.at("mode"))?,
        };
        if g.value.members.is_empty() {
            return d.error(
                line(g),
                &kk.at("members"),
                "a group needs at least one member",
            );
        }
        let mut members = Vec::new();
        for (i, m) in g.value.members.iter().enumerate() {
            let km = kk.at("members").index(i);
            members.push(NextHop {
                port: port_index(d, ports, &m.value.port, &km.at("port"))?,
                mac: d.mac(&m.value.mac, &km.at("mac"))?.0,
            });
        }
        groups.push(Group {
            name: name.clone(),
            mode,
            members,
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
            (None, Some(p), Some(m)) => RouteTarget::NextHop(NextHop {
                port: port_index(d, ports, p, &kk.at("port"))?,
                mac: d.mac(m, &kk.at("mac"))?.0,
            }),
            _ => return d.error(line(rt), &kk, "a route needs `group`, or `port` and `mac`"),
        };
        routes.push(Route {
            prefix,
            len,
            target,
        });
    }
    Ok(Forwarding::L3 { routes, groups })
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
    fn each_rule_names_its_key() {
        for (f, expect) in [
            ("{mode: l4}", "s.forwarding.mode: `l4`: expected l2 or l3"),
            ("{mode: l2, fdb: [{mac: \"02:00:00:00:00:01\", port: Ethernet9}]}", "s.forwarding.fdb[0].port: unknown port `Ethernet9` (ports are Ethernet0…Ethernet2)"),
            ("{mode: l3, routes: [{prefix: 10.0.0.0/33, group: g}]}", "s.forwarding.routes[0].prefix: `10.0.0.0/33` is not a prefix"),
            ("{mode: l3, groups: {g: {mode: flowlet, members: []}}}", "s.forwarding.groups.g.mode: flowlet groups (dynamic load balancing) are not built yet"),
        ] {
            let e = fwd(f).unwrap_err().to_string();
            assert!(e.contains(expect), "{e}");
        }
    }
}
