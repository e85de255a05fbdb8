//! The key-exchange operations `primitives` times (`keygen`, `encaps`, `decaps`, `derive`),
//! each as libssl performs its side of a TLS 1.3 key share: the server decodes the client's
//! share into a key (`EVP_PKEY_paramgen` of the group, `EVP_PKEY_set1_encoded_public_key`)
//! before it encapsulates or derives.

use std::ffi::{CStr, CString};
use std::ptr;

use anyhow::{anyhow, bail, Result};
use foreign_types::ForeignType;
use openssl::derive::Deriver;
use openssl::pkey::{PKey, Private, Public};
use openssl::pkey_ctx::PkeyCtx;
use openssl_sys as sys;

use crate::cli::{PrimitiveOp, PrimitivesArgs};
use crate::ossl;
use crate::pki::keys;

/// Key-exchange groups the engine can time, with the OpenSSL key type that implements each
/// and how TLS uses it.
#[derive(Debug, Clone, Copy)]
struct Group {
    name: &'static str,
    key_type: &'static CStr,
    /// The group parameter set on the key-generation context (EC curves, FFDHE groups).
    group_param: Option<&'static CStr>,
    kem: bool,
}

const fn group(
    name: &'static str,
    key_type: &'static CStr,
    group_param: Option<&'static CStr>,
    kem: bool,
) -> Group {
    Group {
        name,
        key_type,
        group_param,
        kem,
    }
}

/// Same names and order as the campaign's group list (chainlab/campaign/algorithms.py).
const GROUPS: &[Group] = &[
    group("X25519", c"X25519", None, false),
    group("X448", c"X448", None, false),
    group("P-256", c"EC", Some(c"P-256"), false),
    group("P-384", c"EC", Some(c"P-384"), false),
    group("P-521", c"EC", Some(c"P-521"), false),
    group("ffdhe2048", c"DH", Some(c"ffdhe2048"), false),
    group("ffdhe3072", c"DH", Some(c"ffdhe3072"), false),
    group("ffdhe4096", c"DH", Some(c"ffdhe4096"), false),
    group("ffdhe6144", c"DH", Some(c"ffdhe6144"), false),
    group("ffdhe8192", c"DH", Some(c"ffdhe8192"), false),
    group("X25519MLKEM768", c"X25519MLKEM768", None, true),
    group("SecP256r1MLKEM768", c"SecP256r1MLKEM768", None, true),
    group("SecP384r1MLKEM1024", c"SecP384r1MLKEM1024", None, true),
    group("MLKEM512", c"ML-KEM-512", None, true),
    group("MLKEM768", c"ML-KEM-768", None, true),
    group("MLKEM1024", c"ML-KEM-1024", None, true),
];

fn lookup_group(name: &str) -> Result<&'static Group> {
    GROUPS
        .iter()
        .find(|g| g.name.eq_ignore_ascii_case(name.trim()))
        .ok_or_else(|| {
            anyhow!(
                "--subject {name:?}: not a key-exchange group; allowed: {}",
                GROUPS.iter().map(|g| g.name).collect::<Vec<_>>().join(", ")
            )
        })
}

pub(super) fn group_op(args: &PrimitivesArgs) -> Result<Box<dyn FnMut() -> Result<()>>> {
    let g = lookup_group(&args.subject)?;
    let op = args.op;
    match (op, g.kem) {
        (PrimitiveOp::Keygen, _) => Ok(Box::new(move || keygen(g).map(drop))),
        (PrimitiveOp::Encaps, true) => {
            // The client's key share as it arrives; each operation decodes it into a key as
            // libssl's server does (for ML-KEM the decoding expands the public matrix).
            let share = encoded_public_key(&keygen(g)?)?;
            Ok(Box::new(move || {
                encapsulate(&peer_key(g, &share)?).map(drop)
            }))
        }
        (PrimitiveOp::Decaps, true) => {
            let own = keygen(g)?;
            let (ciphertext, _) = encapsulate(&own)?;
            Ok(Box::new(move || decapsulate(&own, &ciphertext).map(drop)))
        }
        (PrimitiveOp::Derive, false) => {
            let own = keygen(g)?;
            let share = encoded_public_key(&keygen(g)?)?;
            Ok(Box::new(move || {
                let peer = peer_key(g, &share)?;
                let mut deriver = Deriver::new(&own)?;
                deriver.set_peer(&peer)?;
                deriver.derive_to_vec()?;
                Ok(())
            }))
        }
        _ => bail!(
            "--op {}: {} is {}; allowed: {}",
            op.name(),
            g.name,
            if g.kem {
                "a KEM"
            } else {
                "a Diffie-Hellman group"
            },
            if g.kem {
                "keygen, encaps, decaps"
            } else {
                "keygen, derive"
            }
        ),
    }
}

