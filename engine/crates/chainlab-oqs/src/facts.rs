//! What liboqs is in this binary and which implementation it runs here: the build facts a
//! run records. Falcon's signing is constant-time in some implementations only, so which one
//! ran is a fact of the measurement.

pub use crate::backend::{Facts, CRATE_VERSION};

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
