//! v1model, the architecture p4c's BMv2 back end writes for: parser, verify_checksum,
//! ingress, (the traffic manager), egress, update_checksum, deparser; and the
//! `standard_metadata` each stage reads and writes.

use crate::control;
use crate::deparse;
use crate::eval::Externs;
use crate::parse::{self, Parsed};
use crate::phv::Phv;
use crate::program::{Program, Value};
use crate::tables::Tables;

/// `egress_spec` of a frame to drop (BMv2's default drop port for 9-bit ports).
pub const DROP_PORT: u16 = 511;

/// What ingress decided for a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// `mark_to_drop`, or `egress_spec` left at the drop port.
    Drop,
    /// To `port`, in traffic class `priority` (`standard_metadata.priority`).
    Forward { port: u16, priority: u8 },
    /// To multicast group `group` (`standard_metadata.mcast_grp`).
    Multicast { group: u16, priority: u8 },
}

/// A frame between ingress and egress: its header vector and where its payload starts.
#[derive(Clone, Debug)]
pub struct InFlight {
    pub phv: Phv,
    pub parsed: Parsed,
}

/// What the traffic manager tells egress about the frame's time in its queue (v1model's
/// queueing metadata, in the units the switch is set to give).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Queueing {
    pub enq_timestamp: Value,
    pub enq_qdepth: Value,
    pub deq_timedelta: Value,
    pub deq_qdepth: Value,
    pub egress_global_timestamp: Value,
}

/// A program with its tables' entries, counters and registers: a switch's P4 pipeline.
#[derive(Clone, Debug)]
pub struct V1Model {
    pub program: Program,
    pub tables: Tables,
    pub externs: Externs,
    key: Vec<Value>,
    scratch: Vec<u8>,
    /// The bytes a rewrite deparses into (swapped with the frame's).
    out: Vec<u8>,
    /// Header vectors of frames gone, for the next ones (no allocation per frame).
    spare: Vec<Phv>,
    /// The fields as the parser left them, before the control ran (what a rewrite
    /// compares with).
    parsed_fields: Vec<Value>,
}

/// Header vectors kept for reuse at most.
const SPARE: usize = 256;

impl V1Model {
    /// `program` with no entries but its const ones.
    pub fn new(program: Program) -> V1Model {
        V1Model {
            tables: Tables::new(&program),
            externs: Externs::new(&program),
            program,
            key: Vec::new(),
            scratch: Vec::new(),
            out: Vec::new(),
            spare: Vec::new(),
            parsed_fields: Vec::new(),
        }
    }

    /// A header vector for a new frame: every field 0, only metadata valid.
    fn fresh_phv(&mut self) -> Phv {
        match self.spare.pop() {
            Some(mut phv) => {
                phv.reset(&self.program);
                phv
            }
            None => Phv::new(&self.program),
        }
    }

    /// Keep `phv` for a later frame.
    fn recycle_phv(&mut self, phv: Phv) {
        if self.spare.len() < SPARE {
            self.spare.push(phv);
        }
    }

    /// Give back what a frame carried from ingress when it will not reach egress (dropped
    /// in the traffic manager, or the program's egress is empty).
    pub fn recycle(&mut self, c: Carried) {
        self.recycle_phv(c.phv);
    }

    /// Does the program's egress control do anything? When it does not, a frame leaves
    /// the traffic manager as ingress's deparser wrote it (its update_checksum ran there,
    /// and the traffic manager's own edits, an ECN mark or a trim, keep the checksums).
    pub fn runs_egress(&self) -> bool {
        self.program.egress.first.is_some()
    }

    /// Parser, verify_checksum and ingress for `frame` (no FCS; its first bytes, of a
    /// frame `length` bytes long without FCS) received on `port` at `now` (the global
    /// timestamp, µs in v1model's unit): the verdict and the frame's state for egress.
    pub fn ingress(
        &mut self,
        frame: &[u8],
        length: usize,
        port: u16,
        now: Value,
    ) -> (Verdict, InFlight) {
        let mut phv = self.fresh_phv();
        let p = &self.program;
        let std = p.std;
        let set = |phv: &mut Phv, f: crate::program::FieldId, v: Value| {
            phv.fields[f.0 as usize] = v & crate::program::mask(p.widths[f.0 as usize]);
        };
        set(&mut phv, std.ingress_port, port as Value);
        set(&mut phv, std.packet_length, length as Value);
        set(&mut phv, std.ingress_global_timestamp, now);
        let parsed = parse::parse(p, &mut phv, &mut self.externs, frame);
        if let Some(e) = parsed.error {
            set(&mut phv, std.parser_error, e);
        }
        if p.checksum_error_read && !deparse::verify(p, &phv, &mut self.scratch) {
            set(&mut phv, std.checksum_error, 1);
        }
        self.parsed_fields.clear();
        self.parsed_fields.extend_from_slice(&phv.fields);
        control::run(
            p,
            &mut self.tables,
            &mut self.externs,
            &mut phv,
            p.ingress.first,
            length,
            &mut self.key,
            &mut self.scratch,
        );
        let get = |f: crate::program::FieldId| phv.fields[f.0 as usize];
        let priority = get(std.priority) as u8;
        let verdict = match (get(std.mcast_grp), get(std.egress_spec)) {
            (0, spec) if spec == DROP_PORT as Value => Verdict::Drop,
            (0, spec) => Verdict::Forward {
                port: spec as u16,
                priority,
            },
            (group, _) => Verdict::Multicast {
                group: group as u16,
                priority,
            },
        };
        (verdict, InFlight { phv, parsed })
    }

