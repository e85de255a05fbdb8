//! The engine's output: one JSON object per line. `docs/engine-records.md` documents every
//! field and its unit; bump `SCHEMA` on any incompatible change (the Python store checks it).
//!
//! Units: durations in nanoseconds (`*_ns`) from `CLOCK_MONOTONIC`; CPU in nanoseconds from
//! `CLOCK_THREAD_CPUTIME_ID` (`cpu_ns`) and microseconds from `getrusage(RUSAGE_THREAD)`
//! (`cpu_user_us`, `cpu_sys_us`); bytes as counted at the socket (TLS records, not TCP/IP
//! headers).

use std::io::Write;

use serde::Serialize;

/// What carries the TLS 1.3 handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// TLS over a TCP connection.
    Tcp,
    /// QUIC v1 (RFC 9000/9001) over UDP, through OpenSSL's own QUIC stack; one connection at a
    /// time on the server (`--workers 1`).
    Quic,
}

/// How `serve` runs its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerModel {
    /// Thread per connection: `--workers` threads each accept one connection and handle it
    /// start to finish on blocking sockets (the paper's s_server with `--workers 1`).
    Threads,
    /// Event-driven, as nginx: `--workers` threads (one per server core), each advancing
    /// every connection it accepted from one readiness loop over non-blocking sockets, so
    /// the CPU, not the number of threads, bounds how many handshakes run at once.
    Event,
}

impl ServerModel {
    pub fn name(self) -> &'static str {
        match self {
            ServerModel::Threads => "threads",
            ServerModel::Event => "event",
        }
    }
}

/// Schema identifier carried by every record.
pub const SCHEMA: &str = "chainlab.engine.record/1";

/// Why a handshake did not complete. Stable names: the store and reports key on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCategory {
    /// TCP connect refused (nothing listening, or the server died).
    ConnectRefused,
    /// TCP connect did not finish within the timeout.
    ConnectTimeout,
    /// The peer stopped answering mid-handshake (a hung server or client).
    HandshakeTimeout,
    /// The peer closed or reset the connection mid-handshake (e.g. a killed server).
    PeerClosed,
    /// Certificate chain verification failed (wrong root, bad name, expired, ...).
    VerifyFailed,
    /// Mutual TLS: the server refused the client's certificate (chain not verified against
    /// its `--client-ca`, or no certificate sent). Both sides record it.
    ClientCertRejected,
    /// No key-exchange group in common.
    NoSharedGroup,
    /// No signature scheme in common, or the certificate's type is not usable.
    NoSharedSigalg,
    /// The peer sent a fatal alert not covered above (alert name in `error_detail`).
    TlsAlert,
    /// A TLS protocol error on our side not covered above.
    TlsError,
    /// Any other socket error.
    IoError,
    /// `load`: the attempt was due while `--max-in-flight` connections were open, so it was
    /// never started (an overloaded server, or a generator that cannot keep up).
    GeneratorSaturated,
}

/// A certificate as observed in the chain the peer sent.
#[derive(Debug, Clone, Serialize)]
pub struct ObservedCert {
    pub der_bytes: usize,
    /// Subject name on one line, RDNs in order: "O=chainlab, CN=chainlab leaf (ML-DSA-65)".
    pub subject: String,
    /// Signature algorithm of this certificate (the issuer's key type), OpenSSL long name,
    /// e.g. "ML-DSA-65", "ecdsa-with-SHA256".
    pub sig_alg: String,
    /// Public key algorithm of this certificate in `pki --chain` names, e.g.
    /// "SLH-DSA-SHAKE-128f", "ECDSA-P256".
    pub key_alg: String,
}

