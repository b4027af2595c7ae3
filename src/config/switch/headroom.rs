//! Warnings where a lossless PG's headroom is below what may arrive after its XOFF: on a
//! wire, the larger of two minimums — the physics formula in bytes (frames of the MTU) and
//! the cells a stream of the worst frame size takes (small frames each fill a cell); on a
//! TAP port, the engine's bounded cable ([`crate::cable`]).

use super::buffer::Plan;
use crate::config::diag::{Diags, Key};
use lossless_buffer_model::headroom::HeadroomNeed;
use lossless_buffer_model::{Bytes, PRIORITIES};
use lossless_pipeline::config::PortConfig;
use std::collections::BTreeSet;

/// Warn (once per profile and minimum) where a lossless PG's headroom is too small.
pub fn check(d: &Diags, sw: &Key, ports: &[PortConfig], taps: &[Option<String>], plan: &Plan) {
    let mut warned = BTreeSet::new();
    for (i, p) in plan.pg_profiles.iter().enumerate() {
        let Some(h) = p.headroom else { continue };
        let (port, tap) = (&ports[i / PRIORITIES], &taps[i / PRIORITIES]);
        let name = &plan.pg_names[i];
        let at = plan.profile_lines.get(name).copied().flatten();
        let key = sw.at("buffer").at("profiles").at(name).at("xoff");
        let have = h.xoff.cells(plan.cell);
        if let Some(tap) = tap {
            let (cells, frame) = crate::cable::worst_cells(port.mtu, plan.cell);
            if have < cells && warned.insert((name.clone(), cells)) {
                d.warn(at, &key, format!(
                    "headroom {} is {have} cells of {}; a TAP port ({tap}) can hold {cells} cells of frames after XOFF (its kernel ring, read queue and frames in hand, as {frame}-byte frames): {} are needed, or lossless drops are possible",
                    h.xoff, plan.cell, Bytes(cells * plan.cell.get())
                ));
            }
            continue;
        }
        let need = HeadroomNeed::ieee(port.speed, port.propagation(), port.mtu, plan.cell);
        let mtu_min = need.budget.total();
        if h.xoff < mtu_min {
            if warned.insert((name.clone(), mtu_min.get())) {
                d.warn(at, &key, format!(
                    "headroom {} is below the minimum {} for {} at {}, {} one way, MTU {} and the IEEE peer response: lossless drops are possible",
                    h.xoff, mtu_min, port.name, port.speed, port.propagation(), port.mtu
                ));
            }
        } else if have < need.frame_cells && warned.insert((name.clone(), mtu_min.get())) {
            let per_frame = (need.frame as u64).div_ceil(plan.cell.get());
            d.warn(at, &key, format!(
                "headroom {} is {have} cells of {}; after XOFF up to {} frames of {} B may arrive on {} ({}, {} one way, IEEE peer response), one cell each or more: {} cells = {} are needed, or lossless drops are possible with small frames",
                h.xoff, plan.cell, need.frame_cells / per_frame, need.frame, port.name, port.speed,
                port.propagation(), need.frame_cells, Bytes(need.frame_cells * plan.cell.get())
            ));
        }
    }
}
