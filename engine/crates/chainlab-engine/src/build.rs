//! The facts of the OpenSSL this engine was built against (engine/openssl/build.sh), and the
//! stack name they make: what `info`, `pki`'s manifest and the ready line carry.

use std::sync::OnceLock;

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
