//! Hostile input, in bulk: arbitrary bytes and structure-aware mutations fed to what reads
//! a user's or a network's input — the YAML loader, the SONiC config_db import and the
//! metrics endpoint's HTTP (the frame parser and MAC Control decoder are fuzzed in
//! `pipeline/tests/fuzz_frames.rs`). 100,000 cases each, from fixed seeds; the committed
//! regression inputs under `tests/data/fuzz/` are replayed first. A panic fails the test;
//! so does a case whose thread allocates more than [`CASE_MEMORY`] at its peak (a counting
//! allocator watches) or a target that does not end within [`HANG`] (a watchdog aborts the
//! process, naming the case).

mod common;

use common::root;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::Value;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Cases per target.
const CASES: usize = 100_000;
/// The most one case may allocate at its peak, above what was live when it began.
const CASE_MEMORY: usize = 64 << 20;
/// A target that has not finished by then is hung.
const HANG: Duration = Duration::from_secs(600);

/// Counts the bytes each thread allocates and frees, and the peak of the difference (the
/// targets run on threads of their own, each case on one thread).
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    let _ = LIVE.try_with(|l| {
        let now = l.get() + delta;
        l.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

// SAFETY: every call is passed to the system allocator unchanged; only counts are kept (in
// thread-locals without destructors, which allocate nothing).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            count(l.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        count(-(l.size() as isize));
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            count(new as isize - l.size() as isize);
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The case being run on each target, for the watchdog's message.
static CURRENT: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// Run `target` under the hang watchdog.
fn fuzz(name: &str, target: impl FnOnce()) {
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = std::sync::Arc::clone(&done);
    let name2 = name.to_string();
    let dog = std::thread::spawn(move || {
        let start = Instant::now();
        while !seen.load(Ordering::Relaxed) {
            if start.elapsed() > HANG {
                let case = CURRENT
                    .lock()
                    .ok()
                    .and_then(|c| c.iter().find(|(t, _)| *t == name2).map(|(_, c)| c.clone()))
                    .unwrap_or_default();
                eprintln!("{name2}: no end after {HANG:?}; the case running: {case}");
                std::process::abort();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    target();
    done.store(true, Ordering::Relaxed);
    dog.join().unwrap();
}

/// Run one case, checking the peak of what its thread allocated.
fn case<R>(what: impl FnOnce() -> String, f: impl FnOnce() -> R) -> R {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let r = f();
    let peak = (PEAK.with(Cell::get) - base).max(0) as usize;
    assert!(
        peak <= CASE_MEMORY,
        "a case allocated {peak} bytes at its peak: {}",
        what()
    );
    r
}

/// Say which case target `target` runs now (for the watchdog).
fn note(target: &str, text: impl Into<String>) {
    if let Ok(mut c) = CURRENT.lock() {
        match c.iter_mut().find(|(t, _)| t == target) {
            Some(slot) => slot.1 = text.into(),
            None => c.push((target.to_string(), text.into())),
        }
    }
}

/// The committed regression inputs of `kind`, as bytes.
fn regressions(kind: &str) -> Vec<(String, Vec<u8>)> {
    let dir = root().join("tests/data/fuzz").join(kind);
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let p = e.unwrap().path();
            (p.display().to_string(), std::fs::read(&p).unwrap())
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "{} holds no inputs", dir.display());
    out
}

fn pick<'a, T>(rng: &mut Xoshiro256PlusPlus, from: &'a [T]) -> &'a T {
    &from[rng.next_u32() as usize % from.len()]
}

/// Values that break naive readers: out-of-range numbers, other types, YAML's own syntax.
const TRICKY: &[&str] = &[
    "0",
    "-1",
    "1e400",
    "18446744073709551616",
    "-9223372036854775809",
    "0.0000001",
    "NaN",
    ".inf",
    "~",
    "null",
    "[]",
    "{}",
    "[[[[[]]]]]",
    "''",
    "\"\\u0000\"",
    "&a x",
    "*a",
    "!!binary AAAA",
    "yes",
    "on",
    "0x10",
    "1TB",
    "1.5B",
    "1ps",
    "100Gbps",
    "-5ms",
    "Ethernet999",
    "a:b",
    "999999999999999999999999KiB",
    "\u{feff}",
    "é",
    "\t",
    "{a: [1, {b: *c}]}",
    "'unterminated",
    "\"unterminated",
    "|",
    ">-",
    "---",
    "...",
    "%YAML 1.2",
    "? complex",
    "<<: *a",
];

/// Byte-level mutations of `data`: flips, inserts, deletes, cuts.
fn mutate_bytes(rng: &mut Xoshiro256PlusPlus, data: &mut Vec<u8>) {
    for _ in 0..1 + rng.next_u32() % 4 {
        let n = data.len();
        match rng.next_u32() % 5 {
            0 if n > 0 => data[rng.next_u32() as usize % n] ^= 1 << (rng.next_u32() % 8),
            1 if n > 0 => data[rng.next_u32() as usize % n] = rng.next_u32() as u8,
            2 => data.insert(rng.next_u32() as usize % (n + 1), rng.next_u32() as u8),
            3 if n > 0 => {
                data.remove(rng.next_u32() as usize % n);
            }
            4 => data.truncate(rng.next_u32() as usize % (n + 1)),
            _ => {}
        }
    }
}

/// Line-level and value-level mutations of YAML text, keeping most of its structure.
fn mutate_yaml(rng: &mut Xoshiro256PlusPlus, text: &str, keys: &[String]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for _ in 0..1 + rng.next_u32() % 3 {
        if lines.is_empty() {
            break;
        }
        let i = rng.next_u32() as usize % lines.len();
        match rng.next_u32() % 7 {
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            2 => {
                let j = rng.next_u32() as usize % lines.len();
                lines.swap(i, j);
            }
            3 => lines[i] = format!("  {}", lines[i]),
            4 => lines[i] = lines[i].trim_start().to_string(),
            // A value replaced by a tricky one.
            5 => {
                if let Some(at) = lines[i].find(": ") {
                    let head = lines[i][..at + 2].to_string();
                    lines[i] = format!("{head}{}", pick(rng, TRICKY));
                }
            }
            // A key replaced by another key of the corpus.
            _ => {
                if let Some(at) = lines[i].find(':') {
                    let indent = lines[i].len() - lines[i].trim_start().len();
                    let rest = lines[i][at..].to_string();
                    lines[i] = format!("{}{}{rest}", " ".repeat(indent), pick(rng, keys));
                }
            }
        }
    }
    lines.join("\n") + "\n"
}

/// Every `key:` of the seeds.
fn yaml_keys(seeds: &[String]) -> Vec<String> {
    let mut keys: Vec<String> = seeds
        .iter()
        .flat_map(|s| s.lines())
        .filter_map(|l| {
            let t = l
                .trim_start()
                .trim_start_matches("- ")
                .trim_start_matches('{');
            let k = t.split(':').next()?;
            (!k.is_empty() && k.len() < 40 && !k.contains(' ') && t.contains(':'))
                .then(|| k.to_string())
        })
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// The YAML files users give: every lab and switch, and the containerlab switch.
fn yaml_seeds() -> Vec<String> {
    let mut files = Vec::new();
    for d in ["configs/labs", "configs/switches"] {
        for e in std::fs::read_dir(root().join(d)).unwrap() {
            files.push(e.unwrap().path());
        }
    }
    files.push(root().join("deploy/containerlab/switch.yaml"));
    files.push(root().join("configs/tap-2port.yaml"));
    files.sort();
    files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

/// One YAML input through the loader: Ok, or an error whose line is in the file.
fn load_yaml(text: &str) {
    let lines = text.lines().count() as u64 + 1;
    if let Err(d) = lossless::config::parse("fuzz.yaml", "fuzz", text) {
        if let Some(l) = d.line {
            assert!(l <= lines, "error at line {l} of {lines}: {d}\n{text}");
        }
    }
}

#[test]
fn the_yaml_loader_takes_any_input() {
    const TARGET: &str = "yaml";
    fuzz(TARGET, || {
        for (name, bytes) in regressions("yaml") {
            note(TARGET, name.clone());
            let text = String::from_utf8_lossy(&bytes).to_string();
            case(|| name.clone(), || load_yaml(&text));
        }
        let seeds = yaml_seeds();
        let keys = yaml_keys(&seeds);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x5EED_0001);
        for i in 0..CASES {
            let text = match rng.next_u32() % 10 {
                // Arbitrary bytes, read as the loader reads text.
                0 => {
                    let n = rng.next_u32() as usize % 400;
                    let b: Vec<u8> = (0..n).map(|_| rng.next_u32() as u8).collect();
                    String::from_utf8_lossy(&b).to_string()
                }
                // Bytes of a real file, mutated.
                1 | 2 => {
                    let mut b = pick(&mut rng, &seeds).clone().into_bytes();
                    mutate_bytes(&mut rng, &mut b);
                    String::from_utf8_lossy(&b).to_string()
                }
                // Its structure mutated.
                _ => {
                    let seed = pick(&mut rng, &seeds).clone();
                    mutate_yaml(&mut rng, &seed, &keys)
                }
            };
            note(TARGET, format!("yaml case {i}:\n{text}"));
            case(|| format!("yaml case {i}:\n{text}"), || load_yaml(&text));
        }
    });
}

/// A config_db cut to its first `keep` ports: every table entry naming another port goes
/// (a config_db of a real switch is 60–130 KB; two ports keep each case short).
fn cut_to_ports(db: &Value, keep: usize) -> Value {
    let ports: Vec<String> = db["PORT"]
        .as_object()
        .map(|p| p.keys().take(keep).cloned().collect())
        .unwrap_or_default();
    let names_other = |k: &str| {
        k.split(['|', ',', ':'])
            .any(|w| w.starts_with("Ethernet") && !ports.iter().any(|p| p == w))
    };
    let mut out = serde_json::Map::new();
    for (table, entries) in db.as_object().unwrap() {
        let Some(entries) = entries.as_object() else {
            out.insert(table.clone(), entries.clone());
            continue;
        };
        let mut kept = serde_json::Map::new();
        for (k, v) in entries {
            if names_other(k) {
                continue;
            }
            // CABLE_LENGTH and the like: a map from port to value.
            let v = match v.as_object() {
                Some(m) if table == "CABLE_LENGTH" => Value::Object(
                    m.iter()
                        .filter(|(p, _)| !names_other(p))
                        .map(|(p, x)| (p.clone(), x.clone()))
                        .collect(),
                ),
                _ => v.clone(),
            };
            kept.insert(k.clone(), v);
        }
        out.insert(table.clone(), Value::Object(kept));
    }
    Value::Object(out)
}

/// A JSON value with one node changed: a value replaced, a key removed or added.
fn mutate_json(rng: &mut Xoshiro256PlusPlus, v: &mut Value, depth: u32) {
    let replacement = |rng: &mut Xoshiro256PlusPlus| match rng.next_u32() % 8 {
        0 => Value::from(rng.next_u64() as i64),
        1 => Value::from(-1),
        2 => Value::from(1e300),
        3 => Value::Null,
        4 => Value::Array(vec![]),
        5 => Value::Object(Default::default()),
        6 => Value::from(pick(rng, TRICKY).to_string()),
        _ => Value::from(format!("{}", rng.next_u32() % 100_000)),
    };
    match v {
        Value::Object(m) if !m.is_empty() && depth < 4 && !rng.next_u32().is_multiple_of(4) => {
            let keys: Vec<String> = m.keys().cloned().collect();
            let k = pick(rng, &keys).clone();
            match rng.next_u32() % 6 {
                0 => {
                    m.remove(&k);
                }
                1 => {
                    let x = replacement(rng);
                    m.insert(format!("{k}|x"), x);
                }
                _ => mutate_json(rng, m.get_mut(&k).unwrap(), depth + 1),
            }
        }
        Value::Array(a) if !a.is_empty() && !rng.next_u32().is_multiple_of(3) => {
            let i = rng.next_u32() as usize % a.len();
            mutate_json(rng, &mut a[i], depth + 1);
        }
        _ => *v = replacement(rng),
    }
}

fn import(text: &str) {
    import_with(text, None)
}

/// The import of `text`, adding buffermgrd's lossless PGs from `lookup` when given.
fn import_with(text: &str, lookup: Option<lossless::config::sonic::pg_lookup::PgLookup>) {
    let opts = lossless::config::sonic::Options {
        name: "fuzz".into(),
        ports: None,
        tap_prefix: None,
        asic: None,
        named_by_hostname: false,
        pg_profile_lookup: lookup,
    };
    let _ = lossless::config::sonic::import("fuzz.json", text, &opts);
}

#[test]
fn the_sonic_import_takes_any_config_db() {
    const TARGET: &str = "sonic";
    fuzz(TARGET, || {
        for (name, bytes) in regressions("sonic") {
            note(TARGET, name.clone());
            let text = String::from_utf8_lossy(&bytes).to_string();
            case(|| name.clone(), || import(&text));
        }
        let dir = root().join("tests/data/sonic");
        let mut full: Vec<Value> = Vec::new();
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "json") {
                full.push(serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap());
            }
        }
        full.sort_by_key(|v| v.to_string());
        let small: Vec<Value> = full.iter().map(|v| cut_to_ports(v, 2)).collect();
        for s in &small {
            // The cut files are config_dbs the import takes.
            let opts = lossless::config::sonic::Options {
                name: "fuzz".into(),
                ports: None,
                tap_prefix: None,
                asic: None,
                named_by_hostname: false,
                pg_profile_lookup: None,
            };
            lossless::config::sonic::import("cut.json", &s.to_string(), &opts)
                .unwrap_or_else(|e| panic!("a cut config_db: {e}"));
        }
        let ini = std::fs::read(dir.join("pg_profile_lookup/force10-s6100.ini")).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x5EED_0002);
        for i in 0..CASES {
            // Every eighth case, a pg_profile_lookup.ini, mutated: parsed, and applied to a
            // cut file.
            if i % 8 == 0 {
                let mut b = ini.clone();
                mutate_bytes(&mut rng, &mut b);
                let lookup_text = String::from_utf8_lossy(&b).to_string();
                note(TARGET, format!("lookup case {i}: {lookup_text}"));
                let lookup = case(
                    || format!("lookup case {i}: {lookup_text}"),
                    || {
                        lossless::config::sonic::pg_lookup::PgLookup::parse(
                            "fuzz.ini",
                            &lookup_text,
                        )
                    },
                );
                if let Ok(l) = lookup {
                    let cut = pick(&mut rng, &small).to_string();
                    case(
                        || format!("lookup case {i} on a cut file"),
                        || import_with(&cut, Some(l)),
                    );
                }
            }
            let text = match rng.next_u32() % 200 {
                0..=9 => {
                    let n = rng.next_u32() as usize % 300;
                    let b: Vec<u8> = (0..n).map(|_| rng.next_u32() as u8).collect();
                    String::from_utf8_lossy(&b).to_string()
                }
                10..=49 => {
                    let mut b = pick(&mut rng, &small).to_string().into_bytes();
                    mutate_bytes(&mut rng, &mut b);
                    String::from_utf8_lossy(&b).to_string()
                }
                // A whole real file now and then.
                50 => {
                    let mut v = pick(&mut rng, &full).clone();
                    mutate_json(&mut rng, &mut v, 0);
                    v.to_string()
                }
                _ => {
                    let mut v = pick(&mut rng, &small).clone();
                    for _ in 0..1 + rng.next_u32() % 3 {
                        mutate_json(&mut rng, &mut v, 0);
                    }
                    v.to_string()
                }
            };
            note(TARGET, format!("sonic case {i}: {text}"));
            case(|| format!("sonic case {i}: {text}"), || import(&text));
        }
    });
}

/// A request: a request line and headers from a grammar, then byte mutations.
fn request(rng: &mut Xoshiro256PlusPlus) -> Vec<u8> {
    let method = *pick(
        rng,
        &[
            "GET", "GET", "GET", "POST", "HEAD", "PUT", "G\u{0}T", "get", "",
        ],
    );
    let path = *pick(
        rng,
        &[
            "/metrics",
            "/json",
            "/show/pfc",
            "/show/queue",
            "/show/watermark",
            "/show/ledger",
            "/show/p4",
            "/show/nope",
            "/",
            "/metrics?x=1",
            "*",
            "http://h/metrics",
            "/%00",
            "/%ff%fe",
            "//metrics",
            "/metrics/../json",
        ],
    );
    let version = *pick(
        rng,
        &[
            "HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/2", "HTTP/9.9", "", "HTTX",
        ],
    );
    let mut r = format!("{method} {path} {version}\r\n").into_bytes();
    for _ in 0..rng.next_u32() % 5 {
        let h = match rng.next_u32() % 7 {
            0 => "Host: x".to_string(),
            1 => format!(
                "Content-Length: {}",
                pick(rng, &["0", "5", "-1", "99999999999999999999", "x"])
            ),
            2 => "Transfer-Encoding: chunked".to_string(),
            3 => "Connection: keep-alive".to_string(),
            4 => format!(
                "X-{}: {}",
                rng.next_u32(),
                "y".repeat(rng.next_u32() as usize % 3000)
            ),
            5 => "Expect: 100-continue".to_string(),
            _ => "bad header line".to_string(),
        };
        r.extend_from_slice(h.as_bytes());
        r.extend_from_slice(b"\r\n");
    }
    if !rng.next_u32().is_multiple_of(4) {
        r.extend_from_slice(b"\r\n");
    }
    if rng.next_u32().is_multiple_of(3) {
        let n = rng.next_u32() as usize % 200;
        r.extend((0..n).map(|_| rng.next_u32() as u8));
    }
    if rng.next_u32().is_multiple_of(3) {
        mutate_bytes(rng, &mut r);
    }
    r
}

/// The first line of what the endpoint answers to `input` (empty: it closed without an
/// answer), and whether the answer came before the bound.
async fn exchange(endpoint: &lossless::tap::metrics::Endpoint, input: Vec<u8>) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut client, server) = tokio::io::duplex(1 << 16);
    let e = endpoint.clone();
    let served = tokio::spawn(async move { e.serve(server).await });
    let talk = async {
        let _ = client.write_all(&input).await;
        let _ = client.shutdown().await;
        let mut got = Vec::new();
        let _ = client.read_to_end(&mut got).await;
        got
    };
    let got = tokio::time::timeout(Duration::from_secs(15), talk)
        .await
        .ok()?;
    let _ = served.await;
    // The final status line: after any interim 1xx (100 Continue to an `Expect`).
    let text = String::from_utf8_lossy(&got);
    let status = text
        .split("\r\n")
        .filter(|l| l.starts_with("HTTP/"))
        .find(|l| l.get(9..10).is_none_or(|c| c != "1"))
        .or_else(|| text.lines().next())
        .unwrap_or("");
    Some(status.to_string())
}

