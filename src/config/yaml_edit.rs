//! Editing a scenario file's YAML in place, for `--sweep` and `--duration`: a value is
//! replaced where it is written, a missing key is added beside its siblings, an entry is
//! removed with its lines — and every other byte stays as it was. Nothing is re-serialised,
//! so the file keeps its YAML (`pfc_asym: on` stays the word the loader reads, not a
//! boolean from another YAML version), its comments and, but for added lines, its line
//! numbers.
//!
//! The document is read into a tree of nodes with their byte spans (granit-parser, the
//! parser serde-saphyr reads with); a path of keys, list indices and list entries by
//! `name` finds a node; edits are byte ranges applied from the last to the first.

use granit_parser::{Event, Parser, Span, StructureStyle};

/// Where a node is written: its first byte, one past its last, and its first line's column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct At {
    start: usize,
    end: usize,
    col: usize,
}

/// A node of the document, with where it is written.
#[derive(Clone, Debug)]
enum Node {
    Scalar(String, At),
    /// Entries: the key, where the key is written, the value.
    Map(Vec<(String, At, Node)>, At, bool),
    Seq(Vec<Node>, At, bool),
    /// An alias (`*a`): its target is written elsewhere.
    Alias(At),
}

impl Node {
    fn at(&self) -> At {
        match self {
            Node::Scalar(_, a) | Node::Map(_, a, _) | Node::Seq(_, a, _) | Node::Alias(a) => *a,
        }
    }
}

/// A YAML document read for editing, and the edits made to it.
#[derive(Debug)]
pub struct Doc<'a> {
    text: &'a str,
    root: Node,
    edits: Vec<(usize, usize, String)>,
}

fn at(span: &Span) -> At {
    At {
        start: span.start.byte_offset().unwrap_or(0),
        end: span.end.byte_offset().unwrap_or(0),
        col: span.start.col(),
    }
}

