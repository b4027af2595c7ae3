//! The rate arithmetic's 64-bit fast paths against the exact 128-bit formulas they replace:
//! the same picoseconds and bytes for every rate and length, including where 64 bits
//! overflow and the wide path takes over.

use lossless_buffer_model::{Rate, Time};
use proptest::prelude::*;

const PS: u128 = 1_000_000_000_000;

fn rates() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        1u64..1_000,
        prop::sample::select(vec![
            1_000_000_000u64,
            10_000_000_000,
            25_000_000_000,
            100_000_000_000,
            400_000_000_000,
            800_000_000_000,
        ]),
        any::<u64>(),
    ]
}

fn amounts() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..20_000,
        0u64..100_000_000,
        any::<u64>().prop_map(|x| x >> 20),
        any::<u64>(),
    ]
}

proptest! {
    #[test]
    fn time_for_bits_is_the_rounded_quotient(rate in rates(), bits in amounts()) {
        let r = rate.max(1) as u128;
        let want = ((bits as u128 * PS + r / 2) / r) as u64;
        prop_assert_eq!(Rate(rate).time_for_bits(bits), Time(want));
    }

    #[test]
    fn time_for_bytes_ceil_is_the_ceiling(rate in rates(), bytes in amounts() ) {
        let bytes = bytes >> 3; // bytes × 8 fits the 128-bit reference
        let r = rate.max(1) as u128;
        let want = (bytes as u128 * 8 * PS).div_ceil(r) as u64;
        prop_assert_eq!(Rate(rate).time_for_bytes_ceil(bytes), Time(want));
    }

    #[test]
    fn bytes_in_is_the_floor(rate in rates(), t in amounts()) {
        let want = (rate as u128 * t as u128 / 8 / PS) as u64;
        prop_assert_eq!(Rate(rate).bytes_in(Time(t)), want);
    }
}
