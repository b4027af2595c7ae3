//! NVIDIA Spectrum's PG (`PgFill::SharedFirst`): its share of the pool first, then its own
//! buffer — the reserve below XOFF, then headroom — with XON when that buffer holds less
//! than `xon`; its limit tested as a packet finds it (`Admission::Before`), the egress
//! queue's first (`FirstLimit::Egress`). Numbers derived by hand at an ACS-MSN2700's scale,
//! then the MMU against a brute-force reference over random admit/release runs.

mod common;
use common::cases;
use lossless_buffer_model::mmu::{
    Admission, Behaviour, FirstLimit, Headroom, Mmu, PgFill, PoolKind, PoolSpec, PortHeadroom,
    ProfileSpec, Refusal, Threshold,
};
use lossless_buffer_model::{Bytes, PRIORITIES};
use proptest::prelude::*;

/// One port: PG 0 on an ingress pool of `pool` bytes with α = 2^alpha, `reserve` bytes of
/// its own buffer below XOFF and `headroom` above, XON under `xon` bytes (lossless when
/// `headroom` > 0); queue 0 on an egress pool of `egress_pool` bytes with α = 2^alpha.
struct Plan {
    cell: u64,
    pool: u64,
    alpha: i8,
    reserve: u64,
    headroom: u64,
    xon: u64,
    egress_pool: u64,
}

impl Plan {
    fn mmu(&self, b: Behaviour) -> Mmu {
        let pools = vec![
            PoolSpec {
                name: "ingress_pool".into(),
                kind: PoolKind::Ingress,
                size: Bytes(self.pool),
                xoff: Bytes(0),
            },
            PoolSpec {
                name: "egress_pool".into(),
                kind: PoolKind::Egress,
                size: Bytes(self.egress_pool),
                xoff: Bytes(0),
            },
        ];
        let pg = ProfileSpec {
            pool: 0,
            reserved: Bytes(self.reserve),
            threshold: Threshold::Dynamic(self.alpha),
            headroom: (self.headroom > 0).then_some(Headroom {
                xoff: Bytes(self.headroom),
                xon: Bytes(self.xon),
                xon_offset: Bytes(0),
            }),
        };
        let q = ProfileSpec {
            pool: 1,
            reserved: Bytes(0),
            threshold: Threshold::Dynamic(self.alpha),
            headroom: None,
        };
        Mmu::new(
            Bytes(self.cell),
            pools,
            &vec![pg; PRIORITIES],
            &vec![q; PRIORITIES],
        )
        .with_behaviour(b)
    }
}

fn spectrum(pg_admission: Admission, first_limit: FirstLimit) -> Behaviour {
    Behaviour {
        pg_fill: PgFill::SharedFirst,
        pg_admission,
        queue_admission: Admission::Before,
        first_limit,
        ..Behaviour::default()
    }
}

/// An ACS-MSN2700's lossless PG at 100G / 300 m: 96-byte cells, ingress_lossless_pool
/// 3,302,912 B, α = 1, profile size 123,904 = xon 19,456 + xoff 104,448, 95 cells of the
/// xoff kept by the chip; egress never in the way.
const MSN2700: Plan = Plan {
    cell: 96,
    pool: 3_302_912,
    alpha: 0,
    reserve: 19_456,
    headroom: 104_448 - 95 * 96,
    xon: 19_456,
    egress_pool: 1 << 40,
};

/// 300-byte packets (4 cells) until the first refusal: (XOFF at, first dropped).
fn fill(m: &mut Mmu) -> (u64, u64) {
    let mut xoff = 0;
    for n in 1.. {
        match m.admit(0, 0, 0, 0, 304) {
            Ok(a) if a.xoff => xoff = n,
            Ok(_) => {}
            Err(_) => return (xoff, n),
        }
    }
    unreachable!()
}

