//! Property tests of the MMU's accounting invariants over random admit/release sequences.

mod common;
use common::cases;
use lossless_buffer_model::mmu::{
    Headroom, Mmu, PoolKind, PoolSpec, ProfileSpec, Refusal, Threshold,
};
use lossless_buffer_model::{Bytes, PRIORITIES};
use proptest::prelude::*;

const PORTS: usize = 3;
const CELL: u64 = 256;

fn mmu(alpha: i8, pool_cells: u64, headroom_cells: u64, reserved_cells: u64) -> Mmu {
    let pools = vec![
        PoolSpec {
            name: "ingress".into(),
            kind: PoolKind::Ingress,
            size: Bytes(pool_cells * CELL),
            xoff: Bytes(0),
        },
        PoolSpec {
            name: "egress".into(),
            kind: PoolKind::Egress,
            size: Bytes(100 * pool_cells * CELL),
            xoff: Bytes(0),
        },
    ];
    let lossless = ProfileSpec {
        pool: 0,
        reserved: Bytes(reserved_cells * CELL),
        threshold: Threshold::Dynamic(alpha),
        headroom: Some(Headroom {
            xoff: Bytes(headroom_cells * CELL),
            xon: Bytes(2 * CELL),
            xon_offset: Bytes(2 * CELL),
        }),
    };
    let lossy = ProfileSpec {
        headroom: None,
        ..lossless.clone()
    };
    let queue = ProfileSpec {
        pool: 1,
        reserved: Bytes(0),
        threshold: Threshold::Static(Bytes(100 * pool_cells * CELL)),
        headroom: None,
    };
    let pgs: Vec<_> = (0..PORTS * PRIORITIES)
        .map(|i| {
            if i % PRIORITIES == 3 {
                lossless.clone()
            } else {
                lossy.clone()
            }
        })
        .collect();
    Mmu::new(Bytes(CELL), pools, &pgs, &vec![queue; PORTS * PRIORITIES])
}

#[derive(Clone, Debug)]
enum Op {
    Admit {
        in_port: usize,
        pg: usize,
        out_port: usize,
        len: u64,
    },
    Release {
        pick: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..PORTS, prop_oneof![Just(3usize), Just(0usize)], 0..PORTS, 64u64..9217)
            .prop_map(|(in_port, pg, out_port, len)| Op::Admit { in_port, pg, out_port, len }),
        2 => any::<usize>().prop_map(|pick| Op::Release { pick }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(300)))]

    #[test]
    fn accounting_invariants_hold(
        alpha in -3i8..=2,
        pool_cells in 200u64..2000,
        headroom_cells in 0u64..200,
        reserved_cells in 0u64..20,
        ops in proptest::collection::vec(op(), 1..600),
    ) {
        let mut m = mmu(alpha, pool_cells, headroom_cells, reserved_cells);
        // (in_port, pg, out_port, queue, cells) of packets held.
        let mut held: Vec<(usize, usize, usize, usize, u32)> = Vec::new();
        let (mut admitted, mut released) = (0u64, 0u64);
        for op in ops {
            match op {
                Op::Admit { in_port, pg, out_port, len } => {
                    let before = m.pg(in_port, pg).clone();
                    match m.admit(in_port, pg, out_port, pg, len) {
                        Ok(a) => { admitted += 1; held.push((in_port, pg, out_port, pg, a.cells)); }
                        Err(r) => {

                            if before.lossless {
                                // A lossless PG only drops when its headroom cannot take the packet.
                                prop_assert_eq!(r, Refusal::HeadroomFull);
                                let cells = len.div_ceil(CELL);
                                prop_assert!(before.headroom_used + cells > before.headroom_cells);
                            }
                        }
                    }
                }
                Op::Release { pick } => {
                    if !held.is_empty() {
                        let (a, b, c, d, cells) = held.swap_remove(pick % held.len());
                        m.release(a, b, c, d, cells);
                        released += 1;
                    }
                }
            }
            // Pool use = Σ users; nothing above its bound.
            let pg_shared: u64 = m.pgs().iter().map(|p| p.shared_used).sum();
            let q_shared: u64 = m.queues().iter().map(|q| q.shared_used).sum();
            prop_assert_eq!(m.pools[0].shared_used, pg_shared);
            prop_assert_eq!(m.pools[1].shared_used, q_shared);
            prop_assert!(m.pools[0].shared_used <= m.pools[0].size_cells);
            for p in m.pgs() {
                prop_assert!(p.reserved_used <= p.reserved);
                prop_assert!(p.headroom_used <= p.headroom_cells);
            }
            let held_cells: u64 = held.iter().map(|h| h.4 as u64).sum();
            prop_assert_eq!(m.pgs().iter().map(|p| p.used()).sum::<u64>(), held_cells);
            prop_assert_eq!(m.queues().iter().map(|q| q.used()).sum::<u64>(), held_cells);
        }
        // Every admitted packet is released (dequeued) or still held; drain the rest.
        for (a, b, c, d, cells) in held.drain(..) {
            m.release(a, b, c, d, cells);
            released += 1;
        }
        prop_assert_eq!(admitted, released);
        prop_assert!(m.pgs().iter().all(|p| p.used() == 0 && !p.xoff));
        prop_assert_eq!(m.pools[0].shared_used + m.pools[1].shared_used, 0);
    }
}
