//! A table's entries and their look-up: exact keys in a hash map, LPM entries longest
//! prefix first, ternary, range and optional entries by priority. What the control
//! plane adds is checked against the table (key widths, match kinds, the actions the
//! table allows, their data).

use crate::program::{mask, ActionCall, Lookup, MatchKind, Program, Table, TableId, Value};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A table's keys by hash: the control plane writes them, so a fast multiplicative hash
/// (as rustc's FxHash) serves, where the default one guards against chosen collisions.
type KeyMap = HashMap<Vec<Value>, usize, BuildHasherDefault<KeyHasher>>;

/// Mixes each word of a key into one 64-bit state.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    #[inline]
    fn write_u128(&mut self, v: u128) {
        self.write_u64(v as u64);
        self.write_u64((v >> 64) as u64);
    }

    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// How an entry matches one key field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyMatch {
    Exact(Value),
    /// Value and prefix length.
    Lpm(Value, u32),
    /// Value and mask.
    Ternary(Value, Value),
    /// Low and high, both included.
    Range(Value, Value),
    /// A value, or anything (None).
    Optional(Option<Value>),
}

impl KeyMatch {
    /// Does `v` (a `width`-bit key field) match?
    #[inline]
    fn matches(&self, v: Value, width: u32) -> bool {
        match *self {
            KeyMatch::Exact(x) => v == x,
            KeyMatch::Lpm(x, len) => {
                let m = prefix_mask(width, len);
                v & m == x & m
            }
            KeyMatch::Ternary(x, m) => v & m == x & m,
            KeyMatch::Range(lo, hi) => (lo..=hi).contains(&v),
            KeyMatch::Optional(x) => x.is_none_or(|x| x == v),
        }
    }
}

/// The mask of the first `len` bits of a `width`-bit value.
fn prefix_mask(width: u32, len: u32) -> Value {
    if len == 0 {
        0
    } else {
        mask(width) & !mask(width - len.min(width))
    }
}

/// An entry: its key, its rank among the table's priority entries (lower wins), and the
/// action it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub key: Vec<KeyMatch>,
    /// Lower wins (BMv2's numbering); unused by exact and LPM tables.
    pub priority: i64,
    pub action: Target,
}

/// What an entry (or a default) runs: an action with its data, or, in an indirect table,
/// a member of its action profile or a group of its selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Action(ActionCall),
    Member(u32),
    Group(u32),
}

/// An action profile's members (by handle) and its selector's groups
/// (each its members' handles in ascending order).
#[derive(Clone, Debug, Default)]
pub struct ProfileState {
    pub members: Vec<ActionCall>,
    pub groups: Vec<Vec<u32>>,
}

/// Why an entry or a default action is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryError(pub String);

impl std::fmt::Display for EntryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One table's entries, its default action and its hit and miss counts.
#[derive(Clone, Debug, Default)]
pub struct TableState {
    entries: Vec<Entry>,
    /// Exact tables: key → entry.
    exact: KeyMap,
    /// Priority tables: entries in the order they are tried.
    order: Vec<usize>,
    /// LPM tables: for each prefix length present, longest first, the entries by their
    /// key with the LPM field cut to that length (one hash look-up per length).
    lpm: Vec<(u32, KeyMap)>,
    /// A key being cut to a prefix length.
    scratch: Vec<Value>,
    default: Option<Target>,
    /// Each entry's direct counter: frames and bytes that hit it (a table with one).
    pub counts: Vec<(u64, u64)>,
    pub hits: u64,
    pub misses: u64,
}

/// The entries of every table of a program.
#[derive(Clone, Debug)]
pub struct Tables {
    pub states: Vec<TableState>,
    pub profiles: Vec<ProfileState>,
}

impl Tables {
    /// Every table of `p` with its const entries, and its program's default action.
    pub fn new(p: &Program) -> Tables {
        let mut states = vec![TableState::default(); p.tables.len()];
        for (i, t) in p.tables.iter().enumerate() {
            states[i].default = t.default.clone().map(Target::Action);
            for e in t.const_entries.iter().flatten() {
                insert(&mut states[i], t, e.clone());
            }
        }
        Tables {
            states,
            profiles: vec![ProfileState::default(); p.profiles.len()],
        }
    }

