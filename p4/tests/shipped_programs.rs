//! The programs shipped in `configs/p4/` are the ones these tests build and check (BMv2
//! JSON laid out as p4c lays it out): a shipped file that drifts from its builder fails
//! here. `LOSSLESS_WRITE_P4=1 cargo test -p lossless-p4 --test shipped_programs` writes
//! them again.

mod common;

use common::*;
use std::path::PathBuf;

fn shipped(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../configs/p4")
        .join(name)
}

/// Builds one shipped program.
type Builder = fn() -> Prog;

/// Each shipped program's file name and its builder.
const SHIPPED: &[(&str, Builder)] = &[("router.json", router), ("ecn-router.json", ecn_router)];

#[test]
fn the_shipped_programs_are_the_tested_ones() {
    for (name, build) in SHIPPED {
        let want = serde_json::to_string_pretty(&build().json()).unwrap() + "\n";
        let path = shipped(name);
        if std::env::var_os("LOSSLESS_WRITE_P4").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "{} differs from its builder (LOSSLESS_WRITE_P4=1 writes it)",
            path.display()
        );
        // And it loads.
        lossless_p4::load(&have).unwrap();
    }
}
