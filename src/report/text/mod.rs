//! The text summary of a run, rendered from the typed report ([`Report`]) the JSON is
//! written from, so the two never disagree. Tables follow SONiC's `pfcstat`, `queuestat`
//! and `watermarkstat`; rows that are all zero are left out; `lossless_drops` is always
//! printed because it must be 0. PFC is counted in frames (one frame may carry several
//! priorities); a drop is shown once, where it happened: at an ingress PG (its limit or
//! headroom) or at an egress queue.
//!
//! * [`switch`]: one switch's tables; [`network`]: links, deadlocks, flows, hosts, the
//!   engine's counters and the files written; [`transport`]: RC flows' recovery;
//!   [`collective`]: collectives in nccl-tests' columns.

mod collective;
mod ledger;
mod link;
mod network;
mod switch;
mod transport;

use super::model::Report;
use lossless_buffer_model::Time;
use std::fmt::Write;

fn time(ps: u64) -> String {
    Time(ps).to_string()
}

fn gbps(bps: f64) -> String {
    format!("{:.3} Gb/s", bps / 1e9)
}

fn pct(x: f64) -> String {
    format!("{:.2}%", x * 100.0)
}

/// A table `lossless show` prints from a running switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Table {
    /// `pfcstat`: PFC frames and XOFF/XON per port and priority.
    Pfc,
    /// `queuestat`: egress queue counters and watermarks.
    Queue,
    /// `watermarkstat`: PG shared and headroom watermarks, pool watermarks.
    Watermark,
    /// Credit-based flow control: credit updates per port, credits per virtual channel.
    Cbfc,
    /// Link-level retry: states, NACKs, replays and FLUSHes per port, every counter.
    Llr,
    /// Packet trimming: frames trimmed, copies sent and dropped per port and queue.
    Trim,
    /// The TAP engine's ledger: frames read and written per port, and where the others
    /// went.
    Ledger,
    /// A P4 switch's program: each table's entries, hits and misses (and its direct
    /// counter's cells), counters and registers.
    P4,
}

/// Table `t` of every switch of the report.
pub fn table(r: &Report, t: Table) -> String {
    let mut o = String::new();
    if t == Table::Ledger {
        ledger::render(&mut o, r);
        return o;
    }
    for sw in &r.switches {
        switch::table(&mut o, sw, t);
    }
    o
}

/// Render the report.
pub fn render(r: &Report) -> String {
    let mut o = String::new();
    header(&mut o, r);
    let window = r.measure.to_ps.saturating_sub(r.measure.from_ps) as f64;
    for sw in &r.switches {
        switch::render(&mut o, sw, window);
    }
    network::links(&mut o, r);
    network::deadlocks(&mut o, r);
    network::llr_stalls(&mut o, r);
    network::flows(&mut o, r);
    transport::rc(&mut o, r);
    transport::tcp(&mut o, r);
    collective::table(&mut o, r);
    network::hosts(&mut o, r);
    network::engine(&mut o, r);
    network::outputs(&mut o, r);
    o
}

fn header(o: &mut String, r: &Report) {
    let sim_ps = r.sim_time_ps;
    let wall = r.wall_time_s;
    match (&r.tap, r.packet_hops) {
        // The TAP switch: wall clock, frames read and written (there are no simulated hops).
        (Some(tap), _) => {
            let forwarded: u64 = r.switches.iter().map(|s| s.ledger.forwarded).sum();
            let _ = writeln!(
                o,
                "{}: served {:.2} s of wall time, {} frames read, {} forwarded, {} written, {} pipeline turns",
                r.name,
                sim_ps as f64 / 1e12,
                tap.read_frames,
                forwarded,
                tap.written_frames,
                r.events,
            );
        }
        (None, hops) => {
            let hops = hops.unwrap_or(0);
            let _ = writeln!(
                o,
                "{}: {} simulated in {:.2} s wall on {} thread{}, {} events, {} packet-hops ({:.2} M packet-hops/s), seed {}",
                r.name,
                time(sim_ps),
                wall,
                r.threads,
                if r.threads == 1 { "" } else { "s" },
                r.events,
                hops,
                if wall > 0.0 { hops as f64 / wall / 1e6 } else { 0.0 },
                r.seed
            );
        }
    }
    if let Some(i) = &r.interrupted {
        let planned = i
            .planned_end_ps
            .map_or("until idle".to_string(), |p| format!("to {}", time(p)));
        let _ = writeln!(
            o,
            "INTERRUPTED by {} at {} (the run was to go {planned}): everything below covers the time simulated until then",
            i.by,
            time(sim_ps)
        );
    }
    let (from, to) = (r.measure.from_ps, r.measure.to_ps);
    let whole = from == 0 && to == sim_ps;
    let _ = writeln!(
        o,
        "measured over {}–{}{}: throughput, utilisation, pause fractions, latency",
        time(from),
        time(to),
        if whole { " (the whole run)" } else { "" }
    );
    let t = &r.totals;
    let (tx, rx, fly) = (t.pfc_tx, t.pfc_rx, t.pfc_in_flight);
    let mut pfc = format!("PFC frames tx {tx} rx {rx}");
    if t.pause_tx_frames > 0 {
        let _ = write!(pfc, ", 802.3x PAUSE frames tx {}", t.pause_tx_frames);
    }
    if fly > 0 {
        let _ = write!(pfc, ", {fly} in flight at the end");
    }
    let lost = tx.saturating_sub(rx + fly);
    if lost > 0 {
        let _ = write!(pfc, ", {lost} not acted on (see drops)");
    }
    let injected = match t.injected_drops {
        0 => String::new(),
        n => format!(", lost on the wire on purpose {n}"),
    };
    let _ = writeln!(
        o,
        "totals: lossless_drops {}, drops {}, {pfc}, ECN marked {}{injected}\n",
        t.lossless_drops, t.drops, t.ecn
    );
}
