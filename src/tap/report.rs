//! The report of a TAP run: the switch section both engines share, and the `tap` section
//! that accounts for every frame read and written, with the kernel's counters of the ports'
//! devices (TAPs and interfaces).

use super::device::Device;
use super::ports::TapPorts;
use super::writer::PortIoStats;
use super::{PortState, TapSwitch};
use crate::measure::{Samples, Window};
use crate::report::json::{measure, switch_report};
use crate::report::model::{KernelReport, Report, TapPortReport, TapReport, Totals};
use crate::wallclock::Driver;
use lossless_buffer_model::Time;
use lossless_pipeline::Switch;
use lossless_sys::kernel::TapCounters;

impl From<&TapCounters> for KernelReport {
    fn from(k: &TapCounters) -> KernelReport {
        KernelReport {
            host_tx_packets: k.host_tx_packets,
            host_tx_dropped: k.host_tx_dropped,
            host_rx_packets: k.host_rx_packets,
            host_rx_dropped: k.host_rx_dropped,
        }
    }
}

impl TapSwitch {
    /// The report (no flows or hosts in TAP mode) with its `tap` section.
    pub fn report(&self) -> Report {
        report(&self.driver, self.realtime)
    }
}

/// The report of the switch `d` drives so far; `realtime`: its pipeline thread runs with
/// real-time priority.
pub(super) fn report(d: &Driver<Switch, TapPorts>, realtime: bool) -> Report {
    let (node, io) = (&d.node, &d.ports);
    let end = d.now();
    let mut t = Totals::default();
    let window = Window {
        from: Time::ZERO,
        to: end,
        start: Samples::take([node], [], Time::ZERO).zeroed(),
        end: Samples::take([node], [], end),
    };
    let sw = switch_report(node, 0, end, &window, &mut t);
    let ports: Vec<TapPortReport> = io
        .ports
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let s = &p.stats;
            let name = Some(p.dev.name().to_string());
            let iface = matches!(*p.dev, Device::Iface(..));
            TapPortReport {
                port: node.config().ports[i].name.clone(),
                device: p.attach.kind(),
                tap: name.clone().filter(|_| !iface),
                iface: name.filter(|_| iface),
                state: p.state.name(),
                read_frames: PortIoStats::get(&s.read_frames),
                written_frames: PortIoStats::get(&s.written_frames),
                write_errors: PortIoStats::get(&s.write_errors),
                write_overruns: PortIoStats::get(&s.write_overruns),
                oversize_frames: p.carried.oversize + p.dev.oversize(),
                segmented_frames: PortIoStats::get(&s.segmented_frames),
                segments: PortIoStats::get(&s.segments),
                ordered_set_frames_read: PortIoStats::get(&s.ordered_sets_read),
                ordered_set_frames_written: PortIoStats::get(&s.ordered_sets_written),
                kernel_discards: match (&p.kernel, iface && io.closed) {
                    (Some(k), true) => {
                        let k = p.carried.kernel + *k;
                        k.host_tx_packets.saturating_sub(
                            PortIoStats::get(&s.read_frames)
                                + k.host_tx_dropped
                                + p.carried.oversize
                                + p.dev.oversize()
                                + p.unread_at_exit,
                        )
                    }
                    _ => 0,
                },
                replayed_frames: node.ports()[i]
                    .link
                    .llr()
                    .map_or(0, |l| l.counters.tx_replayed_frames),
                checksums_completed: PortIoStats::get(&s.checksums_completed),
                kernel: match (p.kernel, p.reattached) {
                    (Some(k), _) => Some(KernelReport::from(&(p.carried.kernel + k))),
                    (None, 0) => None,
                    (None, _) => Some(KernelReport::from(&p.carried.kernel)),
                },
                reattached: p.reattached,
                unread_at_exit: p.unread_at_exit,
            }
        })
        .collect();
    let sum = |f: fn(&TapPortReport) -> u64| ports.iter().map(f).sum::<u64>();
    let kernel = |f: fn(&KernelReport) -> u64| {
        ports
            .iter()
            .filter_map(|p| p.kernel.as_ref().map(f))
            .sum::<u64>()
    };
    let tap = TapReport {
        read_frames: sum(|p| p.read_frames),
        written_frames: sum(|p| p.written_frames),
        write_errors: sum(|p| p.write_errors),
        write_overruns: sum(|p| p.write_overruns),
        queued_at_exit: node.queued_frames(),
        unread_at_exit: sum(|p| p.unread_at_exit),
        kernel_ring_drops: kernel(|k| k.host_tx_dropped),
        oversize_frames: sum(|p| p.oversize_frames),
        segmented_frames: sum(|p| p.segmented_frames),
        segments: sum(|p| p.segments),
        host_rx_drops: kernel(|k| k.host_rx_dropped),
        ports_gone: io
            .ports
            .iter()
            .filter(|p| p.state == PortState::Gone)
            .map(|p| p.dev.name().to_string())
            .collect(),
        ports,
        max_read_queue_bytes: io.rx.high_water(),
        link_changes: io.link_changes,
        reattached: io.ports.iter().map(|p| p.reattached).sum(),
        realtime,
        turns: d.turns().report(),
    };
    Report {
        name: node.config().name.clone(),
        seed: node.config().seed,
        sim_time_ps: end.as_ps(),
        measure: measure(&window),
        wall_time_s: d.started().elapsed().as_secs_f64(),
        threads: 0,
        events: d.turns().count(),
        packet_hops: None,
        totals: t,
        engine: None,
        switches: vec![sw],
        flows: Vec::new(),
        collectives: Vec::new(),
        hosts: Vec::new(),
        links: Vec::new(),
        deadlocks: None,
        llr_stalls: None,
        outputs: None,
        tap: Some(tap),
        interrupted: None,
    }
}
