//! TLS 1.3 over the project's OpenSSL: the context setup shared by both sides (`context`),
//! the server (`server`, subcommand `serve`) and the measuring client (`client`, subcommand
//! `handshake`; `load` runs its slots), the byte-counting socket adapter (`counting`) and
//! failure classification (`errors`).
//!
//! The transport is chosen once on each side: `server` hands the context to `tcp::server`
//! or `quic::server`, and a client slot takes `tcp::client::attempt` or
//! `quic::client::attempt` when it is made. What both transports share sits beside them:
//! the slot and the record of an attempt (`attempt`), the ready line and stop signals of a
//! server (`serving`), QUIC's own helpers in `quic` itself. Imports point from `client` and
//! `server` down to the transports and from the transports to the shared modules, never
//! back.
//!
//! Both sides handle a connection start to finish on one thread, so that thread's CPU clock
//! is the connection's CPU, and both identify a connection the same way (`conn_id`), so the
//! Python store can pair a client record with the server record of the same connection.

pub mod anchors;
pub mod attempt;
pub mod certs;
pub mod chain;
pub mod client;
pub mod context;
pub mod counting;
pub mod datagrams;
pub mod errors;
pub mod load;
pub mod mtc;
pub mod quic;
pub mod served;
pub mod server;
pub mod serving;
pub mod tcp;

use std::sync::OnceLock;

use chainlab_record::counting::{conn_id_hex, CONN_ID_BYTES};
use chainlab_record::record::ServerRecorded;

use crate::ossl;
use foreign_types::ForeignTypeRef;
use openssl::ex_data::Index;
use openssl::ssl::{Ssl, SslRef};

/// First 8 bytes of the ClientHello random, hex: the same value on both sides of a
/// connection (and the value the rustls engine reads off the socket). `None` when no
/// ClientHello was produced or seen (the random is all zero).
pub fn conn_id(ssl: &SslRef) -> Option<String> {
    let mut random = [0u8; CONN_ID_BYTES];
    let n = ssl.client_random(&mut random);
    if n < CONN_ID_BYTES {
        return None;
    }
    conn_id_hex(&random)
}

/// Negotiated key-exchange group, by OpenSSL's TLS group name: the IANA "TLS Supported
/// Groups" spelling ("x25519", "secp256r1", "X25519MLKEM768", "MLKEM768"), which may differ
/// in case or alias from the `--groups` spelling ("X25519", "P-256").
pub fn group_name(ssl: &SslRef) -> Option<String> {
    // SSL_get0_group_name reads the session's group without a null check: a server that
    // failed before processing a ClientHello has no session yet.
    ssl.session()?;
    // SAFETY: valid SSL pointer with a session; the name points into the library's static
    // group table.
    unsafe { ossl::static_str(openssl_sys::SSL_get0_group_name(ssl.as_ptr())) }.map(str::to_owned)
}

/// Signature scheme of the CertificateVerify this side sent (server) or received (client),
/// by its TLS name (e.g. "mldsa65"). `None` on a resumed handshake (no CertificateVerify).
pub fn sigalg_name(ssl: &SslRef, peer: bool) -> Option<String> {
    let cmd = if peer {
        ossl::SSL_CTRL_GET_PEER_SIGNATURE_NAME
    } else {
        ossl::SSL_CTRL_GET_SIGNATURE_NAME
    };
    // SAFETY: valid SSL pointer; both controls write a static `const char *`.
    unsafe { ossl::ctrl_name(ssl.as_ptr(), cmd) }.map(str::to_owned)
}

/// What a capability records of a server's connection, set by the capability's own callback
/// while the handshake runs: kept on the connection's SSL object, created the first time one
/// asks. Both transports' servers start their record from it (`recorded`), so a capability
/// that records a field names neither of them. `None` only if libssl has no ex_data slot.
pub fn record_on(ssl: &mut SslRef) -> Option<&mut ServerRecorded> {
    let index = recorded_index()?;
    if ssl.ex_data(index).is_none() {
        ssl.set_ex_data(index, ServerRecorded::default());
    }
    ssl.ex_data_mut(index)
}

/// What the capabilities recorded of a server's connection (`record_on`); nothing where none
/// did.
pub fn recorded(ssl: &SslRef) -> ServerRecorded {
    recorded_index()
        .and_then(|index| ssl.ex_data(index))
        .cloned()
        .unwrap_or_default()
}

fn recorded_index() -> Option<Index<Ssl, ServerRecorded>> {
    static INDEX: OnceLock<Option<Index<Ssl, ServerRecorded>>> = OnceLock::new();
    *INDEX.get_or_init(|| Ssl::new_ex_index().ok())
}

pub use chainlab_record::{ns_between, unix_ns};

#[cfg(test)]
mod tests {
    use super::*;
    use openssl::ssl::{SslContext, SslMethod};

    /// A capability's callback records on the connection; the server's record starts from it.
    #[test]
    fn what_a_capability_records_on_a_connection_is_its_servers_record() -> anyhow::Result<()> {
        let ctx = SslContext::builder(SslMethod::tls())?.build();
        let mut ssl = Ssl::new(&ctx)?;
        assert!(recorded(&ssl).chain_index.is_none());
        record_on(&mut ssl)
            .ok_or_else(|| anyhow::anyhow!("no ex_data slot"))?
            .chain_index = Some(Some(1));
        let again = record_on(&mut ssl).ok_or_else(|| anyhow::anyhow!("no ex_data slot"))?;
        assert_eq!(again.chain_index, Some(Some(1)), "created once, then kept");
        assert_eq!(recorded(&ssl).chain_index, Some(Some(1)));
        Ok(())
    }
}
