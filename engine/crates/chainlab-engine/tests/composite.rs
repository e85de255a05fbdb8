//! Composite ML-DSA as `pki` issues it, checked apart from the code that issued it: each
//! certificate's signature verifies under its issuer's composite key (both components, over
//! the M' rebuilt here from the certificate's TBS), a flipped bit in either component fails
//! it, and the draft's published test vectors (`src/testvectors.json` of
//! lamps-wg/draft-composite-sigs) pass: their signatures verify and their private keys give
//! their public keys byte for byte. The vectors of the four algorithms chainlab issues are
//! kept, unchanged, in `tests/data/composite-testvectors.json` (its `source` names the
//! draft's commit); `CHAINLAB_COMPOSITE_VECTORS` points at another copy (the whole file:
//! the algorithms chainlab does not issue are passed over).

use std::path::PathBuf;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chainlab_composite::{encoding, verify, CompositeKey};
use chainlab_engine::pki::composite::OpenSsl;
use chainlab_test_support::engine::pki;
use chainlab_test_support::TempDir;
use x509_parser::prelude::*;

fn certificates(pem: &[u8]) -> Vec<Vec<u8>> {
    x509_parser::pem::Pem::iter_from_buffer(pem)
        .map(|p| p.unwrap().contents)
        .collect()
}

#[test]
fn every_composite_certificate_verifies_under_its_issuer_and_a_flipped_bit_fails() {
    let dir = TempDir::new("composite-pki");
    for chain in [
        "MLDSA65-ECDSA-P256-SHA512,MLDSA44-ECDSA-P256-SHA256",
        "MLDSA87-ECDSA-P384-SHA512,MLDSA65-Ed25519-SHA512,ML-DSA-65",
        "ML-DSA-44,MLDSA65-ECDSA-P256-SHA512,MLDSA65-ECDSA-P256-SHA512,ECDSA-P256",
    ] {
        let h = pki(&dir, &chain.replace(',', "-"), chain, "composite");
        let full = certificates(&std::fs::read(h.join("chain-full.pem")).unwrap());
        // Leaf first: each certificate's issuer is the next one (the root its own).
        for (i, der) in full.iter().enumerate() {
            let issuer_der = full.get(i + 1).unwrap_or(der);
            let (_, cert) = X509Certificate::from_der(der).unwrap();
            let (_, issuer) = X509Certificate::from_der(issuer_der).unwrap();
            let spki = issuer.tbs_certificate.subject_pki.raw;
            let Some((algorithm, public)) = encoding::read_spki(spki).unwrap() else {
                continue; // a pure issuer: OpenSSL's own certificates, checked elsewhere
            };
            let sig_oid = cert.signature_algorithm.algorithm.to_id_string();
            assert_eq!(sig_oid, algorithm.oid, "{chain}: position {i}");
            let tbs = cert.tbs_certificate.as_ref();
            let signature = cert.signature_value.data.as_ref();
            assert!(
                verify(&OpenSsl, algorithm, &public, tbs, b"", signature),
                "{chain}: position {i}'s {} signature",
                algorithm.name
            );
            let (mldsa_len, total) = (algorithm.mldsa.signature_len(), signature.len());
            for flip in [10, mldsa_len + 5, total - 1] {
                let mut bad = signature.to_vec();
                bad[flip] ^= 1;
                assert!(
                    !verify(&OpenSsl, algorithm, &public, tbs, b"", &bad),
                    "{chain}: a flipped bit at {flip} of {total} verified"
                );
            }
        }
        // The leaf's key file is the draft's PKCS#8 and gives the certificate's key.
        let leaf_key = std::fs::read(h.join("leaf.key")).unwrap();
        let leaf_key = x509_parser::pem::Pem::iter_from_buffer(&leaf_key)
            .next()
            .unwrap()
            .unwrap();
        let leaf = &full[0];
        let (_, cert) = X509Certificate::from_der(leaf).unwrap();
        if let Some(key) = CompositeKey::from_pkcs8(&OpenSsl, &leaf_key.contents).unwrap() {
            let (_, public) = encoding::read_spki(cert.tbs_certificate.subject_pki.raw)
                .unwrap()
                .unwrap();
            assert_eq!(key.public, public, "{chain}: leaf key and certificate");
        }
    }
}

fn vectors() -> serde_json::Value {
    let path = std::env::var_os("CHAINLAB_COMPOSITE_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/composite-testvectors.json")
        });
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("the test vectors are JSON")
}

#[test]
fn the_drafts_test_vectors_verify_and_their_private_keys_give_their_public_keys() {
    let v = vectors();
    let b64 = |x: &serde_json::Value| STANDARD.decode(x.as_str().unwrap()).unwrap();
    let (m, ctx) = (b64(&v["m"]), b64(&v["ctx"]));
    let mut checked = 0;
    for t in v["tests"].as_array().unwrap() {
        let id = t["tcId"].as_str().unwrap();
        let Ok(algorithm) = chainlab_composite::lookup(id) else {
            continue; // one chainlab does not issue (RSA, brainpool, Ed448, pure ML-DSA)
        };
        let (pk, sk) = (b64(&t["pk"]), b64(&t["sk"]));
        let key = CompositeKey::from_private(&OpenSsl, algorithm, &sk).unwrap();
        assert_eq!(key.public, pk, "{id}: the public key of its private key");
        let from_pkcs8 = CompositeKey::from_pkcs8(&OpenSsl, &b64(&t["sk_pkcs8"]))
            .unwrap()
            .unwrap();
        assert_eq!(from_pkcs8.public, pk, "{id}: its PKCS#8");
        assert!(
            verify(&OpenSsl, algorithm, &pk, &m, b"", &b64(&t["s"])),
            "{id}: s"
        );
        assert!(
            verify(&OpenSsl, algorithm, &pk, &m, &ctx, &b64(&t["sWithContext"])),
            "{id}: sWithContext"
        );
        assert!(
            !verify(&OpenSsl, algorithm, &pk, &m, &ctx, &b64(&t["s"])),
            "{id}: ctx"
        );
        // Its certificate (x5c) is signed by itself: verifies as our certificates do.
        let x5c = b64(&t["x5c"]);
        let (_, cert) = X509Certificate::from_der(&x5c).unwrap();
        let sig = cert.signature_value.data.as_ref();
        assert!(
            verify(
                &OpenSsl,
                algorithm,
                &pk,
                cert.tbs_certificate.as_ref(),
                b"",
                sig
            ),
            "{id}: its self-signed certificate"
        );
        // And what we sign with its key verifies.
        let ours = key.sign(b"chainlab", b"").unwrap();
        assert!(
            verify(&OpenSsl, algorithm, &pk, b"chainlab", b"", &ours),
            "{id}: ours"
        );
        checked += 1;
    }
    assert_eq!(
        checked,
        chainlab_composite::ALGORITHMS.len(),
        "every algorithm had a vector"
    );
}
