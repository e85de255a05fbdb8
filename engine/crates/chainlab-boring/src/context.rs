//! The TLS 1.3 contexts of both sides, built once per process, before anything is timed.
//!
//! Every option that changes what goes on the wire is set here and only here: protocol
//! version (1.3 only), groups, signature schemes, certificate compression, the largest
//! Certificate message accepted, the server's credentials (one per chain, BoringSSL's
//! `SSL_CREDENTIAL`) and the client's verification. Bad values fail here, with one line
//! naming the value and what is allowed.

use std::cell::{Cell, RefCell};
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use anyhow::{anyhow, bail};
use boring::ssl::{
    SslContext, SslContextBuilder, SslMethod, SslSession, SslSessionCacheMode, SslVerifyMode,
    SslVersion,
};
use boring::stack::Stack;
use boring::x509::store::X509StoreBuilder;
use boring::x509::verify::X509VerifyFlags;
use boring::x509::{X509Ref, X509};
use boring_sys as ffi;
pub use chainlab_record::serve::ClientAuth;
use foreign_types::{ForeignType, ForeignTypeRef};
use serde::Serialize;

use crate::capabilities::{self, OFFERED_SCHEMES};
use crate::compression::{self, Brotli, Cached, CompressionSetup, Compressor, Zlib};
use crate::keys::{read_certificates, read_private_key};
use chainlab_record::args::{ChainPolicy, ClientArgs, Compression, ServeArgs, TlsArgs};

/// The server's context and the facts the ready line reports about it.
pub struct ServerContext {
    pub ctx: SslContext,
    pub served_chain: ServedChain,
    pub max_cert_list: u64,
    pub cert_compression: CompressionSetup,
    /// Mutual TLS: what the server asks of clients (`None`: no client certificate asked).
    pub client_auth: Option<ClientAuth>,
    /// Dual-chain serving (`--second-pki`): the second credential's address, to tell which
    /// chain a connection was sent (`SSL_get0_selected_credential`).
    pub second: Option<usize>,
}

/// The certificates the server sends, as loaded from the policy's chain file.
#[derive(Debug, Clone, Serialize)]
pub struct ServedChain {
    pub policy: ChainPolicy,
    pub certificates: usize,
    /// Sum of the certificates' DER sizes.
    pub der_bytes: usize,
}

/// The client's context plus what error classification needs to know about it.
pub struct ClientContext {
    pub ctx: SslContext,
    /// `--sigalgs` restricted the offered schemes (a handshake_failure alert before
    /// ServerHello is then ambiguous: `errors`).
    pub sigalgs_restricted: bool,
    pub verify: bool,
    /// The server's certificate is verified as a Merkle Tree Certificate (`--mtc-trust`).
    pub mtc: bool,
    /// The client authenticates with a certificate (`--cert-pki`).
    pub client_cert: bool,
}

