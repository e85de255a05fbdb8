//! A signature algorithm webpki does not know, as rustls takes it: named by one OID as both
//! its key and signature identifier, verified by the code of the table it comes from
//! (liboqs' families in `liboqs`, composite ML-DSA in `composite`).

use rustls::pki_types::{AlgorithmIdentifier, InvalidSignature, SignatureVerificationAlgorithm};

/// One algorithm `A` of a table: its OID element (an AlgorithmIdentifier's contents, alive
/// for the process) and the function that verifies its signatures.
pub struct OidVerifier<A: 'static> {
    pub algorithm: &'static A,
    oid: &'static [u8],
    verify: fn(&A, &[u8], &[u8], &[u8]) -> bool,
}

impl<A: std::fmt::Debug> std::fmt::Debug for OidVerifier<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidVerifier")
            .field("algorithm", self.algorithm)
            .finish()
    }
}

impl<A: std::fmt::Debug + Send + Sync> SignatureVerificationAlgorithm for OidVerifier<A> {
    fn verify_signature(
        &self,
        public_key: &[u8],
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), InvalidSignature> {
        match (self.verify)(self.algorithm, public_key, message, signature) {
            true => Ok(()),
            false => Err(InvalidSignature),
        }
    }

    fn public_key_alg_id(&self) -> AlgorithmIdentifier {
        AlgorithmIdentifier::from_slice(self.oid)
    }

    fn signature_alg_id(&self) -> AlgorithmIdentifier {
        AlgorithmIdentifier::from_slice(self.oid)
    }

    fn fips(&self) -> bool {
        false
    }
}

/// Every algorithm of `table` as a verifier, made once and kept for the process (rustls'
/// tables are 'static): `oid` gives an algorithm's OID element, `verify` checks a signature.
pub fn leaked<A: 'static>(
    table: &'static [A],
    oid: fn(&A) -> Vec<u8>,
    verify: fn(&A, &[u8], &[u8], &[u8]) -> bool,
) -> Vec<&'static OidVerifier<A>> {
    table
        .iter()
        .map(|algorithm| {
            let oid = Box::leak(oid(algorithm).into_boxed_slice());
            &*Box::leak(Box::new(OidVerifier {
                algorithm,
                oid,
                verify,
            }))
        })
        .collect()
}
