//! `info`: the build facts every result must carry (OpenSSL version, patches, algorithms).

use crate::cli::InfoArgs;

/// JSON written by engine/openssl/build.sh next to the OpenSSL it built.
pub const OPENSSL_BUILD: &str = include_str!(concat!(env!("OUT_DIR"), "/openssl-build.json"));

pub fn run(_args: &InfoArgs) -> anyhow::Result<()> {
    let build: serde_json::Value = serde_json::from_str(OPENSSL_BUILD)?;
    let info = serde_json::json!({
        "engine_version": env!("CARGO_PKG_VERSION"),
        "record_schema": crate::record::SCHEMA,
        "openssl_version_text": openssl::version::version(),
        "openssl_build": build,
        "algorithms": crate::algorithms::ALGORITHMS,
        "hardware_counters": crate::cpu::hardware_counters(),
    });
    println!("{}", serde_json::to_string_pretty(&info)?);
    Ok(())
}
