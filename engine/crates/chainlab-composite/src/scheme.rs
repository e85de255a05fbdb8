//! Composite signing and verifying over a library's component operations (draft sections
//! "Sign" and "Verify"): the ML-DSA component signs M' with the algorithm's label as its
//! context, the traditional component signs M'; the signature is the two concatenated, and it
//! verifies only when both components do.
//!
//! A TLS stack plugs its library in through `Components` (a capability is a trait a backend
//! plugs into, as rustls' crypto provider): OpenSSL's in `pki` and the OpenSSL engine,
//! aws-lc's in the rustls engine. A `CompositeKey` holds the library's component keys, made
//! once, so a handshake's CertificateVerify parses nothing.

use anyhow::{bail, Context, Result};

use crate::algorithms::{CompositeAlgorithm, MlDsa, Traditional};
use crate::encoding;
use crate::message;

/// The ML-DSA component of a key, as a library holds it.
pub trait MlDsaSigner: Send + Sync {
    /// FIPS 204 ML-DSA.Sign (pure, hedged) of `message` with application context `context`.
    fn sign(&self, message: &[u8], context: &[u8]) -> Result<Vec<u8>>;
}

/// The traditional component of a key, as a library holds it.
pub trait TradSigner: Send + Sync {
    /// The component's signature of `message`: DER Ecdsa-Sig-Value (ECDSA with the
    /// component's own hash), or Ed25519's 64 bytes.
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>>;
}

/// A library's component operations.
pub trait Components: Send + Sync {
    /// The ML-DSA key of FIPS 204 KeyGen_internal(seed), and its public key.
    fn mldsa_key(&self, level: MlDsa, seed: &[u8; 32]) -> Result<(Box<dyn MlDsaSigner>, Vec<u8>)>;
    /// The traditional key of `private` (an ECDSA scalar at the curve's length, or
    /// Ed25519's 32 bytes), and its public key (uncompressed point, or Ed25519's 32 bytes).
    fn trad_key(&self, trad: Traditional, private: &[u8])
        -> Result<(Box<dyn TradSigner>, Vec<u8>)>;
    /// FIPS 204 ML-DSA.Verify with application context `context`.
    fn mldsa_verify(
        &self,
        level: MlDsa,
        public: &[u8],
        message: &[u8],
        context: &[u8],
        signature: &[u8],
    ) -> bool;
    /// The traditional component's verification.
    fn trad_verify(
        &self,
        trad: Traditional,
        public: &[u8],
        message: &[u8],
        signature: &[u8],
    ) -> bool;
}

/// A composite private key, its components made by a library.
pub struct CompositeKey {
    pub algorithm: &'static CompositeAlgorithm,
    /// mldsaPK || tradPK.
    pub public: Vec<u8>,
    /// The draft's private key form (mldsaSeed || tradSK).
    pub private: Vec<u8>,
    mldsa: Box<dyn MlDsaSigner>,
    trad: Box<dyn TradSigner>,
}

impl std::fmt::Debug for CompositeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The private key is never printed.
        write!(
            f,
            "CompositeKey({}, {} B public)",
            self.algorithm.name,
            self.public.len()
        )
    }
}

impl CompositeKey {
    /// The key of a private key in the draft's form.
    pub fn from_private(
        library: &dyn Components,
        algorithm: &'static CompositeAlgorithm,
        private: &[u8],
    ) -> Result<CompositeKey> {
        let (seed, trad_private) = encoding::split_private_key(algorithm, private)?;
        let (mldsa, mldsa_public) = library
            .mldsa_key(algorithm.mldsa, &seed)
            .with_context(|| format!("{}: its ML-DSA component", algorithm.name))?;
        let (trad, trad_public) = library
            .trad_key(algorithm.traditional, &trad_private)
            .with_context(|| format!("{}: its traditional component", algorithm.name))?;
        if mldsa_public.len() != algorithm.mldsa.public_key_len() {
            bail!(
                "{}: the library's ML-DSA public key has {} bytes, not {}",
                algorithm.name,
                mldsa_public.len(),
                algorithm.mldsa.public_key_len()
            );
        }
        Ok(CompositeKey {
            algorithm,
            public: [mldsa_public, trad_public].concat(),
            private: private.to_vec(),
            mldsa,
            trad,
        })
    }

    /// The key of a PKCS#8 private key, None when it is not a composite one.
    pub fn from_pkcs8(library: &dyn Components, der: &[u8]) -> Result<Option<CompositeKey>> {
        match encoding::from_pkcs8(der)? {
            Some((algorithm, private)) => {
                CompositeKey::from_private(library, algorithm, &private).map(Some)
            }
            None => Ok(None),
        }
    }

    /// Composite-ML-DSA.Sign(sk, M, ctx): mldsaSig || tradSig over M'.
    pub fn sign(&self, message: &[u8], context: &[u8]) -> Result<Vec<u8>> {
        let m = message::representative(self.algorithm, message, context)?;
        let mldsa = self.mldsa.sign(&m, self.algorithm.label.as_bytes())?;
        let trad = self.trad.sign(&m)?;
        Ok([mldsa, trad].concat())
    }
}

/// Composite-ML-DSA.Verify(pk, M, s, ctx): true only when both components verify.
pub fn verify(
    library: &dyn Components,
    algorithm: &CompositeAlgorithm,
    public: &[u8],
    message: &[u8],
    context: &[u8],
    signature: &[u8],
) -> bool {
    let (Ok((mldsa_pk, trad_pk)), Ok((mldsa_sig, trad_sig)), Ok(m)) = (
        encoding::split_public_key(algorithm, public),
        encoding::split_signature(algorithm, signature),
        message::representative(algorithm, message, context),
    ) else {
        return false;
    };
    library.mldsa_verify(
        algorithm.mldsa,
        mldsa_pk,
        &m,
        algorithm.label.as_bytes(),
        mldsa_sig,
    ) && library.trad_verify(algorithm.traditional, trad_pk, &m, trad_sig)
}
