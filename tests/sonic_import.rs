//! `lossless import sonic` and `switches[].sonic:` on config_db.json files rendered from
//! SONiC's own templates (tests/data/sonic/README.md): the import of a Tomahawk switch
//! resolves to exactly the plan a person writes by hand from the same tables (`check`
//! prints the same lines), a scenario that names the file directly resolves the same way,
//! and bad input — malformed JSON, a PG naming a profile that does not exist, a profile in
//! a pool that does not exist, a port naming a map that does not exist — is one error that
//! names the file, the line, the table and the key.

mod common;

use common::{lossless, root, scenario, tmp};
use lossless::config::sonic::{import, Options};
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    root().join("tests/data/sonic").join(name)
}

const PORTS: &str = "Ethernet0,Ethernet4,Ethernet64,Ethernet68";

/// The same switch as SONiC's tables for the four ports, written by hand: th gen BALANCED
/// t1 pools and profiles, the 300 m profile on the spine-facing ports, the 40 m one on the
/// others, AZURE maps (SONiC's DSCP map is the default one), schedulers 14/15, the lossless
/// queues' WRED profile, and the chip of the HWSKU.
const BY_HAND: &str = "\
name: arista-7060cx-32s-c32-t1
switches:
  - name: th
    ports:
      - {name: Ethernet0, speed: 100G, cable: 300m, mtu: 9122}
      - {name: Ethernet4, speed: 100G, cable: 300m, mtu: 9122}
      - {name: Ethernet64, speed: 100G, cable: 40m, mtu: 9122}
      - {name: Ethernet68, speed: 100G, cable: 40m, mtu: 9122}
    buffer:
      asic: tomahawk
      pools:
        ingress_lossless_pool: {type: ingress, size: 10875072B, mode: dynamic, xoff: 4194112B}
        egress_lossless_pool: {type: egress, size: 15982720B, mode: static}
        egress_lossy_pool: {type: egress, size: 9243812B, mode: dynamic}
      profiles:
        ingress_lossy_profile: {pool: ingress_lossless_pool, size: 0, dynamic_th: 3}
        pg_lossless_100000_300m_profile: {pool: ingress_lossless_pool, size: 1248B, dynamic_th: 0, xoff: 268736B, xon: 2288B, xon_offset: 2288B}
        pg_lossless_100000_40m_profile: {pool: ingress_lossless_pool, size: 1248B, dynamic_th: 0, xoff: 177632B, xon: 2288B, xon_offset: 2288B}
        egress_lossless_profile: {pool: egress_lossless_pool, size: 1518B, static_th: 15982720B}
        egress_lossy_profile: {pool: egress_lossy_pool, size: 1518B, dynamic_th: 3}
      pg:
        \"0\": ingress_lossy_profile
        \"Ethernet0,Ethernet4|3-4\": pg_lossless_100000_300m_profile
        \"Ethernet64,Ethernet68|3-4\": pg_lossless_100000_40m_profile
      queue: {\"0-2,5-6\": egress_lossy_profile, \"3-4\": egress_lossless_profile}
    qos:
      trust: dscp
      dot1p_to_tc: {default: 0}
      tc_to_pg: {default: 0, 3: 3, 4: 4, 7: 7}
      pfc_enable: [3, 4]
      scheduler: {\"0-2,5-6\": {type: dwrr, weight: 14}, \"3-4\": {type: dwrr, weight: 15}}
      wred_profiles:
        AZURE_LOSSLESS: {green_min: 250000B, green_max: 2097152B, green_drop_probability: 5,
                         yellow_min: 1048576B, yellow_max: 2097152B, yellow_drop_probability: 5,
                         red_min: 1048576B, red_max: 2097152B, red_drop_probability: 5,
                         wred_green_enable: true, wred_yellow_enable: true, wred_red_enable: true,
                         ecn: ecn_all}
      queue_wred: {\"3-4\": AZURE_LOSSLESS}
";

/// `lossless check FILE`'s plan, without its first and last lines (they name the file).
fn plan(file: &std::path::Path) -> Vec<String> {
    let o = lossless(&["check", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<String> = text.lines().map(String::from).collect();
    assert!(lines.len() > 20, "{text}");
    lines[1..lines.len() - 1].to_vec()
}

#[test]
fn an_imported_switch_checks_exactly_as_the_same_plan_written_by_hand() {
    let out = tmp("imported.yaml");
    let o = lossless(&[
        "import",
        "sonic",
        data("arista-7060cx-32s-c32-t1.json").to_str().unwrap(),
        "--ports",
        PORTS,
        "--name",
        "th",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stderr = String::from_utf8_lossy(&o.stderr);
    // What the model does not use is listed, once.
    assert_eq!(
        stderr.matches("not modelled, ignored").count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains("tables DEVICE_NEIGHBOR, DEVICE_NEIGHBOR_METADATA"),
        "{stderr}"
    );
    assert!(stderr.contains("PORT_QOS_MAP pfcwd_sw_enable"), "{stderr}");
    let imported = plan(&out);
    let by_hand = plan(&scenario("by-hand.yaml", BY_HAND));
    for (a, b) in imported.iter().zip(&by_hand) {
        assert_eq!(a, b, "imported (left) vs by hand (right)");
    }
    assert_eq!(imported.len(), by_hand.len());
    // Beyond what check prints: the two resolve to the same switch, field by field.
    let load = |p: &std::path::Path| {
        lossless::config::load(p)
            .unwrap()
            .scenario
            .switches
            .remove(0)
    };
    let (a, b) = (load(&out), load(&scenario("by-hand-3.yaml", BY_HAND)));
    assert_eq!(a.config, b.config);
    assert_eq!(a.pg_profile_names, b.pg_profile_names);
    assert_eq!(a.queue_profile_names, b.queue_profile_names);
    let text = imported.join("\n");
    // SONiC's numbers made it through: the chip, its slices and both cable profiles.
    assert!(text.contains("asic: tomahawk"), "{text}");
    assert!(text.contains("268736B"), "{text}");
    assert!(text.contains("177632B"), "{text}");
    assert!(
        text.contains("maps: dscp→tc 3→3, 4→4, 5→2, 8→0, 46→5, 48→6 (others→1); dot1p→tc all→0; tc→pg 3→3, 4→4, 7→7 (others→0); tc→queue identity"),
        "{text}"
    );
}

#[test]
fn a_scenario_naming_the_config_db_resolves_as_its_import_does() {
    let dir = tmp("direct");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        data("arista-7060cx-32s-c32-t1.json"),
        dir.join("config_db.json"),
    )
    .unwrap();
    let direct = dir.join("direct.yaml");
    std::fs::write(
        &direct,
        "name: arista-7060cx-32s-c32-t1\nswitches:\n  - name: th\n    sonic: {file: config_db.json, ports: [Ethernet0, Ethernet4, Ethernet64, Ethernet68]}\n",
    )
    .unwrap();
    assert_eq!(plan(&direct), plan(&scenario("by-hand-2.yaml", BY_HAND)));
    // `sonic:` with keys the file gives is refused, naming the key.
    let both = dir.join("both.yaml");
    std::fs::write(
        &both,
        "switches:\n  - name: th\n    sonic: config_db.json\n    qos: {trust: dscp}\n",
    )
    .unwrap();
    let o = lossless(&["check", both.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("both.yaml:3: th.sonic: `qos` comes from the config_db"),
        "{err}"
    );
}

/// The rendered 7060 file with `edit` applied, written pretty (one field per line).
fn edited(edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let text = std::fs::read_to_string(data("arista-7060cx-32s-c32-t1.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    edit(&mut v);
    serde_json::to_string_pretty(&v).unwrap()
}

/// The 1-based line of the first line of `text` containing `needle` after `after`.
fn line_of(text: &str, after: &str, needle: &str) -> u64 {
    let start = text.find(after).unwrap();
    let upto = start + text[start..].find(needle).unwrap();
    text[..upto].matches('\n').count() as u64 + 1
}

#[test]
fn bad_references_are_errors_that_name_the_table_the_key_and_the_line() {
    let opts = Options {
        name: "th".into(),
        ports: Some(PORTS.split(',').map(String::from).collect()),
        ..Options::default()
    };
    let cases: Vec<(String, &str, &str, u64)> = vec![
        {
            let t = edited(|v| {
                v["BUFFER_PG"]["Ethernet0|3-4"]["profile"] = "pg_lossless_typo".into();
            });
            let l = line_of(&t, "\"Ethernet0|3-4\"", "pg_lossless_typo");
            (
                t,
                "BUFFER_PG.Ethernet0|3-4.profile",
                "profile `pg_lossless_typo` is not in BUFFER_PROFILE",
                l,
            )
        },
        {
            let t = edited(|v| {
                v["BUFFER_PROFILE"]["ingress_lossy_profile"]["pool"] = "ingress_lossy_pool".into();
            });
            let l = line_of(&t, "\"ingress_lossy_profile\": {", "ingress_lossy_pool");
            (
                t,
                "BUFFER_PROFILE.ingress_lossy_profile.pool",
                "pool `ingress_lossy_pool` is not in BUFFER_POOL",
                l,
            )
        },
        {
            let t = edited(|v| {
                v["PORT_QOS_MAP"]["Ethernet4"]["dscp_to_tc_map"] = "AZURE_V2".into();
            });
            let l = line_of(&t, "\"PORT_QOS_MAP\"", "AZURE_V2");
            (
                t,
                "PORT_QOS_MAP.Ethernet4.dscp_to_tc_map",
                "map `AZURE_V2` is not in DSCP_TO_TC_MAP (maps: AZURE)",
                l,
            )
        },
        {
            let t = edited(|v| {
                v["QUEUE"]["Ethernet0|3"]["scheduler"] = "scheduler.9".into();
            });
            let l = line_of(&t, "\"Ethernet0|3\"", "scheduler.9");
            (
                t,
                "QUEUE.Ethernet0|3.scheduler",
                "scheduler `scheduler.9` is not in SCHEDULER",
                l,
            )
        },
    ];
    for (text, key, message, line) in cases {
        let e = import("config_db.json", &text, &opts).expect_err(key);
        assert_eq!(e.key, key, "{e}");
        assert!(e.message.contains(message), "{e}");
        assert_eq!(e.line, Some(line), "{e}");
        assert!(
            e.to_string()
                .starts_with(&format!("config_db.json:{line}: {key}: ")),
            "{e}"
        );
    }
}

#[test]
fn malformed_json_is_one_error_with_its_line_and_column_through_the_cli() {
    let bad = scenario(
        "bad.json",
        "{\n  \"PORT\": {\n    \"Ethernet0\": {\"speed\": \"100000\",}\n  }\n}\n",
    );
    let o = lossless(&["import", "sonic", bad.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("bad.json:3: malformed JSON at line 3 column"),
        "{err}"
    );
    // And a file that names a port it does not have.
    let o = lossless(&[
        "import",
        "sonic",
        data("force10-s6100-t1.json").to_str().unwrap(),
        "--ports",
        "Ethernet999",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("port `Ethernet999` asked for is not in PORT"),
        "{err}"
    );
}

/// A real S6100 config_db.json has 66 ports (64 × 40G and 2 × 10G): it imports whole and
/// runs, with hosts on its first and last ports and an incast on lossless priority 3 into
/// Ethernet0 from the two 10G ports and two 40G ones (200 µs: the PGs absorb it, no PFC
/// yet).
#[test]
fn a_66_port_config_db_imports_and_runs() {
    let o = lossless(&[
        "import",
        "sonic",
        data("force10-s6100-t1.json").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let yaml = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        yaml.contains("# 66 port(s) of HWSKU Force10-S6100"),
        "{yaml}"
    );
    assert!(yaml.contains("{name: Ethernet65, speed: 10G"));
    let mut text = yaml + "duration: 200us\nhosts:\n";
    for p in [0, 1, 63, 64, 65] {
        text += &format!("  - {{name: h{p}, attach: lossless-dut:Ethernet{p}}}\n");
    }
    text += "flows:\n";
    for p in [1, 63, 64, 65] {
        text += &format!(
            "  - {{name: f{p}, src: h{p}, dst: h0, protocol: rocev2, dscp: 3, frame: 1518B, pattern: greedy}}\n"
        );
    }
    let f = scenario("s6100-run.yaml", &text);
    let r = common::run(&f, "s6100-run.json", &[]);
    assert_eq!(r["switches"][0]["ports"].as_array().unwrap().len(), 66);
    assert_eq!(common::u(&r["totals"]["lossless_drops"]), 0);
    // Two 40G senders and two 10G ones into one 40G port: it is full.
    let rx: f64 = ["f1", "f63", "f64", "f65"]
        .iter()
        .map(|n| common::f(&common::flow(&r, n)["throughput_bps"]))
        .sum();
    assert!(rx > 35e9 && rx < 40e9, "{rx}");
}

/// The S6100's config_db as saved before buffermgrd ran: no lossless BUFFER_PG entries and
/// none of the `pg_lossless_*` profiles buffermgrd adds.
fn before_buffermgrd() -> String {
    let text = std::fs::read_to_string(data("force10-s6100-t1.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["BUFFER_PG"]
        .as_object_mut()
        .unwrap()
        .retain(|k, _| !k.ends_with("|3-4"));
    v["BUFFER_PROFILE"]
        .as_object_mut()
        .unwrap()
        .retain(|k, _| !k.starts_with("pg_lossless_"));
    serde_json::to_string_pretty(&v).unwrap()
}

fn s6100_lookup() -> PathBuf {
    data("pg_profile_lookup/force10-s6100.ini")
}

/// `lossless import sonic` of config_db `text` (written as `name`) with `lookup`.
fn import_with_lookup(name: &str, text: &str, lookup: &std::path::Path) -> std::process::Output {
    let f = tmp(name);
    std::fs::write(&f, text).unwrap();
    lossless(&[
        "import",
        "sonic",
        f.to_str().unwrap(),
        "--pg-profile-lookup",
        lookup.to_str().unwrap(),
    ])
}

/// A config_db saved before buffermgrd ran, with the SKU's pg_profile_lookup.ini, resolves
/// to exactly the plan of the same switch saved after buffermgrd ran (the rendered file):
/// for each port with PFC on 3,4 the profile of its speed and cable length, and the entry
/// `<port>|3-4`. The values are the ini's rows (40G and 300 m: xoff 108160 B, size 1248 B,
/// dynamic_th 0, xon 2288 B, xon_offset 2288 B).
#[test]
fn lossless_pgs_come_from_the_skus_pg_profile_lookup_as_buffermgrd_adds_them() {
    let dir = tmp("before-buffermgrd");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config_db.json"), before_buffermgrd()).unwrap();
    std::fs::copy(s6100_lookup(), dir.join("pg_profile_lookup.ini")).unwrap();
    let derived = dir.join("derived.yaml");
    std::fs::write(
        &derived,
        "switches:\n  - name: s6100\n    sonic: {file: config_db.json, pg_profile_lookup: pg_profile_lookup.ini}\n",
    )
    .unwrap();
    let saved = scenario(
        "after-buffermgrd.yaml",
        &format!(
            "switches:\n  - name: s6100\n    sonic: {}\n",
            data("force10-s6100-t1.json").display()
        ),
    );
    assert_eq!(plan(&derived), plan(&saved));

    // The import itself: the 40G/300m row, on the spine-facing Ethernet0.
    let text = before_buffermgrd();
    let lookup = std::fs::read_to_string(s6100_lookup()).unwrap();
    let opts = Options {
        name: "s6100".into(),
        pg_profile_lookup: Some(
            lossless::config::sonic::pg_lookup::PgLookup::parse("s6100.ini", &lookup).unwrap(),
        ),
        ..Options::default()
    };
    let i = import("config_db.json", &text, &opts).unwrap();
    let sw = serde_json::to_value(&i.switch).unwrap();
    let p = &sw["buffer"]["profiles"]["pg_lossless_40000_300m_profile"];
    for (k, want) in [
        ("pool", "ingress_lossless_pool"),
        ("xoff", "108160"),
        ("size", "1248"),
        ("xon", "2288"),
        ("xon_offset", "2288"),
        ("dynamic_th", "0"),
    ] {
        assert_eq!(p[k].to_string().trim_matches('"'), want, "{k}: {p}");
    }
    let d = &i.derived.as_ref().unwrap().1;
    assert_eq!(d.ports.len(), 66);
    assert_eq!(d.profiles.len(), 3, "{:?}", d.profiles);
    assert!(i
        .describe()
        .contains("lossless PGs of 66 port(s) derived from s6100.ini"));

    // Through the CLI, which says so.
    let o = import_with_lookup("before-buffermgrd.json", &text, &s6100_lookup());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let yaml = String::from_utf8_lossy(&o.stdout);
    assert!(
        yaml.contains("lossless PGs of 66 port(s) derived from"),
        "{yaml}"
    );
    assert!(yaml.contains("pg_lossless_10000_40m_profile"), "{yaml}");
}

/// Without the lookup table, a PFC port with no lossless PG is one error at its
/// `pfc_enable` that says where the PGs come from; a port whose speed and cable have no row
/// gets none, with a warning that names it (as buffermgrd logs it); a bad row names its line.
#[test]
fn missing_lossless_pgs_and_bad_lookup_rows_say_what_to_do() {
    let text = before_buffermgrd();
    let opts = Options {
        name: "s6100".into(),
        ports: Some(vec!["Ethernet0".into(), "Ethernet64".into()]),
        ..Options::default()
    };
    let e = import("config_db.json", &text, &opts).unwrap_err();
    assert_eq!(e.key, "PORT_QOS_MAP.Ethernet0.pfc_enable");
    assert_eq!(
        e.line,
        Some(line_of(&text, "\"PORT_QOS_MAP\"", "\"pfc_enable\""))
    );
    assert!(e.message.contains("PGs 3,4 of Ethernet0"), "{e}");
    assert!(e.message.contains("--pg-profile-lookup"), "{e}");

    // The 10G/40m row left out: Ethernet64 gets no lossless PG, and says why.
    let lookup: String = std::fs::read_to_string(s6100_lookup())
        .unwrap()
        .lines()
        .filter(|l| !l.split_whitespace().take(2).eq(["10000", "40m"]))
        .map(|l| format!("{l}\n"))
        .collect();
    let opts = Options {
        pg_profile_lookup: Some(
            lossless::config::sonic::pg_lookup::PgLookup::parse("cut.ini", &lookup).unwrap(),
        ),
        ..opts
    };
    let i = import("config_db.json", &text, &opts).unwrap();
    assert_eq!(i.derived.as_ref().unwrap().1.ports, ["Ethernet0"]);
    let w: Vec<String> = i.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        w.iter()
            .any(|w| w.contains("PORT_QOS_MAP.Ethernet64.pfc_enable")
                && w.contains("no row for speed 10000 and cable 40m")),
        "{w:?}"
    );

    // A row short of columns, through the CLI: file, line and the rule.
    let bad = scenario(
        "bad-lookup.ini",
        "# speed cable size xon xoff threshold\n40000 300m 1248 2288\n",
    );
    let o = import_with_lookup("before-buffermgrd-2.json", &text, &bad);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad-lookup.ini:2"), "{err}");
    assert!(
        err.contains("speed cable size xon xoff threshold [xon_offset]"),
        "{err}"
    );
}

#[test]
fn the_dynamic_buffer_model_is_refused_with_the_reason() {
    let text = edited(|v| {
        v["BUFFER_PG"]["Ethernet0|3-4"]["profile"] = "NULL".into();
    });
    let opts = Options {
        name: "th".into(),
        ports: Some(vec!["Ethernet0".into()]),
        ..Options::default()
    };
    let e = import("config_db.json", &text, &opts).unwrap_err();
    assert_eq!(e.key, "BUFFER_PG.Ethernet0|3-4.profile");
    assert!(e.message.contains("dynamic buffer model"), "{e}");
}

#[test]
fn acl_tables_import_as_the_same_rules_written_in_yaml() {
    let text = edited(|v| {
        v["ACL_TABLE"] = serde_json::json!({
            "DATAACL": {"type": "L3", "stage": "ingress", "policy_desc": "data",
                        "ports": ["Ethernet0", "Ethernet4", "Ethernet8"]},
            "EVERFLOW": {"type": "MIRROR", "stage": "ingress", "ports": ["Ethernet0"]},
            "EGRESS": {"type": "L3", "stage": "egress", "ports": ["Ethernet0"]}
        });
        v["ACL_RULE"] = serde_json::json!({
            "DATAACL|DENY_ONE": {"PRIORITY": "9999", "PACKET_ACTION": "DROP",
                                 "SRC_IP": "198.18.1.1/32", "IP_PROTOCOL": "17"},
            "DATAACL|ALLOW_NET": {"PRIORITY": "9000", "PACKET_ACTION": "FORWARD",
                                  "SRC_IP": "198.18.0.0/16", "L4_DST_PORT_RANGE": "4000-5000"},
            "DATAACL|SYN_ONLY": {"PRIORITY": "100", "PACKET_ACTION": "DROP", "TCP_FLAGS": "0x02/0x02"},
            "EVERFLOW|MIRROR_ALL": {"PRIORITY": "1", "MIRROR_ACTION": "session1"}
        });
    });
    let opts = Options {
        name: "th".into(),
        ports: Some(PORTS.split(',').map(String::from).collect()),
        ..Options::default()
    };
    let imported = import("config_db.json", &text, &opts).unwrap();
    let warnings: Vec<String> = imported.warnings.iter().map(|w| w.to_string()).collect();
    let all = warnings.join("\n");
    assert!(
        all.contains("ACL_RULE.DATAACL|SYN_ONLY: TCP_FLAGS is not modelled: the rule is left out"),
        "{all}"
    );
    assert!(
        all.contains("EVERFLOW (type MIRROR)") && all.contains("EGRESS (stage egress)"),
        "{all}"
    );
    let dir = tmp("acl-import");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config_db.json"), &text).unwrap();
    let direct = format!(
        "switches:\n  - name: th\n    sonic: {{file: {}, ports: [{}]}}\n",
        dir.join("config_db.json").display(),
        PORTS.replace(',', ", ")
    );
    let by_hand = BY_HAND.to_string()
        + "    acl:\n      DATAACL:\n        type: L3\n        ports: [Ethernet0, Ethernet4]\n        rules:\n\
           \x20         DENY_ONE: {priority: 9999, packet_action: drop, src_ip: 198.18.1.1/32, ip_protocol: 17}\n\
           \x20         ALLOW_NET: {priority: 9000, src_ip: 198.18.0.0/16, l4_dst_port_range: 4000-5000}\n";
    let parse = |name: &str, t: &str| {
        lossless::config::parse(name, name, t)
            .unwrap()
            .scenario
            .switches
            .remove(0)
            .config
            .acl
    };
    let a = parse("direct.yaml", &direct);
    assert_eq!(a, parse("by-hand.yaml", &by_hand));
    assert_eq!(a[0].rules.len(), 2);
    // A rule of a table that does not exist is an error.
    let bad = edited(|v| {
        v["ACL_RULE"] = serde_json::json!({"NOPE|R": {"PRIORITY": "1", "PACKET_ACTION": "DROP"}});
    });
    let e = import("config_db.json", &bad, &opts).unwrap_err();
    assert_eq!(e.key, "ACL_RULE.NOPE|R");
    assert!(
        e.message.contains("table `NOPE` is not in ACL_TABLE"),
        "{e}"
    );
}

/// What `lossless import sonic` says of a config_db names the config_db: an MTU out of
/// SONiC's range is an error on PORT's key, a plan that does not resolve points at the
/// config_db's line (the YAML is not written), the hostname that names the switch is not
/// "ignored", and `check` warns when a lossless priority goes to a queue that can drop it.
#[test]
fn import_errors_and_warnings_name_the_config_db() {
    let dir = tmp("import-names");
    let _ = std::fs::create_dir_all(&dir);
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let stderr = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).to_string();
    // An MTU of 0.
    let t = edited(|v| v["PORT"]["Ethernet0"]["mtu"] = "0".into());
    let f = write("mtu0.json", &t);
    let out = dir.join("mtu0.yaml");
    let o = lossless(&[
        "import",
        "sonic",
        f.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    let line = line_of(&t, "\"Ethernet0\": {", "\"mtu\"");
    assert!(
        err.contains(&format!(
            "mtu0.json:{line}: PORT.Ethernet0.mtu: 0 is outside SONiC's 68–9216 (the IP MTU"
        )),
        "{err}"
    );
    assert!(!out.exists());
    // An XON level above the XOFF point: the config_db's file and line, not the YAML's.
    let t = edited(|v| {
        v["BUFFER_PROFILE"]["pg_lossless_100000_300m_profile"]["xon"] = "99999999".into();
    });
    let f = write("xon.json", &t);
    let out = dir.join("xon.yaml");
    let o = lossless(&[
        "import",
        "sonic",
        f.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let line = line_of(&t, "\"pg_lossless_100000_300m_profile\"", "\"xon\"");
    assert!(err.contains(&format!("xon.json:{line}: ")), "{err}");
    // Named as the config_db names it, the scenario's key after.
    assert!(
        err.contains(&format!(
            "xon.json:{line}: BUFFER_PROFILE|pg_lossless_100000_300m_profile.xon: "
        )),
        "{err}"
    );
    assert!(
        err.contains(
            "(the scenario's `lossless-dut.buffer.profiles.pg_lossless_100000_300m_profile.xon`)"
        ),
        "{err}"
    );
    assert!(!err.contains("xon.yaml"), "{err}");
    assert!(!out.exists());
    // A size and a cable length that are not ones: the table, key and field.
    let t = edited(|v| {
        v["BUFFER_PROFILE"]["egress_lossless_profile"]["size"] = "abc".into();
    });
    let f = write("size.json", &t);
    let o = lossless(&["import", "sonic", f.to_str().unwrap()]);
    let err = stderr(&o);
    let line = line_of(&t, "\"egress_lossless_profile\": {", "\"size\"");
    assert!(
        err.contains(&format!(
            "size.json:{line}: BUFFER_PROFILE|egress_lossless_profile.size: `abc` is not a size"
        )),
        "{err}"
    );
    // The hostname names the switch: not among the keys ignored.
    let out = dir.join("ok.yaml");
    let file = data("arista-7060cx-32s-c32-t1.json");
    let o = lossless(&[
        "import",
        "sonic",
        file.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("DEVICE_METADATA buffer_model, mac, type;"),
        "{err}"
    );
    assert!(!err.contains("hostname"), "{err}");
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("- name: lossless-dut"));
    // Lossless priority 3 sent to queue 1, a lossy one: `check` says it can be dropped.
    let t = edited(|v| v["TC_TO_QUEUE_MAP"]["AZURE"]["3"] = "1".into());
    let f = write("tc3.json", &t);
    let out = dir.join("tc3.yaml");
    let o = lossless(&[
        "import",
        "sonic",
        f.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = lossless(&["check", out.to_str().unwrap()]);
    let err = stderr(&o);
    assert!(
        err.contains("lossless priority 3 can be dropped at egress")
            && err.contains("but queue 1 of Ethernet0 takes at most"),
        "{err}"
    );
}

/// SWITCH_TRIMMING (with BUFFER_PROFILE's `packet_discard_action`) and LLR_PORT /
/// LLR_PROFILE import as the same `trimming:` and `llr:` written by hand; a port naming a
/// second LLR profile is an error that names it.
#[test]
fn trimming_and_llr_import_as_written_by_hand() {
    let text = edited(|v| {
        v["BUFFER_PROFILE"]["egress_lossy_profile"]["packet_discard_action"] = "trim".into();
        v["SWITCH_TRIMMING"] = serde_json::json!({
            "GLOBAL": {"size": "256", "dscp_value": "48", "queue_index": "6"}
        });
        v["LLR_PROFILE"] = serde_json::json!({
            "llr_100000_300m_profile": {
                "max_outstanding_frames": "512", "max_outstanding_bytes": "131072",
                "max_replay_count": "3", "max_replay_timer": "10000",
                "ctlos_spacing_bytes": "2048", "init_action": "best_effort",
                "flush_action": "block"
            }
        });
        v["LLR_PORT"] = serde_json::json!({
            "Ethernet0": {"llr_mode": "static", "llr_local": "enabled", "llr_remote": "enabled",
                          "llr_profile": "llr_100000_300m_profile"},
            "Ethernet4": {"llr_mode": "static", "llr_local": "enabled", "llr_remote": "enabled",
                          "llr_profile": "llr_100000_300m_profile"},
            "Ethernet64": {"llr_mode": "static", "llr_local": "disabled", "llr_remote": "disabled",
                           "llr_profile": "llr_100000_300m_profile"}
        });
    });
    let dir = tmp("beyond-pfc-import");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config_db.json"), &text).unwrap();
    let direct = format!(
        "switches:\n  - name: th\n    sonic: {{file: {}, ports: [{}]}}\n",
        dir.join("config_db.json").display(),
        PORTS.replace(',', ", ")
    );
    let by_hand = BY_HAND
        .replace(
            "egress_lossy_profile: {pool: egress_lossy_pool, size: 1518B, dynamic_th: 3}",
            "egress_lossy_profile: {pool: egress_lossy_pool, size: 1518B, dynamic_th: 3, packet_discard_action: trim}",
        )
        + "    trimming: {size: 256B, dscp: 48, queue: 6}\n\
           \x20   llr: {ports: [Ethernet0, Ethernet4], max_outstanding_frames: 512, max_outstanding_bytes: 131072B, max_replay_count: 3, replay_timer: 10000ns, ctlos_spacing: 2048B, init_action: best_effort, flush_action: block}\n";
    let parse = |name: &str, t: &str| {
        let sw = lossless::config::parse(name, name, t)
            .unwrap()
            .scenario
            .switches
            .remove(0)
            .config;
        let llr: Vec<_> = sw.ports.iter().map(|p| p.llr).collect();
        let trims: Vec<u8> = sw.ports.iter().map(|p| p.trim_queues).collect();
        (sw.trimming, llr, trims)
    };
    let got = parse("direct.yaml", &direct);
    assert_eq!(got, parse("by-hand.yaml", &by_hand));
    let (trimming, llr, trims) = got;
    assert_eq!(trimming.unwrap().size, 256);
    assert!(llr[0].is_some() && llr[1].is_some() && llr[2].is_none() && llr[3].is_none());
    let l = llr[0].unwrap();
    assert_eq!(
        (l.max_frames, l.max_bytes, l.max_replay_count),
        (512, 131_072, 3)
    );
    assert_eq!(trims[0], 0b0110_0111, "the lossy queues 0-2, 5-6 trim");
    // Two profiles on one switch.
    let two = edited(|v| {
        v["LLR_PROFILE"] = serde_json::json!({"a": {"max_outstanding_frames": "64"}, "b": {}});
        v["LLR_PORT"] = serde_json::json!({
            "Ethernet0": {"llr_local": "enabled", "llr_remote": "enabled", "llr_profile": "a"},
            "Ethernet4": {"llr_local": "enabled", "llr_remote": "enabled", "llr_profile": "b"}
        });
    });
    let opts = Options {
        name: "th".into(),
        ports: Some(PORTS.split(',').map(String::from).collect()),
        ..Options::default()
    };
    let e = import("config_db.json", &two, &opts).unwrap_err();
    assert_eq!(e.key, "LLR_PORT.Ethernet4.llr_profile");
    assert!(e.message.contains("one LLR profile per switch"), "{e}");
}
