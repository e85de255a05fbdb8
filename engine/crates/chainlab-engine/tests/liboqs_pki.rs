//! `pki` hierarchies with liboqs algorithms (Falcon, MAYO, UOV, CROSS), checked independently
//! of the engine: certificates parsed by x509-parser, liboqs signatures verified by the `oqs`
//! crate through an OID table written here from the OQS provider's ALGORITHMS.md (not the
//! engine's), OpenSSL signatures by the openssl crate; a flipped bit must fail each check.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

// Linked for the OpenSSL build's own link flags (brotli, zstd), which its build script adds.
extern crate chainlab_engine;

use oqs::sig::{Algorithm, Sig};
use x509_parser::prelude::*;

/// The OQS provider's OIDs (ALGORITHMS.md, oqs-provider commit 00fde33).
const OIDS: &[(&str, Algorithm, &str)] = &[
    ("1.3.9999.3.11", Algorithm::Falcon512, "Falcon-512"),
    ("1.3.9999.3.14", Algorithm::Falcon1024, "Falcon-1024"),
    ("1.3.9999.8.1.3", Algorithm::Mayo1, "MAYO-1"),
    ("1.3.9999.8.2.3", Algorithm::Mayo2, "MAYO-2"),
    ("1.3.9999.9.1.1", Algorithm::UovOvIs, "UOV-Is"),
    ("1.3.9999.9.2.1", Algorithm::UovOvIp, "UOV-Ip"),
    ("1.3.9999.9.6.1", Algorithm::UovOvIpPkc, "UOV-Ip-pkc"),
    (
        "1.3.6.1.4.1.62245.2.1.11.2.2",
        Algorithm::CrossRsdpg128Fast,
        "CROSS-RSDPG-128-fast",
    ),
    (
        "1.3.6.1.4.1.62245.2.1.12.2.2",
        Algorithm::CrossRsdpg128Small,
        "CROSS-RSDPG-128-small",
    ),
];

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn pki(out: &Path, chain: &str) {
    let output = Command::new(env!("CARGO_BIN_EXE_chainlab-engine"))
        .args(["pki", "--chain", chain, "--seed", "liboqs", "--out"])
        .arg(out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "pki --chain {chain}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn der_of(dir: &Path, role: &str) -> Vec<u8> {
    let pem = fs::read(dir.join(format!("{role}.pem"))).unwrap();
    openssl::x509::X509::from_pem(&pem)
        .unwrap()
        .to_der()
        .unwrap()
}

/// True when `cert`'s signature verifies under `issuer`'s key, by liboqs or by OpenSSL (a
/// certificate that no longer parses does not verify).
fn signature_verifies(cert_der: &[u8], issuer_der: &[u8]) -> bool {
    let Ok((_, cert)) = X509Certificate::from_der(cert_der) else {
        return false;
    };
    let (_, issuer) = X509Certificate::from_der(issuer_der).unwrap();
    let oid = cert.signature_algorithm.algorithm.to_id_string();
    match OIDS.iter().find(|(o, _, _)| *o == oid) {
        Some((_, algorithm, _)) => {
            oqs::init();
            let sig = Sig::new(*algorithm).unwrap();
            let key = issuer.public_key().subject_public_key.data.as_ref();
            let (Some(pk), Some(signature)) = (
                sig.public_key_from_bytes(key),
                sig.signature_from_bytes(cert.signature_value.data.as_ref()),
            ) else {
                return false;
            };
            sig.verify(cert.tbs_certificate.as_ref(), signature, pk)
                .is_ok()
        }
        None => {
            let Ok(cert) = openssl::x509::X509::from_der(cert_der) else {
                return false;
            };
            let issuer = openssl::x509::X509::from_der(issuer_der).unwrap();
            cert.verify(&issuer.public_key().unwrap()).unwrap_or(false)
        }
    }
}

fn flipped(der: &[u8], at: usize) -> Vec<u8> {
    let mut out = der.to_vec();
    out[at] ^= 0x01;
    out
}

/// Each certificate verifies under its issuer (the root under itself); a bit flipped in the
/// signed part or in the signature does not. Each liboqs key file signs what its
/// certificate's key verifies.
fn assert_hierarchy(dir: &Path, roles: &[&str]) {
    for (i, role) in roles.iter().enumerate() {
        let der = der_of(dir, role);
        let issuer = der_of(dir, roles[i.saturating_sub(1)]);
        assert!(signature_verifies(&der, &issuer), "{dir:?} {role}");
        let (_, cert) = X509Certificate::from_der(&der).unwrap();
        let tbs_at = cert.tbs_certificate.as_ref().as_ptr() as usize - der.as_ptr() as usize;
        assert!(
            !signature_verifies(&flipped(&der, tbs_at + 60), &issuer),
            "{role}: TBS flip"
        );
        assert!(
            !signature_verifies(&flipped(&der, der.len() - 3), &issuer),
            "{role}: sig flip"
        );
        let key_oid = cert.public_key().algorithm.algorithm.to_id_string();
        if let Some((_, algorithm, _)) = OIDS.iter().find(|(o, _, _)| *o == key_oid) {
            assert_key_file_matches(
                dir,
                role,
                *algorithm,
                cert.public_key().subject_public_key.data.as_ref(),
            );
        }
    }
}

/// The key file's PKCS#8 holds secret || public; the secret signs what the certificate's
/// public key verifies.
fn assert_key_file_matches(dir: &Path, role: &str, algorithm: Algorithm, public: &[u8]) {
    let pem = fs::read_to_string(dir.join(format!("{role}.key"))).unwrap();
    let (_, block) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).unwrap();
    assert_eq!(block.label, "PRIVATE KEY");
    let sig = Sig::new(algorithm).unwrap();
    // PrivateKeyInfo: SEQUENCE { INTEGER 0, AlgorithmIdentifier, OCTET STRING key }.
    let contents = &block.contents;
    let key_len = sig.length_secret_key() + sig.length_public_key();
    let octets = &contents[contents.len() - key_len..];
    assert_eq!(
        &octets[sig.length_secret_key()..],
        public,
        "{role}: the public half"
    );
    let secret = sig
        .secret_key_from_bytes(&octets[..sig.length_secret_key()])
        .unwrap();
    let signature = sig.sign(b"key check", secret).unwrap();
    let pk = sig.public_key_from_bytes(public).unwrap();
    assert!(
        sig.verify(b"key check", &signature, pk).is_ok(),
        "{role}: key and certificate"
    );
}

#[test]
fn every_liboqs_algorithm_at_every_position_verifies_independently() {
    let scratch =
        Scratch(std::env::temp_dir().join(format!("chainlab-liboqs-{}", std::process::id())));
    for (_, _, name) in OIDS {
        // Root, intermediate under ML-DSA, intermediate issuing, leaf; then mixed with
        // ECDSA and SLH-DSA on either side, and alone (self-signed).
        for (i, chain) in [
            format!("{name},ML-DSA-44,{name},{name}"),
            format!("ECDSA-P256,{name},SLH-DSA-SHA2-128f"),
            format!("SLH-DSA-SHA2-128f,ECDSA-P256,{name}"),
            name.to_string(),
        ]
        .iter()
        .enumerate()
        {
            let dir = scratch.0.join(format!("{name}-{i}"));
            pki(&dir, chain);
            let roles: &[&str] = match chain.split(',').count() {
                4 => &["root", "int1", "int2", "leaf"],
                3 => &["root", "int1", "leaf"],
                _ => &["leaf"],
            };
            assert_hierarchy(&dir, roles);
        }
    }
}
