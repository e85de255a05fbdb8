//! The trust_anchors extension (draft-ietf-tls-trust-anchor-ids-06) on OpenSSL, which has no
//! implementation of it: chainlab carries it with libssl's custom extension callbacks
//! (`SSL_CTX_add_custom_ext`) in the three messages the draft puts it in.
//!
//! - ClientHello: the client's requested list (`--trust-anchors`, or a retry's request).
//! - EncryptedExtensions: the server's available list, the trust anchor IDs of the MTCs it
//!   holds in the order it tries them, sent whenever the client sent the extension (as
//!   BoringSSL does; libssl calls a server's callback only then).
//! - The first CertificateEntry: an empty extension when the certificate sent is the one a
//!   requested ID asked for.
//!
//! The server (`--trust-anchor-ids`) picks its certificate by the requested list: the
//! extension is parsed with the ClientHello's other extensions, and the servername callback,
//! which libssl runs after all of them and before it chooses a certificate, switches the
//! connection to a context holding the landmark-relative MTC (its landmark's ID requested)
//! or else the standalone one (the CA's ID requested); any other client gets the `--chain`
//! certificate. What cannot be done with OpenSSL's callbacks: a pre-compressed Certificate
//! message (RFC 8879) is built once at start-up, so the CertificateEntry's signal cannot be
//! added per connection (compression is refused with `--trust-anchor-ids`); QUIC is refused
//! (a QUIC server's connection does not switch contexts, as for the SNI stand-in).

use std::sync::OnceLock;

use anyhow::{anyhow, bail};
use openssl::ex_data::Index;
use openssl::ssl::{ExtensionContext, Ssl, SslAlert, SslContext, SslContextBuilder, SslRef};

use chainlab_mtc::proof;
use chainlab_record::anchors::{self, EXTENSION_TYPE};
use chainlab_record::record::TrustAnchorsSeen;

use crate::cli::{ClientArgs, Compression, ServeArgs, Transport};

/// Where the extension travels, on both sides.
fn contexts() -> ExtensionContext {
    ExtensionContext::TLS_ONLY
        | ExtensionContext::TLS1_3_ONLY
        | ExtensionContext::CLIENT_HELLO
        | ExtensionContext::TLS1_3_ENCRYPTED_EXTENSIONS
        | ExtensionContext::TLS1_3_CERTIFICATE
}

/// One connection's extension, kept on its SSL object.
#[derive(Debug, Default)]
struct OnConnection {
    /// The requested list, wire format without its 16-bit length: what a client sends (None:
    /// no extension), what a server received.
    requested: Option<Vec<u8>>,
    /// How many IDs the client requested.
    count: u64,
    /// The certificate sent is the one a requested ID asked for (server: decided; client:
    /// the server said so).
    matched: bool,
    /// The server's available list, wire format without its length (client: as received).
    available: Vec<u8>,
}

fn index() -> anyhow::Result<Index<Ssl, OnConnection>> {
    static INDEX: OnceLock<Index<Ssl, OnConnection>> = OnceLock::new();
    if let Some(index) = INDEX.get() {
        return Ok(*index);
    }
    let index = Ssl::new_ex_index::<OnConnection>()?;
    Ok(*INDEX.get_or_init(|| index))
}

fn on_connection(ssl: &mut SslRef) -> Option<&mut OnConnection> {
    ssl.ex_data_mut(index().ok()?)
}

/// `list` with its 16-bit length (the extension's body).
fn with_length(list: &[u8]) -> Vec<u8> {
    let mut out = (list.len() as u16).to_be_bytes().to_vec();
    out.extend_from_slice(list);
    out
}

/// The list inside an extension's body, if it is one: a 16-bit length, then IDs each with
/// its 8-bit length.
fn list_of(body: &[u8]) -> Option<&[u8]> {
    let (len, list) = body.split_first_chunk::<2>()?;
    (usize::from(u16::from_be_bytes(*len)) == list.len() && proof::trust_anchor_ids(list).is_some())
        .then_some(list)
}

// ---- client ----

