//! Where the defaults of a scenario or switch file live, and `lossless check --defaults`.
//!
//! Every configuration type has its defaults in its own `Default` (or its own associated
//! constants), in its own crate: [`PortConfig`], [`QosConfig`], [`Forwarding`],
//! [`FlowletConfig`] and [`SwitchConfig`] with the built-in buffer plan
//! ([`default_plan`]) in `lossless-pipeline`; [`WatchdogConfig`], the WRED and DWRR
//! constants in `lossless-buffer-model`; [`NicConfig`], [`RxBuffer`] and [`DcqcnParams`]
//! in `lossless-ports`. What is left here are the keys only a scenario file has (flows,
//! outputs, the deadlock indicator, host and switch addresses). The resolvers take their
//! defaults from these places, and [`table`] prints them from the same places.

use lossless_buffer_model::scheduler::{Discipline, DEFAULT_DWRR_WEIGHT};
use lossless_buffer_model::watchdog::WatchdogConfig;
use lossless_buffer_model::wred::{self, MarkAt};
use lossless_buffer_model::{priorities_in, Bytes, Named, Time};
use lossless_pipeline::config::{
    FlowletConfig, Forwarding, GroupMode, PortConfig, QosConfig, SwitchConfig,
};
use lossless_pipeline::default_plan;
use lossless_pipeline::wire::addr::{Ecn, MacAddr};
use lossless_ports::dcqcn::DcqcnParams;
use lossless_ports::host::{NicConfig, RxBuffer};
use lossless_ports::rc::{RcConfig, NCCL_IB_TIMEOUT};

/// Seed of every random choice (WRED, ECMP hash seeds, DLB ties).
pub const SEED: u64 = SwitchConfig::DEFAULT_SEED;
/// The deadlock indicator: how long a cycle of paused queues must stand.
pub const DEADLOCK_TIME: Time = Time::from_ms(10);
/// Flow frame size, FCS included.
pub const FRAME: Bytes = Bytes(1518);
/// Flow DSCP.
pub const DSCP: u8 = 0;
/// Flow ECN codepoint.
pub const ECN: Ecn = Ecn::NotEct;
/// First UDP source port of flows (flow i uses this + i).
pub const SRC_PORT_BASE: u16 = 49_152;
/// UDP destination port of plain UDP flows.
pub const DST_PORT: u16 = 5001;
/// Payload bytes of each message of an RC flow without `size` or `message_size`.
pub const MESSAGE_SIZE: Bytes = Bytes(1 << 20);
/// TCP socket buffer (send and receive, both ends).
pub const TCP_BUFFER: Bytes = Bytes(4 << 20);
/// First TCP destination port (iperf3's); flow i uses this + i.
pub const TCP_PORT: u16 = 5201;
/// Iterations of a collective.
pub const ITERATIONS: u64 = 1;
/// Bytes of each frame a pcap capture keeps.
pub const SNAPLEN: u32 = 128;
/// Where outputs go, relative to the working directory.
pub const OUTPUT_DIR: &str = "out";

/// Base MAC of the `index`-th switch of a file: `02:4c:4c:ii:ii:00` (locally administered
/// unicast), so that every switch's ports differ; port i has this + i.
pub fn switch_mac(index: usize) -> MacAddr {
    MacAddr([0x02, 0x4C, 0x4C, (index >> 8) as u8, index as u8, 0x00])
}

/// MAC of the `index`-th host (0-based): `02:00:00:xx:yy:zz` from index + 1.
pub fn host_mac(index: usize) -> MacAddr {
    let n = index as u32 + 1;
    MacAddr([0x02, 0, 0, (n >> 16) as u8, (n >> 8) as u8, n as u8])
}

/// IPv4 address of the `index`-th host (0-based): in 198.18.0.0/15 from index + 1.
pub fn host_ip(index: usize) -> [u8; 4] {
    let n = index as u32 + 1;
    [198, 18 + (n >> 16) as u8 % 2, (n >> 8) as u8, n as u8]
}

/// The priorities set in `mask`, as `[3, 4]`.
fn priorities(mask: u8) -> String {
    let p: Vec<String> = priorities_in(mask).map(|p| p.to_string()).collect();
    format!("[{}]", p.join(", "))
}

