//! Command-line interface of the rustls engine: the flags of `chainlab-engine serve`,
//! `handshake` and `info`, spelled the same, so a campaign's commands run on either stack.
//! What this stack cannot do (QUIC, certificate compression, client certificates, partial
//! chains) is parsed and then refused by `capabilities::check_*` with a one-line error, never
//! silently ignored.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

pub use chainlab_record::args::{ChainPolicy, Compression, TlsArgs};
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
    /// Print this engine's stack, versions and capabilities as JSON.
    Info,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[arg(long)]
    pub pki: PathBuf,
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    #[arg(long, value_enum, default_value = "leaf+intermediates")]
    pub chain: ChainPolicy,
    #[command(flatten)]
    pub tls: TlsArgs,
    /// Session tickets issued per full handshake (0 disables resumption).
    #[arg(long, default_value_t = 0)]
    pub tickets: u32,
    #[arg(long, default_value = "-")]
    pub records: String,
    /// Connections handled concurrently: 1 only on this stack.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    #[arg(long, default_value_t = 10_000)]
    pub io_timeout_ms: u64,
    #[arg(long)]
    pub max_connections: Option<u64>,
    #[arg(long)]
    pub no_instrument: bool,
    #[arg(long)]
    pub cpus: Option<String>,
    /// Mutual TLS: not on this stack (refused).
    #[arg(long)]
    pub client_ca: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct HandshakeArgs {
    #[arg(long)]
    pub connect: SocketAddr,
    /// Trust anchor (the hierarchy's root, `ca.pem`).
    #[arg(long)]
    pub ca: Option<PathBuf>,
    /// Extra intermediates for path building: not on this stack (refused).
    #[arg(long)]
    pub untrusted: Option<PathBuf>,
    /// An intermediate as trust anchor: not on this stack (refused).
    #[arg(long)]
    pub partial_chain: bool,
    /// Mutual TLS: not on this stack (refused).
    #[arg(long)]
    pub cert_pki: Option<PathBuf>,
    #[arg(long)]
    pub no_verify: bool,
    #[arg(long, default_value = "localhost")]
    pub servername: String,
    #[command(flatten)]
    pub tls: TlsArgs,
    /// Every handshake after the first full one offers a ticket of the previous one.
    #[arg(long)]
    pub resume: bool,
    /// A resumption mix: not on this stack (refused).
    #[arg(long, conflicts_with = "resume")]
    pub resume_ratio: Option<f64>,
    #[arg(long, default_value_t = 1)]
    pub resume_seed: u64,
    #[arg(long, default_value_t = 10_000)]
    pub timeout_ms: u64,
    #[arg(long, default_value = "-")]
    pub records: String,
    #[arg(long, default_value_t = 0)]
    pub seq_start: u64,
    #[arg(long)]
    pub no_instrument: bool,
    #[arg(long)]
    pub cpus: Option<String>,
    #[arg(long, conflicts_with = "duration_ms")]
    pub count: Option<u64>,
    #[arg(long)]
    pub duration_ms: Option<u64>,
    #[arg(long, default_value_t = 0)]
    pub warmup: u64,
}
