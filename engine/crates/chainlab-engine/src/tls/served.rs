//! What a server holds and sends: its served chain and key, a second hierarchy's for
//! dual-chain serving (`--second-pki`), the standalone Merkle Tree Certificate for a
//! retrying client (`--mtc-retry-standalone`), and its chain compressed once at start-up
//! (RFC 8879). `context::server` assembles them into the server's context.

use std::path::Path;

use anyhow::{anyhow, bail, Context as _};
use foreign_types::ForeignTypeRef;
use openssl::pkey::{PKey, Private};
use openssl::ssl::{SslContextBuilder, SslMethod};
use openssl::x509::X509;
use openssl_sys as sys;
use serde::Serialize;

use super::certs::{load_chain, read_certificates};
use crate::cli::{ChainPolicy, Compression, ServeArgs, Transport};
use crate::ossl;

/// The certificates the server sends, as loaded from the policy's chain file.
#[derive(Debug, Clone, Serialize)]
pub struct ServedChain {
    pub policy: ChainPolicy,
    pub certificates: usize,
    /// Sum of the certificates' DER sizes.
    pub der_bytes: usize,
}

/// What the server did about certificate compression.
#[derive(Debug, Clone, Serialize)]
pub struct CompressionSetup {
    pub algorithm: Compression,
    /// Size of the uncompressed Certificate message body and of its compressed form; `None`
    /// when compression is off.
    pub uncompressed_bytes: Option<usize>,
    pub compressed_bytes: Option<usize>,
    /// Whether the pre-compressed chain was installed. Like OpenSSL's own
    /// `SSL_CTX_compress_certs`, a chain that does not shrink is not installed, and the
    /// server then sends it uncompressed even to a client that offers compression.
    pub installed: bool,
}

/// `--second-pki`: the second hierarchy's chain and key in the certificate slot of its key
/// type, with its intermediates as that slot's own chain (the first chain's are the
/// context's extra certificates, used for a slot without its own). Returns what it holds.
pub(super) fn load_second_chain(
    builder: &mut SslContextBuilder,
    args: &ServeArgs,
    dir: &Path,
) -> anyhow::Result<Held> {
    if args.tls.transport != Transport::Tcp || args.tls.cert_compression != Compression::None {
        bail!("--second-pki: TCP without certificate compression only");
    }
    let key_type = |dir: &Path| -> anyhow::Result<String> {
        let pem = std::fs::read(dir.join("leaf.key"))
            .with_context(|| format!("cannot read {}", dir.join("leaf.key").display()))?;
        let key = PKey::private_key_from_pem(&pem)?;
        // SAFETY: a valid key; the name is a static string of its provider, copied here.
        let name = unsafe { std::ffi::CStr::from_ptr(ossl::EVP_PKEY_get0_type_name(key.as_ptr())) };
        Ok(name.to_string_lossy().into_owned())
    };
    let (first, second) = (key_type(&args.pki)?, key_type(dir)?);
    if first == second {
        bail!(
            "--second-pki {}: both leaves are {first} keys; allowed: leaves of two key types \
             (libssl holds one certificate per key type)",
            dir.display()
        );
    }
    let mut chain =
        read_certificates(&dir.join(args.chain.file_name()), "--second-pki")?.into_iter();
    let leaf = chain
        .next()
        .ok_or_else(|| anyhow!("--second-pki: no certificate"))?;
    let chain: Vec<X509> = chain.collect();
    builder.set_certificate(&leaf)?;
    for cert in &chain {
        // SAFETY: a valid context whose current certificate is `leaf`; add1 takes its own
        // reference (ours stay in `chain`, for a connection to be given again).
        let rc = unsafe {
            sys::SSL_CTX_ctrl(
                builder.as_ptr(),
                sys::SSL_CTRL_CHAIN_CERT,
                1,
                cert.as_ptr().cast(),
            )
        };
        if rc != 1 {
            bail!("--second-pki: cannot add an intermediate to the second chain");
        }
    }
    let pem = std::fs::read(dir.join("leaf.key"))?;
    if let Some(composite) = chainlab_composite::encoding::composite_key_in_pem(&pem) {
        bail!(chainlab_composite::encoding::cannot_sign(
            crate::build::stack(),
            &format!("--second-pki {}", dir.join("leaf.key").display()),
            composite
        ));
    }
    let key = PKey::private_key_from_pem(&pem)?;
    builder.set_private_key(&key)?;
    builder.check_private_key().map_err(|_| {
        anyhow!(
            "--second-pki {}: leaf.key does not match its leaf",
            dir.display()
        )
    })?;
    Held::new(leaf, key, chain, dir)
}

