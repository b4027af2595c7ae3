//! A run's pcap read back: its PFC frames decode to the priorities and quanta that were
//! sent, their number matches the switch counters, and tshark agrees.

use lossless_pipeline::link::ControlFrame;
use lossless_pipeline::parser::parse;
use pcap_file::pcap::PcapReader;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

fn tmp() -> PathBuf {
    common::own_dir("pcap")
}

/// (enable, quanta) of every PFC frame in a capture, plus the number of frames.
fn pfc_frames(path: &Path) -> (Vec<(u8, [u16; 8])>, usize) {
    let mut r = PcapReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut out = Vec::new();
    let mut n = 0;
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        n += 1;
        if let Ok(h) = parse(&p.data, p.orig_len + 4) {
            if let Some(ControlFrame::Pfc { enable, quanta }) = h.control {
                out.push((enable, quanta));
            }
        }
    }
    (out, n)
}

/// Frames of the pcap at `path` that Wireshark's dissectors (tshark) match with `filter`.
fn tshark_count(path: &Path, filter: &str) -> usize {
    common::needs::tools(&[("tshark", "tshark")]);
    let o = Command::new("tshark")
        .arg("-r")
        .arg(path)
        .arg("-Y")
        .arg(filter)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).lines().count()
}

fn run(file: &Path, dir: &Path, json: &Path, extra: &[&str]) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args([
            "run",
            file.to_str().unwrap(),
            "--quiet",
            "--pcap-dir",
            dir.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ])
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

#[test]
fn pfc_frames_in_the_pcap_match_counters_and_tshark() {
    let dir = tmp().join("incast");
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/labs/incast-pfc.yaml");
    let r = run(&file, &dir, &tmp().join("incast.json"), &[]);
    let pcap = dir.join("tor-Ethernet1.pcap");
    let (frames, total) = pfc_frames(&pcap);
    let port = &r["switches"][0]["ports"][1]["pfc"];
    let (xoff, xon) = (
        port["tx_xoff"][3].as_u64().unwrap(),
        port["tx_xon"][3].as_u64().unwrap(),
    );
    assert!(xoff > 0 && xon > 0);
    let seen_xoff = frames
        .iter()
        .filter(|(e, q)| *e == 1 << 3 && q[3] == 0xFFFF)
        .count() as u64;
    let seen_xon = frames
        .iter()
        .filter(|(e, q)| *e == 1 << 3 && q[3] == 0)
        .count() as u64;
    assert_eq!((seen_xoff, seen_xon), (xoff, xon));
    assert_eq!(frames.len() as u64, xoff + xon, "only priority-3 frames");
    // Data both ways plus PFC: everything the port sent and received.
    let p = &r["switches"][0]["ports"][1];
    assert_eq!(
        total as u64,
        p["tx_packets"].as_u64().unwrap() + p["rx_packets"].as_u64().unwrap()
    );
}

/// Wireshark reads the incast's PFC frames as this project's own reader does.
#[test]
#[ignore = "needs tshark (Debian package tshark; scripts/test)"]
fn tshark_reads_the_incasts_pfc_frames_alike() {
    let dir = tmp().join("incast-tshark");
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/labs/incast-pfc.yaml");
    let r = run(&file, &dir, &tmp().join("incast-tshark.json"), &[]);
    let pcap = dir.join("tor-Ethernet1.pcap");
    let (frames, _) = pfc_frames(&pcap);
    let xoff = r["switches"][0]["ports"][1]["pfc"]["tx_xoff"][3]
        .as_u64()
        .unwrap();
    assert!(xoff > 0);
    assert_eq!(tshark_count(&pcap, "macc.opcode == 0x0101"), frames.len());
    assert_eq!(
        tshark_count(&pcap, "macc.cbfc.pause_time.c3 == 65535") as u64,
        xoff
    );
}

#[test]
fn injected_pfc_frames_decode_to_what_the_scenario_said() {
    let text = "# inject\nduration: 20us\nswitches:\n  - name: s\n    ports: {count: 2}\n\
                outputs: {pcap: {ports: [s:Ethernet0]}}\n\
                events:\n  - {at: 1us, port: s:Ethernet0, inject: {pfc: {3: 1000, 4: 0, 6: 7}}}\n  - {at: 2us, port: s:Ethernet0, inject: {pfc: {3: 0}}}\n";
    let file = tmp().join("inject.yaml");
    std::fs::write(&file, text).unwrap();
    let dir = tmp().join("inject");
    let r = run(&file, &dir, &tmp().join("inject.json"), &[]);
    let pcap = dir.join("s-Ethernet0.pcap");
    let (frames, _) = pfc_frames(&pcap);
    assert_eq!(
        frames,
        vec![
            ((1 << 3) | (1 << 4) | (1 << 6), [0, 0, 0, 1000, 0, 0, 7, 0]),
            (1 << 3, [0; 8])
        ]
    );
    // The switch acts on its PFC-enabled priorities (3, 4) only: 6 is not enabled.
    let pfc = &r["switches"][0]["ports"][0]["pfc"];
    assert_eq!(pfc["rx_xoff"][3], 1);
    assert_eq!(pfc["rx_xon"][4], 1);
    assert_eq!(pfc["rx_xon"][3], 1);
    assert_eq!(pfc["rx_xoff"][6], 0);
    // Paused on 3 from 1 µs until the XON at 2 µs.
    assert_eq!(pfc["rx_pause_ps"][3], 1_000_000);
}

/// Wireshark reads the two injected PFC frames.
#[test]
#[ignore = "needs tshark (Debian package tshark; scripts/test)"]
fn tshark_reads_the_injected_pfc_frames() {
    let text = "# inject\nduration: 20us\nswitches:\n  - name: s\n    ports: {count: 2}\n\
                outputs: {pcap: {ports: [s:Ethernet0]}}\n\
                events:\n  - {at: 1us, port: s:Ethernet0, inject: {pfc: {3: 1000, 4: 0, 6: 7}}}\n  - {at: 2us, port: s:Ethernet0, inject: {pfc: {3: 0}}}\n";
    let file = tmp().join("inject-tshark.yaml");
    std::fs::write(&file, text).unwrap();
    let dir = tmp().join("inject-tshark");
    run(&file, &dir, &tmp().join("inject-tshark.json"), &[]);
    assert_eq!(
        tshark_count(&dir.join("s-Ethernet0.pcap"), "macc.opcode == 0x0101"),
        2
    );
}
