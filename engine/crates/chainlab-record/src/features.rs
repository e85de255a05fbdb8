//! Engine features: what a campaign may ask of a stack besides its algorithms, groups and
//! compressions, each named once here with the Rust engines' stacks that have it, and the
//! options that ask for one.
//!
//! A stack's `info` lists the features it has (`features`: what Python's capability table,
//! `chainlab.axes.stack`, is checked against); an option that asks for a feature its stack
//! lacks is refused in one line naming the option and the feature (`check_serve`,
//! `check_client`, `check_seed`, `refuse`). So a new feature is one entry in `FEATURES`
//! naming the stacks that have it, and one in `SERVE_OPTIONS`, `CLIENT_OPTIONS` or
//! `TLS_OPTIONS` (both sides) for the option that asks for it: the stacks without it change
//! nothing. The Go engine, which
//! cannot read this table, lists its own features (engine/go/args.go) and refuses an option
//! it does not define as an unexpected argument.

use anyhow::bail;

use clap::ValueEnum;

use crate::args::{ClientArgs, ClientProfile, Compression, ServeArgs, SignatureImpl, TlsArgs};
use crate::record::Transport;

const OPENSSL_35: &str = "openssl-3.5";
const OPENSSL_40: &str = "openssl-4.0";
const BORINGSSL: &str = "boringssl";
const RUSTLS: &str = "rustls";

/// A feature and the stacks whose engine has it.
#[derive(Debug)]
pub struct Feature {
    /// Its name, as Python's capability table and `info` spell it.
    pub name: &'static str,
    pub stacks: &'static [&'static str],
}

