//! `chainlab-engine pki`, run as a process and checked with the project's `openssl` binary
//! (verification, extension text) and the openssl crate (DER sizes, key/certificate match).
//!
//! Coverage of (algorithm, position): every algorithm X is generated as `X,ML-DSA-44,X,X`, so
//! X is a root (self-signed, issuing ML-DSA), an intermediate (issued by ML-DSA, issuing X)
//! and a leaf. That is the least signing an X-rooted hierarchy allows: three X signatures,
//! which matters for the slow SLH-DSA "s" sets (about 1-2 s each here).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use chainlab_engine::algorithms::{Family, Provider, ALGORITHMS};
use chainlab_test_support::pki::{
    assert_keys_match, assert_verifies, cert, certs, generate, manifest, openssl, read,
};
use chainlab_test_support::TempDir;

/// Generates `X,ML-DSA-44,X,X` for each algorithm and verifies it.
fn assert_every_position(algorithms: &[&str]) {
    assert!(!algorithms.is_empty());
    let scratch = TempDir::new(&format!("positions-{}", algorithms[0]));
    for name in algorithms {
        let dir = scratch.join(name);
        let chain = format!("{name},ML-DSA-44,{name},{name}");
        generate(&dir, &chain, "positions");
        assert_verifies(&dir);
        assert_keys_match(&dir);
        let manifest = manifest(&dir);
        let by_role = |role: &str, field: &str| -> String {
            let entry = manifest["certificates"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["role"] == role);
            entry.unwrap()[field].as_str().unwrap().to_owned()
        };
        assert_eq!(by_role("root", "algorithm"), *name);
        assert_eq!(by_role("root", "signed_by"), *name);
        assert_eq!(by_role("int1", "signed_by"), *name);
        assert_eq!(by_role("int2", "algorithm"), *name);
        assert_eq!(by_role("int2", "signed_by"), "ML-DSA-44");
        assert_eq!(by_role("leaf", "algorithm"), *name);
        assert_eq!(by_role("leaf", "signed_by"), *name);
    }
}

fn algorithm_names(
    filter: impl Fn(&chainlab_engine::algorithms::Algorithm) -> bool,
) -> Vec<&'static str> {
    ALGORITHMS
        .iter()
        .filter(|a| filter(a))
        .map(|a| a.name)
        .collect()
}

#[test]
fn ml_dsa_and_classical_algorithms_verify_at_every_position() {
    let algorithms =
        algorithm_names(|a| a.family != Family::SlhDsa && a.provider == Provider::OpenSsl);
    assert_eq!(algorithms.len(), 8);
    assert_every_position(&algorithms);
}

#[test]
fn slh_dsa_sha2_sets_verify_at_every_position() {
    let algorithms = algorithm_names(|a| a.family == Family::SlhDsa && a.name.contains("SHA2"));
    assert_eq!(algorithms.len(), 6);
    assert_every_position(&algorithms);
}

#[test]
fn slh_dsa_shake_sets_verify_at_every_position() {
    let algorithms = algorithm_names(|a| a.family == Family::SlhDsa && a.name.contains("SHAKE"));
    assert_eq!(algorithms.len(), 6);
    assert_every_position(&algorithms);
}

/// Extension text of one certificate as `openssl x509 -ext` prints it.
fn extensions(dir: &Path, file: &str) -> String {
    let exts = "basicConstraints,keyUsage,extendedKeyUsage,subjectKeyIdentifier,authorityKeyIdentifier,subjectAltName";
    let (ok, text) = openssl(dir, &["x509", "-in", file, "-noout", "-ext", exts]);
    assert!(ok, "{text}");
    text
}

/// The hex key identifier on the line after `header`.
fn key_id(text: &str, header: &str) -> Option<String> {
    let mut lines = text.lines();
    lines.find(|line| line.starts_with(header))?;
    Some(lines.next()?.trim().to_owned())
}

