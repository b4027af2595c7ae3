//! The MMU's ASIC choices through the CLI: `buffer.crossing_packet` and `buffer.xon_limit`
//! on the shipped 3-to-1 PFC incast, and `check` saying which are in force.

mod common;

use common::{lossless, run, scenario, u};
use serde_json::Value;

/// The incast-pfc lab with `keys` added under its switch's `buffer:`.
fn incast_with(name: &str, keys: &str) -> std::path::PathBuf {
    let text =
        std::fs::read_to_string(common::root().join("configs/labs/incast-pfc.yaml")).unwrap();
    assert!(text.contains("\n    buffer:\n"));
    scenario(
        name,
        &text.replace("\n    buffer:\n", &format!("\n    buffer:\n{keys}")),
    )
}

/// The largest shared and headroom watermarks of any PG 3, bytes.
fn pg3_watermarks(r: &Value) -> (u64, u64) {
    let ports = r["switches"][0]["ports"].as_array().unwrap();
    let pg3 = |k: &str| ports.iter().map(|p| u(&p["pgs"][3][k])).max().unwrap();
    (
        pg3("shared_watermark_bytes"),
        pg3("headroom_watermark_bytes"),
    )
}

#[test]
fn the_crossing_frame_kept_in_shared_space_moves_one_frame_out_of_headroom() {
    let generic = run(&incast_with("generic.yaml", ""), "generic.json", &[]);
    let th1 = run(
        &incast_with("th1.yaml", "      crossing_packet: shared\n"),
        "th1.json",
        &[],
    );
    let (gs, gh) = pg3_watermarks(&generic);
    let (ts, th) = pg3_watermarks(&th1);
    // The crossing frame is 1518 B = 6 cells of 256 B: in shared space it raises the
    // shared watermark by 1536 B and is missing from the headroom it would have used.
    assert_eq!(ts, gs + 1536, "shared {gs} → {ts}");
    assert_eq!(th + 1536, gh, "headroom {gh} → {th}");
    for r in [&generic, &th1] {
        assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
    }
}

#[test]
fn check_names_the_choices_only_when_they_are_not_the_default() {
    let plain = lossless(&["check", incast_with("c0.yaml", "").to_str().unwrap()]);
    assert!(plain.status.success());
    assert!(!String::from_utf8_lossy(&plain.stdout).contains("  mmu:"));
    let f = incast_with(
        "c1.yaml",
        "      crossing_packet: shared\n      xon_limit: latched\n",
    );
    let o = lossless(&["check", f.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("  mmu: the packet that crosses a lossless limit goes to shared space (over the limit by that packet); XON follows the latched (at XOFF) limit"),
        "{out}"
    );
}