/// One client-side handshake attempt. With `--no-instrument` only `total_ns`, the outcome
/// and the failure fields are measured; the other optional fields are null.
#[derive(Debug, Clone, Serialize)]
pub struct ClientRecord {
    pub schema: &'static str,
    pub side: &'static str, // "client"
    /// The TLS implementation that ran this side: "openssl-3.5", "openssl-4.0", "rustls".
    pub stack: &'static str,
    /// "tcp" or "quic". With QUIC, every `bytes_*` field counts UDP payload bytes.
    pub transport: Transport,
    pub seq: u64,
    pub warmup: bool,
    /// First 8 bytes of the ClientHello random, hex; the server records the same value.
    pub conn_id: Option<String>,
    pub local_port: Option<u16>,
    /// Wall-clock start (Unix ns) for ordering and drift analysis only; never for durations.
    pub start_unix_ns: u128,
    /// TCP connect (to the failure, if it failed).
    pub connect_ns: Option<u64>,
    /// Connected to SSL_connect returning (to the failure, if it failed); null if the connect
    /// failed.
    pub handshake_ns: Option<u64>,
    /// connect_ns + handshake_ns: the latency a user waits for.
    pub total_ns: Option<u64>,
    /// Client thread CPU over the same span as `total_ns`.
    pub cpu_ns: Option<u64>,
    pub cpu_user_us: Option<u64>,
    pub cpu_sys_us: Option<u64>,
    /// User-mode instructions the thread retired over the same span (a hardware counter);
    /// absent where the host exposes none (`info`'s `hardware_counters` says why).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<u64>,
    /// Bytes at the socket up to the end of the handshake (client Finished sent).
    pub bytes_read: Option<u64>,
    pub bytes_written: Option<u64>,
    /// Bytes over the whole connection, through close_notify in both directions.
    pub conn_bytes_read: Option<u64>,
    pub conn_bytes_written: Option<u64>,
    /// QUIC only: datagrams each way over the handshake span and over the connection.
    #[serde(flatten)]
    pub datagrams: Option<Datagrams>,
    /// After a completed handshake: whether the peer's close_notify arrived (false: EOF,
    /// reset or timeout instead). `None` when the handshake failed or with --no-instrument.
    pub peer_close_notify: Option<bool>,
    /// Negotiated group, OpenSSL's TLS name ("X25519MLKEM768", "x25519", "secp256r1").
    pub group: Option<String>,
    /// Scheme of the server's CertificateVerify ("mldsa65"); null when resumed.
    pub sigalg: Option<String>,
    pub resumed: Option<bool>,
    /// With `--resume-ratio`: whether this attempt offered a ticket (the draw said so and a
    /// ticket was kept); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_offered: Option<bool>,
    /// Chain verification was on (false with `--no-verify`).
    pub verify: bool,
    /// Certificates the server sent, leaf first; null when resumed or failed.
    pub peer_chain: Option<Vec<ObservedCert>>,
    /// With `--mtc-trust`, after a verified Merkle Tree Certificate: what was checked.
    #[serde(flatten)]
    pub mtc: Option<MtcChecked>,
    /// With `--mtc-retry`, an attempt that needed the retry: the first connection's
    /// `conn_id` (its failure is in `retry_first_detail`); every other field is the two
    /// connections' together (see `drive::MtcRetry`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_conn_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_first_detail: Option<String>,
    /// With `--trust-anchors`: what the client requested and what the server answered.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub trust_anchors: Option<TrustAnchorsSeen>,
    /// With `--population`: the kind of client this attempt was (its share's name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_kind: Option<String>,
    pub outcome: Outcome,
    pub error_category: Option<ErrorCategory>,
    pub error_detail: Option<String>,
    /// `load` only: when the schedule meant this attempt to start, as an offset from the
    /// schedule's start (monotonic).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intended_ns: Option<u64>,
    /// `load` only: how late the attempt actually started (connect() called) after its
    /// intended start; null for an attempt that never started (`generator_saturated`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sched_lag_ns: Option<u64>,
    /// `load` only: intended start to the end of the handshake (to the failure, for a failed
    /// one) = sched_lag_ns + total_ns. The latency a user arriving on schedule waits for, so
    /// a stall cannot hide behind a generator that fell behind (coordinated omission).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ns: Option<u64>,
}

/// What a client's Merkle Tree Certificate verification checked.
#[derive(Debug, Clone, Serialize)]
pub struct MtcChecked {
    /// "standalone" (cosigner signatures checked) or "landmark" (proof to a held landmark).
    pub mtc_kind: &'static str,
    /// Hashes in the inclusion proof.
    pub mtc_proof_hashes: u64,
    /// Subtree signatures verified (0 for a landmark-relative certificate).
    pub mtc_signatures_checked: u64,
    /// The landmark a landmark-relative certificate was relative to (absent for a
    /// standalone one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtc_landmark: Option<u64>,
}

