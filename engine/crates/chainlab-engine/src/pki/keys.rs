//! Keys (and serials) for each position, derived from the seed where the algorithm allows.
//!
//! Every derived byte string is SHAKE-256 over the schema id, the seed, the role, the
//! algorithm name and a purpose label, each length-prefixed; keys are then generated from
//! those bytes the way each standard defines key generation from a seed:
//! ML-DSA from its 32-byte seed (FIPS 204 `ML-DSA.KeyGen_internal(xi)`), SLH-DSA from
//! SK.seed || SK.prf || PK.seed (FIPS 205, 3n bytes), Ed25519 from its 32-byte private key
//! (RFC 8032), ECDSA from a scalar in [1, n-1]. RSA keys are random (no standard seeded RSA
//! key generation is offered by OpenSSL).

use std::ffi::CStr;
use std::ptr;

use anyhow::{anyhow, bail, Result};
use foreign_types::ForeignType;
use foreign_types::ForeignTypeRef;
use openssl::bn::{BigNum, BigNumContext};
use openssl::ec::{EcGroup, EcPoint, PointConversionForm};
use openssl::error::ErrorStack;
use openssl::hash::{Hasher, MessageDigest};
use openssl::nid::Nid;
use openssl::pkey::{Id, PKey, Private};
use openssl::pkey_ctx::PkeyCtx;
use openssl::rsa::Rsa;
use openssl_sys as sys;

use super::role::Role;
use crate::algorithms::{Algorithm, Family};
use crate::ossl;

/// Derived serial numbers have this many bytes: 16 (128 bits) is comfortably unique and,
/// with the top two bits fixed to 01, always DER-encodes to exactly 16 content bytes, so
/// certificate sizes do not vary with the seed.
pub const SERIAL_BYTES: usize = 16;

/// Extra bytes beyond the group order's size when deriving an ECDSA scalar, so reducing
/// modulo n - 1 leaves a bias below 2^-128.
const EC_SCALAR_EXTRA_BYTES: usize = 16;

/// First input of every derivation. Fixed: changing it changes every key and serial ever
/// generated, so it stays even if the manifest schema moves on.
const DOMAIN: &str = "chainlab.pki/1";

/// Inputs of every derivation for one position.
pub struct Derivation<'a> {
    seed: &'a str,
    /// The role's name, or another key's label (an MTC cosigner's).
    role: &'a str,
    algorithm: &'static Algorithm,
}

impl<'a> Derivation<'a> {
    pub fn new(seed: &'a str, role: Role, algorithm: &'static Algorithm) -> Derivation<'a> {
        Derivation::named(seed, role.name(), algorithm)
    }

    /// A key outside the hierarchy's positions, e.g. `mtc-cosigner-1`.
    pub fn named(seed: &'a str, label: &'a str, algorithm: &'static Algorithm) -> Derivation<'a> {
        Derivation {
            seed,
            role: label,
            algorithm,
        }
    }

    /// `len` bytes of SHAKE-256 over (domain, seed, role, algorithm, purpose), each field
    /// preceded by its length as 4 bytes big-endian, so distinct inputs never share an
    /// encoding.
    pub fn bytes(&self, purpose: &str, len: usize) -> Result<Vec<u8>> {
        let mut hasher = Hasher::new(MessageDigest::shake_256())?;
        for field in [DOMAIN, self.seed, self.role, self.algorithm.name, purpose] {
            let field_len = u32::try_from(field.len())
                .map_err(|_| anyhow!("--seed is longer than 4 GiB; allowed: shorter strings"))?;
            hasher.update(&field_len.to_be_bytes())?;
            hasher.update(field.as_bytes())?;
        }
        let mut out = vec![0; len];
        hasher.finish_xof(&mut out)?;
        Ok(out)
    }

    /// A positive serial number of exactly `SERIAL_BYTES` bytes (top bits 01).
    pub fn serial(&self) -> Result<[u8; SERIAL_BYTES]> {
        let mut serial = [0; SERIAL_BYTES];
        serial.copy_from_slice(&self.bytes("serial", SERIAL_BYTES)?);
        serial[0] = (serial[0] & 0x3f) | 0x40;
        Ok(serial)
    }
}

