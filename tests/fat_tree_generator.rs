//! scripts/fat-tree.py, the generator of the bench fat trees: it writes the shipped files
//! as they are, and its variants (a random permutation, host cables of a fixed delay, RC
//! flows acknowledging every packet, as `scripts/vs-htsim.sh` runs them) load and say what
//! they were asked.

mod common;

use common::root;
use std::process::Command;

/// The generator's output for `args` (python3 is needed: a Debian system has it).
fn generate(args: &[&str]) -> String {
    let o = Command::new("python3")
        .arg(root().join("scripts/fat-tree.py"))
        .args(args)
        .output()
        .expect("python3 runs scripts/fat-tree.py");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn the_generator_writes_the_shipped_fat_trees() {
    for k in ["4", "8", "16"] {
        let shipped =
            std::fs::read_to_string(root().join(format!("configs/bench/fat-tree-k{k}.yaml")))
                .unwrap();
        // The first line says how the file was written; run that.
        let first = shipped.lines().next().unwrap();
        let args: Vec<&str> = first
            .split("scripts/fat-tree.py ")
            .nth(1)
            .unwrap_or_else(|| panic!("{first}"))
            .split_whitespace()
            .collect();
        assert_eq!(args[0], k);
        assert_eq!(generate(&args), shipped, "configs/bench/fat-tree-k{k}.yaml");
    }
}

/// The K=4 fat tree with a random permutation drawn from `seed`, 1 µs host cables and RC
/// flows.
fn random_k4(seed: &str) -> String {
    generate(&[
        "4",
        "--permutation",
        "random",
        "--seed",
        seed,
        "--host-delay",
        "1us",
        "--rc",
    ])
}

#[test]
fn a_random_permutation_with_1us_host_cables_and_rc_flows_loads() {
    let text = random_k4("3");
    let file = common::tmp("fat-tree-k4-random.yaml");
    std::fs::write(&file, &text).unwrap();
    let loaded = lossless::config::load(&file).unwrap_or_else(|e| panic!("{e}"));
    let s = &loaded.scenario;
    let hosts = s.run.hosts.len();
    assert_eq!(hosts, 16);
    // A derangement: every host sends one flow and receives one, none to itself.
    let mut received = vec![0; hosts];
    for f in &s.run.flows {
        assert_ne!(f.src, f.dst, "{text}");
        received[f.dst] += 1;
    }
    assert_eq!(s.run.flows.len(), hosts);
    assert!(received.iter().all(|&n| n == 1), "{received:?}");
    // Not the shift permutation of the shipped file.
    assert!(s
        .run
        .flows
        .iter()
        .any(|f| f.dst != (f.src + hosts / 2) % hosts));
    // RC queue pairs acknowledging every packet; host cables of 1 µs.
    assert_eq!(
        text.matches("transport: rc, rc: {ack_every: 1}").count(),
        hosts
    );
    assert_eq!(
        text.matches("mtu: 1518, delay: 1us}").count(),
        8,
        "the 8 edge switches"
    );
    // The seed decides the permutation, and the same seed gives the same file.
    assert_eq!(text, random_k4("3"));
    assert_ne!(text, random_k4("4"));
}
