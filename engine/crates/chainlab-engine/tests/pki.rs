//! `chainlab-engine pki`, run as a process and checked with the project's `openssl` binary
//! (verification, extension text) and the openssl crate (DER sizes, key/certificate match).
//!
//! Coverage of (algorithm, position): every algorithm X is generated as `X,ML-DSA-44,X,X`, so
//! X is a root (self-signed, issuing ML-DSA), an intermediate (issued by ML-DSA, issuing X)
//! and a leaf. That is the least signing an X-rooted hierarchy allows: three X signatures,
//! which matters for the slow SLH-DSA "s" sets (about 1-2 s each here).

use std::fs;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use chainlab_engine::algorithms::{Family, Provider, ALGORITHMS};
use openssl::pkey::PKey;
use openssl::x509::X509;
use serde_json::Value;

/// A scratch directory under the system temp dir, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let path =
            std::env::temp_dir().join(format!("chainlab-pki-test-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).unwrap();
        Scratch(path)
    }

    fn dir(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn pki(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chainlab-engine"))
        .arg("pki")
        .args(args)
        .output()
        .unwrap()
}

/// Runs `pki` and returns the parsed stdout summary; panics with stderr on failure.
fn generate(out: &Path, chain: &str, seed: &str) -> Value {
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
fn openssl_bin() -> PathBuf {
    let dir = std::env::var_os("OPENSSL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.openssl"));
    dir.join("bin/openssl")
}

fn openssl(dir: &Path, args: &[&str]) -> (bool, String) {
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
fn assert_verifies(dir: &Path) {
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

fn manifest(dir: &Path) -> Value {
    serde_json::from_slice(&fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

fn cert(dir: &Path, file: &str) -> X509 {
    X509::from_pem(&fs::read(dir.join(file)).unwrap()).unwrap()
}

fn certs(dir: &Path, file: &str) -> Vec<X509> {
    X509::stack_from_pem(&fs::read(dir.join(file)).unwrap()).unwrap()
}

/// Every key file holds the private key of the certificate beside it.
fn assert_keys_match(dir: &Path) {
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

/// Generates `X,ML-DSA-44,X,X` for each algorithm and verifies it.
fn assert_every_position(algorithms: &[&str]) {
    assert!(!algorithms.is_empty());
    let scratch = Scratch::new(&format!("positions-{}", algorithms[0]));
    for name in algorithms {
        let dir = scratch.dir(name);
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

fn read(dir: &Path, file: &str) -> String {
    fs::read_to_string(dir.join(file)).unwrap()
}

#[test]
fn layout_extensions_and_manifest_match_the_certificates() {
    let scratch = Scratch::new("layout");
    let cases = [
        ("ECDSA-P256,ML-DSA-44", vec!["root", "leaf"]),
        ("Ed25519,ECDSA-P384,ML-DSA-65", vec!["root", "int1", "leaf"]),
        (
            "ML-DSA-87,ECDSA-P256,SLH-DSA-SHA2-128f,ML-DSA-44",
            vec!["root", "int1", "int2", "leaf"],
        ),
    ];
    for (chain, roles) in cases {
        let dir = scratch.dir(&roles.len().to_string());
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
    let scratch = Scratch::new("depth1");
    let dir = scratch.dir("out");
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

/// Every file in a directory, by name.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().into_string().unwrap(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

fn file_names(files: &[(String, Vec<u8>)]) -> Vec<&str> {
    files.iter().map(|(name, _)| name.as_str()).collect()
}

#[test]
fn same_seed_gives_identical_files_and_another_seed_different_ones() {
    let scratch = Scratch::new("determinism");
    // Every deterministic family as signer and as subject.
    for (index, chain) in [
        "ECDSA-P384,ML-DSA-65,SLH-DSA-SHA2-128f,Ed25519",
        "Ed25519,SLH-DSA-SHAKE-128f,ECDSA-P256,ML-DSA-44",
    ]
    .into_iter()
    .enumerate()
    {
        let first = scratch.dir(&format!("{index}-first"));
        let again = scratch.dir(&format!("{index}-again"));
        let other = scratch.dir(&format!("{index}-other"));
        generate(&first, chain, "alpha");
        generate(&again, chain, "alpha");
        generate(&other, chain, "beta");
        let (first_files, again_files) = (files(&first), files(&again));
        assert_eq!(
            file_names(&first_files),
            file_names(&again_files),
            "{chain}"
        );
        let differing: Vec<&String> = first_files
            .iter()
            .zip(&again_files)
            .filter(|(a, b)| a.1 != b.1)
            .map(|(a, _)| &a.0)
            .collect();
        assert!(
            differing.is_empty(),
            "{chain}: same seed, different bytes in {differing:?}"
        );
        for ((name, a), (_, b)) in first_files.iter().zip(files(&other)) {
            if name.ends_with(".key")
                || name.ends_with(".pem") && name != "intermediates.pem"
                || name == "manifest.json"
            {
                assert!(*a != b, "{chain}: {name} did not change with the seed");
            }
        }
        assert_verifies(&other);
    }

    // Each role gets its own key even with one algorithm everywhere.
    let same = scratch.dir("same-algorithm");
    generate(&same, "ML-DSA-44,ML-DSA-44,ML-DSA-44,ML-DSA-44", "alpha");
    let keys: Vec<Vec<u8>> = ["root", "int1", "int2", "leaf"]
        .iter()
        .map(|r| {
            cert(&same, &format!("{r}.pem"))
                .public_key()
                .unwrap()
                .public_key_to_der()
                .unwrap()
        })
        .collect();
    for i in 0..keys.len() {
        for j in i + 1..keys.len() {
            assert!(keys[i] != keys[j], "roles {i} and {j} share a key");
        }
    }

    // A role's key depends on (seed, role, algorithm), not on the depth.
    let shallow = scratch.dir("shallow");
    generate(&shallow, "Ed25519,ECDSA-P256", "alpha");
    let deep = scratch.dir("deep");
    generate(&deep, "Ed25519,ML-DSA-44,ECDSA-P256", "alpha");
    assert_eq!(read(&shallow, "leaf.key"), read(&deep, "leaf.key"));
    assert_eq!(read(&shallow, "root.key"), read(&deep, "root.key"));

    // RSA keys are random; the deterministic positions stay reproducible.
    let rsa_a = scratch.dir("rsa-a");
    let rsa_b = scratch.dir("rsa-b");
    generate(&rsa_a, "RSA-2048,ML-DSA-44", "alpha");
    generate(&rsa_b, "RSA-2048,ML-DSA-44", "alpha");
    assert_ne!(read(&rsa_a, "root.key"), read(&rsa_b, "root.key"));
    assert_eq!(read(&rsa_a, "leaf.key"), read(&rsa_b, "leaf.key"));
    let manifest = manifest(&rsa_a);
    assert_eq!(manifest["deterministic"], false);
    assert_eq!(
        manifest["certificates"][1]["deterministic"], false,
        "signed by RSA"
    );
}

#[test]
fn rerun_replaces_files_keeps_keys_private_and_drops_stale_roles() {
    let scratch = Scratch::new("rerun");
    let dir = scratch.dir("out");
    generate(&dir, "ML-DSA-44,ML-DSA-44,ML-DSA-44,Ed25519", "rerun");
    // A key left world-readable by someone must not keep that mode when replaced.
    fs::set_permissions(dir.join("leaf.key"), fs::Permissions::from_mode(0o644)).unwrap();
    let mut leftover = fs::OpenOptions::new();
    leftover.write(true).create(true).mode(0o644);
    leftover.open(dir.join(".leaf.key.tmp")).unwrap();
    generate(&dir, "ML-DSA-65,Ed25519", "rerun");
    let mut expected = vec![
        "ca.pem",
        "chain-full.pem",
        "chain-leaf+intermediates.pem",
        "chain-leaf.pem",
        "intermediates.pem",
        "leaf.key",
        "leaf.pem",
        "manifest.json",
        "root.key",
        "root.pem",
    ];
    expected.sort();
    let found: Vec<String> = files(&dir).into_iter().map(|(name, _)| name).collect();
    assert_eq!(found, expected);
    for key in ["leaf.key", "root.key"] {
        let mode = fs::metadata(dir.join(key)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{key} mode {mode:o}");
    }
    assert!(read(&dir, "intermediates.pem").is_empty());
    assert_verifies(&dir);
}

#[test]
fn bad_inputs_fail_with_one_line_naming_the_value() {
    let scratch = Scratch::new("bad");
    let blocker = scratch.dir("a-file");
    fs::write(&blocker, b"not a directory").unwrap();
    let under_file = blocker.join("out");
    let out = scratch.dir("never-created");
    let out_str = out.to_str().unwrap();
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec!["--chain", "", "--out", out_str],
            vec!["depth 0", "1 to 4"],
        ),
        (
            vec![
                "--chain",
                "ML-DSA-44,ML-DSA-44,ML-DSA-44,ML-DSA-44,ML-DSA-44",
                "--out",
                out_str,
            ],
            vec!["5 algorithms", "1 to 4"],
        ),
        (
            vec!["--chain", "ML-DSA-44,ML-DSA-99", "--out", out_str],
            vec![
                "position 2",
                "\"ML-DSA-99\"",
                "ML-DSA-44, ML-DSA-65",
                "RSA-3072",
            ],
        ),
        (
            vec![
                "--chain",
                "ML-DSA-44",
                "--dns",
                "bad_name",
                "--out",
                out_str,
            ],
            vec!["\"bad_name\"", "allowed"],
        ),
        (
            vec![
                "--chain",
                "ML-DSA-44",
                "--out",
                under_file.to_str().unwrap(),
            ],
            vec![under_file.to_str().unwrap(), "cannot create"],
        ),
    ];
    for (args, needles) in cases {
        let output = pki(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("chainlab-engine: error: "), "{stderr}");
        for needle in needles {
            assert!(
                stderr.contains(needle),
                "{args:?}: {needle:?} missing from {stderr}"
            );
        }
        assert!(output.stdout.is_empty());
    }
    assert!(
        !out.exists(),
        "a rejected command created its output directory"
    );
}
