//! Replaying sonic-mgmt's QoS SAI tests (`tests/saitests/py3/sai_qos_tests.py`) on switches
//! imported from the config_db.json files of tests/data/sonic: the test's destination port
//! has transmit disabled from the start (so nothing leaks out, and `pkts_num_leak_out` is
//! not added), its source hosts ignore PFC as a PTF port does, and each of its `send_packet`
//! calls is one flow, started after the previous one has left.

use super::{run, scenario};
use serde_json::Value;

/// One switch of a qos_params file: the config_db it is imported from and the ports a test
/// uses (all on 300 m cables, the profile the counts were taken with).
pub struct Sku {
    /// The switch's name in the replay (the chip's qos_params suffix: `th`, `td2`).
    pub name: &'static str,
    /// What the test's qos_params row is called (`40000_300m`).
    pub row: &'static str,
    /// File under tests/data/sonic.
    pub file: &'static str,
    /// Spine-facing (300 m) ports, the first the test's destination.
    pub ports: &'static [&'static str],
    /// Line rate in Gb/s.
    pub gbps: u64,
}

/// Force10-S6100 (Tomahawk), 40G.
pub const S6100_40G: Sku = Sku {
    name: "th",
    row: "40000_300m",
    file: "force10-s6100-t1.json",
    ports: &[
        "Ethernet0",
        "Ethernet1",
        "Ethernet2",
        "Ethernet3",
        "Ethernet4",
        "Ethernet5",
    ],
    gbps: 40,
};

/// The first spine-facing (300 m) ports of an Arista-7060CX-32S-C32.
const A7060_PORTS: &[&str] = &[
    "Ethernet0",
    "Ethernet4",
    "Ethernet8",
    "Ethernet12",
    "Ethernet16",
    "Ethernet20",
];

/// Arista-7060CX-32S-C32 (Tomahawk) with every port set to 50G.
pub const A7060_50G: Sku = Sku {
    name: "th",
    row: "50000_300m",
    file: "arista-7060cx-32s-c32-t1-50g.json",
    ports: A7060_PORTS,
    gbps: 50,
};

/// Arista-7060CX-32S-C32 (Tomahawk), 100G.
pub const A7060_100G: Sku = Sku {
    name: "th",
    row: "100000_300m",
    file: "arista-7060cx-32s-c32-t1.json",
    ports: A7060_PORTS,
    gbps: 100,
};

/// The three, one per speed qos_params.th.yaml gives counts for.
pub const TOMAHAWK: [&Sku; 3] = [&S6100_40G, &A7060_50G, &A7060_100G];

/// Force10-S6000 (Trident 2), 40G, rendered as a T1 (all 32 ports with lossless PGs 3-4).
pub const S6000_40G: Sku = Sku {
    name: "td2",
    row: "40000_300m",
    file: "force10-s6000-t1.json",
    ports: &[
        "Ethernet0",
        "Ethernet4",
        "Ethernet8",
        "Ethernet12",
        "Ethernet16",
        "Ethernet20",
    ],
    gbps: 40,
};

/// The first spine-facing (300 m) ports of an NVIDIA SKU rendered as a T1.
const ACS_PORTS: &[&str] = &[
    "Ethernet0",
    "Ethernet4",
    "Ethernet8",
    "Ethernet12",
    "Ethernet16",
    "Ethernet20",
];

/// ACS-MSN2700 (NVIDIA Spectrum), 32 × 100G, rendered as a T1 (the first 16 ports 300 m).
pub const MSN2700_100G: Sku = Sku {
    name: "spc",
    row: "100000_300m",
    file: "acs-msn2700-t1.json",
    ports: ACS_PORTS,
    gbps: 100,
};

/// ACS-MSN3800 (NVIDIA Spectrum-2), 64 × 100G, rendered as a T1 (the first 32 ports 300 m).
pub const MSN3800_100G: Sku = Sku {
    name: "spc",
    row: "100000_300m",
    file: "acs-msn3800-t1.json",
    ports: ACS_PORTS,
    gbps: 100,
};

/// Mellanox-SN2700-D48C8 (NVIDIA Spectrum, a shared headroom pool), 48 × 50G + 8 × 100G,
/// rendered as a T1 (the first 28 ports 300 m).
pub const SN2700_D48C8_50G: Sku = Sku {
    name: "spc",
    row: "50000_300m",
    file: "mellanox-sn2700-d48c8-t1.json",
    ports: &[
        "Ethernet0",
        "Ethernet2",
        "Ethernet4",
        "Ethernet6",
        "Ethernet8",
        "Ethernet10",
        "Ethernet12",
        "Ethernet14",
    ],
    gbps: 50,
};

/// DellEMC-Z9332f-O32 (Tomahawk 3), 32 × 400G, rendered as a T1 (the first 16 ports 300 m).
pub const Z9332F_400G: Sku = Sku {
    name: "th3",
    row: "400000_300m",
    file: "dellemc-z9332f-o32-t1.json",
    ports: &["Ethernet0", "Ethernet8", "Ethernet16", "Ethernet24"],
    gbps: 400,
};

/// One `send_packet`: `packets` frames of `frame` bytes (FCS included) with `dscp` from the
/// host on the test's source port `from` (1…) to the destination (port 0).
#[derive(Clone, Copy, Debug)]
pub struct Send {
    /// Source: index into the SKU's ports (1 or more).
    pub from: usize,
    /// DSCP.
    pub dscp: u8,
    /// Frames.
    pub packets: u64,
    /// Frame length, FCS included.
    pub frame: u64,
}

