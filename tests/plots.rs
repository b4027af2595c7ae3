//! `lossless run --plot DIR`: SVG figures and a self-contained index.html.

mod common;

use common::{lossless, root, tmp};
use std::path::Path;

fn plot(lab: &str, dir: &Path, extra: &[&str]) {
    let _ = std::fs::remove_dir_all(dir);
    let file = root().join(format!("configs/labs/{lab}.yaml"));
    let mut args = vec![
        "run",
        file.to_str().unwrap(),
        "--quiet",
        "--plot",
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = lossless(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Well-formed enough to be SVG (`every_figure_renders_with_rsvg_convert` renders them).
fn check_svg(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.starts_with("<svg") && text.trim_end().ends_with("</svg>"),
        "{}",
        path.display()
    );
    assert_eq!(text.matches("<svg").count(), text.matches("</svg>").count());
}

/// Every figure of an incast's plots and of a sweep's renders with librsvg, to a picture of
/// some size.
#[test]
#[ignore = "needs rsvg-convert (Debian package librsvg2-bin; scripts/test)"]
fn every_figure_renders_with_rsvg_convert() {
    common::needs::tools(&[("rsvg-convert", "librsvg2-bin")]);
    let dir = tmp("plots-rsvg");
    plot("incast-pfc", &dir, &["--duration", "600us"]);
    let sweep = tmp("plots-rsvg-sweep");
    plot(
        "headroom-sizing",
        &sweep,
        &[
            "--sweep",
            "switches.tor.ports.cable=0m,280m",
            "--metric",
            "totals.lossless_drops",
        ],
    );
    let mut n = 0;
    for d in [&dir, &sweep] {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let path = e.path();
            if path.extension().is_some_and(|x| x == "svg") {
                let png = path.with_extension("png");
                let o = std::process::Command::new("rsvg-convert")
                    .arg(&path)
                    .arg("-o")
                    .arg(&png)
                    .output()
                    .unwrap();
                assert!(
                    o.status.success(),
                    "{}: {}",
                    path.display(),
                    String::from_utf8_lossy(&o.stderr)
                );
                assert!(std::fs::metadata(&png).unwrap().len() > 1000);
                n += 1;
            }
        }
    }
    assert!(n >= 5, "{n} figures");
}

#[test]
fn plots_of_an_incast_show_buffers_pauses_and_flows_on_one_offline_page() {
    let dir = tmp("plots-incast");
    plot(
        "incast-pfc",
        &dir,
        &[
            "--duration",
            "600us",
            "--plot-interval",
            "20ns",
            "--plot-window",
            "500us,512us",
        ],
    );
    let svgs: Vec<_> = ["buffers.svg", "pauses.svg", "flows.svg", "links.svg"]
        .iter()
        .map(|n| dir.join(n))
        .collect();
    for s in &svgs {
        check_svg(s);
    }
    let buffers = std::fs::read_to_string(dir.join("buffers.svg")).unwrap();
    for label in [
        "tor:Ethernet1 ingress PG 3 (lossless)",
        "XOFF level",
        "XON level",
        "PG shared",
    ] {
        assert!(buffers.contains(label), "{label}");
    }
    let pauses = std::fs::read_to_string(dir.join("pauses.svg")).unwrap();
    assert!(pauses.contains("host h1 p3 paused") && pauses.contains("tor:Ethernet1 p3 sends XOFF"));
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    // Every figure inline, the report below, nothing fetched from anywhere.
    assert_eq!(html.matches("<figure").count(), svgs.len());
    assert!(html.contains("lossless_drops 0"));
    for fetch in ["<script", "<link", "<img", "src=", "url("] {
        assert!(!html.contains(fetch), "{fetch}");
    }
    assert!(html.matches("http").count() == html.matches("http://www.w3.org/2000/svg").count());
}

#[test]
fn dcqcn_rates_are_plotted_when_hosts_run_it() {
    let dir = tmp("plots-dcqcn");
    plot("ecn-vs-pfc", &dir, &["--duration", "3ms"]);
    check_svg(&dir.join("dcqcn.svg"));
    let svg = std::fs::read_to_string(dir.join("dcqcn.svg")).unwrap();
    assert!(
        svg.contains("\nfa\n") && svg.contains("\nfb\n"),
        "legend names the flows"
    );
    // The marking queue's share of CE frames, and the receiver's CNPs are not PFC.
    check_svg(&dir.join("ecn.svg"));
    let ecn = std::fs::read_to_string(dir.join("ecn.svg")).unwrap();
    assert!(
        ecn.contains("\ntor:Ethernet0 q3\n"),
        "legend names the queue"
    );
}

#[test]
fn a_stormed_queue_is_a_row_of_the_pause_timeline() {
    let dir = tmp("plots-storm");
    plot("pause-storm", &dir, &[]);
    check_svg(&dir.join("pauses.svg"));
    let svg = std::fs::read_to_string(dir.join("pauses.svg")).unwrap();
    assert!(svg.contains("tor:Ethernet0 q3 stormed (watchdog)"));
    // Drawn in the watchdog's colour, once (one storm).
    assert_eq!(svg.matches("fill=\"#E68C00\"").count(), 1, "one orange bar");
}

#[test]
fn a_slow_receivers_pfc_frames_are_ticks_on_the_pause_timeline() {
    // slow-receiver over its first 200 µs at 100 ns: r's NIC pauses the switch every
    // ~28 µs; each XOFF and XON is a tick on its "sends PFC" row.
    let dir = tmp("plots-ticks");
    plot(
        "slow-receiver",
        &dir,
        &["--plot-window", "0us,200us", "--plot-interval", "100ns"],
    );
    check_svg(&dir.join("pauses.svg"));
    let svg = std::fs::read_to_string(dir.join("pauses.svg")).unwrap();
    assert!(svg.contains("host r p3 sends PFC"));
    assert!(svg.contains("tor:Ethernet0 p3 paused"));
    // The same run's report: the frames r sent by 200 µs, each in its own 100 ns sample
    // (they are ≥ 6.9 µs apart), so as many ticks on each of r's two rows (p3, p4), and as
    // many on each of the switch's two "paused" rows.
    let r = common::run(
        &root().join("configs/labs/slow-receiver.yaml"),
        "ticks.json",
        &["--duration", "200us"],
    );
    let pfc = &common::named(&r["hosts"], "r")["pfc"];
    let frames = common::u(&pfc["tx_xoff"][3]) + common::u(&pfc["tx_xon"][3]);
    assert!(frames >= 12, "{frames}");
    // Ticks: black vertical segments, all of one length (0.9 of a row); axis marks are
    // shorter and the axis line longer.
    let mut lengths: Vec<i64> = Vec::new();
    for part in svg
        .split("stroke=\"#000000\" stroke-width=\"1\" points=\"")
        .skip(1)
    {
        let pts: Vec<(f64, f64)> = part[..part.find('"').unwrap()]
            .split_whitespace()
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect();
        if pts.len() == 2 && pts[0].0 == pts[1].0 {
            lengths.push((pts[1].1 - pts[0].1).abs().round() as i64);
        }
    }
    let row = lengths
        .iter()
        .copied()
        .max_by_key(|l| lengths.iter().filter(|x| *x == l).count());
    let ticks = lengths.iter().filter(|l| Some(**l) == row).count();
    assert_eq!(ticks, 4 * frames as usize, "{lengths:?}");
}

#[test]
fn a_bad_plot_window_is_refused() {
    let file = root().join("configs/labs/incast-pfc.yaml");
    let o = lossless(&[
        "run",
        file.to_str().unwrap(),
        "--plot",
        "x",
        "--plot-window",
        "5us,1us",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("FROM must be before TO"));
}

/// Run headless Chromium (Debian's `chromium`) on `args`, bounded in
/// time and killed by pid if it hangs; (stdout, stderr).
fn chromium(args: &[&str]) -> (String, String) {
    use std::process::{Command, Stdio};
    common::needs::tools(&[("chromium", "chromium")]);
    let mut child = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--proxy-server=127.0.0.1:9",
        ])
        .args(["--enable-logging=stderr", "--v=0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    // Drain both pipes while it runs (a large DOM would fill them and stall it).
    let drain = |r: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut r) = r {
                let _ = r.read_to_string(&mut s);
            }
            s
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|r| Box::new(r) as Box<dyn std::io::Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|r| Box::new(r) as Box<dyn std::io::Read + Send>),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish in 90 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    (out.join().unwrap(), err.join().unwrap())
}

