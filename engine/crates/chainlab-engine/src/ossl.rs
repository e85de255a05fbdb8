//! The one home of OpenSSL 3.5 declarations that `openssl-sys` 0.9 does not carry: the
//! libcrypto functions and parameter names the PKI needs, and the libssl functions and the
//! constants of `ssl.h` / `sslerr.h` / `tls1.h` the TLS code needs.
//!
//! A plain list of `extern "C"` declarations and constants, each with the manual page or
//! header it mirrors, copied from the headers of the project's OpenSSL
//! (`engine/.openssl/include/openssl`); the integration tests exercise each one, so a
//! renumbering upstream shows up as a failing test. They resolve against the same static
//! libraries `openssl-sys` links (which this crate calls `sys`). Safe wrappers live next to
//! their callers (e.g. `pki::sign`), apart from the two string helpers at the end.

use std::ffi::{c_char, c_int, c_long, c_uchar, c_void, CStr};

use openssl_sys::{
    stack_st_X509, BIO, BIO_ADDR, BIO_MSG, EVP_MD_CTX, EVP_PKEY, EVP_PKEY_CTX, OSSL_LIB_CTX,
    OSSL_PARAM, SSL, SSL_CTX, SSL_METHOD, X509, X509_STORE_CTX,
};

// -- libcrypto: keys and certificate signing ---------------------------------------------

