//! BoringSSL's key exchange as its libssl composes a TLS 1.3 key share (ssl_key_share.cc:
//! `X25519_keypair` / `X25519`, `MLKEM*_generate_key` / `_parse_public_key` / `_encap` /
//! `_decap`, EC keys and ECDH for the NIST curves; X25519MLKEM768 is its ML-KEM-768 half and
//! its X25519 half), through boring-sys where the safe crate has no wrapper, timed per
//! operation like `chainlab-engine primitives --op keygen|encaps|decaps|derive`:
//! - `keygen`: the client's key share (the key and its public bytes);
//! - `encaps` (ML-KEM or the hybrid): the server's part: parse the client's share,
//!   encapsulate to it (the hybrid: and an X25519 key of its own, agreed with the client's);
//! - `decaps`: the client's part: decapsulate (the hybrid: and agree with the server's);
//! - `derive` (X25519, P-256, P-384): agree with the peer's public key.

use std::mem::MaybeUninit;

use anyhow::{bail, Result};
use boring::bn::BigNumContext;
use boring::derive::Deriver;
use boring::ec::{EcGroup, EcKey, EcPoint, PointConversionForm};
use boring::nid::Nid;
use boring::pkey::{PKey, Private};
use boring_sys as sys;
use chainlab_record::primitives::{KeyExchange, SignatureOp};

use crate::capabilities::GROUPS;

/// A group: its classical half (X25519 or a NIST curve; None: none) and its ML-KEM size.
pub struct Group {
    classical: Option<Classical>,
    kem: Option<Kem>,
}

#[derive(Clone, Copy)]
enum Classical {
    X25519,
    Curve(Nid),
}

#[derive(Clone, Copy)]
enum Kem {
    MlKem768,
    MlKem1024,
}

impl Group {
    /// The group of an OpenSSL `--groups` name, if the BoringSSL stack has it.
    pub fn named(name: &str) -> Option<Group> {
        let g = GROUPS.iter().find(|g| g.names.contains(&name))?;
        let (classical, kem) = match g.recorded {
            "X25519MLKEM768" => (Some(Classical::X25519), Some(Kem::MlKem768)),
            "MLKEM1024" => (None, Some(Kem::MlKem1024)),
            "x25519" => (Some(Classical::X25519), None),
            "secp256r1" => (Some(Classical::Curve(Nid::X9_62_PRIME256V1)), None),
            "secp384r1" => (Some(Classical::Curve(Nid::SECP384R1)), None),
            _ => return None,
        };
        Some(Group { classical, kem })
    }

    /// Every group's name, for an error.
    pub fn names() -> Vec<&'static str> {
        GROUPS.iter().map(|g| g.names[0]).collect()
    }
}

/// A classical private key and its public bytes.
enum ClassicalKey {
    X25519([u8; 32]),
    Curve(PKey<Private>),
}

impl Classical {
    fn keygen(self) -> Result<(ClassicalKey, Vec<u8>)> {
        match self {
            Classical::X25519 => {
                let (mut public, mut private) = ([0u8; 32], [0u8; 32]);
                // SAFETY: both buffers are the 32 bytes X25519_keypair writes.
                unsafe { sys::X25519_keypair(public.as_mut_ptr(), private.as_mut_ptr()) };
                Ok((ClassicalKey::X25519(private), public.to_vec()))
            }
            Classical::Curve(nid) => {
                let group = EcGroup::from_curve_name(nid)?;
                let key = EcKey::generate(&group)?;
                let mut ctx = BigNumContext::new()?;
                let public = key.public_key().to_bytes(
                    &group,
                    PointConversionForm::UNCOMPRESSED,
                    &mut ctx,
                )?;
                Ok((ClassicalKey::Curve(PKey::from_ec_key(key)?), public))
            }
        }
    }

