//! What a server holds and sends: its served chain and key, a second hierarchy's for
//! dual-chain serving (`--second-pki`), the standalone Merkle Tree Certificate for a
//! retrying client (`--mtc-retry-standalone`), and its chain compressed once at start-up
//! (RFC 8879). `context::server` assembles them into the server's context.

use std::path::Path;

use anyhow::{anyhow, bail, Context as _};
use foreign_types::ForeignTypeRef;
use openssl::pkey::PKey;
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
/// context's extra certificates, used for a slot without its own). Returns its leaf.
pub(super) fn load_second_chain(
    builder: &mut SslContextBuilder,
    args: &ServeArgs,
    dir: &Path,
) -> anyhow::Result<X509> {
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
    builder.set_certificate(&leaf)?;
    for cert in chain {
        // SAFETY: a valid context whose current certificate is `leaf`; add1 takes its own
        // reference, so `cert` is freed here as usual.
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
            crate::info::stack(),
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
    Ok(leaf)
}

/// Loads `<pki>/<policy file>` (leaf first) and `<pki>/leaf.key` into the context.
pub(super) fn load_served_chain(
    builder: &mut SslContextBuilder,
    pki: &Path,
    policy: ChainPolicy,
) -> anyhow::Result<ServedChain> {
    let (certificates, der_bytes) = load_chain(
        builder,
        &pki.join(policy.file_name()),
        &pki.join("leaf.key"),
        "--pki",
    )?;
    Ok(ServedChain {
        policy,
        certificates,
        der_bytes,
    })
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
