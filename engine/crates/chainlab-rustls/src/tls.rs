//! The rustls configurations of both sides, over one crypto provider: rustls' aws-lc-rs
//! provider with rustls-post-quantum's ML-DSA signing and verification, restricted to the
//! `--groups` and `--sigalgs` asked for.
//!
//! rustls does not say which signature scheme a handshake used, so both sides observe it on
//! the way: the server's key is wrapped (`RecordingKey`, rustls' `SigningKey` trait over the
//! provider's aws-lc-rs key) and notes the scheme it chose; the client's verifier is wrapped
//! (`RecordingVerifier`) and notes the scheme of the CertificateVerify it checked. Both note it
//! in a thread-local: a connection runs start to finish on one thread.

use std::cell::Cell;
use std::fs;
use std::path::Path;
use std::sync::Arc;

use anyhow::{anyhow, Context};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{Resumption, WebPkiServerVerifier};
use rustls::compress::{
    CertCompressor, CertDecompressor, CompressionLevel, BROTLI_COMPRESSOR, BROTLI_DECOMPRESSOR,
    ZLIB_COMPRESSOR, ZLIB_DECOMPRESSOR,
};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::{CertifiedKey, Signer, SigningKey};
use rustls::{
    ClientConfig, DigitallySignedStruct, RootCertStore, ServerConfig, SignatureAlgorithm,
    SignatureScheme,
};

use crate::capabilities;
use chainlab_record::args::{ChainPolicy, ClientArgs};
use chainlab_record::args::{Compression, ServeArgs, TlsArgs};

thread_local! {
    /// The scheme of the last CertificateVerify this thread signed (server) or checked
    /// (client); taken, so a resumed handshake (no CertificateVerify) reads `None`.
    static SCHEME: Cell<Option<SignatureScheme>> = const { Cell::new(None) };
    /// Dual-chain serving: the chain the resolver last chose on this thread.
    static CHAIN: Cell<Option<u8>> = const { Cell::new(None) };
}

/// The chain noted since the last call, if any.
pub fn take_chain() -> Option<u8> {
    CHAIN.with(Cell::take)
}

/// The scheme noted since the last call, if any.
pub fn take_scheme() -> Option<SignatureScheme> {
    SCHEME.with(Cell::take)
}

fn note_scheme(scheme: SignatureScheme) {
    SCHEME.with(|s| s.set(Some(scheme)));
}

/// The provider both sides use: aws-lc-rs with ML-DSA, the `--groups` in order.
pub fn provider(tls: &TlsArgs) -> anyhow::Result<CryptoProvider> {
    // aws-lc seeds its random generator from CPU jitter entropy once per process, at its first
    // use (30-65 ms of CPU here: the first handshake of every client process and of the
    // server took 33-125 ms against 1 ms). Seeded here, while the context is built, no
    // handshake pays it.
    let mut seed = [0u8; 1];
    aws_lc_rs::rand::fill(&mut seed)
        .map_err(|_| anyhow::anyhow!("aws-lc's random generator failed"))?;
    let mut provider = rustls_post_quantum::provider();
    provider.kx_groups = capabilities::groups(&tls.groups)?;
    Ok(provider)
}

/// The verification algorithms: the provider's with liboqs' (`--signature-impl`), restricted
/// to `--sigalgs` when given.
fn verification_algorithms(
    provider: &CryptoProvider,
    tls: &TlsArgs,
) -> anyhow::Result<WebPkiSupportedAlgorithms> {
    let mut algs = crate::composite::with_composite(crate::liboqs::with_liboqs(
        provider.signature_verification_algorithms,
        tls.signature_impl,
    ));
    if let Some(list) = &tls.sigalgs {
        let wanted = capabilities::schemes(list)?;
        // In `--sigalgs` order: the client offers the schemes in the mapping's order, and a
        // server holding two chains sends the one its first offered scheme asks for.
        let mapping: Vec<_> = wanted
            .iter()
            .filter_map(|w| algs.mapping.iter().find(|(scheme, _)| scheme == w))
            .copied()
            .collect();
        // The table is 'static in rustls; a restricted one lives as long as the process.
        algs.mapping = Box::leak(mapping.into_boxed_slice());
    }
    Ok(algs)
}

/// What the server serves and how it signs.
pub struct ServerSetup {
    pub config: Arc<ServerConfig>,
    /// DER bytes of each certificate sent, leaf first (for the ready line).
    pub chain_der: Vec<usize>,
    /// Two chains (`--second-pki`): records say which was sent.
    pub dual: bool,
    /// Certificate compression as the ready line reports it.
    pub compression: CompressionSetup,
}

