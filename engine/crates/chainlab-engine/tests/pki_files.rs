//! `chainlab-engine pki`'s files run to run: the same seed writes byte-identical files and
//! another seed different keys, a rerun replaces files atomically with keys kept private,
//! and bad inputs fail with one line naming the value.

use std::fs;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use chainlab_test_support::pki::{assert_verifies, cert, generate, manifest, pki, read};
use chainlab_test_support::TempDir;

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
    let scratch = TempDir::new("determinism");
    // Every deterministic family as signer and as subject.
    for (index, chain) in [
        "ECDSA-P384,ML-DSA-65,SLH-DSA-SHA2-128f,Ed25519",
        "Ed25519,SLH-DSA-SHAKE-128f,ECDSA-P256,ML-DSA-44",
    ]
    .into_iter()
    .enumerate()
    {
        let first = scratch.join(&format!("{index}-first"));
        let again = scratch.join(&format!("{index}-again"));
        let other = scratch.join(&format!("{index}-other"));
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
    let same = scratch.join("same-algorithm");
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
    let shallow = scratch.join("shallow");
    generate(&shallow, "Ed25519,ECDSA-P256", "alpha");
    let deep = scratch.join("deep");
    generate(&deep, "Ed25519,ML-DSA-44,ECDSA-P256", "alpha");
    assert_eq!(read(&shallow, "leaf.key"), read(&deep, "leaf.key"));
    assert_eq!(read(&shallow, "root.key"), read(&deep, "root.key"));

    // RSA keys are random; the deterministic positions stay reproducible.
    let rsa_a = scratch.join("rsa-a");
    let rsa_b = scratch.join("rsa-b");
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
    let scratch = TempDir::new("rerun");
    let dir = scratch.join("out");
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
    let scratch = TempDir::new("bad");
    let blocker = scratch.join("a-file");
    fs::write(&blocker, b"not a directory").unwrap();
    let under_file = blocker.join("out");
    let out = scratch.join("never-created");
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

#[test]
fn an_mtc_validity_that_ends_before_it_starts_is_refused() {
    let scratch = TempDir::new("mtc-validity");
    let out = scratch.join("never-created");
    let out_str = out.to_str().unwrap();
    for (validity, needle) in [
        (
            "20300101000000Z,20200101000000Z",
            "its start is not before its end",
        ),
        (
            "20200101000000Z,20200101000000Z",
            "its start is not before its end",
        ),
        ("2020-01-01,2021-01-01", "YYYYMMDDHHMMSSZ"),
    ] {
        let args = [
            "--chain",
            "ML-DSA-44",
            "--mtc-batch",
            "16",
            "--mtc-validity",
            validity,
            "--out",
            out_str,
        ];
        let output = pki(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{validity}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{validity}: {stderr}");
        assert!(stderr.contains(needle), "{validity}: {stderr}");
    }
    assert!(!out.exists(), "a refused validity issued a hierarchy");
}
