//! `info`: the build facts every result must carry (OpenSSL version, patches, algorithms).

use crate::cli::InfoArgs;

pub fn run(_args: &InfoArgs) -> anyhow::Result<()> {
    let build: serde_json::Value = serde_json::from_str(crate::build::OPENSSL_BUILD)?;
    let info = serde_json::json!({
        "engine_version": env!("CARGO_PKG_VERSION"),
        "stack": crate::build::stack(),
        "record_schema": crate::record::SCHEMA,
        "option_rules": chainlab_record::options::OPTION_RULES,
        "primitives_revision": chainlab_record::primitives::METHOD_REVISION,
        "pki_revision": crate::pki::REVISION,
        "openssl_version_text": openssl::version::version(),
        "openssl_build": build,
        "algorithms": &*crate::algorithms::ALGORITHMS,
        "liboqs": chainlab_oqs::facts::facts(),
        "features": chainlab_record::features::of(crate::build::stack()),
        "hardware_counters": crate::cpu::hardware_counters(),
        // `pki --mtc-batch`'s and `--mtc-renewals`' bounds (Python's chainlab.axes.credential
        // checks them).
        "mtc": {
            "min_batch": chainlab_mtc::issue::MIN_BATCH,
            "max_batch": chainlab_mtc::issue::MAX_BATCH,
            "max_renewals": chainlab_mtc::issue::MAX_LANDMARKS,
            "encodings": chainlab_mtc::Encoding::ALL
                .iter()
                .map(|e| (e.name(), e.proof_oid()))
                .collect::<std::collections::BTreeMap<_, _>>(),
        },
    });
    chainlab_record::output::print_line(&serde_json::to_string_pretty(&info)?)?;
    Ok(())
}