    /// Egress for a frame (`frame` its first bytes, of `length` without FCS) leaving by
    /// `port` after the queue `q` told of, then update_checksum and the deparser into
    /// `out`: false when egress dropped it.
    #[allow(clippy::too_many_arguments)]
    pub fn egress(
        &mut self,
        f: &mut InFlight,
        frame: &[u8],
        length: usize,
        port: u16,
        q: Queueing,
        out: &mut Vec<u8>,
    ) -> bool {
        if !self.egress_control(f, length, port, q) {
            return false;
        }
        deparse::deparse(&self.program, &f.phv, frame, f.parsed.payload, out);
        true
    }

    /// Egress's metadata set, its control run and update_checksum: false when it dropped
    /// the frame.
    fn egress_control(&mut self, f: &mut InFlight, length: usize, port: u16, q: Queueing) -> bool {
        let p = &self.program;
        let std = p.std;
        let phv = &mut f.phv;
        let mut set = |f: crate::program::FieldId, v: Value| {
            phv.fields[f.0 as usize] = v & crate::program::mask(p.widths[f.0 as usize]);
        };
        set(std.egress_port, port as Value);
        set(std.enq_timestamp, q.enq_timestamp);
        set(std.enq_qdepth, q.enq_qdepth);
        set(std.deq_timedelta, q.deq_timedelta);
        set(std.deq_qdepth, q.deq_qdepth);
        set(std.egress_global_timestamp, q.egress_global_timestamp);
        control::run(
            p,
            &mut self.tables,
            &mut self.externs,
            phv,
            p.egress.first,
            length,
            &mut self.key,
            &mut self.scratch,
        );
        if phv.fields[std.egress_spec.0 as usize] == DROP_PORT as Value {
            return false;
        }
        deparse::update(p, phv, &mut self.scratch);
        true
    }
}

/// Deparse `phv` over `frame` (its payload from `payload`), in place, and make `len` (the
/// whole frame's, FCS included, of which `frame` may hold the first bytes) follow: the
/// headers' change in size, and a cut the program asked for (`truncate`), at least 64.
/// `out` is scratch: the frame's old buffer is left there.
#[allow(clippy::too_many_arguments)]
fn rewrite(
    p: &Program,
    phv: &Phv,
    frame: &mut Vec<u8>,
    len: &mut u32,
    payload: usize,
    out: &mut Vec<u8>,
    parsed_fields: &[Value],
) {
    let payload = payload.min(frame.len());
    let grew = if write_back(p, phv, frame, payload, parsed_fields) {
        0
    } else {
        deparse::headers(p, phv, out);
        let grew = out.len() as i64 - payload as i64;
        if grew == 0 {
            // The headers keep their size: written over the old ones.
            frame[..payload].copy_from_slice(out);
        } else {
            out.extend_from_slice(&frame[payload..]);
            std::mem::swap(frame, out);
        }
        grew
    };
    let mut whole = (*len as i64 + grew).max(0);
    if let Some(n) = phv.truncate {
        whole = whole.min(n as i64 + 4);
        frame.truncate(n);
    }
    *len = whole.max(64) as u32;
}