/// Read one node from `events`, whose first event is `first`.
fn node<'a>(
    first: (Event<'a>, Span),
    events: &mut impl Iterator<Item = Result<(Event<'a>, Span), String>>,
) -> Result<Node, String> {
    let (ev, span) = first;
    let start = at(&span);
    match ev {
        Event::Scalar(text, ..) => Ok(Node::Scalar(text.into_owned(), start)),
        Event::Alias(_) => Ok(Node::Alias(start)),
        Event::SequenceStart(style, ..) => {
            let mut items = Vec::new();
            loop {
                let next = events.next().ok_or("the document ends inside a list")??;
                if let Event::SequenceEnd = next.0 {
                    let end = match (style, items.last()) {
                        (StructureStyle::Block, Some(last)) => Node::at(last).end,
                        _ => at(&next.1).end,
                    };
                    let span = At { end, ..start };
                    return Ok(Node::Seq(items, span, style == StructureStyle::Flow));
                }
                items.push(node(next, events)?);
            }
        }
        Event::MappingStart(style, ..) => {
            let mut entries = Vec::new();
            loop {
                let next = events.next().ok_or("the document ends inside a map")??;
                if let Event::MappingEnd = next.0 {
                    let end = match (style, entries.last()) {
                        (StructureStyle::Block, Some((_, _, last))) => Node::at(last).end,
                        _ => at(&next.1).end,
                    };
                    let span = At { end, ..start };
                    return Ok(Node::Map(entries, span, style == StructureStyle::Flow));
                }
                let key_at = at(&next.1);
                let key = match node(next, events)? {
                    Node::Scalar(k, _) => k,
                    _ => return Err("a map key that is not a plain word".into()),
                };
                let first = events.next().ok_or("the document ends after a key")??;
                entries.push((key, key_at, node(first, events)?));
            }
        }
        other => Err(format!("unexpected YAML event {other:?}")),
    }
}

/// Does `e` open, close or make a node (or the stream or a document)?
fn structural(e: &Event) -> bool {
    matches!(
        e,
        Event::StreamStart
            | Event::StreamEnd
            | Event::DocumentStart(..)
            | Event::DocumentEnd
            | Event::Alias(_)
            | Event::Scalar(..)
            | Event::SequenceStart(..)
            | Event::SequenceEnd
            | Event::MappingStart(..)
            | Event::MappingEnd
    )
}

/// One step of a path: a map key, or a list entry by index or by its `name`.
fn describe(segments: &[&str], i: usize) -> String {
    segments[..=i].join(".")
}

impl<'a> Doc<'a> {
    /// Read `text`.
    pub fn parse(text: &'a str) -> Result<Doc<'a>, String> {
        // Comments and anchor names are presentation, not nodes: left out.
        let mut events = Parser::new_from_str(text)
            .map(|r| r.map_err(|e| e.to_string()))
            .filter(|r| r.as_ref().map_or(true, |(e, _)| structural(e)));
        let mut root = None;
        while let Some(ev) = events.next() {
            let ev = ev?;
            match ev.0 {
                Event::StreamStart | Event::DocumentStart(..) | Event::DocumentEnd => {}
                Event::StreamEnd => break,
                _ if root.is_some() => return Err("more than one YAML document".into()),
                _ => root = Some(node(ev, &mut events)?),
            }
        }
        let root = root.ok_or("the scenario is empty")?;
        if !matches!(root, Node::Map(..)) {
            return Err("the scenario is not a map".into());
        }
        Ok(Doc {
            text,
            root,
            edits: Vec::new(),
        })
    }

    /// The dotted path (as `--sweep` writes it: list entries by `name`, else by index) of
    /// the value written at byte `offset`, if a value is there: what an error found by
    /// the parser at that place is about.
    pub fn path_at(&self, offset: usize) -> Option<String> {
        let path = self.steps_at(offset);
        (!path.is_empty()).then(|| path.join("."))
    }

    /// The steps of [`Doc::path_at`] (keys may hold dots: a config_db's do).
    pub fn steps_at(&self, offset: usize) -> Vec<String> {
        let mut path: Vec<String> = Vec::new();
        let mut n = &self.root;
        loop {
            let inside = |a: At| a.start <= offset && offset < a.end.max(a.start + 1);
            let next = match n {
                Node::Map(entries, ..) => entries.iter().find_map(|(k, key_at, v)| {
                    (inside(*key_at) || inside(v.at())).then(|| (k.clone(), v))
                }),
                Node::Seq(items, ..) => items.iter().enumerate().find_map(|(i, v)| {
                    inside(v.at()).then(|| (name_of(v).map_or(i.to_string(), str::to_string), v))
                }),
                Node::Scalar(..) | Node::Alias(_) => None,
            };
            match next {
                Some((step, v)) => {
                    path.push(step);
                    n = v;
                }
                None => return path,
            }
        }
    }

    /// The node at `path` (a dotted key); Err says which step is missing.
    fn find(&self, path: &str) -> Result<&Node, String> {
        let segments: Vec<&str> = path.split('.').collect();
        let mut n = &self.root;
        for (i, seg) in segments.iter().enumerate() {
            n = self.step(n, &segments, i, seg)?;
        }
        Ok(n)
    }

    fn step<'n>(
        &self,
        n: &'n Node,
        segments: &[&str],
        i: usize,
        seg: &str,
    ) -> Result<&'n Node, String> {
        let here = describe(segments, i);
        match n {
            Node::Map(entries, ..) => entries
                .iter()
                .find(|(k, ..)| k == seg)
                .map(|(_, _, v)| v)
                .ok_or_else(|| {
                    let keys: Vec<&str> = entries.iter().map(|(k, ..)| k.as_str()).collect();
                    if keys.contains(&"<<") {
                        // Changing the anchor's text would change every map that merges it.
                        format!(
                            "`{here}`: `{}` merges another map (`<<: *…`) and does not write `{seg}` itself; sweep the key where the anchor is written, or write `{seg}` in `{}`",
                            segments[..i].join("."),
                            segments[..i].join(".")
                        )
                    } else {
                        format!("`{here}`: no such key (there are: {})", keys.join(", "))
                    }
                }),
            Node::Seq(items, ..) => {
                let n = items.len();
                match seg.parse::<usize>() {
                    Ok(k) if k < n => Ok(&items[k]),
                    Ok(k) => Err(format!("`{here}`: index {k}, but the list has {n}")),
                    Err(_) => items
                        .iter()
                        .find(|e| name_of(e) == Some(seg))
                        .ok_or_else(|| format!("`{here}`: no entry named `{seg}`")),
                }
            }
            Node::Alias(_) => Err(format!(
                "`{}`: an alias (`*name`); set the key where its anchor is written",
                segments[..i].join(".")
            )),
            Node::Scalar(..) => Err(format!(
                "`{here}`: `{}` is not a map or a list",
                segments[..i].join(".")
            )),
        }
    }

    /// Is there a node at `path`?
    pub fn has(&self, path: &str) -> bool {
        self.find(path).is_ok()
    }

    /// The scalar at `path`, as written (None: absent or not a scalar).
    pub fn scalar(&self, path: &str) -> Option<&str> {
        match self.find(path) {
            Ok(Node::Scalar(s, _)) => Some(s),
            _ => None,
        }
    }

    /// How many entries the list at `path` has (None: absent or not a list).
    pub fn len(&self, path: &str) -> Option<usize> {
        match self.find(path) {
            Ok(Node::Seq(items, ..)) => Some(items.len()),
            _ => None,
        }
    }

    /// Set `path` to `value` (YAML text): the value written there is replaced; a key that a
    /// map lacks is added to it, after its last entry.
    pub fn set(&mut self, path: &str, value: &str) -> Result<(), String> {
        if let Ok(n) = self.find(path) {
            let a = n.at();
            self.edits.push((a.start, a.end, value.to_string()));
            return Ok(());
        }
        let (parent, key) = match path.rsplit_once('.') {
            Some((p, k)) => (Some(p), k),
            None => (None, path),
        };
        let map = match parent {
            Some(p) => self.find(p)?,
            None => &self.root,
        };
        let Node::Map(entries, span, flow) = map else {
            // The path's last step is missing in a list or a scalar: say so.
            return Err(self.find(path).expect_err("missing").to_string());
        };
        let edit = match (flow, entries.last()) {
            (true, Some((_, _, last))) => {
                let end = last.at().end;
                (end, end, format!(", {key}: {value}"))
            }
            // An empty flow map, `{}`: inside its braces.
            (true, None) => (span.start + 1, span.start + 1, format!("{key}: {value}")),
            (false, Some((_, key_at, last))) => {
                let end = last.at().end;
                let indent = " ".repeat(key_at.col);
                (end, end, format!("\n{indent}{key}: {value}"))
            }
            (false, None) => return Err(format!("`{path}`: an empty block map")),
        };
        self.edits.push(edit);
        Ok(())
    }

    /// Remove the entry `key` of the map at `path` (nothing when it is absent).
    pub fn remove_key(&mut self, path: &str, key: &str) -> Result<(), String> {
        let map = self.find(path)?;
        let Node::Map(entries, _, flow) = map else {
            return Err(format!("`{path}` is not a map"));
        };
        let Some(k) = entries.iter().position(|(name, ..)| name == key) else {
            return Ok(());
        };
        let (start, end) = (entries[k].1.start, entries[k].2.at().end);
        let edit = if *flow {
            // With the comma before it, or after it when it is the first.
            match (k, entries.get(k + 1)) {
                (0, Some(next)) => (start, next.1.start, String::new()),
                (0, None) => (start, end, String::new()),
                _ => (entries[k - 1].2.at().end, end, String::new()),
            }
        } else {
            self.lines(start, end)
        };
        self.edits.push(edit);
        Ok(())
    }

    /// Remove entry `index` of the list at `path`.
    pub fn remove_item(&mut self, path: &str, index: usize) -> Result<(), String> {
        let list = self.find(path)?;
        let Node::Seq(items, _, flow) = list else {
            return Err(format!("`{path}` is not a list"));
        };
        let Some(item) = items.get(index) else {
            return Err(format!("`{path}`: no entry {index}"));
        };
        let a = item.at();
        let edit = if *flow {
            match (index, items.get(index + 1)) {
                (0, Some(next)) => (a.start, next.at().start, String::new()),
                (0, None) => (a.start, a.end, String::new()),
                _ => (items[index - 1].at().end, a.end, String::new()),
            }
        } else {
            self.lines(a.start, a.end)
        };
        self.edits.push(edit);
        Ok(())
    }

    /// The whole lines bytes `start..end` are on (a block entry, with its `- `), as a
    /// removal.
    fn lines(&self, start: usize, end: usize) -> (usize, usize, String) {
        let from = self.text[..start].rfind('\n').map_or(0, |i| i + 1);
        let to = self.text[end..]
            .find('\n')
            .map_or(self.text.len(), |i| end + i + 1);
        (from, to, String::new())
    }

    /// The text with every edit made (removals that overlap, of neighbouring entries of a
    /// flow list, merged into one).
    pub fn finish(mut self) -> String {
        // An insertion inside a range that is removed (a key added after an entry that
        // goes) goes where the removal starts.
        let removed: Vec<(usize, usize)> = self
            .edits
            .iter()
            .filter(|e| e.2.is_empty() && e.0 < e.1)
            .map(|e| (e.0, e.1))
            .collect();
        for e in self.edits.iter_mut().filter(|e| e.0 == e.1) {
            if let Some(r) = removed.iter().find(|r| r.0 < e.0 && e.0 <= r.1) {
                e.0 = r.0;
                e.1 = r.0;
            }
        }
        self.edits.sort_by_key(|e| (e.0, e.1));
        let mut merged: Vec<(usize, usize, String)> = Vec::new();
        for e in self.edits {
            match merged.last_mut() {
                Some(last) if e.0 < last.1 && last.2.is_empty() && e.2.is_empty() => {
                    last.1 = last.1.max(e.1);
                }
                _ => merged.push(e),
            }
        }
        let mut out = self.text.to_string();
        for (start, end, with) in merged.into_iter().rev() {
            out.replace_range(start..end, &with);
        }
        out
    }
}

