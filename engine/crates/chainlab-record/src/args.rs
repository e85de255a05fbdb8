//! Command-line options every engine takes alike (`chainlab-engine` and `chainlab-rustls`):
//! `serve`'s, `handshake`'s and `load`'s flags, which certificates a server sends,
//! certificate compression and what the TLS 1.3 context offers. A campaign's command lines
//! run on either stack; what a stack cannot do is parsed here and refused by the stack with
//! a one-line error, never silently ignored.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

pub use crate::dual::ChainOrder;
pub use crate::record::{ServerModel, Transport};

/// Connections the kernel queues for accept() at most (capped by net.core.somaxconn, 4096
/// by default). The standard library listens with 128: under an open-loop offer past
/// capacity a burst overflows that, the kernel drops SYNs, and each dropped client waits a
/// 1 s retransmission holding a generator slot, while the server's core idles for want of
/// connections. A server's capacity must not hide behind its accept queue (nginx listens
/// with 511; the queue's overflows are counted per step either way). `--listen-backlog`'s
/// default.
pub const LISTEN_BACKLOG: u32 = 4096;

/// The SNI prefix of a `--mtc-retry` connection: neither stack implements the
/// trust_anchors extension, so the server name carries the retry's "send me the standalone
/// certificate" (the name the certificate is checked against stays `--servername`).
pub const MTC_RETRY_SNI_PREFIX: &str = "mtc-retry.";

#[derive(Debug, Clone, Args)]
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
    /// The file of `--chain` in the hierarchy when it is not the policy's own (an older
    /// landmark's MTC a `--trust-anchor-ids` server offers by ID); never a flag.
    #[arg(skip)]
    pub chain_file: Option<String>,
    #[command(flatten)]
    pub tls: TlsArgs,
    /// Session tickets issued per full handshake (0 disables resumption).
    #[arg(long, default_value_t = 0)]
    pub tickets: u32,
    /// Where records go ("-" for standard output). The ready line always goes to stdout.
    #[arg(long, default_value = "-")]
    pub records: String,
    /// How connections are run: a thread per connection, or event loops.
    #[arg(long, value_enum, default_value = "threads")]
    pub server_model: ServerModel,
    /// Threads serving connections. `threads`: connections handled concurrently (1 = one at
    /// a time, as the paper's s_server). `event`: event loops, one per server core.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// Give up on a connection whose peer stalls for this long (ms).
    #[arg(long, default_value_t = 10_000)]
    pub io_timeout_ms: u64,
    /// Stop after this many connections (default: run until SIGTERM/SIGINT).
    #[arg(long)]
    pub max_connections: Option<u64>,
    /// Connections the kernel queues for accept() at most (listen(2)'s backlog, capped by
    /// net.core.somaxconn). Past it the kernel drops SYNs and counts ListenOverflows.
    #[arg(long, default_value_t = LISTEN_BACKLOG)]
    pub listen_backlog: u32,
    /// Turn off per-connection instrumentation (CPU clocks and records; bytes are still
    /// counted, two additions per socket call): for measuring the instrumentation's own
    /// overhead only.
    #[arg(long)]
    pub no_instrument: bool,
    /// Run on these CPUs only (e.g. "0" or "0-3"); with `event`, each loop is pinned to one
    /// of them in turn. Default: wherever the kernel puts it.
    #[arg(long)]
    pub cpus: Option<String>,
    /// With `--chain mtc-landmark`: also hold the standalone certificate and send it to a
    /// ClientHello whose SNI starts with `MTC_RETRY_SNI_PREFIX` (a client's `--mtc-retry`).
    #[arg(long)]
    pub mtc_retry_standalone: bool,
    /// The trust_anchors extension (draft-ietf-tls-trust-anchor-ids-06) with the MTCs of
    /// `--pki`: the landmark-relative certificate is offered under its landmark's trust
    /// anchor ID and the standalone one under the CA's, each sent only to a client that
    /// requests that ID; the `--chain` certificate goes to every other client, with the
    /// available IDs in EncryptedExtensions for its retry.
    #[arg(long)]
    pub trust_anchor_ids: bool,
    /// Mutual TLS: request a client certificate, require one, and verify the client's chain
    /// against these trust anchors (a client hierarchy's `ca.pem`, from `pki --purpose
    /// client`). A missing or rejected client certificate fails the handshake with
    /// `client_cert_rejected`.
    #[arg(long)]
    pub client_ca: Option<PathBuf>,
    /// Dual-chain serving: a second hierarchy directory whose chain (the same `--chain`
    /// policy) and `leaf.key` the server also holds. Per connection the server sends the
    /// chain `--chain-order` picks; the record's `chain_index` says which (0: `--pki`, 1:
    /// this). The two leaves must differ in key type (libssl holds one certificate per key
    /// type).
    #[arg(long)]
    pub second_pki: Option<PathBuf>,
    /// Dual-chain serving: whose order picks the chain sent (`crate::dual`). `client`: the
    /// chain whose leaf signs the first of the client's signature schemes it can. `server`:
    /// the server's own order, the post-quantum chain first (a leaf that signs no ECDSA,
    /// RSA or EdDSA scheme), so a client offering a post-quantum scheme anywhere in its
    /// list gets the post-quantum chain.
    #[arg(long, value_enum, default_value_t = ChainOrder::Client)]
    pub chain_order: ChainOrder,
    /// Choose the key-exchange group by the server's `--groups` order, not the client's: a
    /// client that offers the server's first group gets it, at the cost of a
    /// HelloRetryRequest when its key share was for another (OpenSSL: each group its own
    /// preference tuple and SSL_OP_CIPHER_SERVER_PREFERENCE). Without it the server takes
    /// the first of the client's groups it supports, so a post-quantum group goes only to
    /// clients that offer it first. The rustls server always takes the client's order.
    #[arg(long)]
    pub prefer_server_groups: bool,
    /// Draw every random byte from a stream fixed by this seed and each connection's `seq`
    /// (`chainlab_record::random`): the same handshakes, to the instruction, in every run.
    /// For instruction counting only (predictable keys); one worker thread, TCP.
    #[arg(long)]
    pub random_seed: Option<u64>,
}