/// `--trust-anchors`: the client's side of the extension on its context. The list itself is
/// each connection's (`prepare`), so a retry can request another.
pub fn request(builder: &mut SslContextBuilder, args: &ClientArgs) -> anyhow::Result<()> {
    if args.trust_anchors.is_none() {
        return Ok(());
    }
    if args.tls.transport != Transport::Tcp {
        bail!(
            "--trust-anchors over QUIC: TCP only on the OpenSSL engine (its QUIC connections \
             do not carry chainlab's custom extension)"
        );
    }
    anchors::requested(args)?;
    index()?;
    builder.add_custom_ext(
        EXTENSION_TYPE,
        contexts(),
        |ssl: &mut SslRef, ctx: ExtensionContext, _| {
            if !ctx.contains(ExtensionContext::CLIENT_HELLO) {
                return Ok(None);
            }
            Ok(on_connection(ssl)
                .and_then(|c| c.requested.as_deref())
                .map(with_length))
        },
        |ssl: &mut SslRef, ctx: ExtensionContext, body: &[u8], cert| {
            let conn = on_connection(ssl).ok_or(SslAlert::INTERNAL_ERROR)?;
            if ctx.contains(ExtensionContext::TLS1_3_ENCRYPTED_EXTENSIONS) {
                // The available list may not be empty.
                let list = list_of(body)
                    .filter(|l| !l.is_empty())
                    .ok_or(SslAlert::DECODE_ERROR)?;
                conn.available = list.to_vec();
            } else if ctx.contains(ExtensionContext::TLS1_3_CERTIFICATE) {
                // Only in the end-entity's entry, and empty.
                if !body.is_empty() || cert.is_some_and(|(i, _)| i != 0) {
                    return Err(SslAlert::DECODE_ERROR);
                }
                conn.matched = true;
            }
            Ok(())
        },
    )?;
    Ok(())
}

/// What a client slot keeps of the extension across its connections.
#[derive(Debug, Default)]
pub struct ClientAnchors {
    /// `--trust-anchors`: the list (wire format) and its count; None: no extension.
    requested: Option<(Vec<u8>, u64)>,
    /// `--trust-anchor-retry`: the IDs the client trusts.
    trusted: Vec<String>,
    /// The server's available list as the last connection received it.
    available: Vec<u8>,
    /// The next connection's request instead of `requested` (a retry's).
    next: Option<(Vec<u8>, u64)>,
}

impl ClientAnchors {
    /// The slot's extension (both were checked when the context was built).
    pub fn new(args: &ClientArgs) -> ClientAnchors {
        ClientAnchors {
            requested: anchors::requested(args).ok().flatten(),
            trusted: if args.trust_anchor_retry {
                anchors::trusted_ids(args).unwrap_or_default()
            } else {
                Vec::new()
            },
            ..ClientAnchors::default()
        }
    }

    /// The next connection's request on its SSL object (none without `--trust-anchors`).
    pub fn prepare(&mut self, ssl: &mut SslRef) -> anyhow::Result<()> {
        self.available.clear();
        let Some((wire, count)) = self.next.take().or_else(|| self.requested.clone()) else {
            return Ok(());
        };
        let conn = OnConnection {
            requested: Some(wire),
            count,
            ..OnConnection::default()
        };
        ssl.set_ex_data(index()?, conn);
        Ok(())
    }

    /// What the connection on `ssl` saw of the extension, for its record (None: not sent).
    pub fn observe(&mut self, ssl: &SslRef) -> Option<TrustAnchorsSeen> {
        let conn = ssl.ex_data(index().ok()?)?;
        conn.requested.as_ref()?;
        self.available = conn.available.clone();
        Some(anchors::seen(conn.count, conn.matched, &conn.available))
    }

    /// After a failed verification: the retry's request (the trusted IDs of the server's
    /// available list), made the next connection's; false if there is none.
    pub fn ask_again(&mut self) -> bool {
        self.next = anchors::retry_request(&self.available, &self.trusted);
        self.next.is_some()
    }
}

// ---- server ----

/// `--trust-anchor-ids`: what the server's options allow, before any context is built.
pub fn check_server(args: &ServeArgs) -> anyhow::Result<()> {
    if !args.trust_anchor_ids {
        return Ok(());
    }
    anchors::check_server_chain(args.chain)?;
    if args.tls.transport != Transport::Tcp {
        bail!("--trust-anchor-ids: TCP only on the OpenSSL engine (a QUIC server does not switch certificates)");
    }
    if args.tls.cert_compression != Compression::None {
        bail!(
            "--trust-anchor-ids: without certificate compression only on the OpenSSL engine \
             (a pre-compressed Certificate message cannot carry the per-connection match)"
        );
    }
    if args.mtc_retry_standalone || args.second_pki.is_some() {
        bail!("--trust-anchor-ids: not with --mtc-retry-standalone or --second-pki");
    }
    Ok(())
}

