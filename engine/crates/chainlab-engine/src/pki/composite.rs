//! Composite ML-DSA over OpenSSL (`chainlab_composite::Components`): what `pki` issues
//! composite keys and certificates with, and what this engine's tests verify them with.
//! ML-DSA from its 32-byte seed (FIPS 204 KeyGen_internal) and signed with the composite's
//! label as its context, ECDSA with its curve's hash and RFC 6979 nonces, Ed25519 pure: the
//! deterministic variants `pki` signs everything with, so a seed repeats its certificates.
//!
//! The OpenSSL stacks do not serve or verify composite signatures in TLS (libssl knows no
//! such key type): `info` leaves them out of what the stack signs, and `validate` refuses
//! them there (docs/stacks.md).

use std::ptr;

use anyhow::{anyhow, bail, Context, Result};
use chainlab_composite::{Components, MlDsa, MlDsaSigner, TradSigner, Traditional};
use foreign_types::ForeignType;
use openssl::bn::{BigNum, BigNumContext};
use openssl::ec::{EcGroup, EcKey, EcPoint, PointConversionForm};
use openssl::md_ctx::MdCtx;
use openssl::nid::Nid;
use openssl::pkey::{Id, PKey, Private, Public};
use openssl_sys as sys;

use super::{cert, keys};
use crate::algorithms::{self, Algorithm};
use crate::ossl;

/// OpenSSL's component operations.
pub struct OpenSsl;

struct Component {
    key: PKey<Private>,
    algorithm: &'static Algorithm,
}

impl MlDsaSigner for Component {
    fn sign(&self, message: &[u8], context: &[u8]) -> Result<Vec<u8>> {
        cert::sign_message_in(&self.key, self.algorithm, message, Some(context))
    }
}

impl TradSigner for Component {
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>> {
        cert::sign_message(&self.key, self.algorithm, message)
    }
}

/// The engine's table entry of a component.
fn component(name: &str) -> Result<&'static Algorithm> {
    algorithms::lookup(name)
}

/// A curve's NID and OpenSSL group name.
fn curve(trad: Traditional) -> Option<(Nid, &'static std::ffi::CStr)> {
    match trad {
        Traditional::EcdsaP256Sha256 => Some((Nid::X9_62_PRIME256V1, c"P-256")),
        Traditional::EcdsaP384Sha384 => Some((Nid::SECP384R1, c"P-384")),
        Traditional::Ed25519 => None,
    }
}

impl Components for OpenSsl {
    fn mldsa_key(&self, level: MlDsa, seed: &[u8; 32]) -> Result<(Box<dyn MlDsaSigner>, Vec<u8>)> {
        let key = keys::keygen_from_seed(level.name(), ossl::OSSL_PKEY_PARAM_ML_DSA_SEED, seed)?;
        let public = key.raw_public_key().context("the ML-DSA public key")?;
        let algorithm = component(level.name())?;
        Ok((Box::new(Component { key, algorithm }), public))
    }

    fn trad_key(
        &self,
        trad: Traditional,
        private: &[u8],
    ) -> Result<(Box<dyn TradSigner>, Vec<u8>)> {
        let algorithm = component(trad.name())?;
        let (key, public) = match curve(trad) {
            Some((nid, group_name)) => {
                let scalar = BigNum::from_slice(private)?;
                let key = keys::ec_key_from_scalar(nid, group_name, &scalar)?;
                let ec = key.ec_key()?;
                let mut ctx = BigNumContext::new()?;
                let point = ec.public_key().to_bytes(
                    ec.group(),
                    PointConversionForm::UNCOMPRESSED,
                    &mut ctx,
                )?;
                (key, point)
            }
            None => {
                let key = PKey::private_key_from_raw_bytes(private, Id::ED25519)?;
                let public = key.raw_public_key()?;
                (key, public)
            }
        };
        Ok((Box::new(Component { key, algorithm }), public))
    }

    fn mldsa_verify(
        &self,
        level: MlDsa,
        public: &[u8],
        message: &[u8],
        context: &[u8],
        signature: &[u8],
    ) -> bool {
        mldsa_public(level, public)
            .and_then(|key| verify(&key, None, Some(context), message, signature))
            .unwrap_or(false)
    }

    fn trad_verify(&self, trad: Traditional, public: &[u8], message: &[u8], sig: &[u8]) -> bool {
        let key = match curve(trad) {
            Some((nid, _)) => ec_public(nid, public),
            None => PKey::public_key_from_raw_bytes(public, Id::ED25519).map_err(Into::into),
        };
        let digest = match trad {
            Traditional::EcdsaP256Sha256 => Some(c"SHA256"),
            Traditional::EcdsaP384Sha384 => Some(c"SHA384"),
            Traditional::Ed25519 => None,
        };
        key.and_then(|key| verify(&key, digest, None, message, sig))
            .unwrap_or(false)
    }
}

fn ec_public(nid: Nid, point: &[u8]) -> Result<PKey<Public>> {
    let group = EcGroup::from_curve_name(nid)?;
    let mut ctx = BigNumContext::new()?;
    let point = EcPoint::from_bytes(&group, point, &mut ctx)?;
    Ok(PKey::from_ec_key(EcKey::from_public_key(&group, &point)?)?)
}

fn mldsa_public(level: MlDsa, public: &[u8]) -> Result<PKey<Public>> {
    let name = std::ffi::CString::new(level.name())?;
    // SAFETY: `name` and `public` outlive the call, which copies the key into a new EVP_PKEY
    // owned by the returned PKey.
    let key = unsafe {
        sys::EVP_PKEY_new_raw_public_key_ex(
            ptr::null_mut(),
            name.as_ptr(),
            ptr::null(),
            public.as_ptr(),
            public.len(),
        )
    };
    if key.is_null() {
        bail!(
            "OpenSSL cannot read a {} public key of {} bytes",
            level.name(),
            public.len()
        );
    }
    // SAFETY: a fresh, owned EVP_PKEY.
    Ok(unsafe { PKey::from_ptr(key) })
}

/// EVP_DigestVerify of `signature` over `message`, with the digest and ML-DSA context given.
fn verify(
    key: &PKey<Public>,
    digest: Option<&std::ffi::CStr>,
    context: Option<&[u8]>,
    message: &[u8],
    signature: &[u8],
) -> Result<bool> {
    let md_ctx = MdCtx::new()?;
    // SAFETY: the parameter array points into `context`, which outlives the call; `md_ctx`
    // and `key` are live and owned.
    unsafe {
        let mut params = Vec::with_capacity(2);
        if let Some(context) = context {
            params.push(sys::OSSL_PARAM_construct_octet_string(
                ossl::OSSL_SIGNATURE_PARAM_CONTEXT_STRING.as_ptr(),
                context.as_ptr() as *mut _,
                context.len(),
            ));
        }
        params.push(sys::OSSL_PARAM_construct_end());
        if ossl::EVP_DigestVerifyInit_ex(
            md_ctx.as_ptr(),
            ptr::null_mut(),
            digest.map_or(ptr::null(), |d| d.as_ptr()),
            ptr::null_mut(),
            ptr::null(),
            key.as_ptr(),
            params.as_ptr(),
        ) != 1
        {
            return Err(anyhow!("EVP_DigestVerifyInit_ex failed"));
        }
        Ok(sys::EVP_DigestVerify(
            md_ctx.as_ptr(),
            signature.as_ptr(),
            signature.len(),
            message.as_ptr(),
            message.len(),
        ) == 1)
    }
}