#[test]
#[ignore = "needs chromium (Debian package chromium; scripts/test)"]
fn the_page_opens_offline_in_a_real_browser_with_every_figure_and_no_console_error() {
    let dir = tmp("plots-browser");
    plot("incast-pfc", &dir, &["--duration", "600us"]);
    let url = format!("file://{}", dir.join("index.html").display());
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    let figures = html.matches("<figure").count();
    assert!(figures >= 4);
    // The DOM after load: every figure holds its drawing.
    let (dom, err) = chromium(&["--dump-dom", &url]);
    assert_eq!(dom.matches("<figure").count(), figures, "{err}");
    assert_eq!(dom.matches("<svg").count(), figures);
    assert!(!err.contains("CONSOLE"), "console output: {err}");
    // A screenshot, kept in target/tmp for a human to look at.
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("plots-index.png");
    let _ = std::fs::remove_file(&shot);
    let arg = format!("--screenshot={}", shot.display());
    let (_, err) = chromium(&["--window-size=1100,3000", &arg, &url]);
    assert!(!err.contains("CONSOLE"), "console output: {err}");
    assert!(
        std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0) > 20_000,
        "{err}"
    );
    eprintln!("screenshot: {}", shot.display());
}

#[test]
#[ignore = "needs chromium (Debian package chromium; scripts/test)"]
fn the_console_check_sees_a_console_error() {
    // The check above could only pass vacuously if Chromium printed nothing: it does.
    let page = tmp("console.html");
    std::fs::write(
        &page,
        "<html><body><script>console.error('boom')</script></body></html>",
    )
    .unwrap();
    let (_, err) = chromium(&["--dump-dom", &format!("file://{}", page.display())]);
    assert!(err.contains("CONSOLE") && err.contains("boom"), "{err}");
}