/// x ≤ 34,405 − x before the packet: 4,301 packets (17,204 cells) shared; 50 to the
/// 203-cell reserve; XOFF at 4,352; 248 to the 993-cell headroom; drop at 4,600. With the
/// limit tested after the packet, 4,300 shared and everything a packet earlier.
#[test]
fn an_msn2700_pg_fills_the_pool_then_its_own_buffer() {
    let mut m = MSN2700.mmu(spectrum(Admission::Before, FirstLimit::Egress));
    assert_eq!(fill(&mut m), (4_352, 4_600));
    let pg = m.pg(0, 0);
    assert_eq!(
        (pg.shared_used, pg.reserved_used, pg.headroom_used),
        (17_204, 200, 992)
    );
    let mut m = MSN2700.mmu(spectrum(Admission::After, FirstLimit::Egress));
    assert_eq!(fill(&mut m), (4_351, 4_599));
    assert_eq!(m.pg(0, 0).shared_used, 17_200);
}

/// After XOFF at packet 4,352 and three more, a departure frees the PG's own buffer first:
/// after the four headroom packets it holds 200 cells = 19,200 B < xon 19,456 B: XON on the
/// fourth release, none before.
#[test]
fn xon_when_the_pgs_own_buffer_holds_less_than_xon() {
    let mut m = MSN2700.mmu(spectrum(Admission::Before, FirstLimit::Egress));
    for _ in 0..4_355 {
        m.admit(0, 0, 0, 0, 304).unwrap();
    }
    assert_eq!(m.pg(0, 0).headroom_used, 16);
    let xons: Vec<bool> = (0..5).map(|_| m.release(0, 0, 0, 0, 4).xon).collect();
    assert_eq!(xons, [false, false, false, true, false]);
    assert_eq!(
        (m.pg(0, 0).headroom_used, m.pg(0, 0).reserved_used),
        (0, 196)
    );
}

/// A lossy PG and its queue with the same limit (α = 8, no reserve, pools of 3,302,912 B):
/// both would refuse the 7,647th packet of 4 cells. Egress tested first: the queue's drop,
/// the PG counts none; ingress first: the PG's.
#[test]
fn with_equal_limits_the_side_tested_first_drops() {
    let lossy = Plan {
        alpha: 3,
        reserve: 0,
        headroom: 0,
        xon: 0,
        egress_pool: 3_302_912,
        ..MSN2700
    };
    for (first, refusal) in [
        (FirstLimit::Egress, Refusal::EgressLimit),
        (FirstLimit::Ingress, Refusal::IngressLimit),
    ] {
        let mut m = lossy.mmu(spectrum(Admission::Before, first));
        for _ in 0..7_646 {
            m.admit(0, 0, 0, 0, 304).unwrap();
        }
        assert_eq!(m.admit(0, 0, 0, 0, 304).unwrap_err(), refusal);
        let pg_drops = m.pg(0, 0).drop_packets;
        assert_eq!(pg_drops, u64::from(first == FirstLimit::Ingress));
    }
}

/// The reference: one PG alone in its pool, filling shared space, then its reserve, then
/// headroom; departures free headroom, then reserve, then shared.
#[derive(Default, Debug)]
struct Reference {
    shared: u64,
    reserved: u64,
    headroom: u64,
    xoff: bool,
}

struct Params {
    alpha: i8,
    pool: u64,
    reserve: u64,
    headroom: u64,
    xon: u64,
    rule: Admission,
}

/// `used ≤ α·free`, exactly.
fn within(alpha: i8, used: u64, free: u64) -> bool {
    if alpha >= 0 {
        used as u128 <= (free as u128) << alpha
    } else {
        (used as u128) << -alpha <= free as u128
    }
}

impl Reference {
    /// Ok(sent XOFF) or a drop.
    fn admit(&mut self, p: &Params, c: u64) -> Result<bool, ()> {
        let fits_shared = self.headroom == 0
            && self.shared + c <= p.pool
            && match p.rule {
                Admission::After => within(p.alpha, self.shared + c, p.pool - self.shared - c),
                Admission::Before => within(p.alpha, self.shared, p.pool - self.shared),
            };
        if fits_shared {
            self.shared += c;
            Ok(false)
        } else if self.headroom == 0 && self.reserved + c <= p.reserve {
            self.reserved += c;
            Ok(false)
        } else if self.headroom + c <= p.headroom {
            self.headroom += c;
            let crossed = !self.xoff;
            self.xoff = true;
            Ok(crossed)
        } else {
            Err(())
        }
    }

