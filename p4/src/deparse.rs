//! Checksums verified after the parser and updated before the deparser, and the
//! deparser: the valid headers in the program's order, then the payload.

use crate::eval::{self, Scope};
use crate::hash;
use crate::phv::Phv;
use crate::program::{mask, Program, Value};

/// The value each checksum's inputs give now.
fn compute(p: &Program, phv: &Phv, c: &crate::program::Checksum, buf: &mut Vec<u8>) -> Value {
    if c.algo == crate::program::HashAlgo::Csum16 {
        // The Internet checksum of the packed inputs, summed as they are packed.
        let mut sum = hash::Csum16::default();
        for (e, w) in &c.inputs {
            sum.push(value(p, e, phv), *w);
        }
        return sum.finish() as Value & mask(c.target.width);
    }
    hash::pack(
        c.inputs
            .iter()
            .map(|(e, w)| (value(p, e, phv) & mask(*w), *w)),
        buf,
    );
    hash::compute(c.algo, buf) & mask(c.target.width)
}

/// The value of a checksum's input: most are fields.
#[inline]
fn value(p: &Program, e: &crate::program::Expr, phv: &Phv) -> Value {
    match e {
        crate::program::Expr::Field(f) => phv.fields[f.0 as usize],
        _ => eval::eval(e, phv, Scope::of(p)).unwrap_or(0),
    }
}

/// Does checksum `c` apply to this frame (its condition, if any, holds)?
fn applies(p: &Program, phv: &Phv, c: &crate::program::Checksum) -> bool {
    c.condition
        .as_ref()
        .is_none_or(|e| eval::eval(e, phv, Scope::of(p)).unwrap_or(0) != 0)
}

/// v1model's verify_checksum: true if every checksum to verify matches (else the
/// caller sets `checksum_error`).
pub fn verify(p: &Program, phv: &Phv, buf: &mut Vec<u8>) -> bool {
    p.checksums
        .iter()
        .filter(|c| c.verify && applies(p, phv, c))
        .all(|c| compute(p, phv, c, buf) == phv.fields[c.target.field.0 as usize])
}

/// v1model's update_checksum: every checksum to update written into its field.
pub fn update(p: &Program, phv: &mut Phv, buf: &mut Vec<u8>) {
    for c in p.checksums.iter().filter(|c| c.update) {
        if applies(p, phv, c) {
            let v = compute(p, phv, c, buf);
            phv.fields[c.target.field.0 as usize] = v;
        }
    }
}

/// The frame as it leaves: the valid headers of the deparser's order, then the bytes of
/// `frame` from `payload` on, cut to `truncate` bytes if the program asked.
pub fn deparse(p: &Program, phv: &Phv, frame: &[u8], payload: usize, out: &mut Vec<u8>) {
    deparse_whole(p, phv, frame, payload, out);
    if let Some(n) = phv.truncate {
        out.truncate(n);
    }
}

/// [`deparse`] without the cut `truncate` asks for.
pub fn deparse_whole(p: &Program, phv: &Phv, frame: &[u8], payload: usize, out: &mut Vec<u8>) {
    headers(p, phv, out);
    out.extend_from_slice(&frame[payload.min(frame.len())..]);
}

/// The valid headers of the deparser's order, as bytes, into `out` (cleared first).
pub fn headers(p: &Program, phv: &Phv, out: &mut Vec<u8>) {
    out.clear();
    let mut bits = crate::hash::Bits::default();
    for &h in &p.deparse_order {
        if !phv.is_valid(h) {
            continue;
        }
        let hd = &p.headers[h.0 as usize];
        let ty = &p.header_types[hd.ty];
        let first = hd.first as usize;
        for (f, v) in ty
            .fields
            .iter()
            .zip(&phv.fields[first..first + ty.fields.len()])
        {
            bits.push(*v, f.width, out);
        }
    }
    // Headers are whole bytes (checked at load): nothing is left over.
    bits.finish(out);
}