#[test]
fn the_metrics_endpoint_answers_any_request() {
    // A finished switch's report to answer with: a short simulated run.
    let scenario = lossless::config::load(&root().join("configs/labs/incast-pfc.yaml"))
        .unwrap()
        .scenario;
    let opts = lossless::sim::RunOptions {
        duration: Some(lossless_buffer_model::Time::from_us(20)),
        ..Default::default()
    };
    let mut sim = lossless::sim::Sim::new(scenario, &opts).unwrap();
    sim.run(|_| lossless::sim::Go::On).unwrap();
    let live = std::sync::Arc::new(lossless::tap::live::Live::default());
    live.finish(lossless::report::json::report(&sim.outcome()));
    drop(sim);
    let endpoint = lossless::tap::metrics::Endpoint::new(live);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    const TARGET: &str = "http";
    fuzz(TARGET, || {
        let mut inputs: Vec<(String, Vec<u8>)> = regressions("http");
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x5EED_0003);
        let mut ok = 0;
        for i in 0..CASES + inputs.len() {
            let (name, input) = if i < inputs.len() {
                std::mem::take(&mut inputs[i])
            } else if rng.next_u32() % 10 == 0 {
                let n = rng.next_u32() as usize % 300;
                (
                    format!("http case {i}"),
                    (0..n).map(|_| rng.next_u32() as u8).collect(),
                )
            } else {
                (format!("http case {i}"), request(&mut rng))
            };
            note(
                TARGET,
                format!("{name}: {:?}", String::from_utf8_lossy(&input)),
            );
            let head = String::from_utf8_lossy(&input)
                .lines()
                .next()
                .unwrap_or("")
                .to_string();
            let line = case(
                || format!("{name}: {:?}", String::from_utf8_lossy(&input)),
                || rt.block_on(exchange(&endpoint, input.clone())),
            )
            .unwrap_or_else(|| panic!("{name}: no answer and no close: {head:?}"));
            if line.is_empty() {
                continue;
            }
            assert!(
                line.starts_with("HTTP/1.1 ") || line.starts_with("HTTP/1.0 "),
                "{name}: {line:?} to {head:?}"
            );
            let code: u16 = line[9..12].parse().unwrap();
            if code == 200 {
                ok += 1;
                assert!(head.starts_with("GET "), "{name}: 200 to {head:?}");
            } else {
                assert!((400..600).contains(&code), "{name}: {line} to {head:?}");
            }
        }
        assert!(ok > 1000, "valid requests were answered: {ok}");
    });
}

/// The memory bound does fail a case that takes too much.
#[test]
#[should_panic(expected = "a case allocated")]
fn a_case_over_the_memory_bound_fails() {
    case(|| "100 MiB".into(), || vec![1u8; 100 << 20].len());
}