/// A feature and the stacks that have it (a table row).
const fn feature(name: &'static str, stacks: &'static [&'static str]) -> Feature {
    Feature { name, stacks }
}

const OPENSSL: &[&str] = &[OPENSSL_35, OPENSSL_40];
const OPENSSL_BORING: &[&str] = &[OPENSSL_35, OPENSSL_40, BORINGSSL];
const OPENSSL_RUSTLS: &[&str] = &[OPENSSL_35, OPENSSL_40, RUSTLS];
const ALL: &[&str] = &[OPENSSL_35, OPENSSL_40, BORINGSSL, RUSTLS];

/// Every feature. Why a stack lacks one is said where its engine's capabilities are
/// (chainlab-boring and chainlab-rustls `capabilities.rs`, docs/stacks.md).
pub const FEATURES: &[Feature] = &[
    // QUIC v1 (`--transport quic`).
    feature("quic", OPENSSL),
    // Client certificates (`--client-ca`, `--cert-pki`).
    feature("client_auth", OPENSSL_BORING),
    // An intermediate as trust anchor (`--partial-chain`).
    feature("partial_chain", OPENSSL_BORING),
    // Intermediates the server does not send (`--untrusted`).
    feature("untrusted_intermediates", OPENSSL_BORING),
    // A resumption mix (`--resume-ratio`).
    feature("resumption_mix", OPENSSL_BORING),
    // `load` steps, and more than one server worker.
    feature("load", ALL),
    feature("workers", ALL),
    // Probing servers chainlab did not start (validated on the OpenSSL engine only).
    feature("targets", OPENSSL),
    // The server's own group preference (`--prefer-server-groups`).
    feature("server_group_preference", OPENSSL),
    // Seeded random bytes for counted handshakes (`--random-seed`).
    feature("seeded_random", OPENSSL),
    // liboqs signing and verifying ML-DSA (`--signature-impl liboqs`).
    feature("signature_impl_liboqs", &[RUSTLS]),
    // Merkle Tree Certificates, their cosigners besides the CA, the early experiments'
    // encoding, and the SNI stand-in for the trust-anchor retry.
    feature("mtc", ALL),
    feature("mtc_cosigners", OPENSSL_RUSTLS),
    feature("mtc_experimental", OPENSSL_RUSTLS),
    feature("mtc_retry", OPENSSL_RUSTLS),
    // The trust_anchors extension (`--trust-anchor-ids`, `--trust-anchors`).
    feature("trust_anchors", OPENSSL_BORING),
    // A browser's ClientHello (`--client-profile`).
    feature("client_profile", &[BORINGSSL]),
    // A client offering chosen signature schemes (`--sigalgs`).
    feature("client_sigalgs", ALL),
    // A connection's close read after the next attempt's timed span (`--defer-close`).
    feature("deferred_close", ALL),
];

/// An option that asks for a feature, and whether a command line gave it.
pub struct Asking<A> {
    /// The option as a refusal names it (`--transport quic`).
    pub option: &'static str,
    pub feature: &'static str,
    pub given: fn(&A) -> bool,
}

/// An option, the feature it asks for and how a command line gives it (a table row).
const fn asking<A>(
    option: &'static str,
    feature: &'static str,
    given: fn(&A) -> bool,
) -> Asking<A> {
    Asking {
        option,
        feature,
        given,
    }
}

/// What the options both sides take (`TlsArgs`) ask for.
pub const TLS_OPTIONS: &[Asking<TlsArgs>] = &[
    asking("--transport quic", "quic", |t| {
        t.transport != Transport::Tcp
    }),
    asking("--signature-impl liboqs", "signature_impl_liboqs", |t| {
        t.signature_impl != SignatureImpl::Stack
    }),
];

/// What `serve`'s own options ask for.
pub const SERVE_OPTIONS: &[Asking<ServeArgs>] = &[
    asking("--client-ca", "client_auth", |a| a.client_ca.is_some()),
    asking("--prefer-server-groups", "server_group_preference", |a| {
        a.prefer_server_groups
    }),
    asking("--trust-anchor-ids", "trust_anchors", |a| {
        a.trust_anchor_ids
    }),
    asking("--mtc-retry-standalone", "mtc_retry", |a| {
        a.mtc_retry_standalone
    }),
    asking("--random-seed", "seeded_random", |a| {
        a.random_seed.is_some()
    }),
];

/// What a client's own options (`handshake`, `load`) ask for.
pub const CLIENT_OPTIONS: &[Asking<ClientArgs>] = &[
    asking("--cert-pki", "client_auth", |a| a.cert_pki.is_some()),
    asking("--partial-chain", "partial_chain", |a| a.partial_chain),
    asking("--untrusted", "untrusted_intermediates", |a| {
        a.untrusted.is_some()
    }),
    asking("--resume-ratio", "resumption_mix", |a| {
        a.resume_ratio.is_some()
    }),
    asking("--mtc-cosigners-required", "mtc_cosigners", |a| {
        a.mtc_cosigners_required > 0
    }),
    asking("--mtc-retry", "mtc_retry", |a| a.mtc_retry),
    asking("--trust-anchors", "trust_anchors", |a| {
        a.trust_anchors.is_some()
    }),
    asking("--client-profile", "client_profile", |a| {
        a.client_profile != ClientProfile::None
    }),
];

/// Whether `stack`'s engine has `feature` (false for a name no entry has).
pub fn has(stack: &str, feature: &str) -> bool {
    FEATURES
        .iter()
        .any(|f| f.name == feature && f.stacks.contains(&stack))
}

/// The features `stack`'s engine has, in table order (its `info`'s `features`).
pub fn of(stack: &str) -> Vec<&'static str> {
    FEATURES
        .iter()
        .filter(|f| f.stacks.contains(&stack))
        .map(|f| f.name)
        .collect()
}

/// Refuses `option` on `stack` unless its engine has `feature`: one line naming both.
pub fn refuse(stack: &str, option: &str, feature: &str) -> anyhow::Result<()> {
    if has(stack, feature) {
        return Ok(());
    }
    bail!(
        "{option}: not supported by the {stack} engine (missing capability: {feature}; \
         `{} info` lists what it supports)",
        binary(stack)
    )
}

/// Refuses the first of `serve`'s options that asks for a feature `stack` lacks, or a
/// certificate compression not among `compressions` (None: it has every one).
pub fn check_serve(
    stack: &str,
    compressions: Option<&[&str]>,
    args: &ServeArgs,
) -> anyhow::Result<()> {
    check(stack, TLS_OPTIONS, &args.tls)?;
    check(stack, SERVE_OPTIONS, args)?;
    check_compression(stack, compressions, args.tls.cert_compression)
}

