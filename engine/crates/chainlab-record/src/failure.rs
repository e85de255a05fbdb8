//! Failures both engines classify alike: a failed TCP connect, and a socket error during a
//! handshake (timeouts, the peer going away). What a TLS library reports about the peer is
//! each engine's own (`chainlab-engine`'s `tls::errors`, `chainlab-rustls`'s `errors`).

use std::io;

use crate::record::ErrorCategory;

/// A classified failure: its stable category and a human-readable detail.
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

/// Whether the peer is presumably still connected after a failure of this category (our
/// side or the peer rejected the handshake with an alert), as opposed to gone or stalled.
pub fn peer_still_connected(category: ErrorCategory) -> bool {
    matches!(
        category,
        ErrorCategory::VerifyFailed
            | ErrorCategory::ClientCertRejected
            | ErrorCategory::NoSharedGroup
            | ErrorCategory::NoSharedSigalg
            | ErrorCategory::TlsAlert
            | ErrorCategory::TlsError
    )
}

/// Classifies a failed TCP connect.
pub fn connect_failure(err: &io::Error) -> Failure {
    let category = match err.kind() {
        io::ErrorKind::ConnectionRefused => ErrorCategory::ConnectRefused,
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => ErrorCategory::ConnectTimeout,
        _ => ErrorCategory::IoError,
    };
    Failure::new(category, format!("connect: {err}"))
}

/// A socket error during a handshake: a read/write timeout (`SO_RCVTIMEO`/`SO_SNDTIMEO`
/// expire as `EAGAIN`), the peer going away, or anything else (`detail` then says what).
pub fn socket_failure(kind: io::ErrorKind, detail: &str) -> Failure {
    match kind {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Failure::new(
            ErrorCategory::HandshakeTimeout,
            "no data from the peer within the timeout",
        ),
        io::ErrorKind::ConnectionReset
        | io::ErrorKind::ConnectionAborted
        | io::ErrorKind::BrokenPipe
        | io::ErrorKind::UnexpectedEof => {
            Failure::new(ErrorCategory::PeerClosed, format!("peer closed: {kind}"))
        }
        _ => Failure::new(ErrorCategory::IoError, detail),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_errors_map_to_stable_categories() {
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(
            connect_failure(&refused).category,
            ErrorCategory::ConnectRefused
        );
        let timeout = io::Error::from(io::ErrorKind::TimedOut);
        assert_eq!(
            connect_failure(&timeout).category,
            ErrorCategory::ConnectTimeout
        );
        let other = io::Error::from(io::ErrorKind::PermissionDenied);
        assert_eq!(connect_failure(&other).category, ErrorCategory::IoError);
    }

    #[test]
    fn socket_errors_say_timeout_or_peer_gone() {
        let f = socket_failure(io::ErrorKind::WouldBlock, "x");
        assert_eq!(f.category, ErrorCategory::HandshakeTimeout);
        let f = socket_failure(io::ErrorKind::UnexpectedEof, "x");
        assert_eq!(f.category, ErrorCategory::PeerClosed);
        let f = socket_failure(io::ErrorKind::PermissionDenied, "read: denied");
        assert_eq!(
            (f.category, f.detail.as_str()),
            (ErrorCategory::IoError, "read: denied")
        );
    }
}