#[test]
fn layout_extensions_and_manifest_match_the_certificates() {
    let scratch = TempDir::new("layout");
    let cases = [
        ("ECDSA-P256,ML-DSA-44", vec!["root", "leaf"]),
        ("Ed25519,ECDSA-P384,ML-DSA-65", vec!["root", "int1", "leaf"]),
        (
            "ML-DSA-87,ECDSA-P256,SLH-DSA-SHA2-128f,ML-DSA-44",
            vec!["root", "int1", "int2", "leaf"],
        ),
    ];
    for (chain, roles) in cases {
        let dir = scratch.join(&roles.len().to_string());
        let summary = generate(&dir, chain, "layout");
        assert_verifies(&dir);
        assert_keys_match(&dir);

        let mut expected: Vec<String> = ["ca.pem", "intermediates.pem", "manifest.json"]
            .into_iter()
            .chain([
                "chain-leaf.pem",
                "chain-leaf+intermediates.pem",
                "chain-full.pem",
            ])
            .map(String::from)
            .chain(
                roles
                    .iter()
                    .flat_map(|r| [format!("{r}.pem"), format!("{r}.key")]),
            )
            .collect();
        expected.sort();
        let mut found: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        found.sort();
        assert_eq!(found, expected, "{chain}");
        for role in &roles {
            let mode = fs::metadata(dir.join(format!("{role}.key")))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{role}.key mode {mode:o}");
        }

        // Trust anchor, intermediates (nearest the leaf first) and the three policies.
        assert_eq!(read(&dir, "ca.pem"), read(&dir, "root.pem"));
        let inner: Vec<&str> = roles[1..roles.len() - 1].iter().rev().copied().collect();
        let pems = |list: &[&str]| -> String {
            list.iter()
                .map(|r| read(&dir, &format!("{r}.pem")))
                .collect()
        };
        assert_eq!(read(&dir, "intermediates.pem"), pems(&inner));
        let leaf_up: Vec<&str> = roles.iter().rev().copied().collect();
        assert_eq!(read(&dir, "chain-leaf.pem"), pems(&["leaf"]));
        assert_eq!(
            read(&dir, "chain-leaf+intermediates.pem"),
            pems(&leaf_up[..leaf_up.len() - 1])
        );
        assert_eq!(read(&dir, "chain-full.pem"), pems(&leaf_up));

        let manifest = manifest(&dir);
        assert_eq!(manifest["schema"], "chainlab.pki/1");
        assert_eq!(manifest["seed"], "layout");
        assert_eq!(manifest["depth"], roles.len());
        assert_eq!(manifest["deterministic"], true);
        // The library the engine links (3.5 by default; 4.0 with OPENSSL_SRC_VERSION).
        assert!(manifest["openssl_version"]
            .as_str()
            .unwrap()
            .starts_with("OpenSSL "));
        assert_eq!(manifest["engine_version"], env!("CARGO_PKG_VERSION"));
        let entries = manifest["certificates"].as_array().unwrap();
        let algorithms: Vec<&str> = chain.split(',').collect();
        for (index, (entry, role)) in entries.iter().zip(&roles).enumerate() {
            let file = format!("{role}.pem");
            let x509 = cert(&dir, &file);
            assert_eq!(x509.version(), 2, "{file}: not X.509 v3");
            let der = x509.to_der().unwrap();
            assert_eq!(entry["role"], *role);
            assert_eq!(entry["position"], roles.len() - 1 - index);
            assert_eq!(entry["algorithm"], algorithms[index]);
            assert_eq!(entry["der_bytes"], der.len());
            let sha256: String = openssl::sha::sha256(&der)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(entry["sha256"], sha256);
            let (ok, text) = openssl(
                &dir,
                &[
                    "x509",
                    "-in",
                    &file,
                    "-noout",
                    "-subject",
                    "-issuer",
                    "-serial",
                    "-startdate",
                    "-enddate",
                ],
            );
            assert!(ok, "{text}");
            let leaf = *role == "leaf";
            let not_after = if leaf {
                "Jan  1 00:00:00 2035 GMT"
            } else {
                "Jan  1 00:00:00 2045 GMT"
            };
            let expected_text = format!(
                "subject={}\nissuer={}\nserial={}\nnotBefore=Jan  1 00:00:00 2025 GMT\nnotAfter={not_after}\n",
                entry["subject"].as_str().unwrap(),
                entry["issuer"].as_str().unwrap(),
                entry["serial"].as_str().unwrap(),
            );
            assert_eq!(text, expected_text, "{file}");
            let title = match *role {
                "root" => "chainlab root",
                "int1" => "chainlab intermediate 1",
                "int2" => "chainlab intermediate 2",
                _ => "chainlab leaf",
            };
            assert_eq!(
                entry["subject"],
                format!("O=chainlab, CN={title} ({})", algorithms[index])
            );
            let issuer_index = index.saturating_sub(1);
            assert_eq!(entry["issuer"], entries[issuer_index]["subject"]);
            assert_eq!(
                entry["serial"].as_str().unwrap().len(),
                32,
                "16-byte serial"
            );

            // Extensions: CA constraints and path lengths, usages, key identifiers, SAN.
            let ext = extensions(&dir, &file);
            if leaf {
                assert!(
                    ext.contains("X509v3 Basic Constraints: critical\n    CA:FALSE\n"),
                    "{ext}"
                );
                assert!(
                    ext.contains("X509v3 Key Usage: critical\n    Digital Signature\n"),
                    "{ext}"
                );
                assert!(
                    ext.contains(
                        "X509v3 Extended Key Usage: \n    TLS Web Server Authentication\n"
                    ),
                    "{ext}"
                );
                assert!(
                    ext.contains(
                        "X509v3 Subject Alternative Name: \n    DNS:localhost, IP Address:127.0.0.1, \
                         IP Address:0:0:0:0:0:0:0:1\n"
                    ),
                    "{ext}"
                );
            } else {
                let path_len = roles.len() - 2 - index;
                let constraints = format!(
                    "X509v3 Basic Constraints: critical\n    CA:TRUE, pathlen:{path_len}\n"
                );
                assert!(ext.contains(&constraints), "{file}: {ext}");
                assert!(
                    ext.contains("X509v3 Key Usage: critical\n    Certificate Sign, CRL Sign\n"),
                    "{ext}"
                );
                assert!(
                    !ext.contains("Extended Key Usage") && !ext.contains("Alternative Name"),
                    "{ext}"
                );
            }
            let ski = key_id(&ext, "X509v3 Subject Key Identifier").unwrap();
            let aki = key_id(&ext, "X509v3 Authority Key Identifier");
            if index == 0 {
                assert_eq!(aki, None, "self-signed root carries no AKI: {ext}");
            } else {
                let issuer_ext = extensions(&dir, &format!("{}.pem", roles[issuer_index]));
                assert_eq!(
                    aki,
                    key_id(&issuer_ext, "X509v3 Subject Key Identifier"),
                    "{file}"
                );
                assert_ne!(aki.unwrap(), ski);
            }
        }

        // Policies: roles served, files, DER byte counts (decoded from the PEM files).
        let policies = manifest["policies"].as_array().unwrap();
        let expected_policies = [
            ("leaf", "chain-leaf.pem", vec!["leaf"]),
            (
                "leaf+intermediates",
                "chain-leaf+intermediates.pem",
                leaf_up[..leaf_up.len() - 1].to_vec(),
            ),
            ("full", "chain-full.pem", leaf_up.clone()),
        ];
        assert_eq!(policies.len(), 3);
        for (policy, (name, file, served)) in policies.iter().zip(expected_policies) {
            assert_eq!(policy["policy"], name);
            assert_eq!(policy["file"], file);
            assert_eq!(policy["certificates"], serde_json::json!(served));
            let der_bytes: usize = certs(&dir, file)
                .iter()
                .map(|c| c.to_der().unwrap().len())
                .sum();
            assert_eq!(policy["der_bytes"], der_bytes, "{file}");
            assert_eq!(summary["policy_der_bytes"][name], der_bytes, "{file}");
        }
    }
}

