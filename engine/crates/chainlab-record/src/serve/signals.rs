//! SIGTERM and SIGINT, blocked in the calling thread (and so in every thread it starts
//! afterwards) and taken synchronously: no handler runs, and no serving thread is
//! interrupted mid-connection.

use std::time::Duration;

use anyhow::bail;

/// How long a stopping server lets in-flight connections finish before cutting them. A
/// loopback handshake takes milliseconds; without a cut, a stalled peer would hold the exit
/// up for `--io-timeout-ms`.
pub const STOP_GRACE: Duration = Duration::from_millis(500);

pub struct StopSignals {
    set: libc::sigset_t,
}

impl StopSignals {
    pub fn block() -> anyhow::Result<Self> {
        // SAFETY: sigset_t is plain data initialised by sigemptyset; pthread_sigmask only
        // changes this thread's mask (inherited by threads created afterwards).
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGTERM);
            libc::sigaddset(&mut set, libc::SIGINT);
            let rc = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            if rc != 0 {
                bail!(
                    "cannot block SIGTERM/SIGINT: {}",
                    std::io::Error::from_raw_os_error(rc)
                );
            }
            Ok(Self { set })
        }
    }

    /// True if SIGTERM or SIGINT arrived within `timeout`.
    pub fn wait(&self, timeout: Duration) -> bool {
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: valid set and timespec; the siginfo out-pointer may be null.
        let sig = unsafe { libc::sigtimedwait(&self.set, std::ptr::null_mut(), &ts) };
        sig == libc::SIGTERM || sig == libc::SIGINT
    }
}
