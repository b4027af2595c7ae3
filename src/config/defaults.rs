//! Every default of a scenario or switch file, written once. The resolvers take their
//! defaults from here, and `lossless check --defaults` prints [`table`].

use lossless_buffer_model::mmu::PoolKind;
use lossless_buffer_model::watchdog::WatchdogAction;
use lossless_buffer_model::wred::MarkAt;
use lossless_buffer_model::{Bytes, Length, Named, Rate, Time};
use lossless_pipeline::config::{GroupMode, Trust};
use lossless_pipeline::wire::addr::{Ecn, MacAddr};
use lossless_ports::host::PfcMode;

/// Seed of every random choice (WRED).
pub const SEED: u64 = 1;
/// Port speed.
pub const SPEED: Rate = Rate::gbps(100);
/// Cable length (5 ns per metre).
pub const CABLE: Length = Length(2_000);
/// Largest frame, FCS included (vendors' "9216").
pub const MTU: u32 = 9216;
/// Last bit in to earliest first bit out.
pub const PIPELINE_LATENCY: Time = Time::from_ns(500);
/// Buffer cell.
pub const CELL: Bytes = Bytes(256);
/// Classification source.
pub const TRUST: Trust = Trust::Dscp;
/// PFC-enabled priorities (3 and 4, SONiC's).
pub const PFC_ENABLE: u8 = (1 << 3) | (1 << 4);
/// Quanta in XOFF frames (switches and NICs).
pub const PAUSE_QUANTA: u16 = 0xFFFF;
/// How long after a PFC frame arrives a port may still start frames.
pub const PFC_RESPONSE: Time = Time::ZERO;
/// DWRR weight of a queue.
pub const DWRR_WEIGHT: u32 = 1;
/// WRED drop/mark probability at Kmax, %.
pub const WRED_MAX_PROBABILITY: u8 = 100;
/// When WRED/ECN decides.
pub const MARK_AT: MarkAt = MarkAt::Enqueue;
/// PFC watchdog action.
pub const PFCWD_ACTION: WatchdogAction = WatchdogAction::Drop;
/// PFC watchdog detection time.
pub const PFCWD_DETECTION: Time = Time::from_ms(200);
/// PFC watchdog restoration time.
pub const PFCWD_RESTORATION: Time = Time::from_ms(200);
/// Learned FDB entries kept at most.
pub const FDB_SIZE: usize = 16_384;
/// A learned FDB entry ages out this long after its MAC was last seen (SONiC's).
pub const FDB_AGING: Time = Time::from_ms(600_000);
/// Next-hop group mode.
pub const GROUP_MODE: GroupMode = GroupMode::Hash;
/// The deadlock indicator: how long a cycle of paused queues must stand.
pub const DEADLOCK_TIME: Time = Time::from_ms(10);
/// Flowlet groups: idle gap that starts a new flowlet (SAI ARS example: 256 µs).
pub const FLOWLET_IDLE_TIME: Time = Time::from_us(256);
/// Flowlet groups: flow-table entries (SAI ARS example: 512).
pub const FLOWLET_MAX_FLOWS: u32 = 512;
/// Flowlet groups: past-load sampling interval (SAI ARS example: 16 µs).
pub const FLOWLET_SAMPLING_INTERVAL: Time = Time::from_us(16);
/// Default plan: the lossless pools' shared size (ingress and egress).
pub const LOSSLESS_POOL: Bytes = Bytes(24_000_000);
/// Default plan: the lossy pools' shared size (ingress and egress).
pub const LOSSY_POOL: Bytes = Bytes(8_000_000);
/// Default plan: α = 2^n of lossless PGs (1/8).
pub const LOSSLESS_DYNAMIC_TH: i8 = -3;
/// Lossy PGs and queues: α = 2^n (8).
pub const LOSSY_DYNAMIC_TH: i8 = 3;
/// Default plan: bytes reserved per lossy queue.
pub const LOSSY_QUEUE_RESERVED: Bytes = Bytes(1518);
/// Default plan: XON hysteresis of a lossless PG, in MTUs.
pub const XON_OFFSET_MTUS: u64 = 2;
/// Host NIC: PFC honoured.
pub const NIC_PFC: PfcMode = PfcMode::Honor;
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
/// Bytes of each frame a pcap capture keeps.
pub const SNAPLEN: u32 = 128;
/// Where outputs go, relative to the working directory.
pub const OUTPUT_DIR: &str = "out";

/// PFC watchdog poll period: a quarter of the shorter of detection and restoration time.
pub fn pfcwd_polling(detection: Time, restoration: Time) -> Time {
    Time(detection.min(restoration).as_ps() / 4).max(Time(1))
}

/// Host NIC receive buffer: XOFF at half the buffer.
pub fn nic_pfc_xoff(rx_buffer: Bytes) -> Bytes {
    Bytes(rx_buffer.get() / 2)
}

/// Host NIC receive buffer: XON at half the XOFF level.
pub fn nic_pfc_xon(xoff: Bytes) -> Bytes {
    Bytes(xoff.get() / 2)
}

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

