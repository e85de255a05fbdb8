//! Why a connection failed, as a stable `ErrorCategory` plus a human-readable detail.
//!
//! Sources, in the order they are consulted: the chain verification result (client), the
//! socket error seen under OpenSSL (timeouts, resets), the OpenSSL error queue (reason codes
//! of our side and alerts received from the peer), and finally an EOF without an alert.

use std::io;

use foreign_types::ForeignTypeRef;
use openssl::error::ErrorStack;
use openssl::ssl::{ErrorCode, SslRef};
use openssl::x509::X509VerifyResult;
use openssl_sys as sys;

use crate::ossl;
use crate::record::ErrorCategory;

use chainlab_record::failure::socket_failure;
pub use chainlab_record::failure::{connect_failure, peer_still_connected, Failure};

/// Which side is classifying, and what it offered (`chainlab_record::failure`).
pub use chainlab_record::failure::Side;

/// A client that sent a certificate and then, closing, read a fatal alert from the server:
/// the server rejected the certificate (TLS 1.3 lets it say so only after the client's
/// Finished). `None` for any other close failure (those leave the handshake's outcome as is).
pub fn client_cert_rejected(err: &openssl::ssl::Error) -> Option<Failure> {
    let stack = err.ssl_error()?;
    let alert = stack
        .errors()
        .iter()
        .filter(|e| e.library_code() == ossl::ERR_LIB_SSL)
        .map(|e| e.reason_code())
        .find(|&r| r >= sys::SSL_AD_REASON_OFFSET)?;
    Some(Failure::new(
        ErrorCategory::ClientCertRejected,
        format!(
            "the server rejected the client certificate: received alert {}",
            alert_name(alert - sys::SSL_AD_REASON_OFFSET)
        ),
    ))
}

/// Classifies a failed `SSL_connect` / `SSL_accept`. `socket_error` is the last error the
/// stream under OpenSSL saw, when it keeps track (the counting adapter does).
pub fn handshake_failure(
    err: &openssl::ssl::Error,
    ssl: &SslRef,
    socket_error: Option<io::ErrorKind>,
    side: Side,
) -> Failure {
    let socket_error = err.io_error().map(io::Error::kind).or(socket_error);
    classify(
        ssl,
        err.code(),
        socket_error,
        err.ssl_error(),
        side,
        &err.to_string(),
    )
}

/// How a QUIC connection ended, from `SSL_get_conn_close_info`.
#[derive(Debug, Clone)]
pub struct QuicClose {
    /// This side closed it (else the peer did).
    pub local: bool,
    /// `error_code` is a transport error code (else an application's).
    pub transport: bool,
    pub error_code: u64,
    pub reason: String,
}

/// The QUIC transport error codes that carry a TLS alert: CRYPTO_ERROR, 0x0100 + alert
/// (RFC 9001, Section 4.8).
const QUIC_CRYPTO_ERROR: std::ops::RangeInclusive<u64> = 0x0100..=0x01ff;

/// What a QUIC handshake's failure looked like, beside OpenSSL's error queue.
pub struct QuicFailure<'a> {
    pub code: ErrorCode,
    pub stack: Option<&'a ErrorStack>,
    /// The socket's last receive error (ICMP port unreachable: connection refused).
    pub socket_error: Option<io::ErrorKind>,
    pub close: Option<QuicClose>,
    /// The attempt's deadline passed with the handshake unfinished.
    pub timed_out: bool,
    /// Whether any datagram came back from the peer.
    pub heard_back: bool,
}

