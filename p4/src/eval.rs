//! Evaluating expressions and running actions against one frame's header vector.

use crate::bits;
use crate::phv::Phv;
use crate::program::{mask, BinOp, Expr, LValue, Primitive, Program, UnOp, Value};

/// What an expression may read besides the header vector: the running action's data and,
/// in the parser, the frame's bytes ahead of the cursor.
#[derive(Clone, Copy)]
pub struct Scope<'a> {
    pub params: &'a [Value],
    /// Each stack's entries' first slots (for `last`).
    pub stacks: &'a [Vec<u32>],
    pub frame: &'a [u8],
    /// The parser's cursor, in bits.
    pub cursor: usize,
}

impl<'a> Scope<'a> {
    /// The scope of a control's conditions and keys, and of checksums: `p`'s stacks, no
    /// action data, no frame.
    pub fn of(p: &'a Program) -> Scope<'a> {
        Scope {
            params: &[],
            stacks: &p.stack_slots,
            frame: &[],
            cursor: 0,
        }
    }
}

/// A lookahead past the end of the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PastTheEnd;

/// The value of `e`.
#[inline]
pub fn eval(e: &Expr, phv: &Phv, s: Scope) -> Result<Value, PastTheEnd> {
    Ok(match e {
        Expr::Const(v) => *v,
        Expr::Field(f) => phv.fields[f.0 as usize],
        Expr::Valid(h) => phv.valid[h.0 as usize] as Value,
        Expr::Param(i) => s.params.get(*i as usize).copied().unwrap_or(0),
        Expr::StackLast { stack, field } => {
            let i = phv.stack_next[stack.0 as usize].saturating_sub(1) as usize;
            match s.stacks.get(stack.0 as usize).and_then(|h| h.get(i)) {
                Some(first) => phv.fields[(*first + *field) as usize],
                None => 0,
            }
        }
        Expr::Lookahead { offset, width } => {
            bits::read(s.frame, s.cursor + *offset as usize, *width).ok_or(PastTheEnd)?
        }
        Expr::Unary(op, x) => {
            let v = eval(x, phv, s)?;
            match op {
                UnOp::Not => (v == 0) as Value,
                UnOp::Complement => !v,
                UnOp::Negate => v.wrapping_neg(),
                UnOp::DataToBool => (v != 0) as Value,
                UnOp::BoolToData => (v != 0) as Value,
            }
        }
        Expr::Binary(op, l, r) => {
            // Logical and/or short-circuit, as P4's && and || do.
            match op {
                BinOp::And => return Ok((eval(l, phv, s)? != 0 && eval(r, phv, s)? != 0) as Value),
                BinOp::Or => return Ok((eval(l, phv, s)? != 0 || eval(r, phv, s)? != 0) as Value),
                _ => {}
            }
            let (a, b) = (eval(l, phv, s)?, eval(r, phv, s)?);
            match op {
                BinOp::Add => a.wrapping_add(b),
                BinOp::Sub => a.wrapping_sub(b),
                BinOp::Mul => a.wrapping_mul(b),
                BinOp::Shl => {
                    if b >= 128 {
                        0
                    } else {
                        a << b
                    }
                }
                BinOp::Shr => {
                    if b >= 128 {
                        0
                    } else {
                        a >> b
                    }
                }
                BinOp::Eq => (a == b) as Value,
                BinOp::Ne => (a != b) as Value,
                BinOp::Gt => (a > b) as Value,
                BinOp::Ge => (a >= b) as Value,
                BinOp::Lt => (a < b) as Value,
                BinOp::Le => (a <= b) as Value,
                BinOp::BitAnd => a & b,
                BinOp::BitOr => a | b,
                BinOp::BitXor => a ^ b,
                BinOp::And | BinOp::Or => unreachable!("handled above"),
            }
        }
        Expr::Ternary(c, l, r) => {
            if eval(c, phv, s)? != 0 {
                eval(l, phv, s)?
            } else {
                eval(r, phv, s)?
            }
        }
    })
}

/// Write `v`, truncated to the field's width.
#[inline]
pub fn assign(phv: &mut Phv, l: LValue, v: Value) {
    phv.fields[l.field.0 as usize] = v & mask(l.width);
}

/// What an action may change besides the frame: the program's counters and registers.
#[derive(Clone, Debug, Default)]
pub struct Externs {
    /// Per counter array, per index: packets and bytes.
    pub counters: Vec<Vec<(u64, u64)>>,
    /// Per register array, per index.
    pub registers: Vec<Vec<Value>>,
    /// Reads and writes of an index past an array's end (ignored, as BMv2 does with an
    /// error in its log).
    pub out_of_range: u64,
    /// Scratch for hash inputs.
    scratch: Vec<u8>,
}

impl Externs {
    /// Zeroed counters and registers of `p`.
    pub fn new(p: &Program) -> Externs {
        Externs {
            counters: p.counters.iter().map(|c| vec![(0, 0); c.size]).collect(),
            registers: p.registers.iter().map(|r| vec![0; r.size]).collect(),
            out_of_range: 0,
            scratch: Vec::new(),
        }
    }
}

/// Most primitives an action runs for one frame (its jumps go forward as p4c writes them;
/// a JSON that loops stops here).
const MAX_STEPS: usize = 1 << 16;

/// Run `body` with action data `params` on the frame of `len` bytes.
pub fn run(
    p: &Program,
    body: &[Primitive],
    params: &[Value],
    phv: &mut Phv,
    ext: &mut Externs,
    len: usize,
) {
    let s = Scope {
        params,
        stacks: &p.stack_slots,
        frame: &[],
        cursor: 0,
    };
    let mut pc = 0usize;
    let mut steps = 0usize;
    while pc < body.len() && steps < MAX_STEPS {
        steps += 1;
        let mut next = pc + 1;
        // No lookahead outside the parser: PastTheEnd cannot happen (0 if it did).
        let ev = |e: &Expr, phv: &Phv| eval(e, phv, s).unwrap_or(0);
        match &body[pc] {
            Primitive::Assign(l, e) => {
                let v = ev(e, phv);
                assign(phv, *l, v);
            }
            Primitive::SetValid(h) => phv.set_valid(p, *h),
            Primitive::SetInvalid(h) => phv.valid[h.0 as usize] = false,
            Primitive::CopyHeader { dst, src } => phv.copy_header(p, *dst, *src),
            Primitive::MarkToDrop => {
                let std = &p.std;
                phv.fields[std.egress_spec.0 as usize] = crate::v1model::DROP_PORT as Value;
                phv.fields[std.mcast_grp.0 as usize] = 0;
            }
            Primitive::Exit => {
                phv.exited = true;
                return;
            }
            Primitive::Jump(to) => next = *to as usize,
            Primitive::JumpIfZero(e, to) => {
                if ev(e, phv) == 0 {
                    next = *to as usize;
                }
            }
            Primitive::PushFront(st, n) => push_front(p, phv, *st, *n),
            Primitive::PopFront(st, n) => pop_front(p, phv, *st, *n),
            Primitive::Truncate(e) => phv.truncate = Some(ev(e, phv) as usize),
            Primitive::Hash {
                dst,
                algo,
                base,
                data,
                max,
            } => {
                let mut buf = std::mem::take(&mut ext.scratch);
                crate::hash::pack(
                    data.iter().map(|(e, w)| (ev(e, phv) & mask(*w), *w)),
                    &mut buf,
                );
                let h = crate::hash::compute(*algo, &buf);
                ext.scratch = buf;
                let (b, m) = (ev(base, phv), ev(max, phv));
                let v = if m == 0 { b } else { b.wrapping_add(h % m) };
                assign(phv, *dst, v);
            }
            Primitive::Count { counter, index } => {
                let i = ev(index, phv) as usize;
                match ext.counters[*counter as usize].get_mut(i) {
                    Some(c) => {
                        c.0 += 1;
                        c.1 += len as u64;
                    }
                    None => ext.out_of_range += 1,
                }
            }
            Primitive::RegisterRead {
                dst,
                register,
                index,
            } => {
                let i = ev(index, phv) as usize;
                let v = match ext.registers[*register as usize].get(i) {
                    Some(v) => *v,
                    None => {
                        ext.out_of_range += 1;
                        0
                    }
                };
                assign(phv, *dst, v);
            }
            Primitive::RegisterWrite {
                register,
                index,
                value,
            } => {
                let i = ev(index, phv) as usize;
                let v = ev(value, phv) & mask(p.registers[*register as usize].width);
                match ext.registers[*register as usize].get_mut(i) {
                    Some(r) => *r = v,
                    None => ext.out_of_range += 1,
                }
            }
        }
        pc = next;
    }
}

/// `stack.push_front(n)`: entry i moves to i + n (those pushed off the end are lost), the
/// first n become invalid.
fn push_front(p: &Program, phv: &mut Phv, st: crate::program::StackId, n: u32) {
    let hs = &p.stacks[st.0 as usize].headers;
    let n = n as usize;
    for i in (0..hs.len()).rev() {
        if i >= n {
            phv.copy_header(p, hs[i], hs[i - n]);
        } else {
            phv.valid[hs[i].0 as usize] = false;
        }
    }
    let next = &mut phv.stack_next[st.0 as usize];
    *next = (*next as usize + n).min(hs.len()) as u32;
}

/// `stack.pop_front(n)`: entry i moves to i − n, the last n become invalid.
fn pop_front(p: &Program, phv: &mut Phv, st: crate::program::StackId, n: u32) {
    let hs = &p.stacks[st.0 as usize].headers;
    let n = n as usize;
    for i in 0..hs.len() {
        if i + n < hs.len() {
            phv.copy_header(p, hs[i], hs[i + n]);
        } else {
            phv.valid[hs[i].0 as usize] = false;
        }
    }
    let next = &mut phv.stack_next[st.0 as usize];
    *next = (*next as usize).saturating_sub(n) as u32;
}
