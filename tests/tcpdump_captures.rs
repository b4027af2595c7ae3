//! Frames nobody on this team wrote: every frame of tcpdump's Ethernet regression captures
//! (many of them fuzzer-found malformed frames) goes through `Switch::receive` without a
//! panic and is forwarded or counted under a reason; the parsed VLAN/PCP and IPv4 TOS
//! fields agree with tcpdump's own decode (`*.out`).

use lossless_buffer_model::{Rate, Time};
use lossless_pipeline::parser::{parse, Parsed, L3};
use lossless_pipeline::{presets, Packet, Switch};
use pcap_file::pcap::PcapReader;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// tcpdump's captures, carried in the repository (tests/data/tcpdump, with its licence).
fn data_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tcpdump");
    assert!(
        d.is_dir(),
        "{} is missing: it is part of the repository",
        d.display()
    );
    d
}

/// (data, orig_len) of every record a capture holds, or why it could not be read at all.
fn read_pcap(path: &Path) -> Result<Vec<(Vec<u8>, u32)>, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut r = PcapReader::new(file).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        match p {
            Ok(p) => out.push((p.data.into_owned(), p.orig_len)),
            Err(_) => break, // a truncated final record: keep what came before
        }
    }
    Ok(out)
}

#[test]
fn every_captured_frame_is_forwarded_or_counted() {
    let dir = data_dir();
    let mut files = 0;
    let mut frames = 0u64;
    let mut unreadable = Vec::new();
    let mut cfg = presets::basic(2, Rate::gbps(100));
    cfg.ports.iter_mut().for_each(|p| p.mtu = 16_383);
    let mut sw = Switch::new(cfg);
    let mut t = Time::ZERO;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "pcap") {
            continue;
        }
        match read_pcap(&path) {
            Err(e) => unreadable.push(format!("{}: {e}", path.display())),
            Ok(records) => {
                files += 1;
                for (data, orig_len) in records {
                    frames += 1;
                    sw.receive(0, Packet::new(data, orig_len.saturating_add(4)), t);
                    t += Time::from_us(1);
                    while let Some(at) = sw.next_transmit(1).filter(|at| *at <= t) {
                        let f = sw.poll_transmit(1, at).unwrap();
                        lossless_pipeline::buffers::give(f.data);
                    }
                }
            }
        }
    }
    let rx = sw.ports()[0].link.tx.counters.rx_packets;
    let pfc = sw.ports()[0].link.tx.counters.rx_pfc_frames;
    assert_eq!(rx, frames);
    assert_eq!(
        rx,
        sw.drops().total() + pfc + sw.ledger().queued,
        "every frame forwarded or counted once"
    );
    assert!(
        files > 350,
        "read {files} captures; unreadable: {unreadable:?}"
    );
    assert!(frames > 5_000, "{frames}");
    let reasons: Vec<_> = sw
        .drops()
        .nonzero()
        .map(|(r, n)| format!("{}={n}", r.name()))
        .collect();
    eprintln!(
        "{files} captures, {frames} frames: {} forwarded, {pfc} PFC consumed, drops {reasons:?}",
        sw.ledger().queued
    );
}

/// The fields tcpdump printed for one frame: VLAN (vid, pcp) in order, first IPv4 TOS.
#[derive(Debug, Default)]
struct Decoded {
    vlans: Vec<(u16, u8)>,
    tos: Option<u8>,
}

/// Parse tcpdump's numbered output into frame number → decoded fields. Only a frame's
/// first line is read: it holds the frame's own tags (`-e`) and outer IP header; later
/// lines decode payloads (tunnels, OpenFlow messages) that carry tags of their own.
fn read_out(path: &Path) -> BTreeMap<usize, Decoded> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut out: BTreeMap<usize, Decoded> = BTreeMap::new();
    for line in text.lines() {
        // A numbered line starts a frame: "    1  2019-12-08 ...".
        let trimmed = line.trim_start();
        let Some((num, rest)) = trimmed.split_once("  ") else {
            continue;
        };
        let Ok(n) = num.parse::<usize>() else {
            continue;
        };
        if !line.starts_with(' ') || rest.is_empty() {
            continue;
        }
        let d = out.entry(n).or_default();
        // Tags belong to the frame only when its EtherType (printed with -e) is a TPID;
        // vendor headers (e.g. Arista's 0xd28b) carry tags we rightly do not parse.
        let own_tags = match (line.find("ethertype "), line.find("vlan ")) {
            (Some(e), Some(v)) => e < v && line[e + 10..].starts_with("802.1Q"),
            _ => false,
        };
        let mut tail = if own_tags { line } else { "" };
        while let Some(i) = tail.find("vlan ") {
            tail = &tail[i + 5..];
            let vid: String = tail.chars().take_while(|c| c.is_ascii_digit()).collect();
            if let (Ok(v), Some(after)) =
                (vid.parse::<u16>(), tail[vid.len()..].strip_prefix(", p "))
            {
                let pcp: String = after.chars().take_while(|c| c.is_ascii_digit()).collect();
                if let Ok(pcp) = pcp.parse::<u8>() {
                    d.vlans.push((v, pcp));
                }
            }
        }
        if let Some(i) = line.find("IP (tos 0x") {
            let hex: String = line[i + 10..]
                .chars()
                .take_while(|c| c.is_ascii_hexdigit())
                .collect();
            d.tos = u8::from_str_radix(&hex, 16).ok();
        }
    }
    out
}

