//! An egress queue's dynamic limit under the two chip rules that decide its last packet:
//! when the limit is tested (`Admission`: with the arriving packet counted, or as the
//! packet finds the queue) and how the pool's bytes round to cells (`PoolCells`) — with
//! numbers derived by hand (Tomahawk 1's and Trident 2's LossyQueueTest plans), then
//! against a brute-force reference over random admit/release runs.

mod common;
use common::cases;
use lossless_buffer_model::mmu::{
    Admission, Behaviour, Mmu, PoolCells, PoolKind, PoolSpec, ProfileSpec, Threshold,
};
use lossless_buffer_model::{Bytes, PRIORITIES};
use proptest::prelude::*;

const CELL: u64 = 208;

/// One port whose queue 0 reserves `reserved` cells and shares an egress pool of
/// `pool_bytes` with α = 2^alpha; ingress never refuses.
fn mmu(alpha: i8, pool_bytes: u64, reserved: u64, b: Behaviour) -> Mmu {
    let pools = vec![
        PoolSpec {
            name: "ingress_lossy_pool".into(),
            kind: PoolKind::Ingress,
            size: Bytes(1 << 40),
            xoff: Bytes(0),
        },
        PoolSpec {
            name: "egress_lossy_pool".into(),
            kind: PoolKind::Egress,
            size: Bytes(pool_bytes),
            xoff: Bytes(0),
        },
    ];
    let pg = ProfileSpec {
        pool: 0,
        reserved: Bytes(0),
        threshold: Threshold::Static(Bytes(1 << 40)),
        headroom: None,
    };
    let q = ProfileSpec {
        pool: 1,
        reserved: Bytes(reserved * CELL),
        threshold: Threshold::Dynamic(alpha),
        headroom: None,
    };
    Mmu::new(
        Bytes(CELL),
        pools,
        &vec![pg; PRIORITIES],
        &vec![q; PRIORITIES],
    )
    .with_behaviour(b)
}

fn rules(queue_admission: Admission, pool_cells: PoolCells) -> Behaviour {
    Behaviour {
        queue_admission,
        pool_cells,
        ..Behaviour::default()
    }
}

/// One-cell packets until the first refusal (1-based).
fn first_drop(m: &mut Mmu) -> u64 {
    (1..)
        .find(|_| m.admit(0, 0, 0, 0, 64).is_err())
        .expect("a drop")
}

/// Tomahawk 1's slice of egress_lossy_pool (2,310,953 B = 11,110.35 cells) and Trident 2's
/// (7,326,924 B = 35,225.6 cells), 8 reserved cells, α = 8. Generic rules: x ≤ 8·(⌊P⌋ −
/// x) with the packet counted, x = 9,875 / 31,311, first drop 9,884 / 31,320. Chip rules:
/// P = 11,111 / 35,226 and x before the packet ≤ 8·(P − x) up to 9,876 / 31,312, so the
/// last admitted packet makes 9,877 / 31,313: first drop 9,886 / 31,322.
#[test]
fn the_chip_rules_move_the_lossy_drop_to_the_counts_sonic_records() {
    let generic = rules(Admission::After, PoolCells::Down);
    let chip = rules(Admission::Before, PoolCells::Up);
    for (bytes, generic_drop, chip_drop) in [(2_310_953, 9_884, 9_886), (7_326_924, 31_320, 31_322)]
    {
        assert_eq!(first_drop(&mut mmu(3, bytes, 8, generic)), generic_drop);
        assert_eq!(first_drop(&mut mmu(3, bytes, 8, chip)), chip_drop);
    }
    // Each rule alone moves it by one.
    assert_eq!(
        first_drop(&mut mmu(
            3,
            2_310_953,
            8,
            rules(Admission::Before, PoolCells::Down)
        )),
        9_885
    );
    assert_eq!(
        first_drop(&mut mmu(
            3,
            2_310_953,
            8,
            rules(Admission::After, PoolCells::Up)
        )),
        9_885
    );
}

