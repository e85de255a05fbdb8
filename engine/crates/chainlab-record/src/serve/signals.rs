//! SIGTERM and SIGINT (stop) and SIGUSR1 (sync: every connection so far recorded, then a
//! `synced` line), blocked in the calling thread (and so in every thread it starts
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
            libc::sigaddset(&mut set, libc::SIGUSR1);
            let rc = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            if rc != 0 {
                bail!(
                    "cannot block SIGTERM/SIGINT/SIGUSR1: {}",
                    std::io::Error::from_raw_os_error(rc)
                );
            }
            Ok(Self { set })
        }
    }

    /// The signal that arrived within `timeout`, if any.
    pub fn wait(&self, timeout: Duration) -> Option<Signal> {
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: valid set and timespec; the siginfo out-pointer may be null.
        let sig = unsafe { libc::sigtimedwait(&self.set, std::ptr::null_mut(), &ts) };
        match sig {
            libc::SIGTERM | libc::SIGINT => Some(Signal::Stop),
            libc::SIGUSR1 => Some(Signal::Sync),
            _ => None,
        }
    }
}

/// What a signal asks of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGTERM, SIGINT: stop accepting, finish what is in flight, exit.
    Stop,
    /// SIGUSR1: once every connection accepted so far is over, its record written and none
    /// waits to be accepted, say `synced` (a server kept for several scenarios).
    Sync,
}
