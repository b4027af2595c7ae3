//! `ports:` of a switch, in either form — `{count, speed, cable, mtu, tap_prefix}` for
//! uniform ports or a list of `{name, tap | iface | link, speed, cable, delay, mtu}` — resolved
//! by one loop: the uniform form is first spelled out as a list.

use crate::config::diag::{Diag, Diags, Key};
use crate::config::scenario::Attach;
use crate::config::schema::{PortsRaw, Scalar, Val};
use crate::config::values::line;
use lossless_buffer_model::{Bytes, Length, Rate, Time};
use lossless_pipeline::config::PortConfig;
use lossless_pipeline::wire::addr::MacAddr;

type Result<T> = std::result::Result<T, Diag>;

/// Most ports a switch may have (Tomahawk 5 runs 256).
pub const MAX_PORTS: usize = lossless_pipeline::PortSet::MAX;

/// One port as written (shared fields of the uniform form appear in every port).
struct Draft<'a> {
    key: Key,
    line: Option<u64>,
    name: Option<&'a Val<String>>,
    tap: Option<String>,
    iface: Option<&'a Val<String>>,
    link: Option<&'a Val<String>>,
    speed: &'a Option<Val<Scalar>>,
    cable: &'a Option<Val<Scalar>>,
    delay: &'a Option<Val<Scalar>>,
    mtu: &'a Option<Val<Scalar>>,
    flow_control: Option<&'a Val<String>>,
}

/// Spell out `p` as one draft per port.
fn drafts<'a>(d: &Diags, key: &Key, p: &'a Val<PortsRaw>) -> Result<Vec<Draft<'a>>> {
    let n = match &p.value {
        PortsRaw::Uniform(u) => u.count.value as usize,
        PortsRaw::List(list) => list.len(),
    };
    if n == 0 || n > MAX_PORTS {
        let (at, k) = match &p.value {
            PortsRaw::Uniform(u) => (line(&u.count), key.at("count")),
            PortsRaw::List(_) => (line(p), key.clone()),
        };
        return d.error(at, &k, format!("{n} ports: a switch has 1–{MAX_PORTS}"));
    }
    Ok(match &p.value {
        PortsRaw::Uniform(u) => (0..n)
            .map(|i| Draft {
                key: key.clone(),
                line: line(&u.count),
                name: None,
                tap: u.tap_prefix.as_ref().map(|t| format!("{}{i}", t.value)),
                iface: None,
                link: None,
                speed: &u.speed,
                cable: &u.cable,
                delay: &u.delay,
                mtu: &u.mtu,
                flow_control: None,
            })
            .collect(),
        PortsRaw::List(list) => list
            .iter()
            .enumerate()
            .map(|(i, e)| Draft {
                key: key.index(i),
                line: line(e),
                name: e.value.name.as_ref(),
                tap: e.value.tap.as_ref().map(|t| t.value.clone()),
                iface: e.value.iface.as_ref(),
                link: e.value.link.as_ref(),
                speed: &e.value.speed,
                cable: &e.value.cable,
                delay: &e.value.delay,
                mtu: &e.value.mtu,
                flow_control: e.value.flow_control.as_ref(),
            })
            .collect(),
    })
}

/// The ports of switch `sw` (MACs from `base_mac` + index) and the devices `lossless tap`
/// serves them with.
pub fn resolve(
    d: &Diags,
    sw: &Key,
    p: &Val<PortsRaw>,
    base_mac: MacAddr,
) -> Result<(Vec<PortConfig>, Vec<Option<Attach>>)> {
    let key = sw.at("ports");
    let mut ports: Vec<PortConfig> = Vec::new();
    let mut attach: Vec<Option<Attach>> = Vec::new();
    for (i, dr) in drafts(d, &key, p)?.into_iter().enumerate() {
        let name = dr
            .name
            .map_or_else(|| format!("Ethernet{i}"), |n| n.value.clone());
        if ports.iter().any(|p| p.name == name) {
            return d.error(
                dr.line,
                &dr.key.at("name"),
                format!("port name `{name}` is used twice"),
            );
        }
        let speed: Rate = d
            .opt_unit(dr.speed, &dr.key.at("speed"))?
            .unwrap_or(PortConfig::default().speed);
        let cable: Length = d
            .opt_unit(dr.cable, &dr.key.at("cable"))?
            .unwrap_or(PortConfig::default().cable);
        let delay: Option<Time> = d.opt_unit(dr.delay, &dr.key.at("delay"))?;
        if dr.cable.is_some() && delay.is_some() {
            return d.error(dr.line, &dr.key, "give `cable` or `delay`, not both");
        }
        let mtu = mtu(d, dr.mtu, &dr.key.at("mtu"))?;
        let Some(mac) = base_mac.offset(i) else {
            return d.error(
                line(p),
                &sw.at("mac"),
                format!("base MAC + port {i} runs past ff:ff:ff:ff:ff:ff"),
            );
        };
        let flow_control = match dr.flow_control {
            Some(v) => Some(d.word(v, &dr.key.at("flow_control"))?),
            None => None,
        };
        ports.push(PortConfig {
            name,
            speed,
            cable,
            delay,
            mtu,
            mac: mac.0,
            flow_control,
            ..PortConfig::default()
        });
        let dev = device(d, &dr)?;
        if let Some(a) = dev
            .as_ref()
            .filter(|a| attach.iter().flatten().any(|b| b.name() == a.name()))
        {
            return d.error(
                dr.line,
                &dr.key.at(a.kind()),
                format!("device `{}` serves two ports", a.name()),
            );
        }
        attach.push(dev);
    }
    Ok((ports, attach))
}