/// The server's certificate compression, in the OpenSSL engine's ready-line fields: the
/// Certificate message body's size and its compressed size, as rustls compresses it for
/// its cache (`CompressionLevel::Amortized`, what every handshake after the first sends).
#[derive(Debug, Clone, serde::Serialize)]
pub struct CompressionSetup {
    pub algorithm: &'static str,
    pub uncompressed_bytes: Option<usize>,
    pub compressed_bytes: Option<usize>,
    /// rustls sends the compressed form to every client that offers the algorithm.
    pub installed: bool,
}

/// The compressor and decompressor of `--cert-compression` (none: neither).
fn compression(
    c: Compression,
) -> Option<(
    &'static dyn CertCompressor,
    &'static dyn CertDecompressor,
    &'static str,
)> {
    match c {
        Compression::Zlib => Some((ZLIB_COMPRESSOR, ZLIB_DECOMPRESSOR, "zlib")),
        Compression::Brotli => Some((BROTLI_COMPRESSOR, BROTLI_DECOMPRESSOR, "brotli")),
        // zstd is refused by capabilities::check_tls before a configuration is built.
        Compression::None | Compression::Zstd => None,
    }
}

/// The TLS 1.3 Certificate message body of `chain` (RFC 8446 4.4.2: an empty request
/// context, then each certificate with no extensions): what RFC 8879 compresses.
fn certificate_message_body(chain: &[CertificateDer<'_>]) -> Vec<u8> {
    let u24 = |n: usize| [(n >> 16) as u8, (n >> 8) as u8, n as u8];
    let entries: usize = chain.iter().map(|c| 3 + c.len() + 2).sum();
    let mut body = Vec::with_capacity(4 + entries);
    body.push(0); // certificate_request_context: empty
    body.extend(u24(entries));
    for cert in chain {
        body.extend(u24(cert.len()));
        body.extend_from_slice(cert);
        body.extend([0, 0]); // extensions: none
    }
    body
}

pub fn server(args: &ServeArgs) -> anyhow::Result<ServerSetup> {
    let provider = Arc::new(provider(&args.tls)?);
    let chain_file = args.pki.join(args.chain.file_name());
    let chain = certificates(&chain_file)?;
    check_certificate_message(&chain, &chain_file)?;
    let key = signing_key(&provider, &args.pki.join("leaf.key"), &args.tls)?;
    let only: Option<Vec<SignatureScheme>> = args
        .tls
        .sigalgs
        .as_deref()
        .map(capabilities::schemes)
        .transpose()?;
    let chain_der = chain.iter().map(|c| c.len()).collect();
    let compressing = compression(args.tls.cert_compression);
    let compression_setup = match compressing {
        Some((compressor, _, name)) => {
            let body = certificate_message_body(&chain);
            let uncompressed = body.len();
            let compressed = compressor
                .compress(body, CompressionLevel::Amortized)
                .map_err(|_| anyhow!("--cert-compression {name}: compressing the chain failed"))?;
            CompressionSetup {
                algorithm: name,
                uncompressed_bytes: Some(uncompressed),
                compressed_bytes: Some(compressed.len()),
                installed: true,
            }
        }
        None => CompressionSetup {
            algorithm: "none",
            uncompressed_bytes: None,
            compressed_bytes: None,
            installed: false,
        },
    };
    // `--second-pki`: the second hierarchy's chain and key, and the schemes its leaf signs.
    let second = match &args.second_pki {
        Some(dir) => {
            let chain = certificates(&dir.join(args.chain.file_name()))?;
            let inner = signing_key(&provider, &dir.join("leaf.key"), &args.tls)?;
            let signer = RecordingKey {
                inner,
                only: only.clone(),
            };
            Some((
                Arc::new(CertifiedKey::new(chain, Arc::new(signer))),
                schemes_of(dir)?,
            ))
        }
        None => None,
    };
    let dual = second.is_some();
    // `--mtc-retry-standalone`: the standalone MTC for a retrying client (same key).
    let retry = if args.mtc_retry_standalone {
        let standalone = certificates(&args.pki.join(ChainPolicy::MtcStandalone.file_name()))?;
        let signer = RecordingKey {
            inner: key.clone(),
            only: only.clone(),
        };
        Some(Arc::new(CertifiedKey::new(standalone, Arc::new(signer))))
    } else {
        None
    };
    let certified = CertifiedKey::new(chain, Arc::new(RecordingKey { inner: key, only }));
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(Certs {
            first: (Arc::new(certified), schemes_of(&args.pki)?),
            second,
            order: args.chain_order,
            retry,
        }));
    config.cert_compressors = compressing.map(|(c, _, _)| c).into_iter().collect();
    config.cert_decompressors = Vec::new();
    config.send_tls13_tickets = args.tickets as usize;
    if args.tickets > 0 {
        // Stateless tickets (what OpenSSL issues by default), from the provider's ticketer.
        config.ticketer = rustls::crypto::aws_lc_rs::Ticketer::new()?;
    }
    Ok(ServerSetup {
        config: Arc::new(config),
        chain_der,
        dual,
        compression: compression_setup,
    })
}

