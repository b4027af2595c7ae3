//! Which switch chip a SONiC HWSKU is built on, for `buffer.asic`: the HWSKU lists of
//! sonic-mgmt's `ansible/group_vars/sonic/variables` (commit b4ba9de3c9), whose names
//! (`td2`, `th`, `th2`, `th3`, `td3`) are also the suffixes of its `qos_params.<chip>.yaml`,
//! and (`spc1`–`spc3`) the chip names of its Mellanox QoS parameter generator.

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
    // mellanox_spc1_hwskus
    ("ACS-MSN2700", Asic::Spectrum),
    ("ACS-MSN2740", Asic::Spectrum),
    ("ACS-MSN2100", Asic::Spectrum),
    ("ACS-MSN2410", Asic::Spectrum),
    ("ACS-MSN2010", Asic::Spectrum),
    ("Mellanox-SN2700", Asic::Spectrum),
    ("Mellanox-SN2700-A1", Asic::Spectrum),
    ("Mellanox-SN2700-D48C8", Asic::Spectrum),
    ("Mellanox-SN2700-D40C8S8", Asic::Spectrum),
    ("Mellanox-SN2700-A1-D48C8", Asic::Spectrum),
    ("Mellanox-SN2700-C28D8", Asic::Spectrum),
    ("Mellanox-SN2700-A1-C28D8", Asic::Spectrum),
    // mellanox_spc2_hwskus
    ("ACS-MSN3700", Asic::Spectrum2),
    ("ACS-MSN3700C", Asic::Spectrum2),
    ("ACS-MSN3800", Asic::Spectrum2),
    ("Mellanox-SN3800-D112C8", Asic::Spectrum2),
    ("ACS-MSN3420", Asic::Spectrum2),
    // mellanox_spc3_hwskus
    ("ACS-MSN4700", Asic::Spectrum3),
    ("Mellanox-SN4700-O28", Asic::Spectrum3),
    ("Mellanox-SN4700-O32", Asic::Spectrum3),
    ("ACS-MSN4600", Asic::Spectrum3),
    ("ACS-MSN4600C", Asic::Spectrum3),
    ("ACS-MSN4410", Asic::Spectrum3),
    ("Mellanox-SN4600C-D112C8", Asic::Spectrum3),
    ("Mellanox-SN4600C-C64", Asic::Spectrum3),
    ("Mellanox-SN4700-O8C48", Asic::Spectrum3),
    ("Mellanox-SN4700-O8V48", Asic::Spectrum3),
    ("Mellanox-SN4700-V64", Asic::Spectrum3),
    ("ACS-SN4280", Asic::Spectrum3),
    ("Mellanox-SN4280-O28", Asic::Spectrum3),
    ("Mellanox-SN4280-O8C40", Asic::Spectrum3),
    ("Mellanox-SN4280-C48", Asic::Spectrum3),
    ("Mellanox-SN4280-O8V40", Asic::Spectrum3),
    ("Mellanox-SN4280-O8C80", Asic::Spectrum3),
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
        assert_eq!(chip_of("ACS-MSN2700"), Some(Asic::Spectrum));
        assert_eq!(chip_of("Mellanox-SN9999"), None);
    }
}
