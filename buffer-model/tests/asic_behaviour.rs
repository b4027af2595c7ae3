//! The MMU's two ASIC choices — where the packet that crosses a lossless PG's limit goes
//! (`Crossing`) and which limit XON is measured from (`XonLimit`) — with numbers derived
//! by hand, then against a brute-force reference model over random admit/release runs.

mod common;
use common::cases;
use lossless_buffer_model::mmu::{
    Behaviour, Crossing, Headroom, Mmu, PoolKind, PoolSpec, PoolUse, ProfileSpec, Threshold,
    XonLimit,
};
use lossless_buffer_model::Bytes;
use proptest::prelude::*;

const CELL: u64 = 256;

/// `ports` ports, every PG lossless with α = 2^alpha, `reserved` and `headroom` cells,
/// XON offset 2 cells and XON floor `xon` cells, in an ingress pool of `pool` cells;
/// egress never refuses.
fn ports_mmu(ports: usize, alpha: i8, pool: u64, reserved: u64, headroom: u64, xon: u64) -> Mmu {
    let pools = vec![
        PoolSpec {
            name: "ingress_lossless_pool".into(),
            kind: PoolKind::Ingress,
            size: Bytes(pool * CELL),
            xoff: Bytes(0),
        },
        PoolSpec {
            name: "egress_lossless_pool".into(),
            kind: PoolKind::Egress,
            size: Bytes(1 << 40),
            xoff: Bytes(0),
        },
    ];
    let pg = ProfileSpec {
        pool: 0,
        reserved: Bytes(reserved * CELL),
        threshold: Threshold::Dynamic(alpha),
        headroom: Some(Headroom {
            xoff: Bytes(headroom * CELL),
            xon: Bytes(xon * CELL),
            xon_offset: Bytes(2 * CELL),
        }),
    };
    let q = ProfileSpec {
        pool: 1,
        reserved: Bytes(0),
        threshold: Threshold::Static(Bytes(1 << 40)),
        headroom: None,
    };
    let n = ports * lossless_buffer_model::PRIORITIES;
    Mmu::new(Bytes(CELL), pools, &vec![pg; n], &vec![q; n])
}

/// One such port with the ASIC choices `b`.
fn mmu(alpha: i8, pool: u64, reserved: u64, headroom: u64, xon: u64, b: Behaviour) -> Mmu {
    ports_mmu(1, alpha, pool, reserved, headroom, xon).with_behaviour(b)
}

fn behaviour(crossing: Crossing, xon_limit: XonLimit) -> Behaviour {
    Behaviour {
        crossing,
        xon_limit,
        pool_use: PoolUse::Shared,
        ..Behaviour::default()
    }
}

/// Packets of one cell until the first refusal: (XOFF at, first in headroom, first
/// dropped), 1-based.
fn fill(m: &mut Mmu) -> (u64, Option<u64>, u64) {
    let (mut xoff, mut headroom) = (0, None);
    for n in 1.. {
        match m.admit(0, 0, 0, 0, 64) {
            Ok(a) => {
                if a.xoff {
                    xoff = n;
                }
                if a.in_headroom && headroom.is_none() {
                    headroom = Some(n);
                }
            }
            Err(_) => return (xoff, headroom, n),
        }
    }
    unreachable!()
}

#[test]
fn the_crossing_packet_in_shared_space_moves_every_later_count_by_one() {
    // α = 1, 16 reserved cells, S = 32,768: shared stops at x = S − x = 16,384 cells, so
    // packet 16 + 16,385 = 16,401 is the one that crosses. Headroom 200 cells.
    let mut th2 = mmu(0, 32_768, 16, 200, 0, Behaviour::default());
    assert_eq!(fill(&mut th2), (16_401, Some(16_401), 16_601));
    assert_eq!(th2.pg(0, 0).shared_watermark, 16_384);
    let mut th1 = mmu(
        0,
        32_768,
        16,
        200,
        0,
        behaviour(Crossing::Shared, XonLimit::Live),
    );
    // XOFF at the same packet, which stays in shared space (16,385 cells, one over the
    // limit); headroom starts with the next, and takes 200 more: the drop comes one later.
    assert_eq!(fill(&mut th1), (16_401, Some(16_402), 16_602));
    assert_eq!(th1.pg(0, 0).shared_watermark, 16_385);
    assert_eq!(th1.pg(0, 0).headroom_watermark, 200);
}

