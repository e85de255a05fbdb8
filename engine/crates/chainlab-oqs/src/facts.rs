//! What liboqs is in this binary and which implementation it runs here: the build facts a
//! run records. Falcon's signing is constant-time in some implementations only, so which one
//! ran is a fact of the measurement.

use serde::Serialize;

/// The `oqs` crate release pinned in Cargo.toml (`=`); a test checks Cargo.lock agrees.
pub const CRATE_VERSION: &str = "0.11.0";

/// liboqs' build and this CPU's choice, as `info` prints them.
#[derive(Debug, Clone, Serialize)]
pub struct Facts {
    /// liboqs' version string (`OQS_version()`).
    pub liboqs_version: String,
    /// The `oqs` crate's version, which pins the vendored liboqs.
    pub crate_version: &'static str,
    /// `OQS_DIST_BUILD=ON` (oqs-sys without its `non_portable` feature, as Cargo.toml asks):
    /// every optimised implementation compiled, chosen at run time.
    pub dist_build: bool,
    /// This CPU offers AVX2 (liboqs' test, `OQS_CPU_has_extension`).
    pub cpu_avx2: bool,
    /// The implementation the AVX2-capable families (Falcon, MAYO, UOV, CROSS, ML-DSA) use
    /// here: "avx2" or "portable" (recorded, because their timing properties differ).
    pub implementation: &'static str,
}

/// liboqs' facts, or None in a build without liboqs (`crate::backend`).
pub fn facts() -> Option<Facts> {
    crate::backend::facts()
}

#[cfg(all(test, feature = "liboqs"))]
mod tests {
    use super::*;

    #[test]
    fn the_named_crate_is_the_locked_one_and_liboqs_says_its_version() {
        let lock = include_str!("../../../Cargo.lock");
        let entry = format!("name = \"oqs\"\nversion = \"{CRATE_VERSION}\"");
        assert!(
            lock.contains(&entry),
            "Cargo.lock has no oqs {CRATE_VERSION}"
        );
        let f = facts().expect("built with liboqs");
        assert_eq!(f.liboqs_version, "0.13.0");
        assert_eq!(f.implementation == "avx2", f.cpu_avx2);
    }
}