    fn agree(self, own: &ClassicalKey, peer: &[u8]) -> Result<()> {
        match (self, own) {
            (Classical::X25519, ClassicalKey::X25519(private)) => {
                if peer.len() != 32 {
                    bail!("X25519: a {}-byte peer share", peer.len());
                }
                let mut shared = [0u8; 32];
                // SAFETY: 32-byte output, private key and peer value, as X25519 takes them.
                let ok =
                    unsafe { sys::X25519(shared.as_mut_ptr(), private.as_ptr(), peer.as_ptr()) };
                if ok != 1 {
                    bail!("X25519 failed");
                }
                std::hint::black_box(shared);
                Ok(())
            }
            (Classical::Curve(nid), ClassicalKey::Curve(private)) => {
                let group = EcGroup::from_curve_name(nid)?;
                let mut ctx = BigNumContext::new()?;
                let point = EcPoint::from_bytes(&group, peer, &mut ctx)?;
                let peer_key = PKey::from_ec_key(EcKey::from_public_key(&group, &point)?)?;
                let mut deriver = Deriver::new(private)?;
                deriver.set_peer(&peer_key)?;
                std::hint::black_box(deriver.derive_to_vec()?);
                Ok(())
            }
            _ => bail!("a key of another group"),
        }
    }
}

/// An ML-KEM private key (boxed: BoringSSL's opaque structs are kilobytes) and its public
/// key's bytes.
enum KemKey {
    MlKem768(Box<sys::MLKEM768_private_key>),
    MlKem1024(Box<sys::MLKEM1024_private_key>),
}

impl Kem {
    fn keygen(self) -> (KemKey, Vec<u8>) {
        match self {
            Kem::MlKem768 => {
                let mut public = vec![0u8; sys::MLKEM768_PUBLIC_KEY_BYTES as usize];
                let mut key = Box::new(MaybeUninit::<sys::MLKEM768_private_key>::uninit());
                // SAFETY: the public buffer is MLKEM768_PUBLIC_KEY_BYTES long; the function
                // initialises the private key it is given; no seed is asked for.
                let key = unsafe {
                    sys::MLKEM768_generate_key(
                        public.as_mut_ptr(),
                        std::ptr::null_mut(),
                        key.as_mut_ptr(),
                    );
                    Box::from_raw(Box::into_raw(key).cast::<sys::MLKEM768_private_key>())
                };
                (KemKey::MlKem768(key), public)
            }
            Kem::MlKem1024 => {
                let mut public = vec![0u8; sys::MLKEM1024_PUBLIC_KEY_BYTES as usize];
                let mut key = Box::new(MaybeUninit::<sys::MLKEM1024_private_key>::uninit());
                // SAFETY: as for ML-KEM-768, with ML-KEM-1024's sizes.
                let key = unsafe {
                    sys::MLKEM1024_generate_key(
                        public.as_mut_ptr(),
                        std::ptr::null_mut(),
                        key.as_mut_ptr(),
                    );
                    Box::from_raw(Box::into_raw(key).cast::<sys::MLKEM1024_private_key>())
                };
                (KemKey::MlKem1024(key), public)
            }
        }
    }

