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

/// Well-formed enough to be SVG, and rendered by rsvg-convert when it is installed (.ci/run
/// installs librsvg2-bin).
fn check_svg(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.starts_with("<svg") && text.trim_end().ends_with("</svg>"),
        "{}",
        path.display()
    );
    assert_eq!(text.matches("<svg").count(), text.matches("</svg>").count());
    let have = std::process::Command::new("rsvg-convert")
        .arg("--version")
        .output()
        .is_ok();
    if have {
        let png = path.with_extension("png");
        let o = std::process::Command::new("rsvg-convert")
            .arg(path)
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
    } else {
        assert!(std::env::var("CI").is_err(), "rsvg-convert missing in CI");
    }
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
        "tor:Ethernet1 priority 3",
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