/// The deparser's output written over the frame field by field, when the headers it
/// emits are the ones the parser extracted, in the same order and back to back from the
/// frame's first byte to its payload (most programs): only the fields the program
/// changed are written. False (nothing written) when the layout differs.
fn write_back(
    p: &Program,
    phv: &Phv,
    frame: &mut [u8],
    payload: usize,
    parsed_fields: &[Value],
) -> bool {
    let mut extracted = phv.extracted.iter();
    let mut at = 0usize;
    for &h in &p.deparse_order {
        if !phv.is_valid(h) {
            continue;
        }
        match extracted.next() {
            Some(&(e, offset)) if e == h && offset as usize == at => {}
            _ => return false,
        }
        at += p.header_types[p.headers[h.0 as usize].ty].bits as usize;
    }
    if extracted.next().is_some() || at != payload * 8 {
        return false;
    }
    for &(h, offset) in &phv.extracted {
        let hd = &p.headers[h.0 as usize];
        let first = hd.first as usize;
        let mut bit = offset as usize;
        for (i, f) in p.header_types[hd.ty].fields.iter().enumerate() {
            let v = phv.fields[first + i];
            if v != parsed_fields[first + i] {
                crate::bits::write(frame, bit, f.width, v);
            }
            bit += f.width as usize;
        }
    }
    true
}

/// A frame's metadata carried from ingress to egress (the program's metadata structs and
/// `standard_metadata`; the headers are read again from the frame's bytes at egress, as
/// the traffic manager may have changed them: an ECN mark, a trim).
#[derive(Clone, Debug)]
pub struct Carried {
    phv: Phv,
}

impl V1Model {
    /// Ingress as [`V1Model::ingress`], the frame's bytes then rewritten as the program
    /// left its headers (update_checksum and the deparser run at the end of ingress: the
    /// traffic manager holds the bytes that will leave). `frame` may hold only the first
    /// bytes of a frame of `len` bytes (FCS included, as a simulated frame does): `len`
    /// follows what the program added, removed or cut.
    pub fn ingress_in_place(
        &mut self,
        frame: &mut Vec<u8>,
        len: &mut u32,
        port: u16,
        now: Value,
    ) -> (Verdict, Carried) {
        let length = (*len as usize).saturating_sub(4).max(frame.len());
        let (verdict, mut f) = self.ingress(frame, length, port, now);
        if verdict != Verdict::Drop {
            let p = &self.program;
            deparse::update(p, &mut f.phv, &mut self.scratch);
            rewrite(
                p,
                &f.phv,
                frame,
                len,
                f.parsed.payload,
                &mut self.out,
                &self.parsed_fields,
            );
            // Truncation happened once: egress must not cut again.
            f.phv.truncate = None;
        }
        (verdict, Carried { phv: f.phv })
    }

    /// Egress for the frame `frame` (as it leaves the traffic manager) on `port`, with the
    /// metadata `carried` from its ingress (None: a frame the traffic manager made, a
    /// trimmed copy, whose metadata is zero): its headers parsed again, egress run,
    /// update_checksum and the deparser rewrite `frame`. False when egress dropped it.
    pub fn egress_in_place(
        &mut self,
        carried: Option<Carried>,
        frame: &mut Vec<u8>,
        len: &mut u32,
        port: u16,
        q: Queueing,
    ) -> bool {
        let from_ingress = carried.is_some();
        let mut phv = match carried {
            // Its metadata as ingress left it; its headers read again below.
            Some(c) => {
                let mut phv = c.phv;
                phv.reset_headers(&self.program);
                phv
            }
            None => self.fresh_phv(),
        };
        let p = &self.program;
        let parsed = parse::parse(p, &mut phv, &mut self.externs, frame);
        // A frame from ingress keeps the parser error ingress saw.
        if let (false, Some(e)) = (from_ingress, parsed.error) {
            phv.fields[p.std.parser_error.0 as usize] = e;
        }
        self.parsed_fields.clear();
        self.parsed_fields.extend_from_slice(&phv.fields);
        let mut f = InFlight { phv, parsed };
        let length = (*len as usize).saturating_sub(4).max(frame.len());
        let mut out = std::mem::take(&mut self.out);
        let kept = self.egress_control(&mut f, length, port, q);
        if kept {
            rewrite(
                &self.program,
                &f.phv,
                frame,
                len,
                f.parsed.payload,
                &mut out,
                &self.parsed_fields,
            );
        }
        self.out = out;
        self.recycle_phv(f.phv);
        kept
    }

    /// Does any action or parser state of the program write `standard_metadata.priority`
    /// (so that the program, not the switch's QoS maps, classifies frames)?
    pub fn sets_priority(&self) -> bool {
        let p = &self.program;
        let writes = |prim: &crate::program::Primitive| matches!(prim, crate::program::Primitive::Assign(l, _) if l.field == p.std.priority);
        p.actions.iter().any(|a| a.body.iter().any(writes))
            || p.parse_states.iter().any(|s| {
                s.ops.iter().any(|o| match o {
                    crate::program::ParserOp::Set(l, _) => l.field == p.std.priority,
                    crate::program::ParserOp::Do(prim) => writes(prim),
                    _ => false,
                })
            })
    }
}