    /// Whether this departure sends XON.
    fn release(&mut self, p: &Params, c: u64) -> bool {
        let h = c.min(self.headroom);
        self.headroom -= h;
        let r = (c - h).min(self.reserved);
        self.reserved -= r;
        self.shared -= (c - h - r).min(self.shared);
        if self.xoff && self.headroom == 0 && self.reserved + self.headroom < p.xon {
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
        pool in 10u64..120,
        reserve in 0u64..12,
        headroom in 1u64..20,
        xon in 0u64..14,
        before in any::<bool>(),
        ops in proptest::collection::vec((any::<bool>(), 1u64..5), 1..300),
    ) {
        const CELL: u64 = 64;
        let rule = if before { Admission::Before } else { Admission::After };
        let plan = Plan {
            cell: CELL,
            pool: pool * CELL,
            alpha,
            reserve: reserve * CELL,
            headroom: headroom * CELL,
            xon: xon * CELL,
            egress_pool: 1 << 40,
        };
        let mut m = plan.mmu(spectrum(rule, FirstLimit::Egress));
        let p = Params { alpha, pool, reserve, headroom, xon, rule };
        let mut r = Reference::default();
        let mut held: Vec<u64> = Vec::new();
        for (admit, cells) in ops {
            if admit || held.is_empty() {
                let got = m.admit(0, 0, 0, 0, cells * CELL);
                let want = r.admit(&p, cells);
                prop_assert_eq!(got.is_ok(), want.is_ok(), "{:?}", r);
                if let (Ok(a), Ok(x)) = (got, want) {
                    prop_assert_eq!(a.xoff, x);
                    held.push(cells);
                }
            } else {
                let c = held.remove(0);
                let got = m.release(0, 0, 0, 0, c as u32).xon;
                prop_assert_eq!(got, r.release(&p, c));
            }
            let pg = m.pg(0, 0);
            prop_assert_eq!(
                (pg.shared_used, pg.reserved_used, pg.headroom_used, pg.xoff),
                (r.shared, r.reserved, r.headroom, r.xoff)
            );
        }
    }
}

/// Two ports whose two lossless PGs (0 and 1) share a port headroom of `budget` cells,
/// `private` of them the port's own, the rest borrowed from a shared headroom pool of `shp`
/// cells; the ingress pool holds `pool` cells, α = 2^alpha; reserves of `reserve` cells.
fn shp_mmu(alpha: i8, pool: u64, reserve: u64, budget: u64, private: u64, shp: u64) -> Mmu {
    const CELL: u64 = 64;
    let pools = vec![
        PoolSpec {
            name: "ingress_lossless_pool".into(),
            kind: PoolKind::Ingress,
            size: Bytes(pool * CELL),
            xoff: Bytes(shp * CELL),
        },
        PoolSpec {
            name: "egress_pool".into(),
            kind: PoolKind::Egress,
            size: Bytes(1 << 40),
            xoff: Bytes(0),
        },
    ];
    let pg = ProfileSpec {
        pool: 0,
        reserved: Bytes(reserve * CELL),
        threshold: Threshold::Dynamic(alpha),
        headroom: Some(Headroom {
            xoff: Bytes(CELL),
            xon: Bytes(reserve * CELL),
            xon_offset: Bytes(0),
        }),
    };
    let q = ProfileSpec {
        pool: 1,
        reserved: Bytes(0),
        threshold: Threshold::Static(Bytes(1 << 40)),
        headroom: None,
    };
    let ports = vec![
        PortHeadroom {
            budget: Bytes(budget * CELL),
            private: Bytes(private * CELL),
        };
        2
    ];
    Mmu::new(
        Bytes(CELL),
        pools,
        &vec![pg; 2 * PRIORITIES],
        &vec![q; 2 * PRIORITIES],
    )
    .with_behaviour(spectrum(Admission::Before, FirstLimit::Egress))
    .with_port_headroom(&ports)
}

/// The reference for [`shp_mmu`]: per PG its shared, reserved and headroom cells; per port
/// its headroom; the pool's shared cells and what the ports borrowed.
#[derive(Debug, Default)]
struct ShpReference {
    pgs: [[(u64, u64, u64, bool); 2]; 2],
    port: [u64; 2],
    shared: u64,
    borrowed: u64,
}

struct ShpParams {
    alpha: i8,
    pool: u64,
    reserve: u64,
    budget: u64,
    private: u64,
    shp: u64,
}

impl ShpReference {
    fn borrowed_at(p: &ShpParams, used: u64) -> u64 {
        used.saturating_sub(p.private.min(p.budget))
    }

