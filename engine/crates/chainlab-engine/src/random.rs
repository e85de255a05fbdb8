//! `--random-seed` on the OpenSSL engine: every random byte libcrypto hands out, to libssl
//! (randoms, key shares, ticket keys) and to the providers (ML-KEM encapsulation, ML-DSA's
//! and ECDSA's signing randomness, key generation), comes from `chainlab_record::random`'s
//! seeded stream. OpenSSL 3.5 and 4.0 consult a process-wide `RAND_METHOD` in
//! `RAND_bytes_ex` and `RAND_priv_bytes_ex` before their DRBGs, so one method covers both
//! paths; tests/seeded_random.rs checks that two runs with one seed put the same bytes on
//! the wire.

use std::ffi::{c_int, c_uchar, c_void};

use anyhow::bail;
use chainlab_record::random::{self, Side};

use crate::ossl;

/// Installs the seeded source for `side`; before the process draws anything.
pub fn install(seed: u64, side: Side) -> anyhow::Result<()> {
    random::enable(seed, side);
    // SAFETY: METHOD is a static with 'static function pointers; libcrypto keeps the pointer.
    if unsafe { ossl::RAND_set_rand_method(&METHOD) } != 1 {
        bail!("--random-seed: libcrypto refused the seeded random method");
    }
    Ok(())
}

static METHOD: ossl::RAND_METHOD = ossl::RAND_METHOD {
    seed: Some(ignore),
    bytes: Some(bytes),
    cleanup: None,
    add: Some(ignore_add),
    pseudorand: Some(bytes),
    status: Some(ready),
};

unsafe extern "C" fn bytes(buf: *mut c_uchar, num: c_int) -> c_int {
    let Ok(len) = usize::try_from(num) else {
        return 0;
    };
    if len == 0 {
        return 1;
    }
    // SAFETY: libcrypto passes a writable buffer of `num` bytes.
    let out = unsafe { std::slice::from_raw_parts_mut(buf, len) };
    c_int::from(random::fill(out))
}

/// Seeding material from the library is ignored: the stream is the seed's alone.
unsafe extern "C" fn ignore(_buf: *const c_void, _num: c_int) -> c_int {
    1
}

unsafe extern "C" fn ignore_add(_buf: *const c_void, _num: c_int, _entropy: f64) -> c_int {
    1
}

unsafe extern "C" fn ready() -> c_int {
    1
}