/// Fill past XOFF by `extra` headroom packets, then release one cell at a time: the
/// shared use (cells) at which XON came.
fn xon_at(b: Behaviour, xon_floor: u64) -> u64 {
    let mut m = mmu(0, 32_768, 0, 200, xon_floor, b);
    while !m.admit(0, 0, 0, 0, 64).unwrap().xoff {}
    for _ in 0..10 {
        assert!(m.admit(0, 0, 0, 0, 64).unwrap().in_headroom);
    }
    loop {
        let xon = m.release(0, 0, 0, 0, 1).xon;
        if xon {
            return m.pg(0, 0).shared_used;
        }
        assert!(m.pg(0, 0).used() > 0, "XON never came");
    }
}

#[test]
fn xon_follows_the_live_limit_or_the_one_latched_at_xoff() {
    // Live: after the headroom drains, XON when x < α·(S − x) − 2 cells, 2x < 32,766:
    // x = 16,382. Latched: the crossing packet was tested against S − (16,384 + 1) =
    // 16,383 cells; XON when x < 16,383 − 2, x = 16,380.
    assert_eq!(xon_at(Behaviour::default(), 0), 16_382);
    assert_eq!(
        xon_at(behaviour(Crossing::Headroom, XonLimit::Latched), 0),
        16_380
    );
    // The floor `xon` still wins where it is higher: 16,383 cells (above the latched
    // level 16,381) → XON at 16,382.
    assert_eq!(
        xon_at(behaviour(Crossing::Headroom, XonLimit::Latched), 16_383),
        16_382
    );
}

/// The rules written out plainly for one lossless PG alone in its pool (counts in cells).
#[derive(Clone, Debug, Default)]
struct Reference {
    reserved_used: u64,
    shared: u64,
    headroom: u64,
    xoff: bool,
    latched: u64,
}

struct Params {
    alpha: i8,
    pool: u64,
    reserved: u64,
    headroom: u64,
    xon: u64,
    b: Behaviour,
}

/// α·v, exactly: v shifted left by α, or right by −α (as the MMU scales a free space).
fn scaled(alpha: i8, v: u64) -> u128 {
    if alpha >= 0 {
        (v as u128) << alpha
    } else {
        (v as u128) >> -alpha
    }
}

impl Reference {
    /// Reserved cells the pool counts as use (all of them under `PoolUse::WithReserved`).
    fn counted_reserve(&self, p: &Params) -> u64 {
        match p.b.pool_use {
            PoolUse::Shared => 0,
            PoolUse::WithReserved => self.reserved_used,
        }
    }

    /// The limit, in bytes, a frame of `c` cells meets: α·(S − X) with X counting it.
    fn limit_for(&self, p: &Params, c: u64) -> u64 {
        let used = self.shared + self.counted_reserve(p) + c;
        scaled(p.alpha, p.pool.saturating_sub(used) * CELL) as u64
    }

    /// Take `c` cells into headroom, or refuse.
    fn headroom_or_drop(&mut self, p: &Params, c: u64) -> Result<(), ()> {
        if self.headroom + c > p.headroom {
            return Err(());
        }
        self.headroom += c;
        Ok(())
    }

