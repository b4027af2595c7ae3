//! sonic-mgmt's QoS SAI tests replayed on a Tomahawk 3: a DellEMC-Z9332f-O32 imported as
//! written from the config_db.json SONiC's templates give it
//! (tests/data/sonic/dellemc-z9332f-o32-t1.json: sonic-net/sonic-buildimage
//! 086b03bd70f9e211aaaf5f6aefe0790b508d2a94,
//! `device/dell/x86_64-dellemc_z9332f_d1508-r0/DellEMC-Z9332f-O32`), against the counts a
//! real one gave (sonic-net/sonic-mgmt b4ba9de3c9bb57c0628bc4cb98b3ecf3a3932a43,
//! `tests/qos/files/qos_params.th3.yaml`, topo-t1-lag, 400000_300m). The chip comes from the
//! HWSKU (`buffer.asic: tomahawk3`: 254-byte cells, two ITMs).
//!
//! The plan: ingress_lossless_pool 66,394,076 B (261,394 cells) with a shared headroom pool
//! of 27,200,352 B; egress_lossless_pool 38,462,204 B (151,426 cells), which the lossy queues
//! share (egress_lossy_profile: 1,778 B = 7 cells reserved, α = 2); the 400G / 300 m lossless
//! profile: 2,540 B = 10 cells reserved, α = 2⁻², xoff 373,888 B = 1,472 cells. Each ITM
//! holds half of every pool.
//!
//! What matches: LossyQueueTest (the ITM's half of the egress pool: 75,713 cells, x ≤ 2·(S
//! − x) up to 50,475, so 7 + 50,475 = 50,482 packets queued and the 50,483rd dropped, the
//! hardware's 50,482 within the test's margin 5), and PFCtest's first drop coming exactly
//! the profile's xoff after XOFF (16,624 − 15,152 = 1,472: the packet that crosses goes to
//! headroom). What does not: the XOFF point. Read as shared space, the ITM's half of the
//! ingress pool, 130,697 cells, puts XOFF at packet 10 + ⌊130,697 / 5⌋ + 1 = 26,150; the
//! hardware's 15,152 needs 75,705–75,709 cells, the ITM's half of the egress pool less 4–6
//! cells — on Tomahawk 3 ingress and egress draw on one service pool, whose size the plan
//! states only as the egress pool's (docs/sonic.md).
//!
//! Sources: sonic-net/sonic-mgmt b4ba9de3c9bb57c0628bc4cb98b3ecf3a3932a43:
//!   `tests/saitests/py3/sai_qos_tests.py`,
//!   `tests/qos/files/qos_params.th3.yaml`;
//! sonic-net/sonic-buildimage 086b03bd70f9e211aaaf5f6aefe0790b508d2a94:
//!   `device/dell/x86_64-dellemc_z9332f_d1508-r0/DellEMC-Z9332f-O32` (the imported switch).

mod common;

use common::sonic::{egress_drops, ingress_drops, replay, send, xoffs, Setup, Z9332F_400G};
use common::u;

const CELL: u64 = 254;
/// qos_params.th3.yaml, topo-t1-lag, 400000_300m.
const TRIG_PFC: u64 = 15_152;
const TRIG_INGR_DRP: u64 = 16_624;
const TRIG_EGR_DRP: u64 = 50_482;

fn one(name: &str, dscp: u8, n: u64) -> serde_json::Value {
    replay(name, &Z9332F_400G, &Setup::default(), &[send(1, dscp, n)])
}

/// PFCtest xoff_1 (DSCP 3) on paper: the ITM's half of ingress_lossless_pool is 130,697
/// cells; with α = 1/4 a PG alone takes shared cells while 5x ≤ 130,697, x ≤ 26,139, after
/// its 10 reserved; packet 26,150 crosses, goes to headroom and sends XOFF; 1,472 cells of
/// headroom take packets 26,150 … 27,621, and 27,622 is the first dropped. The hardware's
/// drop comes the same 1,472 packets after its XOFF; its XOFF does not match.
#[test]
fn pfctest_drop_comes_the_profiles_xoff_after_xoff() {
    let xoff = 373_888 / CELL;
    let s = 66_394_076 / 2 / CELL;
    let xoff_at = 10 + s / 5 + 1;
    assert_eq!((xoff, s, xoff_at), (1_472, 130_697, 26_150));
    assert_eq!(TRIG_INGR_DRP - TRIG_PFC, xoff, "the hardware's headroom");
    let r = one("th3-pfc-a", 3, xoff_at - 1);
    assert_eq!(xoffs(&r, 1, 3), 0);
    let r = one("th3-pfc-b", 3, xoff_at);
    assert_eq!(xoffs(&r, 1, 3), 1);
    let r = one("th3-pfc-c", 3, xoff_at + xoff - 1);
    assert_eq!(ingress_drops(&r), 0);
    let r = one("th3-pfc-d", 3, xoff_at + xoff);
    assert_eq!(ingress_drops(&r), 1);
    // Not matched: the hardware sent XOFF 10,998 packets earlier.
    assert_eq!(xoff_at - TRIG_PFC, 10_998);
}

/// LossyQueueTest (lossy_queue_1: DSCP 8, margin 5): 50,482 − 1 − 5 packets drop nothing,
/// and 1 + 2·5 more drop at egress, not at ingress, with no PFC. On paper (the file's
/// comment) the first drop is packet 50,483; with one ITM (the whole pool, 151,426 cells)
/// it would be 100,958.
#[test]
fn lossy_queue_test_on_the_itms_half_of_the_egress_pool() {
    let margin = 5;
    let s = 38_462_204 / 2 / CELL;
    let x = (0..=s).take_while(|x| x <= &(2 * (s - x))).last().unwrap();
    let first = 7 + x + 1;
    assert_eq!((s, x, first), (75_713, 50_475, 50_483));
    let r = one("th3-lossy-a", 8, TRIG_EGR_DRP - 1 - margin);
    assert_eq!((egress_drops(&r), ingress_drops(&r)), (0, 0));
    let r = one("th3-lossy-b", 8, TRIG_EGR_DRP - 1 - margin + 1 + 2 * margin);
    assert!(egress_drops(&r) >= 1);
    assert_eq!(ingress_drops(&r), 0);
    assert_eq!(u(&r["totals"]["pfc_tx_frames"]), 0);
    assert_eq!(egress_drops(&one("th3-lossy-c", 8, first - 1)), 0);
    assert_eq!(egress_drops(&one("th3-lossy-d", 8, first)), 1);
}
