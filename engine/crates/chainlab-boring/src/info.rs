//! `info`: this engine's stack, the versions it was built from, and what it can do
//! (`capabilities`), for every result to carry and for `validate` to check against.

use crate::capabilities;

/// The exact releases pinned in Cargo.toml (the `=` requirements); a test checks that
/// Cargo.lock agrees. boring-sys vendors the BoringSSL built (engine/boringssl/build.sh).
pub const BORING_VERSION: &str = "5.4.0";
pub const BORING_SYS_VERSION: &str = "5.4.0";

pub fn run() -> anyhow::Result<()> {
    chainlab_record::stack_cli::print_info(chainlab_record::stack_cli::StackInfo {
        stack: capabilities::STACK,
        build: serde_json::json!({"boring": BORING_VERSION, "boring_sys": BORING_SYS_VERSION}),
        signatures: capabilities::SIGNATURES
            .iter()
            .map(|s| (s.algorithm, s.tls_name, "boringssl"))
            .collect(),
        signature_implementations: &["stack"],
        root_only: Vec::new(),
        max_handshake_message: None,
        groups: capabilities::GROUPS.iter().map(|g| g.names[0]).collect(),
        cert_compressions: capabilities::CERT_COMPRESSIONS,
        liboqs: None,
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
            ("boring", BORING_VERSION),
            ("boring-sys", BORING_SYS_VERSION),
        ] {
            let locked = chainlab_record::stack_cli::locked(lock, name, version);
            assert!(locked, "Cargo.lock has no {name} {version}");
        }
    }
}
