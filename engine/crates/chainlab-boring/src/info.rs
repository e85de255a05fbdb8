//! `info`: this engine's stack, the versions it was built from, and what it can do
//! (`capabilities`), for every result to carry and for `validate` to check against.

use crate::capabilities;

/// The exact releases pinned in Cargo.toml (the `=` requirements); a test checks that
/// Cargo.lock agrees. boring-sys vendors the BoringSSL built (engine/boringssl/build.sh).
pub const BORING_VERSION: &str = "5.4.0";
pub const BORING_SYS_VERSION: &str = "5.4.0";

pub fn run() -> anyhow::Result<()> {
    let info = serde_json::json!({
        "engine_version": env!("CARGO_PKG_VERSION"),
        "stack": capabilities::STACK,
        "record_schema": chainlab_record::record::SCHEMA,
        "option_rules": chainlab_record::options::OPTION_RULES,
        "primitives_revision": chainlab_record::primitives::METHOD_REVISION,
        "build": {
            "boring": BORING_VERSION,
            "boring_sys": BORING_SYS_VERSION,
        },
        "signature_algorithms": capabilities::SIGNATURES.iter().map(|s| serde_json::json!({
            "algorithm": s.algorithm, "scheme": s.tls_name, "implementation": "boringssl",
        })).collect::<Vec<_>>(),
        "signature_implementations": ["stack"],
        "root_only_signature_algorithms": [],
        "max_handshake_message": serde_json::Value::Null,
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
            ("boring", BORING_VERSION),
            ("boring-sys", BORING_SYS_VERSION),
        ] {
            let locked = chainlab_record::stack_cli::locked(lock, name, version);
            assert!(locked, "Cargo.lock has no {name} {version}");
        }
    }
}
