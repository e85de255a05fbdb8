//! `serve`: the TLS 1.3 server. One record per accepted connection.
//!
//! Lifecycle: build the context (everything that can be wrong with the arguments fails
//! here), bind, print the ready line, then serve until SIGTERM/SIGINT or
//! `--max-connections`. Over TCP the scaffold every engine shares
//! (`chainlab_record::serve`) runs the connections, thread per connection or in event loops
//! (`--server-model`), and says what each span covers; QUIC has its own listener
//! (`quic::server`). The process never starts a child.
//!
//! This module checks the arguments, pins, builds the context and chooses the transport once:
//! `tcp::server` or `quic::server` serves; `serving` holds the ready line's OpenSSL facts.

use super::context::{self};
use crate::cli::{ServeArgs, Transport};

pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    super::anchors::check_server(args)?;
    chainlab_record::serve::prepare(crate::build::stack(), None, args)?;
    if let Some(seed) = args.random_seed {
        // Before the context: it draws ticket keys.
        crate::random::install(seed, chainlab_record::random::Side::Server)?;
    }
    let server = context::server(args)?;
    match args.tls.transport {
        Transport::Tcp => super::tcp::server::serve(args, &server),
        Transport::Quic => super::quic::server::serve(args, &server),
    }
}
