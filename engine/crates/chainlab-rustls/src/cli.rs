//! Command-line interface of the rustls engine: `chainlab-engine`'s `serve`, `handshake`,
//! `load` and `info`, with the very same flags (`chainlab_record::args`), so a campaign's
//! commands run on either stack.
//! What this stack cannot do (QUIC, certificate compression, client certificates, partial
//! chains) is parsed and then refused by `capabilities::check_*` with a one-line error, never
//! silently ignored.

use clap::{Parser, Subcommand};

pub use chainlab_record::args::{
    ChainPolicy, ClientArgs, Compression, HandshakeArgs, LoadArgs, ServeArgs, TlsArgs,
};
pub use chainlab_record::primitives::SignatureArgs;
pub use chainlab_record::record::Transport;

#[derive(Debug, Parser)]
#[command(
    name = "chainlab-rustls",
    version,
    about = "chainlab's measuring engine over rustls (aws-lc-rs provider)"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the TLS 1.3 server; one JSON record per accepted connection.
    Serve(ServeArgs),
    /// Run the measuring client; one JSON record per handshake.
    Handshake(HandshakeArgs),
    /// Open-loop load: start connections on a schedule fixed in advance; one JSON record per
    /// scheduled attempt, then one record of the generator's own health.
    Load(LoadArgs),
    /// Time one signature operation of a handshake (sign, verify) in-process through aws-lc
    /// (or liboqs' ML-DSA, `--signature-impl liboqs`): one JSON line each.
    Primitives(SignatureArgs),
    /// Print this engine's stack, versions and capabilities as JSON.
    Info,
}
