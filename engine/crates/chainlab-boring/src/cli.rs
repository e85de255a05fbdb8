//! Command-line interface of the BoringSSL engine: `chainlab-engine`'s `serve`, `handshake`,
//! `load` and `info`, with the very same flags (`chainlab_record::args`), so a campaign's
//! commands run on any stack. What this stack cannot do (QUIC, seeded random bytes, Merkle
//! Tree Certificates so far) is parsed and then refused by `capabilities::check_*` with a
//! one-line error, never silently ignored.

use clap::{Parser, Subcommand};

pub use chainlab_record::args::{
    ChainPolicy, ClientArgs, Compression, HandshakeArgs, LoadArgs, ServeArgs, TlsArgs,
};
pub use chainlab_record::record::Transport;

#[derive(Debug, Parser)]
#[command(
    name = "chainlab-boring",
    version,
    about = "chainlab's measuring engine over BoringSSL (the TLS stack in Chrome)"
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
    /// Time one signature operation of a handshake (sign, verify) in-process through
    /// BoringSSL, as `chainlab-engine primitives` does through OpenSSL: one JSON line each.
    Primitives(PrimitivesArgs),
    /// Print this engine's stack, versions and capabilities as JSON.
    Info,
}

/// `primitives`: the OpenSSL engine's flags for the operations this engine times.
#[derive(Debug, clap::Args)]
pub struct PrimitivesArgs {
    /// Signature algorithm (`pki --chain` name).
    #[arg(long)]
    pub subject: String,
    /// sign: the server's CertificateVerify; verify: its check.
    #[arg(long, value_parser = ["sign", "verify"])]
    pub op: String,
    /// Timed operations.
    #[arg(long, default_value_t = 10)]
    pub count: u64,
    /// Operations before the timed ones (recorded with "warmup": true).
    #[arg(long, default_value_t = 1)]
    pub warmup: u64,
    /// Run on these CPUs only.
    #[arg(long)]
    pub cpus: Option<String>,
}