#[test]
fn a_sweep_with_plot_draws_each_metric_against_the_values() {
    // The headroom-sizing lab over cable lengths: one panel per metric path, the values
    // as x labels, the table on the page; options that make no sense for a sweep refused.
    let dir = tmp("plots-sweep");
    let _ = std::fs::remove_dir_all(&dir);
    let file = root().join("configs/labs/headroom-sizing.yaml");
    let o = lossless(&[
        "run",
        file.to_str().unwrap(),
        "--quiet",
        "--sweep",
        "switches.tor.ports.cable=0m,280m,340m",
        "--metric",
        "totals.lossless_drops",
        "--metric",
        "switches.tor.ports.1.pgs.3.headroom_watermark_bytes",
        "--metric",
        "switches.tor.ports.1.pgs",
        "--plot",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg_path = dir.join("sweep.svg");
    check_svg(&svg_path);
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    // Two numeric metrics, two panels (the PG list stays in the table only).
    assert!(svg.contains("totals.lossless_drops"));
    assert!(svg.contains("switches.tor.ports.1.pgs.3.headroom_watermark_bytes"));
    assert!(!svg.contains(">switches.tor.ports.1.pgs<"));
    for v in ["0m", "280m", "340m"] {
        assert!(svg.contains(&format!(">\n{v}\n<")), "x label {v}");
    }
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert_eq!(html.matches("<figure").count(), 1);
    assert!(html.contains("switches.tor.ports.cable") && html.contains("340m"));
    for banned in ["<script", "<link", "<img", "url("] {
        assert!(!html.contains(banned), "{banned}");
    }
    for extra in [
        ["--pfc-log", "x.jsonl"],
        ["--pcap-dir", "x"],
        ["--plot-window", "1us,2us"],
    ] {
        let mut args = vec![
            "run",
            file.to_str().unwrap(),
            "--sweep",
            "seed=1,2",
            "--plot",
            "x",
        ];
        args.extend(extra);
        let o = lossless(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("cannot be used with"));
    }
}

/// The texts of an SVG, in document order.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..t.find("</text>")?];
            let body = body
                .trim()
                .replace("&gt;", ">")
                .replace("&lt;", "<")
                .replace("&apos;", "'")
                .replace("&quot;", "\"")
                .replace("&amp;", "&");
            Some(body)
        })
        .collect()
}

