//! OpenSSL 3.x functions and parameter names that `openssl-sys` 0.9 does not declare.
//!
//! A plain list of `extern "C"` declarations and constants, each with the manual page or
//! header it mirrors, checked against the headers of the project's OpenSSL
//! (`engine/.openssl/include/openssl`). They resolve against the same static libcrypto that
//! `openssl-sys` links. Safe wrappers live next to their callers (e.g. `pki::sign`).

use std::ffi::{c_char, c_int, CStr};

use openssl_sys::{EVP_MD_CTX, EVP_PKEY, EVP_PKEY_CTX, OSSL_LIB_CTX, OSSL_PARAM, X509};

extern "C" {
    /// `EVP_DigestSignInit_ex(3)` (evp.h): sets up `ctx` for signing with `pkey`; `mdname`
    /// NULL for algorithms without a separate digest (ML-DSA, SLH-DSA, Ed25519); `params`
    /// (may be NULL) are applied to the signature context before first use.
    pub fn EVP_DigestSignInit_ex(
        ctx: *mut EVP_MD_CTX,
        pctx: *mut *mut EVP_PKEY_CTX,
        mdname: *const c_char,
        libctx: *mut OSSL_LIB_CTX,
        props: *const c_char,
        pkey: *mut EVP_PKEY,
        params: *const OSSL_PARAM,
    ) -> c_int;

    /// `X509_sign_ctx(3)` (x509.h): signs the certificate with a context prepared by
    /// `EVP_DigestSignInit_ex`; sets both signature AlgorithmIdentifiers from the provider.
    /// Returns the signature length, or 0 on error.
    pub fn X509_sign_ctx(x: *mut X509, ctx: *mut EVP_MD_CTX) -> c_int;

    /// `OSSL_PARAM_construct_int(3)` (params.h): an `int` parameter pointing at `buf`.
    pub fn OSSL_PARAM_construct_int(key: *const c_char, buf: *mut c_int) -> OSSL_PARAM;

    /// `OSSL_PARAM_construct_utf8_string(3)` (params.h): a UTF-8 string parameter pointing at
    /// `buf` (`bsize` 0: length taken from the NUL terminator).
    pub fn OSSL_PARAM_construct_utf8_string(
        key: *const c_char,
        buf: *mut c_char,
        bsize: usize,
    ) -> OSSL_PARAM;
}

/// `OSSL_PKEY_PARAM_ML_DSA_SEED` (core_names.h): the 32-byte seed ("xi" of FIPS 204) an
/// ML-DSA key is generated from; settable on a key-generation context.
pub const OSSL_PKEY_PARAM_ML_DSA_SEED: &CStr = c"seed";

/// `OSSL_PKEY_PARAM_SLH_DSA_SEED` (core_names.h): SK.seed || SK.prf || PK.seed (3n bytes,
/// n = 16, 24, 32 for the 128/192/256 sets) on an SLH-DSA key-generation context.
pub const OSSL_PKEY_PARAM_SLH_DSA_SEED: &CStr = c"seed";

/// `OSSL_PKEY_PARAM_GROUP_NAME` (core_names.h): an EC key's named curve, e.g. "P-256".
pub const OSSL_PKEY_PARAM_GROUP_NAME: &CStr = c"group";

/// `OSSL_PKEY_PARAM_PRIV_KEY` (core_names.h): private key (EC: the scalar, as a BIGNUM).
pub const OSSL_PKEY_PARAM_PRIV_KEY: &CStr = c"priv";

/// `OSSL_PKEY_PARAM_PUB_KEY` (core_names.h): public key (EC: encoded point octets).
pub const OSSL_PKEY_PARAM_PUB_KEY: &CStr = c"pub";

/// `OSSL_SIGNATURE_PARAM_DETERMINISTIC` (core_names.h): int; 1 makes ML-DSA and SLH-DSA
/// sign without fresh randomness (FIPS 204 / FIPS 205 deterministic variants).
pub const OSSL_SIGNATURE_PARAM_DETERMINISTIC: &CStr = c"deterministic";

/// `OSSL_SIGNATURE_PARAM_NONCE_TYPE` (core_names.h): unsigned int; 1 makes ECDSA (and DSA)
/// derive the nonce per RFC 6979 instead of drawing it at random.
pub const OSSL_SIGNATURE_PARAM_NONCE_TYPE: &CStr = c"nonce-type";
