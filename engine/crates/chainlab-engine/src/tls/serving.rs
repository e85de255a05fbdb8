//! What both servers (`tcp::server`, `quic::server`) share: the ready line a caller waits for
//! (docs/engine-records.md), the stop signals taken synchronously, and how long a stopping
//! server lets in-flight connections finish.

use std::io::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::bail;
use serde::Serialize;

use crate::cli::Transport;
use crate::record::SCHEMA;
use crate::tls::context::{ClientAuth, CompressionSetup, ServedChain, ServerContext};

/// How long a stopping server lets in-flight connections finish before cutting them. A
/// loopback handshake takes milliseconds; without a cut, a stalled peer would hold the exit
/// up for `--io-timeout-ms`.
pub(crate) const STOP_GRACE: Duration = Duration::from_millis(500);

/// The one line a caller waits for before connecting (docs/engine-records.md).
#[derive(Serialize)]
struct Ready<'a> {
    event: &'static str,
    addr: String,
    transport: Transport,
    pid: u32,
    openssl: String,
    patch: String,
    max_cert_list: u64,
    served_chain: &'a ServedChain,
    cert_compression: &'a CompressionSetup,
    client_auth: Option<&'a ClientAuth>,
    record_schema: &'static str,
}

pub(crate) fn print_ready(
    server: &ServerContext,
    addr: SocketAddr,
    transport: Transport,
) -> anyhow::Result<()> {
    let build: serde_json::Value = serde_json::from_str(crate::info::OPENSSL_BUILD)?;
    let ready = Ready {
        event: "ready",
        addr: addr.to_string(),
        transport,
        pid: std::process::id(),
        openssl: build["openssl_version"]
            .as_str()
            .unwrap_or("unknown")
            .to_owned(),
        patch: build["patch_sha256_16"]
            .as_str()
            .unwrap_or("unknown")
            .to_owned(),
        max_cert_list: server.max_cert_list,
        served_chain: &server.served_chain,
        cert_compression: &server.cert_compression,
        client_auth: server.client_auth.as_ref(),
        record_schema: SCHEMA,
    };
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, &ready)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// SIGTERM and SIGINT, blocked in this thread (and so in every thread spawned after) and
/// taken synchronously.
pub(crate) struct StopSignals {
    set: libc::sigset_t,
}

impl StopSignals {
    pub(crate) fn block() -> anyhow::Result<Self> {
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
    pub(crate) fn wait(&self, timeout: Duration) -> bool {
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: valid set and timespec; the siginfo out-pointer may be null.
        let sig = unsafe { libc::sigtimedwait(&self.set, std::ptr::null_mut(), &ts) };
        sig == libc::SIGTERM || sig == libc::SIGINT
    }
}