    /// Add `call` to action profile `k` as a member: its handle.
    pub fn create_member(
        &mut self,
        p: &Program,
        k: usize,
        call: ActionCall,
    ) -> Result<u32, EntryError> {
        let prof = &p.profiles[k];
        for t in p.tables.iter().filter(|t| t.profile == Some(k as u32)) {
            if t.actions.contains(&call.action) {
                check_call(p, t, &call)?;
                break;
            }
        }
        let state = &mut self.profiles[k];
        if state.members.len() >= prof.max_size {
            return Err(EntryError(format!(
                "action profile {} is full ({} members)",
                prof.name, prof.max_size
            )));
        }
        state.members.push(call);
        Ok(state.members.len() as u32 - 1)
    }

    /// Add an empty group to action profile `k` (one with a selector): its handle.
    pub fn create_group(&mut self, p: &Program, k: usize) -> Result<u32, EntryError> {
        if p.profiles[k].selector.is_none() {
            return Err(EntryError(format!(
                "action profile {} has no selector: it has members, not groups",
                p.profiles[k].name
            )));
        }
        let groups = &mut self.profiles[k].groups;
        groups.push(Vec::new());
        Ok(groups.len() as u32 - 1)
    }

    /// Put member `m` of profile `k` in its group `g`.
    pub fn add_to_group(
        &mut self,
        p: &Program,
        k: usize,
        m: u32,
        g: u32,
    ) -> Result<(), EntryError> {
        let name = &p.profiles[k].name;
        let state = &mut self.profiles[k];
        if m as usize >= state.members.len() {
            return Err(EntryError(format!(
                "action profile {name} has no member {m}"
            )));
        }
        let Some(group) = state.groups.get_mut(g as usize) else {
            return Err(EntryError(format!(
                "action profile {name} has no group {g}"
            )));
        };
        match group.binary_search(&m) {
            Ok(_) => Err(EntryError(format!(
                "member {m} is already in group {g} of action profile {name}"
            ))),
            Err(at) => {
                group.insert(at, m);
                Ok(())
            }
        }
    }

    /// Is `target` one table `t` can run: an action of its own (a direct table), an
    /// existing member of its profile, or an existing group of its selector?
    fn check_target(&self, p: &Program, t: &Table, target: &Target) -> Result<(), EntryError> {
        let profile = t
            .profile
            .map(|k| (&p.profiles[k as usize], &self.profiles[k as usize]));
        match (target, profile) {
            (Target::Action(call), None) => check_call(p, t, call),
            (Target::Action(_), Some((prof, _))) => Err(EntryError(format!(
                "table {} is indirect: its entries name members or groups of action profile {} (table_indirect_add)",
                t.name, prof.name
            ))),
            (Target::Member(_) | Target::Group(_), None) => Err(EntryError(format!(
                "table {} has no action profile: its entries name actions (table_add)",
                t.name
            ))),
            (Target::Member(m), Some((prof, state))) => {
                if (*m as usize) < state.members.len() {
                    Ok(())
                } else {
                    Err(EntryError(format!("action profile {} has no member {m}", prof.name)))
                }
            }
            (Target::Group(g), Some((prof, state))) => {
                if prof.selector.is_none() {
                    Err(EntryError(format!(
                        "action profile {} has no selector: no groups",
                        prof.name
                    )))
                } else if (*g as usize) < state.groups.len() {
                    Ok(())
                } else {
                    Err(EntryError(format!("action profile {} has no group {g}", prof.name)))
                }
            }
        }
    }

    /// Add `entry` to table `t`, checked against it.
    pub fn add(&mut self, p: &Program, t: TableId, mut entry: Entry) -> Result<(), EntryError> {
        let table = &p.tables[t.0 as usize];
        if table.const_entries.is_some() {
            return Err(EntryError(format!(
                "table {} has const entries: the program fixes them",
                table.name
            )));
        }
        check_entry(table, &entry)?;
        self.check_target(p, table, &entry.action)?;
        // The bits a prefix or mask leaves out are not part of the key (10.0.0.1/8 is
        // 10.0.0.0/8).
        for (m, f) in entry.key.iter_mut().zip(&table.key) {
            match m {
                KeyMatch::Lpm(v, len) => *v &= prefix_mask(f.width, *len),
                KeyMatch::Ternary(v, mask) => *v &= *mask,
                _ => {}
            }
        }
        let state = &mut self.states[t.0 as usize];
        if state.entries.len() >= table.max_size {
            return Err(EntryError(format!(
                "table {} is full ({} entries)",
                table.name, table.max_size
            )));
        }
        if state.entries.iter().any(|e| e.key == entry.key) {
            return Err(EntryError(format!(
                "table {} already has an entry with this key",
                table.name
            )));
        }
        insert(state, table, entry);
        Ok(())
    }

