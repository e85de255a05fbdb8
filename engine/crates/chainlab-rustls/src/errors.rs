//! Why a connection failed, in the categories the OpenSSL engine uses
//! (`chainlab_record::record::ErrorCategory`): from the socket error first (timeouts,
//! resets, EOF), then rustls' own error.

use std::io;

use chainlab_record::record::ErrorCategory;
use rustls::{AlertDescription, PeerIncompatible};

/// A classified failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub category: ErrorCategory,
    pub detail: String,
}

impl Failure {
    pub fn new(category: ErrorCategory, detail: impl Into<String>) -> Self {
        Self {
            category,
            detail: detail.into(),
        }
    }
}

/// A failed TCP connect.
pub fn connect_failure(err: &io::Error) -> Failure {
    let category = match err.kind() {
        io::ErrorKind::ConnectionRefused => ErrorCategory::ConnectRefused,
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => ErrorCategory::ConnectTimeout,
        _ => ErrorCategory::IoError,
    };
    Failure::new(category, format!("connect: {err}"))
}

/// A socket error during the handshake (rustls reports the peer's misbehaviour as its own
/// errors; the socket's errors arrive as `io::Error`).
pub fn io_failure(err: &io::Error) -> Failure {
    let category = match err.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => ErrorCategory::HandshakeTimeout,
        io::ErrorKind::UnexpectedEof
        | io::ErrorKind::ConnectionReset
        | io::ErrorKind::ConnectionAborted
        | io::ErrorKind::BrokenPipe => ErrorCategory::PeerClosed,
        _ => ErrorCategory::IoError,
    };
    Failure::new(category, format!("socket: {err}"))
}

/// Which side classifies, and what it knows (a received alert means different things).
#[derive(Debug, Clone, Copy)]
pub enum Side {
    Server,
    Client {
        /// `--sigalgs` restricted the offered schemes.
        sigalgs_restricted: bool,
        /// A ServerHello was processed (a group was negotiated).
        server_hello_seen: bool,
    },
}

/// A TLS error of rustls: what our side detected, or an alert the peer sent.
///
/// As in the OpenSSL engine: a server that finds no common group or scheme answers the
/// ClientHello with handshake_failure, and the wire does not say which; with every scheme
/// offered (no `--sigalgs`) that alert before a ServerHello means no shared group.
pub fn tls_failure(err: &rustls::Error, side: Side) -> Failure {
    use rustls::Error as E;
    let detail = err.to_string();
    let category = match (err, side) {
        (E::InvalidCertificate(_), Side::Client { .. }) => ErrorCategory::VerifyFailed,
        (E::PeerIncompatible(PeerIncompatible::NoKxGroupsInCommon), _) => {
            ErrorCategory::NoSharedGroup
        }
        (
            E::PeerIncompatible(
                PeerIncompatible::NoSignatureSchemesInCommon
                | PeerIncompatible::NoCertificateRequestSignatureSchemesInCommon,
            ),
            _,
        ) => ErrorCategory::NoSharedSigalg,
        (
            E::AlertReceived(AlertDescription::HandshakeFailure),
            Side::Client {
                sigalgs_restricted: false,
                server_hello_seen: false,
            },
        ) => ErrorCategory::NoSharedGroup,
        (E::AlertReceived(_), _) => ErrorCategory::TlsAlert,
        _ => ErrorCategory::TlsError,
    };
    Failure::new(category, detail)
}

/// Whether the peer is presumably still connected after such a failure (our side or the
/// peer rejected the handshake with an alert), as opposed to gone or stalled.
pub fn peer_still_connected(category: ErrorCategory) -> bool {
    matches!(
        category,
        ErrorCategory::VerifyFailed
            | ErrorCategory::NoSharedGroup
            | ErrorCategory::NoSharedSigalg
            | ErrorCategory::TlsAlert
            | ErrorCategory::TlsError
    )
}