/// Builds the server context from `serve`'s arguments.
pub fn server(args: &ServeArgs) -> anyhow::Result<ServerContext> {
    let mut builder = SslContextBuilder::new(SslMethod::tls())?;
    common(&mut builder, &args.tls)?;
    if let Some(sigalgs) = &args.tls.sigalgs {
        let prefs = capabilities::schemes(sigalgs)?;
        // SAFETY: valid context; the list is copied.
        let ok = unsafe {
            ffi::SSL_CTX_set_signing_algorithm_prefs(builder.as_ptr(), prefs.as_ptr(), prefs.len())
        };
        if ok != 1 {
            bail!("--sigalgs {sigalgs:?}: BoringSSL refused the list for signing");
        }
    }
    // SAFETY: valid context.
    if unsafe { ffi::SSL_CTX_set_num_tickets(builder.as_ptr(), args.tickets as usize) } != 1 {
        bail!("--tickets {}: BoringSSL refused the count", args.tickets);
    }
    // What the handshake signed with, and with which credential: BoringSSL keeps them only
    // until the handshake is done (`take_signed`).
    // SAFETY: valid context; the callback is a plain function.
    unsafe { ffi::SSL_CTX_set_info_callback(builder.as_ptr(), Some(note_signed)) };
    // TLS 1.3 tickets carry the session, so the server resumes without a session cache;
    // turning the cache off keeps per-connection work independent of earlier connections.
    builder.set_session_cache_mode(SslSessionCacheMode::OFF);
    if args.trust_anchor_ids {
        chainlab_record::anchors::check_server_chain(args.chain)?;
        if args.tls.cert_compression != Compression::None {
            bail!("--trust-anchor-ids: without certificate compression only");
        }
        // Tried in order: the credentials a client asks for by ID, then the default.
        for offer in chainlab_record::anchors::server_ids(&args.pki)? {
            let (cred, _, _) = credential(&args.pki, offer.chain, &offer.file, "--pki")?;
            // SAFETY: a credential we own.
            unsafe { crate::anchors::offer_under(cred.0, &offer.id)? };
            add_credential(&mut builder, &cred)?;
        }
    }
    let (first, served_chain, chain_der) =
        credential(&args.pki, args.chain, &args.served_file(), "--pki")?;
    add_credential(&mut builder, &first)?;
    let second = match &args.second_pki {
        Some(dir) => {
            if args.tls.cert_compression != Compression::None {
                bail!("--second-pki: without certificate compression only");
            }
            let (cred, _, _) = credential(dir, args.chain, args.chain.file_name(), "--second-pki")?;
            add_credential(&mut builder, &cred)?;
            let chains = [
                (first.0 as usize, leaf_schemes(&args.pki)?),
                (cred.0 as usize, leaf_schemes(dir)?),
            ];
            choose_chain_per_connection(&mut builder, args.chain_order, chains);
            Some(cred.0 as usize)
        }
        None => None,
    };
    let cert_compression = precompress(&mut builder, args.tls.cert_compression, &chain_der)?;
    let client_auth = match &args.client_ca {
        Some(path) => Some(require_client_certificates(&mut builder, path)?),
        None => None,
    };
    // The credentials are the context's now (add1 took its own references); ours go.
    drop(first);
    Ok(ServerContext {
        ctx: builder.build(),
        served_chain,
        max_cert_list: args.tls.max_cert_list,
        cert_compression,
        client_auth,
        second,
    })
}

thread_local! {
    /// The session of the last ticket a client connection of this thread received.
    static TICKET: RefCell<Option<SslSession>> = const { RefCell::new(None) };
    /// The scheme the last handshake finished on this thread signed its CertificateVerify
    /// with, and the address of the credential whose key signed (0, 0: none).
    static SIGNED: Cell<(u16, usize)> = const { Cell::new((0, 0)) };
}

/// The session of the last ticket a connection of this thread received, taken.
pub fn take_ticket() -> Option<SslSession> {
    TICKET.with(|t| t.borrow_mut().take())
}

/// What the last handshake finished on this thread signed with, and with which credential;
/// cleared by the call. A connection's handshake ends inside one step on one thread, so the
/// server takes it right after each step.
pub fn take_signed() -> (u16, usize) {
    SIGNED.with(|s| s.replace((0, 0)))
}

/// The info callback: at SSL_CB_HANDSHAKE_DONE, the last moment BoringSSL still holds
/// them, note the scheme used and the credential chosen.
unsafe extern "C" fn note_signed(ssl: *const ffi::SSL, kind: libc::c_int, _value: libc::c_int) {
    if kind & ffi::SSL_CB_HANDSHAKE_DONE != 0 {
        // SAFETY: BoringSSL passes the connection it runs the callback for.
        let got = unsafe {
            (
                ffi::SSL_get_signature_algorithm_used(ssl),
                ffi::SSL_get0_selected_credential(ssl) as usize,
            )
        };
        SIGNED.with(|s| s.set(got));
    }
}