/// What a client connects to and how: shared by `handshake` and `load`.
#[derive(Debug, Clone, Args)]
pub struct ClientArgs {
    /// Server address: IP:PORT, [IPv6]:PORT, or HOST:PORT (a name is resolved once, at
    /// start, to its first address: every attempt then connects to that one).
    #[arg(long, value_parser = resolve_address)]
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
    /// Verify the server's certificate as a Merkle Tree Certificate against this relying
    /// party configuration (`<pki>/mtc/trust.json`), instead of an X.509 chain against `--ca`.
    #[arg(long)]
    pub mtc_trust: Option<PathBuf>,
    /// With `--mtc-trust`: the client holds the CA's landmark subtrees, so a landmark-relative
    /// certificate is accepted on its proof alone.
    #[arg(long)]
    pub mtc_landmarks: bool,
    /// With `--mtc-landmarks`: the client's landmarks lag this many landmark intervals
    /// behind the trust file's newest, as a client that has not updated them yet; it holds
    /// the subtrees of landmarks up to the newest less this (none when that is before the
    /// log's first).
    #[arg(long, default_value_t = 0)]
    pub mtc_landmark_lag: u64,
    /// With `--mtc-trust`: valid subtree signatures required from cosigners other than the
    /// CA (whose signature a standalone certificate always needs).
    #[arg(long, default_value_t = 0)]
    pub mtc_cosigners_required: usize,
    /// With `--mtc-trust`: the draft's trust-anchor retry. When the server's certificate
    /// fails the landmark check (a landmark-relative certificate the client cannot use), the
    /// client connects again at once asking for the standalone certificate (SNI
    /// `MTC_RETRY_SNI_PREFIX` + `--servername`, standing for a ClientHello whose
    /// trust_anchors now names the CA), and records both connections as one attempt.
    #[arg(long)]
    pub mtc_retry: bool,
    /// Send the trust_anchors extension (draft-ietf-tls-trust-anchor-ids-06) requesting
    /// these trust anchor IDs, comma-separated dotted relative OIDs (e.g. "32473.1"); an
    /// empty value sends the extension with an empty list (as Chrome 141 does). Without it
    /// no extension is sent.
    #[arg(long)]
    pub trust_anchors: Option<String>,
    /// With `--trust-anchors`: request this many more IDs, none of them the server's
    /// (`32473.99.<i>`), as a browser requesting the IDs of other CAs it trusts does.
    #[arg(long, default_value_t = 0)]
    pub trust_anchors_filler: u32,
    /// With `--trust-anchors` and `--mtc-trust`: request the client's own IDs first, as its
    /// trust file and landmarks make them (`anchors::own_ids`): its newest landmark's when
    /// it holds landmarks, then the CA's unless it retries (`--trust-anchor-retry`).
    #[arg(long)]
    pub trust_anchors_own: bool,
    /// With `--trust-anchors` and `--mtc-trust`: when the certificate fails verification,
    /// connect again at once requesting the IDs of the server's available list
    /// (EncryptedExtensions) that the client trusts (its CA's, and its landmark's with
    /// `--mtc-landmarks`), and record both connections as one attempt.
    #[arg(long)]
    pub trust_anchor_retry: bool,
    /// A browser's ClientHello (the BoringSSL engine; docs/stacks.md says what each profile
    /// sets and its sources): `chrome` offers Chrome's groups, signature schemes (ML-DSA
    /// first), versions and cipher suites, ALPN, OCSP and SCT requests, brotli certificate
    /// compression, GREASE, a GREASE ECH extension and a permuted extension order.
    #[arg(long, value_enum, default_value = "none")]
    pub client_profile: ClientProfile,
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
    #[arg(long)]
    pub resume_ratio: Option<f64>,
    /// Seed of the `--resume-ratio` draws (the same seed repeats the same mix).
    #[arg(long, default_value_t = 1)]
    pub resume_seed: u64,
    /// A mixed client population (`drive::population`): kinds, each
    /// `name=share/groups/sigalgs` (groups and signature schemes offered, colon-separated as
    /// `--groups` and `--sigalgs`), comma-separated, shares summing to 1; each attempt draws
    /// its kind from `--population-seed` and its record names it (`client_kind`).
    #[arg(long)]
    pub population: Option<String>,
    /// Seed of the `--population` draws (the same seed draws the same kinds).
    #[arg(long, default_value_t = 1)]
    pub population_seed: u64,
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
    #[arg(long)]
    pub count: Option<u64>,
    /// Run measured handshakes for this long (ms) instead of a count.
    #[arg(long)]
    pub duration_ms: Option<u64>,
    /// Warm-up handshakes before the measured ones (recorded with "warmup": true).
    #[arg(long, default_value_t = 0)]
    pub warmup: u64,
    /// Draw every random byte from a stream fixed by this seed and each attempt's `seq`
    /// (`chainlab_record::random`), as `serve --random-seed` does. Instruction counting only.
    #[arg(long)]
    pub random_seed: Option<u64>,
    /// Read each connection's close (the server's session tickets and close_notify) after
    /// the next attempt's timed span instead of before it: our close_notify and FIN still go
    /// at once, so the server sees nothing new, and the record is written once the close is
    /// read. On a path with delay it saves each attempt the round trip the close waits for.
    /// Not with resumption, a client certificate or QUIC.
    #[arg(long)]
    pub defer_close: bool,
}

