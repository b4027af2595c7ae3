//! What `lossless run` adds around the switches — hosts, links, flows, events, outputs and
//! the measurement window — resolved against them: names become indices, addresses are
//! assigned, a flow's priority is the class its switch will give it.

pub mod collectives;
pub mod events;
pub mod flows;
pub mod hosts;
pub mod neighbors;
pub mod outputs;
pub mod tcp;

use super::defaults;
use super::diag::{Diag, Diags, Key};
use super::scenario::{LinkSpec, PortRef, RunSpec, SwitchSpec};
use super::schema::{LinkRaw, ScenarioFile, Val};
use super::values::line;
use lossless_buffer_model::{Length, Named, Time};
use lossless_pipeline::config::FlowControl;

type Result<T> = std::result::Result<T, Diag>;

/// The switches' ports as a patch panel: `switch:Port` names to ports, and what is cabled
/// to each (a port takes one host or one link).
pub struct PatchPanel<'a> {
    /// Diagnostics.
    pub d: &'a Diags<'a>,
    /// The switches.
    pub switches: &'a [SwitchSpec],
    cabled: Vec<(PortRef, String)>,
}

impl<'a> PatchPanel<'a> {
    /// `switch:Port` → the port.
    pub fn port_ref(&self, v: &Val<String>, key: &Key) -> Result<PortRef> {
        let Some((sw, port)) = v.value.split_once(':') else {
            return self.d.error(
                line(v),
                key,
                format!(
                    "`{}` is not a port reference such as tor:Ethernet0",
                    v.value
                ),
            );
        };
        let Some(si) = self.switches.iter().position(|s| s.config.name == sw) else {
            let names: Vec<_> = self
                .switches
                .iter()
                .map(|s| s.config.name.as_str())
                .collect();
            return self.d.error(
                line(v),
                key,
                format!("unknown switch `{sw}` (switches: {})", names.join(", ")),
            );
        };
        let ports = &self.switches[si].config.ports;
        match ports.iter().position(|p| p.name == port) {
            Some(pi) => Ok(PortRef {
                switch: si,
                port: pi,
            }),
            None => self.d.error(
                line(v),
                key,
                format!(
                    "switch `{sw}` has no port `{port}` (ports {}…{})",
                    ports[0].name,
                    ports[ports.len() - 1].name
                ),
            ),
        }
    }

    /// Cable `by` to port `p`, which must be free.
    fn claim(&mut self, p: PortRef, by: String, at: Option<u64>, key: &Key) -> Result<()> {
        if let Some((_, other)) = self.cabled.iter().find(|(q, _)| *q == p) {
            let sw = &self.switches[p.switch].config;
            return self.d.error(
                at,
                key,
                format!(
                    "port {}:{} is already cabled to {other}",
                    sw.name, sw.ports[p.port].name
                ),
            );
        }
        self.cabled.push((p, by));
        Ok(())
    }
}

/// Hosts, links, flows, events, outputs and the window of a scenario whose file stem is
/// `stem` (default output names) and whose run lasts `duration`.
pub fn resolve(
    d: &Diags,
    stem: &str,
    raw: &ScenarioFile,
    switches: &[SwitchSpec],
    duration: Option<Time>,
) -> Result<RunSpec> {
    let mut cx = PatchPanel {
        d,
        switches,
        cabled: Vec::new(),
    };
    let mut run = RunSpec {
        deadlock_time: d
            .opt_unit(&raw.deadlock_time, &Key::root("deadlock_time"))?
            .unwrap_or(defaults::DEADLOCK_TIME),
        ..RunSpec::default()
    };
    if run.deadlock_time == Time::ZERO {
        return d.error(
            raw.deadlock_time.as_ref().and_then(line),
            &Key::root("deadlock_time"),
            "a cycle must stand for some time before it is a deadlock, such as 10ms",
        );
    }
    for (i, h) in raw.hosts.iter().flatten().enumerate() {
        let host = hosts::resolve(&cx, i, h, &run.hosts)?;
        let key = Key::root("hosts").index(i).at("attach");
        cx.claim(
            host.attach,
            format!("host {}", host.name),
            line(&h.value.attach),
            &key,
        )?;
        run.hosts.push(host);
    }
    for (i, l) in raw.links.iter().flatten().enumerate() {
        run.links.push(link(&mut cx, i, l)?);
    }
    for (i, f) in raw.flows.iter().flatten().enumerate() {
        run.flows.push(flows::resolve(&cx, i, f, &run.hosts)?);
    }
    for (i, c) in raw.collectives.iter().flatten().enumerate() {
        let c = collectives::resolve(&cx, i, c, &run.hosts, &mut run.flows)?;
        run.collectives.push(c);
    }
    for (i, e) in raw.events.iter().flatten().enumerate() {
        run.events
            .push(events::resolve(&cx, i, e, &run.hosts, duration)?);
    }
    run.events.sort_by_key(|e| e.at);
    if let Some(o) = &raw.outputs {
        run.outputs = outputs::resolve(&cx, stem, o, &run.hosts, duration)?;
    }
    if let Some(m) = &raw.measure {
        run.measure = outputs::measure(d, m, duration)?;
    }
    Ok(run)
}

