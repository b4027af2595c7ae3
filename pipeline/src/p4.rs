//! A P4 program in front of the traffic manager (docs/p4.md): v1model's ingress decides a
//! frame's port and traffic class, the switch's buffer, PFC, WRED/ECN, CBFC and trimming
//! act on it as on any frame, and egress sees what the queue did (its depth at enqueue and
//! dequeue, the time it waited) before the frame leaves. The metadata a frame carries from
//! ingress to egress waits here, by a handle the frame holds while it is queued.

use lossless_buffer_model::Time;
use lossless_p4::v1model::{Carried, Queueing};
use lossless_p4::V1Model;
use std::sync::Arc;

/// What a program's queue depths count (`enq_qdepth`, `deq_qdepth`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DepthUnit {
    /// Frames, as v1model (and BMv2) give them.
    #[default]
    Packets,
    /// Buffer cells, the unit the MMU accounts in.
    Cells,
    /// Bytes of the cells held.
    Bytes,
}

impl lossless_buffer_model::Named for DepthUnit {
    const WORDS: &'static [(&'static str, DepthUnit)] = &[
        ("packets", DepthUnit::Packets),
        ("cells", DepthUnit::Cells),
        ("bytes", DepthUnit::Bytes),
    ];
}

/// A switch's program, as the configuration gives it: loaded, with its entries.
#[derive(Clone, Debug)]
pub struct P4Spec {
    /// The program and its tables (each switch runs its own copy).
    pub model: Arc<V1Model>,
    /// The program's file, as the scenario names it.
    pub file: String,
    pub depth_unit: DepthUnit,
}

impl PartialEq for P4Spec {
    fn eq(&self, o: &P4Spec) -> bool {
        Arc::ptr_eq(&self.model, &o.model) && self.file == o.file && self.depth_unit == o.depth_unit
    }
}

impl Eq for P4Spec {}

/// A frame's ingress state while it is queued, with the flow hash it arrived with.
#[derive(Debug)]
struct Waiting {
    carried: Carried,
    flow_hash: u32,
    /// The queue's depth when it was queued (in the program's unit).
    enq_depth: u64,
}

/// The program a switch runs, and the frames between its ingress and egress.
#[derive(Debug)]
pub struct P4Stage {
    pub model: V1Model,
    pub depth_unit: DepthUnit,
    /// The program sets `standard_metadata.priority`: it classifies frames.
    pub classifies: bool,
    /// The program's egress control does something: frames carry their ingress state to
    /// it. Without one a frame keeps nothing and leaves as ingress wrote it.
    egress: bool,
    waiting: Vec<Option<Waiting>>,
    free: Vec<u32>,
}

impl P4Stage {
    /// The stage of `spec`.
    pub fn new(spec: &P4Spec) -> P4Stage {
        let model = (*spec.model).clone();
        P4Stage {
            classifies: model.sets_priority(),
            egress: model.runs_egress(),
            model,
            depth_unit: spec.depth_unit,
            waiting: Vec::new(),
            free: Vec::new(),
        }
    }

    /// Keep `carried` for the frame that arrived with `flow_hash` until its egress: the
    /// handle it holds meanwhile (never 0: 0 is a frame with nothing kept).
    /// Without an egress control the frame keeps nothing and its flow hash stays.
    pub fn keep(&mut self, carried: Carried, flow_hash: u32) -> u32 {
        if !self.egress {
            self.model.recycle(carried);
            return flow_hash;
        }
        let w = Some(Waiting {
            carried,
            flow_hash,
            enq_depth: 0,
        });
        match self.free.pop() {
            Some(i) => {
                self.waiting[i as usize] = w;
                i + 1
            }
            None => {
                self.waiting.push(w);
                self.waiting.len() as u32
            }
        }
    }

    /// Record the queue depth the frame of `handle` found when queued.
    pub fn queued(&mut self, handle: u32, depth: u64) {
        if !self.egress {
            return;
        }
        if let Some(Some(w)) = handle
            .checked_sub(1)
            .and_then(|i| self.waiting.get_mut(i as usize))
        {
            w.enq_depth = depth;
        }
    }

    /// Take what the frame of `handle` kept: its ingress state, the flow hash it arrived
    /// with, its depth at enqueue (None for handle 0).
    pub fn take(&mut self, handle: u32) -> Option<(Carried, u32, u64)> {
        if !self.egress {
            return None;
        }
        let i = handle.checked_sub(1)?;
        let w = self.waiting.get_mut(i as usize)?.take()?;
        self.free.push(i);
        Some((w.carried, w.flow_hash, w.enq_depth))
    }

    /// Whether frames go through the program's egress control.
    pub fn runs_egress(&self) -> bool {
        self.egress
    }

    /// Forget what the frame of `handle` kept: it was dropped before egress.
    pub fn discard(&mut self, handle: u32) {
        if let Some((carried, ..)) = self.take(handle) {
            self.model.recycle(carried);
        }
    }

    /// Frames between ingress and egress.
    pub fn in_flight(&self) -> usize {
        self.waiting.len() - self.free.len()
    }
}

/// v1model's microseconds of `t`.
pub fn micros(t: Time) -> u128 {
    (t.as_ps() / 1_000_000) as u128
}

/// The queueing metadata of a frame queued at `enq` (its depth then `enq_depth`) and
/// leaving at `now` with `deq_depth` behind it, in v1model's units.
pub fn queueing(enq: Time, enq_depth: u64, now: Time, deq_depth: u64) -> Queueing {
    Queueing {
        enq_timestamp: micros(enq),
        enq_qdepth: enq_depth as u128,
        deq_timedelta: micros(now.saturating_sub(enq)),
        deq_qdepth: deq_depth as u128,
        egress_global_timestamp: micros(now),
    }
}