/// Classifies a failed QUIC handshake: the chain verification result, an ICMP refusal, the
/// deadline, a TLS alert carried in the peer's CONNECTION_CLOSE, then the error queue.
pub fn quic_failure(ssl: &SslRef, seen: QuicFailure<'_>, side: Side) -> Failure {
    if let Some(failure) = verification_failure(ssl, seen.stack, side) {
        return failure;
    }
    if seen.socket_error == Some(io::ErrorKind::ConnectionRefused) {
        return Failure::new(
            ErrorCategory::ConnectRefused,
            "ICMP port unreachable: nothing listening on that UDP port",
        );
    }
    if seen.timed_out {
        if !seen.heard_back {
            return Failure::new(
                ErrorCategory::ConnectTimeout,
                "no datagram from the server within the timeout",
            );
        }
        return Failure::new(
            ErrorCategory::HandshakeTimeout,
            "the handshake did not complete within the timeout",
        );
    }
    if let Some(close) = seen.close.as_ref().filter(|c| !c.local) {
        if close.transport && QUIC_CRYPTO_ERROR.contains(&close.error_code) {
            let alert = (close.error_code - QUIC_CRYPTO_ERROR.start()) as libc::c_int;
            return alert_failure(alert, ssl, side);
        }
        let kind = if close.transport {
            "transport"
        } else {
            "application"
        };
        return Failure::new(
            ErrorCategory::PeerClosed,
            format!(
                "the peer closed the connection: {kind} error 0x{:x} {:?}",
                close.error_code, close.reason
            ),
        );
    }
    let detail = match &seen.close {
        Some(c) => format!("closed: error 0x{:x} {:?}", c.error_code, c.reason),
        None => "QUIC handshake failed".to_owned(),
    };
    classify(ssl, seen.code, None, seen.stack, side, &detail)
}

/// A QUIC client whose handshake completed and whose connection the server then closed
/// (instead of confirming it with HANDSHAKE_DONE): with a client certificate sent, a TLS
/// alert here is the server rejecting it.
pub fn quic_closed_after_handshake(close: &QuicClose, client_cert: bool) -> Failure {
    if close.transport && QUIC_CRYPTO_ERROR.contains(&close.error_code) {
        let alert = alert_name((close.error_code - QUIC_CRYPTO_ERROR.start()) as libc::c_int);
        if client_cert {
            return Failure::new(
                ErrorCategory::ClientCertRejected,
                format!("the server rejected the client certificate: received alert {alert}"),
            );
        }
        return Failure::new(ErrorCategory::TlsAlert, format!("received alert {alert}"));
    }
    Failure::new(
        ErrorCategory::PeerClosed,
        format!(
            "the server closed the connection after the handshake: error 0x{:x} {:?}",
            close.error_code, close.reason
        ),
    )
}

/// The verification result of the peer's chain, where this side verifies one.
fn verification_failure(ssl: &SslRef, stack: Option<&ErrorStack>, side: Side) -> Option<Failure> {
    match side {
        Side::Client { verify: true, .. } => {
            if let Some(detail) = super::mtc::failure(ssl) {
                return Some(Failure::new(ErrorCategory::VerifyFailed, detail));
            }
            let result = ssl.verify_result();
            (result != X509VerifyResult::OK).then(|| {
                Failure::new(
                    ErrorCategory::VerifyFailed,
                    format!("certificate verify failed: {}", result.error_string()),
                )
            })
        }
        Side::Server { client_auth: true } => server_client_cert_failure(stack, ssl),
        _ => None,
    }
}

/// The classification shared by both transports, from the parts of a failure.
fn classify(
    ssl: &SslRef,
    code: ErrorCode,
    socket_error: Option<io::ErrorKind>,
    stack: Option<&ErrorStack>,
    side: Side,
    fallback: &str,
) -> Failure {
    if let Some(failure) = verification_failure(ssl, stack, side) {
        return failure;
    }
    if let Some(kind) = socket_error {
        return socket_failure(kind, fallback);
    }
    if let Some(stack) = stack {
        let found = chainlab_record::libssl_stack_failure!(stack, ossl::ERR_LIB_SSL, |code| {
            reason_failure(code, ssl, side)
        });
        if let Some(failure) = found {
            return failure;
        }
    }
    if code == ErrorCode::SYSCALL {
        return Failure::new(
            ErrorCategory::PeerClosed,
            "connection closed by the peer without an alert",
        );
    }
    Failure::new(ErrorCategory::TlsError, fallback)
}