/// A switch-to-switch link: both ends free and of one speed.
fn link(cx: &mut PatchPanel, i: usize, l: &Val<LinkRaw>) -> Result<LinkSpec> {
    let k = Key::root("links").index(i);
    let d = cx.d;
    let a = cx.port_ref(&l.value.a, &k.at("a"))?;
    let b = cx.port_ref(&l.value.b, &k.at("b"))?;
    cx.claim(
        a,
        format!("link {}", l.value.b.value),
        line(&l.value.a),
        &k.at("a"),
    )?;
    cx.claim(
        b,
        format!("link {}", l.value.a.value),
        line(&l.value.b),
        &k.at("b"),
    )?;
    let pa = &cx.switches[a.switch].config.ports[a.port];
    let pb = &cx.switches[b.switch].config.ports[b.port];
    if pa.speed != pb.speed {
        return d.error(
            line(l),
            &k,
            format!(
                "{} runs at {} but {} at {}: both ends of a link have one speed",
                l.value.a.value, pa.speed, l.value.b.value, pb.speed
            ),
        );
    }
    let (sa, sb) = (&cx.switches[a.switch].config, &cx.switches[b.switch].config);
    let (fa, fb) = (sa.flow_control_of(a.port), sb.flow_control_of(b.port));
    if (fa == FlowControl::Cbfc) != (fb == FlowControl::Cbfc) {
        return d.error(
            line(l),
            &k,
            format!(
                "{} speaks {} but {} {}: a CBFC sender starts nothing on a credited VC until its peer gives credits, so both ends of a link speak cbfc or neither",
                l.value.a.value,
                fa.word(),
                l.value.b.value,
                fb.word()
            ),
        );
    }
    if fa == FlowControl::Cbfc {
        let (ca, cb) = (&pa.cbfc, &pb.cbfc);
        if (ca.credit_size, ca.overhead, ca.credited) != (cb.credit_size, cb.overhead, cb.credited)
        {
            return d.error(
                line(l),
                &k,
                format!(
                    "the ends' CBFC differs (credit size {} B / {} B, overhead {} / {}, credited VCs {:#x} / {:#x}): both ends cost frames alike and credit the same VCs",
                    ca.credit_size, cb.credit_size, ca.overhead, cb.overhead, ca.credited, cb.credited
                ),
            );
        }
    }
    if pa.llr.is_some() != pb.llr.is_some() {
        return d.error(
            line(l),
            &k,
            format!(
                "{} {} link-level retry but {} {}: a receiver without LLR neither acknowledges frames nor asks for replays, so both ends of a link speak llr or neither",
                l.value.a.value,
                if pa.llr.is_some() { "speaks" } else { "does not speak" },
                l.value.b.value,
                if pb.llr.is_some() { "does" } else { "does not" },
            ),
        );
    }
    let cable: Option<Length> = d.opt_unit(&l.value.cable, &k.at("cable"))?;
    let delay: Option<Time> = d.opt_unit(&l.value.delay, &k.at("delay"))?;
    let propagation = match (cable, delay) {
        (Some(_), Some(_)) => return d.error(line(l), &k, "give `cable` or `delay`, not both"),
        (Some(c), None) => c.propagation(),
        (None, Some(t)) => t,
        (None, None) if pa.propagation() != pb.propagation() => {
            return d.error(
                line(l),
                &k,
                format!(
                    "{} is {} one way and {} {}: give the link's `cable` (or `delay`)",
                    l.value.a.value,
                    pa.propagation(),
                    l.value.b.value,
                    pb.propagation()
                ),
            )
        }
        (None, None) => pa.propagation(),
    };
    let frame_error_rate = d.error_rate(&l.value.frame_error_rate, &k.at("frame_error_rate"))?;
    Ok(LinkSpec {
        a,
        b,
        propagation,
        cable,
        delay,
        frame_error_rate,
    })
}

