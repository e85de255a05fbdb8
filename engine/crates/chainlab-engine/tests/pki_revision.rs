//! The hierarchy cache is keyed by `pki::REVISION` (with OpenSSL's and liboqs' builds), not by
//! the engine binary: a rebuilt engine reuses cached hierarchies. This holds that key to what
//! `pki` writes: the digest of fixed hierarchies' files (every algorithm family OpenSSL and
//! chainlab-composite issue, a client hierarchy, an MTC batch) is kept here per revision. A
//! change to those files fails this test until `pki::REVISION` is bumped and the digest
//! recorded beside it, so no cache serves files of the old kind.

use std::path::Path;

use chainlab_engine::pki::REVISION;
use chainlab_test_support::engine::{engine, pki_for};
use chainlab_test_support::run_bounded;
use chainlab_test_support::TempDir;

/// The digest of the fixed hierarchies' files at each revision.
const DIGESTS: &[(u32, &str)] = &[
    (
        1,
        "021aeab582d8148f9657090348b1c9c69f038c65a97f618c9b9654b85fa7cf0f",
    ),
    (
        2,
        "061c05323de1ac9c092a27771d49031f21c6f01e7a082f1dd9494a8fe5797ca0",
    ),
];

/// Every file under `dir` (relative name, bytes), sorted by name.
fn files(dir: &Path, base: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, base, out);
        } else {
            let name = p.strip_prefix(base).unwrap().display().to_string();
            out.push((name, std::fs::read(&p).unwrap()));
        }
    }
}

fn digest(dir: &Path) -> String {
    let mut all = Vec::new();
    files(dir, dir, &mut all);
    all.sort();
    let mut h = openssl::sha::Sha256::new();
    for (name, bytes) in &all {
        h.update(name.as_bytes());
        h.update(&(bytes.len() as u64).to_be_bytes());
        h.update(bytes);
    }
    h.finish().iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn what_pki_writes_for_fixed_inputs_is_this_revisions() {
    let dir = TempDir::new("pki-revision");
    pki_for(
        &dir,
        "mixed",
        "SLH-DSA-SHA2-128f,ECDSA-P256,ML-DSA-44",
        "rev",
        "server",
    );
    pki_for(
        &dir,
        "composite",
        "MLDSA44-ECDSA-P256-SHA256,Ed25519",
        "rev",
        "server",
    );
    pki_for(&dir, "client", "ECDSA-P384,ML-DSA-65", "rev", "client");
    let mtc = dir.join("mtc");
    let out = run_bounded(
        std::process::Command::new(engine())
            .args([
                "pki",
                "--chain",
                "ML-DSA-44,ML-DSA-44",
                "--seed",
                "rev",
                "--mtc-batch",
                "8",
            ])
            .arg("--out")
            .arg(&mtc),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = digest(&dir.0);
    let want = DIGESTS
        .iter()
        .find(|(r, _)| *r == REVISION)
        .map(|(_, d)| *d);
    assert_eq!(
        Some(got.as_str()),
        want,
        "pki's files for fixed inputs changed (digest {got}): bump chainlab_engine::pki::REVISION \
         and record this digest for it in DIGESTS, so cached hierarchies of the old kind are \
         not reused"
    );
}