/// A server requiring client certificates: the client's chain failed verification, or the
/// client sent none.
fn server_client_cert_failure(stack: Option<&ErrorStack>, ssl: &SslRef) -> Option<Failure> {
    let result = ssl.verify_result();
    if result != X509VerifyResult::OK {
        return Some(Failure::new(
            ErrorCategory::ClientCertRejected,
            format!(
                "client certificate verify failed: {}",
                result.error_string()
            ),
        ));
    }
    let missing = stack?.errors().iter().any(|e| {
        e.library_code() == ossl::ERR_LIB_SSL
            && e.reason_code() == ossl::SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE
    });
    missing.then(|| {
        Failure::new(
            ErrorCategory::ClientCertRejected,
            "the client sent no certificate",
        )
    })
}

/// Maps an SSL-library reason code; `None` when the code says nothing specific.
fn reason_failure(reason: libc::c_int, ssl: &SslRef, side: Side) -> Option<Failure> {
    if reason >= sys::SSL_AD_REASON_OFFSET {
        return Some(alert_failure(reason - sys::SSL_AD_REASON_OFFSET, ssl, side));
    }
    let text = || reason_text(reason);
    let category = match reason {
        ossl::SSL_R_NO_SUITABLE_KEY_SHARE
        | ossl::SSL_R_NO_SHARED_GROUPS
        | ossl::SSL_R_NO_SUITABLE_GROUPS
        | ossl::SSL_R_WRONG_CURVE => ErrorCategory::NoSharedGroup,
        ossl::SSL_R_NO_SHARED_SIGNATURE_ALGORITHMS
        | ossl::SSL_R_NO_SUITABLE_SIGNATURE_ALGORITHM
        | ossl::SSL_R_WRONG_SIGNATURE_TYPE
        | ossl::SSL_R_UNKNOWN_CERTIFICATE_TYPE
        | ossl::SSL_R_WRONG_CERTIFICATE_TYPE => ErrorCategory::NoSharedSigalg,
        ossl::SSL_R_CERTIFICATE_VERIFY_FAILED => ErrorCategory::VerifyFailed,
        ossl::SSL_R_UNEXPECTED_EOF_WHILE_READING => ErrorCategory::PeerClosed,
        _ => return None,
    };
    Some(Failure::new(category, text()))
}

/// A fatal alert received from the peer (`chainlab_record::failure::received_alert` says
/// what a handshake_failure before ServerHello means): the client is still writing its
/// ClientHello's state when the server's reply is an alert.
fn alert_failure(alert: libc::c_int, ssl: &SslRef, side: Side) -> Failure {
    let name = alert_name(alert);
    let before_server_hello =
        // SAFETY: valid SSL pointer for the duration of the call.
        unsafe { ossl::SSL_get_state(ssl.as_ptr()) } == ossl::TLS_ST_CW_CLNT_HELLO;
    chainlab_record::failure::received_alert(
        &name,
        alert == ossl::SSL_AD_HANDSHAKE_FAILURE && before_server_hello,
        side,
    )
}

/// RFC 8446 style alert name ("handshake_failure") with its code.
fn alert_name(alert: libc::c_int) -> String {
    // SAFETY: returns a pointer into a static string table (or "unknown").
    let long = unsafe { ossl::static_str(sys::SSL_alert_desc_string_long(alert)) };
    chainlab_record::failure::alert_name(long.unwrap_or("unknown"), alert)
}

/// OpenSSL's text for an SSL-library reason code.
fn reason_text(reason: libc::c_int) -> String {
    let packed = ((ossl::ERR_LIB_SSL as libc::c_ulong & 0xFF) << 23) | reason as libc::c_ulong;
    // SAFETY: returns a static string or null.
    unsafe { ossl::static_str(sys::ERR_reason_error_string(packed)) }
        .map(str::to_owned)
        .unwrap_or_else(|| format!("SSL reason {reason}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_and_alert_texts_come_from_the_library() {
        assert_eq!(
            reason_text(ossl::SSL_R_NO_SUITABLE_KEY_SHARE),
            "no suitable key share"
        );
        assert_eq!(
            alert_name(ossl::SSL_AD_HANDSHAKE_FAILURE),
            "handshake_failure (40)"
        );
    }
}