/// Each buffer panel's title with the legend entries drawn before it (a panel's legend
/// sits beside it and is drawn first).
fn panels(svg: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut legend = Vec::new();
    for t in texts(svg) {
        let kind = t.contains("(lossless)") || t.contains("(lossy)");
        if (t.contains(" ingress PG ") || t.contains(" egress queue ")) && kind
            || t.starts_with("host ") && t.contains(" receive buffer (")
        {
            out.push((t, std::mem::take(&mut legend)));
        } else {
            legend.push(t);
        }
    }
    out
}

#[test]
fn buffer_panels_keep_pg_and_queue_levels_apart_and_give_headroom_its_own_axis() {
    let dir = tmp("plots-panels");
    plot("incast-pfc", &dir, &["--duration", "600us"]);
    let svg = std::fs::read_to_string(dir.join("buffers.svg")).unwrap();
    let found = panels(&svg);
    // Three senders' PG 3 and the receiver's queue 3 held data.
    let pgs: Vec<_> = found
        .iter()
        .filter(|(t, _)| t.contains("ingress PG 3 (lossless)"))
        .collect();
    let queues: Vec<_> = found
        .iter()
        .filter(|(t, _)| t.contains("egress queue 3"))
        .collect();
    assert_eq!((pgs.len(), queues.len()), (3, 1), "{found:?}");
    for (title, legend) in &pgs {
        for entry in [
            "PG shared (peak ",
            "XOFF level (the live limit)",
            "XON level",
        ] {
            assert!(
                legend.iter().any(|l| l.starts_with(entry)),
                "{title}: {legend:?}"
            );
        }
        // XOFF and XON 2,288 B apart on a scale of MB: the title says so.
        assert!(
            title.contains("KB below XOFF, one line at this scale"),
            "{title}"
        );
    }
    for (title, legend) in &queues {
        assert!(
            !legend
                .iter()
                .any(|l| l.starts_with("XOFF") || l.starts_with("XON")),
            "{title}: {legend:?}"
        );
    }
    // Headroom has a panel of its own, in KB like the shared use, with its capacity, under
    // each lossless PG that used it.
    let used = texts(&svg)
        .iter()
        .filter(|t| t.starts_with("PG headroom (peak "))
        .count();
    assert_eq!(svg.matches("headroom, KB").count(), used);
    assert!(used >= 1);
    assert!(texts(&svg).iter().any(|t| t.starts_with("capacity ")));
    // A lossy PG that drops at its limit shows that limit, and no XOFF or XON.
    let dir = tmp("plots-lossy-pg");
    plot("incast-lossy", &dir, &["--duration", "1ms"]);
    let svg = std::fs::read_to_string(dir.join("buffers.svg")).unwrap();
    let lossy: Vec<_> = panels(&svg)
        .into_iter()
        .filter(|(t, _)| t.contains("ingress PG") && t.contains("(lossy)"))
        .collect();
    assert!(!lossy.is_empty());
    for (title, legend) in &lossy {
        assert!(
            legend.iter().any(|l| l == "drop level (limit)"),
            "{title}: {legend:?}"
        );
        assert!(
            !legend
                .iter()
                .any(|l| l.starts_with("XOFF") || l.starts_with("XON")),
            "{title}"
        );
    }
    // The scheduling lab's lossy queue holds megabytes: its panel is there too.
    let dir = tmp("plots-lossy");
    plot("scheduling", &dir, &["--duration", "1ms"]);
    let svg = std::fs::read_to_string(dir.join("buffers.svg")).unwrap();
    assert!(
        panels(&svg).iter().any(|(t, _)| t.contains("(lossy)")),
        "{:?}",
        panels(&svg)
    );
}