/// Every default as (key, value, meaning), for `lossless check --defaults`, read from the
/// types' own defaults.
pub fn table() -> Vec<(&'static str, String, &'static str)> {
    let port = PortConfig::default();
    let qos = QosConfig::default();
    let cbfc = lossless_pipeline::link::cbfc::CbfcSetup::default();
    let sw = SwitchConfig::with_ports("", Vec::new());
    let mmu = lossless_buffer_model::mmu::Behaviour::default();
    let wd = WatchdogConfig::default();
    let flowlet = FlowletConfig::default();
    let nic = NicConfig::default();
    let dcqcn = DcqcnParams::default();
    let weight = match qos.scheduler[0] {
        Discipline::Dwrr(w) => format!("dwrr, weight {w}"),
        Discipline::Strict => "strict".into(),
    };
    let pools: Vec<String> = default_plan::POOLS
        .iter()
        .map(|(name, _, size)| format!("{name} {size}"))
        .collect();
    let mut rows = vec![
        ("seed", SEED.to_string(), "seed of every random choice: WRED, ECMP hash seed (seed + switch index), DLB ties"),
        ("duration", "until idle".into(), "a run without one ends when all finite flows are delivered"),
        ("measure", "the whole run".into(), "window of throughput, utilisation, pause fractions, latency"),
        ("deadlock_time", DEADLOCK_TIME.to_string(), "a cycle of PFC-paused queues that sent nothing this long is reported as a deadlock"),
        ("switches[].mac", format!("{} (switch 0)", switch_mac(0)), "base MAC; port i has base + i; switch k: 02:4c:4c:kk:kk:00"),
        ("switches[].ports.speed", port.speed.to_string(), "line rate"),
        ("switches[].ports.cable", port.cable.to_string(), "5 ns per metre (or `delay`)"),
        ("switches[].ports.mtu", port.mtu.to_string(), "largest frame, FCS included"),
        ("switches[].pipeline_latency", sw.pipeline_latency.to_string(), "last bit in to earliest first bit out"),
        ("switches[].buffer", "Tomahawk-like plan".into(), "see the buffer.* lines below"),
        ("buffer.asic", lossless_buffer_model::asic::Asic::default().word().into(), "the chip: trident2, tomahawk, tomahawk2, tomahawk3, trident3, spectrum, spectrum2 or spectrum3 set cell, slices, ingress_sizes and the MMU rules below (docs/scenario.md)"),
        ("buffer.cell", default_plan::CELL.to_string(), "accounting unit"),
        ("buffer.slices", "1".into(), "buffer slices (Tomahawk 1: 4 XPEs), each an equal share of every pool"),
        ("buffer.crossing_packet", mmu.crossing.word().into(), "where the packet that sends XOFF is stored (shared: Tomahawk 1)"),
        ("buffer.xon_limit", mmu.xon_limit.word().into(), "XON from the live limit (latched: the one at XOFF)"),
        ("buffer.ingress_sizes", lossless_buffer_model::asic::IngressSizes::default().word().into(), "pool size = shared space, profile size = reserve (whole: Trident 2; pg_buffer: Spectrum)"),
        ("buffer.pg_fill", mmu.pg_fill.word().into(), "a PG's reserve before its share of the pool (shared_first: Spectrum)"),
        ("buffer.pg_admission / queue_admission", format!("{} / {}", mmu.pg_admission.word(), mmu.queue_admission.word()), "dynamic limits tested with the arriving packet counted (before: as it finds them)"),
        ("buffer.first_limit", mmu.first_limit.word().into(), "the PG's limit before the queue's (egress: Spectrum)"),
        ("buffer.pool_cells", mmu.pool_cells.word().into(), "pool sizes round down to whole cells (up: Broadcom)"),
        ("buffer.headroom_overhead", "0B".into(), "of each lossless PG's xoff kept by the chip (Spectrum: 95 cells)"),
        ("buffer.pools", pools.join(", "), "shared sizes; reservations and headroom are outside them"),
        ("buffer lossless PGs", format!("dynamic_th {}, headroom: the larger computed minimum, xon_offset {} MTUs", default_plan::LOSSLESS_DYNAMIC_TH, default_plan::XON_OFFSET_MTUS), "one per pfc_enable priority"),
        ("buffer lossy PGs and queues", format!("dynamic_th {}; queues reserve {}", default_plan::LOSSY_DYNAMIC_TH, default_plan::LOSSY_QUEUE_RESERVED), "every other PG and queue"),
        ("qos.trust", qos.trust.word().into(), "classify by DSCP (or dot1p)"),
        ("qos.dscp_to_tc", "3→3, 4→4, 5→2, 8→0, 46→5, 48→6, others→1".into(), "SONiC's AZURE map"),
        ("qos.dot1p_to_tc / tc_to_pg / tc_to_queue", "identity".into(), "class p ↔ priority, PG and queue p"),
        ("qos.pfc_enable", priorities(qos.pfc_enable), "lossless priorities"),
        ("qos.pfc_asym", if qos.pfc_asym { "on" } else { "off" }.into(), "on: honour received PFC on every priority, send it only for pfc_enable (SONiC asymmetric PFC)"),
        ("qos.pause_quanta", qos.pause_quanta.to_string(), "quanta in XOFF frames, refreshed every half pause"),
        ("qos.pfc_response", qos.pfc_response.to_string(), "a PFC frame takes effect this long after it arrives"),
        ("qos.flow_control", qos.flow_control.word().into(), "the ports' link protocol: pfc, pause, cbfc or none"),
        ("cbfc.credit_size / packet_overhead", format!("{}B / {}", cbfc.credit_size, cbfc.overhead), "a frame costs ceil((len + overhead) / credit_size) credits"),
        ("cbfc.vcs", "qos.pfc_enable".into(), "credited virtual channels (TC n = VC n)"),
        ("cbfc.credits", crate::config::switch::cbfc::DEFAULT_CREDITS.to_string(), "per credited VC; its PG reserves the cells they can fill"),
        ("cbfc.mode", cbfc.mode.word().into(), "per-VC sender limits"),
        ("cbfc.cf_min_spacing / cf_max_spacing", format!("{} / {}", cbfc.cf_min_spacing, cbfc.cf_max_spacing), "CF_Update spacing, bytes at line rate"),
        ("cbfc.cc_interval", cbfc.cc_interval.to_string(), "CC_Update period (credits of lost frames come back)"),
        ("cbfc.idle_updates", "periodic; on_demand on a tap link: port".into(), "whether CC_Updates and CF refreshes that say nothing new go out at idle"),
        ("qos.scheduler", weight, "every queue"),
        ("qos.scheduler.*.weight", DEFAULT_DWRR_WEIGHT.to_string(), "a dwrr entry without a weight"),
        ("qos.wred_profiles.*", format!("{}% at Kmax, {}, ecn_none", wred::DEFAULT_MAX_PROBABILITY, MarkAt::default().word()), "drop probability, when, ECN"),
        ("switches[].acl", "none".into(), "ACL tables: a frame no rule matches is forwarded; highest priority wins"),
        ("qos.pfcwd", format!("{}, detection {}, restoration {}, polling a quarter of the shorter", wd.action.word(), wd.detection_time, wd.restoration_time), "when pfcwd is given"),
        ("forwarding", format!("l2, fdb_size {}, fdb_aging {}", Forwarding::DEFAULT_FDB_SIZE, Forwarding::DEFAULT_FDB_AGING), "learning + flooding; fdb_aging 0 never ages"),
        ("forwarding.groups.*.mode", GroupMode::default().word().into(), "ECMP by 5-tuple hash"),
        ("forwarding.groups.*.idle_time", flowlet.idle_time.to_string(), "flowlet: idle gap that starts a new flowlet"),
        ("forwarding.groups.*.max_flows", flowlet.max_flows.to_string(), "flowlet: flow-table entries; beyond, new flows hash"),
        ("forwarding.groups.*.sampling_interval", flowlet.sampling_interval.to_string(), "flowlet: past-load EWMA sample period"),
        ("routes[].mac / members[].mac", "the MAC of what is cabled to the port".into(), "lossless run only; lossless tap needs it"),
        ("hosts[].mac / ip", format!("{} / 198.18.0.1 (host 0)", host_mac(0)), "from the host's index"),
        ("hosts[].nic", format!("pfc {}, pfc_response {}, no receive limit", nic.pfc.word(), nic.pfc_response), "pfc_enable: the switch's"),
        ("hosts[].nic.pfc_xoff / pfc_xon", format!("{} / {} of a 1MB rx_buffer", RxBuffer::default_xoff(Bytes(1_000_000)), RxBuffer::default_xon(RxBuffer::default_xoff(Bytes(1_000_000)))), "half the rx_buffer; half of pfc_xoff"),
    ];
    rows.extend(dcqcn_rows(&dcqcn));
    rows.extend([
        (
            "flows[]",
            format!(
                "udp, dscp {DSCP}, ecn {}, frame {FRAME}, greedy, start 0",
                ECN.word()
            ),
            "priority: the class the attached switch gives it",
        ),
        (
            "flows[].src_port / dst_port",
            format!("{SRC_PORT_BASE} + index / {DST_PORT} (rocev2: 4791)"),
            "UDP ports",
        ),
        rc_row(),
        (
            "flows[].messages / message_size",
            format!("size is one message / {MESSAGE_SIZE}"),
            "RC: without size or messages, messages for the whole run",
        ),
        (
            "flows[].tcp",
            format!("congestion cubic, buffer {TCP_BUFFER}, dst_port {TCP_PORT} + index"),
            "protocol: tcp; MSS: the ports' IP MTU − 40",
        ),
        (
            "collectives[]",
            format!("algorithm ring, iterations {ITERATIONS}, start 0, dscp {DSCP}, transport rc, frame: the largest IB MTU the ports carry + 62"),
            "rc: as flows[].rc",
        ),
        (
            "outputs.pcap",
            format!("snaplen {SNAPLEN}, dir {OUTPUT_DIR}/<file stem>"),
            "both directions of each port",
        ),
        (
            "outputs.timeseries.csv",
            format!("{OUTPUT_DIR}/<file stem>-timeseries.csv"),
            "one row per node, port, priority and sample",
        ),
        (
            "outputs.timeseries",
            "sample interval, every port and host, priorities 0-7, the whole run, format long"
                .to_string(),
            "`sample: change` and `format: wide` on request",
        ),
        (
            "lossless tap: TAP ring (fixed)",
            format!("{} frames", crate::cable::RING_FRAMES),
            "each TAP's kernel transmit queue; frames beyond it are the kernel's drops",
        ),
        (
            "lossless tap: read queue (fixed)",
            Bytes(crate::cable::READ_QUEUE_BYTES as u64).to_string(),
            "per port and round: what the pipeline thread reads before the switch sees it; both bound a TAP port's headroom need",
        ),
    ]);
    rows
}

