//! liboqs itself, behind the crate's `liboqs` feature: building liboqs (cmake, about three
//! minutes on two cores) is what a first run of the OpenSSL engine does not need, so the
//! engine is built without it until a campaign asks for one of its algorithms
//! (docs/stacks.md, "Building"). Without the feature the table, the encodings and the
//! names stay; every operation says in one line that this build has no liboqs.

use serde::Serialize;

/// The `oqs` crate release pinned in Cargo.toml (`=`); a test checks Cargo.lock agrees.
pub const CRATE_VERSION: &str = "0.11.0";

/// liboqs' build and this CPU's choice, as `info` prints them.
#[derive(Debug, Clone, Serialize)]
pub struct Facts {
    /// liboqs' version string (`OQS_version()`).
    pub liboqs_version: String,
    /// The `oqs` crate's version, which pins the vendored liboqs.
    pub crate_version: &'static str,
    /// `OQS_DIST_BUILD=ON` (oqs-sys without its `non_portable` feature, as Cargo.toml asks):
    /// every optimised implementation compiled, chosen at run time.
    pub dist_build: bool,
    /// This CPU offers AVX2 (liboqs' test, `OQS_CPU_has_extension`).
    pub cpu_avx2: bool,
    /// The implementation the AVX2-capable families (Falcon, MAYO, UOV, CROSS, ML-DSA) use
    /// here: "avx2" or "portable" (recorded, because their timing properties differ).
    pub implementation: &'static str,
}

/// A source of random bytes liboqs draws from while it is installed (`with_random_source`).
pub type RandomSource = unsafe extern "C" fn(*mut u8, usize);

#[cfg(feature = "liboqs")]
mod imp {
    use std::sync::LazyLock;

    use anyhow::{anyhow, Result};
    use oqs::sig::{Algorithm as Liboqs, Sig};

    use super::Facts;
    use super::RandomSource;
    use crate::algorithms::{OqsAlgorithm, ALGORITHMS};

    pub const AVAILABLE: bool = true;

    /// liboqs' identifier of a table entry.
    fn id(algorithm: &OqsAlgorithm) -> Result<Liboqs> {
        Ok(match algorithm.name {
            "Falcon-512" => Liboqs::Falcon512,
            "Falcon-1024" => Liboqs::Falcon1024,
            "MAYO-1" => Liboqs::Mayo1,
            "MAYO-2" => Liboqs::Mayo2,
            "UOV-Is" => Liboqs::UovOvIs,
            "UOV-Ip" => Liboqs::UovOvIp,
            "UOV-Ip-pkc" => Liboqs::UovOvIpPkc,
            "CROSS-RSDPG-128-fast" => Liboqs::CrossRsdpg128Fast,
            "CROSS-RSDPG-128-small" => Liboqs::CrossRsdpg128Small,
            "ML-DSA-44" => Liboqs::MlDsa44,
            "ML-DSA-65" => Liboqs::MlDsa65,
            "ML-DSA-87" => Liboqs::MlDsa87,
            other => return Err(anyhow!("{other} has no liboqs identifier")),
        })
    }

