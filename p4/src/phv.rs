//! The packet header vector: every field of every header instance of one frame, each
//! header's validity, and where the frame's header stacks stand, as the program's
//! parser, controls and deparser read and write them.

use crate::program::{HeaderId, Program, Value};

/// One frame's headers and metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phv {
    /// Each field's value, by its slot ([`crate::program::FieldId`]).
    pub fields: Vec<Value>,
    /// Each header's validity (metadata is always valid).
    pub valid: Vec<bool>,
    /// Each stack's next entry to extract into (= entries extracted).
    pub stack_next: Vec<u32>,
    /// `exit` ran: the rest of the current control is skipped.
    pub exited: bool,
    /// `truncate` ran: at most this many bytes of the frame leave.
    pub truncate: Option<usize>,
    /// The headers the parser extracted, in order, each with its bit offset in the frame.
    pub extracted: Vec<(HeaderId, u32)>,
}

impl Phv {
    /// A vector for `p`: every field 0, every header invalid but metadata.
    pub fn new(p: &Program) -> Phv {
        let mut phv = Phv {
            fields: vec![0; p.widths.len()],
            valid: vec![false; p.headers.len()],
            stack_next: vec![0; p.stacks.len()],
            exited: false,
            truncate: None,
            extracted: Vec::new(),
        };
        phv.reset(p);
        phv
    }

    /// As [`Phv::new`], reusing this one's memory (the next frame).
    pub fn reset(&mut self, p: &Program) {
        self.fields.fill(0);
        for (v, h) in self.valid.iter_mut().zip(&p.headers) {
            *v = h.metadata;
        }
        self.stack_next.fill(0);
        self.exited = false;
        self.truncate = None;
        self.extracted.clear();
    }

    /// Every header invalid and zero and the stacks empty, the metadata kept: the
    /// vector as egress's parser starts on it.
    pub fn reset_headers(&mut self, p: &Program) {
        for (i, h) in p.headers.iter().enumerate().filter(|(_, h)| !h.metadata) {
            let n = p.header_types[h.ty].fields.len();
            let first = h.first as usize;
            self.fields[first..first + n].fill(0);
            self.valid[i] = false;
        }
        self.stack_next.fill(0);
        self.exited = false;
        self.truncate = None;
        self.extracted.clear();
    }

    /// Is header `h` valid?
    #[inline]
    pub fn is_valid(&self, h: HeaderId) -> bool {
        self.valid[h.0 as usize]
    }

    /// Make header `h` valid, its fields zeroed if it was not (BMv2's `add_header`).
    pub fn set_valid(&mut self, p: &Program, h: HeaderId) {
        if !self.valid[h.0 as usize] {
            let hd = &p.headers[h.0 as usize];
            let n = p.header_types[hd.ty].fields.len();
            let first = hd.first as usize;
            self.fields[first..first + n].fill(0);
            self.valid[h.0 as usize] = true;
        }
    }

    /// Copy header `src` (fields and validity) onto `dst` (of the same type).
    pub fn copy_header(&mut self, p: &Program, dst: HeaderId, src: HeaderId) {
        let (d, s) = (&p.headers[dst.0 as usize], &p.headers[src.0 as usize]);
        let n = p.header_types[s.ty].fields.len();
        let (d0, s0) = (d.first as usize, s.first as usize);
        self.fields.copy_within(s0..s0 + n, d0);
        self.valid[dst.0 as usize] = self.valid[src.0 as usize];
    }
}
