//! The program's parser run over a frame: states in turn, headers extracted at the
//! cursor, select transitions on the key; an error (a frame too short, no transition that
//! matches, a failed `verify`) stops it with the error in `standard_metadata.parser_error`,
//! the headers extracted so far kept, as v1model does.

use crate::bits;
use crate::eval::{self, Externs, Scope};
use crate::phv::Phv;
use crate::program::{HeaderId, ParserOp, Program, Value};

/// Most states one frame visits (a parser that loops, over a header stack say, stops with
/// an error after this many).
const MAX_STATES: usize = 1024;

/// Where parsing ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// Bytes of the frame the parser took: the payload starts here.
    pub payload: usize,
    /// The error that stopped it, as the program numbers it (None: accepted).
    pub error: Option<Value>,
}

/// Parse `frame` into `phv` (already reset, its metadata set).
pub fn parse(p: &Program, phv: &mut Phv, ext: &mut Externs, frame: &[u8]) -> Parsed {
    let mut cursor = 0usize;
    let mut state = Some(p.start);
    let mut visits = 0;
    let errors = &p.errors;
    let stop = |cursor: usize, e: Value| Parsed {
        payload: cursor / 8,
        error: Some(e),
    };
    while let Some(s) = state {
        visits += 1;
        if visits > MAX_STATES {
            return stop(cursor, errors.no_match);
        }
        let st = &p.parse_states[s as usize];
        for op in &st.ops {
            let scope = Scope {
                params: &[],
                stacks: &p.stack_slots,
                frame,
                cursor,
            };
            match op {
                ParserOp::Extract(h) => {
                    if !extract(p, phv, *h, frame, &mut cursor) {
                        return stop(cursor, errors.packet_too_short);
                    }
                }
                ParserOp::ExtractStack(st) => {
                    let i = phv.stack_next[st.0 as usize] as usize;
                    let Some(&h) = p.stacks[st.0 as usize].headers.get(i) else {
                        return stop(cursor, errors.stack_out_of_bounds);
                    };
                    if !extract(p, phv, h, frame, &mut cursor) {
                        return stop(cursor, errors.packet_too_short);
                    }
                    phv.stack_next[st.0 as usize] += 1;
                }
                ParserOp::Set(l, e) => match eval::eval(e, phv, scope) {
                    Ok(v) => eval::assign(phv, *l, v),
                    Err(_) => return stop(cursor, errors.packet_too_short),
                },
                ParserOp::Verify(c, e) => {
                    let ok = eval::eval(c, phv, scope).unwrap_or(0) != 0;
                    if !ok {
                        let code = eval::eval(e, phv, scope).unwrap_or(errors.no_match);
                        return stop(cursor, code);
                    }
                }
                ParserOp::Advance(e) => {
                    let n = eval::eval(e, phv, scope).unwrap_or(0) as usize;
                    if cursor + n > frame.len() * 8 {
                        return stop(cursor, errors.packet_too_short);
                    }
                    cursor += n;
                }
                ParserOp::Do(prim) => {
                    eval::run(p, std::slice::from_ref(prim), &[], phv, ext, frame.len())
                }
            }
        }
        let scope = Scope {
            params: &[],
            stacks: &p.stack_slots,
            frame,
            cursor,
        };
        let mut key: Value = 0;
        for part in &st.key {
            let Ok(v) = eval::eval(&part.source, phv, scope) else {
                return stop(cursor, errors.packet_too_short);
            };
            let padded = part.width.div_ceil(8) * 8;
            key = if padded >= 128 {
                v
            } else {
                (key << padded) | v
            };
        }
        let hit = st.transitions.iter().find(|t| match t.value {
            None => true,
            Some((v, m)) => key & m == v & m,
        });
        match hit {
            Some(t) => state = t.next,
            None => return stop(cursor, errors.no_match),
        }
    }
    Parsed {
        payload: cursor / 8,
        error: None,
    }
}

/// Extract header `h` at `cursor` (advanced past it); false if the frame is too short.
fn extract(p: &Program, phv: &mut Phv, h: HeaderId, frame: &[u8], cursor: &mut usize) -> bool {
    let hd = &p.headers[h.0 as usize];
    let ty = &p.header_types[hd.ty];
    if *cursor + ty.bits as usize > frame.len() * 8 {
        return false;
    }
    phv.extracted.push((h, *cursor as u32));
    let first = hd.first as usize;
    let slots = &mut phv.fields[first..first + ty.fields.len()];
    if cursor.is_multiple_of(8) {
        // Headers start on a byte (the cursor moves by whole headers and bytes).
        let mut u = bits::Unpack::new(&frame[*cursor / 8..]);
        for (slot, f) in slots.iter_mut().zip(&ty.fields) {
            *slot = u.take(f.width);
        }
        *cursor += ty.bits as usize;
    } else {
        for (slot, f) in slots.iter_mut().zip(&ty.fields) {
            *slot = bits::read(frame, *cursor, f.width).expect("checked");
            *cursor += f.width as usize;
        }
    }
    phv.valid[h.0 as usize] = true;
    true
}
