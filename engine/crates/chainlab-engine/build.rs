//! Links the compression libraries the static OpenSSL was configured with (enable-zlib,
//! enable-brotli, enable-zstd) and embeds the OpenSSL build facts written by
//! engine/openssl/build.sh, so every record can name the exact library and patch set.

use std::path::PathBuf;

fn main() {
    let libs = concat!(env!("CARGO_MANIFEST_DIR"), "/../../openssl/link-libs");
    println!("cargo:rerun-if-changed={libs}");
    let list = std::fs::read_to_string(libs).expect("engine/openssl/link-libs");
    for lib in list
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        println!("cargo:rustc-link-lib=dylib={}", lib.trim());
    }
    let dir = PathBuf::from(
        std::env::var("OPENSSL_DIR").expect("OPENSSL_DIR is set by engine/.cargo/config.toml"),
    );
    let facts = dir.join("chainlab-openssl.json");
    println!("cargo:rerun-if-changed={}", facts.display());
    println!("cargo:rerun-if-env-changed=OPENSSL_DIR");
    let json = std::fs::read_to_string(&facts).unwrap_or_else(|e| {
        panic!(
            "{} is missing ({e}): build OpenSSL first with engine/openssl/build.sh (or `make engine`)",
            facts.display()
        )
    });
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("openssl-build.json"), json).expect("OUT_DIR is writable");
}
