//! Interface lookups by name in the calling thread's network namespace: index, MAC address,
//! MTU, and the transmit queue length. They use `if_nametoindex` and `SIOC*` ioctls, which
//! answer for the namespace the caller is in (also under `nsenter` or `unshare`, where
//! `/sys/class/net` still shows the namespace `/sys` was mounted in).

use crate::invalid;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `name` as the fixed-size, NUL-terminated field of an `ifreq`, after checking it is an
/// interface name at all (1–15 bytes, no NUL, no `/`).
pub fn ifname(name: &str) -> io::Result<[libc::c_char; libc::IFNAMSIZ]> {
    if name.is_empty()
        || name.len() >= libc::IFNAMSIZ
        || name.contains(['\0', '/'])
        || name.chars().any(char::is_whitespace)
    {
        return Err(invalid(format!(
            "`{name}` is not an interface name (1–15 bytes, no '/', no spaces)"
        )));
    }
    let mut out = [0 as libc::c_char; libc::IFNAMSIZ];
    for (o, b) in out.iter_mut().zip(name.bytes()) {
        *o = b as libc::c_char;
    }
    Ok(out)
}

/// A datagram socket to issue interface ioctls on (any family reaches `dev_ioctl`).
fn ioctl_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2) call; the result is checked before use.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh, valid descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Issue `request` for interface `name`, with `fill` preparing the request; returns the
/// `ifreq` the kernel filled in.
fn ifreq_ioctl(
    name: &str,
    request: libc::Ioctl,
    fill: impl FnOnce(&mut libc::ifreq),
) -> io::Result<libc::ifreq> {
    let sock = ioctl_socket()?;
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    req.ifr_name = ifname(name)?;
    fill(&mut req);
    // SAFETY: the socket is open and `req` a valid ifreq that outlives the call; the
    // requests used here read or write only the ifreq.
    let rc = unsafe { libc::ioctl(sock.as_raw_fd(), request, &mut req as *mut libc::ifreq) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("interface `{name}`: {e}")));
    }
    Ok(req)
}

/// The interface index of `name` in this namespace.
pub fn if_index(name: &str) -> io::Result<i32> {
    ifname(name)?;
    let c = CString::new(name).map_err(|_| invalid(format!("`{name}` contains NUL")))?;
    // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("no interface `{name}` in this network namespace: {e}"),
        ));
    }
    Ok(i as i32)
}

/// The MAC address of `name`.
pub fn if_mac(name: &str) -> io::Result<[u8; 6]> {
    let req = ifreq_ioctl(name, libc::SIOCGIFHWADDR, |_| {})?;
    // SAFETY: SIOCGIFHWADDR filled the hwaddr member of the union.
    let sa = unsafe { req.ifr_ifru.ifru_hwaddr };
    Ok(core::array::from_fn(|i| sa.sa_data[i] as u8))
}

/// The MTU of `name` (bytes of payload after the Ethernet header, no FCS).
pub fn if_mtu(name: &str) -> io::Result<u32> {
    let req = ifreq_ioctl(name, libc::SIOCGIFMTU, |_| {})?;
    // SAFETY: SIOCGIFMTU filled the mtu member of the union.
    Ok(unsafe { req.ifr_ifru.ifru_mtu } as u32)
}

/// Is `name` administratively up (`IFF_UP`)?
pub fn if_up(name: &str) -> io::Result<bool> {
    Ok(if_flags(name)? & libc::IFF_UP != 0)
}

/// The interface flags of `name` (`IFF_UP`, `IFF_RUNNING` for carrier, ...).
pub fn if_flags(name: &str) -> io::Result<libc::c_int> {
    let req = ifreq_ioctl(name, libc::SIOCGIFFLAGS, |_| {})?;
    // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
    let flags = unsafe { req.ifr_ifru.ifru_flags };
    Ok(flags as u16 as libc::c_int)
}

/// The name of the interface of index `index` in this namespace (fails once it is gone).
pub fn if_name(index: i32) -> io::Result<String> {
    let mut buf = [0 as libc::c_char; libc::IFNAMSIZ];
    // SAFETY: `buf` has the IFNAMSIZ bytes if_indextoname may write.
    let p = unsafe { libc::if_indextoname(index as libc::c_uint, buf.as_mut_ptr()) };
    if p.is_null() {
        return Err(io::Error::last_os_error());
    }
    let bytes: Vec<u8> = buf
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Set the transmit queue length of `name` (for a TAP: the size of the ring between the
/// host's stack and whoever reads the TAP). Needs CAP_NET_ADMIN.
pub fn set_txqueuelen(name: &str, frames: u32) -> io::Result<()> {
    ifreq_ioctl(name, libc::SIOCSIFTXQLEN, |r| {
        r.ifr_ifru.ifru_ifindex = frames as libc::c_int;
    })?;
    Ok(())
}

/// The transmit queue length of `name`.
pub fn txqueuelen(name: &str) -> io::Result<u32> {
    let req = ifreq_ioctl(name, libc::SIOCGIFTXQLEN, |_| {})?;
    // SAFETY: SIOCGIFTXQLEN filled the integer member of the union.
    Ok(unsafe { req.ifr_ifru.ifru_ifindex } as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_before_any_call() {
        for bad in ["", "a/b", "../x", "sixteen-chars-xx", "a b", "a\0b"] {
            assert!(ifname(bad).is_err(), "{bad:?}");
            assert!(if_index(bad).is_err(), "{bad:?}");
        }
        assert!(ifname("ll0").is_ok());
    }

    #[test]
    fn loopback_is_found_by_ioctl() {
        // Every namespace has `lo`: index, zero MAC, and an MTU.
        assert!(if_index("lo").unwrap() > 0);
        assert_eq!(if_mac("lo").unwrap(), [0; 6]);
        assert!(if_mtu("lo").unwrap() >= 1500);
        assert_eq!(if_name(if_index("lo").unwrap()).unwrap(), "lo");
        let e = if_index("no-such-if0").unwrap_err().to_string();
        assert!(
            e.contains("no interface `no-such-if0` in this network namespace"),
            "{e}"
        );
    }
}