extern "C" {
    /// `SSL_certs_clear(3)` (ssl.h): removes every certificate, key and chain of `s`'s own
    /// configuration (the context's are untouched).
    pub fn SSL_certs_clear(s: *mut openssl_sys::SSL);
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

    /// `EVP_DigestVerifyInit_ex(3)` (evp.h): as `EVP_DigestSignInit_ex`, for verifying.
    pub fn EVP_DigestVerifyInit_ex(
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

    /// `EVP_PKEY_CTX_set_group_name(3)` (evp.h): the group a parameter or key generation
    /// context makes (libssl sets a TLS group's internal name; "" for the KEM groups).
    pub fn EVP_PKEY_CTX_set_group_name(ctx: *mut EVP_PKEY_CTX, name: *const c_char) -> c_int;

    /// `EVP_PKEY_set1_encoded_public_key(3)` (evp.h): sets `pkey`'s public key from its TLS
    /// encoding (a key share), as libssl does with a peer's; 1 on success.
    pub fn EVP_PKEY_set1_encoded_public_key(
        pkey: *mut EVP_PKEY,
        publ: *const c_uchar,
        publen: usize,
    ) -> c_int;

    /// `EVP_PKEY_get1_encoded_public_key(3)` (evp.h): `pkey`'s public key in its TLS encoding,
    /// allocated into `*ppub` (freed with `OPENSSL_free`); its length, 0 on error.
    pub fn EVP_PKEY_get1_encoded_public_key(pkey: *mut EVP_PKEY, ppub: *mut *mut c_uchar) -> usize;
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

/// `OSSL_SIGNATURE_PARAM_CONTEXT_STRING` (core_names.h): octet string; ML-DSA's and
/// SLH-DSA's application context (FIPS 204 ctx), at most 255 bytes.
pub const OSSL_SIGNATURE_PARAM_CONTEXT_STRING: &CStr = c"context-string";

// -- libcrypto: compression (comp.h), as libssl uses it for RFC 8879 ---------------------

/// `COMP_METHOD` and `COMP_CTX` (comp.h): opaque.
#[repr(C)]
pub struct COMP_METHOD {
    _private: [u8; 0],
}
#[repr(C)]
pub struct COMP_CTX {
    _private: [u8; 0],
}

extern "C" {
    /// `COMP_zlib_oneshot(3)` and siblings: the one-shot methods libssl compresses and
    /// expands certificate messages with; NULL when the algorithm is not compiled in.
    pub fn COMP_zlib_oneshot() -> *mut COMP_METHOD;
    pub fn COMP_brotli_oneshot() -> *mut COMP_METHOD;
    pub fn COMP_zstd_oneshot() -> *mut COMP_METHOD;
    /// `COMP_CTX_new(3)` / `COMP_CTX_free(3)`.
    pub fn COMP_CTX_new(meth: *mut COMP_METHOD) -> *mut COMP_CTX;
    pub fn COMP_CTX_free(ctx: *mut COMP_CTX);
    /// `COMP_compress_block(3)` / `COMP_expand_block(3)`: bytes written to `out`, or <= 0.
    pub fn COMP_compress_block(
        ctx: *mut COMP_CTX,
        out: *mut u8,
        olen: c_int,
        input: *mut u8,
        ilen: c_int,
    ) -> c_int;
    pub fn COMP_expand_block(
        ctx: *mut COMP_CTX,
        out: *mut u8,
        olen: c_int,
        input: *mut u8,
        ilen: c_int,
    ) -> c_int;
}

// -- libcrypto: the random source ------------------------------------------------------

/// `RAND_METHOD` (rand.h, `struct rand_meth_st`; deprecated in 3.0, present in 3.5 and 4.0):
/// a process-wide random source that `RAND_bytes_ex` and `RAND_priv_bytes_ex`, and so the
/// providers' key generation and signing, consult before their DRBGs.
#[repr(C)]
pub struct RAND_METHOD {
    pub seed: Option<unsafe extern "C" fn(buf: *const c_void, num: c_int) -> c_int>,
    pub bytes: Option<unsafe extern "C" fn(buf: *mut c_uchar, num: c_int) -> c_int>,
    pub cleanup: Option<unsafe extern "C" fn()>,
    pub add: Option<unsafe extern "C" fn(buf: *const c_void, num: c_int, entropy: f64) -> c_int>,
    pub pseudorand: Option<unsafe extern "C" fn(buf: *mut c_uchar, num: c_int) -> c_int>,
    pub status: Option<unsafe extern "C" fn() -> c_int>,
}

extern "C" {
    /// `RAND_set_rand_method(3)`: installs `meth` for the whole process; 1 on success.
    pub fn RAND_set_rand_method(meth: *const RAND_METHOD) -> c_int;
}

// -- libssl: certificate compression, verification, handshake state ----------------------

extern "C" {
    /// RFC 8879: the compression algorithms this side offers (client) or uses (server).
    pub fn SSL_CTX_set1_cert_comp_preference(
        ctx: *mut SSL_CTX,
        algs: *mut c_int,
        len: usize,
    ) -> c_int;
    /// Compresses the context's current certificate chain with `alg`; returns the compressed
    /// length (0 on failure) and hands over `*data` (free with `OPENSSL_free`).
    pub fn SSL_CTX_get1_compressed_cert(
        ctx: *mut SSL_CTX,
        alg: c_int,
        data: *mut *mut c_uchar,
        orig_len: *mut usize,
    ) -> usize;
    /// Installs a pre-compressed chain for the context's current certificate.
    pub fn SSL_CTX_set1_compressed_cert(
        ctx: *mut SSL_CTX,
        alg: c_int,
        comp_data: *mut c_uchar,
        comp_length: usize,
        orig_length: usize,
    ) -> c_int;
    /// Replaces libssl's call to `X509_verify_cert` for peer chains.
    pub fn SSL_CTX_set_cert_verify_callback(
        ctx: *mut SSL_CTX,
        cb: Option<unsafe extern "C" fn(*mut X509_STORE_CTX, *mut c_void) -> c_int>,
        arg: *mut c_void,
    );
    pub fn X509_STORE_CTX_get0_untrusted(ctx: *const X509_STORE_CTX) -> *mut stack_st_X509;
    /// The certificate to verify (the peer's end-entity certificate).
    pub fn X509_STORE_CTX_get0_cert(ctx: *const X509_STORE_CTX) -> *mut X509;
    /// `SSL_CTX_set_security_callback(3)` / `SSL_CTX_get_security_callback(3)`: the check
    /// libssl asks before using a certificate, key, group or signature algorithm.
    pub fn SSL_CTX_set_security_callback(ctx: *mut SSL_CTX, cb: SecurityCallback);
    pub fn SSL_CTX_get_security_callback(ctx: *const SSL_CTX) -> SecurityCallback;
    pub fn X509_STORE_CTX_set0_untrusted(ctx: *mut X509_STORE_CTX, sk: *mut stack_st_X509);
    /// `OSSL_HANDSHAKE_STATE` of the connection (last state the state machine reached).
    pub fn SSL_get_state(ssl: *const SSL) -> c_int;
    /// Provider name of a key's type, e.g. "ML-DSA-65", "SLH-DSA-SHAKE-128f", "EC".
    pub fn EVP_PKEY_get0_type_name(key: *const EVP_PKEY) -> *const c_char;
}

/// The security callback's type (ssl.h): `other` is the object checked (an `X509*` for the
/// certificate operations).
pub type SecurityCallback = Option<
    unsafe extern "C" fn(
        s: *const SSL,
        ctx: *const SSL_CTX,
        op: c_int,
        bits: c_int,
        nid: c_int,
        other: *mut c_void,
        ex: *mut c_void,
    ) -> c_int,
>;

/// ssl.h: the security check of a certificate's signature ("ca md too weak" when it fails),
/// the same value in 3.5 and 4.0; `SSL_SECOP_PEER` marks a peer's certificate.
pub const SSL_SECOP_CA_MD: c_int = 18 | (6 << 16);
pub const SSL_SECOP_PEER: c_int = 0x1000;

// -- libssl and libcrypto: QUIC (3.5), the parts `openssl-sys` 0.9 lacks ----------------

/// `BIO_callback_fn_ex` (bio.h): called before and after each BIO operation; `oper` has
/// `BIO_CB_RETURN` set after. Its return value replaces the operation's (`ret` to pass it on).
pub type BioCallbackEx = unsafe extern "C" fn(
    b: *mut BIO,
    oper: c_int,
    argp: *const c_char,
    len: usize,
    argi: c_int,
    argl: c_long,
    ret: c_int,
    processed: *mut usize,
) -> c_long;

extern "C" {
    /// `OSSL_QUIC_server_method(3)`: the QUIC server method, usable only through
    /// `SSL_new_listener` (`SSL_new` with it fails).
    pub fn OSSL_QUIC_server_method() -> *const SSL_METHOD;
    /// `SSL_new_listener(3)`: a QUIC listener on the context; `SSL_LISTENER_FLAG_NO_VALIDATE`
    /// turns address validation (Retry) off.
    pub fn SSL_new_listener(ctx: *mut SSL_CTX, flags: u64) -> *mut SSL;
    /// `SSL_listen(3)`: starts accepting connections on a listener.
    pub fn SSL_listen(ssl: *mut SSL) -> c_int;
    /// `SSL_accept_connection(3)`: the next incoming connection, or NULL
    /// (`SSL_ACCEPT_CONNECTION_NO_BLOCK`: at once when none is queued).
    pub fn SSL_accept_connection(ssl: *mut SSL, flags: u64) -> *mut SSL;
    /// `BIO_new_dgram(3)` (bio.h): a datagram BIO over a UDP socket.
    pub fn BIO_new_dgram(fd: c_int, close_flag: c_int) -> *mut BIO;
    /// `BIO_set_callback_ex(3)`, `BIO_set_callback_arg(3)`, `BIO_get_callback_arg(3)`.
    pub fn BIO_set_callback_ex(b: *mut BIO, callback: Option<BioCallbackEx>);
    pub fn BIO_set_callback_arg(b: *mut BIO, arg: *mut c_char);
    pub fn BIO_get_callback_arg(b: *const BIO) -> *mut c_char;
    /// `BIO_ADDR_new(3)` and friends (bio.h): a socket address as OpenSSL holds it.
    pub fn BIO_ADDR_new() -> *mut BIO_ADDR;
    pub fn BIO_ADDR_free(ap: *mut BIO_ADDR);
    pub fn BIO_ADDR_rawmake(
        ap: *mut BIO_ADDR,
        family: c_int,
        where_: *const c_void,
        wherelen: usize,
        port: libc::c_ushort,
    ) -> c_int;
    pub fn BIO_ADDR_family(ap: *const BIO_ADDR) -> c_int;
    pub fn BIO_ADDR_rawaddress(ap: *const BIO_ADDR, p: *mut c_void, l: *mut usize) -> c_int;
    /// Port in network byte order.
    pub fn BIO_ADDR_rawport(ap: *const BIO_ADDR) -> libc::c_ushort;
    /// `SSL_set_msg_callback(3)`: called for each protocol message; over QUIC, for each frame
    /// received (`content_type` `SSL3_RT_QUIC_FRAME_*`, `buf` at the frame's type byte).
    pub fn SSL_set_msg_callback(ssl: *mut SSL, cb: Option<MsgCallback>);
}

/// The `SSL_set_msg_callback` callback type (ssl.h).
pub type MsgCallback = unsafe extern "C" fn(
    write_p: c_int,
    version: c_int,
    content_type: c_int,
    buf: *const c_void,
    len: usize,
    ssl: *mut SSL,
    arg: *mut c_void,
);

/// `SSL_CTRL_SET_MSG_CALLBACK_ARG` (ssl.h): `SSL_set_msg_callback_arg` is a macro over it.
pub const SSL_CTRL_SET_MSG_CALLBACK_ARG: c_int = 16;
/// `SSL3_RT_QUIC_FRAME_FULL` (ssl3.h): a whole QUIC frame (not CRYPTO, STREAM or PADDING).
pub const SSL3_RT_QUIC_FRAME_FULL: c_int = 0x202;

/// `SSL_LISTENER_FLAG_NO_VALIDATE` (ssl.h): no Retry round trip to validate client addresses.
pub const SSL_LISTENER_FLAG_NO_VALIDATE: u64 = 1 << 1;
/// `SSL_ACCEPT_CONNECTION_NO_BLOCK` (ssl.h).
pub const SSL_ACCEPT_CONNECTION_NO_BLOCK: u64 = 1 << 0;
/// `SSL_SHUTDOWN_FLAG_RAPID` (ssl.h): close without waiting out the terminating period.
pub const SSL_SHUTDOWN_FLAG_RAPID: u64 = 1 << 0;
/// `SSL_SHUTDOWN_FLAG_NO_BLOCK` (ssl.h).
pub const SSL_SHUTDOWN_FLAG_NO_BLOCK: u64 = 1 << 2;
/// `SSL_CONN_CLOSE_FLAG_LOCAL` / `_TRANSPORT` (ssl.h): who closed, and whether the code is a
/// transport error code (else an application's).
pub const SSL_CONN_CLOSE_FLAG_LOCAL: u32 = 1 << 0;
pub const SSL_CONN_CLOSE_FLAG_TRANSPORT: u32 = 1 << 1;
/// `BIO_CB_RECVMMSG` / `BIO_CB_SENDMMSG` / `BIO_CB_RETURN` (bio.h).
pub const BIO_CB_RECVMMSG: c_int = 0x07;
pub const BIO_CB_SENDMMSG: c_int = 0x08;
pub const BIO_CB_RETURN: c_int = 0x80;
/// `BIO_NOCLOSE` (bio.h): freeing the BIO leaves the socket open.
pub const BIO_NOCLOSE: c_int = 0;

/// `BIO_MMSG_CB_ARGS` (bio.h): what a `BIO_CB_SENDMMSG` / `BIO_CB_RECVMMSG` callback gets as
/// `argp`.
#[repr(C)]
pub struct BioMmsgCbArgs {
    pub msg: *mut BIO_MSG,
    pub stride: usize,
    pub num_msg: usize,
    pub flags: u64,
    pub msgs_processed: *mut usize,
}

/// `SSL_CTRL_SET_MAX_CERT_LIST` (ssl.h): `SSL_CTX_set_max_cert_list` is a macro over it.
pub const SSL_CTRL_SET_MAX_CERT_LIST: c_int = 51;
/// `SSL_CTRL_GET_SIGNATURE_NAME` / `..._PEER_SIGNATURE_NAME` (ssl.h, 3.5): the TLS name of
/// the signature scheme this side / the peer used in CertificateVerify.
pub const SSL_CTRL_GET_SIGNATURE_NAME: c_int = 140;
pub const SSL_CTRL_GET_PEER_SIGNATURE_NAME: c_int = 141;
/// `SSL_CTRL_GET0_IMPLEMENTED_GROUPS` (ssl.h, 3.5): the group names the library implements.
pub const SSL_CTRL_GET0_IMPLEMENTED_GROUPS: c_int = 139;

/// `SSL_OP_NO_TX_CERTIFICATE_COMPRESSION` / `SSL_OP_NO_RX_CERTIFICATE_COMPRESSION` (ssl.h):
/// never send compressed certificates / never offer to receive them.
pub const SSL_OP_NO_TX_CERTIFICATE_COMPRESSION: u64 = 1 << 32;
pub const SSL_OP_NO_RX_CERTIFICATE_COMPRESSION: u64 = 1 << 33;

/// `TLSEXT_comp_cert_*` (tls1.h): RFC 8879 algorithm identifiers.
pub const TLSEXT_COMP_CERT_ZLIB: c_int = 1;
pub const TLSEXT_COMP_CERT_BROTLI: c_int = 2;
pub const TLSEXT_COMP_CERT_ZSTD: c_int = 3;

/// `TLS_ST_CW_CLNT_HELLO` in `OSSL_HANDSHAKE_STATE` (ssl.h): the client has sent its
/// ClientHello and has not processed a ServerHello yet.
pub const TLS_ST_CW_CLNT_HELLO: c_int = 13;

/// `ERR_LIB_SSL` (err.h): the library code of libssl's errors.
pub const ERR_LIB_SSL: c_int = 20;

/// `sslerr.h` reason codes the error classification keys on.
pub const SSL_R_NO_SUITABLE_KEY_SHARE: c_int = 101;
pub const SSL_R_NO_SUITABLE_SIGNATURE_ALGORITHM: c_int = 118;
pub const SSL_R_CERTIFICATE_VERIFY_FAILED: c_int = 134;
pub const SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE: c_int = 199;
pub const SSL_R_UNKNOWN_CERTIFICATE_TYPE: c_int = 247;
pub const SSL_R_UNEXPECTED_EOF_WHILE_READING: c_int = 294;
pub const SSL_R_NO_SUITABLE_GROUPS: c_int = 295;
pub const SSL_R_WRONG_SIGNATURE_TYPE: c_int = 370;
pub const SSL_R_NO_SHARED_SIGNATURE_ALGORITHMS: c_int = 376;
pub const SSL_R_WRONG_CURVE: c_int = 378;
pub const SSL_R_WRONG_CERTIFICATE_TYPE: c_int = 383;
pub const SSL_R_NO_SHARED_GROUPS: c_int = 410;

/// `SSL_AD_HANDSHAKE_FAILURE` (ssl.h): the alert a server sends when it finds no common
/// group, signature scheme or cipher suite.
pub const SSL_AD_HANDSHAKE_FAILURE: c_int = 40;

/// Calls `SSL_ctrl` with a `const char **` out-parameter; `None` when the control returns 0.
///
/// # Safety
/// `ssl` must be a valid `SSL` pointer and `cmd` a control that writes a `const char *`.
pub unsafe fn ctrl_name(ssl: *mut SSL, cmd: c_int) -> Option<&'static str> {
    let mut name: *const c_char = std::ptr::null();
    let ok = openssl_sys::SSL_ctrl(ssl, cmd, 0, (&mut name as *mut *const c_char).cast());
    static_str(if ok as c_long == 1 {
        name
    } else {
        std::ptr::null()
    })
}

/// Borrows a C string owned by a static OpenSSL table (algorithm, group, alert names).
///
/// # Safety
/// `ptr` must be null or point at a NUL-terminated string that lives as long as the process.
pub unsafe fn static_str(ptr: *const c_char) -> Option<&'static str> {
    if ptr.is_null() {
        return None;
    }
    std::ffi::CStr::from_ptr(ptr).to_str().ok()
}
