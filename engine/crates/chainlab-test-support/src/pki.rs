//! The `pki` subcommand's tests: run it, read its files, check them with the project's
//! `openssl` binary (verification, extension text) and the `openssl` crate (key and
//! certificate match).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use openssl::pkey::PKey;
use openssl::x509::X509;
use serde_json::Value;

/// `chainlab-engine pki <args>`, its output.
pub fn pki(args: &[&str]) -> Output {
    Command::new(crate::engine::engine())
        .arg("pki")
        .args(args)
        .output()
        .unwrap()
}

/// Runs `pki` and returns the parsed stdout summary; panics with stderr on failure.
pub fn generate(out: &Path, chain: &str, seed: &str) -> Value {
    let output = pki(&[
        "--chain",
        chain,
        "--out",
        out.to_str().unwrap(),
        "--seed",
        seed,
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "pki --chain {chain} failed: {stderr}"
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        stdout.lines().count(),
        1,
        "summary must be one line: {stdout}"
    );
    serde_json::from_str(&stdout).unwrap()
}

/// The project's OpenSSL command (engine/.cargo/config.toml sets OPENSSL_DIR for cargo).
pub fn openssl_bin() -> PathBuf {
    let dir = std::env::var_os("OPENSSL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.openssl"));
    dir.join("bin/openssl")
}

pub fn openssl(dir: &Path, args: &[&str]) -> (bool, String) {
    let output = Command::new(openssl_bin())
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), text)
}

/// `openssl verify` of leaf.pem against ca.pem and intermediates.pem, plain and strict (the
/// strict run also checks the serverAuth purpose, the DNS name and the IP addresses).
/// `-untrusted` is left out when intermediates.pem is empty: openssl rejects an empty file.
pub fn assert_verifies(dir: &Path) {
    let mut base = vec!["verify", "-CAfile", "ca.pem"];
    if fs::metadata(dir.join("intermediates.pem")).unwrap().len() > 0 {
        base.extend(["-untrusted", "intermediates.pem"]);
    }
    let strict = [
        "-x509_strict",
        "-purpose",
        "sslserver",
        "-verify_hostname",
        "localhost",
        "-verify_ip",
        "127.0.0.1",
    ];
    for extra in [&[][..], &strict[..]] {
        let args: Vec<&str> = base
            .iter()
            .chain(extra)
            .copied()
            .chain(["leaf.pem"])
            .collect();
        let (ok, text) = openssl(dir, &args);
        assert!(
            ok && text.trim() == "leaf.pem: OK",
            "openssl {args:?} in {}: {text}",
            dir.display()
        );
    }
}

pub fn manifest(dir: &Path) -> Value {
    serde_json::from_slice(&fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

pub fn cert(dir: &Path, file: &str) -> X509 {
    X509::from_pem(&fs::read(dir.join(file)).unwrap()).unwrap()
}

pub fn certs(dir: &Path, file: &str) -> Vec<X509> {
    X509::stack_from_pem(&fs::read(dir.join(file)).unwrap()).unwrap()
}

/// Every key file holds the private key of the certificate beside it.
pub fn assert_keys_match(dir: &Path) {
    for entry in manifest(dir)["certificates"].as_array().unwrap() {
        let file = entry["file"].as_str().unwrap();
        let key = PKey::private_key_from_pem(
            &fs::read(dir.join(entry["key_file"].as_str().unwrap())).unwrap(),
        )
        .unwrap();
        assert!(
            cert(dir, file).public_key().unwrap().public_eq(&key),
            "{file}: key does not match"
        );
    }
}

/// A file of a hierarchy directory as text.
pub fn read(dir: &Path, file: &str) -> String {
    fs::read_to_string(dir.join(file)).unwrap()
}
