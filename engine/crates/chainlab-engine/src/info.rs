//! `info`: the build facts every result must carry (OpenSSL version, patches, algorithms).

use std::sync::OnceLock;

use crate::cli::InfoArgs;

/// JSON written by engine/openssl/build.sh next to the OpenSSL it built.
pub const OPENSSL_BUILD: &str = include_str!(concat!(env!("OUT_DIR"), "/openssl-build.json"));

/// This engine's stack name, "openssl-<major>.<minor>" of the OpenSSL it links (the name
/// campaigns use for it, and every record carries).
pub fn stack() -> &'static str {
    static STACK: OnceLock<String> = OnceLock::new();
    STACK.get_or_init(|| {
        let build: serde_json::Value = serde_json::from_str(OPENSSL_BUILD).unwrap_or_default();
        let version = build["openssl_version"].as_str().unwrap_or("unknown");
        let series: Vec<&str> = version.split('.').take(2).collect();
        format!("openssl-{}", series.join("."))
    })
}

pub fn run(_args: &InfoArgs) -> anyhow::Result<()> {
    let build: serde_json::Value = serde_json::from_str(OPENSSL_BUILD)?;
    let info = serde_json::json!({
        "engine_version": env!("CARGO_PKG_VERSION"),
        "stack": stack(),
        "record_schema": crate::record::SCHEMA,
        "option_rules": chainlab_record::options::OPTION_RULES,
        "primitives_revision": chainlab_record::primitives::METHOD_REVISION,
        "pki_revision": crate::pki::REVISION,
        "openssl_version_text": openssl::version::version(),
        "openssl_build": build,
        "algorithms": &*crate::algorithms::ALGORITHMS,
        "liboqs": chainlab_oqs::facts::facts(),
        "hardware_counters": crate::cpu::hardware_counters(),
        // `pki --mtc-batch`'s bounds (Python's chainlab.campaign.certificates checks them).
        "mtc": {
            "min_batch": chainlab_mtc::issue::MIN_BATCH,
            "max_batch": chainlab_mtc::issue::MAX_BATCH,
            "encodings": chainlab_mtc::Encoding::ALL
                .iter()
                .map(|e| (e.name(), e.proof_oid()))
                .collect::<std::collections::BTreeMap<_, _>>(),
        },
    });
    chainlab_record::output::print_line(&serde_json::to_string_pretty(&info)?)?;
    Ok(())
}
