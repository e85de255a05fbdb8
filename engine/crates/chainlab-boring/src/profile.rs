//! Browser ClientHellos (`--client-profile`): what the client offers, set over the engine's
//! own context after everything else, so one profile is one ClientHello whatever the
//! campaign's other flags (those that would change it are refused).
//!
//! `chrome` (desktop Chrome 150 and later), from Chromium's `net/socket/
//! ssl_client_socket_impl.cc` as published (its ConfigureSSL): the signature schemes it
//! verifies (`kVerifyPrefs`: ML-DSA-44, -65, -87 first since the change of 2026-07-30 that
//! removed the `kTlsMldsaSignatures` flag, then ECDSA P-256/SHA-256, RSA-PSS/SHA-256,
//! RSA PKCS#1/SHA-256, ECDSA P-384/SHA-384, RSA-PSS/SHA-384, RSA PKCS#1/SHA-384,
//! RSA-PSS/SHA-512, RSA PKCS#1/SHA-512), its cipher string (`ALL:!aPSK:!ECDSA+SHA1:!3DES`,
//! TLS 1.2 still offered), GREASE, a permuted extension order, a GREASE ECH extension,
//! OCSP stapling and SCT requests, ALPN `h2` and `http/1.1`; its groups X25519MLKEM768,
//! X25519, P-256, P-384 with key shares for the first two (BoringSSL's own default
//! selection: up to two, at most one post-quantum), and brotli certificate compression
//! (`net/ssl/cert_compression.cc`). The trust_anchors extension is `--trust-anchors`'s.
//! Not reproduced: ALPS (application_settings), a session ticket to resume, the record
//! size limit and anything an HTTP stack adds after the handshake.

use anyhow::bail;
use boring::ssl::{SslContextBuilder, SslRef, SslVersion};
use boring_sys as ffi;
use chainlab_record::args::{ClientArgs, ClientProfile, Compression};
use foreign_types::ForeignTypeRef;

/// Chrome's signature schemes, in its order (`kVerifyPrefs`).
pub const CHROME_SCHEMES: [u16; 11] = [
    ffi::SSL_SIGN_ML_DSA_44 as u16,
    ffi::SSL_SIGN_ML_DSA_65 as u16,
    ffi::SSL_SIGN_ML_DSA_87 as u16,
    ffi::SSL_SIGN_ECDSA_SECP256R1_SHA256 as u16,
    ffi::SSL_SIGN_RSA_PSS_RSAE_SHA256 as u16,
    ffi::SSL_SIGN_RSA_PKCS1_SHA256 as u16,
    ffi::SSL_SIGN_ECDSA_SECP384R1_SHA384 as u16,
    ffi::SSL_SIGN_RSA_PSS_RSAE_SHA384 as u16,
    ffi::SSL_SIGN_RSA_PKCS1_SHA384 as u16,
    ffi::SSL_SIGN_RSA_PSS_RSAE_SHA512 as u16,
    ffi::SSL_SIGN_RSA_PKCS1_SHA512 as u16,
];

/// Chrome's groups, in its order.
pub const CHROME_GROUPS: [u16; 4] = [
    ffi::SSL_GROUP_X25519_MLKEM768 as u16,
    ffi::SSL_GROUP_X25519 as u16,
    ffi::SSL_GROUP_SECP256R1 as u16,
    ffi::SSL_GROUP_SECP384R1 as u16,
];

/// The `--groups` a campaign gives with the profile: its first group (the key exchange it
/// negotiates with a server that has it).
pub const CHROME_KEX: &str = "X25519MLKEM768";

const CHROME_CIPHERS: &str = "ALL:!aPSK:!ECDSA+SHA1:!3DES";

/// ALPN as the wire carries it: `h2`, `http/1.1`.
const CHROME_ALPN: &[u8] = b"\x02h2\x08http/1.1";

/// Refuses what would change the profile's ClientHello, naming the option.
pub fn check(args: &ClientArgs) -> anyhow::Result<()> {
    if args.client_profile == ClientProfile::None {
        return Ok(());
    }
    if args.tls.sigalgs.is_some() {
        bail!("--sigalgs with --client-profile chrome: the profile offers Chrome's schemes");
    }
    if !args.tls.groups.eq_ignore_ascii_case(CHROME_KEX) {
        bail!(
            "--groups {} with --client-profile chrome: the profile offers Chrome's groups; \
             allowed: --groups {CHROME_KEX} (its first)",
            args.tls.groups
        );
    }
    if !matches!(
        args.tls.cert_compression,
        Compression::None | Compression::Brotli
    ) {
        bail!(
            "--cert-compression with --client-profile chrome: the profile offers brotli; \
             allowed: none or brotli"
        );
    }
    Ok(())
}

/// The compression the client offers: the profile's, or `--cert-compression`.
pub fn offered_compression(args: &ClientArgs) -> Compression {
    match args.client_profile {
        ClientProfile::None => args.tls.cert_compression,
        ClientProfile::Chrome => Compression::Brotli,
    }
}

/// The profile's settings on the client context (after the engine's own).
pub fn apply(builder: &mut SslContextBuilder, profile: ClientProfile) -> anyhow::Result<()> {
    if profile == ClientProfile::None {
        return Ok(());
    }
    builder.set_min_proto_version(Some(SslVersion::TLS1_2))?;
    builder.set_strict_cipher_list(CHROME_CIPHERS)?;
    builder.set_alpn_protos(CHROME_ALPN)?;
    let ctx = builder.as_ptr();
    // SAFETY: a valid context; every list is copied.
    unsafe {
        if ffi::SSL_CTX_set1_group_ids(ctx, CHROME_GROUPS.as_ptr(), CHROME_GROUPS.len()) != 1
            || ffi::SSL_CTX_set_verify_algorithm_prefs(
                ctx,
                CHROME_SCHEMES.as_ptr(),
                CHROME_SCHEMES.len(),
            ) != 1
        {
            bail!("--client-profile chrome: BoringSSL refused its groups or schemes");
        }
        ffi::SSL_CTX_set_grease_enabled(ctx, 1);
        ffi::SSL_CTX_set_permute_extensions(ctx, 1);
        ffi::SSL_CTX_enable_ocsp_stapling(ctx);
        ffi::SSL_CTX_enable_signed_cert_timestamps(ctx);
    }
    Ok(())
}

/// The profile's per-connection settings (a GREASE ECH extension, as Chrome sends).
pub fn apply_ssl(ssl: &SslRef, profile: ClientProfile) {
    if profile == ClientProfile::Chrome {
        // SAFETY: a valid SSL object before its handshake.
        unsafe { ffi::SSL_set_enable_ech_grease(ssl.as_ptr(), 1) };
    }
}
