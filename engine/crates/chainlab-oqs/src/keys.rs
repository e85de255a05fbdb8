//! Keys, signing and verifying through liboqs.
//!
//! liboqs draws every random byte (key generation; Falcon's nonce, MAYO's, UOV's and
//! CROSS's salts; ML-DSA's hedging) from `OQS_randombytes`. A seeded operation points that
//! at a SHAKE-256 stream of its seed for its duration (`seeded`), so `pki` issues the same
//! keys and the same signatures from the same seed; everything else (a server's
//! CertificateVerify) uses the system's random bytes.

use std::io::Read;
use std::sync::{LazyLock, Mutex};

use anyhow::{anyhow, bail, Result};
use oqs::sig::Sig;
use sha3::digest::{ExtendableOutput, Update, XofReader};
use sha3::{Shake256, Shake256Reader};

use crate::algorithms::{OqsAlgorithm, ALGORITHMS};

/// First input of every seeded stream; fixed, so a seed keeps its keys across releases.
const DOMAIN: &[u8] = b"chainlab.oqs/1";

/// A key pair in liboqs' own encodings.
#[derive(Clone)]
pub struct Key {
    pub algorithm: &'static OqsAlgorithm,
    pub public: Vec<u8>,
    pub secret: Vec<u8>,
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The secret key is never printed.
        write!(
            f,
            "Key({}, {} B public)",
            self.algorithm.name,
            self.public.len()
        )
    }
}