/// Loads `<pki>/<file>` (leaf first; `policy`'s) and `<pki>/leaf.key` into the context.
pub(super) fn load_served_chain(
    builder: &mut SslContextBuilder,
    pki: &Path,
    policy: ChainPolicy,
    file: &str,
) -> anyhow::Result<(ServedChain, Held)> {
    let loaded = load_chain(builder, &pki.join(file), &pki.join("leaf.key"), "--pki")?;
    let served = ServedChain {
        policy,
        certificates: loaded.certificates,
        der_bytes: loaded.der_bytes,
    };
    Ok((served, Held::new(loaded.leaf, loaded.key, Vec::new(), pki)?))
}

/// One chain a dual-chain server holds, as a connection can be given it again: the
/// context's own leaf and key objects (so the record's `chain_index` tells them apart by
/// address), the chain below the leaf (none for `--pki`'s, which the context sends as its
/// extra certificates), and the schemes its leaf signs.
pub(super) struct Held {
    leaf: X509,
    key: PKey<Private>,
    chain: Vec<X509>,
    schemes: Vec<u16>,
}

impl Held {
    /// The leaf's address, as the record's `chain_index` compares it.
    pub(super) fn leaf_address(&self) -> usize {
        self.leaf.as_ptr() as usize
    }

    fn new(leaf: X509, key: PKey<Private>, chain: Vec<X509>, dir: &Path) -> anyhow::Result<Self> {
        let algorithm = chainlab_record::dual::leaf_algorithm(dir)?;
        let name = crate::algorithms::lookup(&algorithm).map_or("", |a| a.tls_sigalg);
        let mut schemes: Vec<u16> = chainlab_record::dual::scheme_code(name)
            .into_iter()
            .collect();
        if name.starts_with("rsa_pss_rsae") {
            schemes.extend([0x0805, 0x0806]); // RSA-PSS with SHA-384 and SHA-512
        }
        Ok(Self {
            leaf,
            key,
            chain,
            schemes,
        })
    }
}

/// `--chain-order server`: libssl chooses among its certificates by the client's scheme
/// order; this gives each connection, before it chooses, only the chain the server's order
/// picks (`chainlab_record::dual::choose`: post-quantum first), from the ClientHello's
/// signature_algorithms. A ClientHello no leaf serves keeps both (refused as before).
pub(super) fn choose_by_server_order(builder: &mut SslContextBuilder, held: [Held; 2]) {
    use openssl::ssl::ClientHelloResponse;
    builder.set_client_hello_callback(move |ssl, _alert| {
        let offered = client_signature_algorithms(ssl).unwrap_or_default();
        let schemes = [held[0].schemes.as_slice(), held[1].schemes.as_slice()];
        let order = chainlab_record::dual::ChainOrder::Server;
        if let Some(i) = chainlab_record::dual::choose(order, &offered, &schemes) {
            let h = &held[i];
            // SAFETY: the connection's own configuration, before libssl chose a certificate.
            unsafe { ossl::SSL_certs_clear(ssl.as_ptr()) };
            ssl.set_certificate(&h.leaf)?;
            ssl.set_private_key(&h.key)?;
            for cert in &h.chain {
                // SAFETY: a valid connection whose current certificate is `h.leaf`; add1
                // takes its own reference.
                let rc = unsafe {
                    sys::SSL_ctrl(
                        ssl.as_ptr(),
                        sys::SSL_CTRL_CHAIN_CERT,
                        1,
                        cert.as_ptr().cast(),
                    )
                };
                if rc != 1 {
                    return Err(openssl::error::ErrorStack::get());
                }
            }
        }
        Ok(ClientHelloResponse::SUCCESS)
    });
}

/// `TLSEXT_TYPE_signature_algorithms` (tls1.h; RFC 8446, 4.2).
const TLSEXT_TYPE_SIGNATURE_ALGORITHMS: std::ffi::c_uint = 13;

