//! A control (ingress or egress) run over a frame: from its first node, each table looked
//! up with its key and its action run, each conditional tested, to the end or an `exit`.

use crate::eval::{self, Externs, Scope};
use crate::phv::Phv;
use crate::program::{NextAfter, NodeId, Program};
use crate::tables::Tables;

/// Run the control that starts at `first` on the frame of `len` bytes; `key` and `bytes`
/// are scratch.
#[allow(clippy::too_many_arguments)]
pub fn run(
    p: &Program,
    tables: &mut Tables,
    ext: &mut Externs,
    phv: &mut Phv,
    first: Option<NodeId>,
    len: usize,
    key: &mut Vec<crate::program::Value>,
    bytes: &mut Vec<u8>,
) {
    phv.exited = false;
    let mut node = first;
    // The flow is acyclic as p4c writes it; a JSON that loops stops after every node once.
    let mut left = p.tables.len() + p.conditionals.len() + 1;
    while let Some(n) = node {
        if phv.exited || left == 0 {
            break;
        }
        left -= 1;
        node = match n {
            NodeId::Conditional(c) => {
                let c = &p.conditionals[c as usize];
                if eval::eval(&c.expr, phv, Scope::of(p)).unwrap_or(0) != 0 {
                    c.on_true
                } else {
                    c.on_false
                }
            }
            NodeId::Table(t) => {
                let table = &p.tables[t.0 as usize];
                key.clear();
                for k in &table.key {
                    let v = eval::eval(&k.source, phv, Scope::of(p)).unwrap_or(0);
                    key.push(k.mask.map_or(v, |m| v & m));
                }
                let selection = table
                    .profile
                    .and_then(|k| p.profiles[k as usize].selector.as_ref())
                    .map_or(0, |s| select(p, s, phv, bytes));
                let (hit, call) = tables.lookup(table, t, key, selection, len);
                let ran = call.map(|c| {
                    let a = &p.actions[c.action.0 as usize];
                    eval::run(p, &a.body, &c.data, phv, ext, len);
                    c.action
                });
                match &table.next {
                    NextAfter::HitMiss { hit: h, miss: m } => {
                        if hit {
                            *h
                        } else {
                            *m
                        }
                    }
                    NextAfter::ByAction(by) => ran
                        .and_then(|a| table.actions.iter().position(|x| *x == a))
                        .and_then(|i| by[i]),
                }
            }
        };
    }
}

/// The selector's hash of the frame: its inputs packed, hashed with its algorithm.
fn select(
    p: &Program,
    s: &crate::program::Selector,
    phv: &Phv,
    bytes: &mut Vec<u8>,
) -> crate::program::Value {
    crate::hash::pack(
        s.inputs.iter().map(|(e, w)| {
            let v = eval::eval(e, phv, Scope::of(p)).unwrap_or(0);
            (v & crate::program::mask(*w), *w)
        }),
        bytes,
    );
    crate::hash::compute(s.algo, bytes)
}
