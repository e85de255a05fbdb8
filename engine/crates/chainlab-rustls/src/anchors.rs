//! Trust anchors webpki cannot read: a root whose key is liboqs' and longer than the 65,535
//! bytes webpki reads in one DER element (UOV-Is: 412,160 bytes; UOV-Ip: 278,432). Such a
//! root's key never travels (a server sends the chain below it), which is where UOV's
//! ~100-byte signatures pay off, so the client checks that one link itself:
//!
//! 1. the certificate the root issued: the presented certificate whose issuer is the root's
//!    subject; its signature verified with liboqs under the root's key, on every handshake;
//!    it must be a CA (basicConstraints) valid at the handshake's time;
//! 2. the rest of the chain: webpki, with that certificate as its trust anchor (names, dates,
//!    key usage, the leaf's signatures and the server name, as for any chain).
//!
//! A verifier per issued certificate is built once and kept (its construction is set-up, not
//! per-handshake work); the liboqs check of step 1 runs each time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, bail};
use rustls::client::danger::{ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, Error, RootCertStore};
use x509_parser::prelude::{FromDer, X509Certificate};

/// A root webpki cannot read, as the client holds it.
#[derive(Debug)]
pub struct LargeRoot {
    subject: Vec<u8>,
    algorithm: &'static chainlab_oqs::OqsAlgorithm,
    public: Vec<u8>,
}

impl LargeRoot {
    /// The root of a trust file's certificate, if its key is one of liboqs' table.
    pub fn parse(der: &[u8]) -> anyhow::Result<LargeRoot> {
        let (_, cert) = X509Certificate::from_der(der)
            .map_err(|e| anyhow!("a trust anchor that does not parse: {e}"))?;
        let spki = cert.public_key();
        let oid = spki.algorithm.algorithm.to_id_string();
        let Some(algorithm) = chainlab_oqs::algorithms::by_oid(&oid) else {
            bail!(
                "a {}-byte trust anchor whose key ({oid}) is not liboqs'",
                der.len()
            );
        };
        Ok(LargeRoot {
            subject: cert.subject().as_raw().to_vec(),
            algorithm,
            public: spki.subject_public_key.data.to_vec(),
        })
    }
}

/// The large roots of a client and the verifiers of what they issued.
#[derive(Debug)]
pub struct LargeRoots {
    roots: Vec<LargeRoot>,
    provider: Arc<CryptoProvider>,
    below: Mutex<HashMap<Vec<u8>, Arc<WebPkiServerVerifier>>>,
}

impl LargeRoots {
    pub fn new(roots: Vec<LargeRoot>, provider: Arc<CryptoProvider>) -> Option<LargeRoots> {
        (!roots.is_empty()).then(|| LargeRoots {
            roots,
            provider,
            below: Mutex::new(HashMap::new()),
        })
    }

    /// Verifies a presented chain that one of the roots issued; `None` when no presented
    /// certificate names a large root as its issuer (the ordinary verifier decides).
    pub fn verify(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        now: UnixTime,
    ) -> Option<Result<ServerCertVerified, Error>> {
        let presented = std::iter::once(end_entity).chain(intermediates);
        for (index, cert) in presented.enumerate() {
            let Ok((_, issued)) = X509Certificate::from_der(cert) else {
                continue;
            };
            let Some(root) = self
                .roots
                .iter()
                .find(|r| r.subject == issued.issuer().as_raw())
            else {
                continue;
            };
            // Step 1 (the root's link, by liboqs), then step 2 (the chain below, by webpki,
            // the intermediates between the leaf and the issued certificate).
            let below = || -> Result<ServerCertVerified, Error> {
                if index == 0 {
                    // The leaf issued by the root: webpki would have to trust the leaf as
                    // its own anchor. chainlab puts an intermediate below a large root.
                    return Err(other(
                        "a large root must issue a CA certificate, not the leaf",
                    ));
                }
                check_link(root, &issued, now)?;
                let verifier = self
                    .verifier_below(cert)
                    .map_err(|e| Error::General(format!("{e:#}")))?;
                verifier.verify_server_cert(
                    end_entity,
                    &intermediates[..index - 1],
                    server_name,
                    &[],
                    now,
                )
            };
            return Some(below());
        }
        None
    }

    fn verifier_below(
        &self,
        issued: &CertificateDer<'_>,
    ) -> anyhow::Result<Arc<WebPkiServerVerifier>> {
        let mut cache = self.below.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(v) = cache.get(issued.as_ref()) {
            return Ok(v.clone());
        }
        let mut roots = RootCertStore::empty();
        roots
            .add(issued.clone().into_owned())
            .map_err(|e| anyhow!("the certificate a large root issued as an anchor: {e}"))?;
        let verifier =
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), self.provider.clone())
                .build()
                .map_err(|e| anyhow!("{e}"))?;
        cache.insert(issued.to_vec(), verifier.clone());
        Ok(verifier)
    }
}

/// The root's signature on the certificate it issued (liboqs, each handshake), and that
/// certificate a CA valid at `now`: what webpki would check of the link to its anchor.
fn check_link(root: &LargeRoot, issued: &X509Certificate<'_>, now: UnixTime) -> Result<(), Error> {
    let bad = |e: CertificateError| Err(Error::InvalidCertificate(e));
    let same_algorithm = issued.signature_algorithm.algorithm.to_id_string() == root.algorithm.oid;
    if !same_algorithm
        || !chainlab_oqs::keys::verify(
            root.algorithm,
            &root.public,
            issued.tbs_certificate.as_ref(),
            &issued.signature_value.data,
        )
    {
        return bad(CertificateError::BadSignature);
    }
    let seconds = now.as_secs() as i64;
    let validity = issued.validity();
    if seconds < validity.not_before.timestamp() {
        return bad(CertificateError::NotValidYet);
    }
    if seconds > validity.not_after.timestamp() {
        return bad(CertificateError::Expired);
    }
    match issued.basic_constraints() {
        Ok(Some(bc)) if bc.value.ca => Ok(()),
        _ => Err(other("a large root must issue a CA certificate")),
    }
}

fn other(text: &'static str) -> Error {
    Error::InvalidCertificate(CertificateError::Other(rustls::OtherError(Arc::new(
        std::io::Error::other(text),
    ))))
}
