//! Why a connection failed, as the stable `ErrorCategory` every engine uses plus a detail.
//!
//! Sources, in the order they are consulted: the chain verification result, the socket
//! error seen under BoringSSL (timeouts, resets), BoringSSL's error queue (reason codes of
//! our side and alerts received from the peer), and finally an EOF without an alert.

use std::io;

use boring::error::ErrorStack;
use boring::ssl::{ErrorCode, SslRef};
use boring_sys as ffi;
use chainlab_record::failure::socket_failure;
use chainlab_record::record::ErrorCategory;
use foreign_types::ForeignTypeRef;

pub use chainlab_record::failure::{peer_still_connected, Failure};

/// BoringSSL's library code of libssl in packed errors (ERR_LIB_SSL).
const LIB_SSL: libc::c_int = ffi::ERR_LIB_SSL.0 as libc::c_int;
/// Reason codes of received alerts are this offset plus the alert (SSL_AD_REASON_OFFSET).
const ALERT_OFFSET: libc::c_int = ffi::SSL_AD_REASON_OFFSET as libc::c_int;
/// The handshake_failure alert (RFC 8446).
const HANDSHAKE_FAILURE: libc::c_int = 40;

/// Which side is classifying, and what it offered (`chainlab_record::failure`).
pub use chainlab_record::failure::Side;

/// A client that sent a certificate and then, closing, read a fatal alert from the server:
/// the server rejected the certificate (TLS 1.3 lets it say so only after the client's
/// Finished).
pub fn client_cert_rejected(err: &boring::ssl::Error) -> Option<Failure> {
    let alert = err
        .ssl_error()?
        .errors()
        .iter()
        .filter(|e| e.library_code() == LIB_SSL)
        .map(|e| e.reason_code())
        .find(|&r| r >= ALERT_OFFSET)?;
    Some(Failure::new(
        ErrorCategory::ClientCertRejected,
        format!(
            "the server rejected the client certificate: received alert {}",
            alert_name(alert - ALERT_OFFSET)
        ),
    ))
}

/// Classifies a failed `SSL_connect` / `SSL_accept`. `socket_error` is the last error the
/// counting stream under BoringSSL saw.
pub fn handshake_failure(
    err: &boring::ssl::Error,
    ssl: &SslRef,
    socket_error: Option<io::ErrorKind>,
    side: Side,
) -> Failure {
    if let Some(failure) = verification_failure(ssl, err.ssl_error(), side) {
        return failure;
    }
    if let Some(kind) = err.io_error().map(io::Error::kind).or(socket_error) {
        return socket_failure(kind, &err.to_string());
    }
    if let Some(stack) = err.ssl_error() {
        let found = chainlab_record::libssl_stack_failure!(stack, LIB_SSL, |code| {
            reason_failure(code, ssl, side)
        });
        if let Some(failure) = found {
            return failure;
        }
    }
    if err.code() == ErrorCode::SYSCALL {
        return Failure::new(
            ErrorCategory::PeerClosed,
            "connection closed by the peer without an alert",
        );
    }
    Failure::new(ErrorCategory::TlsError, err.to_string())
}

/// The verification result of the peer's chain, where this side verifies one.
fn verification_failure(ssl: &SslRef, stack: Option<&ErrorStack>, side: Side) -> Option<Failure> {
    // BoringSSL reports X509_V_ERR_INVALID_CALL where no verification ran (no certificate
    // arrived yet); OpenSSL reports X509_V_OK there. Neither is a verdict on a chain.
    let result = ssl.verify_result().or_else(|e| match e.as_raw() {
        ffi::X509_V_ERR_INVALID_CALL => Ok(()),
        _ => Err(e),
    });
    match side {
        Side::Client { verify: true, .. } => result.err().map(|e| {
            Failure::new(
                ErrorCategory::VerifyFailed,
                format!("certificate verify failed: {}", e.error_string()),
            )
        }),
        Side::Server { client_auth: true } => {
            if let Err(e) = result {
                return Some(Failure::new(
                    ErrorCategory::ClientCertRejected,
                    format!("client certificate verify failed: {}", e.error_string()),
                ));
            }
            let missing = stack?.errors().iter().any(|e| {
                e.library_code() == LIB_SSL
                    && e.reason_code() == ffi::SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE
            });
            missing.then(|| {
                Failure::new(
                    ErrorCategory::ClientCertRejected,
                    "the client sent no certificate",
                )
            })
        }
        _ => None,
    }
}

/// Maps a libssl reason code; `None` when the code says nothing specific.
fn reason_failure(reason: libc::c_int, ssl: &SslRef, side: Side) -> Option<Failure> {
    if reason >= ALERT_OFFSET {
        return Some(alert_failure(reason - ALERT_OFFSET, ssl, side));
    }
    let category = match reason {
        ffi::SSL_R_NO_SHARED_GROUP | ffi::SSL_R_WRONG_CURVE | ffi::SSL_R_MISSING_KEY_SHARE => {
            ErrorCategory::NoSharedGroup
        }
        ffi::SSL_R_NO_COMMON_SIGNATURE_ALGORITHMS
        | ffi::SSL_R_WRONG_SIGNATURE_TYPE
        | ffi::SSL_R_UNKNOWN_CERTIFICATE_TYPE => ErrorCategory::NoSharedSigalg,
        ffi::SSL_R_CERTIFICATE_VERIFY_FAILED => ErrorCategory::VerifyFailed,
        _ => return None,
    };
    Some(Failure::new(category, reason_text(reason)))
}

/// A fatal alert received from the peer, classified as on the OpenSSL engine
/// (`chainlab_record::failure::received_alert`); before ServerHello no group is set.
fn alert_failure(alert: libc::c_int, ssl: &SslRef, side: Side) -> Failure {
    let name = alert_name(alert);
    // SAFETY: valid SSL pointer for the duration of the call.
    let before_server_hello = unsafe { ffi::SSL_get_group_id(ssl.as_ptr()) } == 0;
    chainlab_record::failure::received_alert(
        &name,
        alert == HANDSHAKE_FAILURE && before_server_hello,
        side,
    )
}

/// RFC 8446 style alert name ("handshake_failure") with its code.
fn alert_name(alert: libc::c_int) -> String {
    // SAFETY: returns a pointer into a static string table (or "unknown").
    let long = unsafe { std::ffi::CStr::from_ptr(ffi::SSL_alert_desc_string_long(alert)) };
    chainlab_record::failure::alert_name(&long.to_string_lossy(), alert)
}

/// BoringSSL's text for a libssl reason code.
fn reason_text(reason: libc::c_int) -> String {
    let packed = ((LIB_SSL as u32 & 0xff) << 24) | (reason as u32 & 0xfff);
    // SAFETY: returns a static string or null.
    let text = unsafe { ffi::ERR_reason_error_string(packed) };
    if text.is_null() {
        return format!("SSL reason {reason}");
    }
    // SAFETY: non-null, NUL-terminated, static.
    unsafe { std::ffi::CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_and_alert_texts_come_from_the_library() {
        assert_eq!(reason_text(ffi::SSL_R_NO_SHARED_GROUP), "NO_SHARED_GROUP");
        assert_eq!(alert_name(HANDSHAKE_FAILURE), "handshake_failure (40)");
    }
}
