//! Why a connection failed, in the categories the OpenSSL engine uses
//! (`chainlab_record::record::ErrorCategory`): from the socket error first (timeouts,
//! resets, EOF), then rustls' own error.

use std::io;

use chainlab_record::record::ErrorCategory;
use rustls::{AlertDescription, PeerIncompatible};

pub use chainlab_record::failure::{peer_still_connected, Failure};

/// A socket error during the handshake (rustls reports the peer's misbehaviour as its own
/// errors; the socket's errors arrive as `io::Error`).
pub fn io_failure(err: &io::Error) -> Failure {
    chainlab_record::failure::socket_failure(err.kind(), &format!("socket: {err}"))
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

/// rustls' error when the certificate resolver returned none (server/hs.rs).
const NO_CHAIN_RESOLVED: &str = "no server certificate chain resolved";

/// A TLS error of rustls: what our side detected, or an alert the peer sent.
///
/// As in the OpenSSL engine: a server that finds no common group or scheme answers the
/// ClientHello with handshake_failure, and the wire does not say which; with every scheme
/// offered (no `--sigalgs`) that alert before a ServerHello means no shared group.
pub fn tls_failure(err: &rustls::Error, side: Side) -> Failure {
    use rustls::Error as E;
    let detail = match err {
        // A verifier's own failure (the MTC relying party's): its message, not rustls' Debug.
        E::InvalidCertificate(rustls::CertificateError::Other(other)) => {
            format!("certificate verify failed: {}", other.0)
        }
        _ => err.to_string(),
    };
    let category = match (err, side) {
        (E::InvalidCertificate(_), Side::Client { .. }) => ErrorCategory::VerifyFailed,
        // The resolver found no chain whose key signs a scheme the client offered (a
        // dual-chain server; rustls answers access_denied).
        (E::General(msg), Side::Server) if msg == NO_CHAIN_RESOLVED => {
            ErrorCategory::NoSharedSigalg
        }
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