/// The key of a PKCS#8 file: liboqs' for its algorithms (and ML-DSA with
/// `--signature-impl liboqs`), the aws-lc provider's otherwise.
fn signing_key(
    provider: &CryptoProvider,
    key_file: &Path,
    tls: &TlsArgs,
) -> anyhow::Result<Arc<dyn SigningKey>> {
    let der = PrivateKeyDer::from_pem_file(key_file)
        .map_err(|e| anyhow!("cannot read the private key {}: {e}", key_file.display()))?;
    if let Some(key) = crate::liboqs::signing_key(&der, tls.signature_impl)
        .with_context(|| key_file.display().to_string())?
    {
        return Ok(key);
    }
    if let Some(key) =
        crate::composite::signing_key(&der).with_context(|| key_file.display().to_string())?
    {
        return Ok(key);
    }
    provider.key_provider.load_private_key(der).map_err(|e| {
        anyhow!(
            "{}: the rustls stack cannot sign with this key ({e}); it signs with: {}",
            key_file.display(),
            capabilities::SIGNATURES
                .iter()
                .map(|s| s.algorithm)
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// Refuses a chain whose Certificate message no rustls peer accepts (a UOV key inside it).
fn check_certificate_message(chain: &[CertificateDer<'_>], file: &Path) -> anyhow::Result<()> {
    // The handshake message: its 4-byte header and the body RFC 8446 4.4.2 defines.
    let size = 4 + certificate_message_body(chain).len();
    if size > capabilities::MAX_HANDSHAKE_MESSAGE {
        anyhow::bail!(
            "{}: its Certificate message is {size} bytes; rustls accepts handshake messages \
             of at most {} bytes (a UOV key is tens of kilobytes: send at most one)",
            file.display(),
            capabilities::MAX_HANDSHAKE_MESSAGE
        );
    }
    Ok(())
}

/// The TLS schemes a hierarchy's leaf signs with (its algorithm from `manifest.json`).
fn schemes_of(dir: &Path) -> anyhow::Result<Vec<SignatureScheme>> {
    let leaf = chainlab_record::dual::leaf_algorithm(dir)?;
    let mut schemes: Vec<SignatureScheme> = capabilities::SIGNATURES
        .iter()
        .filter(|s| s.algorithm == leaf)
        .map(|s| s.scheme)
        .collect();
    if leaf.starts_with("RSA") {
        schemes.extend([
            SignatureScheme::RSA_PSS_SHA384,
            SignatureScheme::RSA_PSS_SHA512,
        ]);
    }
    Ok(schemes)
}

pub fn client(args: &ClientArgs) -> anyhow::Result<Arc<ClientConfig>> {
    let provider = Arc::new(provider(&args.tls)?);
    let algorithms = verification_algorithms(&provider, &args.tls)?;
    let mut large = None;
    let inner = if args.no_verify || args.mtc_trust.is_some() {
        None
    } else {
        let ca = args
            .ca
            .as_ref()
            .ok_or_else(|| anyhow!("--ca FILE is required unless --no-verify is given"))?;
        let mut roots = RootCertStore::empty();
        let mut large_roots = Vec::new();
        for cert in certificates(ca)? {
            if cert.len() > capabilities::MAX_DER_ELEMENT {
                // webpki cannot read it: a liboqs root the client checks itself (anchors.rs).
                large_roots.push(crate::anchors::LargeRoot::parse(&cert).with_context(|| {
                    format!(
                        "--ca {}: webpki reads at most {} bytes per DER element",
                        ca.display(),
                        capabilities::MAX_DER_ELEMENT
                    )
                })?);
                continue;
            }
            roots
                .add(cert)
                .map_err(|e| anyhow!("--ca {}: not a usable trust anchor: {e}", ca.display()))?;
        }
        let mut verifier_provider = (*provider).clone();
        verifier_provider.signature_verification_algorithms = algorithms;
        let verifier_provider = Arc::new(verifier_provider);
        large = crate::anchors::LargeRoots::new(large_roots, verifier_provider.clone());
        if roots.is_empty() {
            None // only large roots: nothing else is trusted
        } else {
            Some(
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), verifier_provider)
                    .build()?,
            )
        }
    };
    let mtc = match &args.mtc_trust {
        Some(trust) => Some(crate::mtc::RelyingParty::new(args, trust)?),
        None => None,
    };
    let verifier = Arc::new(RecordingVerifier {
        inner,
        large,
        algorithms,
        mtc,
    });
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    // Offer only the `--cert-compression` algorithm (rustls' default offers every one built in).
    config.cert_decompressors = compression(args.tls.cert_compression)
        .map(|(_, d, _)| d)
        .into_iter()
        .collect();
    config.cert_compressors = Vec::new();
    config.resumption = if args.resume {
        Resumption::in_memory_sessions(16)
    } else {
        Resumption::disabled()
    };
    Ok(Arc::new(config))
}

/// Every certificate of a PEM file, in order.
pub fn certificates(path: &Path) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let pem = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow!("{}: not PEM certificates: {e}", path.display()))?;
    if certs.is_empty() {
        anyhow::bail!("{}: no certificate in it", path.display());
    }
    Ok(certs)
}

/// The server's certificate: with `--second-pki`, the chain `--chain-order` picks
/// (`chainlab_record::dual::choose`; noted for the record), none when neither leaf signs a
/// scheme the client offers; with `--mtc-retry-standalone`, the standalone MTC for a
/// ClientHello whose SNI marks a client's retry; otherwise the one chain.
#[derive(Debug)]
struct Certs {
    first: (Arc<CertifiedKey>, Vec<SignatureScheme>),
    second: Option<(Arc<CertifiedKey>, Vec<SignatureScheme>)>,
    order: chainlab_record::dual::ChainOrder,
    retry: Option<Arc<CertifiedKey>>,
}

impl ResolvesServerCert for Certs {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let retrying = hello
            .server_name()
            .is_some_and(|n| n.starts_with(chainlab_record::args::MTC_RETRY_SNI_PREFIX));
        if let (Some(standalone), true) = (&self.retry, retrying) {
            return Some(standalone.clone());
        }
        let Some(second) = &self.second else {
            return Some(self.first.0.clone());
        };
        let codes = |s: &[SignatureScheme]| s.iter().map(|&x| u16::from(x)).collect::<Vec<_>>();
        let offered = codes(hello.signature_schemes());
        let (first, other) = (codes(&self.first.1), codes(&second.1));
        let index = chainlab_record::dual::choose(self.order, &offered, &[&first, &other])?;
        CHAIN.with(|c| c.set(Some(index as u8)));
        Some([&self.first.0, &second.0][index].clone())
    }
}