    /// Ok(sent XOFF) or a drop.
    fn admit(&mut self, p: &ShpParams, port: usize, pg: usize, c: u64) -> Result<bool, ()> {
        let (shared, reserved, headroom, xoff) = self.pgs[port][pg];
        let free = p.pool - self.shared;
        if headroom == 0 && self.shared + c <= p.pool && within(p.alpha, shared, free) {
            self.pgs[port][pg].0 += c;
            self.shared += c;
            return Ok(false);
        }
        if headroom == 0 && reserved + c <= p.reserve {
            self.pgs[port][pg].1 += c;
            return Ok(false);
        }
        let used = self.port[port];
        let more = Self::borrowed_at(p, used + c) - Self::borrowed_at(p, used);
        if used + c <= p.budget && self.borrowed + more <= p.shp {
            self.port[port] += c;
            self.borrowed += more;
            self.pgs[port][pg].2 += c;
            self.pgs[port][pg].3 = true;
            return Ok(!xoff);
        }
        Err(())
    }

    fn release(&mut self, p: &ShpParams, port: usize, pg: usize, c: u64) -> bool {
        let s = &mut self.pgs[port][pg];
        let h = c.min(s.2);
        s.2 -= h;
        let r = (c - h).min(s.1);
        s.1 -= r;
        let sh = (c - h - r).min(s.0);
        s.0 -= sh;
        self.shared -= sh;
        let used = self.port[port];
        self.borrowed -= Self::borrowed_at(p, used) - Self::borrowed_at(p, used - h);
        self.port[port] -= h;
        let s = &mut self.pgs[port][pg];
        if s.3 && s.2 == 0 && s.1 < p.reserve {
            s.3 = false;
            return true;
        }
        false
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(300)))]

    #[test]
    fn a_port_headroom_and_its_loans_agree_with_the_reference(
        alpha in -1i8..=1,
        pool in 8u64..60,
        reserve in 1u64..6,
        budget in 1u64..20,
        private in 0u64..8,
        shp in 1u64..20,
        ops in proptest::collection::vec(
            (any::<bool>(), 0usize..2, 0usize..2, 1u64..4),
            1..300,
        ),
    ) {
        let p = ShpParams { alpha, pool, reserve, budget, private, shp };
        let mut m = shp_mmu(alpha, pool, reserve, budget, private, shp);
        let mut r = ShpReference::default();
        let mut held: Vec<(usize, usize, u64)> = Vec::new();
        for (admit, port, pg, cells) in ops {
            if admit || held.is_empty() {
                let got = m.admit(port, pg, 1 - port, 0, cells * 64);
                let want = r.admit(&p, port, pg, cells);
                prop_assert_eq!(got.is_ok(), want.is_ok(), "{:?}", r);
                if let (Ok(a), Ok(x)) = (got, want) {
                    prop_assert_eq!(a.xoff, x);
                    held.push((port, pg, cells));
                }
            } else {
                let (port, pg, c) = held.remove(0);
                let got = m.release(port, pg, 1 - port, 0, c as u32).xon;
                prop_assert_eq!(got, r.release(&p, port, pg, c));
            }
            for port in 0..2 {
                for pg in 0..2 {
                    let s = m.pg(port, pg);
                    let (sh, rs, hr, x) = r.pgs[port][pg];
                    prop_assert_eq!(
                        (s.shared_used, s.reserved_used, s.headroom_used, s.xoff),
                        (sh, rs, hr, x)
                    );
                }
                prop_assert_eq!(m.port_headroom(port).unwrap().used, r.port[port]);
            }
            prop_assert_eq!(m.pools[0].headroom_used, r.borrowed);
        }
    }
}
