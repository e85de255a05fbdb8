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
    let build = serde_json::json!({
        "rustls": RUSTLS_VERSION,
        "aws_lc_rs": AWS_LC_RS_VERSION,
        "rustls_post_quantum": RUSTLS_POST_QUANTUM_VERSION,
        // Which liboqs code ran (Falcon's timing properties differ between them).
        "liboqs": format!("{} ({})", liboqs.liboqs_version, liboqs.implementation),
    });
    chainlab_record::stack_cli::print_info(chainlab_record::stack_cli::StackInfo {
        stack: capabilities::STACK,
        build,
        signatures: capabilities::SIGNATURES
            .iter()
            .map(|s| (s.algorithm, s.tls_name, s.implementation))
            .collect(),
        signature_implementations: capabilities::SIGNATURE_IMPLEMENTATIONS,
        root_only: chainlab_oqs::algorithms::only_liboqs()
            .filter_map(|a| capabilities::root_only(a).map(|why| (a.name, why)))
            .collect(),
        max_handshake_message: Some(capabilities::MAX_HANDSHAKE_MESSAGE),
        groups: capabilities::GROUPS.iter().map(|g| g.names[0]).collect(),
        cert_compressions: capabilities::CERT_COMPRESSIONS,
        liboqs: Some(serde_json::to_value(liboqs)?),
    })
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