/// The server's side of the extension on a context (the `--chain` one and each MTC's):
/// read the requested list, answer with `available` (wire format) and, in the end-entity's
/// CertificateEntry, with the match.
pub fn answer(builder: &mut SslContextBuilder, available: Vec<u8>) -> anyhow::Result<()> {
    index()?;
    let body = with_length(&available);
    builder.add_custom_ext(
        EXTENSION_TYPE,
        contexts(),
        move |ssl: &mut SslRef, ctx: ExtensionContext, cert| {
            if ctx.contains(ExtensionContext::TLS1_3_ENCRYPTED_EXTENSIONS) {
                return Ok(Some(body.clone()));
            }
            let end_entity = cert.is_some_and(|(i, _)| i == 0);
            let matched = on_connection(ssl).is_some_and(|c| c.matched);
            Ok(
                (ctx.contains(ExtensionContext::TLS1_3_CERTIFICATE) && end_entity && matched)
                    .then(Vec::new),
            )
        },
        |ssl: &mut SslRef, ctx: ExtensionContext, body: &[u8], _| {
            if !ctx.contains(ExtensionContext::CLIENT_HELLO) {
                return Ok(());
            }
            let list = list_of(body).ok_or(SslAlert::DECODE_ERROR)?.to_vec();
            let index = index().map_err(|_| SslAlert::INTERNAL_ERROR)?;
            ssl.set_ex_data(
                index,
                OnConnection {
                    count: proof::trust_anchor_ids(&list).map_or(0, |ids| ids.len() as u64),
                    requested: Some(list),
                    ..OnConnection::default()
                },
            );
            Ok(())
        },
    )?;
    Ok(())
}

/// Chooses the certificate by the requested list on the `--chain` context: the first of
/// `offered` (context, binary trust anchor ID) whose ID the client requested.
pub fn choose(builder: &mut SslContextBuilder, offered: Vec<(SslContext, Vec<u8>)>) {
    builder.set_servername_callback(move |ssl, _alert| {
        // The first offered MTC whose ID the client requested (read in place: this runs in
        // the server's handshake).
        let pick = on_connection(ssl)
            .and_then(|c| c.requested.as_deref())
            .and_then(|requested| {
                let ids = split(requested);
                offered
                    .iter()
                    .position(|(_, id)| ids.contains(&id.as_slice()))
            });
        if let Some((ctx, _)) = pick.map(|i| &offered[i]) {
            ssl.set_ssl_context(ctx)
                .map_err(|_| openssl::ssl::SniError::ALERT_FATAL)?;
            if let Some(conn) = on_connection(ssl) {
                conn.matched = true;
            }
        }
        Ok(())
    });
}

/// The IDs of a list in wire format (checked when it was parsed).
fn split(mut list: &[u8]) -> Vec<&[u8]> {
    let mut ids = Vec::new();
    while let Some((&n, rest)) = list.split_first() {
        let n = usize::from(n).min(rest.len());
        ids.push(&rest[..n]);
        list = &rest[n..];
    }
    ids
}

/// A `--trust-anchor-ids` server's IDs: its available list (wire format) and, in the order
/// it tries them, each MTC it offers with its binary trust anchor ID.
pub struct Offered {
    pub available: Vec<u8>,
    pub by_id: Vec<(anchors::Offer, Vec<u8>)>,
}

/// What `args`' hierarchy offers by ID (its `mtc/trust.json`).
pub fn offered(args: &ServeArgs) -> anyhow::Result<Offered> {
    let ids = anchors::server_ids(&args.pki)?;
    let names: Vec<String> = ids.iter().map(|o| o.id.clone()).collect();
    let available = proof::trust_anchor_list(&names)
        .map_err(|e| anyhow!("--trust-anchor-ids: the hierarchy's trust anchor IDs: {e}"))?;
    let by_id = ids
        .into_iter()
        .map(|offer| {
            let id = proof::binary_id(&offer.id)?;
            Ok((offer, id))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Offered { available, by_id })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_is_the_list_with_its_length() {
        let list = proof::trust_anchor_list(&["32473.1".into(), "32473.2.5".into()]).expect("ids");
        let body = with_length(&list);
        assert_eq!(list_of(&body), Some(list.as_slice()));
        assert_eq!(split(&list).len(), 2);
        assert_eq!(
            list_of(&with_length(&[])),
            Some(&[][..]),
            "an empty list is a list"
        );
        assert_eq!(list_of(&body[..body.len() - 1]), None, "short");
        assert_eq!(list_of(&[0, 2, 0, 1]), None, "an empty ID");
    }
}