/// The test's 64-byte packets: PTF's length leaves out the FCS the NIC adds, so 68 bytes
/// on the wire (one 208-byte cell either way).
pub fn send(from: usize, dscp: u8, packets: u64) -> Send {
    Send {
        from,
        dscp,
        packets,
        frame: 68,
    }
}

/// A replay's options: the number of kept ports, their slices, when (µs) the
/// destination's transmitter comes back on.
#[derive(Clone, Debug, Default)]
pub struct Setup {
    /// Ports kept from the SKU's list (default: enough for the sends).
    pub ports: Option<usize>,
    /// `sonic.port_slices` (default: the chip's even split).
    pub port_slices: Option<Vec<u32>>,
    /// Transmit enabled again at this many µs.
    pub tx_enable_us: Option<u64>,
    /// Capture the destination port into this directory (`<switch>-<port>.pcap`).
    pub pcap_dir: Option<std::path::PathBuf>,
}

/// Run the `sends` in order on `sku` and return the JSON report.
pub fn replay(name: &str, sku: &Sku, setup: &Setup, sends: &[Send]) -> Value {
    let n = setup
        .ports
        .unwrap_or_else(|| sends.iter().map(|s| s.from).max().unwrap_or(1) + 1);
    let ports = &sku.ports[..n];
    let data = super::root().join("tests/data/sonic").join(sku.file);
    let mut sonic = format!("{{file: {}, ports: [{}]", data.display(), ports.join(", "));
    if let Some(s) = &setup.port_slices {
        let s: Vec<String> = s.iter().map(u32::to_string).collect();
        sonic += &format!(", port_slices: [{}]", s.join(", "));
    }
    sonic += "}";
    let mut hosts = String::new();
    for (i, p) in ports.iter().enumerate() {
        let nic = if i == 0 { "" } else { ", nic: {pfc: ignore}" };
        hosts += &format!("  - {{name: h{i}, attach: {}:{p}{nic}}}\n", sku.name);
    }
    // Each send starts 2 µs after the previous one's last frame has left its host.
    let mut flows = String::new();
    let mut t_ns = 0u64;
    for s in sends {
        flows += &format!(
            "  - {{src: h{}, dst: h0, dscp: {}, frame: {}, packets: {}, start: {t_ns}ns}}\n",
            s.from, s.dscp, s.frame, s.packets
        );
        t_ns += s.packets * (s.frame + 20) * 8 / sku.gbps + 2_000;
    }
    let sw = sku.name;
    let mut events = format!("  - {{at: 0ns, port: {sw}:{}, tx: disable}}\n", ports[0]);
    let mut end_us = t_ns / 1000 + 10;
    if let Some(at) = setup.tx_enable_us {
        assert!(
            at * 1000 > t_ns,
            "transmit comes back before the last send ends"
        );
        events += &format!("  - {{at: {at}us, port: {sw}:{}, tx: enable}}\n", ports[0]);
        end_us = end_us.max(at + 2_000);
    }
    let mut text = format!(
        "# sonic-mgmt QoS SAI test replay: {name} on {} ({})\nduration: {end_us}us\n\
         switches:\n  - name: {sw}\n    pipeline_latency: 0ns\n    sonic: {sonic}\n\
         hosts:\n{hosts}flows:\n{flows}events:\n{events}",
        sku.file, sku.row
    );
    let mut args = Vec::new();
    if let Some(dir) = &setup.pcap_dir {
        text += &format!(
            "outputs: {{pcap: {{ports: [{sw}:{}], snaplen: 64}}}}\n",
            ports[0]
        );
        args = vec!["--pcap-dir".to_string(), dir.display().to_string()];
    }
    let file = format!("{name}-{}.yaml", sku.row);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&scenario(&file, &text), &format!("{file}.json"), &args)
}

/// Port `p`'s (kept-port index) report.
pub fn port(r: &Value, p: usize) -> &Value {
    &r["switches"][0]["ports"][p]
}

/// XOFF frames port `p` sent for priority `prio`.
pub fn xoffs(r: &Value, p: usize, prio: usize) -> u64 {
    super::u(&port(r, p)["pfc"]["tx_xoff"][prio])
}

/// Frames the MMU dropped at ingress (lossless PGs: headroom full).
pub fn ingress_drops(r: &Value) -> u64 {
    let d = &r["switches"][0]["drops_by_reason"];
    d["headroom_full"].as_u64().unwrap_or(0) + d["ingress_limit"].as_u64().unwrap_or(0)
}

/// Frames dropped at the egress queue limit.
pub fn egress_drops(r: &Value) -> u64 {
    r["switches"][0]["drops_by_reason"]["egress_limit"]
        .as_u64()
        .unwrap_or(0)
}

/// The watermark of `pool` in the slice of port `p` (bytes), and its headroom-pool one.
pub fn pool_watermarks(r: &Value, pool: &str, slice: u64) -> (u64, u64) {
    let pools = r["switches"][0]["pools"].as_array().unwrap();
    let p = pools
        .iter()
        .find(|x| x["name"] == pool && x["slice"] == slice)
        .unwrap_or_else(|| panic!("no {pool} slice {slice}"));
    (
        super::u(&p["watermark_bytes"]),
        super::u(&p["headroom_watermark_bytes"]),
    )
}
