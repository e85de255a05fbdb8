//! Command-line interface of the engine. Parsing only: each subcommand's module validates
//! the values (algorithm names, files, ports) and reports a one-line error naming the bad
//! value and the allowed ones.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "chainlab-engine",
    version,
    about = "chainlab's measuring engine"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate an X.509 hierarchy (depth 1-4) into a fixed file layout.
    Pki(PkiArgs),
    /// Run the TLS 1.3 server; one JSON record per accepted connection.
    Serve(ServeArgs),
    /// Run the measuring client; one JSON record per handshake.
    Handshake(HandshakeArgs),
    /// Open-loop load: start connections on a schedule fixed in advance; one JSON record per
    /// scheduled attempt, then one record of the generator's own health.
    Load(LoadArgs),
    /// Time a fixed CPU-bound reference workload (one JSON line): how fast this host is
    /// right now, to read measurements taken minutes apart against.
    Reference(ReferenceArgs),
    /// Time one cryptographic operation of a handshake (sign, verify, key exchange,
    /// decompression) in-process: one JSON line per operation.
    Primitives(PrimitivesArgs),
    /// Print the engine's build facts (OpenSSL version, patch hash, algorithms) as JSON.
    Info(InfoArgs),
}

#[derive(Debug, Args)]
pub struct PkiArgs {
    /// Algorithms from root to leaf, comma-separated; one per position, depth = count (1-4).
    /// A single algorithm gives a self-signed leaf. See `info` for the accepted names.
    #[arg(long, value_delimiter = ',', required = true)]
    pub chain: Vec<String>,
    /// Output directory (created; existing hierarchy files in it are replaced).
    #[arg(long)]
    pub out: PathBuf,
    /// Seed for deterministic keys, serials and signatures (any string).
    #[arg(long, default_value = "chainlab")]
    pub seed: String,
    /// DNS names for the leaf's subjectAltName (127.0.0.1 and ::1 are always added).
    #[arg(long, value_delimiter = ',', default_value = "localhost")]
    pub dns: Vec<String>,
    /// What the leaf authenticates: a TLS server (extendedKeyUsage serverAuth, the names
    /// above in its subjectAltName) or a TLS client (clientAuth, no subjectAltName; subjects
    /// read "chainlab client ..." so the two kinds never look alike).
    #[arg(long, value_enum, default_value = "server")]
    pub purpose: Purpose,
}

/// Which side of a TLS connection a hierarchy's leaf authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Purpose {
    Server,
    Client,
}

// What the server sends, certificate compression and what the TLS context offers are the
// same flags on every engine (chainlab-record's `args`).
pub use chainlab_record::args::{ChainPolicy, Compression, TlsArgs};
pub use chainlab_record::record::Transport;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Hierarchy directory written by `pki`.
    #[arg(long)]
    pub pki: PathBuf,
    /// Address to listen on; port 0 picks a free port (reported in the ready line).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Certificates the server sends.
    #[arg(long, value_enum, default_value = "leaf+intermediates")]
    pub chain: ChainPolicy,
    #[command(flatten)]
    pub tls: TlsArgs,
    /// Session tickets issued per full handshake (0 disables resumption).
    #[arg(long, default_value_t = 0)]
    pub tickets: u32,
    /// Where records go ("-" for standard output). The ready line always goes to stdout.
    #[arg(long, default_value = "-")]
    pub records: String,
    /// Connections handled concurrently (1 = one at a time, as the paper's s_server).
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// Give up on a connection whose peer stalls for this long (ms).
    #[arg(long, default_value_t = 10_000)]
    pub io_timeout_ms: u64,
    /// Stop after this many connections (default: run until SIGTERM/SIGINT).
    #[arg(long)]
    pub max_connections: Option<u64>,
    /// Turn off per-connection instrumentation (CPU clocks, byte counting, records): for
    /// measuring the instrumentation's own overhead only.
    #[arg(long)]
    pub no_instrument: bool,
    /// Run on these CPUs only (e.g. "0" or "0-3"), one core per worker at most being the
    /// usual plan; default: wherever the kernel puts it.
    #[arg(long)]
    pub cpus: Option<String>,
    /// Mutual TLS: request a client certificate, require one, and verify the client's chain
    /// against these trust anchors (a client hierarchy's `ca.pem`, from `pki --purpose
    /// client`). A missing or rejected client certificate fails the handshake with
    /// `client_cert_rejected`.
    #[arg(long)]
    pub client_ca: Option<PathBuf>,
}