/// The trust_anchors extension on one connection (of the last one, after a retry).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct TrustAnchorsSeen {
    /// Trust anchor IDs the ClientHello requested (0: an empty list).
    pub trust_anchors_requested: u64,
    /// The server said its certificate matched one of them (an empty trust_anchors
    /// extension in its first CertificateEntry).
    pub trust_anchor_matched: bool,
    /// Trust anchor IDs in the server's available list (EncryptedExtensions; 0: none sent).
    pub trust_anchors_available: u64,
}

/// QUIC: datagrams as counted at the UDP socket.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Datagrams {
    /// Over the handshake span (the bytes fields' span).
    pub datagrams_read: u64,
    pub datagrams_written: u64,
    /// Over the whole connection, through the CONNECTION_CLOSE.
    pub conn_datagrams_read: u64,
    pub conn_datagrams_written: u64,
    /// Client only: datagrams it had sent when the last datagram of the server's flight
    /// arrived (1 when the flight fit in the anti-amplification budget its first Initial
    /// bought, more when the server had to wait for the client's acknowledgements).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flight_datagrams: Option<u64>,
}

/// One server-side connection.
#[derive(Debug, Clone, Serialize)]
pub struct ServerRecord {
    pub schema: &'static str,
    pub side: &'static str, // "server"
    /// The TLS implementation that ran this side: "openssl-3.5", "openssl-4.0", "rustls".
    pub stack: &'static str,
    /// "tcp" or "quic". With QUIC, every `bytes_*` field counts UDP payload bytes.
    pub transport: Transport,
    /// How the server ran its connections: "threads" (one thread per connection) or
    /// "event" (event loops, many connections per thread).
    pub server_model: ServerModel,
    pub seq: u64,
    pub conn_id: Option<String>,
    pub peer_port: Option<u16>,
    pub accept_unix_ns: u128,
    /// Wall time from accept() returning to SSL_accept() returning.
    pub handshake_ns: Option<u64>,
    /// Handling thread's CPU over the same span.
    pub cpu_ns: Option<u64>,
    pub cpu_user_us: Option<u64>,
    pub cpu_sys_us: Option<u64>,
    /// User-mode instructions the thread retired over the handshake span; absent where the
    /// host exposes no hardware counter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<u64>,
    /// Wall time of the whole connection: accept() returning to the socket closed (after
    /// the close_notify exchange).
    pub conn_ns: Option<u64>,
    /// Handling thread's CPU over the whole connection (`conn_ns`): what the connection
    /// costs the server, the handshake plus accept bookkeeping, shutdown and close.
    pub conn_cpu_ns: Option<u64>,
    /// Bytes at the socket up to the end of SSL_accept (includes NewSessionTickets if any).
    pub bytes_read: Option<u64>,
    pub bytes_written: Option<u64>,
    /// Bytes over the whole connection, through close_notify in both directions.
    pub conn_bytes_read: Option<u64>,
    pub conn_bytes_written: Option<u64>,
    /// QUIC only: datagrams each way over the handshake span and over the connection.
    #[serde(flatten)]
    pub datagrams: Option<Datagrams>,
    /// After a completed handshake: whether the client's close_notify arrived.
    pub peer_close_notify: Option<bool>,
    pub group: Option<String>,
    /// Scheme of the CertificateVerify the server sent; null when resumed.
    pub sigalg: Option<String>,
    pub resumed: Option<bool>,
    /// What the server records for a capability (each field absent without it).
    #[serde(flatten)]
    pub recorded: ServerRecorded,
    pub outcome: Outcome,
    pub error_category: Option<ErrorCategory>,
    pub error_detail: Option<String>,
}

/// What a server records of a connection for a capability some stacks or scenarios have,
/// each field absent without it. A new one is a field here and a setter, which the stacks
/// that record it call (`ServerRecorded::default().chain_index(..)`); the others write
/// nothing new.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ServerRecorded {
    /// With `--second-pki`: the chain the server sent, 0 (`--pki`'s) or 1 (`--second-pki`'s);
    /// null when none was sent (resumed, or failed before).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain_index: Option<Option<u8>>,
    /// Mutual TLS (`--client-ca`): the certificates the client sent, leaf first; absent
    /// without client authentication, null when none arrived (resumed, or failed before).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer_chain: Option<Option<Vec<ObservedCert>>>,
}