/// A list entry's `name`, if it is a map with one.
fn name_of(n: &Node) -> Option<&str> {
    match n {
        Node::Map(entries, ..) => entries.iter().find_map(|(k, _, v)| match (k.as_str(), v) {
            ("name", Node::Scalar(s, _)) => Some(s.as_str()),
            _ => None,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_of_a_place_names_keys_and_entries() {
        let text = "switches:\n  - name: tor\n    cbfc: {credits: 99999999999999999999}\n  - {ports: [1, 2]}\n";
        let d = Doc::parse(text).unwrap();
        let at = |needle: &str| text.find(needle).unwrap();
        assert_eq!(
            d.path_at(at("9999")).as_deref(),
            Some("switches.tor.cbfc.credits")
        );
        assert_eq!(d.path_at(at("2]")).as_deref(), Some("switches.1.ports.1"));
        assert_eq!(
            d.path_at(at("credits")).as_deref(),
            Some("switches.tor.cbfc.credits")
        );
    }

    const FILE: &str = "name: lab   # a comment\nswitches:\n  - name: tor\n    ports: {count: 4, speed: 100G}\n    qos:\n      pfc_enable: [3, 4]     # lossless\n      pfc_asym: on\nflows:\n  - {name: a, src: h1, dst: h0, rate: 10G}\n  - {name: b, src: h2, dst: h0}\nevents:\n  - {at: 1ms, port: h1, drop: 1}\n  - at: 3ms\n    port: h2\n    drop: 1\n";

    fn set(path: &str, v: &str) -> String {
        let mut d = Doc::parse(FILE).unwrap();
        d.set(path, v).unwrap();
        d.finish()
    }

    #[test]
    fn a_value_is_replaced_where_it_is_written_and_nothing_else_moves() {
        let out = set("switches.tor.ports.count", "8");
        assert_eq!(out, FILE.replace("count: 4", "count: 8"));
        let out = set("flows.b.dst", "h3");
        assert_eq!(out, FILE.replace("dst: h0}\nevents", "dst: h3}\nevents"));
        let out = set("switches.0.qos.pfc_enable", "[]");
        assert_eq!(out, FILE.replace("[3, 4]", "[]"));
        // `on` stays the word it is.
        let out = set("name", "other");
        assert!(out.contains("pfc_asym: on") && out.starts_with("name: other   # a comment"));
    }

    #[test]
    fn a_missing_key_is_added_beside_its_siblings() {
        let out = set("flows.b.rate", "5G");
        assert!(
            out.contains("{name: b, src: h2, dst: h0, rate: 5G}"),
            "{out}"
        );
        let out = set("switches.tor.qos.trust", "dot1p");
        assert!(
            out.contains("      pfc_asym: on\n      trust: dot1p\n"),
            "{out}"
        );
        let out = set("duration", "2ms");
        assert!(out.ends_with("    drop: 1\nduration: 2ms\n"), "{out}");
        let d: serde_json::Value = serde_saphyr::from_str(&out).unwrap();
        assert_eq!(d["duration"], "2ms");
    }

    #[test]
    fn entries_are_removed_with_their_lines() {
        let mut d = Doc::parse(FILE).unwrap();
        d.remove_item("events", 1).unwrap();
        d.remove_key("flows.a", "rate").unwrap();
        let out = d.finish();
        assert!(
            out.ends_with("events:\n  - {at: 1ms, port: h1, drop: 1}\n"),
            "{out}"
        );
        assert!(out.contains("{name: a, src: h1, dst: h0}"), "{out}");
        let mut d = Doc::parse(FILE).unwrap();
        d.remove_item("events", 0).unwrap();
        d.remove_key("switches.tor.qos", "pfc_asym").unwrap();
        let out = d.finish();
        assert!(out.contains("events:\n  - at: 3ms\n"), "{out}");
        assert!(!out.contains("pfc_asym"), "{out}");
    }

    #[test]
    fn a_key_added_after_an_entry_that_goes_lands_where_it_was() {
        let file = "name: x\nevents:\n  - {at: 3ms, port: h}     # late\n";
        let mut d = Doc::parse(file).unwrap();
        d.set("duration", "1ms").unwrap();
        d.remove_item("events", 0).unwrap();
        let out = d.finish();
        assert_eq!(out, "name: x\nevents:\n\nduration: 1ms");
        let v: serde_json::Value = serde_saphyr::from_str(&out).unwrap();
        assert_eq!(v["duration"], "1ms");
    }

    #[test]
    fn a_missing_step_is_named() {
        let mut d = Doc::parse(FILE).unwrap();
        let e = d.set("switches.spine.qos", "{}").unwrap_err();
        assert_eq!(e, "`switches.spine`: no entry named `spine`");
        let e = d.set("flows.5.rate", "1G").unwrap_err();
        assert_eq!(e, "`flows.5`: index 5, but the list has 2");
        let e = d.set("name.x", "1").unwrap_err();
        assert_eq!(e, "`name.x`: `name` is not a map or a list");
        let e = d.set("nosuch.x", "1").unwrap_err();
        assert!(
            e.starts_with("`nosuch`: no such key (there are: name, switches"),
            "{e}"
        );
    }
}