/// The reference: one queue alone in its pool, so the pool's shared use is the queue's.
#[derive(Default)]
struct Reference {
    reserved: u64,
    shared: u64,
}

impl Reference {
    fn admit(&mut self, alpha: i8, pool: u64, reserve: u64, b: Behaviour, c: u64) -> bool {
        let r = c.min(reserve - self.reserved);
        let s = c - r;
        if s > 0 {
            let scaled = |free: u64| -> u128 {
                if alpha >= 0 {
                    (free as u128) << alpha
                } else {
                    (free as u128) >> -alpha
                }
            };
            let after = self.shared + s;
            let fits = after <= pool
                && match b.queue_admission {
                    Admission::After => {
                        // x·2^-α ≤ free, exactly, for negative α.
                        if alpha >= 0 {
                            after as u128 <= scaled(pool - after)
                        } else {
                            (after as u128) << -alpha <= (pool - after) as u128
                        }
                    }
                    Admission::Before => {
                        if alpha >= 0 {
                            self.shared as u128 <= scaled(pool - self.shared)
                        } else {
                            (self.shared as u128) << -alpha <= (pool - self.shared) as u128
                        }
                    }
                };
            if !fits {
                return false;
            }
        }
        self.reserved += r;
        self.shared += s;
        true
    }

    fn release(&mut self, c: u64) {
        let s = c.min(self.shared);
        self.shared -= s;
        self.reserved -= (c - s).min(self.reserved);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(300)))]

    #[test]
    fn the_mmu_agrees_with_the_reference_on_every_step(
        alpha in -3i8..=3,
        pool_bytes in 20u64 * CELL..200 * CELL,
        reserve in 0u64..10,
        before in any::<bool>(),
        up in any::<bool>(),
        ops in proptest::collection::vec((any::<bool>(), 1u64..5), 1..300),
    ) {
        let b = rules(
            if before { Admission::Before } else { Admission::After },
            if up { PoolCells::Up } else { PoolCells::Down },
        );
        let pool = if up { pool_bytes.div_ceil(CELL) } else { pool_bytes / CELL };
        let mut m = mmu(alpha, pool_bytes, reserve, b);
        let mut r = Reference::default();
        let mut held: Vec<u64> = Vec::new();
        for (admit, cells) in ops {
            if admit || held.is_empty() {
                let got = m.admit(0, 0, 0, 0, cells * CELL).is_ok();
                prop_assert_eq!(got, r.admit(alpha, pool, reserve, b, cells));
                if got {
                    held.push(cells);
                }
            } else {
                let c = held.remove(0);
                m.release(0, 0, 0, 0, c as u32);
                r.release(c);
            }
            let q = m.queue(0, 0);
            prop_assert_eq!((q.reserved_used, q.shared_used), (r.reserved, r.shared));
        }
    }
}

/// A packet the PG admits and the queue then refuses (`first_limit: ingress`) is seen by the
/// PG's and the ingress pool's watermarks, and charged to neither: one 1-cell packet into a
/// queue with no room leaves PG use 0 but its shared watermark 1 cell. Under `first_limit:
/// egress` the queue refuses it before the PG sees it: the watermark stays 0.
#[test]
fn an_egress_drop_is_seen_at_ingress_only_when_ingress_comes_first() {
    use lossless_buffer_model::asic::FirstLimit;
    for (first, seen) in [(FirstLimit::Ingress, 1), (FirstLimit::Egress, 0)] {
        let b = Behaviour {
            first_limit: first,
            ..Behaviour::default()
        };
        // A queue with no reserve in an empty pool: it refuses everything.
        let mut m = mmu(0, 0, 0, b);
        assert!(m.admit(0, 0, 0, 0, 100).is_err(), "{first:?}");
        assert_eq!(m.pg(0, 0).shared_used, 0, "{first:?}");
        assert_eq!(m.pg(0, 0).shared_watermark, seen, "{first:?}");
    }
}