/// Compare our parse of `pcap` against tcpdump's decode `out`: (frames compared, mismatches).
fn compare(dir: &Path, pcap: &str, out: &str) -> (usize, Vec<String>) {
    let frames = read_pcap(&dir.join(pcap)).unwrap_or_default();
    let decoded = read_out(&dir.join(out));
    let mut compared = 0;
    let mut bad = Vec::new();
    for (i, (data, orig_len)) in frames.iter().enumerate() {
        let Some(d) = decoded.get(&(i + 1)) else {
            continue;
        };
        let Ok(p): Result<Parsed, _> = parse(data, orig_len + 4) else {
            continue;
        };
        let ours: Vec<(u16, u8)> = p.vlans[..p.vlan_count as usize]
            .iter()
            .map(|v| (v.vid, v.pcp))
            .collect();
        if !d.vlans.is_empty() {
            compared += 1;
            let theirs = &d.vlans[..d.vlans.len().min(2)];
            if ours != theirs {
                bad.push(format!(
                    "{pcap} frame {}: vlans {ours:?} vs tcpdump {theirs:?}",
                    i + 1
                ));
            }
        }
        if let (Some(tos), L3::V4 { dscp, ecn, .. }) = (d.tos, p.l3) {
            compared += 1;
            if (dscp << 2 | ecn) != tos {
                bad.push(format!(
                    "{pcap} frame {}: tos {:#x} vs tcpdump {tos:#x}",
                    i + 1,
                    dscp << 2 | ecn
                ));
            }
        }
    }
    (compared, bad)
}

#[test]
fn qinq_tags_match_tcpdump() {
    let dir = data_dir();
    let (n, bad) = compare(&dir, "802.1ad_QinQ.pcap", "802.1ad_QinQ.out");
    assert!(bad.is_empty(), "{bad:?}");
    assert!(n >= 2, "compared {n}");
    let frames = read_pcap(&dir.join("802.1ad_QinQ.pcap")).unwrap();
    let p = parse(&frames[0].0, frames[0].1 + 4).unwrap();
    assert_eq!(
        (p.vlans[0].tpid, p.vlans[0].vid, p.vlans[0].pcp),
        (0x88A8, 200, 0)
    );
    assert_eq!(
        (p.vlans[1].tpid, p.vlans[1].vid, p.vlans[1].pcp),
        (0x8100, 2001, 0)
    );
    assert_eq!(p.ethertype, 0x0806);
}

#[test]
fn accecn_dscp_and_ecn_match_tcpdump() {
    let dir = data_dir();
    let (n, bad) = compare(&dir, "accecn_handshake.pcap", "accecn_handshake.out");
    assert!(bad.is_empty(), "{bad:?}");
    assert!(n >= 4, "compared {n}");
    let frames = read_pcap(&dir.join("accecn_handshake.pcap")).unwrap();
    let p = parse(&frames[3].0, frames[3].1 + 4).unwrap();
    assert!(
        matches!(
            p.l3,
            L3::V4 {
                dscp: 0,
                ecn: 2,
                ..
            }
        ),
        "frame 4 is tos 0x2,ECT(0): {:?}",
        p.l3
    );
}

/// Every TESTLIST entry whose decode prints `vlan N, p P` or `IP (tos 0x..`.
#[test]
fn all_vlan_and_tos_decodes_match_tcpdump() {
    let dir = data_dir();
    let list = std::fs::read_to_string(dir.join("TESTLIST")).unwrap();
    let mut compared = 0;
    let mut bad = Vec::new();
    for line in list.lines() {
        let cols: Vec<_> = line.split_whitespace().collect();
        if cols.len() < 3 {
            continue;
        }
        let (n, b) = compare(&dir, cols[1], cols[2]);
        compared += n;
        bad.extend(b);
    }
    assert!(compared > 1000, "compared {compared}");
    assert!(
        bad.is_empty(),
        "{} mismatches, first: {:?}",
        bad.len(),
        &bad[..bad.len().min(10)]
    );
}