/// The RC queue pair's row of [`table`].
fn rc_row() -> (&'static str, String, &'static str) {
    let rc = RcConfig::default();
    (
        "flows[].rc",
        format!(
            "ack_every {}, recovery {}, rto {} (4.096us × 2^{NCCL_IB_TIMEOUT}, NCCL_IB_TIMEOUT), retry_count {}, ack_dscp: the flow's",
            rc.ack_every,
            rc.recovery.word(),
            rc.rto,
            rc.retry_count
        ),
        "transport: rc; NCCL's defaults",
    )
}

/// The DCQCN rows of [`table`] (`hosts[].nic.dcqcn: {}` takes them all).
fn dcqcn_rows(p: &DcqcnParams) -> Vec<(&'static str, String, &'static str)> {
    vec![
        (
            "hosts[].nic.dcqcn.g",
            format!("{} (1/{})", p.g, (1.0 / p.g).round()),
            "α gain",
        ),
        (
            "hosts[].nic.dcqcn.alpha_timer",
            p.alpha_timer.to_string(),
            "α decays by (1 − g) after this long without a CNP (K)",
        ),
        (
            "hosts[].nic.dcqcn.rate_timer",
            p.rate_timer.to_string(),
            "rate-increase timer (T)",
        ),
        (
            "hosts[].nic.dcqcn.byte_counter",
            Bytes(p.byte_counter).to_string(),
            "rate-increase byte counter (B)",
        ),
        (
            "hosts[].nic.dcqcn.fast_recovery",
            p.fast_recovery.to_string(),
            "fast-recovery steps (F)",
        ),
        (
            "hosts[].nic.dcqcn.rai / rhai",
            format!("{} / {}", p.rai, p.rhai),
            "additive / hyper increase steps",
        ),
        (
            "hosts[].nic.dcqcn.min_rate",
            p.min_rate.to_string(),
            "lowest rate a cut reaches",
        ),
        (
            "hosts[].nic.dcqcn.cnp_interval",
            p.cnp_interval.to_string(),
            "at most one CNP per QP per this (notification point)",
        ),
        (
            "hosts[].nic.dcqcn.cnp_dscp",
            p.cnp_dscp.to_string(),
            "DSCP of CNPs (class 6 in SONiC's map)",
        ),
    ]
}
