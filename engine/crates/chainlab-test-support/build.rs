//! With the `openssl` feature, links the libraries the static OpenSSL needs
//! (engine/openssl/link-libs), as chainlab-engine's build script does: a test binary that
//! uses this crate's OpenSSL helpers may reference nothing of the engine's library.

fn main() {
    if std::env::var_os("CARGO_FEATURE_OPENSSL").is_none() {
        return;
    }
    let libs = concat!(env!("CARGO_MANIFEST_DIR"), "/../../openssl/link-libs");
    println!("cargo:rerun-if-changed={libs}");
    let list = std::fs::read_to_string(libs).expect("engine/openssl/link-libs");
    for lib in list
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        println!("cargo:rustc-link-lib=dylib={}", lib.trim());
    }
}
