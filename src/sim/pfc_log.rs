//! `lossless run --pfc-log PATH`: every switch's PFC events (pipeline `PfcEvent`) as JSON
//! lines, in time order: XOFF and XON decisions with the PG's occupancy and the level it
//! crossed, PFC frames sent, PFC frames received with when they take effect.

use lossless_buffer_model::{priorities_in, Time};
use lossless_pipeline::switch::PfcEvent;
use lossless_pipeline::Switch;
use lossless_sys::output::OutputFile;
use serde_json::{json, Value};
use std::io::{self, Write};

fn prios(mask: u8) -> Vec<usize> {
    priorities_in(mask).collect()
}

/// One event as a JSON object.
fn line(sw: &Switch, e: &PfcEvent) -> (Time, Value) {
    let c = sw.config();
    let port = |p: u16| format!("{}:{}", c.name, c.ports[p as usize].name);
    match *e {
        PfcEvent::XoffDecided {
            at,
            port: p,
            pg,
            priorities,
            shared_bytes,
            headroom_bytes,
            limit_bytes,
        } => (
            at,
            json!({
                "t_ps": at.as_ps(), "port": port(p), "event": "xoff_decided", "pg": pg,
                "priorities": prios(priorities), "shared_bytes": shared_bytes,
                "headroom_bytes": headroom_bytes, "limit_bytes": limit_bytes,
                "why": format!("PG {pg}'s shared use would pass its limit: the frame went to headroom and XOFF is due"),
            }),
        ),
        PfcEvent::XonDecided {
            at,
            port: p,
            pg,
            priorities,
            shared_bytes,
            xon_level_bytes,
        } => (
            at,
            json!({
                "t_ps": at.as_ps(), "port": port(p), "event": "xon_decided", "pg": pg,
                "priorities": prios(priorities), "shared_bytes": shared_bytes,
                "xon_level_bytes": xon_level_bytes,
                "why": format!("PG {pg}'s headroom is empty and its shared use fell below the XON level"),
            }),
        ),
        PfcEvent::Sent {
            at,
            port: p,
            enable,
            quanta,
            pause,
        } => {
            let mut v = json!({
                "t_ps": at.as_ps(), "port": port(p), "event": "sent",
                "priorities": prios(enable),
                "quanta": prios(enable).iter().map(|q| quanta[*q]).collect::<Vec<_>>(),
                "kind": if prios(enable).iter().all(|q| quanta[*q] == 0) { "xon" } else { "xoff" },
            });
            if pause {
                // The frame on the wire was one PAUSE for the link, whatever the PGs asked.
                v["frame"] = json!("pause");
            }
            (at, v)
        }
        PfcEvent::Received {
            at,
            port: p,
            enable,
            quanta,
            effect_at,
            pause,
        } => {
            let mut v = json!({
                "t_ps": at.as_ps(), "port": port(p), "event": "received",
                "priorities": prios(enable),
                "quanta": prios(enable).iter().map(|q| quanta[*q]).collect::<Vec<_>>(),
                "effect_ps": effect_at.as_ps(),
            });
            if pause {
                v["frame"] = json!("pause");
            }
            (at, v)
        }
    }
}

/// Write the events of `switches` (taken from each) to `out`, oldest first.
pub fn write<'a>(
    mut out: OutputFile,
    switches: impl Iterator<Item = &'a mut Switch>,
) -> io::Result<u64> {
    let mut all: Vec<(Time, usize, Value)> = Vec::new();
    for sw in switches {
        for e in sw.take_pfc_log() {
            let (t, v) = line(sw, &e);
            let n = all.len();
            all.push((t, n, v));
        }
    }
    all.sort_by_key(|(t, n, _)| (*t, *n));
    for (_, _, v) in &all {
        writeln!(out, "{v}")?;
    }
    out.commit()?;
    Ok(all.len() as u64)
}