    /// Ok((xoff sent, in headroom)) or a drop.
    fn admit(&mut self, p: &Params, c: u64) -> Result<(bool, bool), ()> {
        let shared_crossing = p.b.crossing == Crossing::Shared;
        // While headroom holds packets, or after a crossing kept in shared space, the
        // next packets go to headroom.
        if self.headroom > 0 || (self.xoff && shared_crossing) {
            return self.headroom_or_drop(p, c).map(|()| (false, true));
        }
        let r = c.min(p.reserved - self.reserved_used);
        let s = c - r;
        if s == 0 {
            self.reserved_used += r;
            return Ok((false, false));
        }
        let x = self.shared + s;
        // x ≤ α·(S − U): the PG is alone in its pool, so the pool's use U is its shared
        // use x, plus its reserved cells (this frame's too) where the pool counts them.
        let used = x + match p.b.pool_use {
            PoolUse::Shared => 0,
            PoolUse::WithReserved => self.reserved_used + r,
        };
        let fits = used <= p.pool
            && if p.alpha >= 0 {
                x as u128 <= scaled(p.alpha, p.pool - used)
            } else {
                (x as u128) << -p.alpha <= (p.pool - used) as u128
            };
        if fits {
            self.reserved_used += r;
            self.shared += s;
            return Ok((false, false));
        }
        let first = !self.xoff;
        let limit = self.limit_for(p, c);
        // The crossing packet stays in shared space if the ASIC keeps it there and the
        // pool holds it; otherwise it (or a later one) goes to headroom.
        let kept_in_shared = first && shared_crossing && x <= p.pool;
        if kept_in_shared {
            self.reserved_used += r;
            self.shared += s;
        } else {
            self.headroom_or_drop(p, c)?;
        }
        if first {
            self.xoff = true;
            self.latched = limit;
        }
        Ok((first, !kept_in_shared))
    }

    /// Release `c` cells (headroom, then shared, then reserved); true when XON is sent.
    fn release(&mut self, p: &Params, c: u64) -> bool {
        let h = c.min(self.headroom);
        self.headroom -= h;
        let s = (c - h).min(self.shared);
        self.shared -= s;
        self.reserved_used -= (c - h - s).min(self.reserved_used);
        if !self.xoff || self.headroom > 0 {
            return false;
        }
        let limit = match p.b.xon_limit {
            XonLimit::Latched => self.latched,
            XonLimit::Live => scaled(
                p.alpha,
                p.pool.saturating_sub(self.shared + self.counted_reserve(p)) * CELL,
            ) as u64,
        };
        let level = (p.xon * CELL).max(limit.saturating_sub(2 * CELL));
        let used = self.shared * CELL;
        if used == 0 || used < level {
            self.xoff = false;
            return true;
        }
        false
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(300)))]

    #[test]
    fn the_mmu_agrees_with_the_reference_on_every_step(
        alpha in -2i8..=2,
        pool in 40u64..400,
        reserved in 0u64..8,
        headroom in 0u64..60,
        xon in 0u64..40,
        shared_crossing in any::<bool>(),
        latched in any::<bool>(),
        with_reserved in any::<bool>(),
        ops in proptest::collection::vec((any::<bool>(), 1u64..6), 1..400),
    ) {
        let b = Behaviour {
            pool_use: if with_reserved { PoolUse::WithReserved } else { PoolUse::Shared },
            ..behaviour(
                if shared_crossing { Crossing::Shared } else { Crossing::Headroom },
                if latched { XonLimit::Latched } else { XonLimit::Live },
            )
        };
        let p = Params { alpha, pool, reserved, headroom, xon, b };
        let mut m = mmu(alpha, pool, reserved, headroom, xon, b);
        let mut r = Reference::default();
        let mut held: Vec<u64> = Vec::new();
        for (admit, cells) in ops {
            if admit || held.is_empty() {
                let got = m.admit(0, 0, 0, 0, cells * CELL).map(|a| (a.xoff, a.in_headroom));
                let want = r.admit(&p, cells);
                prop_assert_eq!(got.is_ok(), want.is_ok());
                if let (Ok(g), Ok(w)) = (got, want) {
                    prop_assert_eq!(g, w);
                    held.push(cells);
                }
            } else {
                let c = held.remove(0);
                prop_assert_eq!(m.release(0, 0, 0, 0, c as u32).xon, r.release(&p, c));
            }
            let s = m.pg(0, 0);
            prop_assert_eq!(
                (s.reserved_used, s.shared_used, s.headroom_used, s.xoff),
                (r.reserved_used, r.shared, r.headroom, r.xoff)
            );
        }
    }
}