/// liboqs' handle of an algorithm's parameter set: made once per algorithm and kept, so a
/// handshake's signing or verifying allocates no liboqs context (`Sig` is Send + Sync).
pub fn scheme(algorithm: &OqsAlgorithm) -> Result<&'static Sig> {
    static SCHEMES: LazyLock<Vec<Result<Sig, String>>> = LazyLock::new(|| {
        oqs::init(); // once per process (liboqs' CPU feature detection)
        ALGORITHMS
            .iter()
            .map(|a| Sig::new(a.liboqs).map_err(|e| e.to_string()))
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

/// A key pair from `seed`: the same seed, the same key.
pub fn generate(algorithm: &'static OqsAlgorithm, seed: &[u8]) -> Result<Key> {
    let sig = scheme(algorithm)?;
    let (public, secret) = seeded(seed, || sig.keypair())
        .map_err(|e| anyhow!("liboqs key generation for {}: {e}", algorithm.name))?;
    Ok(Key {
        algorithm,
        public: public.into_vec(),
        secret: secret.into_vec(),
    })
}

impl Key {
    /// A key from its parts, their lengths checked against the parameter set.
    pub fn from_parts(
        algorithm: &'static OqsAlgorithm,
        secret: &[u8],
        public: &[u8],
    ) -> Result<Key> {
        let sig = scheme(algorithm)?;
        if secret.len() != sig.length_secret_key() || public.len() != sig.length_public_key() {
            bail!(
                "a {} key has a {}-byte secret and a {}-byte public part, not {} and {}",
                algorithm.name,
                sig.length_secret_key(),
                sig.length_public_key(),
                secret.len(),
                public.len()
            );
        }
        Ok(Key {
            algorithm,
            public: public.to_vec(),
            secret: secret.to_vec(),
        })
    }

    /// A key that only signs: a secret key whose public half is elsewhere (an ML-DSA key
    /// OpenSSL wrote, whose public key is in the certificate).
    pub fn for_signing(algorithm: &'static OqsAlgorithm, secret: &[u8]) -> Result<Key> {
        let sig = scheme(algorithm)?;
        if secret.len() != sig.length_secret_key() {
            bail!(
                "a {} secret key has {} bytes, not {}",
                algorithm.name,
                sig.length_secret_key(),
                secret.len()
            );
        }
        Ok(Key {
            algorithm,
            public: Vec::new(),
            secret: secret.to_vec(),
        })
    }

    /// A signature with the system's random bytes (a handshake's CertificateVerify).
    pub fn sign(&self, message: &[u8]) -> Result<Vec<u8>> {
        let sig = scheme(self.algorithm)?;
        let secret = sig.secret_key_from_bytes(&self.secret).ok_or_else(|| {
            anyhow!(
                "{}: the secret key has the wrong length",
                self.algorithm.name
            )
        })?;
        let signature = sig
            .sign(message, secret)
            .map_err(|e| anyhow!("liboqs signing with {}: {e}", self.algorithm.name))?;
        Ok(signature.into_vec())
    }

    /// A signature whose random bytes come from `seed`: the same seed, message and key,
    /// the same signature (a certificate's).
    pub fn sign_seeded(&self, message: &[u8], seed: &[u8]) -> Result<Vec<u8>> {
        seeded(seed, || self.sign(message))
    }
}

/// True when `signature` is `algorithm`'s valid signature of `message` under `public`.
pub fn verify(algorithm: &OqsAlgorithm, public: &[u8], message: &[u8], signature: &[u8]) -> bool {
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

/// The stream a seeded section draws from; `None` outside one.
static STREAM: Mutex<Option<Shake256Reader>> = Mutex::new(None);

/// One seeded section at a time: the random source is process-wide in liboqs.
static SECTION: Mutex<()> = Mutex::new(());

/// Runs `f` with liboqs drawing its random bytes from SHAKE-256(DOMAIN || seed).
fn seeded<T>(seed: &[u8], f: impl FnOnce() -> T) -> T {
    let _section = SECTION
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut shake = Shake256::default();
    shake.update(DOMAIN);
    shake.update(&(seed.len() as u64).to_be_bytes());
    shake.update(seed);
    *STREAM.lock().unwrap_or_else(|p| p.into_inner()) = Some(shake.finalize_xof());
    // SAFETY: `from_stream` has the signature liboqs expects and is valid for the whole
    // program; switching back to "system" restores liboqs' default source.
    unsafe { oqs_sys::rand::OQS_randombytes_custom_algorithm(Some(from_stream)) };
    let out = f();
    // SAFETY: a NUL-terminated name liboqs knows.
    unsafe { oqs_sys::rand::OQS_randombytes_switch_algorithm(c"system".as_ptr()) };
    *STREAM.lock().unwrap_or_else(|p| p.into_inner()) = None;
    out
}

/// liboqs' random source inside a seeded section. Should another thread's liboqs call
/// arrive after the stream is gone, it gets the system's bytes, never zeros.
unsafe extern "C" fn from_stream(out: *mut u8, len: usize) {
    // SAFETY: liboqs passes a writable buffer of `len` bytes.
    let buf = unsafe { std::slice::from_raw_parts_mut(out, len) };
    let mut stream = STREAM.lock().unwrap_or_else(|p| p.into_inner());
    match stream.as_mut() {
        Some(reader) => XofReader::read(reader, buf),
        None => {
            let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(buf));
            if read.is_err() {
                // No randomness at all: stopping is the only safe answer.
                std::process::abort();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::lookup;

    #[test]
    fn seeded_keys_and_signatures_repeat_and_random_ones_verify() {
        let falcon = lookup("Falcon-512").unwrap();
        let a = generate(falcon, b"seed").unwrap();
        let b = generate(falcon, b"seed").unwrap();
        let c = generate(falcon, b"other").unwrap();
        assert_eq!((&a.public, &a.secret), (&b.public, &b.secret));
        assert_ne!(a.public, c.public);
        let s1 = a.sign_seeded(b"message", b"s").unwrap();
        let s2 = a.sign_seeded(b"message", b"s").unwrap();
        assert_eq!(s1, s2);
        assert!(verify(falcon, &a.public, b"message", &s1));
        let random = a.sign(b"message").unwrap();
        assert!(verify(falcon, &a.public, b"message", &random));
        let mut flipped = random.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert!(!verify(falcon, &a.public, b"message", &flipped));
        assert!(!verify(falcon, &c.public, b"message", &random));
        assert!(Key::from_parts(falcon, &a.secret[1..], &a.public).is_err());
    }
}
