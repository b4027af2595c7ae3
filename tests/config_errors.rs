//! Every config rule: the error names the file, the line, the key and the rule broken.

use lossless::config::{parse, ConfigError};

const BASE: &str = r#"name: t
switches:
  - name: tor
    ports: {count: 2, speed: 100G, cable: 2m, mtu: 1518}
    buffer:
      pools:
        ingress_lossless_pool: {type: ingress, size: 16MB, mode: dynamic}
        egress_lossless_pool:  {type: egress, size: 16MB, mode: static}
      profiles:
        pg_lossless: {pool: ingress_lossless_pool, size: 1248, dynamic_th: 0, xoff: 83200B, xon: 2288, xon_offset: 2288}
        q_lossless:  {pool: egress_lossless_pool, static_th: 16MB}
      pg: {"3-4": pg_lossless}
      queue: {"3-4": q_lossless}
    qos:
      pfc_enable: [3, 4]
      wred_profiles: {w: {green_min: 100KB, green_max: 400KB, green_drop_probability: 20, ecn: ecn_all}}
      queue_wred: {"3": w}
"#;

fn err(text: &str) -> ConfigError {
    parse("lab.yaml", "lab", text).expect_err("config should be rejected")
}

/// Replace `from` with `to` in the base config (exactly once).
fn with(from: &str, to: &str) -> String {
    assert_eq!(BASE.matches(from).count(), 1, "{from}");
    BASE.replace(from, to)
}

fn assert_err(e: &ConfigError, line: u64, key: &str, rule: &str) {
    let text = e.to_string();
    assert!(text.starts_with(&format!("lab.yaml:{line}: ")), "{text}");
    assert!(
        e.key == key || (key.is_empty() && e.key.is_empty()),
        "key {:?} in {text}",
        e.key
    );
    assert!(text.contains(rule), "`{rule}` not in {text}");
}

#[test]
fn the_base_config_is_valid() {
    let loaded = parse("lab.yaml", "lab", BASE).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.scenario.switches[0].config.ports.len(), 2);
}

#[test]
fn xon_at_or_above_the_xoff_point() {
    let e = err(&with("xon: 2288,", "xon: 9MB,"));
    assert_err(
        &e,
        10,
        "tor.buffer.profiles.pg_lossless.xon",
        "at or above the XOFF point",
    );
    let text = with(
        "dynamic_th: 0, xoff: 83200B, xon: 2288",
        "static_th: 100KiB, xoff: 83200B, xon: 200KiB",
    );
    let e = err(&text);
    assert_err(
        &e,
        10,
        "tor.buffer.profiles.pg_lossless.xon",
        "200KiB is at or above the XOFF point, static_th 100KiB",
    );
}

#[test]
fn kmin_above_kmax() {
    let e = err(&with(
        "green_min: 100KB, green_max: 400KB",
        "green_min: 500KB, green_max: 400KB",
    ));
    assert_err(
        &e,
        16,
        "tor.qos.wred_profiles.w.green_min",
        "Kmin 500KB is above Kmax 400KB",
    );
}

#[test]
fn probability_outside_0_to_100() {
    let e = err(&with(
        "green_drop_probability: 20",
        "green_drop_probability: 101",
    ));
    assert_err(
        &e,
        16,
        "tor.qos.wred_profiles.w.green_drop_probability",
        "101% is outside 0–100",
    );
}

#[test]
fn dynamic_th_outside_range() {
    let e = err(&with("dynamic_th: 0", "dynamic_th: 8"));
    assert_err(
        &e,
        10,
        "tor.buffer.profiles.pg_lossless.dynamic_th",
        "outside −8..7",
    );
}

#[test]
fn reserved_plus_headroom_beyond_the_pool() {
    let e = err(&with(
        "size: 16MB, mode: dynamic",
        "size: 32KiB, mode: dynamic",
    ));
    assert_err(
        &e,
        10,
        "tor.buffer.profiles.pg_lossless",
        "is beyond pool `ingress_lossless_pool`",
    );
}

