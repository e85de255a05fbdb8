//! liboqs inside rustls: Falcon, MAYO, UOV and CROSS (and, with `--signature-impl liboqs`,
//! ML-DSA) as rustls signing keys and as webpki verification algorithms, so certificates and
//! CertificateVerify messages of these algorithms are made and checked through
//! `chainlab_oqs`. Code points and OIDs are the OQS provider's (`chainlab_oqs::algorithms`).

use std::sync::{Arc, LazyLock};

use anyhow::anyhow;
use chainlab_oqs::algorithms::{Family, OqsAlgorithm};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{PrivateKeyDer, SignatureVerificationAlgorithm};
use rustls::sign::{Signer, SigningKey};
use rustls::{SignatureAlgorithm, SignatureScheme};

use chainlab_record::args::SignatureImpl;

use crate::oid_verifier::{self, OidVerifier};

/// The TLS scheme of an algorithm of the table.
pub fn scheme(algorithm: &OqsAlgorithm) -> SignatureScheme {
    SignatureScheme::from(algorithm.code_point)
}

/// One algorithm of the table as webpki sees it.
type Verify = OidVerifier<OqsAlgorithm>;

/// Every algorithm of the table as a verifier, built once (rustls' tables are 'static).
static VERIFIERS: LazyLock<Vec<&'static Verify>> = LazyLock::new(|| {
    oid_verifier::leaked(
        chainlab_oqs::ALGORITHMS,
        chainlab_oqs::encoding::algorithm_oid,
        chainlab_oqs::keys::verify,
    )
});

/// The verifiers of the families `implementation` takes from liboqs: the ones only liboqs
/// has, and ML-DSA too with `--signature-impl liboqs`.
fn taken(implementation: SignatureImpl) -> impl Iterator<Item = &'static Verify> {
    VERIFIERS.iter().copied().filter(move |v| {
        v.algorithm.family != Family::MlDsa || implementation == SignatureImpl::Liboqs
    })
}

/// `algorithms` with liboqs' verifiers added; with `--signature-impl liboqs`, ML-DSA's
/// aws-lc verifiers are replaced by liboqs' (webpki takes the first whose identifiers match).
pub fn with_liboqs(
    algorithms: WebPkiSupportedAlgorithms,
    implementation: SignatureImpl,
) -> WebPkiSupportedAlgorithms {
    let replaced: Vec<SignatureScheme> =
        taken(implementation).map(|v| scheme(v.algorithm)).collect();
    let ours: Vec<&'static dyn SignatureVerificationAlgorithm> = taken(implementation)
        .map(|v| v as &'static dyn SignatureVerificationAlgorithm)
        .collect();
    let ours_ids: Vec<_> = ours.iter().map(|v| v.signature_alg_id()).collect();
    let all: Vec<&'static dyn SignatureVerificationAlgorithm> = ours
        .iter()
        .copied()
        .chain(
            algorithms
                .all
                .iter()
                .copied()
                .filter(|a| !ours_ids.contains(&a.signature_alg_id())),
        )
        .collect();
    let mut mapping: Vec<(
        SignatureScheme,
        &'static [&'static dyn SignatureVerificationAlgorithm],
    )> = algorithms
        .mapping
        .iter()
        .copied()
        .filter(|(s, _)| !replaced.contains(s))
        .collect();
    for v in taken(implementation) {
        let one: &'static [&'static dyn SignatureVerificationAlgorithm] =
            Box::leak(Box::new([v as &'static dyn SignatureVerificationAlgorithm]));
        mapping.push((scheme(v.algorithm), one));
    }
    WebPkiSupportedAlgorithms {
        all: Box::leak(all.into_boxed_slice()),
        mapping: Box::leak(mapping.into_boxed_slice()),
    }
}

/// A key of the table signing CertificateVerify messages through liboqs.
#[derive(Debug)]
struct Key(Arc<chainlab_oqs::Key>);

impl SigningKey for Key {
    fn choose_scheme(&self, offered: &[SignatureScheme]) -> Option<Box<dyn Signer>> {
        let own = scheme(self.0.algorithm);
        offered
            .contains(&own)
            .then(|| Box::new(Sign(self.0.clone())) as Box<dyn Signer>)
    }

    fn algorithm(&self) -> SignatureAlgorithm {
        // TLS 1.2's enumeration has no such algorithm; rustls-post-quantum answers the same.
        SignatureAlgorithm::Unknown(255)
    }
}

#[derive(Debug)]
struct Sign(Arc<chainlab_oqs::Key>);

impl Signer for Sign {
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, rustls::Error> {
        self.0
            .sign(message)
            .map_err(|e| rustls::Error::General(format!("{e:#}")))
    }

    fn scheme(&self) -> SignatureScheme {
        scheme(self.0.algorithm)
    }
}

/// The key of a PKCS#8 file when liboqs is to sign with it (an algorithm only liboqs has,
/// or ML-DSA with `--signature-impl liboqs`); `None` leaves it to the aws-lc provider.
pub fn signing_key(
    der: &PrivateKeyDer<'_>,
    implementation: SignatureImpl,
) -> anyhow::Result<Option<Arc<dyn SigningKey>>> {
    let PrivateKeyDer::Pkcs8(pkcs8) = der else {
        return Ok(None);
    };
    let der = pkcs8.secret_pkcs8_der();
    let algorithm = chainlab_oqs::encoding::pkcs8_algorithm(der).map_err(|e| anyhow!("{e:#}"))?;
    if !algorithm
        .is_some_and(|a| a.family != Family::MlDsa || implementation == SignatureImpl::Liboqs)
    {
        return Ok(None);
    }
    let key = chainlab_oqs::encoding::from_pkcs8(der)
        .map_err(|e| anyhow!("a liboqs private key: {e:#}"))?;
    Ok(key.map(|k| Arc::new(Key(Arc::new(k))) as Arc<dyn SigningKey>))
}