impl ServerRecorded {
    pub fn chain_index(mut self, index: Option<Option<u8>>) -> Self {
        self.chain_index = index;
        self
    }

    pub fn peer_chain(mut self, chain: Option<Option<Vec<ObservedCert>>>) -> Self {
        self.peer_chain = chain;
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Ok,
    Failed,
}

/// The load generator's account of itself, written once after the last attempt of a `load`
/// run (`side: "generator"`): enough to tell a run whose generator was the bottleneck.
#[derive(Debug, Clone, Serialize)]
pub struct GeneratorRecord {
    pub schema: &'static str,
    pub side: &'static str, // "generator"
    /// Offered rate (attempts per second) and arrival process, as asked.
    pub rate: f64,
    pub arrivals: &'static str,
    pub duration_ns: u64,
    pub max_in_flight: usize,
    /// CPUs the generator was pinned to (null: not pinned).
    pub cpus: Option<Vec<usize>>,
    /// Attempts scheduled; of them started, and recorded as generator_saturated.
    pub scheduled: u64,
    pub started: u64,
    pub saturated: u64,
    /// Wall time from the schedule's start to the last attempt's end.
    pub wall_ns: u64,
    /// The whole generator process's CPU (all threads) over `wall_ns`.
    pub process_cpu_ns: u64,
    /// The scheduling thread's CPU over `wall_ns`.
    pub scheduler_cpu_ns: u64,
    /// Largest scheduling lag of an attempt handed to a connection slot (dispatch lag: the
    /// scheduler's own lateness, before the slot's).
    pub max_dispatch_lag_ns: u64,
}

/// A serving thread's account of itself, written once as the server stops
/// (`side: "server_thread"`): what its CPU went to, so a reader can check that the
/// connections' records account for it (`conn_cpu_ns` of its connections sum to
/// `conn_cpu_ns` here) and see how much went to waiting for readiness.
#[derive(Debug, Clone, Serialize)]
pub struct ServerThreadRecord {
    pub schema: &'static str,
    pub side: &'static str, // "server_thread"
    pub stack: &'static str,
    pub server_model: ServerModel,
    /// The thread's index (0 .. --workers).
    pub thread: usize,
    /// The CPU it was pinned to (event loops with --cpus); null: not pinned on its own.
    pub cpu: Option<usize>,
    /// Connections it accepted and recorded.
    pub connections: u64,
    /// Wall time from the thread's start to its end.
    pub wall_ns: u64,
    /// The thread's CPU (CLOCK_THREAD_CPUTIME_ID) from its start to its end.
    pub cpu_ns: u64,
    /// Of it: the sum of its connections' steps (each connection's `conn_cpu_ns`).
    pub conn_cpu_ns: u64,
    /// Of it: in readiness waits (epoll) that returned nothing or, thread per connection,
    /// in accept's polls that timed out; it belongs to no connection.
    pub wait_cpu_ns: u64,
}

/// Line-oriented writer: one record, one line, flushed, so a crash loses at most the record
/// being written and a reader can follow the file live.
pub struct RecordWriter {
    out: Box<dyn Write + Send>,
}

impl RecordWriter {
    /// "-" is standard output; anything else is a file, created or truncated.
    pub fn open(target: &str) -> anyhow::Result<Self> {
        let out: Box<dyn Write + Send> = if target == "-" {
            Box::new(std::io::stdout())
        } else {
            let file = std::fs::File::create(target)
                .map_err(|e| anyhow::anyhow!("cannot create records file {target:?}: {e}"))?;
            Box::new(std::io::BufWriter::new(file))
        };
        Ok(Self { out })
    }

    pub fn write<T: Serialize>(&mut self, record: &T) -> anyhow::Result<()> {
        self.write_buffered(record)?;
        self.flush()
    }

    /// One record, one line, not yet flushed: a writer that has several at hand writes them
    /// all and then flushes once (`flush`).
    pub fn write_buffered<T: Serialize>(&mut self, record: &T) -> anyhow::Result<()> {
        serde_json::to_writer(&mut self.out, record)?;
        self.out.write_all(b"\n")?;
        Ok(())
    }

    pub fn flush(&mut self) -> anyhow::Result<()> {
        self.out.flush()?;
        Ok(())
    }
}
