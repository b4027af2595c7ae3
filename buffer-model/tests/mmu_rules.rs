//! The MMU's admission and release rules, one by one, with hand-picked numbers: where XOFF
//! comes, where headroom starts and ends, when XON follows, what a lossy PG, a fractional α,
//! an egress refusal and a shared headroom pool do.

use lossless_buffer_model::mmu::*;
use lossless_buffer_model::Bytes;

/// One port, one lossless PG (0) and a big static egress queue: the acceptance scenario.
fn one_pg_mmu(reserved_cells: u64, headroom_cells: u64, pool_cells: u64) -> Mmu {
    let pg = lossless_pg(reserved_cells, headroom_cells);
    build(pool_cells, 0, pg, big_queue())
}

/// A lossless PG profile with α = 1 and an XON offset of two cells.
fn lossless_pg(reserved_cells: u64, headroom_cells: u64) -> ProfileSpec {
    ProfileSpec {
        pool: 0,
        reserved: Bytes(reserved_cells * 256),
        threshold: Threshold::Dynamic(0),
        headroom: Some(Headroom {
            xoff: Bytes(headroom_cells * 256),
            xon: Bytes(0),
            xon_offset: Bytes(2 * 256),
        }),
    }
}

/// A lossy PG profile with threshold `threshold`.
fn lossy_pg(threshold: Threshold) -> ProfileSpec {
    ProfileSpec {
        pool: 0,
        reserved: Bytes(0),
        threshold,
        headroom: None,
    }
}

/// A queue profile that never refuses.
fn big_queue() -> ProfileSpec {
    ProfileSpec {
        pool: 1,
        reserved: Bytes(0),
        threshold: Threshold::Static(Bytes(1 << 30)),
        headroom: None,
    }
}

/// One port whose eight PGs have profile `pg` and eight queues profile `q`; an ingress
/// pool of `pool_cells` (with a shared headroom pool of `headroom_pool_cells`).
fn build(pool_cells: u64, headroom_pool_cells: u64, pg: ProfileSpec, q: ProfileSpec) -> Mmu {
    let cell = Bytes(256);
    let pools = vec![
        PoolSpec {
            name: "ingress_lossless_pool".into(),
            kind: PoolKind::Ingress,
            size: Bytes(pool_cells * 256),
            xoff: Bytes(headroom_pool_cells * 256),
        },
        PoolSpec {
            name: "egress_lossless_pool".into(),
            kind: PoolKind::Egress,
            size: Bytes(1 << 30),
            xoff: Bytes(0),
        },
    ];
    Mmu::new(cell, pools, &vec![pg; 8], &vec![q; 8])
}

#[test]
fn xoff_at_packet_16401_then_headroom_then_drop_at_16601() {
    let mut mmu = one_pg_mmu(16, 200, 32_768);
    let mut first_xoff = None;
    let mut first_headroom = None;
    let mut first_drop = None;
    for n in 1..=17_000u64 {
        match mmu.admit(0, 0, 0, 0, 64) {
            Ok(a) => {
                if a.xoff {
                    assert!(first_xoff.is_none(), "XOFF twice");
                    first_xoff = Some(n);
                }
                if a.in_headroom && first_headroom.is_none() {
                    first_headroom = Some(n);
                }
            }
            Err(r) => {
                assert_eq!(r, Refusal::HeadroomFull);
                first_drop.get_or_insert(n);
            }
        }
    }
    assert_eq!(first_xoff, Some(16_401));
    assert_eq!(first_headroom, Some(16_401));
    assert_eq!(first_drop, Some(16_601));
    let pg = &mmu.pg(0, 0);
    assert_eq!(pg.reserved_used, 16);
    assert_eq!(pg.shared_used, 16_384);
    assert_eq!(pg.headroom_used, 200);
    assert_eq!(pg.drop_packets, 17_000 - 16_600);
    assert_eq!(mmu.pools[0].shared_used, 16_384);
}

