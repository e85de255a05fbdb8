//! Failures every engine classifies alike: a failed TCP connect, a socket error during a
//! handshake (timeouts, the peer going away), and on the libssl stacks (OpenSSL's,
//! BoringSSL's) a fatal alert from the peer (`received_alert`, by `Side`). What a TLS
//! library reports about the peer otherwise is each engine's own (`chainlab-engine`'s
//! `tls::errors`, `chainlab-boring`'s and `chainlab-rustls`'s `errors`).

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

/// Which side of a libssl stack classifies a failure, and what it offered (a received
/// alert means different things depending on it).
#[derive(Debug, Clone, Copy)]
pub enum Side {
    Server {
        /// The server requires client certificates (`--client-ca`).
        client_auth: bool,
    },
    Client {
        /// Chain verification is on (`--no-verify` not given).
        verify: bool,
        /// `--sigalgs` restricted the offered signature schemes.
        sigalgs_restricted: bool,
    },
}

/// A fatal alert received from the peer, `name` as `alert_name` spells it.
///
/// A server that finds no common group, signature scheme or cipher suite answers the
/// ClientHello with handshake_failure; the wire does not say which. The engines' clients
/// always offer their library's full TLS 1.3 cipher-suite list, so with the library's
/// default signature schemes (no `--sigalgs`) a handshake_failure before ServerHello
/// (`handshake_failure_before_server_hello`) means no shared group. With `--sigalgs`
/// restricted the cause is ambiguous and is recorded as `tls_alert`; the server's record
/// of the same connection names the exact cause either way.
pub fn received_alert(
    name: &str,
    handshake_failure_before_server_hello: bool,
    side: Side,
) -> Failure {
    if let Side::Client {
        sigalgs_restricted, ..
    } = side
    {
        if handshake_failure_before_server_hello {
            if !sigalgs_restricted {
                return Failure::new(
                    ErrorCategory::NoSharedGroup,
                    format!("received alert {name} in reply to ClientHello"),
                );
            }
            return Failure::new(
                ErrorCategory::TlsAlert,
                format!(
                    "received alert {name} in reply to ClientHello (no shared group or \
                     signature scheme)"
                ),
            );
        }
    }
    Failure::new(ErrorCategory::TlsAlert, format!("received alert {name}"))
}

/// An alert's name as RFC 8446 spells it, with its code ("handshake_failure (40)"), from
/// the library's long description of it ("handshake failure").
pub fn alert_name(long_description: &str, alert: i32) -> String {
    let name = long_description.to_ascii_lowercase().replace(' ', "_");
    format!("{name} ({alert})")
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
        // A reset answering the connect is a refusal too: a listener that died between our
        // SYN and its accept (a killed server) resets the connection instead.
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionReset => {
            ErrorCategory::ConnectRefused
        }
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

/// A libssl error stack's failure, over the rust-openssl family's `ErrorStack` (openssl's
/// and boring's, one fork apart): the first entry of the SSL library (`$lib_ssl`) whose
/// reason code `$by_reason` classifies (`|code| -> Option<Failure>`), else the first SSL
/// entry as a TLS error, else the first entry of any library; `None` for an empty stack.
#[macro_export]
macro_rules! libssl_stack_failure {
    ($stack:expr, $lib_ssl:expr, |$code:ident| $by_reason:expr) => {{
        let stack = $stack;
        let ssl_errors: Vec<_> = stack
            .errors()
            .iter()
            .filter(|e| e.library_code() == $lib_ssl)
            .collect();
        ssl_errors
            .iter()
            .find_map(|e| {
                let $code = e.reason_code();
                $by_reason
            })
            .or_else(|| {
                ssl_errors.first().map(|e| {
                    $crate::failure::Failure::new(
                        $crate::record::ErrorCategory::TlsError,
                        e.reason().unwrap_or("unknown TLS error"),
                    )
                })
            })
            .or_else(|| {
                stack.errors().first().map(|e| {
                    $crate::failure::Failure::new(
                        $crate::record::ErrorCategory::TlsError,
                        e.to_string(),
                    )
                })
            })
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLIENT: Side = Side::Client {
        verify: true,
        sigalgs_restricted: false,
    };
    const RESTRICTED: Side = Side::Client {
        verify: true,
        sigalgs_restricted: true,
    };

    /// A handshake_failure in reply to the ClientHello is no shared group only where the
    /// client offered every scheme; anything else is an alert as such.
    #[test]
    fn a_received_alert_is_classified_by_side_and_moment() {
        let name = alert_name("handshake failure", 40);
        assert_eq!(name, "handshake_failure (40)");
        let got = received_alert(&name, true, CLIENT);
        assert_eq!(got.category, ErrorCategory::NoSharedGroup);
        assert_eq!(
            got.detail,
            "received alert handshake_failure (40) in reply to ClientHello"
        );
        assert_eq!(
            received_alert(&name, true, RESTRICTED).category,
            ErrorCategory::TlsAlert
        );
        assert_eq!(
            received_alert(&name, false, CLIENT).category,
            ErrorCategory::TlsAlert
        );
        let server = Side::Server { client_auth: false };
        let got = received_alert(&name, true, server);
        assert_eq!(got.category, ErrorCategory::TlsAlert);
        assert_eq!(got.detail, "received alert handshake_failure (40)");
    }

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
        let reset = io::Error::from(io::ErrorKind::ConnectionReset);
        assert_eq!(
            connect_failure(&reset).category,
            ErrorCategory::ConnectRefused
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
