//! One switch per interface: a port's interface is claimed by binding an abstract Unix
//! socket named after its index. Abstract names belong to the network namespace, like the
//! interface itself, and vanish with the process that bound them (even one killed), so
//! there is no file to clean up and nothing to go stale. A second `lossless tap` that tries
//! the same interface finds the name taken and learns the holder's pid from the socket's
//! peer credentials.

use std::io;
use std::os::fd::AsRawFd;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};

/// An interface held by this process while the value lives.
#[derive(Debug)]
pub struct Claim {
    _listener: UnixListener,
}

fn name(ifindex: i32) -> String {
    format!("lossless-tap/iface/{ifindex}")
}

/// Claim interface `ifindex` of this namespace. Fails with `AddrInUse`, naming the
/// holder's pid when it can be learned, if another process holds it.
pub fn claim(ifindex: i32, iface: &str) -> io::Result<Claim> {
    let addr = SocketAddr::from_abstract_name(name(ifindex).as_bytes())?;
    match UnixListener::bind_addr(&addr) {
        Ok(l) => Ok(Claim { _listener: l }),
        Err(e) if e.kind() == io::ErrorKind::AddrInUse => {
            let who = holder(&addr).map_or_else(
                || "another process".to_string(),
                |pid| format!("another `lossless tap` (pid {pid})"),
            );
            Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!("{who} already serves `{iface}` in this namespace"),
            ))
        }
        Err(e) => Err(e),
    }
}

/// The pid of the process listening on `addr`, from the connected socket's peer
/// credentials (the listener's, recorded when it called listen).
fn holder(addr: &SocketAddr) -> Option<i32> {
    let s = UnixStream::connect_addr(addr).ok()?;
    // SAFETY: ucred is plain old data; getsockopt writes at most `len` bytes into it.
    let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            &mut cred as *mut libc::ucred as *mut libc::c_void,
            &mut len,
        )
    };
    (rc == 0 && cred.pid > 0).then_some(cred.pid)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_second_claim_names_the_holder() {
        // An index no interface has: the claim is only a name.
        let first = super::claim(-4242, "x0").unwrap();
        let e = super::claim(-4242, "x0").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AddrInUse);
        let pid = std::process::id();
        assert!(
            e.to_string().contains(&format!(
                "another `lossless tap` (pid {pid}) already serves `x0`"
            )),
            "{e}"
        );
        drop(first);
        super::claim(-4242, "x0").unwrap();
    }
}
