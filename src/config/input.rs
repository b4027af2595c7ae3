//! Reading what a user hands in — scenario files, SONiC config_db.json files — within
//! bounds, so that no input (`/dev/zero`, a multi-gigabyte file, a YAML bomb) can take the
//! machine's memory: a file is read up to [`MAX_INPUT_BYTES`], and YAML is parsed within
//! a budget sized for a large fabric ([`MAX_YAML_NODES`]). Each limit, when hit, is said in
//! words with the file.

use std::io::Read;
use std::path::Path;

/// The largest file read: 16 MiB, 150,000 flows with every key written (a 2 MB file holds
/// 20,000) or 300,000 short ones; a file that size resolves in about 1 GB.
pub const MAX_INPUT_BYTES: u64 = 16 << 20;
/// The most YAML nodes (values, lists, maps) a file may have: 4 million, more than a
/// 16 MiB file of flows has.
pub const MAX_YAML_NODES: usize = 4_000_000;

/// The text of `path`, refused beyond [`MAX_INPUT_BYTES`] or when it is not UTF-8. The
/// error is a sentence without the path (the caller names it).
pub fn read_text(path: &Path) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(format!(
            "larger than {} MiB, the most lossless reads from one file",
            MAX_INPUT_BYTES >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not text: byte {} is not UTF-8 (a scenario is YAML, a config_db JSON)",
            e.utf8_error().valid_up_to()
        )
    })
}

/// YAML `text` as a `T`, within the budget.
pub fn from_yaml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, serde_saphyr::Error> {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_nodes = MAX_YAML_NODES;
    budget.max_events = 2 * MAX_YAML_NODES;
    budget.max_total_scalar_bytes = MAX_INPUT_BYTES as usize;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    serde_saphyr::from_str_with_options(text, options)
}

/// A budget error in words (None for any other error).
pub fn budget_words(e: &serde_saphyr::Error) -> Option<String> {
    use serde_saphyr::budget::BudgetBreach as B;
    let mut e = e;
    // Unwrap the snippet and alias wrappers to the error itself.
    while let serde_saphyr::Error::WithSnippet { error, .. }
    | serde_saphyr::Error::AliasError { error, .. } = e
    {
        e = error;
    }
    let serde_saphyr::Error::Budget { breach, .. } = e else {
        return None;
    };
    Some(match breach {
        B::Nodes { .. } | B::Events { .. } => format!(
            "more than {} YAML values, lists and maps, the most lossless reads from one file",
            MAX_YAML_NODES
        ),
        B::Depth { depth } => format!("nested {depth} deep, deeper than a scenario can be"),
        B::Aliases { .. } | B::Anchors { .. } | B::RecordedAnchorEvents { .. } => {
            "too many YAML anchors or aliases (`&a`, `*a`), or aliases that expand too far"
                .to_string()
        }
        other => format!("beyond what lossless reads from one file ({other:?})"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endless_and_binary_inputs_are_refused_in_bounded_memory() {
        let e = read_text(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            e,
            "larger than 16 MiB, the most lossless reads from one file"
        );
        let e = read_text(Path::new("/dev/urandom")).unwrap_err();
        assert!(
            e.starts_with("larger than") || e.starts_with("not text"),
            "{e}"
        );
        let e = read_text(Path::new("/nonexistent.yaml")).unwrap_err();
        assert!(e.starts_with("cannot read: "), "{e}");
    }

    #[test]
    fn more_nodes_than_the_budget_is_said_in_words() {
        let mut text = String::from("x: [");
        for _ in 0..MAX_YAML_NODES {
            text.push_str("0,");
        }
        text.push_str("0]\n");
        let e = from_yaml::<serde_json::Value>(&text).unwrap_err();
        assert_eq!(
            budget_words(&e).as_deref(),
            Some("more than 4000000 YAML values, lists and maps, the most lossless reads from one file")
        );
    }

    #[test]
    fn a_yaml_bomb_meets_the_budget_in_words() {
        let bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n";
        let e = from_yaml::<serde_json::Value>(bomb).unwrap_err();
        let words = budget_words(&e).unwrap_or_else(|| panic!("{e}"));
        assert!(words.contains("aliases that expand too far"), "{words}");
    }
}