#[test]
fn drops_are_plotted_by_reason_when_there_are_any() {
    let dir = tmp("plots-drops");
    plot("incast-lossy", &dir, &["--duration", "1ms"]);
    check_svg(&dir.join("drops.svg"));
    let svg = std::fs::read_to_string(dir.join("drops.svg")).unwrap();
    assert!(
        texts(&svg).iter().any(|t| t == "tor: ingress_limit"),
        "{:?}",
        texts(&svg)
    );
    // Lossless drops have their own line, first, in red.
    let dir = tmp("plots-lossless-drops");
    plot("headroom-too-small", &dir, &[]);
    let svg = std::fs::read_to_string(dir.join("drops.svg")).unwrap();
    assert!(texts(&svg)
        .iter()
        .any(|t| t == "tor: LOSSLESS (any reason)"));
    // No drops, no figure.
    let dir = tmp("plots-no-drops");
    plot("incast-pfc", &dir, &["--duration", "600us"]);
    assert!(!dir.join("drops.svg").exists());
}

#[test]
fn no_plotted_rate_exceeds_its_link() {
    use lossless::report::plot::{flow_rates, link_utilisation};
    use lossless::sim::{RunOptions, Sim};
    use lossless_buffer_model::Time;
    let mut labs: Vec<_> = std::fs::read_dir(root().join("configs/labs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    labs.sort();
    for lab in labs {
        // Coarse over 1 ms, and 20 ns over 100 µs of it: each point is the bits received
        // in its interval, every frame counted over its wire time.
        for (every, window) in [
            (Time::from_ns(500), None),
            (
                Time::from_ns(20),
                Some((Time::from_us(400), Time::from_us(500))),
            ),
        ] {
            let scenario = lossless::config::load(&lab).unwrap().scenario;
            let opts = RunOptions {
                duration: Some(Time::from_ms(1)),
                record: Some(every),
                record_window: window,
                max_plot_samples: 20_000,
                ..RunOptions::default()
            };
            let mut sim = Sim::new(scenario, &opts).unwrap();
            sim.run(|_| lossless::sim::Go::On).unwrap();
            let rec = sim.recording().unwrap();
            let mut seen = 0;
            for (name, link, pts) in flow_rates(rec) {
                for (t, bps) in pts {
                    assert!(
                        bps <= link * (1.0 + 1e-9),
                        "{}: flow {name} at {t} µs: {bps} bit/s over a {link} link",
                        lab.display()
                    );
                    seen += 1;
                }
            }
            for (name, pts) in link_utilisation(rec) {
                for (t, u) in pts {
                    assert!(
                        u <= 1.0 + 1e-9,
                        "{}: {name} at {t} µs busy {u}",
                        lab.display()
                    );
                }
            }
            assert!(seen > 0, "{}: no flow rate plotted", lab.display());
        }
    }
}

/// A scenario of `configs/labs/` with `from` replaced by `to` (the guides' variants).
fn variant(lab: &str, from: &str, to: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(root().join(format!("configs/labs/{lab}.yaml"))).unwrap();
    assert!(text.contains(from), "{lab}: {from}");
    common::scenario(&format!("{lab}-variant.yaml"), &text.replacen(from, to, 1))
}

/// Every lab's figures, and the three long-recovery variants the guides discuss, rendered
/// and read back: each SVG stands alone (its title, caption and legend inside), its time
/// axis ends where the run did, every flow that received data and every group member that
/// carried any is in a legend, every queue pair that re-sent is in transport.svg, groups
/// are in Gb/s, and the recording never ends before the run.
#[test]
fn every_labs_figures_cover_the_whole_run_and_name_what_carried_data() {
    let mut runs: Vec<(String, std::path::PathBuf)> =
        std::fs::read_dir(root().join("configs/labs"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .map(|p| (p.file_stem().unwrap().to_string_lossy().to_string(), p))
            .collect();
    runs.sort();
    runs.push((
        "lossy-vs-lossless (lossy)".into(),
        variant("lossy-vs-lossless", "pfc_enable: [3, 4]", "pfc_enable: []"),
    ));
    runs.push((
        "allreduce-one-loss (loss at 2330 us)".into(),
        variant(
            "allreduce-one-loss",
            "at: 1800us, port: h1",
            "at: 2330us, port: h1",
        ),
    ));
    runs.push((
        "tcp-incast (lossy)".into(),
        variant("tcp-incast", "pfc_enable: [3, 4]", "pfc_enable: []"),
    ));
    for (name, file) in runs {
        let dir = tmp(&format!("every-{}", name.replace([' ', '(', ')'], "_")));
        let _ = std::fs::remove_dir_all(&dir);
        let json = dir.with_extension("json");
        let o = lossless(&[
            "run",
            file.to_str().unwrap(),
            "--quiet",
            "--plot",
            dir.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ]);
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let end_us = r["sim_time_ps"].as_u64().unwrap() as f64 / 1e6;
        let mut svgs: Vec<(String, String)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "svg"))
            .map(|p| {
                let n = p.file_stem().unwrap().to_string_lossy().to_string();
                (n, std::fs::read_to_string(&p).unwrap())
            })
            .collect();
        svgs.sort();
        assert!(!svgs.is_empty(), "{name}: no figure");
        for (fig, svg) in &svgs {
            let t = texts(svg);
            // It stands alone: its title and caption are in it, as text and as the SVG's
            // own <title> and <desc>.
            assert!(
                svg.contains("<title>") && svg.contains("<desc>"),
                "{name} {fig}"
            );
            assert!(
                t.iter().any(|x| x.ends_with(&format!(": {fig}"))),
                "{name} {fig}: {t:?}"
            );
            // The time axis ends where the run did.
            if fig != "iterations" {
                let desc = &svg[svg.find("Time axis: ").unwrap() + 11..];
                let to: f64 = desc[desc.find('–').unwrap() + '–'.len_utf8()..]
                    .split(' ')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                assert!(
                    (to - end_us).abs() <= 1e-6 * end_us.max(1.0),
                    "{name} {fig}: the axis ends at {to} µs, the run at {end_us} µs"
                );
            }
            // A legend: entries that name what is drawn.
            let legend_words = [
                "PG shared",
                "queue (peak",
                "buffer (peak",
                "paused (may not send)",
                "an iteration",
                "LOSSLESS",
                "Gb/s link",
                "re-sent",
                "→",
                ":",
                " q",
            ];
            assert!(
                t.iter().any(|x| legend_words.iter().any(|w| x.contains(w))),
                "{name} {fig}: no legend in {t:?}"
            );
        }
        let get = |fig: &str| {
            svgs.iter()
                .find(|(n, _)| n == fig)
                .map(|(_, s)| texts(s))
                .unwrap_or_default()
        };
        // Every flow that received data is in flows.svg's legend.
        let flows = get("flows");
        for f in r["flows"].as_array().unwrap() {
            if f["rx_bytes"].as_u64().unwrap() > 0 {
                let n = f["name"].as_str().unwrap();
                assert!(
                    flows.iter().any(|x| x == n),
                    "{name}: flow {n} not in {flows:?}"
                );
            }
            let resent = f["transport"]["retransmitted_packets"]
                .as_u64()
                .unwrap_or(0);
            if resent > 0 {
                let n = f["name"].as_str().unwrap();
                let want = format!("{n} (re-sent {resent})");
                let transport = get("transport");
                assert!(
                    transport
                        .iter()
                        .any(|x| *x == want || x.contains(&format!(" {n}"))),
                    "{name}: {want} not in {transport:?}"
                );
            }
        }
        // Every group member that carried bytes is in groups.svg's legend, in Gb/s.
        for sw in r["switches"].as_array().unwrap() {
            for g in sw["groups"].as_array().into_iter().flatten() {
                for m in g["members"].as_array().unwrap() {
                    if m["bytes"].as_u64().unwrap_or(0) > 0 {
                        let groups = get("groups");
                        let want = format!(
                            "{}:{} → {}",
                            sw["name"].as_str().unwrap(),
                            g["name"].as_str().unwrap(),
                            m["port"].as_str().unwrap()
                        );
                        assert!(groups.contains(&want), "{name}: {want} not in {groups:?}");
                        assert!(groups.iter().any(|x| x == "Gbit/s steered"), "{name}");
                    }
                }
            }
        }
    }
}

/// A CBFC run's figures include the credits each sender holds per channel against its
/// limit: in the cbfc-vs-pfc lab h1, h2 and h3 each fill VC 3's 1,024 credits (the incast
/// backs up to them), so credits.svg has a panel for each with its limit.
#[test]
fn a_cbfc_run_plots_credits_in_use_against_the_limit() {
    let dir = tmp("plots-credits");
    plot("cbfc-vs-pfc", &dir, &["--duration", "200us"]);
    let path = dir.join("credits.svg");
    check_svg(&path);
    let svg = std::fs::read_to_string(&path).unwrap();
    let t = texts(&svg);
    for name in [
        "h1 VC 3: in use",
        "h2 VC 3: in use",
        "h3 VC 3: in use",
        "limit 1024",
    ] {
        assert!(t.iter().any(|x| x == name), "{name} not in {t:?}");
    }
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(html.contains("CBFC credits: on each credited channel"));
}

/// An LLR run's figures include each port's NACKs and replayed frames over time.
#[test]
fn an_llr_run_plots_nacks_and_replays() {
    let dir = tmp("plots-llr");
    plot("llr-lossy-link", &dir, &["--duration", "3ms"]);
    let path = dir.join("llr.svg");
    check_svg(&path);
    let t = texts(&std::fs::read_to_string(&path).unwrap());
    assert!(t.iter().any(|x| x.ends_with(": NACKs sent")), "{t:?}");
    assert!(t.iter().any(|x| x.ends_with(": frames replayed")), "{t:?}");
}

/// A sweep whose values span 1 ms to 4 s (drop, trim or pause an incast) draws that metric
/// on a log axis, and codes in no order (DSCPs 3, 8, 1) as points, not a line.
#[test]
fn a_sweep_spanning_decades_goes_on_a_log_axis() {
    let dir = tmp("plots-sweep-log");
    let _ = std::fs::remove_dir_all(&dir);
    let file = root().join("configs/labs/trimming.yaml");
    let o = lossless(&[
        "run",
        file.to_str().unwrap(),
        "--quiet",
        "--sweep",
        "flows.f1.dscp=3,8,1",
        "--metric",
        "max(flows.*.fct_ps)",
        "--metric",
        "totals.drops",
        "--plot",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(dir.join("sweep.svg")).unwrap();
    let t = texts(&svg);
    assert!(
        t.iter().any(|x| x == "max(flows.*.fct_ps) (ms), log scale"),
        "{t:?}"
    );
    assert!(t.iter().any(|x| x == "totals.drops"), "{t:?}");
    // A joined series is a polyline of three points; legends' are of two.
    let joined = svg
        .split("<polyline")
        .skip(1)
        .filter(|p| {
            let pts = p
                .split("points=\"")
                .nth(1)
                .unwrap_or("")
                .split('"')
                .next()
                .unwrap_or("");
            pts.split_whitespace().count() >= 3
        })
        .count();
    assert_eq!(joined, 0, "codes in no order are not joined");
}