/// A fresh key of the group, as a TLS key share is made.
fn keygen(g: &Group) -> Result<PKey<Private>> {
    // SAFETY: a NULL library context and property query select the defaults; the context is
    // owned by the PkeyCtx, which frees it.
    let mut ctx = unsafe {
        let raw =
            sys::EVP_PKEY_CTX_new_from_name(ptr::null_mut(), g.key_type.as_ptr(), ptr::null());
        PkeyCtx::<()>::from_ptr(keys::check_ptr(raw, "EVP_PKEY_CTX_new_from_name")?)
    };
    ctx.keygen_init()?;
    if let Some(param) = g.group_param {
        let value = CString::from(param);
        // SAFETY: the array points at `value`, alive until after the call, which copies it.
        unsafe {
            let params = [
                ossl::OSSL_PARAM_construct_utf8_string(
                    ossl::OSSL_PKEY_PARAM_GROUP_NAME.as_ptr(),
                    value.as_ptr() as *mut _,
                    0,
                ),
                sys::OSSL_PARAM_construct_end(),
            ];
            keys::check(
                sys::EVP_PKEY_CTX_set_params(ctx.as_ptr(), params.as_ptr()),
                "setting the group",
            )?;
        }
    }
    Ok(ctx.keygen()?)
}

/// A key's public half in its TLS encoding (the key share a peer sends).
fn encoded_public_key(key: &PKey<Private>) -> Result<Vec<u8>> {
    let mut raw: *mut u8 = ptr::null_mut();
    // SAFETY: `key` is valid; on success `raw` points at `len` bytes OpenSSL allocated, copied
    // out and freed here.
    unsafe {
        let len = ossl::EVP_PKEY_get1_encoded_public_key(key.as_ptr(), &mut raw);
        if len == 0 || raw.is_null() {
            bail!("EVP_PKEY_get1_encoded_public_key failed");
        }
        let out = std::slice::from_raw_parts(raw, len).to_vec();
        sys::CRYPTO_free(raw.cast(), c"primitives.rs".as_ptr(), line!() as i32);
        Ok(out)
    }
}

/// A peer's key from its key share, as libssl's `ssl_generate_param_group` and
/// `tls13_set_encoded_pub_key` make it: a parameter key of the group (its internal name set:
/// the curve or FFDHE group, the X25519/X448 key type, "" for the KEM groups), then the
/// encoded public key decoded into it.
fn peer_key(g: &Group, share: &[u8]) -> Result<PKey<Public>> {
    let name = g
        .group_param
        .unwrap_or(if g.kem { c"" } else { g.key_type });
    // SAFETY: NULL library context and properties select the defaults; every pointer is
    // checked before use; the context is freed on every path and the key is owned by the
    // returned PKey (or freed on error).
    unsafe {
        let ctx = keys::check_ptr(
            sys::EVP_PKEY_CTX_new_from_name(ptr::null_mut(), g.key_type.as_ptr(), ptr::null()),
            "EVP_PKEY_CTX_new_from_name",
        )?;
        let mut key: *mut sys::EVP_PKEY = ptr::null_mut();
        let made = keys::check(sys::EVP_PKEY_paramgen_init(ctx), "EVP_PKEY_paramgen_init")
            .and_then(|_| {
                keys::check(
                    ossl::EVP_PKEY_CTX_set_group_name(ctx, name.as_ptr()),
                    "EVP_PKEY_CTX_set_group_name",
                )
            })
            .and_then(|_| keys::check(sys::EVP_PKEY_paramgen(ctx, &mut key), "EVP_PKEY_paramgen"));
        sys::EVP_PKEY_CTX_free(ctx);
        made?;
        let key = PKey::from_ptr(keys::check_ptr(key, "EVP_PKEY_paramgen")?);
        keys::check(
            ossl::EVP_PKEY_set1_encoded_public_key(key.as_ptr(), share.as_ptr(), share.len()),
            "EVP_PKEY_set1_encoded_public_key: the peer's key share",
        )?;
        Ok(key)
    }
}