#[test]
fn priority_outside_0_to_7() {
    let e = err(&with("pfc_enable: [3, 4]", "pfc_enable: [3, 8]"));
    assert_err(&e, 15, "tor.qos.pfc_enable", "8 is outside 0–7");
    let e = err(&with(
        r#"pg: {"3-4": pg_lossless}"#,
        r#"pg: {"3-9": pg_lossless}"#,
    ));
    assert_err(&e, 12, "tor.buffer.pg.3-9", "priority 9 is outside 0–7");
}

#[test]
fn unknown_pool_and_profile_names() {
    let e = err(&with(
        "{pool: egress_lossless_pool, static_th",
        "{pool: egress_pool, static_th",
    ));
    assert_err(
        &e,
        11,
        "tor.buffer.profiles.q_lossless.pool",
        "unknown pool `egress_pool`",
    );
    let e = err(&with(
        r#"queue: {"3-4": q_lossless}"#,
        r#"queue: {"3-4": q_lossles}"#,
    ));
    assert_err(
        &e,
        13,
        "tor.buffer.queue.3-4",
        "unknown profile `q_lossles`",
    );
    let e = err(&with(r#"queue_wred: {"3": w}"#, r#"queue_wred: {"3": x}"#));
    assert_err(&e, 17, "tor.qos.queue_wred.3", "unknown WRED profile `x`");
}

#[test]
fn unknown_keys_are_errors() {
    let e = err(&with(
        "pfc_enable: [3, 4]",
        "pfc_enable: [3, 4]\n      pfc_enabled: [3]",
    ));
    assert_err(&e, 16, "", "unknown field `pfc_enabled`");
    let e = err(&with("ports: {count: 2,", "ports: {count: 2, sped: 1G,"));
    assert_err(&e, 4, "", "unknown field `sped`");
}

#[test]
fn quanta_above_65535() {
    let e = err(&with(
        "pfc_enable: [3, 4]",
        "pfc_enable: [3, 4]\n      pause_quanta: 65536",
    ));
    assert_err(&e, 16, "tor.qos.pause_quanta", "65536 quanta");
}

#[test]
fn bad_units_and_values() {
    let e = err(&with("speed: 100G", "speed: 100Q"));
    assert_err(&e, 4, "tor.ports.speed", "`100Q` is not a rate");
    let e = err(&with(
        "type: ingress, size: 16MB",
        "type: ingres, size: 16MB",
    ));
    assert_err(
        &e,
        7,
        "tor.buffer.pools.ingress_lossless_pool.type",
        "expected ingress or egress",
    );
    let e = err(&with(
        "dynamic_th: 0, xoff",
        "dynamic_th: 0, static_th: 1MB, xoff",
    ));
    assert_err(&e, 10, "tor.buffer.profiles.pg_lossless", "not both");
}

#[test]
fn pfc_priority_without_a_lossless_pg() {
    let e = err(&with("pfc_enable: [3, 4]", "pfc_enable: [3, 4, 5]"));
    assert!(
        e.to_string().contains("PFC is enabled on priority 5"),
        "{e}"
    );
}

#[test]
fn headroom_below_minimum_is_a_warning_with_the_minimum_that_applies() {
    // 100G, 2 m, MTU 1518, IEEE response: 30,144 B for MTU frames, but 325 frames of 64 B
    // (one 256-byte cell each) = 83,200 B (docs/physics.md, "Headroom"): the larger applies,
    // and the first warning already quotes it.
    for (xoff, cells) in [("8KiB", 32), ("30144B", 118)] {
        let loaded = parse(
            "lab.yaml",
            "lab",
            &with("xoff: 83200B", &format!("xoff: {xoff}")),
        )
        .unwrap();
        assert_eq!(loaded.warnings.len(), 1);
        let w = loaded.warnings[0].to_string();
        let want = format!("lab.yaml:10: tor.buffer.profiles.pg_lossless.xoff: headroom {xoff} ({cells} cells of 256B) is below the minimum 83200B (325 cells)");
        assert!(w.starts_with(&want), "{w}");
        assert!(w.contains("frames of the MTU alone need 30144B"), "{w}");
    }
    // Raised to the minimum quoted, nothing more is asked for.
    let loaded = parse("lab.yaml", "lab", &with("xoff: 83200B", "xoff: 83200B")).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[test]
fn buffer_total_overshoot_names_the_bytes() {
    let e = err(&with("    buffer:\n", "    buffer:\n      total: 32MB\n"));
    // 16 + 16 MB of pools + 2 ports × 2 PGs × (1248 + 83200) B.
    let over = 32_000_000 + 4 * (1248 + 83_200) - 32_000_000;
    assert_err(&e, 6, "tor.buffer.total", &format!("by {over} bytes"));
}

#[test]
fn yaml_syntax_errors_name_the_line() {
    let e = err("name: t\nswitches:\n  - name: [unclosed\n");
    assert!(e.to_string().starts_with("lab.yaml:"), "{e}");
    assert!(e.line.is_some());
}

#[test]
fn zero_pg_headroom_warns_even_with_a_shared_headroom_pool() {
    // A PG's xoff is its headroom size, with a shared headroom pool too: 0 means none.
    let text = with(
        "size: 16MB, mode: dynamic}",
        "size: 16MB, mode: dynamic, xoff: 1MB}",
    )
    .replace("xoff: 83200B", "xoff: 0");
    let loaded = parse("lab.yaml", "lab", &text).unwrap();
    let w: Vec<String> = loaded.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        w.iter().any(|w| w
            .starts_with("lab.yaml:10: tor.buffer.profiles.pg_lossless.xoff: 0 bytes of headroom")),
        "{w:?}"
    );
}

#[test]
fn chip_rules_are_words_of_their_lists() {
    for (key, bad) in [
        ("pg_fill", "pool_first"),
        ("pg_admission", "during"),
        ("queue_admission", "later"),
        ("first_limit", "both"),
    ] {
        let e = err(&with(
            "    buffer:\n",
            &format!("    buffer:\n      {key}: {bad}\n"),
        ));
        assert_err(&e, 6, &format!("tor.buffer.{key}"), bad);
    }
}

#[test]
fn a_headroom_overhead_that_leaves_no_headroom() {
    // 83,200 B of xoff, all of it kept by the chip.
    let e = err(&with(
        "    buffer:\n",
        "    buffer:\n      ingress_sizes: pg_buffer\n      headroom_overhead: 83200B\n",
    )
    .replace("size: 1248, dynamic_th: 0", "size: 84448, dynamic_th: 0"));
    assert_err(
        &e,
        12,
        "tor.buffer.profiles.pg_lossless.xoff",
        "is not above the chip's headroom overhead",
    );
}

/// A rate without a unit is refused, naming the key and suggesting the unit: `speed: 100`
/// used to be taken as 100 bit/s in silence (a run at 0.000 Gb/s that `check` called OK).
#[test]
fn a_rate_without_a_unit_is_refused_naming_the_key() {
    let e = err(&with("speed: 100G", "speed: 100"));
    assert_err(
        &e,
        4,
        "tor.ports.speed",
        "a rate with its unit, such as 100G",
    );
    let text = format!(
        "{BASE}hosts:\n  - {{name: h0, attach: tor:Ethernet0}}\n  - {{name: h1, attach: tor:Ethernet1}}\nflows:\n  - {{name: f, src: h1, dst: h0, pattern: cbr, rate: 10}}\n"
    );
    let e = err(&text);
    assert!(e.key.ends_with("rate"), "{e}");
    assert!(e.to_string().contains("such as 100G"), "{e}");
}
