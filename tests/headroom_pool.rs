//! A shared headroom pool (`xoff` on the ingress lossless pool) through the CLI: each
//! lossless PG's own `xoff` still bounds that PG, the pool bounds their sum, and the report
//! shows the pool's headroom use and watermark (SONiC's headroom-pool watermark).

mod common;

use common::{named, run, scenario, u};

/// h1 and h2 send greedy 1518-byte frames on priority 3 into Ethernet0, whose transmitter
/// is off from 1 µs, with NICs that ignore PFC: each PG fills its shared share, then its
/// headroom, then drops. PG headroom (`xoff`) 200 cells; shared headroom pool `pool_xoff`.
fn incast(pool_xoff: &str) -> String {
    format!(
        "# shared headroom pool\nduration: 300us\nswitches:\n  - name: s\n    ports: {{count: 3, mtu: 1518}}\n\
         \x20   buffer:\n      pools:\n        ingress_lossless_pool: {{type: ingress, size: 1MB, xoff: {pool_xoff}}}\n\
         \x20       egress_lossless_pool: {{type: egress, size: 4MB, mode: static}}\n\
         \x20     profiles:\n        pg_lossless: {{pool: ingress_lossless_pool, dynamic_th: 0, xoff: 51200B}}\n\
         \x20       q_lossless: {{pool: egress_lossless_pool, static_th: 4MB}}\n\
         \x20     pg: {{\"3\": pg_lossless}}\n      queue: {{\"3\": q_lossless}}\n\
         \x20   qos: {{pfc_enable: [3]}}\n\
         hosts:\n  - {{name: h0, attach: s:Ethernet0}}\n\
         \x20 - {{name: h1, attach: s:Ethernet1, nic: {{pfc: ignore}}}}\n\
         \x20 - {{name: h2, attach: s:Ethernet2, nic: {{pfc: ignore}}}}\n\
         flows:\n  - {{name: a, src: h1, dst: h0, dscp: 3, pattern: greedy}}\n\
         \x20 - {{name: b, src: h2, dst: h0, dscp: 3, pattern: greedy}}\n\
         events:\n  - {{at: 1us, port: s:Ethernet0, tx: disable}}\n"
    )
}

fn pg_headroom(r: &serde_json::Value, port: usize) -> u64 {
    u(&r["switches"][0]["ports"][port]["pgs"][3]["headroom_watermark_bytes"])
}

#[test]
fn a_pgs_own_xoff_bounds_it_inside_a_larger_shared_pool() {
    // Pool of 1,600 cells, PGs of 200: each PG stops at the largest multiple of a
    // 1518-byte frame's 6 cells that fits in 200, i.e. 198 cells = 50,688 bytes.
    let r = run(
        &scenario("shp-big.yaml", &incast("409600B")),
        "shp-big.json",
        &[],
    );
    for port in [1, 2] {
        assert_eq!(pg_headroom(&r, port), 198 * 256);
    }
    let pool = named(&r["switches"][0]["pools"], "ingress_lossless_pool");
    assert_eq!(u(&pool["headroom_size_bytes"]), 409_600);
    assert_eq!(u(&pool["headroom_watermark_bytes"]), 2 * 198 * 256);
    assert!(u(&r["totals"]["lossless_drops"]) > 0);
    assert!(u(&r["switches"][0]["drops_by_reason"]["headroom_full"]) > 0);
}

#[test]
fn the_shared_pool_bounds_the_sum_when_it_oversubscribes() {
    // Pool of 300 cells for two PGs of 200: together they stop within one frame (6 cells)
    // of 300, and neither exceeds its own 200.
    let r = run(
        &scenario("shp-small.yaml", &incast("76800B")),
        "shp-small.json",
        &[],
    );
    let pool = named(&r["switches"][0]["pools"], "ingress_lossless_pool");
    let wm = u(&pool["headroom_watermark_bytes"]) / 256;
    assert!((294..=300).contains(&wm), "{wm} cells");
    let (a, b) = (pg_headroom(&r, 1) / 256, pg_headroom(&r, 2) / 256);
    assert!(a <= 200 && b <= 200, "{a} {b}");
    assert_eq!(a + b, wm);
}
