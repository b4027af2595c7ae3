//! The simulator never has to nudge a node past an instant it keeps asking for
//! (`engine.stalls`, a model bug if ever nonzero): on a fat tree with zero pipeline
//! latency, where many frames arrive and leave at one instant, it used to count every
//! wake at the current instant in a row, across instants, and nudge the node by 1 ps each
//! 10,000 (issue 21 found 24 on K=4).

mod common;

use common::{root, run, u};

#[test]
fn a_zero_latency_fat_tree_runs_without_stalls() {
    let file = root().join("configs/bench/fat-tree-k4.yaml");
    let r = run(&file, "fat-tree-k4.json", &["--duration", "3ms"]);
    assert_eq!(u(&r["engine"]["stalls"]), 0);
    assert!(u(&r["packet_hops"]) > 1_000_000);
    assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
}