/// Builds the client context from `handshake`'s arguments.
pub fn client(args: &ClientArgs) -> anyhow::Result<ClientContext> {
    let mut builder = SslContextBuilder::new(SslMethod::tls())?;
    common(&mut builder, &args.tls)?;
    // Sessions are handed from one connection to the next explicitly (`--resume`), never
    // through the library's client cache. A TLS 1.3 session arrives in a ticket after the
    // handshake, and BoringSSL hands it out only through the new-session callback.
    if args.resume || args.resume_ratio.is_some() {
        builder
            .set_session_cache_mode(SslSessionCacheMode::CLIENT | SslSessionCacheMode::NO_INTERNAL);
        builder.set_new_session_callback(|_, session| {
            TICKET.with(|t| *t.borrow_mut() = Some(session));
        });
    } else {
        builder.set_session_cache_mode(SslSessionCacheMode::OFF);
    }
    if args.no_verify {
        // No chain work at all (the CertificateVerify signature is still checked: that is
        // the handshake, not chain validation).
        builder.set_custom_verify_callback(SslVerifyMode::PEER, |_| Ok(()));
    } else {
        if let Some(trust) = &args.mtc_trust {
            crate::mtc::install_verifier(&mut builder, trust)?;
        } else {
            let ca = args.ca.as_deref().ok_or_else(|| {
                anyhow!("--ca is required unless --no-verify or --mtc-trust is given")
            })?;
            let mut store = X509StoreBuilder::new()?;
            for cert in read_certificates(ca, "--ca")? {
                store.add_cert(cert)?;
            }
            builder.set_cert_store(store.build());
        }
        builder.set_verify(SslVerifyMode::PEER);
        // SAFETY: the context's own parameters, borrowed while `builder` is.
        let param = unsafe {
            boring::x509::verify::X509VerifyParamRef::from_ptr_mut(ffi::SSL_CTX_get0_param(
                builder.as_ptr(),
            ))
        };
        match args.servername.parse::<IpAddr>() {
            Ok(ip) => param.set_ip(ip)?,
            Err(_) => param.set_host(&args.servername)?,
        }
        if args.partial_chain {
            param.set_flags(X509VerifyFlags::PARTIAL_CHAIN);
        }
        if let Some(path) = &args.untrusted {
            install_untrusted(&mut builder, path)?;
        }
        if args.trust_anchors.is_some() || args.mtc_landmarks {
            crate::anchors::install_verifier(&mut builder, args)?;
        }
    }
    crate::anchors::request(&mut builder, args)?;
    crate::profile::apply(&mut builder, args)?;
    // Offered to servers, and used on the client's own certificate.
    precompress(&mut builder, crate::profile::offered_compression(args), &[])?;
    if let Some(dir) = &args.cert_pki {
        let (cred, _, _) = credential(
            dir,
            ChainPolicy::LeafIntermediates,
            ChainPolicy::LeafIntermediates.file_name(),
            "--cert-pki",
        )?;
        add_credential(&mut builder, &cred)?;
    }
    Ok(ClientContext {
        ctx: builder.build(),
        sigalgs_restricted: args.tls.sigalgs.is_some(),
        verify: !args.no_verify,
        client_cert: args.cert_pki.is_some(),
        mtc: args.mtc_trust.is_some() && !args.no_verify,
    })
}

/// Settings both sides share: TLS 1.3 only, groups, the schemes accepted (of the peer's
/// CertificateVerify and certificates), the largest Certificate message, compression.
fn common(builder: &mut SslContextBuilder, tls: &TlsArgs) -> anyhow::Result<()> {
    builder.set_min_proto_version(Some(SslVersion::TLS1_3))?;
    builder.set_max_proto_version(Some(SslVersion::TLS1_3))?;
    let groups = capabilities::groups(&tls.groups)?;
    // SAFETY: valid context; the list is copied.
    if unsafe { ffi::SSL_CTX_set1_group_ids(builder.as_ptr(), groups.as_ptr(), groups.len()) } != 1
    {
        bail!("--groups {:?}: BoringSSL refused the list", tls.groups);
    }
    let verify = match &tls.sigalgs {
        Some(list) => capabilities::schemes(list)?,
        None => OFFERED_SCHEMES.to_vec(),
    };
    // SAFETY: valid context; the list is copied.
    let ok = unsafe {
        ffi::SSL_CTX_set_verify_algorithm_prefs(builder.as_ptr(), verify.as_ptr(), verify.len())
    };
    if ok != 1 {
        bail!("--sigalgs: BoringSSL refused the list for verifying");
    }
    let max = tls.max_cert_list;
    if max == 0 || max > u32::MAX as u64 {
        bail!("--max-cert-list {max}: must be between 1 and {}", u32::MAX);
    }
    // SAFETY: valid context.
    unsafe { ffi::SSL_CTX_set_max_cert_list(builder.as_ptr(), max as usize) };
    Ok(())
}