/// How the intended start times of a load run are spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Arrivals {
    /// Exactly 1/rate apart.
    Constant,
    /// Exponential gaps of mean 1/rate (a Poisson process), from `--seed`.
    Poisson,
}

impl Arrivals {
    pub fn name(self) -> &'static str {
        match self {
            Arrivals::Constant => "constant",
            Arrivals::Poisson => "poisson",
        }
    }
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

impl ServeArgs {
    /// The file in `--pki` of the certificates the server sends.
    pub fn served_file(&self) -> String {
        self.chain_file
            .clone()
            .unwrap_or_else(|| self.chain.file_name().to_owned())
    }
}

/// Which certificates the server sends in its Certificate message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
pub enum ChainPolicy {
    /// The leaf only.
    #[value(name = "leaf")]
    #[serde(rename = "leaf")]
    Leaf,
    /// The leaf and every intermediate (what RFC 8446 asks of a server).
    #[value(name = "leaf+intermediates")]
    #[serde(rename = "leaf+intermediates")]
    LeafIntermediates,
    /// The leaf, every intermediate and the root.
    #[value(name = "full")]
    #[serde(rename = "full")]
    Full,
    /// A standalone Merkle Tree Certificate for the leaf's key (`pki --mtc-batch`): the
    /// inclusion proof and the cosigners' subtree signatures, the only certificate sent.
    #[value(name = "mtc-standalone")]
    #[serde(rename = "mtc-standalone")]
    MtcStandalone,
    /// A landmark-relative Merkle Tree Certificate for the leaf's key: the inclusion proof
    /// alone (the client must hold the landmark), the only certificate sent.
    #[value(name = "mtc-landmark")]
    #[serde(rename = "mtc-landmark")]
    MtcLandmark,
}

