//! Which switch chip a SONiC HWSKU is built on, for `buffer.asic`: the HWSKU lists of
//! sonic-mgmt's `ansible/group_vars/sonic/variables` (commit b4ba9de3c9), whose names
//! (`td2`, `th`, `th2`, `th3`, `td3`) are also the suffixes of its `qos_params.<chip>.yaml`.

use lossless_buffer_model::asic::Asic;

/// (HWSKU, chip) for the chips [`Asic`] knows.
const SKUS: &[(&str, Asic)] = &[
    // broadcom_td2_hwskus
    ("Force10-S6000", Asic::Trident2),
    ("Force10-S6000-Q24S32", Asic::Trident2),
    ("Arista-7050-QX32", Asic::Trident2),
    ("Arista-7050-QX-32S", Asic::Trident2),
    ("Nexus-3164", Asic::Trident2),
    ("Arista-7050QX32S-Q32", Asic::Trident2),
    // broadcom_th_hwskus
    ("Force10-S6100", Asic::Tomahawk),
    ("Arista-7060CX-32S-C32", Asic::Tomahawk),
    ("Arista-7060CX-32S-C32-T1", Asic::Tomahawk),
    ("Arista-7060CX-32S-D48C8", Asic::Tomahawk),
    ("Arista-7060CX-32S-Q32", Asic::Tomahawk),
    ("Celestica-DX010-C32", Asic::Tomahawk),
    ("Seastone-DX010", Asic::Tomahawk),
    // broadcom_th2_hwskus
    ("Arista-7260CX3-D108C8", Asic::Tomahawk2),
    ("Arista-7260CX3-D108C10", Asic::Tomahawk2),
    ("Arista-7260CX3-C64", Asic::Tomahawk2),
    ("Arista-7260CX3-Q44", Asic::Tomahawk2),
    ("Arista-7260CX3-Q64", Asic::Tomahawk2),
    // broadcom_th3_hwskus
    ("DellEMC-Z9332f-M-O16C64", Asic::Tomahawk3),
    ("DellEMC-Z9332f-O32", Asic::Tomahawk3),
    // broadcom_td3_hwskus (the 7050CX3 family)
    ("Arista-7050CX3-32S-C32", Asic::Trident3),
    ("Arista-7050CX3-32S-D48C8", Asic::Trident3),
    ("Arista-7050CX3-32S-C28S4", Asic::Trident3),
    ("Arista-7050CX3-32S-S128", Asic::Trident3),
    ("Arista-7050CX3-32S-C6S104", Asic::Trident3),
    ("Arista-7050CX3-32S-C28S16", Asic::Trident3),
];

/// The chip of `hwsku`, if the lists name it.
pub fn chip_of(hwsku: &str) -> Option<Asic> {
    SKUS.iter().find(|(s, _)| *s == hwsku).map(|(_, a)| *a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skus_of_the_replayed_switches_are_known() {
        assert_eq!(chip_of("Arista-7060CX-32S-C32"), Some(Asic::Tomahawk));
        assert_eq!(chip_of("Force10-S6100"), Some(Asic::Tomahawk));
        assert_eq!(chip_of("Arista-7260CX3-C64"), Some(Asic::Tomahawk2));
        assert_eq!(chip_of("Force10-S6000"), Some(Asic::Trident2));
        assert_eq!(chip_of("Mellanox-SN2700"), None);
    }
}
