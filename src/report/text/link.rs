//! The link layer's tables: CBFC per port and credited virtual channel, LLR per port, the
//! columns read
//! from the counter groups' descriptions (a column per counter, its header the counter's
//! key in short).

use crate::report::model::PortReport;
use lossless_pipeline::counter_group::CounterGroup;
use lossless_pipeline::link::cbfc::{CbfcCounters, VcCounters};
use lossless_pipeline::link::llr::LlrCounters;
use std::fmt::Write;

/// A column header from a counter key: each word shortened and capitalised
/// (`sender_credits_used_watermark` → `SndUsedWM`).
fn header(key: &str) -> String {
    key.split('_')
        .filter_map(|w| match w {
            "credits" | "update" | "messages" | "cbfc" => None,
            "sender" => Some("Snd".to_string()),
            "receiver" => Some("Rcv".to_string()),
            "watermark" => Some("WM".to_string()),
            "cc" | "cf" => Some(w.to_uppercase()),
            w => {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_uppercase().chain(c).collect::<String>())
            }
        })
        .collect()
}

/// The CBFC tables: per port (credit updates, credits held), then per credited channel
/// (limits both ways and the SAI channel counters). `all` lists idle channels too.
pub(super) fn cbfc(o: &mut String, ports: &[PortReport], all: bool) {
    let speakers: Vec<_> = ports
        .iter()
        .filter_map(|p| p.cbfc.as_ref().map(|c| (p, c)))
        .collect();
    if speakers.is_empty() {
        return;
    }
    let cols: Vec<String> = CbfcCounters::DEFS.iter().map(|d| header(d.key)).collect();
    let _ = writeln!(
        o,
        "  CBFC ports (credits of {} B, {}; SAI_PORT_STAT_CBFC_*)",
        speakers[0].1.credit_size, speakers[0].1.mode
    );
    let mut line = format!("    {:<12}", "Port");
    for c in &cols {
        let _ = write!(line, " {c:>w$}", w = c.len().max(10));
    }
    let _ = writeln!(o, "{line}");
    for (p, c) in &speakers {
        let mut line = format!("    {:<12}", p.port);
        for (v, h) in c.counters.0.values().zip(&cols) {
            let _ = write!(line, " {v:>w$}", w = h.len().max(10));
        }
        let _ = writeln!(o, "{line}");
    }
    let cols: Vec<String> = VcCounters::DEFS.iter().map(|d| header(d.key)).collect();
    let _ = writeln!(
        o,
        "  CBFC virtual channels (RxCr: credits this port gives; TxCr: credits its peer gave; SAI_VIRTUAL_CHANNEL_STAT_*)"
    );
    let mut line = format!(
        "    {:<12} {:>3} {:>8} {:>8} {:>9}",
        "Port", "VC", "RxCr", "TxCr", "RcvHeldWM"
    );
    for c in &cols {
        let _ = write!(line, " {c:>w$}", w = c.len().max(10));
    }
    let _ = writeln!(o, "{line}");
    for (p, c) in &speakers {
        for v in &c.vcs {
            if !all && v.counters.0.is_zero() {
                continue;
            }
            let mut line = format!(
                "    {:<12} {:>3} {:>8} {:>8} {:>9}",
                p.port, v.vc, v.rx_credits, v.tx_credits, v.receiver_credits_held_watermark
            );
            for (x, h) in v.counters.0.values().zip(&cols) {
                let _ = write!(line, " {x:>w$}", w = h.len().max(10));
            }
            let _ = writeln!(o, "{line}");
        }
    }
}

/// The LLR table: per port that speaks it, its states and the counters that tell what
/// happened (frames, NACKs, replays, FLUSHes, the buffer's watermark); `all` lists every
/// counter of every port after it, as SONiC's `show llr counters detailed` does.
pub(super) fn llr(o: &mut String, ports: &[PortReport], all: bool) {
    let speakers: Vec<_> = ports
        .iter()
        .filter_map(|p| p.llr.as_ref().map(|l| (p, l)))
        .collect();
    if speakers.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "  LLR ports (SAI_PORT_STAT_LLR_*; NACKs sent/received, replays completed/frames replayed)"
    );
    let _ = writeln!(
        o,
        "    {:<12} {:>7} {:>9} {:>10} {:>10} {:>7} {:>8} {:>6} {:>9} {:>14} {:>5} {:>9}",
        "Port",
        "TxState",
        "RxState",
        "TxOk",
        "RxOk",
        "RxBad",
        "Missing",
        "Dup",
        "NACK",
        "Replays",
        "Flush",
        "BufWM"
    );
    for (p, l) in &speakers {
        let c = &l.counters.0;
        let _ = writeln!(
            o,
            "    {:<12} {:>7} {:>9} {:>10} {:>10} {:>7} {:>8} {:>6} {:>9} {:>14} {:>5} {:>9}",
            p.port,
            l.tx_state,
            l.rx_state,
            c.tx_ok,
            c.rx_ok,
            c.rx_bad,
            c.rx_missing_seq,
            c.rx_duplicate_seq,
            format!("{}/{}", c.tx_nack_ctl_os, c.rx_nack_ctl_os),
            format!("{}/{}", c.tx_replay, c.tx_replayed_frames),
            c.tx_flush,
            format!(
                "{}f/{}B",
                c.tx_buffer_frames_watermark, c.tx_buffer_bytes_watermark
            )
        );
    }
    if !all {
        return;
    }
    for (p, l) in &speakers {
        let _ = writeln!(
            o,
            "  {} (buffer {} frames / {} B, replay timer {} ps, {} replays)",
            p.port,
            l.max_outstanding_frames,
            l.max_outstanding_bytes,
            l.replay_timer_ps,
            l.max_replay_count
        );
        for (d, v) in LlrCounters::DEFS.iter().zip(l.counters.0.values()) {
            let _ = writeln!(o, "    {:<32} {v:>12}  {}", d.key, d.sai);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn headers_are_short_and_distinct() {
        use super::*;
        let h: Vec<String> = VcCounters::DEFS.iter().map(|d| header(d.key)).collect();
        assert_eq!(
            h,
            [
                "SndUsed",
                "SndConsumed",
                "SndFreed",
                "SndUsedWM",
                "RcvConsumed",
                "RcvFreed"
            ]
        );
        let h: Vec<String> = CbfcCounters::DEFS.iter().map(|d| header(d.key)).collect();
        assert_eq!(
            h,
            [
                "SndUsed",
                "SndUsedWM",
                "CCTx",
                "CCRx",
                "CFTx",
                "CFRx",
                "Resyncs",
                "InitTx",
                "ImplausibleRx",
                "AwaitingInit"
            ]
        );
    }
}
