//! A finished run, read-only: what the report is made from.

use super::deadlock::DeadlockWatch;
use super::llr_stall::LlrStallWatch;
use super::{EngineStats, OutputFiles, Sim};
use crate::config::Scenario;
use crate::measure::Window;
use lossless_buffer_model::Time;
use lossless_pipeline::Switch;
use lossless_ports::flow::FlowRx;
use lossless_ports::host::Host;

/// What a run did.
pub struct Outcome<'a> {
    /// The scenario as resolved.
    pub scenario: &'a Scenario,
    /// Seed in use.
    pub seed: u64,
    /// End of the run (virtual time).
    pub end: Time,
    /// The measurement window as run.
    pub window: Window,
    /// The window was given (`measure:`), not the whole run by default.
    pub windowed: bool,
    /// The switches.
    pub switches: Vec<&'a Switch>,
    /// The host NICs.
    pub hosts: Vec<&'a Host>,
    /// Receiver statistics per flow (index = flow id − 1), from each flow's destination.
    pub flows_rx: Vec<&'a FlowRx>,
    /// Engine counters.
    pub stats: &'a EngineStats,
    /// Files written besides the JSON report.
    pub files: &'a OutputFiles,
    /// The deadlock indicator, when it ran.
    pub deadlocks: Option<&'a DeadlockWatch>,
    /// The run stopped at a deadlock that nothing could break.
    pub stopped_by_deadlock: bool,
    /// The LLR stall indicator, when it ran.
    pub llr_stalls: Option<&'a LlrStallWatch>,
    /// The run stopped at an LLR stall that nothing could end.
    pub stopped_by_llr_stall: bool,
    /// The run was stopped before its end by its caller (Ctrl-C): Some(the end it was going
    /// to, None when it was to run until idle).
    pub interrupted: Option<Option<Time>>,
    /// Frames lost on the wire on purpose, per link (hosts' first): a→b, b→a.
    pub injected: &'a [[u64; 2]],
}

impl Sim {
    /// The outcome of the run (after `run`).
    pub fn outcome(&self) -> Outcome<'_> {
        Outcome {
            scenario: &self.scenario,
            seed: self.seed,
            end: self.end,
            window: self.window(),
            windowed: self.scenario.run.measure != Default::default(),
            switches: self.switches.iter().map(|n| &n.sw).collect(),
            hosts: self.hosts.iter().map(|n| &n.host).collect(),
            flows_rx: self
                .scenario
                .run
                .flows
                .iter()
                .map(|f| {
                    self.hosts[f.dst]
                        .host
                        .receiver(f.spec.id)
                        .expect("each flow's receiver is at its destination")
                })
                .collect(),
            stats: &self.stats,
            files: &self.observers.files,
            deadlocks: self.deadlocks.as_ref(),
            stopped_by_deadlock: self.stopped_by_deadlock,
            llr_stalls: self.llr_stalls.as_ref(),
            stopped_by_llr_stall: self.stopped_by_llr_stall,
            interrupted: self.interrupted,
            injected: &self.loss.injected,
        }
    }
}