/// What a client connects to and how: shared by `handshake` and `load`.
#[derive(Debug, Args)]
pub struct ClientArgs {
    /// Server address.
    #[arg(long)]
    pub connect: SocketAddr,
    /// Trust anchor (the hierarchy's root, `ca.pem` in a `pki` directory).
    #[arg(long)]
    pub ca: Option<PathBuf>,
    /// Extra untrusted certificates for path building (intermediates the server does not send).
    #[arg(long)]
    pub untrusted: Option<PathBuf>,
    /// Accept a chain that ends at any certificate of `--ca`, not only at a self-signed root
    /// (X509_V_FLAG_PARTIAL_CHAIN): an intermediate as the trust anchor, as in the Trust
    /// Anchor IDs deployment model. Nothing above the anchor is fetched or checked.
    #[arg(long)]
    pub partial_chain: bool,
    /// Mutual TLS: authenticate with the leaf of this hierarchy directory (`pki --purpose
    /// client`), sending `chain-leaf+intermediates.pem` and signing with `leaf.key` when the
    /// server asks for a certificate.
    #[arg(long)]
    pub cert_pki: Option<PathBuf>,
    /// Skip chain verification (recorded in every record).
    #[arg(long)]
    pub no_verify: bool,
    /// Name sent in SNI and checked against the leaf's subjectAltName.
    #[arg(long, default_value = "localhost")]
    pub servername: String,
    #[command(flatten)]
    pub tls: TlsArgs,
    /// Resume sessions: every handshake after the first full one offers the last ticket
    /// (under `load`, each connection slot keeps its own ticket).
    #[arg(long)]
    pub resume: bool,
    /// A resumption mix: each handshake offers the kept ticket with this probability (0-1,
    /// a seeded draw per attempt, `--resume-seed`), the others run full handshakes. Every
    /// completed handshake's session replaces the kept one, so a full handshake's fresh
    /// ticket is what the next resumption offers, as real clients do.
    #[arg(long, conflicts_with = "resume")]
    pub resume_ratio: Option<f64>,
    /// Seed of the `--resume-ratio` draws (the same seed repeats the same mix).
    #[arg(long, default_value_t = 1)]
    pub resume_seed: u64,
    /// Connect and handshake timeout (ms); a server that stalls longer is recorded as hung.
    #[arg(long, default_value_t = 10_000)]
    pub timeout_ms: u64,
    /// Where records go ("-" for standard output).
    #[arg(long, default_value = "-")]
    pub records: String,
    /// First sequence number (so a resumed campaign continues numbering).
    #[arg(long, default_value_t = 0)]
    pub seq_start: u64,
    /// Turn off instrumentation (CPU clocks, byte counting, chain capture): latency only.
    #[arg(long)]
    pub no_instrument: bool,
    /// Run on these CPUs only (e.g. "1" or "0,2-3"); default: wherever the kernel puts it.
    #[arg(long)]
    pub cpus: Option<String>,
}

#[derive(Debug, Args)]
pub struct HandshakeArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// Number of measured handshakes.
    #[arg(long, conflicts_with = "duration_ms")]
    pub count: Option<u64>,
    /// Run measured handshakes for this long (ms) instead of a count.
    #[arg(long)]
    pub duration_ms: Option<u64>,
    /// Warm-up handshakes before the measured ones (recorded with "warmup": true).
    #[arg(long, default_value_t = 0)]
    pub warmup: u64,
}

/// How the intended start times of a load run are spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Arrivals {
    /// Exactly 1/rate apart.
    Constant,
    /// Exponential gaps of mean 1/rate (a Poisson process), from `--seed`.
    Poisson,
}

#[derive(Debug, Args)]
pub struct LoadArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// Offered load: connection attempts per second.
    #[arg(long)]
    pub rate: f64,
    /// How attempts are spaced in time.
    #[arg(long, value_enum, default_value = "constant")]
    pub arrivals: Arrivals,
    /// Length of the schedule (ms): attempts are scheduled in [0, duration).
    #[arg(long)]
    pub duration_ms: u64,
    /// Connections in flight at most; an attempt due when this many are open is recorded as
    /// failed with `generator_saturated`, never delayed or skipped.
    #[arg(long, default_value_t = 64)]
    pub max_in_flight: usize,
    /// Seed of the Poisson schedule.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Unscheduled warm-up handshakes, one at a time before the schedule starts (recorded
    /// with "warmup": true).
    #[arg(long, default_value_t = 0)]
    pub warmup: u64,
}

#[derive(Debug, Args)]
pub struct ReferenceArgs {
    /// Run on these CPUs only (e.g. the server's core).
    #[arg(long)]
    pub cpus: Option<String>,
    /// Rounds of the workload (each squeezes SHAKE-256 over 1 MiB); the default takes
    /// about 0.1 s on a current core.
    #[arg(long, default_value_t = 64)]
    pub rounds: u32,
}

/// A handshake's cryptographic operation (docs/methods.md, "Cost model").
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PrimitiveOp {
    /// Sign with a signature algorithm (the server's CertificateVerify).
    Sign,
    /// Verify a signature (CertificateVerify, or a certificate's signature by its issuer).
    Verify,
    /// Generate a key-exchange key (a key share).
    Keygen,
    /// KEM encapsulation to the peer's key share (the server's side).
    Encaps,
    /// KEM decapsulation of the server's ciphertext (the client's side).
    Decaps,
    /// Diffie-Hellman shared-secret derivation (both sides).
    Derive,
    /// Decompression of an RFC 8879 compressed Certificate message (the client's side).
    Decompress,
}

impl PrimitiveOp {
    pub fn name(self) -> &'static str {
        match self {
            PrimitiveOp::Sign => "sign",
            PrimitiveOp::Verify => "verify",
            PrimitiveOp::Keygen => "keygen",
            PrimitiveOp::Encaps => "encaps",
            PrimitiveOp::Decaps => "decaps",
            PrimitiveOp::Derive => "derive",
            PrimitiveOp::Decompress => "decompress",
        }
    }
}

/// What a signature operation signs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MessageKind {
    /// The TLS 1.3 CertificateVerify content (130 bytes), with the TLS signature scheme.
    Cv,
    /// A TBSCertificate-sized message (`--message-bytes`), with the certificate's scheme.
    Cert,
}

#[derive(Debug, Args)]
pub struct PrimitivesArgs {
    /// Signature algorithm (sign, verify), key-exchange group (keygen, encaps, decaps,
    /// derive) or certificate compression (decompress: zlib, brotli, zstd).
    #[arg(long)]
    pub subject: String,
    #[arg(long, value_enum)]
    pub op: PrimitiveOp,
    /// What sign and verify operate on.
    #[arg(long, value_enum, default_value = "cv")]
    pub message: MessageKind,
    /// Bytes of a `cert` message, or of certificates a `decompress` restores.
    #[arg(long, default_value_t = 2048)]
    pub message_bytes: usize,
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

#[derive(Debug, Args)]
pub struct InfoArgs {}
