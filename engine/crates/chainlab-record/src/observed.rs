//! From what a side observed to its record: the one place a client or server record is
//! built, whatever the stack or transport. An engine fills a `ClientObserved` or
//! `ServerObserved` with what only its TLS library can say (conn_id, group, scheme, chain,
//! failure, byte counts); the spans and clocks come from the scaffold that ran the
//! connection. Adding a record field touches the record, its observation and these builders.
//! The peer's chain is put in a record's order here too (`peer_chain`), from each
//! certificate as its library reads it (`PeerCertificate`).

use crate::args::ServerModel;
use crate::counting::Counts;
use crate::cpu::ThreadCpu;
use crate::failure::Failure;
use crate::record::{
    ClientRecord, Datagrams, ErrorCategory, MtcChecked, ObservedCert, Outcome, ServerRecord,
    ServerRecorded, Transport, TrustAnchorsSeen, SCHEMA,
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
    /// What the server records for a capability: the dual chain sent, the client's chain, ...
    pub recorded: ServerRecorded,
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
            recorded: seen.recorded,
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

/// One certificate the peer sent, as the stack's library reads it: what a record's
/// `peer_chain` holds of it (names as the OpenSSL engine gives them, so records of every
/// stack compare).
pub trait PeerCertificate {
    fn der_bytes(&self) -> anyhow::Result<usize>;
    /// The subject's attributes, `short name=value`, in order.
    fn subject_entries(&self) -> anyhow::Result<Vec<(String, String)>>;
    /// The signature algorithm's long name ("ML-DSA-65", "ecdsa-with-SHA256").
    fn sig_alg(&self) -> String;
    /// The key's type in the vocabulary of `pki --chain` ("ML-DSA-65", "ECDSA-P256").
    fn key_alg(&self) -> anyhow::Result<String>;
}

/// The certificates the peer sent, leaf first, from the library's `leaf` and `chain`
/// (`None` when it sent none: a resumed handshake, or a server that asked for no client
/// certificate). On a server, libssl's peer chain leaves out the client's leaf (`leaf`
/// then comes first); a client's holds it.
pub fn peer_chain<C: PeerCertificate>(
    leaf: Option<C>,
    chain: Option<Vec<C>>,
    server_side: bool,
) -> anyhow::Result<Option<Vec<ObservedCert>>> {
    let Some(chain) = chain else {
        return Ok(None);
    };
    let mut observed = Vec::with_capacity(chain.len() + 1);
    if server_side {
        match leaf {
            Some(leaf) => observed.push(observed_cert(&leaf)?),
            None => return Ok(None),
        }
    }
    for cert in &chain {
        observed.push(observed_cert(cert)?);
    }
    Ok(Some(observed))
}

/// A libssl stack's `observed_chain(ssl, server_side)`, over the rust-openssl family's
/// types (openssl's and boring's, one fork apart): `$ssl` and `$x509` are the crate's
/// `SslRef` and `X509`, `|$data| $text` reads a subject entry's value as text (its API
/// differs), `$key_alg` names a certificate's key (`fn(&X509Ref) -> Result<String>`).
#[macro_export]
macro_rules! libssl_peer_chain {
    ($ssl:ty, $x509:ty, |$data:ident| $text:expr, $key_alg:path) => {
        /// The certificates the peer sent, leaf first; `None` when it sent none (a resumed
        /// handshake, or a server that asked for no client certificate).
        pub fn observed_chain(
            ssl: &$ssl,
            server_side: bool,
        ) -> anyhow::Result<Option<Vec<$crate::record::ObservedCert>>> {
            let chain = ssl
                .peer_cert_chain()
                .map(|chain| chain.iter().map(|c| PeerCert(c.to_owned())).collect());
            let leaf = ssl.peer_certificate().map(PeerCert);
            $crate::observed::peer_chain(leaf, chain, server_side)
        }

        /// A certificate the peer sent, as the library reads it.
        struct PeerCert($x509);

        impl $crate::observed::PeerCertificate for PeerCert {
            fn der_bytes(&self) -> anyhow::Result<usize> {
                Ok(self.0.to_der()?.len())
            }
            fn subject_entries(&self) -> anyhow::Result<Vec<(String, String)>> {
                self.0
                    .subject_name()
                    .entries()
                    .map(|e| {
                        let key = e.object().nid().short_name().unwrap_or("?");
                        let $data = e.data();
                        Ok((key.to_owned(), $text))
                    })
                    .collect()
            }
            fn sig_alg(&self) -> String {
                let nid = self.0.signature_algorithm().object().nid();
                nid.long_name().unwrap_or("unknown").to_owned()
            }
            fn key_alg(&self) -> anyhow::Result<String> {
                $key_alg(&self.0)
            }
        }
    };
}

fn observed_cert(cert: &impl PeerCertificate) -> anyhow::Result<ObservedCert> {
    let subject = cert
        .subject_entries()?
        .iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect::<Vec<_>>()
        .join(", ");
    Ok(ObservedCert {
        der_bytes: cert.der_bytes()?,
        subject,
        sig_alg: cert.sig_alg(),
        key_alg: cert.key_alg()?,
    })
}

#[cfg(test)]
mod peer_chain_tests {
    use super::*;

    struct Fake(&'static str);
    impl PeerCertificate for Fake {
        fn der_bytes(&self) -> anyhow::Result<usize> {
            Ok(self.0.len())
        }
        fn subject_entries(&self) -> anyhow::Result<Vec<(String, String)>> {
            Ok(vec![
                ("CN".into(), self.0.into()),
                ("O".into(), "chainlab".into()),
            ])
        }
        fn sig_alg(&self) -> String {
            "ML-DSA-65".into()
        }
        fn key_alg(&self) -> anyhow::Result<String> {
            Ok("ML-DSA-44".into())
        }
    }

    /// A client's chain is the library's as it stands; a server's puts the client's leaf
    /// first, and without it there is no chain; no chain at all is none.
    #[test]
    fn a_peer_chain_is_leaf_first_on_either_side() {
        let subjects = |c: Option<Vec<ObservedCert>>| {
            c.unwrap()
                .into_iter()
                .map(|o| o.subject)
                .collect::<Vec<_>>()
        };
        let client = peer_chain(None, Some(vec![Fake("leaf"), Fake("root")]), false).unwrap();
        assert_eq!(
            subjects(client),
            ["CN=leaf, O=chainlab", "CN=root, O=chainlab"]
        );
        let server = peer_chain(Some(Fake("leaf")), Some(vec![Fake("int")]), true).unwrap();
        assert_eq!(
            subjects(server),
            ["CN=leaf, O=chainlab", "CN=int, O=chainlab"]
        );
        assert!(peer_chain(None, Some(vec![Fake("int")]), true)
            .unwrap()
            .is_none());
        assert!(peer_chain::<Fake>(None, None, false).unwrap().is_none());
        let one = peer_chain(None, Some(vec![Fake("leaf")]), false)
            .unwrap()
            .unwrap();
        assert_eq!(
            (one[0].der_bytes, one[0].sig_alg.as_str()),
            (4, "ML-DSA-65")
        );
    }
}