/// How the engine generates, and signs with, the keys of one algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// FIPS 204; OpenSSL's algorithm name is the table name (e.g. "ML-DSA-65").
    MlDsa,
    /// FIPS 205 with security parameter n (bytes); OpenSSL name = table name.
    SlhDsa {
        n: usize,
    },
    /// ECDSA on a named curve, certificates signed with the matching SHA-2 digest.
    Ecdsa {
        curve: Nid,
        group: &'static CStr,
        digest: &'static CStr,
    },
    Ed25519,
    /// RSA with e = 65537; certificates signed sha256WithRSAEncryption (PKCS#1 v1.5).
    Rsa {
        bits: u32,
    },
}

impl KeyKind {
    pub fn of(algorithm: &Algorithm) -> Result<KeyKind> {
        let unsupported = || {
            anyhow!(
                "algorithm {} has no key parameters in pki::keys (algorithms.rs and pki disagree)",
                algorithm.name
            )
        };
        Ok(match (algorithm.family, algorithm.name) {
            (Family::MlDsa, _) => KeyKind::MlDsa,
            (Family::SlhDsa, name) => {
                // "SLH-DSA-<hash>-<bits><s|f>": n is the security level in bytes.
                let level = name.rsplit('-').next().unwrap_or_default();
                let bits: usize = level
                    .get(..3)
                    .and_then(|bits| bits.parse().ok())
                    .ok_or_else(unsupported)?;
                KeyKind::SlhDsa { n: bits / 8 }
            }
            (Family::Ecdsa, "ECDSA-P256") => KeyKind::Ecdsa {
                curve: Nid::X9_62_PRIME256V1,
                group: c"P-256",
                digest: c"SHA256",
            },
            (Family::Ecdsa, "ECDSA-P384") => KeyKind::Ecdsa {
                curve: Nid::SECP384R1,
                group: c"P-384",
                digest: c"SHA384",
            },
            (Family::EdDsa, "Ed25519") => KeyKind::Ed25519,
            (Family::Rsa, "RSA-2048") => KeyKind::Rsa { bits: 2048 },
            (Family::Rsa, "RSA-3072") => KeyKind::Rsa { bits: 3072 },
            (Family::Falcon | Family::Mayo | Family::Uov | Family::Cross, name) => bail!(
                "{name} is a liboqs algorithm: it signs certificates of a hierarchy, not \
                 what OpenSSL signs (an MTC cosignature, an OpenSSL handshake)"
            ),
            (Family::Composite, name) => bail!(
                "{name} is a composite algorithm: it signs certificates of a hierarchy, not \
                 what OpenSSL signs (an MTC cosignature, an OpenSSL handshake)"
            ),
            _ => return Err(unsupported()),
        })
    }

    /// Digest named when signing a certificate; None for algorithms that hash internally.
    pub fn digest(self) -> Option<&'static CStr> {
        match self {
            KeyKind::Ecdsa { digest, .. } => Some(digest),
            KeyKind::Rsa { .. } => Some(c"SHA256"),
            KeyKind::MlDsa | KeyKind::SlhDsa { .. } | KeyKind::Ed25519 => None,
        }
    }
}

/// Generates the key of one position (deterministically unless RSA).
pub fn generate(algorithm: &'static Algorithm, derivation: &Derivation) -> Result<PKey<Private>> {
    match KeyKind::of(algorithm)? {
        KeyKind::MlDsa => keygen_from_seed(
            algorithm.name,
            ossl::OSSL_PKEY_PARAM_ML_DSA_SEED,
            &derivation.bytes("key", 32)?,
        ),
        KeyKind::SlhDsa { n } => keygen_from_seed(
            algorithm.name,
            ossl::OSSL_PKEY_PARAM_SLH_DSA_SEED,
            &derivation.bytes("key", 3 * n)?,
        ),
        KeyKind::Ecdsa { curve, group, .. } => ec_key(curve, group, derivation, "key"),
        KeyKind::Ed25519 => Ok(PKey::private_key_from_raw_bytes(
            &derivation.bytes("key", 32)?,
            Id::ED25519,
        )?),
        KeyKind::Rsa { bits } => Ok(PKey::from_rsa(Rsa::generate(bits)?)?),
    }
}