    /// Set table `t`'s default action.
    pub fn set_default(
        &mut self,
        p: &Program,
        t: TableId,
        target: Target,
    ) -> Result<(), EntryError> {
        let table = &p.tables[t.0 as usize];
        if table.default_const && table.default.clone().map(Target::Action) != Some(target.clone())
        {
            return Err(EntryError(format!(
                "table {}'s default action is const in the program",
                table.name
            )));
        }
        self.check_target(p, table, &target)?;
        self.states[t.0 as usize].default = Some(target);
        Ok(())
    }

    /// Each entry's direct counter of table `t` (frames, bytes), in the entries' order.
    pub fn counts(&self, t: TableId) -> &[(u64, u64)] {
        &self.states[t.0 as usize].counts
    }

    /// Entries of table `t`.
    pub fn entries(&self, t: TableId) -> &[Entry] {
        &self.states[t.0 as usize].entries
    }

    /// The action for `key` in table `t`: the entry's (hit) or the default (miss). An
    /// indirect table's member is its profile's; a group's member is the one `selection`
    /// (the selector's hash of the frame) picks: `selection % size` in the order of the
    /// members' handles. An empty group runs nothing.
    #[inline]
    pub fn lookup(
        &mut self,
        table: &Table,
        t: TableId,
        key: &[Value],
        selection: Value,
        len: usize,
    ) -> (bool, Option<&ActionCall>) {
        let state = &mut self.states[t.0 as usize];
        let found = match table.lookup {
            Lookup::Exact => state.exact.get(key).copied(),
            Lookup::Lpm => {
                let at = table
                    .key
                    .iter()
                    .position(|k| k.kind == MatchKind::Lpm)
                    .expect("an LPM table has an LPM field");
                let width = table.key[at].width;
                let mut found = None;
                for (len, by_key) in &state.lpm {
                    state.scratch.clear();
                    state.scratch.extend_from_slice(key);
                    state.scratch[at] &= prefix_mask(width, *len);
                    if let Some(&i) = by_key.get(state.scratch.as_slice()) {
                        found = Some(i);
                        break;
                    }
                }
                found
            }
            Lookup::Priority => state.order.iter().copied().find(|&i| {
                state.entries[i]
                    .key
                    .iter()
                    .zip(key)
                    .zip(&table.key)
                    .all(|((m, v), f)| m.matches(*v, f.width))
            }),
        };
        let target = match found {
            Some(i) => {
                state.hits += 1;
                if table.direct_counter.is_some() {
                    let c = &mut state.counts[i];
                    c.0 += 1;
                    c.1 += len as u64;
                }
                Some(&state.entries[i].action)
            }
            None => {
                state.misses += 1;
                state.default.as_ref()
            }
        };
        let call = match target {
            None => None,
            Some(Target::Action(c)) => Some(c),
            Some(Target::Member(m)) => table
                .profile
                .and_then(|k| self.profiles[k as usize].members.get(*m as usize)),
            Some(Target::Group(g)) => table.profile.and_then(|k| {
                let prof = &self.profiles[k as usize];
                let group = prof.groups.get(*g as usize)?;
                if group.is_empty() {
                    return None;
                }
                let m = group[(selection % group.len() as Value) as usize];
                prof.members.get(m as usize)
            }),
        };
        (found.is_some(), call)
    }
}

/// Put `e` where look-ups find it.
fn insert(state: &mut TableState, table: &Table, e: Entry) {
    let i = state.entries.len();
    state.counts.push((0, 0));
    if table.lookup == Lookup::Exact {
        let key = e
            .key
            .iter()
            .map(|m| match m {
                KeyMatch::Exact(v) => *v,
                _ => unreachable!("an exact table's entries are exact (checked)"),
            })
            .collect();
        state.exact.insert(key, i);
    }
    if table.lookup == Lookup::Lpm {
        let mut len = 0;
        let key: Vec<Value> = e
            .key
            .iter()
            .zip(&table.key)
            .map(|(m, f)| match *m {
                KeyMatch::Exact(v) => v,
                KeyMatch::Lpm(v, l) => {
                    len = l;
                    v & prefix_mask(f.width, l)
                }
                _ => unreachable!("an LPM table's entries are exact and LPM (checked)"),
            })
            .collect();
        let at = match state.lpm.binary_search_by(|(l, _)| len.cmp(l)) {
            Ok(at) => at,
            Err(at) => {
                state.lpm.insert(at, (len, KeyMap::default()));
                at
            }
        };
        // The first entry of a prefix stays (a later one of the same prefix is refused).
        state.lpm[at].1.entry(key).or_insert(i);
    }
    state.entries.push(e);
    if table.lookup == Lookup::Priority {
        state.order.push(i);
        let entries = &state.entries;
        let rank = |k: usize| -> (i64, i64) { (entries[k].priority, k as i64) };
        state.order.sort_by_key(|&k| rank(k));
    }
}

