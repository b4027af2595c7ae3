//! The simulator's order of same-instant events is canonical (docs/architecture.md, "One
//! instant, in a fixed order"): what a node does depends on its own state and on what
//! reached it, never on the order the scenario happened to list the other nodes in. So a
//! scenario whose hosts are listed in reverse runs the same physics: every flow and every
//! switch counter is the same. (Before the order was canonical, ties went to whichever event
//! was scheduled first, and both runs below came out different when listed in reverse.)

mod common;

use common::{root, run, scenario};
use serde_json::Value;

/// `text` with the block of host lines under `hosts:` listed in reverse.
fn hosts_reversed(text: &str) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let at = lines.iter().position(|l| *l == "hosts:\n").unwrap() + 1;
    let end = at
        + lines[at..]
            .iter()
            .take_while(|l| l.starts_with("  - "))
            .count();
    assert!(end - at > 2, "a few hosts to reorder");
    let mut out: Vec<&str> = lines[..at].to_vec();
    out.extend(lines[at..end].iter().rev());
    out.extend(&lines[end..]);
    out.concat()
}

/// The report's flows, sorted by name (their order follows the file's).
fn flows(r: &Value) -> Vec<Value> {
    let mut f = r["flows"].as_array().unwrap().clone();
    f.sort_by_key(|f| f["name"].as_str().unwrap().to_string());
    f
}

/// Runs `file` as written and with its hosts in reverse, `args` for both: the flows, the
/// switches and the totals agree exactly.
fn same_either_way(file: &str, tag: &str, args: &[&str]) {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    // Captures and series name files after the ports, which both runs share.
    let text = match text.find("\noutputs:\n") {
        Some(i) => text[..=i].to_string(),
        None => text,
    };
    let fwd = run(
        &scenario(&format!("{tag}-fwd.yaml"), &text),
        &format!("{tag}-fwd.json"),
        args,
    );
    let rev = run(
        &scenario(&format!("{tag}-rev.yaml"), &hosts_reversed(&text)),
        &format!("{tag}-rev.json"),
        args,
    );
    assert_eq!(fwd["totals"], rev["totals"], "{tag}: totals");
    assert_eq!(fwd["packet_hops"], rev["packet_hops"], "{tag}: hops");
    assert_eq!(fwd["switches"], rev["switches"], "{tag}: switches");
    assert_eq!(flows(&fwd), flows(&rev), "{tag}: flows");
}

#[test]
fn three_senders_in_step_run_alike_whatever_order_the_hosts_are_listed_in() {
    // Their frames reach the switch at the same picoseconds all run long: the switch takes
    // them by port, so the PFC rhythm is the same.
    same_either_way("configs/labs/incast-pfc.yaml", "order-incast", &[]);
}

#[test]
fn a_fat_tree_runs_alike_whatever_order_the_hosts_are_listed_in() {
    same_either_way(
        "configs/bench/fat-tree-k4.yaml",
        "order-k4",
        &["--duration", "300us"],
    );
}