    /// Parses the client's public key and encapsulates to it: the ciphertext.
    fn encapsulate(self, public: &[u8]) -> Result<Vec<u8>> {
        let mut cbs = sys::CBS {
            data: public.as_ptr(),
            len: public.len(),
        };
        let mut secret = [0u8; 32];
        match self {
            Kem::MlKem768 => {
                let mut key = Box::new(MaybeUninit::<sys::MLKEM768_public_key>::uninit());
                let mut ciphertext = vec![0u8; sys::MLKEM768_CIPHERTEXT_BYTES as usize];
                // SAFETY: the CBS spans `public`; parsing initialises the key, which encap
                // then reads; the ciphertext buffer is MLKEM768_CIPHERTEXT_BYTES long.
                unsafe {
                    if sys::MLKEM768_parse_public_key(key.as_mut_ptr(), &mut cbs) != 1
                        || cbs.len != 0
                    {
                        bail!("ML-KEM-768: the client's share does not parse");
                    }
                    sys::MLKEM768_encap(ciphertext.as_mut_ptr(), secret.as_mut_ptr(), key.as_ptr());
                }
                std::hint::black_box(secret);
                Ok(ciphertext)
            }
            Kem::MlKem1024 => {
                let mut key = Box::new(MaybeUninit::<sys::MLKEM1024_public_key>::uninit());
                let mut ciphertext = vec![0u8; sys::MLKEM1024_CIPHERTEXT_BYTES as usize];
                // SAFETY: as for ML-KEM-768, with ML-KEM-1024's sizes.
                unsafe {
                    if sys::MLKEM1024_parse_public_key(key.as_mut_ptr(), &mut cbs) != 1
                        || cbs.len != 0
                    {
                        bail!("ML-KEM-1024: the client's share does not parse");
                    }
                    sys::MLKEM1024_encap(
                        ciphertext.as_mut_ptr(),
                        secret.as_mut_ptr(),
                        key.as_ptr(),
                    );
                }
                std::hint::black_box(secret);
                Ok(ciphertext)
            }
        }
    }
}

impl KemKey {
    fn decapsulate(&self, ciphertext: &[u8]) -> Result<()> {
        let mut secret = [0u8; 32];
        // SAFETY: the private key was initialised by generate_key; the secret buffer is the
        // 32 bytes decap writes; the ciphertext's length is passed with it.
        let ok = unsafe {
            match self {
                KemKey::MlKem768(key) => sys::MLKEM768_decap(
                    secret.as_mut_ptr(),
                    ciphertext.as_ptr(),
                    ciphertext.len(),
                    &**key,
                ),
                KemKey::MlKem1024(key) => sys::MLKEM1024_decap(
                    secret.as_mut_ptr(),
                    ciphertext.as_ptr(),
                    ciphertext.len(),
                    &**key,
                ),
            }
        };
        if ok != 1 {
            bail!("ML-KEM decapsulation failed");
        }
        std::hint::black_box(secret);
        Ok(())
    }
}

impl KeyExchange for Group {
    fn prepare(&self, op: SignatureOp) -> Result<Box<dyn FnOnce() -> Result<()> + '_>> {
        let (classical, kem) = (self.classical, self.kem);
        match (op, kem) {
            (SignatureOp::Keygen, _) => Ok(Box::new(move || {
                if let Some(k) = kem {
                    std::hint::black_box(k.keygen());
                }
                if let Some(c) = classical {
                    std::hint::black_box(c.keygen()?);
                }
                Ok(())
            })),
            (SignatureOp::Derive, None) => {
                let c = classical.expect("a group without ML-KEM is classical");
                let (own, _) = c.keygen()?;
                let (_, peer) = c.keygen()?;
                Ok(Box::new(move || c.agree(&own, &peer)))
            }
            (SignatureOp::Encaps, Some(k)) => {
                let (_, client) = k.keygen();
                let client_classical = classical.map(|c| c.keygen()).transpose()?;
                Ok(Box::new(move || {
                    std::hint::black_box(k.encapsulate(&client)?);
                    if let (Some(c), Some((_, peer))) = (classical, &client_classical) {
                        let (own, public) = c.keygen()?;
                        std::hint::black_box(public);
                        c.agree(&own, peer)?;
                    }
                    Ok(())
                }))
            }
            (SignatureOp::Decaps, Some(k)) => {
                let (own, public) = k.keygen();
                let ciphertext = k.encapsulate(&public)?;
                let own_classical = classical.map(|c| c.keygen()).transpose()?;
                let server_classical = classical.map(|c| c.keygen()).transpose()?;
                Ok(Box::new(move || {
                    own.decapsulate(&ciphertext)?;
                    if let (Some(c), Some((key, _)), Some((_, peer))) =
                        (classical, &own_classical, &server_classical)
                    {
                        c.agree(key, peer)?;
                    }
                    Ok(())
                }))
            }
            (op, kem) => bail!(
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