/// Registers the compression algorithm `compression` names (none: the extension is not
/// sent) and compresses the server's Certificate message for `chain_der` once, for the
/// ready line and the callback's cache (a client has no chain to send: `&[]`).
fn precompress(
    builder: &mut SslContextBuilder,
    compression: Compression,
    chain_der: &[Vec<u8>],
) -> anyhow::Result<CompressionSetup> {
    let message = compression::certificate_message(chain_der);
    let compressed = match compression {
        Compression::None => None,
        Compression::Zlib => Some(register::<Zlib>(builder, &message)?),
        Compression::Brotli => Some(register::<Brotli>(builder, &message)?),
        Compression::Zstd => bail!("--cert-compression zstd: not in the boringssl engine"),
    };
    Ok(CompressionSetup {
        algorithm: compression,
        uncompressed_bytes: compressed.map(|_| message.len()),
        compressed_bytes: compressed,
        installed: compressed.is_some(),
    })
}

/// Registers algorithm `A` on both directions; returns the size of `message` compressed.
fn register<A: compression::Algorithm>(
    builder: &mut SslContextBuilder,
    message: &[u8],
) -> anyhow::Result<usize> {
    let cache = Arc::new(Cached::<A>::default());
    let size = cache.compressed(message)?.len();
    builder.add_certificate_compression_algorithm(Compressor(cache))?;
    Ok(size)
}

/// An X.509 credential: the chain file of `policy` in `dir` (leaf first) and `leaf.key`.
pub struct Credential(*mut ffi::SSL_CREDENTIAL);

impl Drop for Credential {
    fn drop(&mut self) {
        // SAFETY: we own one reference.
        unsafe { ffi::SSL_CREDENTIAL_free(self.0) };
    }
}

/// The credential of a chain file, what the ready line says of it, and its certificates'
/// DER (leaf first).
fn credential(
    dir: &Path,
    policy: ChainPolicy,
    file: &str,
    flag: &str,
) -> anyhow::Result<(Credential, ServedChain, Vec<Vec<u8>>)> {
    let chain_path = dir.join(file);
    let chain: Vec<X509> = read_certificates(&chain_path, flag)?;
    let ders = chain
        .iter()
        .map(|c| c.to_der())
        .collect::<Result<Vec<_>, _>>()?;
    let key_path = dir.join("leaf.key");
    let key = read_private_key(&key_path, flag)?;
    // SAFETY: a new credential we own; buffers are created from our DER (copied) and freed
    // after the chain took its own references; the key is borrowed for the call.
    unsafe {
        let cred = Credential(ffi::SSL_CREDENTIAL_new_x509());
        if cred.0.is_null() {
            bail!("{flag}: cannot make a credential");
        }
        let buffers: Vec<*mut ffi::CRYPTO_BUFFER> = ders
            .iter()
            .map(|d| ffi::CRYPTO_BUFFER_new(d.as_ptr(), d.len(), std::ptr::null_mut()))
            .collect();
        let set = ffi::SSL_CREDENTIAL_set1_cert_chain(cred.0, buffers.as_ptr(), buffers.len());
        for b in buffers {
            ffi::CRYPTO_BUFFER_free(b);
        }
        if set != 1 {
            bail!(
                "{flag}: BoringSSL refused the chain of {}: {}",
                chain_path.display(),
                boring::error::ErrorStack::get()
            );
        }
        if ffi::SSL_CREDENTIAL_set1_private_key(cred.0, key.as_ptr()) != 1 {
            bail!(
                "{flag}: {} does not match the leaf certificate of {}: {}",
                key_path.display(),
                chain_path.display(),
                boring::error::ErrorStack::get()
            );
        }
        let served = ServedChain {
            policy,
            certificates: ders.len(),
            der_bytes: ders.iter().map(Vec::len).sum(),
        };
        Ok((cred, served, ders))
    }
}

/// The TLS schemes a hierarchy's leaf signs with (its algorithm from `manifest.json`).
fn leaf_schemes(dir: &Path) -> anyhow::Result<Vec<u16>> {
    let leaf = chainlab_record::dual::leaf_algorithm(dir)?;
    let mut schemes: Vec<u16> = capabilities::SIGNATURES
        .iter()
        .filter(|s| s.algorithm == leaf)
        .map(|s| s.scheme)
        .collect();
    if leaf.starts_with("RSA") {
        schemes.extend([0x0805, 0x0806]); // RSA-PSS with SHA-384 and SHA-512
    }
    Ok(schemes)
}

