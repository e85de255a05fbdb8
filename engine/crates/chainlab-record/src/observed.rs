//! From what a side observed to its record: the one place a client or server record is
//! built, whatever the stack or transport. An engine fills a `ClientObserved` or
//! `ServerObserved` with what only its TLS library can say (conn_id, group, scheme, chain,
//! failure, byte counts); the spans and clocks come from the scaffold that ran the
//! connection. Adding a record field touches the record, its observation and these builders.

use crate::args::ServerModel;
use crate::counting::Counts;
use crate::cpu::ThreadCpu;
use crate::failure::Failure;
use crate::record::{
    ClientRecord, Datagrams, ErrorCategory, MtcChecked, ObservedCert, Outcome, ServerRecord,
    Transport, TrustAnchorsSeen, SCHEMA,
};

/// What one client attempt observed, before it becomes a record.
#[derive(Debug, Default)]
pub struct ClientObserved {
    pub connect_ns: u64,
    pub handshake_ns: Option<u64>,
    pub cpu: Option<ThreadCpu>,
    pub handshake_counts: Option<Counts>,
    pub conn_counts: Option<Counts>,
    pub peer_close_notify: Option<bool>,
    pub conn_id: Option<String>,
    pub local_port: Option<u16>,
    pub group: Option<String>,
    pub sigalg: Option<String>,
    pub resumed: Option<bool>,
    pub resume_offered: Option<bool>,
    pub peer_chain: Option<Vec<ObservedCert>>,
    pub mtc: Option<MtcChecked>,
    pub trust_anchors: Option<TrustAnchorsSeen>,
    pub failure: Option<Failure>,
    /// QUIC: datagram counts.
    pub datagrams: Option<Datagrams>,
    /// The socket's account of a peer that answered with no TLS record (`Socket::
    /// reply_not_tls`): the failure's detail says so instead of the library's complaint.
    pub reply_not_tls: Option<String>,
}

/// Who wrote a client record: the stack and transport of the slot, and whether it measured
/// more than the latency.
#[derive(Debug, Clone, Copy)]
pub struct ClientIdentity {
    pub stack: &'static str,
    pub transport: Transport,
    /// Chain verification was on.
    pub verify: bool,
    /// Instrumented (not `--no-instrument`): without it only the latency (`total_ns`), the
    /// outcome and the failure are kept.
    pub instrument: bool,
}

impl ClientRecord {
    /// The record of one attempt that ran.
    pub fn observed(
        who: ClientIdentity,
        seq: u64,
        warmup: bool,
        start_unix_ns: u128,
        seen: ClientObserved,
    ) -> Self {
        let instrument = who.instrument;
        let total_ns = seen.connect_ns + seen.handshake_ns.unwrap_or(0);
        ClientRecord {
            schema: SCHEMA,
            side: "client",
            stack: who.stack,
            transport: who.transport,
            seq,
            warmup,
            conn_id: seen.conn_id,
            local_port: seen.local_port,
            start_unix_ns,
            connect_ns: instrument.then_some(seen.connect_ns),
            handshake_ns: seen.handshake_ns.filter(|_| instrument),
            total_ns: Some(total_ns),
            cpu_ns: seen.cpu.map(|c| c.total_ns),
            cpu_user_us: seen.cpu.map(|c| c.user_us),
            cpu_sys_us: seen.cpu.map(|c| c.sys_us),
            instructions: seen.cpu.and_then(|c| c.instructions),
            bytes_read: seen.handshake_counts.map(|c| c.read),
            bytes_written: seen.handshake_counts.map(|c| c.written),
            conn_bytes_read: seen.conn_counts.map(|c| c.read),
            conn_bytes_written: seen.conn_counts.map(|c| c.written),
            datagrams: seen.datagrams,
            peer_close_notify: seen.peer_close_notify,
            group: seen.group,
            sigalg: seen.sigalg,
            resumed: seen.resumed,
            resume_offered: seen.resume_offered,
            verify: who.verify,
            peer_chain: seen.peer_chain,
            mtc: seen.mtc,
            trust_anchors: seen.trust_anchors,
            first_conn_id: None,
            retry_first_detail: None,
            client_kind: None,
            outcome: outcome(&seen.failure),
            error_category: seen.failure.as_ref().map(|f| f.category),
            error_detail: seen.failure.map(|f| match seen.reply_not_tls {
                Some(said) => format!("{said}; the TLS library said: {}", f.detail),
                None => f.detail,
            }),
            intended_ns: None,
            sched_lag_ns: None,
            latency_ns: None,
        }
    }