/// Trident 2's pool counts a PG's reserved cells in use (`PoolUse::WithReserved`): with
/// 6 reserved cells, α = 2⁻³ and S = 44,032 shared cells (a Force10-S6000's plan), a PG
/// alone crosses when 9x > S − 6 = 44,026, x = 4,892: XOFF at packet 4,898 (qos_params.td2
/// .yaml's count); counting shared cells only it would cross at 9x > 44,032, x = 4,893.
#[test]
fn a_pool_that_counts_reserved_cells_sends_xoff_one_packet_earlier_on_a_s6000_plan() {
    let b = |pool_use| Behaviour {
        pool_use,
        ..behaviour(Crossing::Shared, XonLimit::Latched)
    };
    let mut m = mmu(-3, 44_032, 6, 265, 88, b(PoolUse::WithReserved));
    assert_eq!(fill(&mut m), (4_898, Some(4_899), 5_164));
    let mut m = mmu(-3, 44_032, 6, 265, 88, b(PoolUse::Shared));
    assert_eq!(fill(&mut m), (4_899, Some(4_900), 5_165));
}

#[test]
fn a_crossing_packet_the_pool_cannot_hold_goes_to_headroom_even_on_tomahawk_1() {
    // α = 128, S = 100 cells: alone, a PG stops at x ≤ 128·(100 − x), x = 99. A 2-cell
    // packet then crosses, and 101 cells do not fit the pool: it goes to headroom.
    let mut m = mmu(
        7,
        100,
        0,
        50,
        0,
        behaviour(Crossing::Shared, XonLimit::Live),
    );
    for _ in 0..99 {
        assert!(!m.admit(0, 0, 0, 0, 64).unwrap().xoff);
    }
    let a = m.admit(0, 0, 0, 0, 2 * CELL).unwrap();
    assert!(a.xoff && a.in_headroom, "{a:?}");
    assert_eq!(m.pg(0, 0).shared_used, 99);
    // A 1-cell crossing packet fits the pool and stays in shared space.
    let mut m = mmu(
        7,
        100,
        0,
        50,
        0,
        behaviour(Crossing::Shared, XonLimit::Live),
    );
    for _ in 0..99 {
        m.admit(0, 0, 0, 0, 64).unwrap();
    }
    let a = m.admit(0, 0, 0, 0, 64).unwrap();
    assert!(a.xoff && !a.in_headroom, "{a:?}");
    assert_eq!(m.pg(0, 0).shared_used, 100);
}

/// Two ports, PG 0 of each lossless (α = 1, no reserve, 100 cells of headroom), ingress pool
/// of 1,000 cells, in `slices` slices with ports mapped by `of_port`.
fn two_ports(slices: usize, of_port: Vec<usize>) -> Mmu {
    ports_mmu(2, 0, 1000, 0, 100, 0).with_slices(&lossless_buffer_model::mmu::Slices {
        count: slices,
        of_port,
    })
}

/// Fill PG 0 of `port` with one-cell packets until XOFF; its shared cells then.
fn fill_to_xoff(m: &mut Mmu, port: usize) -> u64 {
    while !m.admit(port, 0, 1 - port, 0, 64).unwrap().xoff {}
    m.pg(port, 0).shared_used
}

#[test]
fn each_slice_holds_its_share_of_the_pool_and_its_ports_draw_on_it() {
    // One buffer: the first PG stops alone at x = S − x = 500 cells; the second then meets
    // S − 500 − x: 250 cells.
    let mut one = two_ports(1, vec![]);
    assert_eq!(
        (fill_to_xoff(&mut one, 0), fill_to_xoff(&mut one, 1)),
        (500, 250)
    );
    // Two slices, a port in each: each slice holds 500 cells and each PG stops at 250,
    // whatever the other does.
    let mut two = two_ports(2, vec![]);
    assert_eq!(
        (fill_to_xoff(&mut two, 0), fill_to_xoff(&mut two, 1)),
        (250, 250)
    );
    assert_eq!(two.pools.len(), 4);
    assert_eq!(two.pools[0].size_cells, 500);
    assert_eq!((two.pools[0].slice, two.pools[1].slice), (Some(0), Some(1)));
    assert_eq!((two.pools[0].watermark, two.pools[1].watermark), (250, 250));
    // Both ports in slice 1: they share its 500 cells as they shared the whole 1,000.
    let mut same = two_ports(2, vec![1, 1]);
    assert_eq!(
        (fill_to_xoff(&mut same, 0), fill_to_xoff(&mut same, 1)),
        (250, 125)
    );
    assert_eq!(same.pools[0].watermark, 0, "slice 0 untouched");
}