#[test]
fn depth_one_is_a_self_signed_leaf_in_every_file() {
    let scratch = TempDir::new("depth1");
    let dir = scratch.join("out");
    let summary = generate(&dir, "ML-DSA-65", "depth1");
    assert_eq!(summary["depth"], 1);
    assert_verifies(&dir);
    assert_keys_match(&dir);
    let leaf = read(&dir, "leaf.pem");
    for file in [
        "ca.pem",
        "chain-leaf.pem",
        "chain-leaf+intermediates.pem",
        "chain-full.pem",
    ] {
        assert_eq!(read(&dir, file), leaf, "{file}");
    }
    assert!(read(&dir, "intermediates.pem").is_empty());
    assert!(!dir.join("root.pem").exists() && !dir.join("int1.pem").exists());
    let ext = extensions(&dir, "leaf.pem");
    assert!(
        ext.contains("CA:FALSE") && ext.contains("Subject Key Identifier"),
        "{ext}"
    );
    assert!(!ext.contains("Authority Key Identifier"), "{ext}");
    let manifest = manifest(&dir);
    let entry = &manifest["certificates"][0];
    assert_eq!(entry["role"], "leaf");
    assert_eq!(entry["position"], 0);
    assert_eq!(entry["subject"], entry["issuer"]);
    assert_eq!(entry["signed_by"], "ML-DSA-65");
    for policy in manifest["policies"].as_array().unwrap() {
        assert_eq!(policy["certificates"], serde_json::json!(["leaf"]));
        assert_eq!(policy["der_bytes"], entry["der_bytes"]);
    }
}
