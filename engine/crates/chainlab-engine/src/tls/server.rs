//! `serve`: the TLS 1.3 server. One record per accepted connection.
//!
//! Lifecycle: build the context (everything that can be wrong with the arguments fails
//! here), bind, print the ready line, then `--workers` threads accept on the shared listener
//! until SIGTERM/SIGINT or `--max-connections`. The main thread only waits for the signal:
//! SIGTERM and SIGINT are blocked in every thread and taken synchronously with
//! `sigtimedwait`, so no handler runs and no worker is interrupted mid-connection. The
//! process never starts a child.
//!
//! Per connection (one worker thread, start to finish): accept() returns → start the clocks
//! → SSL_accept → handshake span ends: CPU and byte counts → send our close_notify → wait
//! for the client's (bounded by `--io-timeout-ms`) → close → connection span ends (`conn_ns`,
//! `conn_cpu_ns`) → write the record.
//!
//! This module checks the arguments, pins, builds the context and chooses the transport once:
//! `tcp::server` or `quic::server` serves; `serving` holds what both share.

use anyhow::bail;

use super::context::{self};
use crate::cli::{ServeArgs, Transport};

pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    if args.workers == 0 {
        bail!("--workers 0: must be at least 1");
    }
    if args.io_timeout_ms == 0 {
        bail!("--io-timeout-ms 0: must be at least 1");
    }
    if let Some(cpus) = &args.cpus {
        // Before any worker starts: every thread of the server inherits it.
        crate::cpu::pin(cpus)?;
    }
    let server = context::server(args)?;
    match args.tls.transport {
        Transport::Tcp => super::tcp::server::serve(args, &server),
        Transport::Quic => super::quic::server::serve(args, &server),
    }
}
