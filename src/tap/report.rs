//! The report of a TAP run: the switch section both engines share, and the `tap` section
//! that accounts for every frame read and written, with the kernel's counters of the ports'
//! devices (TAPs and interfaces).

use super::device::Device;
use super::writer::PortIoStats;
use super::{PortState, TapSwitch};
use crate::measure::{Samples, Window};
use crate::report::json::{measure, switch_report};
use crate::report::model::{KernelReport, Report, TapPortReport, TapReport, Totals};
use lossless_buffer_model::Time;
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
        let end = self.now();
        let mut t = Totals::default();
        let window = Window {
            from: Time::ZERO,
            to: end,
            start: Samples::take([&self.sw], [], Time::ZERO).zeroed(),
            end: Samples::take([&self.sw], [], end),
        };
        let sw = switch_report(&self.sw, 0, end, &window, &mut t);
        let ports: Vec<TapPortReport> = self
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let s = &p.stats;
                let name = Some(p.dev.name().to_string());
                let iface = matches!(*p.dev, Device::Iface(..));
                TapPortReport {
                    port: self.sw.config().ports[i].name.clone(),
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
                    checksums_completed: p.carried.checksums
                        + p.dev.checksums_completed()
                        + PortIoStats::get(&s.checksums_completed),
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
            queued_at_exit: self.sw.queued_frames(),
            unread_at_exit: sum(|p| p.unread_at_exit),
            kernel_ring_drops: kernel(|k| k.host_tx_dropped),
            oversize_frames: sum(|p| p.oversize_frames),
            segmented_frames: sum(|p| p.segmented_frames),
            segments: sum(|p| p.segments),
            host_rx_drops: kernel(|k| k.host_rx_dropped),
            ports_gone: self
                .ports
                .iter()
                .filter(|p| p.state == PortState::Gone)
                .map(|p| p.dev.name().to_string())
                .collect(),
            ports,
            max_read_queue_bytes: self.rx.high_water(),
            link_changes: self.link_changes,
            reattached: self.ports.iter().map(|p| p.reattached).sum(),
            realtime: self.realtime,
            turns: self.turns.report(),
        };
        Report {
            name: self.sw.config().name.clone(),
            seed: self.sw.config().seed,
            sim_time_ps: end.as_ps(),
            measure: measure(&window),
            wall_time_s: self.start.elapsed().as_secs_f64(),
            events: self.turns.count(),
            packet_hops: None,
            totals: t,
            engine: None,
            switches: vec![sw],
            flows: Vec::new(),
            collectives: Vec::new(),
            hosts: Vec::new(),
            links: Vec::new(),
            deadlocks: None,
            outputs: None,
            tap: Some(tap),
            interrupted: None,
        }
    }
}