    /// liboqs' handle of an algorithm's parameter set: made once per algorithm and kept, so
    /// a handshake's signing or verifying allocates no liboqs context (`Sig` is Send + Sync).
    fn scheme(algorithm: &OqsAlgorithm) -> Result<&'static Sig> {
        static SCHEMES: LazyLock<Vec<Result<Sig, String>>> = LazyLock::new(|| {
            oqs::init(); // once per process (liboqs' CPU feature detection)
            ALGORITHMS
                .iter()
                .map(|a| {
                    let id = id(a).map_err(|e| e.to_string())?;
                    if !id.is_enabled() {
                        return Err(format!("{} is not built into this liboqs", a.name));
                    }
                    Sig::new(id).map_err(|e| e.to_string())
                })
                .collect()
        });
        let index = ALGORITHMS
            .iter()
            .position(|a| a.name == algorithm.name)
            .ok_or_else(|| anyhow!("{} is not in the liboqs table", algorithm.name))?;
        SCHEMES[index]
            .as_ref()
            .map_err(|e| anyhow!("liboqs cannot provide {}: {e}", algorithm.name))
    }

    pub fn lengths(algorithm: &OqsAlgorithm) -> Result<(usize, usize)> {
        let sig = scheme(algorithm)?;
        Ok((sig.length_secret_key(), sig.length_public_key()))
    }

    pub fn keypair(algorithm: &OqsAlgorithm) -> Result<(Vec<u8>, Vec<u8>)> {
        let (public, secret) = scheme(algorithm)?
            .keypair()
            .map_err(|e| anyhow!("liboqs key generation for {}: {e}", algorithm.name))?;
        Ok((public.into_vec(), secret.into_vec()))
    }

    pub fn sign(algorithm: &OqsAlgorithm, secret: &[u8], message: &[u8]) -> Result<Vec<u8>> {
        let sig = scheme(algorithm)?;
        let secret = sig
            .secret_key_from_bytes(secret)
            .ok_or_else(|| anyhow!("{}: the secret key has the wrong length", algorithm.name))?;
        let signature = sig
            .sign(message, secret)
            .map_err(|e| anyhow!("liboqs signing with {}: {e}", algorithm.name))?;
        Ok(signature.into_vec())
    }

    pub fn verify(
        algorithm: &OqsAlgorithm,
        public: &[u8],
        message: &[u8],
        signature: &[u8],
    ) -> bool {
        let Ok(sig) = scheme(algorithm) else {
            return false;
        };
        let (Some(public), Some(signature)) = (
            sig.public_key_from_bytes(public),
            sig.signature_from_bytes(signature),
        ) else {
            return false;
        };
        sig.verify(message, signature, public).is_ok()
    }

    /// Runs `f` with liboqs drawing its random bytes from `source`, then the system's again.
    pub fn with_random_source<T>(source: RandomSource, f: impl FnOnce() -> T) -> T {
        // SAFETY: `source` has the signature liboqs expects and is valid for the whole
        // program; switching back to "system" restores liboqs' default source.
        unsafe { oqs_sys::rand::OQS_randombytes_custom_algorithm(Some(source)) };
        let out = f();
        // SAFETY: a NUL-terminated name liboqs knows.
        unsafe { oqs_sys::rand::OQS_randombytes_switch_algorithm(c"system".as_ptr()) };
        out
    }

    pub fn facts() -> Option<Facts> {
        oqs::init();
        // SAFETY: OQS_version returns a static NUL-terminated string; the CPU query only
        // reads liboqs' detected feature table (filled by OQS_init above).
        let (version, avx2) = unsafe {
            (
                std::ffi::CStr::from_ptr(oqs_sys::common::OQS_version())
                    .to_string_lossy()
                    .into_owned(),
                oqs_sys::common::OQS_CPU_has_extension(
                    oqs_sys::common::OQS_CPU_EXT::OQS_CPU_EXT_AVX2,
                ) != 0,
            )
        };
        Some(Facts {
            liboqs_version: version,
            crate_version: super::CRATE_VERSION,
            dist_build: true, // Cargo.toml gives oqs-sys no `non_portable`
            cpu_avx2: avx2,
            implementation: if avx2 { "avx2" } else { "portable" },
        })
    }
}

#[cfg(not(feature = "liboqs"))]
mod imp {
    use anyhow::{bail, Result};

    use super::Facts;
    use super::RandomSource;
    use crate::algorithms::OqsAlgorithm;

    pub const AVAILABLE: bool = false;

    fn absent<T>(algorithm: &OqsAlgorithm) -> Result<T> {
        bail!(
            "{} needs liboqs, and this engine was built without it: build it with \
             `engine/build.sh liboqs` (chainlab does so itself when a campaign names a liboqs \
             algorithm) or `make engines`",
            algorithm.name
        )
    }

    pub fn lengths(algorithm: &OqsAlgorithm) -> Result<(usize, usize)> {
        absent(algorithm)
    }

    pub fn keypair(algorithm: &OqsAlgorithm) -> Result<(Vec<u8>, Vec<u8>)> {
        absent(algorithm)
    }

    pub fn sign(algorithm: &OqsAlgorithm, _secret: &[u8], _message: &[u8]) -> Result<Vec<u8>> {
        absent(algorithm)
    }

    pub fn verify(_: &OqsAlgorithm, _: &[u8], _: &[u8], _: &[u8]) -> bool {
        false
    }

    pub fn with_random_source<T>(_source: RandomSource, f: impl FnOnce() -> T) -> T {
        f()
    }

    pub fn facts() -> Option<Facts> {
        None
    }
}

pub use imp::{facts, keypair, lengths, sign, verify, with_random_source, AVAILABLE};