/// Refuses the first of a client's options that asks for a feature `stack` lacks, or a
/// certificate compression not among `compressions` (None: it has every one).
pub fn check_client(
    stack: &str,
    compressions: Option<&[&str]>,
    args: &ClientArgs,
) -> anyhow::Result<()> {
    check(stack, TLS_OPTIONS, &args.tls)?;
    check(stack, CLIENT_OPTIONS, args)?;
    check_compression(stack, compressions, args.tls.cert_compression)
}

/// Refuses `handshake`'s `--random-seed` where `stack` has no seeded random bytes.
pub fn check_seed(stack: &str, seed: Option<u64>) -> anyhow::Result<()> {
    if seed.is_some() {
        return refuse(stack, "--random-seed", "seeded_random");
    }
    Ok(())
}

fn check<A>(stack: &str, options: &[Asking<A>], args: &A) -> anyhow::Result<()> {
    for asking in options.iter().filter(|o| (o.given)(args)) {
        refuse(stack, asking.option, asking.feature)?;
    }
    Ok(())
}

fn check_compression(
    stack: &str,
    compressions: Option<&[&str]>,
    compression: Compression,
) -> anyhow::Result<()> {
    let (Some(have), Some(asked)) = (compressions, compression.to_possible_value()) else {
        return Ok(());
    };
    let name = asked.get_name();
    if compression == Compression::None || have.contains(&name) {
        return Ok(());
    }
    bail!(
        "--cert-compression {name}: not supported by the {stack} engine; allowed: none, {}",
        have.join(", ")
    )
}

/// The engine binary of a stack, as a refusal names it.
fn binary(stack: &str) -> &'static str {
    match stack {
        BORINGSSL => "chainlab-boring",
        RUSTLS => "chainlab-rustls",
        _ => "chainlab-engine",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_asks_for_a_feature_of_the_table() {
        let named = TLS_OPTIONS
            .iter()
            .map(|o| o.feature)
            .chain(SERVE_OPTIONS.iter().map(|o| o.feature))
            .chain(CLIENT_OPTIONS.iter().map(|o| o.feature));
        for feature in named {
            assert!(FEATURES.iter().any(|f| f.name == feature), "{feature}");
        }
        let mut names: Vec<_> = FEATURES.iter().map(|f| f.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FEATURES.len(), "a feature is named twice");
    }

    #[test]
    fn a_refusal_names_the_option_the_stack_and_the_feature() {
        assert!(refuse(OPENSSL_35, "--transport quic", "quic").is_ok());
        let err = refuse(RUSTLS, "--transport quic", "quic")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "--transport quic: not supported by the rustls engine (missing capability: quic; \
             `chainlab-rustls info` lists what it supports)"
        );
        assert!(refuse(BORINGSSL, "--x", "no_such_feature").is_err());
        assert!(check_seed(BORINGSSL, None).is_ok());
        assert!(check_compression(RUSTLS, Some(&["zlib"]), Compression::Zlib).is_ok());
        assert!(check_compression(RUSTLS, Some(&[]), Compression::None).is_ok());
        assert!(check_compression(OPENSSL_35, None, Compression::Zstd).is_ok());
        let err = check_compression(BORINGSSL, Some(&["zlib", "brotli"]), Compression::Zstd)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "--cert-compression zstd: not supported by the boringssl engine; allowed: none, \
             zlib, brotli"
        );
        assert!(check_seed(BORINGSSL, Some(1)).is_err());
    }

    #[test]
    fn a_stack_lists_what_it_has() {
        assert_eq!(
            of(BORINGSSL)
                .iter()
                .filter(|f| **f == "client_profile")
                .count(),
            1
        );
        assert!(!of(RUSTLS).contains(&"quic"));
        assert!(of(OPENSSL_40).contains(&"seeded_random"));
    }
}
