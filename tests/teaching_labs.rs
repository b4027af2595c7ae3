//! The teaching labs with guides (docs/labs/*.md): each test asserts the guide's answers,
//! derived on paper from docs/physics.md, through `lossless run --sweep` and its JSON.

mod common;

use common::{flow, lossless, root, sweep_rows, tmp, u};
use serde_json::Value;

/// `lossless run LAB --sweep KEY=VALUES --metric totals.lossless_drops --metric PGS`.
fn sweep(lab: &str, key: &str, values: &[String]) -> Vec<(String, u64, u64)> {
    let out = format!("{lab}-{}.json", key.replace('.', "_"));
    let file = root().join(format!("configs/labs/{lab}.yaml"));
    let arg = format!("{key}={}", values.join(","));
    let metrics = ["totals.lossless_drops", "switches.tor.ports.1.pgs"];
    sweep_rows(&file, &arg, &metrics, &out)
        .iter()
        .map(|row| {
            let m = &row["metrics"];
            let pg = m["switches.tor.ports.1.pgs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|g| g["pg"] == 3)
                .expect("PG 3");
            (
                row["value"].as_str().unwrap().to_string(),
                u(&m["totals.lossless_drops"]),
                u(&pg["headroom_watermark_bytes"]),
            )
        })
        .collect()
}

const HEADROOM: f64 = 65_536.0; // 64 KiB
const CELLS: u64 = 256; // of 256 B
const RESPONSE_NS: f64 = 394.0 * 512.0 / 100.0; // 2.017 µs at 100G

/// Frames that reach the PG's headroom after XOFF, at most and at least: the crossing frame,
/// those started in W = PFC frame + round trip + response, and the one in flight when the
/// pause takes effect (which may or may not be there, by phase).
fn frames_after_xoff(frame: f64, cable_m: f64) -> (u64, u64) {
    let w = 6.72 + 2.0 * 5.0 * cable_m + RESPONSE_NS;
    let wire = (frame + 20.0) * 0.08;
    let n = (w / wire).ceil() as u64;
    (n + 1, n + 2)
}

#[test]
fn headroom_sizing_drops_begin_where_the_formula_says() {
    // Bytes (docs/physics.md, "Headroom"): 1518 + 1538 + 84 + 2·C·t_prop + C·t_resp + 1538, C·t_prop =
    // 62.5 B per metre. It is conservative here: the first 20 m step past 64 KiB by bytes
    // is no later than the first that drops.
    let need = |l: f64| 1518.0 + 1538.0 + 84.0 + 125.0 * l + 12.5 * RESPONSE_NS + 1538.0;
    let cables: Vec<u64> = (0..=20).map(|k| k * 20).collect();
    let by_formula = *cables.iter().find(|l| need(**l as f64) > HEADROOM).unwrap();
    // Frames (answer 2): 256 cells hold 42 frames of 6; the 43rd drops once the crossing
    // frame and ⌈W / 123.04 ns⌉ more, the most the window allows, exceed 42.
    let fit = CELLS / 6;
    let drops_at = |l: u64| frames_after_xoff(1518.0, l as f64).0 > fit;
    let exact = (0..1000).find(|l| drops_at(*l)).unwrap();
    let rows = sweep(
        "headroom-sizing",
        "switches.tor.ports.cable",
        &cables.iter().map(|l| format!("{l}m")).collect::<Vec<_>>(),
    );
    let first = rows.iter().find(|r| r.1 > 0).expect("drops at some length");
    let first_m: u64 = first.0.trim_end_matches('m').parse().unwrap();
    assert!(
        by_formula <= first_m,
        "formula {by_formula} m, drops {first_m} m"
    );
    assert_eq!(first_m, exact.div_ceil(20) * 20, "the 20 m sweep");
    // Metre by metre around it: clean below `exact`, drops from it; and from 290 m the
    // headroom holds the 42 frames that fit.
    let fine: Vec<u64> = vec![290, exact - 2, exact - 1, exact, exact + 1];
    let rows_fine = sweep(
        "headroom-sizing",
        "switches.tor.ports.cable",
        &fine.iter().map(|l| format!("{l}m")).collect::<Vec<_>>(),
    );
    for ((_, drops, wm), l) in rows_fine.iter().zip(&fine) {
        assert_eq!(*drops > 0, *l >= exact, "{l} m: {drops} drops");
        if *l < exact {
            assert_eq!(*wm, fit * 6 * 256, "{l} m");
        }
    }
    // Below it, the headroom used is the frames that arrived, in whole cells of 6 per frame,
    // between the least and most the window allows.
    for (v, drops, wm) in &rows {
        let l: f64 = v.trim_end_matches('m').parse().unwrap();
        if *drops == 0 {
            let (lo, hi) = frames_after_xoff(1518.0, l);
            assert!(
                (lo * 6 * 256..=hi * 6 * 256).contains(wm),
                "{v}: {wm} B vs {lo}..{hi} frames"
            );
        }
    }
}

#[test]
fn headroom_sizing_small_frames_run_out_of_cells_not_bytes() {
    let frames = [64u64, 128, 200, 256, 257, 512, 1024, 1518];
    let rows = sweep(
        "headroom-sizing",
        "flows.f.frame",
        &frames.iter().map(|f| format!("{f}B")).collect::<Vec<_>>(),
    );
    for ((v, drops, _), f) in rows.iter().zip(frames) {
        let cells = f.div_ceil(256);
        let (lo, hi) = frames_after_xoff(f as f64, 100.0);
        if lo * cells > CELLS {
            assert!(*drops > 0, "{v}: {lo}+ frames of {cells} cells cannot fit");
        }
        if hi * cells <= CELLS {
            assert_eq!(*drops, 0, "{v}: at most {hi} frames of {cells} cells fit");
        }
    }
    // The guide's four answers: 64 B and 257 B drop, 256 B and 1518 B do not, and the
    // 64-byte frames that overflow 64 KiB of headroom are under 30 KB of data.
    let drops = |f: &str| rows.iter().find(|r| r.0 == f).unwrap().1;
    assert!(drops("64B") > 0 && drops("257B") > 0);
    assert_eq!(drops("256B") + drops("1518B"), 0);
    assert!(frames_after_xoff(64.0, 100.0).1 * 64 < 30_000);
}

#[test]
fn headroom_sizing_at_the_checked_minimum_small_frames_are_lossless() {
    // Guide answer 6: `lossless check` asks for 471 cells (120,576 B) at 100 m.
    let text = std::fs::read_to_string(root().join("configs/labs/headroom-sizing.yaml")).unwrap();
    let o = lossless(&[
        "check",
        root()
            .join("configs/labs/headroom-sizing.yaml")
            .to_str()
            .unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("below the minimum 120576B (471 cells)"));
    for frame in ["64B", "257B"] {
        let t = text
            .replace("xoff: 64KiB", "xoff: 120576B")
            .replace("frame: 1518B}", &format!("frame: {frame}}}"));
        let r = common::run(
            &common::scenario(&format!("hs-min-{frame}.yaml"), &t),
            &format!("hs-min-{frame}.json"),
            &[],
        );
        assert_eq!(u(&r["totals"]["lossless_drops"]), 0, "{frame}");
    }
}

/// The lines of a `--pfc-log` file.
fn pfc_log(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn pfc_basics_answers() {
    // docs/labs/pfc-basics.md, on configs/labs/incast-pfc.yaml.
    let log = tmp("pfc-basics.jsonl");
    let r = common::run(
        &root().join("configs/labs/incast-pfc.yaml"),
        "pfc-basics.json",
        &["--pfc-log", log.to_str().unwrap()],
    );
    let log = pfc_log(&log);
    let ports = r["switches"][0]["ports"].as_array().unwrap();
    let wire_ns = 1538.0 * 0.08; // one 1518-byte frame at 100G
                                 // 1. Each PG gains 6 cells per frame time and loses a third of that to the shared
                                 //    egress: 1536 B × 2/3 / 123.04 ns = 8.32 B/ns. XOFF at α·S/(1 + 3α) = 4 MB of shared
                                 //    use, after the reserve of 1248 B in whole cells (5 × 256 = 1280 B): 480.8 µs, give
                                 //    or take two frames.
    let reserve = 1248u64.div_ceil(256) * 256;
    assert_eq!(reserve, 1280);
    let rate = 1536.0 * 2.0 / 3.0 / wire_ns; // B per ns
    let x = 16e6 / (1.0 + 3.0);
    let expect_ns = (x + reserve as f64) / rate;
    for p in &ports[1..4] {
        let t = u(&p["pfc"]["first_tx_xoff_ps"][3]) as f64 / 1000.0;
        assert!(
            (t - expect_ns).abs() < 2.0 * wire_ns,
            "{}: {t} ns vs {expect_ns}",
            p["port"]
        );
        // 4. Headroom: the crossing frame and the one on the wire, 2 × 6 cells.
        let pg = p["pgs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["pg"] == 3)
            .unwrap();
        assert_eq!(u(&pg["headroom_watermark_bytes"]), 2 * 6 * 256);
        // 3. The PG reaches one frame above x at most: a frame is admitted while its
        //    shared use after it is within α·(S − X), and when both neighbours have just
        //    drained a frame below x, X = 2(x − 1536) + (x + 1536) and S − X = x + 1536.
        let wm = u(&pg["shared_watermark_bytes"]);
        assert!(wm == x as u64 || wm == x as u64 + 1536, "{wm}");
    }
    let most = ports[1..4]
        .iter()
        .map(|p| {
            let pg = p["pgs"].as_array().unwrap().iter().find(|g| g["pg"] == 3);
            u(&pg.unwrap()["shared_watermark_bytes"])
        })
        .max()
        .unwrap();
    assert_eq!(most, x as u64 + 1536);
    let decided: Vec<&Value> = log
        .iter()
        .filter(|l| l["event"] == "xoff_decided")
        .collect();
    let most = decided.iter().map(|l| u(&l["shared_bytes"])).max().unwrap();
    assert_eq!(
        most,
        x as u64 + 1536,
        "the log's largest shared use at XOFF"
    );
    // 2. The cycle: after start-up, a PG's XOFFs come exactly 9 frame times apart. Each
    //    PG takes 3 frames a turn: after its XON (6.72 ns) and the cable (10 ns), the
    //    host's frame lands 1.22 frame times later, the next one crosses the limit (XOFF)
    //    and a third is on the wire; the PG sends XON once all three have left (headroom
    //    first), and the egress sends one frame per frame time: 3 × 3 = 9. So until the
    //    bursts shaped by the first pauses reach the head of the queue: 12 MB at
    //    12.5 B/ns = 960 µs after the first XOFF. A few microseconds later the turn is
    //    back, to the end of the run.
    let change_ps = (expect_ns + 12e6 / 12.5) * 1e3;
    for p in &ports[1..4] {
        let name = format!("tor:{}", p["port"].as_str().unwrap());
        let t: Vec<u64> = decided
            .iter()
            .filter(|l| l["port"] == name.as_str())
            .map(|l| u(&l["t_ps"]))
            .collect();
        let frames: Vec<(u64, f64)> = t
            .windows(2)
            .skip(2)
            .map(|w| (w[1], (w[1] - w[0]) as f64 / (wire_ns * 1e3)))
            .collect();
        let nine = |g: f64| (g - 9.0).abs() < 1e-6;
        let first_irregular = frames.iter().find(|(_, g)| !nine(*g)).unwrap().0 as f64;
        assert!(
            (first_irregular - change_ps).abs() < 0.01 * change_ps,
            "{name}: the turn breaks at {first_irregular} ps, derived {change_ps}"
        );
        let after: Vec<f64> = frames
            .iter()
            .filter(|(t, _)| *t as f64 > first_irregular + 10e6)
            .map(|(_, g)| *g)
            .collect();
        assert!(after.len() > 400, "{name}: {} XOFFs after", after.len());
        assert!(
            after.iter().all(|g| nine(*g)),
            "{name}: {after:?} frame times after the break"
        );
    }
    // 5. The egress queue holds every cell the PGs hold at the moment of its peak: their
    //    shared use 3x, their reserves 3 × 1280 B, and k frames of headroom: between one
    //    (the crossing frame) and two (plus the one on the wire) per PG, four in this run.
    let q = u(&ports[0]["queues"][3]["watermark_bytes"]);
    let base = 3 * x as u64 + 3 * reserve;
    assert_eq!((q - base) % 1536, 0, "{q}");
    let k = (q - base) / 1536;
    assert!((3..=6).contains(&k), "{k} frames of headroom");
    assert_eq!(q, 12_009_984, "the guide's answer");
}

#[test]
fn hol_blocking_answers() {
    // docs/labs/hol-blocking.md.
    let file = root().join("configs/labs/hol-blocking.yaml");
    let metrics = ["flows", "switches.tor.ports"];
    let rows = sweep_rows(&file, "flows.v.dscp=3,4", &metrics, "hol-sweep.json");
    let gbps = |row: &Value, f: &str| {
        let flows = &row["metrics"]["flows"];
        common::f(&common::named(flows, f)["throughput_bps"]) / 1e9
    };
    let line = 1518.0 / 1538.0 * 100.0; // 98.70 Gb/s of frames
    let third = line / 3.0;
    // 1. a, b, c: a third each (within 1 %).
    for row in &rows {
        for f in ["a", "b", "c"] {
            let t = gbps(row, f);
            assert!((t - third).abs() < 0.01 * third, "{f}: {t}");
        }
    }
    // 2. v on priority 3 gets what a gets: the same frames sent, the same rate (0.5 %).
    let hol = &rows[0];
    assert_eq!(hol["value"], "3");
    let fl = &hol["metrics"]["flows"];
    let (a, v) = (common::named(fl, "a"), common::named(fl, "v"));
    assert!(u(&a["tx_packets"]).abs_diff(u(&v["tx_packets"])) <= 1);
    assert!((gbps(hol, "v") - gbps(hol, "a")).abs() < 0.005 * third);
    // 4. v takes the empty path: 2 × 123.04 ns + 2 × 10 ns + 500 ns = 766.08 ns.
    assert_eq!(u(&v["latency_ps"]["max"]), 766_080);
    assert_eq!(u(&v["latency_ps"]["min"]), 766_080);
    // a waits behind 3 × 8 MB / 4 = 6 MB drained at 12.5 B/ns, plus the path (1 %).
    let want_ps = 6_000_000.0 * 80.0 + 766_080.0;
    let got_ps = u(&a["latency_ps"]["p50"]) as f64;
    assert!(
        (got_ps - want_ps).abs() < 0.01 * want_ps,
        "{got_ps} vs {want_ps}"
    );
    // 5. First XOFFs: Ethernet2 and Ethernet3 at (8 MB / 3.5) / (0.6 × 1536 B / 123.04 ns)
    //    = 305.2 µs (within 1 %). Ethernet1's PG then holds half of that, x/2, and its own
    //    limit is α × what the two held PGs leave, y = (8 MB − 2x) − y, so y = 1.714 MB.
    //    It gains at most one frame of `a` (1536 B) per 246.08 ns, 6.24 B/ns: its XOFF
    //    comes no sooner than (y − x/2) / 6.24 B/ns = 91.5 µs later.
    let ports = hol["metrics"]["switches.tor.ports"].as_array().unwrap();
    let first = |i: usize| u(&ports[i]["pfc"]["first_tx_xoff_ps"][3]) as f64 / 1e6;
    let want_us = 8_000_000.0 / 3.5 / (0.6 * 1536.0 / 123.04) / 1000.0;
    for i in [2, 3] {
        assert!((first(i) - want_us).abs() < 0.01 * want_us, "{}", first(i));
    }
    let x = 8_000_000.0 / 3.5;
    let y = (8_000_000.0 - 2.0 * x) / 2.0;
    let earliest_us = want_us + (y - x / 2.0) / (1536.0 / 246.08) / 1000.0;
    assert!(first(1) >= earliest_us, "{} vs {earliest_us}", first(1));
    //    In fact it keeps growing at 0.3 × 1536 B / 123.04 ns = 3.745 B/ns (the queue still
    //    drains the old mix) until it meets the others at the three-PG limit S/4; the
    //    crossing frame arrives one frame short of it, plus the empty path (0.5 %).
    let slow = 0.3 * 1536.0 / 123.04;
    let meet_us = ((8_000_000.0 / 4.0 - 1536.0) / slow + 766.08) / 1000.0;
    assert!(
        (first(1) - meet_us).abs() < 0.005 * meet_us,
        "{} vs {meet_us}",
        first(1)
    );
    // 3 and 6. On its own priority v gets the rest of h1's link: 98.70 − 32.90 (1 %).
    let own = &rows[1];
    assert_eq!(own["value"], "4");
    let want = line - third;
    assert!(
        (gbps(own, "v") - want).abs() < 0.01 * want,
        "{}",
        gbps(own, "v")
    );
    let v4 = common::named(&own["metrics"]["flows"], "v");
    assert_eq!(u(&v4["latency_ps"]["max"]), 766_080);
}

#[test]
fn pause_storm_answers() {
    // docs/labs/pause-storm.md.
    let file = root().join("configs/labs/pause-storm.yaml");
    let metrics = ["flows", "hosts", "switches.tor.ports", "totals"];
    let arg = "switches.tor.qos.pfcwd.action=drop,forward,alert";
    let rows = sweep_rows(&file, arg, &metrics, "storm-sweep.json");
    let m = |i: usize, k: &str| rows[i]["metrics"][k].clone();
    let slot = 2.0 * 123.04; // ns between two frames of a (s alternates a and v)
    let ms = |ps: u64| ps as f64 / 1e9;
    // 1. r's XOFF: the 85th frame after 1 ms, 84 to 85 slots in.
    let host = |i: usize, n: &str| common::named(&m(i, "hosts"), n).clone();
    let r_xoff = u(&host(0, "r")["pfc"]["first_tx_xoff_ps"][3]);
    let lo = 1e6 + 84.0 * slot;
    let hi = 1e6 + 85.0 * slot;
    assert!((lo..=hi).contains(&(r_xoff as f64 / 1e3)), "{r_xoff}");
    assert_eq!(u(&host(0, "r")["rx_buffer_watermark_bytes"]), 85 * 1518);
    // 2. The switch pauses s when PG 3 holds 24 MB / 9: 1737 frames of 6 cells later
    //    (within 2 µs: frames already in the pipeline).
    let ports = m(0, "switches.tor.ports");
    let sw_xoff = u(&ports[1]["pfc"]["first_tx_xoff_ps"][3]) as f64 / 1e3;
    let want = r_xoff as f64 / 1e3 + 1737.0 * slot;
    assert!((sw_xoff - want).abs() < 2_000.0, "{sw_xoff} vs {want}");
    // v stalls from then until the XON after detection (2.1 ms).
    let flow = |i: usize, n: &str| common::named(&m(i, "flows"), n).clone();
    let v = flow(0, "v");
    let gap_from = u(&v["longest_gap_from_ps"]) as f64 / 1e3;
    assert!((gap_from - sw_xoff).abs() < 1_000.0, "{gap_from}");
    let gap_end = gap_from + u(&v["longest_gap_ps"]) as f64 / 1e3;
    assert!((gap_end - 2.1e6).abs() < 2_000.0, "{gap_end}");
    // 3. Detection: the first quiet poll interval is 1.1–1.2 ms, + 1 ms.
    let wd = &ports[0]["pfcwd"][0];
    assert_eq!((u(&wd["queue"]), u(&wd["storms"])), (3, 1));
    assert_eq!(ms(u(&wd["first_storm_ps"])), 2.1);
    // 5. Restoration: r refreshes its XOFF every half pause (167.77 µs) until its XON,
    //    when reading at 12.5 B/ns from 4 ms brings 85 frames under 64,000 B: 17 refreshes,
    //    the last at 1.0208 + 17 × 167.77 µs = 3.873 ms. The queue is restored 1 ms after
    //    the poll (3.9 ms) that saw it.
    let refresh_ns = 65535.0 * 5.12 / 2.0;
    let r_xon_ns = 4e6 + (85.0 * 1518.0 - 64_000.0) / 12.5;
    let refreshes = ((r_xon_ns - r_xoff as f64 / 1e3) / refresh_ns).floor();
    let last_refresh = r_xoff as f64 / 1e3 + refreshes * refresh_ns;
    let seen = (last_refresh / 100_000.0).ceil() * 100_000.0;
    assert_eq!(u(&wd["last_restored_ps"]) as f64, (seen + 1e6) * 1e3);
    assert_eq!(
        u(&host(0, "r")["pfc"]["tx_xoff"][3]) as f64,
        refreshes + 1.0,
        "the first XOFF and its refreshes"
    );
    // 4. Dropped: the queue at detection plus a's frames while stormed (2.1–4.9 ms), ±3.
    let q = u(&ports[0]["queues"][3]["watermark_bytes"]) / 1536;
    let stormed = (4.9e6 - 2.1e6) / slot;
    let dropped = u(&wd["dropped_packets"]) as f64;
    assert!(
        (dropped - (q as f64 + stormed)).abs() <= 3.0,
        "{dropped} vs {q} + {stormed}"
    );
    assert_eq!(u(&m(0, "totals")["lossless_drops"]), 0);
    // 6. forward: the loss moves to r's NIC: the queue's content, plus the frames of `a`
    //    that reach r before it reads again at 4 ms, less what still fits in its buffer.
    //    The XON reaches s 16.72 ns after 2.1 ms, v's frame goes first (123.04 ns), then
    //    a's j-th frame starts every 246.08 ns and lands one empty path (766.08 ns) later.
    assert_eq!(rows[1]["value"], "forward");
    let fits = 256_000 / 1518 - 85;
    let first_a = 2.1e6 + 16.72 + 123.04;
    let a_frames = ((4e6 - first_a - 766.08) / slot).floor() as u64 + 1;
    let rx_drops = u(&host(1, "r")["rx_drops"]);
    assert_eq!(rx_drops, q + a_frames - fits, "{q} + {a_frames} − {fits}");
    assert_eq!(u(&m(1, "totals")["drops"]), rx_drops);
    // alert: nothing lost; v stalls until r's XON (4 ms + 65,030 B / 12.5 B/ns) lets
    // the queue drain and the PG fall below XON (within 2 µs).
    assert_eq!(rows[2]["value"], "alert");
    assert_eq!(u(&m(2, "totals")["drops"]), 0);
    let r_xon = 4e6 + (85.0 * 1518.0 - 64_000.0) / 12.5;
    assert!((u(&host(2, "r")["pfc"]["last_tx_xon_ps"][3]) as f64 / 1e3 - r_xon).abs() < 250.0);
    let v = flow(2, "v");
    let end = (u(&v["longest_gap_from_ps"]) + u(&v["longest_gap_ps"])) as f64 / 1e3;
    assert!((end - r_xon).abs() < 2_000.0, "{end} vs {r_xon}");
}

#[test]
fn slow_receiver_answers() {
    // docs/labs/slow-receiver.md.
    let r = common::run(
        &root().join("configs/labs/slow-receiver.yaml"),
        "slow-receiver.json",
        &[],
    );
    let a = flow(&r, "a");
    // 1. The drain rate (0.1 %).
    let t = common::f(&a["throughput_bps"]);
    assert!((t - 25e9).abs() < 25e6, "{t}");
    assert_eq!(u(&r["totals"]["drops"]), 0);
    // 2. The k-th frame passes 128,000 B: it arrives 766.08 + (k − 1) × 123.04 ns in, when
    //    the buffer holds k × 1518 B less what was read at 3.125 B/ns since the first.
    let host = common::named(&r["hosts"], "r");
    let read = 25.0 / 8.0; // B/ns
    let k = (1..)
        .find(|k| *k as f64 * 1518.0 - read * (*k - 1) as f64 * 123.04 > 128_000.0)
        .unwrap();
    let want_ps = 766_080 + (k - 1) * 123_040;
    assert_eq!(u(&host["pfc"]["first_tx_xoff_ps"][3]), want_ps);
    // 3. The cycle is the reading of the frames one cycle brings: just under 64,000 B at
    //    XON, the first frame lands 16.72 ns (XON on the wire and cable) + 133.04 ns (a
    //    frame and the cable) later, each further one 123.04 ns after the last; the one
    //    that passes 128,000 B sends XOFF, and one more is already on the wire.
    let mut level = 63_999.0 - read * (16.72 + 123.04 + 10.0) + 1518.0;
    let mut frames = 1;
    while level <= 128_000.0 {
        level += 1518.0 - read * 123.04;
        frames += 1;
    }
    let per_cycle = frames + 1;
    assert_eq!(per_cycle, 58, "the guide's answer");
    let cycle_ns = per_cycle as f64 * 1518.0 / read;
    // From the first XOFF to the last, one cycle per XOFF after the first (0.1 %).
    let n = u(&host["pfc"]["tx_xoff"][3]);
    let span = u(&host["pfc"]["last_tx_xoff_ps"][3]) - want_ps;
    let got_ns = span as f64 / 1e3 / (n - 1) as f64;
    assert!(
        (got_ns - cycle_ns).abs() < 0.001 * cycle_ns,
        "{got_ns} vs {cycle_ns}"
    );
    // 4. Every frame waits for the queue ahead, read at 485.76 ns a frame (0.5 %).
    let port = &r["switches"][0]["ports"][0];
    let frames = u(&port["queues"][3]["watermark_bytes"]) / 1536;
    let pg = &r["switches"][0]["ports"][1]["pgs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["pg"] == 3)
        .unwrap()
        .clone();
    let limit = 24_000_000 / 9;
    assert!(
        u(&pg["shared_watermark_bytes"]).abs_diff(limit) < 1536,
        "{pg}"
    );
    let want = frames as f64 * 1518.0 / 3.125 * 1e3 + 766_080.0;
    let got = u(&a["latency_ps"]["p50"]) as f64;
    assert!((got - want).abs() < 0.005 * want, "{got} vs {want}");
    assert!(u(&host["rx_buffer_watermark_bytes"]) < 128_000 + 2 * 1518);
    // 5. The link to r carries 25 Gb/s of frames: 25 × 1538/1518 % of the time (0.1 pt).
    let util = common::f(&port["tx_utilization"]);
    assert!((util - 0.25 * 1538.0 / 1518.0).abs() < 0.001, "{util}");
}

#[test]
fn scheduling_answers() {
    // docs/labs/scheduling.md: DWRR 2:1:1, then strict queue 3; before (0.5–1 ms) and
    // during (1.2–2 ms) the pause of priority 3.
    let file = root().join("configs/labs/scheduling.yaml");
    let windows = "measure={from: 0.5ms, to: 1ms},{from: 1.2ms, to: 2ms}";
    let metrics = ["flows", "totals", "hosts"];
    let dwrr = sweep_rows(&file, windows, &metrics, "sched-dwrr.json");
    let text = std::fs::read_to_string(&file).unwrap();
    let strict_text = text.replace(r#""3": {type: dwrr, weight: 2}"#, r#""3": {type: strict}"#);
    assert_ne!(strict_text, text);
    let strict_file = common::scenario("sched-strict.yaml", &strict_text);
    let strict = sweep_rows(&strict_file, windows, &metrics, "sched-strict.json");
    let line = 1518.0 / 1538.0 * 100.0; // Gb/s of frames
    let check = |rows: &[Value], w: usize, want: [f64; 3]| {
        for (f, want) in ["a", "b", "c"].iter().zip(want) {
            let got =
                common::f(&common::named(&rows[w]["metrics"]["flows"], f)["throughput_bps"]) / 1e9;
            assert!(
                (got - want).abs() <= 0.005 * line,
                "window {w}, {f}: {got} vs {want}"
            );
        }
        assert_eq!(u(&rows[w]["metrics"]["totals"]["lossless_drops"]), 0);
    };
    // 1. DWRR 2:1:1 in frames (3072 B of credit sends two 1518-byte frames).
    check(&dwrr, 0, [line / 2.0, line / 4.0, line / 4.0]);
    // 2. c's excess is dropped; a's and b's are held by PFC.
    assert!(u(&dwrr[0]["metrics"]["totals"]["drops"]) > 0);
    // 3. Queue 3 paused: skipped, the rest 1:1.
    check(&dwrr, 1, [0.0, line / 2.0, line / 2.0]);
    // 4. Strict queue 3 takes the port; b's sender is held the whole window.
    check(&strict, 0, [line, 0.0, 0.0]);
    let sb = common::named(&strict[0]["metrics"]["hosts"], "sb");
    assert_eq!(common::f(&sb["paused_fraction"][4]), 1.0);
    // 5. Strict but paused: skipped like any paused queue.
    check(&strict, 1, [0.0, line / 2.0, line / 2.0]);
}
