//! Waiting for frames on several devices at once: one `ppoll` over every port's
//! descriptor, to the nanosecond (`poll`'s milliseconds would blur microsecond deadlines).

use std::io;
use std::time::Duration;

/// Wait at most `timeout` for any of `fds` to become readable (or to report an error or
/// hang-up, which the following read turns into an `io::Error` or EOF): the positions in
/// `fds` of those that did (none: the wait timed out).
pub fn readable(fds: &[i32], timeout: Duration) -> io::Result<Vec<usize>> {
    let mut pfds: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ts = libc::timespec {
        tv_sec: timeout.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    loop {
        // SAFETY: `pfds` are valid pollfds and `ts` a valid timespec for the duration of
        // the call; no signal mask is passed.
        let rc = unsafe {
            libc::ppoll(
                pfds.as_mut_ptr(),
                pfds.len() as libc::nfds_t,
                &ts,
                std::ptr::null(),
            )
        };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        return Ok(pfds
            .iter()
            .enumerate()
            .filter(|(_, p)| p.revents != 0)
            .map(|(i, _)| i)
            .collect());
    }
}
