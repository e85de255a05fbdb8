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
//! (`net/ssl/cert_compression.cc`); ALPS for `h2` on its new code point (0x44cd), and the
//! trust_anchors extension with the 28 IDs Chromium 156 requests by default (`--trust-
//! anchors` replaces them). Checked against the ClientHello of Debian's Chromium
//! 156.0.8078.108 (headless) captured on loopback: the same extensions, groups, key shares
//! and schemes (tests/test_chrome_profile.py). Not reproduced: a session ticket to resume,
//! the HTTP/2 settings ALPS would carry once a server agrees to it, and anything an HTTP
//! stack adds after the handshake.

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

/// The trust anchor IDs Chromium 156 requests by default, in its order, as captured from
/// Debian's Chromium 156.0.8078.108 (the roots of Chrome's root store that have IDs).
pub const CHROME_TRUST_ANCHORS: [&str; 28] = [
    "44947.2.1",
    "44947.2.6",
    "44947.2.13",
    "44947.2.14",
    "44947.2.15",
    "44947.2.18",
    "44947.2.19",
    "44947.2.20",
    "52580.200109.1.7",
    "52580.200109.1.8",
    "52580.200109.1.9",
    "52580.200109.1.10",
    "52580.200109.1.11",
    "52580.200109.1.12",
    "52580.200109.1.13",
    "52580.200109.1.18",
    "52580.200109.1.19",
    "11129.9.1",
    "11129.9.4",
    "11129.9.5",
    "11129.9.6",
    "11129.9.7",
    "11129.9.8",
    "11129.9.10",
    "11129.9.11",
    "11129.9.12",
    "11129.9.13",
    "11129.9.15",
];

/// ALPS' protocol as Chrome offers it (`h2`).
const CHROME_ALPS: &[u8] = b"h2";

/// The trust anchor IDs' list as the extension carries it.
fn chrome_trust_anchor_list() -> anyhow::Result<Vec<u8>> {
    let ids: Vec<String> = CHROME_TRUST_ANCHORS.iter().map(|s| s.to_string()).collect();
    chainlab_mtc::proof::trust_anchor_list(&ids)
}

/// How many trust anchor IDs the profile requests when `--trust-anchors` does not say.
pub fn default_requested(args: &ClientArgs) -> Option<u64> {
    (args.client_profile == ClientProfile::Chrome && args.trust_anchors.is_none())
        .then_some(CHROME_TRUST_ANCHORS.len() as u64)
}

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
pub fn apply(builder: &mut SslContextBuilder, args: &ClientArgs) -> anyhow::Result<()> {
    if args.client_profile == ClientProfile::None {
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
        if default_requested(args).is_some() {
            let wire = chrome_trust_anchor_list()?;
            if ffi::SSL_CTX_set1_requested_trust_anchors(ctx, wire.as_ptr(), wire.len()) != 1 {
                bail!("--client-profile chrome: BoringSSL refused Chrome's trust anchor IDs");
            }
        }
        ffi::SSL_CTX_set_grease_enabled(ctx, 1);
        ffi::SSL_CTX_set_permute_extensions(ctx, 1);
        ffi::SSL_CTX_enable_ocsp_stapling(ctx);
        ffi::SSL_CTX_enable_signed_cert_timestamps(ctx);
    }
    Ok(())
}

/// The profile's per-connection settings (a GREASE ECH extension and ALPS, as Chrome sends).
pub fn apply_ssl(ssl: &SslRef, profile: ClientProfile) -> anyhow::Result<()> {
    if profile == ClientProfile::Chrome {
        // SAFETY: a valid SSL object before its handshake; the protocol is copied (and no
        // settings: Chrome's HTTP/2 settings go only to a server that agrees to ALPS).
        let added = unsafe {
            ffi::SSL_set_enable_ech_grease(ssl.as_ptr(), 1);
            ffi::SSL_set_alps_use_new_codepoint(ssl.as_ptr(), 1);
            ffi::SSL_add_application_settings(
                ssl.as_ptr(),
                CHROME_ALPS.as_ptr(),
                CHROME_ALPS.len(),
                std::ptr::null(),
                0,
            )
        };
        if added != 1 {
            bail!("--client-profile chrome: BoringSSL refused ALPS for h2");
        }
    }
    Ok(())
}
