//! Command-line interface of the engine. Parsing only: each subcommand's module validates
//! the values (algorithm names, files, ports) and reports a one-line error naming the bad
//! value and the allowed ones.

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
    /// Also issue Merkle Tree Certificates (draft-ietf-plants-merkle-tree-certs-07) for the
    /// leaf's key, in a batch of this many log entries (2 to 2^26), into `<out>/mtc/`: a
    /// standalone and a landmark-relative certificate, the relying party's trust file and
    /// the landmark list (docs/pki.md).
    #[arg(long)]
    pub mtc_batch: Option<u64>,
    /// Landmark intervals the subscriber renewed in (1 to 16): one landmark-relative MTC per
    /// landmark, `mtc/landmark-<n>.pem`, each interval a batch of `--mtc-batch` entries; the
    /// standalone MTC is the newest interval's. A server holding them serves clients whose
    /// landmarks lag by up to this many intervals less one (docs/methods/mtc.md).
    #[arg(long, default_value_t = 1)]
    pub mtc_renewals: u64,
    /// The MTC CA cosigner's algorithm (any `--chain` algorithm).
    #[arg(long, default_value = "ML-DSA-44")]
    pub mtc_ca: String,
    /// Further cosigners of the standalone certificate, comma-separated algorithms (none by
    /// default).
    #[arg(long, value_delimiter = ',')]
    pub mtc_cosigners: Vec<String>,
    /// The MTCs' validity, FROM,TO as YYYYMMDDHHMMSSZ, instead of the leaf's.
    #[arg(long, value_delimiter = ',')]
    pub mtc_validity: Vec<String>,
    /// How the MTCs name their algorithm and CA: `plants-07` (the IANA OIDs of -07, which
    /// BoringSSL verifies, with an MTC CA certificate `mtc/ca-cert.pem`) or `experimental`
    /// (the early experiments' OIDs chainlab wrote before; no CA certificate).
    #[arg(long, default_value = "plants-07", value_parser = mtc_encoding)]
    pub mtc_encoding: chainlab_mtc::Encoding,
}

/// `--mtc-encoding`'s values.
fn mtc_encoding(name: &str) -> Result<chainlab_mtc::Encoding, String> {
    chainlab_mtc::Encoding::parse(name).ok_or_else(|| {
        let allowed: Vec<&str> = chainlab_mtc::Encoding::ALL
            .iter()
            .map(|e| e.name())
            .collect();
        format!("allowed: {}", allowed.join(", "))
    })
}

/// Which side of a TLS connection a hierarchy's leaf authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Purpose {
    Server,
    Client,
}

// `serve`, `handshake` and `load` take the same flags on every engine (chainlab-record's
// `args`).
pub use chainlab_record::args::{
    Arrivals, ChainPolicy, ClientArgs, Compression, HandshakeArgs, LoadArgs, ServeArgs,
    ServerModel, TlsArgs,
};
pub use chainlab_record::record::Transport;

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

/// A handshake's cryptographic operation (docs/methods/cost-model.md#cost-model).
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
    /// The client's acceptance of a landmark-relative Merkle Tree Certificate whose key is
    /// `--subject`'s, with an inclusion proof of `--message-bytes` hashes (not bytes).
    MtcVerify,
    /// A composite ML-DSA signature's message representative M' (its pre-hash `--subject`
    /// SHA256 or SHA512 of the `--message`, and the concatenation): what a composite sign or
    /// verify adds to its two components (`chainlab_composite::message`, every stack's).
    Prehash,
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
            PrimitiveOp::MtcVerify => "mtc-verify",
            PrimitiveOp::Prehash => "prehash",
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
