//! The TAP engine's ledger as a table (`lossless show ledger`): per port, its device, the
//! frames read and written, and where every other frame went — a write that failed, a
//! full writer queue, a frame too long for the ring, a full ring on the host's side — and
//! how the pipeline thread's turns were spaced (the stall detector).

use crate::report::model::Report;
use std::fmt::Write;

/// Render the `tap` section of `r` (a note when the report has none).
pub fn render(o: &mut String, r: &Report) {
    let Some(t) = &r.tap else {
        let _ = writeln!(o, "no TAP ledger: the report is not from `lossless tap`");
        return;
    };
    let _ = writeln!(
        o,
        "{:<12} {:<16} {:<9} {:>12} {:>12} {:>9} {:>9} {:>9} {:>10}",
        "Port", "Device", "State", "Read", "Written", "WrErr", "Overrun", "Oversize", "RingDrop"
    );
    for p in &t.ports {
        let dev = match (&p.tap, &p.iface) {
            (Some(n), _) => format!("tap {n}"),
            (_, Some(n)) => format!("{} {n}", p.device),
            _ => "-".into(),
        };
        let _ = writeln!(
            o,
            "{:<12} {:<16} {:<9} {:>12} {:>12} {:>9} {:>9} {:>9} {:>10}",
            p.port,
            dev,
            p.state,
            p.read_frames,
            p.written_frames,
            p.write_errors,
            p.write_overruns,
            p.oversize_frames,
            p.kernel.map_or(0, |k| k.host_tx_dropped)
        );
    }
    let (os_read, os_written) = t.ports.iter().fold((0, 0), |(r, w), p| {
        (
            r + p.ordered_set_frames_read,
            w + p.ordered_set_frames_written,
        )
    });
    let (cut, segments) = t
        .ports
        .iter()
        .fold((0, 0), |(c, n), p| (c + p.segmented_frames, n + p.segments));
    if cut > 0 {
        let _ = writeln!(
            o,
            "among the frames read, super-frames from hosts' segmentation offload: {cut}, cut into {segments} frames the switch received"
        );
    }
    if os_read + os_written > 0 {
        let _ = writeln!(
            o,
            "among them, frames carrying control ordered sets (CF_Update, LLR messages; not the switch ports' frames): read {os_read}, written {os_written}"
        );
    }
    for p in t.ports.iter().filter(|p| p.kernel_discards > 0) {
        let _ = writeln!(
            o,
            "{}: {} frames its interface's kernel took in and discarded before the switch could read them (Linux drops a frame whose 802.1Q tag is cut short before any packet socket sees it)",
            p.port, p.kernel_discards
        );
    }
    let replayed: u64 = t.ports.iter().map(|p| p.replayed_frames).sum();
    if replayed > 0 {
        let _ = writeln!(
            o,
            "among the frames written, LLR replays (frames a port sent again; its sent frames count each once): {replayed}"
        );
    }
    let _ = writeln!(
        o,
        "total: read {}, written {}, queued in the switch {}, unread at exit {}, link changes {}{}{}",
        t.read_frames,
        t.written_frames,
        t.queued_at_exit,
        t.unread_at_exit,
        t.link_changes,
        match t.reattached {
            0 => String::new(),
            n => format!(", interfaces attached again {n}"),
        },
        if t.ports_gone.is_empty() {
            String::new()
        } else {
            format!(", gone: {}", t.ports_gone.join(", "))
        }
    );
    let ms = |us: u64| us as f64 / 1e3;
    let _ = writeln!(
        o,
        "pipeline turns: {}, longest gap {:.3} ms, longest wait overrun {:.3} ms, stalls (overrun ≥ 1 ms) {}",
        t.turns.turns,
        ms(t.turns.gap_max_us),
        ms(t.turns.overslept_max_us),
        t.turns.stalls
    );
}