    /// `load`: the record of an attempt that was due while every connection slot was open,
    /// and so never started.
    pub fn not_started(who: ClientIdentity, seq: u64, intended_ns: u64, slots: usize) -> Self {
        let failure = Failure::new(
            ErrorCategory::GeneratorSaturated,
            format!("due while all {slots} connection slots were open; not started"),
        );
        let mut record = ClientRecord::observed(
            who,
            seq,
            false,
            crate::unix_ns(),
            ClientObserved {
                failure: Some(failure),
                ..ClientObserved::default()
            },
        );
        record.connect_ns = None;
        record.total_ns = None;
        record.intended_ns = Some(intended_ns);
        record
    }
}

/// What one server connection observed through its TLS library, before it becomes a record.
#[derive(Debug, Default)]
pub struct ServerObserved {
    pub conn_id: Option<String>,
    /// Bytes at the socket when the handshake ended (`None`: it never did).
    pub handshake_counts: Option<Counts>,
    pub conn_counts: Counts,
    pub datagrams: Option<Datagrams>,
    pub peer_close_notify: Option<bool>,
    pub group: Option<String>,
    pub sigalg: Option<String>,
    pub resumed: Option<bool>,
    /// Mutual TLS: `Some(chain)` when the server asked for client certificates.
    pub peer_chain: Option<Option<Vec<ObservedCert>>>,
    /// Dual-chain serving: `Some(index)` of the chain sent (`Some(None)`: none was).
    pub chain_index: Option<Option<u8>>,
    pub failure: Option<Failure>,
}

/// What the serving scaffold measured of one connection: its place, spans and clocks.
#[derive(Debug, Clone, Copy)]
pub struct ServerSpans {
    pub seq: u64,
    pub peer_port: Option<u16>,
    pub accept_unix_ns: u128,
    /// accept() returning to the handshake's end (to the failure, for a failed one).
    pub handshake_ns: u64,
    /// The connection's CPU over the handshake span.
    pub cpu: ThreadCpu,
    /// accept() returning to the socket closed.
    pub conn_ns: u64,
    pub conn_cpu_ns: u64,
}

/// Who wrote a server record.
#[derive(Debug, Clone, Copy)]
pub struct ServerIdentity {
    pub stack: &'static str,
    pub transport: Transport,
    pub model: ServerModel,
}

impl ServerRecord {
    pub fn observed(who: ServerIdentity, spans: ServerSpans, seen: ServerObserved) -> Self {
        let counts = seen.handshake_counts.unwrap_or(seen.conn_counts);
        ServerRecord {
            schema: SCHEMA,
            side: "server",
            stack: who.stack,
            transport: who.transport,
            server_model: who.model,
            seq: spans.seq,
            conn_id: seen.conn_id,
            peer_port: spans.peer_port,
            accept_unix_ns: spans.accept_unix_ns,
            handshake_ns: Some(spans.handshake_ns),
            cpu_ns: Some(spans.cpu.total_ns),
            cpu_user_us: Some(spans.cpu.user_us),
            cpu_sys_us: Some(spans.cpu.sys_us),
            instructions: spans.cpu.instructions,
            conn_ns: Some(spans.conn_ns),
            conn_cpu_ns: Some(spans.conn_cpu_ns),
            bytes_read: Some(counts.read),
            bytes_written: Some(counts.written),
            conn_bytes_read: Some(seen.conn_counts.read),
            conn_bytes_written: Some(seen.conn_counts.written),
            datagrams: seen.datagrams,
            peer_close_notify: seen.peer_close_notify,
            group: seen.group,
            sigalg: seen.sigalg,
            resumed: seen.resumed,
            chain_index: seen.chain_index,
            peer_chain: seen.peer_chain,
            outcome: outcome(&seen.failure),
            error_category: seen.failure.as_ref().map(|f| f.category),
            error_detail: seen.failure.map(|f| f.detail),
        }
    }
}

fn outcome(failure: &Option<Failure>) -> Outcome {
    if failure.is_none() {
        Outcome::Ok
    } else {
        Outcome::Failed
    }
}