/// Key generation with the provider's seed parameter set on the generation context.
pub fn keygen_from_seed(name: &str, param: &CStr, seed: &[u8]) -> Result<PKey<Private>> {
    let name = std::ffi::CString::new(name)?;
    let mut ctx = new_ctx(&name)?;
    ctx.keygen_init()?;
    // SAFETY: the parameter array points into `seed`, which outlives the call; OpenSSL only
    // reads through the pointer (it copies the seed into its generation context).
    unsafe {
        let params = [
            sys::OSSL_PARAM_construct_octet_string(
                param.as_ptr(),
                seed.as_ptr() as *mut _,
                seed.len(),
            ),
            sys::OSSL_PARAM_construct_end(),
        ];
        check(
            sys::EVP_PKEY_CTX_set_params(ctx.as_ptr(), params.as_ptr()),
            "setting the key-generation seed",
        )?;
    }
    Ok(ctx.keygen()?)
}

/// ECDSA key from a derived scalar d in [1, n-1] (`purpose`'s bytes of the derivation),
/// imported with its public point d·G.
pub fn ec_key(
    curve: Nid,
    group_name: &CStr,
    derivation: &Derivation,
    purpose: &str,
) -> Result<PKey<Private>> {
    let group = EcGroup::from_curve_name(curve)?;
    let mut bn_ctx = BigNumContext::new()?;
    let mut order = BigNum::new()?;
    group.order(&mut order, &mut bn_ctx)?;
    let material = derivation.bytes(purpose, order.num_bytes() as usize + EC_SCALAR_EXTRA_BYTES)?;
    let mut order_minus_one = order.to_owned()?;
    order_minus_one.sub_word(1)?;
    let mut scalar = BigNum::new()?;
    let wide = BigNum::from_slice(&material)?;
    scalar.nnmod(&wide, &order_minus_one, &mut bn_ctx)?;
    scalar.add_word(1)?;
    ec_key_from_scalar(curve, group_name, &scalar)
}

/// The ECDSA key of private scalar `scalar`, with its public point d·G.
pub fn ec_key_from_scalar(
    curve: Nid,
    group_name: &CStr,
    scalar: &openssl::bn::BigNumRef,
) -> Result<PKey<Private>> {
    let group = EcGroup::from_curve_name(curve)?;
    let mut bn_ctx = BigNumContext::new()?;
    let mut point = EcPoint::new(&group)?;
    point.mul_generator2(&group, scalar, &mut bn_ctx)?;
    let public = point.to_bytes(&group, PointConversionForm::UNCOMPRESSED, &mut bn_ctx)?;

    let ctx = new_ctx(c"EC")?;
    // SAFETY: every pointer handed to the builder (names, scalar, point) stays alive until
    // `OSSL_PARAM_BLD_to_param` has copied them; builder and array are freed by their guards;
    // `EVP_PKEY_fromdata` only reads the array and returns an owned key.
    unsafe {
        let builder = ParamBuilder(check_ptr(sys::OSSL_PARAM_BLD_new(), "OSSL_PARAM_BLD_new")?);
        check(
            sys::OSSL_PARAM_BLD_push_utf8_string(
                builder.0,
                ossl::OSSL_PKEY_PARAM_GROUP_NAME.as_ptr(),
                group_name.as_ptr(),
                0,
            ),
            "adding the EC group",
        )?;
        check(
            sys::OSSL_PARAM_BLD_push_BN(
                builder.0,
                ossl::OSSL_PKEY_PARAM_PRIV_KEY.as_ptr(),
                scalar.as_ptr(),
            ),
            "adding the EC private scalar",
        )?;
        check(
            sys::OSSL_PARAM_BLD_push_octet_string(
                builder.0,
                ossl::OSSL_PKEY_PARAM_PUB_KEY.as_ptr(),
                public.as_ptr().cast(),
                public.len(),
            ),
            "adding the EC public point",
        )?;
        let params = Params(check_ptr(
            sys::OSSL_PARAM_BLD_to_param(builder.0),
            "OSSL_PARAM_BLD_to_param",
        )?);
        check(
            sys::EVP_PKEY_fromdata_init(ctx.as_ptr()),
            "EVP_PKEY_fromdata_init",
        )?;
        let mut key = ptr::null_mut();
        check(
            sys::EVP_PKEY_fromdata(ctx.as_ptr(), &mut key, sys::EVP_PKEY_KEYPAIR, params.0),
            "importing the EC key",
        )?;
        Ok(PKey::from_ptr(key))
    }
}