/// The schemes of the ClientHello's signature_algorithms extension (inside the client
/// hello callback), or None without one.
fn client_signature_algorithms(ssl: &mut openssl::ssl::SslRef) -> Option<Vec<u16>> {
    let mut data: *const u8 = std::ptr::null();
    let mut len = 0usize;
    // SAFETY: called from the client hello callback; libssl owns the returned bytes for
    // the callback's duration and we copy them out at once.
    let found = unsafe {
        sys::SSL_client_hello_get0_ext(
            ssl.as_ptr(),
            TLSEXT_TYPE_SIGNATURE_ALGORITHMS,
            &mut data,
            &mut len,
        )
    };
    if found != 1 || data.is_null() {
        return None;
    }
    // SAFETY: `len` bytes at `data`, valid during the callback.
    let body = unsafe { std::slice::from_raw_parts(data, len) };
    chainlab_record::dual::parse_signature_algorithms(body)
}

/// Compresses the served Certificate message once, at startup, and installs it.
///
/// `SSL_CTX_compress_certs` only walks the classic key slots and so silently skips ML-DSA and
/// SLH-DSA certificates; compressing the current chain with `SSL_CTX_get1_compressed_cert`
/// and installing it with `SSL_CTX_set1_compressed_cert` works for every key type.
/// Compresses the chain of `builder`'s current certificate and installs the result in
/// `target` (another context holding the same chain), or in `builder` itself.
pub(super) fn precompress(
    builder: &mut SslContextBuilder,
    target: Option<&mut SslContextBuilder>,
    compression: Compression,
) -> anyhow::Result<CompressionSetup> {
    let Some(alg) = comp_alg(compression) else {
        return Ok(CompressionSetup {
            algorithm: compression,
            uncompressed_bytes: None,
            compressed_bytes: None,
            installed: false,
        });
    };
    let mut data: *mut libc::c_uchar = std::ptr::null_mut();
    let mut orig_len: libc::size_t = 0;
    // SAFETY: valid context with its certificate set; out-pointers are valid.
    let comp_len = unsafe {
        ossl::SSL_CTX_get1_compressed_cert(builder.as_ptr(), alg, &mut data, &mut orig_len)
    };
    if comp_len == 0 || data.is_null() {
        bail!(
            "--cert-compression {}: compressing the served chain failed: {}",
            compression_name(compression),
            openssl::error::ErrorStack::get()
        );
    }
    let installed = comp_len < orig_len;
    let into = target.map_or(builder.as_ptr(), |t| t.as_ptr());
    let result = if installed {
        // SAFETY: `data` holds `comp_len` bytes; the call copies them.
        unsafe { ossl::SSL_CTX_set1_compressed_cert(into, alg, data, comp_len, orig_len) }
    } else {
        1
    };
    // SAFETY: `data` was allocated by OpenSSL for us (get1) and is not used after this.
    unsafe { sys::OPENSSL_free(data.cast()) };
    if result != 1 {
        bail!(
            "--cert-compression {}: installing the compressed chain failed: {}",
            compression_name(compression),
            openssl::error::ErrorStack::get()
        );
    }
    Ok(CompressionSetup {
        algorithm: compression,
        uncompressed_bytes: Some(orig_len),
        compressed_bytes: Some(comp_len),
        installed,
    })
}

pub(super) fn comp_alg(compression: Compression) -> Option<libc::c_int> {
    match compression {
        Compression::None => None,
        Compression::Zlib => Some(ossl::TLSEXT_COMP_CERT_ZLIB),
        Compression::Brotli => Some(ossl::TLSEXT_COMP_CERT_BROTLI),
        Compression::Zstd => Some(ossl::TLSEXT_COMP_CERT_ZSTD),
    }
}

pub(super) fn compression_name(compression: Compression) -> &'static str {
    match compression {
        Compression::None => "none",
        Compression::Zlib => "zlib",
        Compression::Brotli => "brotli",
        Compression::Zstd => "zstd",
    }
}

/// Compression algorithms this OpenSSL build has (probed on a scratch context).
pub(super) fn available_compressions() -> Vec<&'static str> {
    let mut names = vec!["none"];
    for c in [Compression::Zlib, Compression::Brotli, Compression::Zstd] {
        let Ok(scratch) = SslContextBuilder::new(SslMethod::tls_client()) else {
            continue;
        };
        let mut algs = [comp_alg(c).unwrap_or_default()];
        // SAFETY: valid scratch context; `algs` outlives the call.
        let ok = unsafe {
            ossl::SSL_CTX_set1_cert_comp_preference(scratch.as_ptr(), algs.as_mut_ptr(), 1)
        };
        if ok == 1 {
            names.push(compression_name(c));
        }
    }
    names
}
