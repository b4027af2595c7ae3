//! The `check` plan's transport lines: what each RC or TCP flow and each collective will
//! send and how it recovers, and the loss the scenario causes, so that a file can be read
//! back before it runs.

use crate::config::scenario::{Action, CollectiveDef, FlowDef, Target};
use crate::config::Scenario;
use lossless_buffer_model::{Bytes, Named};
use lossless_ports::collective::CollectiveKind;
use lossless_ports::flow::{FlowSpec, Messages, Transport};
use lossless_ports::rc::RcConfig;

/// The lines for `s` (empty when it has no reliable flows, collectives or loss).
pub fn render(s: &Scenario) -> String {
    let mut o = String::new();
    let in_collective = |f: &FlowDef| {
        s.run
            .collectives
            .iter()
            .any(|c| c.qps.iter().any(|(out, _)| out.contains(&f.spec.id)))
    };
    for f in s.run.flows.iter().filter(|f| !in_collective(f)) {
        let (src, dst) = (&s.run.hosts[f.src].name, &s.run.hosts[f.dst].name);
        match &f.spec.transport {
            Transport::OpenLoop => {}
            Transport::Rc(rc) => {
                let what = match rc.messages {
                    Messages::Count { count, size } => {
                        format!("{count} message(s) of {}", Bytes(size))
                    }
                    Messages::Stream { size } => {
                        format!("messages of {} for the whole run", Bytes(size))
                    }
                    Messages::Posted => "messages posted from outside".into(),
                };
                o += &format!(
                    "flow {} {src}→{dst}: RC, {what}, {}\n",
                    f.spec.name,
                    rc_text(&f.spec, &rc.config)
                );
            }
            Transport::Tcp(t) => {
                o += &format!(
                    "flow {} {src}→{dst}: TCP {}, {} (MSS {}, socket buffers {})\n",
                    f.spec.name,
                    t.congestion.word(),
                    Bytes(t.size),
                    t.ip_mtu - 40,
                    Bytes(u64::from(t.buffer))
                );
            }
        }
    }
    for c in &s.run.collectives {
        o += &collective(s, c);
    }
    o += &loss(s);
    o
}

/// An RC queue pair's payload per packet and recovery.
fn rc_text(spec: &FlowSpec, c: &RcConfig) -> String {
    format!(
        "{}-byte payload per packet, an ACK every {}, {}, local ACK timeout {}, {} retries",
        spec.headers.len - spec.headers.overhead(),
        c.ack_every,
        c.recovery.word(),
        c.rto,
        c.retry_count
    )
}

fn collective(s: &Scenario, c: &CollectiveDef) -> String {
    let names: Vec<&str> = c
        .hosts
        .iter()
        .map(|h| s.run.hosts[*h].name.as_str())
        .collect();
    let (kind, order) = match c.kind {
        CollectiveKind::AllReduceRing => (
            "allreduce/ring",
            format!("{} → {}", names.join(" → "), names[0]),
        ),
        CollectiveKind::AllToAll => ("alltoall", names.join(", ")),
    };
    let steps = c.kind.steps(c.hosts.len());
    let first = c.qps[0]
        .0
        .first()
        .and_then(|id| s.run.flows.iter().find(|f| f.spec.id == *id));
    let carrier = match first.map(|f| &f.spec.transport) {
        Some(Transport::Rc(rc)) => {
            format!("RC: {}", rc_text(&first.expect("found").spec, &rc.config))
        }
        Some(Transport::Tcp(t)) => format!("TCP {}: MSS {}", t.congestion.word(), t.ip_mtu - 40),
        _ => "-".into(),
    };
    let qps: usize = c.qps.iter().map(|q| q.0.len()).sum();
    format!(
        "collective {}: {kind} of {} ranks ({order}), {} each, {} iteration(s) from {} of {steps} message(s) of {} per connection; {qps} connections over {carrier}\n",
        c.name,
        c.hosts.len(),
        Bytes(c.size),
        c.iterations,
        c.start,
        Bytes(c.chunk),
    )
}

/// Frame error rates and drop events.
fn loss(s: &Scenario) -> String {
    let mut o = String::new();
    for h in s
        .run
        .hosts
        .iter()
        .filter(|h| h.frame_error_rate.probability() > 0.0)
    {
        o += &format!(
            "loss: host {}'s cable loses each frame with probability {}\n",
            h.name,
            h.frame_error_rate.probability()
        );
    }
    for (i, l) in s
        .run
        .links
        .iter()
        .enumerate()
        .filter(|(_, l)| l.frame_error_rate.probability() > 0.0)
    {
        o += &format!(
            "loss: links[{i}] loses each frame with probability {}\n",
            l.frame_error_rate.probability()
        );
    }
    for e in &s.run.events {
        if let Action::Fault(t, f) = e.action {
            let who = match t {
                Target::Host(h) => format!("host {}", s.run.hosts[h].name),
                Target::Switch(p) => {
                    let sw = &s.switches[p.switch].config;
                    format!("{}:{}", sw.name, sw.ports[p.port].name)
                }
            };
            let kind = lossless_buffer_model::Named::word(f.kind);
            let fate = match f.fate {
                crate::config::FaultFate::Lost => "lost",
                crate::config::FaultFate::Corrupted => "corrupted (bad FCS)",
            };
            let which = if f.nth == 1 {
                format!("the next {} {kind} frame(s)", f.count)
            } else {
                format!("{} {kind} frame(s) from the {}th on", f.count, f.nth)
            };
            o += &format!("loss: at {} {which} {who} sends are {fate}\n", e.at);
        }
    }
    o
}
