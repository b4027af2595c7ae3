//! `events:`: what happens at a virtual time — a transmitter disabled or enabled, a link
//! down or up, a frame injected as if just received (a PFC frame, or any bytes in hex), a
//! host's receive drain changed (a receiver that slows down or stops reading), chosen
//! frames a port sends lost on the wire or corrupted (the next N data frames, the Nth
//! NACK, …).

use super::PatchPanel;
use crate::config::diag::Diags;
use crate::config::diag::{Diag, Key};
use crate::config::scenario::{Action, EventSpec, Fault, FaultFate, HostSpec, Target};
use crate::config::schema::{EventRaw, FaultRaw, InjectRaw, Val};
use crate::config::values::line;
use crate::config::words::{FaultKind, LinkState, TxState};
use lossless_buffer_model::{Bytes, RateOrZero, Time};
use lossless_pipeline::wire::pfc::{emit_pfc, PFC_FRAME_LEN};

type Result<T> = std::result::Result<T, Diag>;

/// Source MAC of injected PFC frames: a locally administered one no host has.
const INJECTED_PFC_SOURCE: [u8; 6] = [0x02, 0xFE, 0, 0, 0, 1];

/// The `i`-th event; one at or after the end of a run of `duration` is a warning.
pub fn resolve(
    cx: &PatchPanel,
    i: usize,
    e: &Val<EventRaw>,
    hosts: &[HostSpec],
    duration: Option<Time>,
) -> Result<EventSpec> {
    let (d, k) = (cx.d, Key::root("events").index(i));
    let r = &e.value;
    let at: Time = d.unit(&r.at, &k.at("at"))?;
    let target = match hosts.iter().position(|h| h.name == r.port.value) {
        Some(h) => Target::Host(h),
        None => Target::Switch(cx.port_ref(&r.port, &k.at("port"))?),
    };
    let given = [
        r.tx.is_some(),
        r.link.is_some(),
        r.inject.is_some(),
        r.drain.is_some(),
        r.drop.is_some(),
        r.lose.is_some(),
        r.corrupt.is_some(),
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        return d.error(
            line(e),
            &k,
            "an event does exactly one of `tx`, `link`, `inject`, `drain`, `drop`, `lose` or `corrupt`",
        );
    }
    if let (Some(q), None) = (&r.queue, &r.tx) {
        return d.error(
            line(q),
            &k.at("queue"),
            "`queue` says which egress queue a `tx` event enables or disables: give `tx` too",
        );
    }
    let action = if let Some(n) = &r.drop {
        if n.value == 0 {
            return d.error(
                line(n),
                &k.at("drop"),
                "drops the next N data frames the port sends: N is 1 or more",
            );
        }
        Action::Fault(
            target,
            Fault {
                kind: FaultKind::Data,
                nth: 1,
                count: n.value,
                fate: FaultFate::Lost,
            },
        )
    } else if let Some(f) = &r.lose {
        Action::Fault(target, fault(d, &k.at("lose"), f, FaultFate::Lost)?)
    } else if let Some(f) = &r.corrupt {
        Action::Fault(target, fault(d, &k.at("corrupt"), f, FaultFate::Corrupted)?)
    } else if let Some(t) = &r.tx {
        let on = d.word::<TxState>(t, &k.at("tx"))? == TxState::Enable;
        match (&r.queue, target) {
            (None, _) => Action::Tx(target, on),
            (Some(q), Target::Switch(p)) => {
                let q = d.int_in(q, &k.at("queue"), 0, 7, "queue ")? as u8;
                Action::QueueTx(p, q, on)
            }
            (Some(q), Target::Host(_)) => {
                return d.error(
                    line(q),
                    &k.at("queue"),
                    "a host NIC has no egress queues to disable one by one: `queue` is for a switch port",
                )
            }
        }
    } else if let Some(l) = &r.link {
        Action::Link(
            target,
            d.word::<LinkState>(l, &k.at("link"))? == LinkState::Up,
        )
    } else if let Some(rate) = &r.drain {
        let host = match target {
            Target::Host(h) if hosts[h].nic.rx_buffer.is_some() => h,
            _ => {
                return d.error(
                    line(&r.port),
                    &k.at("port"),
                    "`drain` changes a host's receive drain: the port must be a host with \
                     `rx_buffer` and `drain`",
                )
            }
        };
        // 0 (a receiver that stopped reading) is a drain rate, though not a link speed.
        Action::Drain(host, d.unit::<RateOrZero>(rate, &k.at("drain"))?.0)
    } else {
        let (Target::Switch(port), Some(inj)) = (target, &r.inject) else {
            return d.error(
                line(&r.port),
                &k.at("port"),
                "frames are injected into switch ports",
            );
        };
        let (data, len) = inject(cx, &k, &inj.value, &r.port)?;
        Action::Inject(port, data, len)
    };
    if let Some(end) = duration.filter(|end| at >= *end) {
        d.warn(
            line(&r.at),
            &k.at("at"),
            format!("{at} is at or after the end of the run ({end}): the event never happens"),
        );
    }
    Ok(EventSpec { at, action })
}