/// Dual-chain serving: BoringSSL alone sends the first of its credentials the client can
/// verify, in the order they were added (the server's order, `--pki`'s first). Before it
/// chooses, this leaves each connection the one credential `--chain-order` picks from the
/// ClientHello's signature_algorithms (`chainlab_record::dual::choose`); a ClientHello no
/// leaf serves keeps both, and BoringSSL refuses it as before (no_shared_sigalg).
/// `chains`: each credential's address, owned by the context from here on, and its schemes.
fn choose_chain_per_connection(
    builder: &mut SslContextBuilder,
    order: chainlab_record::dual::ChainOrder,
    chains: [(usize, Vec<u16>); 2],
) {
    builder.set_select_certificate_callback(move |mut hello| {
        let offered = hello
            .get_extension(boring::ssl::ExtensionType::SIGNATURE_ALGORITHMS)
            .and_then(chainlab_record::dual::parse_signature_algorithms)
            .unwrap_or_default();
        let schemes = [chains[0].1.as_slice(), chains[1].1.as_slice()];
        if let Some(i) = chainlab_record::dual::choose(order, &offered, &schemes) {
            let ssl = hello.ssl_mut().as_ptr();
            // SAFETY: the connection's own configuration, before BoringSSL chose a
            // credential; the credential lives as long as the context that holds it, and
            // add1 takes its own reference.
            let added = unsafe {
                ffi::SSL_certs_clear(ssl);
                ffi::SSL_add1_credential(ssl, chains[i].0 as *const ffi::SSL_CREDENTIAL)
            };
            if added != 1 {
                return Err(boring::ssl::SelectCertError::ERROR);
            }
        }
        Ok(())
    });
}

fn add_credential(builder: &mut SslContextBuilder, cred: &Credential) -> anyhow::Result<()> {
    // SAFETY: valid context and credential; add1 takes its own reference.
    if unsafe { ffi::SSL_CTX_add1_credential(builder.as_ptr(), cred.0) } != 1 {
        bail!(
            "BoringSSL refused a credential: {}",
            boring::error::ErrorStack::get()
        );
    }
    Ok(())
}

// Mutual TLS on the server (`--client-ca`; libssl checks the leaf's clientAuth purpose on the
// server side) and `--untrusted` on the client.
chainlab_record::libssl_verification!(
    SslContextBuilder,
    Stack,
    X509,
    X509StoreBuilder,
    SslVerifyMode,
    read_certificates,
    |c| c.issued(c).is_ok(),
    ffi::SSL_CTX_set_cert_verify_callback,
    verify_with_untrusted
);

/// Verification callback for `--untrusted`: the peer's chain plus the extra certificates
/// as the untrusted set, then the library's own `X509_verify_cert`.
unsafe extern "C" fn verify_with_untrusted(
    store_ctx: *mut ffi::X509_STORE_CTX,
    arg: *mut libc::c_void,
) -> libc::c_int {
    // SAFETY (whole function): BoringSSL passes the store context it initialised and our
    // 'static stack; the combined stack holds its own references (clones) and outlives the
    // verification, which reads it through the store context; the peer's is put back.
    let extra = &*(arg as *const Stack<X509>);
    let peer = ffi::X509_STORE_CTX_get0_untrusted(store_ctx);
    let Ok(mut combined) = Stack::<X509>::new() else {
        return 0;
    };
    if !peer.is_null() {
        for cert in boring::stack::StackRef::<X509>::from_ptr(peer) {
            if combined.push(X509Ref::to_owned(cert)).is_err() {
                return 0;
            }
        }
    }
    for cert in extra {
        if combined.push(cert.to_owned()).is_err() {
            return 0;
        }
    }
    ffi::X509_STORE_CTX_set_chain(store_ctx, combined.as_ptr());
    let result = ffi::X509_verify_cert(store_ctx);
    ffi::X509_STORE_CTX_set_chain(store_ctx, peer);
    result
}
