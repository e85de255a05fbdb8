//! `info`: this engine's stack, the versions it was built from, and what it can do
//! (`capabilities`), for every result to carry and for `validate` to check against.

use crate::capabilities;

/// The exact releases pinned in Cargo.toml (the `=` requirements); a test checks that
/// Cargo.lock agrees.
pub const RUSTLS_VERSION: &str = "0.23.46";
pub const AWS_LC_RS_VERSION: &str = "1.19.0";
pub const RUSTLS_POST_QUANTUM_VERSION: &str = "0.2.4";

pub fn run() -> anyhow::Result<()> {
    // This engine always links liboqs (its Cargo.toml asks for chainlab-oqs' feature).
    let liboqs = chainlab_oqs::facts::facts().expect("chainlab-rustls is built with liboqs");
    let info = serde_json::json!({
        "engine_version": env!("CARGO_PKG_VERSION"),
        "stack": capabilities::STACK,
        "record_schema": chainlab_record::record::SCHEMA,
        "option_rules": chainlab_record::options::OPTION_RULES,
        "primitives_revision": chainlab_record::primitives::METHOD_REVISION,
        "build": {
            "rustls": RUSTLS_VERSION,
            "aws_lc_rs": AWS_LC_RS_VERSION,
            "rustls_post_quantum": RUSTLS_POST_QUANTUM_VERSION,
            // Which liboqs code ran (Falcon's timing properties differ between them).
            "liboqs": format!("{} ({})", liboqs.liboqs_version, liboqs.implementation),
        },
        "signature_algorithms": capabilities::SIGNATURES.iter().map(|s| serde_json::json!({
            "algorithm": s.algorithm, "scheme": s.tls_name, "implementation": s.implementation,
        })).collect::<Vec<_>>(),
        "signature_implementations": capabilities::SIGNATURE_IMPLEMENTATIONS,
        "root_only_signature_algorithms": chainlab_oqs::algorithms::only_liboqs()
            .filter_map(|a| capabilities::root_only(a).map(|why| serde_json::json!({
                "algorithm": a.name, "reason": why,
            })))
            .collect::<Vec<_>>(),
        "max_handshake_message": capabilities::MAX_HANDSHAKE_MESSAGE,
        "liboqs": liboqs,
        "groups": capabilities::GROUPS.iter().map(|g| g.names[0]).collect::<Vec<_>>(),
        "cert_compressions": capabilities::CERT_COMPRESSIONS,
        "missing_features": capabilities::MISSING_FEATURES,
        "hardware_counters": chainlab_record::cpu::hardware_counters(),
    });
    chainlab_record::output::print_line(&serde_json::to_string_pretty(&info)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The versions `info` names are the ones Cargo.lock holds.
    #[test]
    fn named_versions_are_the_locked_ones() {
        let lock = include_str!("../../../Cargo.lock");
        for (name, version) in [
            ("rustls", RUSTLS_VERSION),
            ("aws-lc-rs", AWS_LC_RS_VERSION),
            ("rustls-post-quantum", RUSTLS_POST_QUANTUM_VERSION),
        ] {
            let locked = chainlab_record::stack_cli::locked(lock, name, version);
            assert!(locked, "Cargo.lock has no {name} {version}");
        }
    }
}