impl ChainPolicy {
    /// File name of this policy's chain file in a hierarchy directory.
    pub fn file_name(self) -> &'static str {
        match self {
            ChainPolicy::Leaf => "chain-leaf.pem",
            ChainPolicy::LeafIntermediates => "chain-leaf+intermediates.pem",
            ChainPolicy::Full => "chain-full.pem",
            ChainPolicy::MtcStandalone => "mtc/standalone.pem",
            ChainPolicy::MtcLandmark => "mtc/landmark.pem",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ChainPolicy::Leaf => "leaf",
            ChainPolicy::LeafIntermediates => "leaf+intermediates",
            ChainPolicy::Full => "full",
            ChainPolicy::MtcStandalone => "mtc-standalone",
            ChainPolicy::MtcLandmark => "mtc-landmark",
        }
    }

    /// A Merkle Tree Certificate rather than an X.509 chain.
    pub fn is_mtc(self) -> bool {
        matches!(self, ChainPolicy::MtcStandalone | ChainPolicy::MtcLandmark)
    }
}

/// `--client-profile`: whose ClientHello the client sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClientProfile {
    /// The engine's own: exactly what `--groups`, `--sigalgs` and the other options say.
    None,
    /// Chrome's (desktop, version 150 and later).
    Chrome,
}

/// RFC 8879 certificate compression algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    None,
    Zlib,
    Brotli,
    Zstd,
}

/// Options shared by server and client: what the TLS 1.3 context offers.
#[derive(Debug, Clone, Args)]
pub struct TlsArgs {
    /// Transport: TLS over TCP, or QUIC v1 over UDP.
    #[arg(long, value_enum, default_value = "tcp")]
    pub transport: Transport,
    /// Key-exchange groups in preference order, colon-separated OpenSSL names
    /// (e.g. X25519MLKEM768, X25519, MLKEM768, P-256); each engine's `info` says which it has.
    #[arg(long, default_value = "X25519MLKEM768")]
    pub groups: String,
    /// Signature schemes, colon-separated TLS names (e.g. mldsa65:slhdsa_shake_128f);
    /// default: the stack's list (OpenSSL's includes the SLH-DSA schemes of this build).
    #[arg(long)]
    pub sigalgs: Option<String>,
    /// Certificate compression to offer (client) or use (server).
    #[arg(long, value_enum, default_value = "none")]
    pub cert_compression: Compression,
    /// Largest Certificate message accepted, in bytes (the OpenSSL engine). OpenSSL's default
    /// (100 KiB) rejects deep SLH-DSA chains with "excessive message size"; 1 MiB holds any
    /// depth-4 chain. The rustls engine takes it and keeps rustls' own fixed limit.
    #[arg(long, default_value_t = 1 << 20)]
    pub max_cert_list: u64,
    /// Whose code signs and verifies ML-DSA: the stack's own, or liboqs (the rustls
    /// engine; the OpenSSL engine refuses it). Falcon, MAYO, UOV and CROSS are liboqs' always.
    #[arg(long, value_enum, default_value = "stack")]
    pub signature_impl: SignatureImpl,
}

/// `--signature-impl`: which implementation of an algorithm both stacks have signs and
/// verifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SignatureImpl {
    /// The TLS stack's own (OpenSSL's, or aws-lc's under rustls).
    Stack,
    /// liboqs (`chainlab_oqs`).
    Liboqs,
}

/// `--connect`'s value: an address, or a host name and port resolved to its first address.
fn resolve_address(text: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    let Some((host, port)) = text.rsplit_once(':') else {
        return Err(format!(
            "{text:?} has no port; allowed: HOST:PORT, IP:PORT or [IPv6]:PORT"
        ));
    };
    if port.parse::<u16>().is_err() {
        return Err(format!("port {port:?} is not a number from 0 to 65535"));
    }
    use std::net::ToSocketAddrs;
    match text.to_socket_addrs() {
        Ok(mut addrs) => addrs
            .next()
            .ok_or_else(|| format!("{host} resolves to no address")),
        Err(e) => Err(format!("{host} does not resolve ({e})")),
    }
}