#[test]
fn xon_only_after_headroom_empty_and_below_hysteresis() {
    let mut mmu = one_pg_mmu(16, 200, 32_768);
    for _ in 0..16_450 {
        mmu.admit(0, 0, 0, 0, 64).unwrap();
    }
    assert!(mmu.pg(0, 0).xoff);
    // 50 headroom cells release first: no XON while headroom is in use.
    for _ in 0..49 {
        assert!(!mmu.release(0, 0, 0, 0, 1).xon);
    }
    assert_eq!(mmu.pg(0, 0).headroom_used, 1);
    // Headroom now empties, but shared (16384) is not below limit − offset yet:
    // limit = S − X = 32768 − 16384 = 16384 cells, minus 2 cells offset.
    assert!(!mmu.release(0, 0, 0, 0, 1).xon);
    assert_eq!(mmu.pg(0, 0).headroom_used, 0);
    // 16384 → 16383: limit is then 16385, level 16383: 16383 < 16383 fails.
    assert!(!mmu.release(0, 0, 0, 0, 1).xon);
    // 16382 < limit(16386) − 2 = 16384: XON.
    assert!(mmu.release(0, 0, 0, 0, 1).xon);
    assert!(!mmu.pg(0, 0).xoff);
}

#[test]
fn lossy_pg_drops_at_its_limit() {
    let mut mmu = build(1000, 0, lossy_pg(Threshold::Dynamic(0)), big_queue());
    let admitted = (0..1000)
        .filter(|_| mmu.admit(0, 0, 0, 0, 64).is_ok())
        .count();
    assert_eq!(admitted, 500);
    assert_eq!(mmu.admit(0, 0, 0, 0, 64), Err(Refusal::IngressLimit));
}

#[test]
fn fractional_alpha_is_exact() {
    // α = 1/8 over 900 cells: x ≤ (900 − x)/8 ⇔ 9x ≤ 900 ⇔ x ≤ 100.
    let mut mmu = build(900, 0, lossy_pg(Threshold::Dynamic(-3)), big_queue());
    let admitted = (0..200)
        .filter(|_| mmu.admit(0, 0, 0, 0, 1).is_ok())
        .count();
    assert_eq!(admitted, 100);
}

#[test]
fn egress_refusal_charges_nothing() {
    let small = ProfileSpec {
        threshold: Threshold::Static(Bytes(256 * 3)),
        ..big_queue()
    };
    let mut mmu = build(1000, 0, lossless_pg(0, 0), small);
    for _ in 0..3 {
        mmu.admit(0, 0, 0, 0, 200).unwrap();
    }
    assert_eq!(mmu.admit(0, 0, 0, 0, 200), Err(Refusal::EgressLimit));
    assert_eq!(mmu.pg(0, 0).shared_used, 3);
    assert_eq!(mmu.pools[0].shared_used, 3);
}

#[test]
fn shared_headroom_pool_bounds_the_sum() {
    // Per-PG headroom 4 cells each, a shared headroom pool of 5: the pool
    // oversubscribes the sum (8) and runs out first when both PGs fill.
    let mut mmu = build(20, 5, lossless_pg(0, 4), big_queue());
    // Fill shared: PG 0 up to x ≤ 20 − x (10 cells), then PG 1 up to x ≤ 10 − x (5).
    for _ in 0..10 {
        mmu.admit(0, 0, 0, 0, 256).unwrap();
    }
    for _ in 0..5 {
        mmu.admit(0, 1, 0, 1, 256).unwrap();
    }
    let a = mmu.admit(0, 0, 0, 0, 256).unwrap();
    assert!(a.xoff && a.in_headroom);
    for _ in 0..3 {
        mmu.admit(0, 0, 0, 0, 256).unwrap();
    }
    // PG 0 holds its own 4 cells of headroom: its own limit refuses the fifth.
    assert_eq!(mmu.admit(0, 0, 0, 0, 256), Err(Refusal::HeadroomFull));
    // PG 1 has room of its own (4) but the pool has only 1 cell left.
    assert!(mmu.admit(0, 1, 0, 1, 256).unwrap().in_headroom);
    assert_eq!(mmu.admit(0, 1, 0, 1, 256), Err(Refusal::HeadroomFull));
    assert_eq!(mmu.pools[0].headroom_used, 5);
    assert_eq!(mmu.pools[0].headroom_watermark, 5);
    assert_eq!(
        (mmu.pg(0, 0).headroom_used, mmu.pg(0, 1).headroom_used),
        (4, 1)
    );
}
