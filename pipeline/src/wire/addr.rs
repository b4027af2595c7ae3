//! Small typed values of the wire that people write by hand: MAC addresses and the IP ECN
//! codepoint, each parsed and printed in one place (YAML files, the command line, reports).

use lossless_buffer_model::Named;
use std::fmt;
use std::str::FromStr;

/// A 48-bit MAC address, written `02:00:00:00:00:01` (or with `-`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    /// A group (multicast or broadcast) address: the first octet is odd.
    pub fn is_multicast(self) -> bool {
        self.0[0] & 1 != 0
    }

    /// This address plus `i`, as a 48-bit number (None past ff:ff:ff:ff:ff:ff): port i's
    /// MAC of a switch whose base MAC this is.
    pub fn offset(self, i: usize) -> Option<MacAddr> {
        let mut b = [0u8; 8];
        b[2..].copy_from_slice(&self.0);
        let n = u64::from_be_bytes(b).checked_add(i as u64)?;
        (n < 1 << 48).then(|| MacAddr(n.to_be_bytes()[2..].try_into().expect("6 bytes")))
    }
}

/// Why a MAC address did not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MacError(pub String);

impl fmt::Display for MacError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a MAC address such as 02:00:00:00:00:01",
            self.0
        )
    }
}

impl std::error::Error for MacError {}

impl FromStr for MacAddr {
    type Err = MacError;
    /// Six hex octets of one or two digits, separated by `:` or `-`.
    fn from_str(s: &str) -> Result<MacAddr, MacError> {
        let parts: Vec<&str> = s.split([':', '-']).collect();
        let mut mac = [0u8; 6];
        let ok = parts.len() == 6
            && parts.iter().zip(mac.iter_mut()).all(|(p, m)| {
                (1..=2).contains(&p.len()) && u8::from_str_radix(p, 16).map(|b| *m = b).is_ok()
            });
        if ok {
            Ok(MacAddr(mac))
        } else {
            Err(MacError(s.to_string()))
        }
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        )
    }
}

/// The ECN field of an IP header (RFC 3168).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ecn {
    /// 00: the transport does not do ECN.
    #[default]
    NotEct,
    /// 01: ECN-capable, ECT(1).
    Ect1,
    /// 10: ECN-capable, ECT(0).
    Ect0,
    /// 11: congestion experienced.
    Ce,
}

impl Ecn {
    /// The two bits.
    pub fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0,
            Ecn::Ect1 => 1,
            Ecn::Ect0 => 2,
            Ecn::Ce => 3,
        }
    }
}

impl Named for Ecn {
    const WORDS: &'static [(&'static str, Ecn)] = &[
        ("not_ect", Ecn::NotEct),
        ("ect0", Ecn::Ect0),
        ("ect1", Ecn::Ect1),
        ("ce", Ecn::Ce),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macs_parse_print_and_count_up() {
        let m: MacAddr = "02:aa:00:00:01:f0".parse().unwrap();
        assert_eq!(m.to_string(), "02:aa:00:00:01:f0");
        assert_eq!(
            "2-0-0-0-0-1".parse::<MacAddr>().unwrap(),
            MacAddr([2, 0, 0, 0, 0, 1])
        );
        for bad in [
            "02:00:00:00:00",
            "02:00:00:00:00:01:07",
            "02:00:00:00:00:zz",
            "002:0:0:0:0:1",
            "",
        ] {
            assert!(bad.parse::<MacAddr>().is_err(), "{bad}");
        }
        assert_eq!(m.offset(0x10).unwrap().to_string(), "02:aa:00:00:02:00");
        assert!(MacAddr([0xff; 6]).offset(1).is_none());
        assert!("01:00:5e:00:00:01"
            .parse::<MacAddr>()
            .unwrap()
            .is_multicast());
    }

    #[test]
    fn ecn_words_and_bits() {
        assert_eq!(Ecn::from_word("ect0").unwrap().bits(), 2);
        assert_eq!(Ecn::Ce.word(), "ce");
        assert!(Ecn::from_word("ect2")
            .unwrap_err()
            .to_string()
            .contains("not_ect, ect0, ect1 or ce"));
    }
}