/// (ciphertext, shared secret) encapsulated to `peer`'s public key (the server's part).
fn encapsulate<T>(peer: &PKey<T>) -> Result<(Vec<u8>, Vec<u8>)> {
    let ctx = PkeyCtx::new(peer)?;
    // SAFETY: valid context; the first call writes the two lengths, the second fills buffers
    // of those lengths, both owned here.
    unsafe {
        keys::check(
            sys::EVP_PKEY_encapsulate_init(ctx.as_ptr(), ptr::null()),
            "EVP_PKEY_encapsulate_init",
        )?;
        let (mut wrapped_len, mut secret_len) = (0usize, 0usize);
        keys::check(
            sys::EVP_PKEY_encapsulate(
                ctx.as_ptr(),
                ptr::null_mut(),
                &mut wrapped_len,
                ptr::null_mut(),
                &mut secret_len,
            ),
            "EVP_PKEY_encapsulate (sizes)",
        )?;
        let mut wrapped = vec![0u8; wrapped_len];
        let mut secret = vec![0u8; secret_len];
        keys::check(
            sys::EVP_PKEY_encapsulate(
                ctx.as_ptr(),
                wrapped.as_mut_ptr(),
                &mut wrapped_len,
                secret.as_mut_ptr(),
                &mut secret_len,
            ),
            "EVP_PKEY_encapsulate",
        )?;
        wrapped.truncate(wrapped_len);
        secret.truncate(secret_len);
        Ok((wrapped, secret))
    }
}

/// The shared secret recovered from `ciphertext` with `own` private key (the client's part).
fn decapsulate(own: &PKey<Private>, ciphertext: &[u8]) -> Result<Vec<u8>> {
    let ctx = PkeyCtx::new(own)?;
    // SAFETY: valid context; `ciphertext` is read only; the output buffer is owned here.
    unsafe {
        keys::check(
            sys::EVP_PKEY_decapsulate_init(ctx.as_ptr(), ptr::null()),
            "EVP_PKEY_decapsulate_init",
        )?;
        let mut secret_len = 0usize;
        keys::check(
            sys::EVP_PKEY_decapsulate(
                ctx.as_ptr(),
                ptr::null_mut(),
                &mut secret_len,
                ciphertext.as_ptr(),
                ciphertext.len(),
            ),
            "EVP_PKEY_decapsulate (size)",
        )?;
        let mut secret = vec![0u8; secret_len];
        keys::check(
            sys::EVP_PKEY_decapsulate(
                ctx.as_ptr(),
                secret.as_mut_ptr(),
                &mut secret_len,
                ciphertext.as_ptr(),
                ciphertext.len(),
            ),
            "EVP_PKEY_decapsulate",
        )?;
        secret.truncate(secret_len);
        Ok(secret)
    }
}

// -- certificate decompression -------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_group_of_the_campaign_list_is_timed() {
        // The campaign's list (chainlab/campaign/algorithms.py GROUPS) has 16 groups: 10
        // Diffie-Hellman, 6 KEMs.
        assert_eq!(GROUPS.len(), 16);
        assert_eq!(GROUPS.iter().filter(|g| g.kem).count(), 6);
    }
}
