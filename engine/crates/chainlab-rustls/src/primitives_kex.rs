//! aws-lc's key exchange as rustls runs it in TLS 1.3 (`aws-lc-rs`: `agreement` for X25519
//! and the NIST curves, `kem` for ML-KEM; a hybrid is its two parts, as rustls composes
//! them), timed per operation like `chainlab-engine primitives --op keygen|encaps|decaps|
//! derive`:
//! - `keygen`: the client's key share: key generation and the public key's bytes;
//! - `encaps` (a KEM or a hybrid): the server's part: parse the client's share, encapsulate
//!   to it (a hybrid's classical half: a key of its own, its public bytes and the agreement);
//! - `decaps`: the client's part: decapsulate the ciphertext (and agree with the server's
//!   classical half);
//! - `derive` (a Diffie-Hellman group): agree with the peer's public key.

use anyhow::{anyhow, bail, Result};
use aws_lc_rs::agreement::{self, PrivateKey, UnparsedPublicKey, ECDH_P256, ECDH_P384, X25519};
use aws_lc_rs::kem::{Ciphertext, DecapsulationKey, EncapsulationKey, ML_KEM_1024, ML_KEM_768};
use chainlab_record::primitives::{KeyExchange, SignatureOp};

/// The groups timed here: the rustls stack's (chainlab.campaign.stacks).
pub const GROUPS: [&str; 7] = [
    "X25519MLKEM768",
    "SecP256r1MLKEM768",
    "MLKEM768",
    "MLKEM1024",
    "X25519",
    "P-256",
    "P-384",
];

type Kem = aws_lc_rs::kem::Algorithm<aws_lc_rs::kem::AlgorithmId>;

/// A group: its Diffie-Hellman half, its ML-KEM half, or both (a hybrid).
pub struct Group {
    dh: Option<&'static agreement::Algorithm>,
    kem: Option<&'static Kem>,
}

impl Group {
    pub fn named(name: &str) -> Option<Group> {
        let (dh, kem): (_, Option<&'static Kem>) = match name {
            "X25519MLKEM768" => (Some(&X25519), Some(&ML_KEM_768)),
            "SecP256r1MLKEM768" => (Some(&ECDH_P256), Some(&ML_KEM_768)),
            "MLKEM768" => (None, Some(&ML_KEM_768)),
            "MLKEM1024" => (None, Some(&ML_KEM_1024)),
            "X25519" => (Some(&X25519), None),
            "P-256" => (Some(&ECDH_P256), None),
            "P-384" => (Some(&ECDH_P384), None),
            _ => return None,
        };
        Some(Group { dh, kem })
    }
}

fn fail<T>(what: &'static str) -> impl FnOnce(T) -> anyhow::Error {
    move |_| anyhow!("aws-lc {what} failed")
}

/// A Diffie-Hellman key share: the private key and its public bytes.
fn dh_share(alg: &'static agreement::Algorithm) -> Result<(PrivateKey, Vec<u8>)> {
    let key = PrivateKey::generate(alg).map_err(fail("key generation"))?;
    let public = key.compute_public_key().map_err(fail("public key"))?;
    Ok((key, public.as_ref().to_vec()))
}

fn agree(own: &PrivateKey, alg: &'static agreement::Algorithm, peer: &[u8]) -> Result<()> {
    agreement::agree(
        own,
        UnparsedPublicKey::new(alg, peer),
        anyhow!("aws-lc agreement failed"),
        |secret| {
            std::hint::black_box(secret);
            Ok(())
        },
    )
}

/// An ML-KEM key share: the decapsulation key and the encapsulation key's bytes.
fn kem_share(alg: &'static Kem) -> Result<(DecapsulationKey, Vec<u8>)> {
    let key = DecapsulationKey::generate(alg).map_err(fail("ML-KEM key generation"))?;
    let public = key
        .encapsulation_key()
        .map_err(fail("ML-KEM encapsulation key"))?;
    let bytes = public.key_bytes().map_err(fail("ML-KEM key bytes"))?;
    Ok((key, bytes.as_ref().to_vec()))
}

fn encapsulate(alg: &'static Kem, peer: &[u8]) -> Result<Vec<u8>> {
    let key = EncapsulationKey::new(alg, peer).map_err(fail("ML-KEM key parsing"))?;
    let (ciphertext, secret) = key.encapsulate().map_err(fail("ML-KEM encapsulation"))?;
    std::hint::black_box(secret);
    Ok(ciphertext.as_ref().to_vec())
}

impl KeyExchange for Group {
    fn prepare(&self, op: SignatureOp) -> Result<Box<dyn Fn() -> Result<()> + '_>> {
        match (op, self.dh, self.kem) {
            (SignatureOp::Keygen, dh, kem) => Ok(Box::new(move || {
                if let Some(alg) = dh {
                    std::hint::black_box(dh_share(alg)?);
                }
                if let Some(alg) = kem {
                    std::hint::black_box(kem_share(alg)?);
                }
                Ok(())
            })),
            (SignatureOp::Derive, Some(alg), None) => {
                let (own, _) = dh_share(alg)?;
                let (_, peer) = dh_share(alg)?;
                Ok(Box::new(move || agree(&own, alg, &peer)))
            }
            (SignatureOp::Encaps, dh, Some(kem)) => {
                let client_dh = dh.map(dh_share).transpose()?;
                let (_, client_kem) = kem_share(kem)?;
                Ok(Box::new(move || {
                    if let (Some(alg), Some((_, peer))) = (dh, &client_dh) {
                        let (own, public) = dh_share(alg)?;
                        std::hint::black_box(public);
                        agree(&own, alg, peer)?;
                    }
                    std::hint::black_box(encapsulate(kem, &client_kem)?);
                    Ok(())
                }))
            }
            (SignatureOp::Decaps, dh, Some(kem)) => {
                let client_dh = dh.map(dh_share).transpose()?;
                let server_dh = dh.map(dh_share).transpose()?;
                let (own, public) = kem_share(kem)?;
                let ciphertext = encapsulate(kem, &public)?;
                Ok(Box::new(move || {
                    if let (Some(alg), Some((key, _)), Some((_, peer))) =
                        (dh, &client_dh, &server_dh)
                    {
                        agree(key, alg, peer)?;
                    }
                    let secret = own
                        .decapsulate(Ciphertext::from(ciphertext.as_ref()))
                        .map_err(fail("ML-KEM decapsulation"))?;
                    std::hint::black_box(secret);
                    Ok(())
                }))
            }
            (op, _, kem) => bail!(
                "--op {}: not an operation of this group; allowed: {}",
                op.name(),
                if kem.is_some() {
                    "keygen, encaps, decaps"
                } else {
                    "keygen, derive"
                }
            ),
        }
    }
}
