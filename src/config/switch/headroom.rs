//! Warnings where a lossless PG's headroom is below what may arrive after its XOFF: on a
//! wire, the larger of two minimums — the physics formula in bytes (frames of the MTU) and
//! the cells a stream of the worst frame size takes (small frames each fill a cell); on a
//! TAP port, the engine's bounded cable ([`crate::cable`]).

use super::buffer::Plan;
use crate::config::diag::{Diags, Key};
use crate::config::scenario::Attach;
use lossless_buffer_model::headroom::HeadroomNeed;
use lossless_buffer_model::{Bytes, PRIORITIES};
use lossless_pipeline::config::PortConfig;
use std::collections::BTreeSet;

/// Warn (once per profile and minimum) where a lossless PG's headroom is too small.
pub fn check(d: &Diags, sw: &Key, ports: &[PortConfig], attach: &[Option<Attach>], plan: &Plan) {
    let mut warned = BTreeSet::new();
    for (i, p) in plan.pg_profiles.iter().enumerate() {
        let Some(h) = p.headroom else { continue };
        let (port, dev) = (&ports[i / PRIORITIES], &attach[i / PRIORITIES]);
        let name = &plan.pg_names[i];
        let at = plan.profile_lines.get(name).copied().flatten();
        let key = sw.at("buffer").at("profiles").at(name).at("xoff");
        let have = h.xoff.cells(plan.cell);
        if let Some(dev) = dev {
            let (cells, frame) = crate::cable::worst_cells(port.mtu, plan.cell);
            if have < cells && warned.insert((name.clone(), cells)) {
                d.warn(at, &key, format!(
                    "headroom {} is {have} cells of {}; a port served by {} `{}` can hold {cells} cells of frames after XOFF (its kernel ring, read queue and frames in hand, as {frame}-byte frames): {} are needed, or lossless drops are possible",
                    h.xoff, plan.cell, dev.kind(), dev.name(), Bytes(cells * plan.cell.get())
                ));
            }
            continue;
        }
        let need = HeadroomNeed::ieee(port.speed, port.propagation(), port.mtu, plan.cell);
        let mtu_min = need.budget.total();
        // One warning, quoting the minimum that applies (the larger of the two), so that
        // raising headroom to it silences it.
        if (h.xoff < mtu_min || have < need.cells()) && warned.insert((name.clone(), need.cells()))
        {
            let why = if need.small_frames_apply() {
                let per_frame = (need.frame as u64).div_ceil(plan.cell.get());
                format!(
                    "after XOFF up to {} frames of {} B may arrive, one cell each or more (frames of the MTU alone need {mtu_min})",
                    need.frame_cells / per_frame,
                    need.frame
                )
            } else {
                format!("{mtu_min} of MTU frames after XOFF, in whole cells")
            };
            d.warn(at, &key, format!(
                "headroom {} ({have} cells of {}) is below the minimum {} ({} cells) for {} at {}, {} one way, MTU {} and the IEEE peer response: {why}; lossless drops are possible",
                h.xoff, plan.cell, need.bytes(), need.cells(), port.name, port.speed,
                port.propagation(), port.mtu
            ));
        }
    }
}