/// `lose:` or `corrupt:` — which frames, from the nth of their kind, how many.
fn fault(d: &Diags, k: &Key, f: &Val<FaultRaw>, fate: FaultFate) -> Result<Fault> {
    let r = &f.value;
    let kind = d
        .opt_word(&r.frames, &k.at("frames"))?
        .unwrap_or(FaultKind::Data);
    let nth = match &r.nth {
        None => 1,
        Some(v) => d.int_in(v, &k.at("nth"), 1, i64::MAX, "the nth frame ")? as u64,
    };
    let count = match &r.count {
        None => 1,
        Some(v) => d.int_in(v, &k.at("count"), 1, i64::MAX, "frames in a row ")? as u64,
    };
    Ok(Fault {
        kind,
        nth,
        count,
        fate,
    })
}

/// `inject: {pfc: {priority: quanta}}` or `{hex: "…", len}`: the frame's bytes and length.
fn inject(cx: &PatchPanel, k: &Key, inj: &InjectRaw, port: &Val<String>) -> Result<(Vec<u8>, u32)> {
    let d = cx.d;
    let k = k.at("inject");
    match (&inj.pfc, &inj.hex) {
        (Some(pfc), None) => {
            let mut enable = 0u8;
            let mut quanta = [0u16; 8];
            for (p, q) in &pfc.value {
                let kp = k.at("pfc").at(p);
                let Ok(p) = p.parse::<usize>() else {
                    return d.error(line(q), &kp, "keys are priorities 0–7");
                };
                if p > 7 {
                    return d.error(line(q), &kp, format!("priority {p} is outside 0–7"));
                }
                if !(0..=65_535).contains(&q.value) {
                    return d.error(
                        line(q),
                        &kp,
                        format!("{} quanta: a pause time is 0–65535 quanta", q.value),
                    );
                }
                enable |= 1 << p;
                quanta[p] = q.value as u16;
            }
            let mut data = Vec::new();
            emit_pfc(&mut data, INJECTED_PFC_SOURCE, enable, &quanta);
            Ok((data, PFC_FRAME_LEN))
        }
        (None, Some(hex)) => {
            let clean: String = hex
                .value
                .chars()
                .filter(|c| !c.is_whitespace() && *c != ':')
                .collect();
            if !clean.len().is_multiple_of(2) || !clean.chars().all(|c| c.is_ascii_hexdigit()) {
                return d.error(line(hex), &k.at("hex"), "not an even number of hex digits");
            }
            let data: Vec<u8> = (0..clean.len())
                .step_by(2)
                .map(|j| u8::from_str_radix(&clean[j..j + 2], 16).expect("hex checked"))
                .collect();
            let len = match &inj.len {
                None => data.len() as u32 + 4,
                Some(v) => {
                    let b: Bytes = d.unit(v, &k.at("len"))?;
                    if b.get() < data.len() as u64 + 4 {
                        return d.error(
                            line(v),
                            &k.at("len"),
                            format!(
                                "{b} is shorter than the {} bytes given plus FCS",
                                data.len()
                            ),
                        );
                    }
                    b.get() as u32
                }
            };
            Ok((data, len))
        }
        _ => d.error(line(port), &k, "inject takes `pfc` or `hex`"),
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{parse, Action, Target};

    fn event(e: &str) -> Result<crate::config::Loaded, crate::config::ConfigError> {
        let text = format!("duration: 1ms\nswitches:\n  - name: s\n    ports: {{count: 2}}\nhosts:\n  - {{name: h, attach: s:Ethernet0}}\nevents:\n  - {e}\n");
        parse("f.yaml", "f", &text)
    }

    #[test]
    fn events_act_on_ports_and_hosts() {
        let l = event("{at: 10us, port: s:Ethernet1, inject: {pfc: {3: 100}}}").unwrap();
        let e = &l.scenario.run.events[0];
        assert!(
            matches!(&e.action, Action::Inject(p, data, 64) if p.port == 1 && data.len() == 60)
        );
        let l = event("{at: 2ms, port: h, tx: disable}").unwrap();
        assert_eq!(
            l.scenario.run.events[0].action,
            Action::Tx(Target::Host(0), false)
        );
        assert!(l.warnings[0]
            .to_string()
            .contains("events[0].at: 2ms is at or after the end of the run (1ms)"));
    }

    #[test]
    fn each_rule_names_its_key() {
        for (e, expect) in [
            (
                "{at: 1us, port: h, tx: off}",
                "events[0].tx: `off`: expected enable or disable",
            ),
            (
                "{at: 1us, port: h, tx: enable, link: up}",
                "events[0]: an event does exactly one of",
            ),
            (
                "{at: 1us, port: h, drain: 0}",
                "events[0].port: `drain` changes a host's receive drain",
            ),
            (
                "{at: 1us, port: s:Ethernet1, drain: 10G}",
                "events[0].port: `drain` changes a host's receive drain",
            ),
            (
                "{at: 1us, port: h, inject: {hex: \"00\"}}",
                "events[0].port: frames are injected into switch ports",
            ),
            (
                "{at: 1us, port: s:Ethernet0, inject: {hex: \"abc\"}}",
                "events[0].inject.hex: not an even number of hex digits",
            ),
            (
                "{at: 1us, port: h, tx: disable, queue: 3}",
                "events[0].queue: a host NIC has no egress queues",
            ),
            (
                "{at: 1us, port: s:Ethernet0, link: down, queue: 3}",
                "events[0].queue: `queue` says which egress queue a `tx` event",
            ),
            (
                "{at: 1us, port: s:Ethernet0, tx: disable, queue: 8}",
                "events[0].queue: queue 8 is outside 0–7",
            ),
        ] {
            let err = event(e).unwrap_err().to_string();
            assert!(err.contains(expect), "{err}");
        }
    }
}
