//! Keys, signing and verifying through liboqs.
//!
//! liboqs draws every random byte (key generation; Falcon's nonce, MAYO's, UOV's and
//! CROSS's salts; ML-DSA's hedging) from `OQS_randombytes`. A seeded operation points that
//! at a SHAKE-256 stream of its seed for its duration (`seeded`), so `pki` issues the same
//! keys and the same signatures from the same seed; everything else (a server's
//! CertificateVerify) uses the system's random bytes.

use std::io::Read;
use std::sync::Mutex;

use anyhow::{bail, Result};
use sha3::digest::{ExtendableOutput, Update, XofReader};
use sha3::{Shake256, Shake256Reader};

use crate::algorithms::OqsAlgorithm;
use crate::backend;

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

/// A key pair from `seed`: the same seed, the same key.
pub fn generate(algorithm: &'static OqsAlgorithm, seed: &[u8]) -> Result<Key> {
    let (public, secret) = seeded(seed, || backend::keypair(algorithm))?;
    Ok(Key {
        algorithm,
        public,
        secret,
    })
}

impl Key {
    /// A key from its parts, their lengths checked against the parameter set.
    pub fn from_parts(
        algorithm: &'static OqsAlgorithm,
        secret: &[u8],
        public: &[u8],
    ) -> Result<Key> {
        let (sk, pk) = backend::lengths(algorithm)?;
        if secret.len() != sk || public.len() != pk {
            bail!(
                "a {} key has a {sk}-byte secret and a {pk}-byte public part, not {} and {}",
                algorithm.name,
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
        let (sk, _) = backend::lengths(algorithm)?;
        if secret.len() != sk {
            bail!(
                "a {} secret key has {sk} bytes, not {}",
                algorithm.name,
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
        backend::sign(self.algorithm, &self.secret, message)
    }

    /// A signature whose random bytes come from `seed`: the same seed, message and key,
    /// the same signature (a certificate's).
    pub fn sign_seeded(&self, message: &[u8], seed: &[u8]) -> Result<Vec<u8>> {
        seeded(seed, || self.sign(message))
    }
}

/// True when `signature` is `algorithm`'s valid signature of `message` under `public`
/// (false in a build without liboqs).
pub fn verify(algorithm: &OqsAlgorithm, public: &[u8], message: &[u8], signature: &[u8]) -> bool {
    backend::verify(algorithm, public, message, signature)
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
    let out = backend::with_random_source(from_stream, f);
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

#[cfg(all(test, feature = "liboqs"))]
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