/// The provider's signing key, noting the scheme it signs the CertificateVerify with (and
/// offering only `--sigalgs` when given).
#[derive(Debug)]
struct RecordingKey {
    inner: Arc<dyn SigningKey>,
    only: Option<Vec<SignatureScheme>>,
}

impl SigningKey for RecordingKey {
    fn choose_scheme(&self, offered: &[SignatureScheme]) -> Option<Box<dyn Signer>> {
        let signer = match &self.only {
            Some(only) => {
                let both: Vec<_> = offered
                    .iter()
                    .filter(|s| only.contains(s))
                    .copied()
                    .collect();
                self.inner.choose_scheme(&both)
            }
            None => self.inner.choose_scheme(offered),
        }?;
        note_scheme(signer.scheme());
        Some(signer)
    }

    fn public_key(&self) -> Option<rustls::pki_types::SubjectPublicKeyInfoDer<'_>> {
        self.inner.public_key()
    }

    fn algorithm(&self) -> SignatureAlgorithm {
        self.inner.algorithm()
    }
}

/// The WebPKI verifier (or none, with `--no-verify`: the chain is not checked, the
/// CertificateVerify signature still is; or the MTC relying party of `--mtc-trust`), noting
/// the scheme of the CertificateVerify.
#[derive(Debug)]
struct RecordingVerifier {
    inner: Option<Arc<WebPkiServerVerifier>>,
    /// Roots webpki cannot read (a UOV-Is or UOV-Ip key), checked by `anchors`.
    large: Option<crate::anchors::LargeRoots>,
    algorithms: WebPkiSupportedAlgorithms,
    mtc: Option<crate::mtc::RelyingParty>,
}

impl ServerCertVerifier for RecordingVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(party) = &self.mtc {
            party.verify(end_entity, &self.algorithms)?;
            return Ok(ServerCertVerified::assertion());
        }
        if let Some(large) = &self.large {
            if let Some(result) = large.verify(end_entity, intermediates, server_name, now) {
                return result;
            }
        }
        match (&self.inner, &self.large) {
            (Some(v), _) => {
                v.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
            }
            // Only large roots are trusted, and none issued this chain.
            (None, Some(_)) => Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::UnknownIssuer,
            )),
            (None, None) => Ok(ServerCertVerified::assertion()),
        }
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        // Both configurations allow TLS 1.3 only.
        Err(rustls::Error::General("TLS 1.2 is not offered".into()))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        note_scheme(dss.scheme);
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