/// Every default as (key, value, meaning), for `lossless check --defaults`.
pub fn table() -> Vec<(&'static str, String, &'static str)> {
    let pfc: Vec<String> = (0..8)
        .filter(|p| PFC_ENABLE & (1 << p) != 0)
        .map(|p| p.to_string())
        .collect();
    vec![
        ("seed", SEED.to_string(), "seed of every random choice: WRED, ECMP hash seed (seed + switch index), DLB ties"),
        ("duration", "until idle".into(), "a run without one ends when all finite flows are delivered"),
        ("measure", "the whole run".into(), "window of throughput, utilisation, pause fractions, latency"),
        ("deadlock_time", DEADLOCK_TIME.to_string(), "a cycle of PFC-paused queues that sent nothing this long is reported as a deadlock"),
        ("switches[].mac", format!("{} (switch 0)", switch_mac(0)), "base MAC; port i has base + i; switch k: 02:4c:4c:kk:kk:00"),
        ("switches[].ports.speed", SPEED.to_string(), "line rate"),
        ("switches[].ports.cable", CABLE.to_string(), "5 ns per metre (or `delay`)"),
        ("switches[].ports.mtu", MTU.to_string(), "largest frame, FCS included"),
        ("switches[].pipeline_latency", PIPELINE_LATENCY.to_string(), "last bit in to earliest first bit out"),
        ("switches[].buffer", "Tomahawk-like plan".into(), "see the buffer.* lines below"),
        ("buffer.cell", CELL.to_string(), "accounting unit"),
        ("buffer.pools", format!("{} {} lossless + {} lossy", PoolKind::Ingress.word(), LOSSLESS_POOL, LOSSY_POOL), "seen from ingress and from egress"),
        ("buffer lossless PGs", format!("dynamic_th {LOSSLESS_DYNAMIC_TH}, headroom: the larger computed minimum, xon_offset {XON_OFFSET_MTUS} MTUs"), "one per pfc_enable priority"),
        ("buffer lossy PGs and queues", format!("dynamic_th {LOSSY_DYNAMIC_TH}; queues reserve {LOSSY_QUEUE_RESERVED}"), "every other PG and queue"),
        ("qos.trust", TRUST.word().into(), "classify by DSCP (or dot1p)"),
        ("qos.dscp_to_tc", "3→3, 4→4, 48→6, others→1".into(), "SONiC's map"),
        ("qos.dot1p_to_tc / tc_to_pg / tc_to_queue", "identity".into(), "class p ↔ priority, PG and queue p"),
        ("qos.pfc_enable", format!("[{}]", pfc.join(", ")), "lossless priorities"),
        ("qos.pfc_asym", "off".into(), "on: honour received PFC on every priority, send it only for pfc_enable (SONiC asymmetric PFC)"),
        ("qos.pause_quanta", PAUSE_QUANTA.to_string(), "quanta in XOFF frames, refreshed every half pause"),
        ("qos.pfc_response", PFC_RESPONSE.to_string(), "a PFC frame takes effect this long after it arrives"),
        ("qos.scheduler", format!("dwrr, weight {DWRR_WEIGHT}"), "every queue"),
        ("qos.wred_profiles.*", format!("{WRED_MAX_PROBABILITY}% at Kmax, {}, ecn_none", MARK_AT.word()), "drop probability, when, ECN"),
        ("qos.pfcwd", format!("{}, detection {PFCWD_DETECTION}, restoration {PFCWD_RESTORATION}, polling a quarter of the shorter", PFCWD_ACTION.word()), "when pfcwd is given"),
        ("forwarding", format!("l2, fdb_size {FDB_SIZE}, fdb_aging {FDB_AGING}"), "learning + flooding; fdb_aging 0 never ages"),
        ("forwarding.groups.*.mode", GROUP_MODE.word().into(), "ECMP by 5-tuple hash"),
        ("forwarding.groups.*.idle_time", FLOWLET_IDLE_TIME.to_string(), "flowlet: idle gap that starts a new flowlet"),
        ("forwarding.groups.*.max_flows", FLOWLET_MAX_FLOWS.to_string(), "flowlet: flow-table entries; beyond, new flows hash"),
        ("forwarding.groups.*.sampling_interval", FLOWLET_SAMPLING_INTERVAL.to_string(), "flowlet: past-load EWMA sample period"),
        ("routes[].mac / members[].mac", "the MAC of what is cabled to the port".into(), "lossless run only; lossless tap needs it"),
        ("hosts[].mac / ip", format!("{} / 198.18.0.1 (host 0)", host_mac(0)), "from the host's index"),
        ("hosts[].nic", format!("pfc {}, pfc_response {PFC_RESPONSE}, no receive limit", NIC_PFC.word()), "pfc_xoff half the rx_buffer, pfc_xon half pfc_xoff"),
        ("flows[]", format!("udp, dscp {DSCP}, ecn {}, frame {FRAME}, greedy, start 0", ECN.word()), "priority: the class the attached switch gives it"),
        ("flows[].src_port / dst_port", format!("{SRC_PORT_BASE} + index / {DST_PORT} (rocev2: 4791)"), "UDP ports"),
        ("outputs.pcap", format!("snaplen {SNAPLEN}, dir {OUTPUT_DIR}/<file stem>"), "both directions of each port"),
        ("outputs.timeseries.csv", format!("{OUTPUT_DIR}/<file stem>-timeseries.csv"), "one row per node, port, priority and sample"),
        ("outputs.timeseries", "sample interval, every port and host, priorities 0-7, the whole run, format long".to_string(), "`sample: change` and `format: wide` on request"),
    ]
}