/// Is `e` an entry table `t` can hold?
fn check_entry(t: &Table, e: &Entry) -> Result<(), EntryError> {
    if e.key.len() != t.key.len() {
        return Err(EntryError(format!(
            "table {} has {} key fields ({}), the entry gives {}",
            t.name,
            t.key.len(),
            t.key
                .iter()
                .map(|k| k.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            e.key.len()
        )));
    }
    for (m, f) in e.key.iter().zip(&t.key) {
        let ok = matches!(
            (m, f.kind),
            (KeyMatch::Exact(_), MatchKind::Exact)
                | (KeyMatch::Lpm(..), MatchKind::Lpm)
                | (KeyMatch::Ternary(..), MatchKind::Ternary)
                | (KeyMatch::Range(..), MatchKind::Range)
                | (KeyMatch::Optional(_), MatchKind::Optional)
        );
        if !ok {
            return Err(EntryError(format!(
                "key field {} of table {} is matched {:?}, the entry gives {m:?}",
                f.name, t.name, f.kind
            )));
        }
        let too_wide = |v: Value| v & !mask(f.width) != 0;
        let bad = match *m {
            KeyMatch::Exact(v) | KeyMatch::Optional(Some(v)) => too_wide(v),
            KeyMatch::Lpm(v, len) => too_wide(v) || len > f.width,
            KeyMatch::Ternary(v, m) => too_wide(v) || too_wide(m),
            KeyMatch::Range(lo, hi) => too_wide(lo) || too_wide(hi) || lo > hi,
            KeyMatch::Optional(None) => false,
        };
        if bad {
            return Err(EntryError(format!(
                "key field {} of table {} is {} bits wide: {m:?} does not fit it",
                f.name, t.name, f.width
            )));
        }
    }
    Ok(())
}

/// Is `call` an action table `t` may run, with data of the right count and widths?
fn check_call(p: &Program, t: &Table, call: &ActionCall) -> Result<(), EntryError> {
    let a = &p.actions[call.action.0 as usize];
    if !t.actions.contains(&call.action) {
        return Err(EntryError(format!(
            "table {} cannot run action {} (it runs {})",
            t.name,
            a.name,
            t.actions
                .iter()
                .map(|x| p.actions[x.0 as usize].name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    if call.data.len() != a.params.len() {
        return Err(EntryError(format!(
            "action {} takes {} parameters, {} given",
            a.name,
            a.params.len(),
            call.data.len()
        )));
    }
    for (i, (v, w)) in call.data.iter().zip(&a.params).enumerate() {
        if v & !mask(*w) != 0 {
            return Err(EntryError(format!(
                "parameter {i} of action {} is {w} bits wide: {v:#x} does not fit it",
                a.name
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_masks_keep_the_first_bits() {
        assert_eq!(prefix_mask(32, 24), 0xFFFF_FF00);
        assert_eq!(prefix_mask(32, 0), 0);
        assert_eq!(prefix_mask(32, 32), 0xFFFF_FFFF);
        assert_eq!(prefix_mask(9, 1), 0x100);
    }
}

#[cfg(test)]
mod lookup_props {
    use super::*;
    use crate::program::{ActionId, KeyField, NextAfter};
    use proptest::prelude::*;

    fn table(kind: MatchKind) -> (Program, Table) {
        let t = Table {
            name: "t".into(),
            key: vec![KeyField {
                name: "k".into(),
                kind,
                source: crate::program::Expr::Const(0),
                width: 16,
                mask: None,
            }],
            actions: vec![ActionId(0)],
            next: NextAfter::ByAction(vec![None]),
            default: Some(ActionCall {
                action: ActionId(0),
                data: vec![1_000_000],
            }),
            default_const: false,
            const_entries: None,
            max_size: 1 << 20,
            lookup: if kind == MatchKind::Lpm {
                Lookup::Lpm
            } else {
                Lookup::Priority
            },
            profile: None,
            direct_counter: None,
        };
        let p = Program {
            header_types: vec![],
            headers: vec![],
            stacks: vec![],
            stack_slots: vec![],
            widths: vec![],
            owner: vec![],
            parse_states: vec![],
            start: 0,
            deparse_order: vec![],
            actions: vec![crate::program::Action {
                name: "a".into(),
                params: vec![32],
                param_names: vec!["x".into()],
                body: vec![],
            }],
            tables: vec![t.clone()],
            profiles: vec![],
            conditionals: vec![],
            ingress: crate::program::Control {
                name: "ingress".into(),
                first: None,
            },
            egress: crate::program::Control {
                name: "egress".into(),
                first: None,
            },
            checksums: vec![],
            counters: vec![],
            registers: vec![],
            std: crate::program::StandardMetadata {
                header: crate::program::HeaderId(0),
                ingress_port: crate::program::FieldId(0),
                egress_spec: crate::program::FieldId(0),
                egress_port: crate::program::FieldId(0),
                instance_type: crate::program::FieldId(0),
                packet_length: crate::program::FieldId(0),
                enq_timestamp: crate::program::FieldId(0),
                enq_qdepth: crate::program::FieldId(0),
                deq_timedelta: crate::program::FieldId(0),
                deq_qdepth: crate::program::FieldId(0),
                ingress_global_timestamp: crate::program::FieldId(0),
                egress_global_timestamp: crate::program::FieldId(0),
                mcast_grp: crate::program::FieldId(0),
                checksum_error: crate::program::FieldId(0),
                parser_error: crate::program::FieldId(0),
                priority: crate::program::FieldId(0),
            },
            errors: Default::default(),
            checksum_error_read: false,
        };
        (p, t)
    }

    proptest! {
        /// LPM: the entry found is the one of longest prefix that matches, as a
        /// brute-force scan of every entry finds it (the default when none does).
        #[test]
        fn the_longest_matching_prefix_wins(
            entries in proptest::collection::vec((any::<u16>(), 0u32..=16), 0..40),
            keys in proptest::collection::vec(any::<u16>(), 1..40),
        ) {
            let (p, t) = table(MatchKind::Lpm);
            let mut tables = Tables::new(&p);
            let mut added: Vec<(u16, u32, u128)> = Vec::new();
            for (i, (v, len)) in entries.into_iter().enumerate() {
                let m = prefix_mask(16, len) as u16;
                if added.iter().any(|(w, l, _)| *l == len && w & m == v & m) {
                    continue;
                }
                let e = Entry {
                    key: vec![KeyMatch::Lpm((v & m) as Value, len)],
                    priority: 0,
                    action: Target::Action(ActionCall { action: ActionId(0), data: vec![i as Value] }),
                };
                tables.add(&p, TableId(0), e).unwrap();
                added.push((v & m, len, i as Value));
            }
            for k in keys {
                let want = added
                    .iter()
                    .filter(|(v, len, _)| k & prefix_mask(16, *len) as u16 == *v)
                    .max_by_key(|(_, len, _)| *len)
                    .map_or(1_000_000, |e| e.2);
                let (hit, call) = tables.lookup(&t, TableId(0), &[k as Value], 0, 0);
                prop_assert_eq!(call.unwrap().data[0], want);
                prop_assert_eq!(hit, want != 1_000_000);
            }
        }

        /// Ternary: the matching entry of lowest priority number wins (the first added
        /// among equals), as a brute-force scan finds it.
        #[test]
        fn the_matching_entry_of_highest_priority_wins(
            entries in proptest::collection::vec((any::<u16>(), any::<u16>(), 0i64..8), 0..40),
            keys in proptest::collection::vec(any::<u16>(), 1..40),
        ) {
            let (p, t) = table(MatchKind::Ternary);
            let mut tables = Tables::new(&p);
            let mut added: Vec<(u16, u16, i64, Value)> = Vec::new();
            for (i, (v, m, pr)) in entries.into_iter().enumerate() {
                if added.iter().any(|(w, n, _, _)| *w == v && *n == m) {
                    continue;
                }
                let e = Entry {
                    key: vec![KeyMatch::Ternary(v as Value, m as Value)],
                    priority: pr,
                    action: Target::Action(ActionCall { action: ActionId(0), data: vec![i as Value] }),
                };
                tables.add(&p, TableId(0), e).unwrap();
                added.push((v, m, pr, i as Value));
            }
            for k in keys {
                let want = added
                    .iter()
                    .filter(|(v, m, _, _)| k & m == v & m)
                    .min_by_key(|(_, _, pr, i)| (*pr, *i))
                    .map_or(1_000_000, |e| e.3);
                prop_assert_eq!(tables.lookup(&t, TableId(0), &[k as Value], 0, 0).1.unwrap().data[0], want);
            }
        }
    }
}