/// The port's device: a TAP to create or an interface to attach to, named as Linux
/// allows (1–15 bytes, no '/', no spaces).
fn device(d: &Diags, dr: &Draft) -> Result<Option<Attach>> {
    let dev = match (&dr.tap, dr.iface, dr.link) {
        (Some(t), None, None) => Attach::Tap(t.clone()),
        (None, Some(i), None) => Attach::Iface(i.value.clone()),
        (None, None, Some(l)) => Attach::Link(l.value.clone()),
        (None, None, None) => return Ok(None),
        _ => {
            return d.error(
                dr.line,
                &dr.key,
                "give one of `tap` (a TAP to create), `iface` (an interface that exists, a host behind it) or `link` (an interface that exists, another lossless switch behind it)",
            );
        }
    };
    let n = dev.name();
    if n.is_empty() || n.len() > 15 || n.contains(['/', '\0']) || n.chars().any(char::is_whitespace)
    {
        let at = dr.iface.or(dr.link).map_or(dr.line, line);
        return d.error(
            at,
            &dr.key.at(dev.kind()),
            format!("`{n}` is not an interface name: Linux allows 1–15 bytes, no '/', no spaces"),
        );
    }
    Ok(Some(dev))
}

/// The largest frame, FCS included: 64–16383 bytes.
fn mtu(d: &Diags, v: &Option<Val<Scalar>>, key: &Key) -> Result<u32> {
    let Some(v) = v else {
        return Ok(PortConfig::default().mtu);
    };
    let b: Bytes = d.unit(v, key)?;
    if !(64..=16_383).contains(&b.get()) {
        return d.error(
            line(v),
            key,
            format!(
                "{} bytes is outside 64–16383 (largest frame, FCS included)",
                b.get()
            ),
        );
    }
    Ok(b.get() as u32)
}

#[cfg(test)]
mod tests {
    use crate::config::{parse, Attach};

    fn switch(ports: &str) -> String {
        format!("switches:\n  - name: s\n    ports: {ports}\n")
    }

    #[test]
    fn both_forms_give_the_same_ports() {
        let u = parse(
            "f.yaml",
            "f",
            &switch("{count: 2, speed: 25G, cable: 30m, tap_prefix: ll}"),
        )
        .unwrap();
        let l = parse(
            "f.yaml",
            "f",
            &switch("[{tap: ll0, speed: 25G, cable: 30m}, {tap: ll1, speed: 25G, cable: 30m}]"),
        )
        .unwrap();
        let (a, b) = (&u.scenario.switches[0], &l.scenario.switches[0]);
        assert_eq!(a.config.ports, b.config.ports);
        assert_eq!(a.attach, b.attach);
        let m = parse("f.yaml", "f", &switch("[{iface: eth1}, {tap: ll1}, {}]")).unwrap();
        assert_eq!(
            m.scenario.switches[0].attach,
            [
                Some(Attach::Iface("eth1".into())),
                Some(Attach::Tap("ll1".into())),
                None
            ]
        );
        assert_eq!(a.config.ports[1].mac, [0x02, 0x4C, 0x4C, 0, 0, 1]);
    }

    #[test]
    fn each_rule_names_its_key() {
        for (ports, expect) in [
            (
                "{count: 0}",
                "f.yaml:3: s.ports.count: 0 ports: a switch has 1–256",
            ),
            (
                "{count: 2, mtu: 20000}",
                "f.yaml:3: s.ports.mtu: 20000 bytes is outside 64–16383",
            ),
            (
                "[{name: a}, {name: a}]",
                "f.yaml:3: s.ports[1].name: port name `a` is used twice",
            ),
            (
                "[{cable: 2m, delay: 1us}]",
                "f.yaml:3: s.ports[0]: give `cable` or `delay`, not both",
            ),
            (
                "[{tap: ll0, iface: eth1}]",
                "f.yaml:3: s.ports[0]: give one of `tap` (a TAP to create), `iface` (an interface that exists, a host behind it) or `link`",
            ),
            (
                "[{iface: eth1}, {iface: eth1}]",
                "f.yaml:3: s.ports[1].iface: device `eth1` serves two ports",
            ),
            (
                "[{iface: eth1}, {tap: eth1}]",
                "f.yaml:3: s.ports[1].tap: device `eth1` serves two ports",
            ),
            (
                "[{iface: eth1}, {link: eth1}]",
                "f.yaml:3: s.ports[1].link: device `eth1` serves two ports",
            ),
            (
                "[{link: a-name-too-long-x}]",
                "f.yaml:3: s.ports[0].link: `a-name-too-long-x` is not an interface name",
            ),
            (
                "[{iface: a-name-too-long-x}]",
                "f.yaml:3: s.ports[0].iface: `a-name-too-long-x` is not an interface name",
            ),
            (
                "[{tap: \"a/b\"}]",
                "f.yaml:3: s.ports[0].tap: `a/b` is not an interface name",
            ),
        ] {
            let e = parse("f.yaml", "f", &switch(ports))
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(expect), "{e}");
        }
    }
}