/// A key-management context for an algorithm fetched by name from the default provider.
fn new_ctx(name: &CStr) -> Result<PkeyCtx<()>> {
    // SAFETY: a NULL library context and property query select the defaults; the returned
    // context is owned by the `PkeyCtx`, which frees it.
    unsafe {
        let ctx = sys::EVP_PKEY_CTX_new_from_name(ptr::null_mut(), name.as_ptr(), ptr::null());
        Ok(PkeyCtx::from_ptr(check_ptr(
            ctx,
            "EVP_PKEY_CTX_new_from_name",
        )?))
    }
}

/// Owns an `OSSL_PARAM_BLD`.
struct ParamBuilder(*mut sys::OSSL_PARAM_BLD);

impl Drop for ParamBuilder {
    fn drop(&mut self) {
        // SAFETY: the pointer came from OSSL_PARAM_BLD_new and is freed exactly once.
        unsafe { sys::OSSL_PARAM_BLD_free(self.0) }
    }
}

/// Owns an `OSSL_PARAM` array allocated by OpenSSL.
struct Params(*mut sys::OSSL_PARAM);

impl Drop for Params {
    fn drop(&mut self) {
        // SAFETY: the pointer came from OSSL_PARAM_BLD_to_param and is freed exactly once.
        unsafe { sys::OSSL_PARAM_free(self.0) }
    }
}

/// Turns an OpenSSL status (1 = success) into an error carrying OpenSSL's error queue.
pub fn check(status: std::ffi::c_int, what: &str) -> Result<()> {
    if status > 0 {
        Ok(())
    } else {
        bail!("{what} failed: {}", ErrorStack::get())
    }
}

pub fn check_ptr<T>(pointer: *mut T, what: &str) -> Result<*mut T> {
    if pointer.is_null() {
        bail!("{what} failed: {}", ErrorStack::get())
    } else {
        Ok(pointer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::{lookup, Provider, ALGORITHMS};

    #[test]
    fn every_accepted_algorithm_has_key_parameters() {
        for algorithm in ALGORITHMS
            .iter()
            .filter(|a| a.provider == Provider::OpenSsl)
        {
            let kind = KeyKind::of(algorithm).unwrap();
            if let KeyKind::SlhDsa { n } = kind {
                assert!([16, 24, 32].contains(&n), "{}: n = {n}", algorithm.name);
            }
        }
    }

    #[test]
    fn derivations_separate_every_input() {
        let mldsa = lookup("ML-DSA-44").unwrap();
        let ed = lookup("Ed25519").unwrap();
        let base = Derivation::new("s", Role::Root, mldsa)
            .bytes("key", 32)
            .unwrap();
        assert_eq!(
            base,
            Derivation::new("s", Role::Root, mldsa)
                .bytes("key", 32)
                .unwrap()
        );
        for other in [
            Derivation::new("t", Role::Root, mldsa)
                .bytes("key", 32)
                .unwrap(),
            Derivation::new("s", Role::Leaf, mldsa)
                .bytes("key", 32)
                .unwrap(),
            Derivation::new("s", Role::Root, ed)
                .bytes("key", 32)
                .unwrap(),
            Derivation::new("s", Role::Root, mldsa)
                .bytes("serial", 32)
                .unwrap(),
        ] {
            assert_ne!(base, other);
        }
        let serial = Derivation::new("s", Role::Root, mldsa).serial().unwrap();
        assert_eq!(serial[0] & 0xc0, 0x40);
    }
}