#[cfg(test)]
mod tests {
    use crate::config::parse;

    const SW: &str =
        "switches:\n  - name: a\n    ports: {count: 2}\n  - name: b\n    ports: {count: 2}\n";

    #[test]
    fn links_join_free_ports_of_one_speed() {
        let l = parse(
            "f.yaml",
            "f",
            &format!("{SW}links:\n  - {{a: a:Ethernet1, b: b:Ethernet0, cable: 10m}}\n"),
        )
        .unwrap();
        let link = l.scenario.run.links[0];
        assert_eq!((link.a.switch, link.a.port, link.b.switch), (0, 1, 1));
        assert_eq!(link.propagation, lossless_buffer_model::Time::from_ns(50));
        let e = parse(
            "f.yaml",
            "f",
            &format!("{SW}hosts:\n  - {{name: h, attach: a:Ethernet1}}\nlinks:\n  - {{a: a:Ethernet1, b: b:Ethernet0}}\n"),
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("links[0].a: port a:Ethernet1 is already cabled to host h"),
            "{e}"
        );
        let e = parse(
            "f.yaml",
            "f",
            &format!("{SW}links:\n  - {{a: a:Ethernet9, b: b:Ethernet0}}\n"),
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("switch `a` has no port `Ethernet9` (ports Ethernet0…Ethernet1)"),
            "{e}"
        );
    }

    #[test]
    fn a_links_cable_is_its_ports_cable_and_sizes_their_headroom() {
        let l = parse(
            "f.yaml",
            "f",
            &format!("{SW}links:\n  - {{a: a:Ethernet1, b: b:Ethernet0, cable: 100m}}\n"),
        )
        .unwrap();
        let sw = &l.scenario.switches;
        let prop = lossless_buffer_model::Time::from_ns(500);
        assert_eq!(sw[0].config.ports[1].propagation(), prop);
        assert_eq!(sw[1].config.ports[0].propagation(), prop);
        assert_eq!(sw[0].config.ports[0].propagation().as_ps(), 10_000, "2 m");
        // The default plan sizes each port's lossless headroom for its cable: more at 100 m.
        let headroom = |s: &crate::config::SwitchSpec| {
            s.config
                .pg_profiles
                .iter()
                .filter_map(|p| p.headroom.map(|h| h.xoff))
                .max()
                .unwrap()
        };
        let short = parse("f.yaml", "f", SW).unwrap();
        assert!(headroom(&sw[0]) > headroom(&short.scenario.switches[0]));
        // Without a cable on the link its ends must agree.
        let e = parse(
            "f.yaml",
            "f",
            "switches:\n  - name: a\n    ports: {count: 2, cable: 30m}\n  - name: b\n    ports: {count: 2}\nlinks:\n  - {a: a:Ethernet1, b: b:Ethernet0}\n",
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("links[0]: a:Ethernet1 is 150ns one way and b:Ethernet0 10ns: give the link's `cable`"),
            "{e}"
        );
    }

    #[test]
    fn deadlock_time_defaults_to_10ms_and_is_above_zero() {
        let l = parse("f.yaml", "f", SW).unwrap();
        assert_eq!(
            l.scenario.run.deadlock_time,
            lossless_buffer_model::Time::from_ms(10)
        );
        let l = parse("f.yaml", "f", &format!("deadlock_time: 2ms\n{SW}")).unwrap();
        assert_eq!(
            l.scenario.run.deadlock_time,
            lossless_buffer_model::Time::from_ms(2)
        );
        let e = parse("f.yaml", "f", &format!("deadlock_time: 0s\n{SW}")).unwrap_err();
        assert!(
            e.to_string()
                .contains("f.yaml:1: deadlock_time: a cycle must stand"),
            "{e}"
        );
    }
}
