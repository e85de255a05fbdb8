//! The TLS 1.3 contexts of both sides, built once per process, before anything is timed.
//!
//! Every option that changes what goes on the wire is set here and only here: protocol
//! version (1.3 only), groups, signature schemes, certificate compression, the largest
//! Certificate message accepted, the served chain (server) and verification (client).
//! Bad values fail here, with one line naming the value and what is allowed.

use std::net::IpAddr;

use anyhow::{anyhow, bail};
pub use chainlab_record::serve::ClientAuth;
use foreign_types::ForeignTypeRef;
use openssl::ssl::{
    AlpnError, SslContext, SslContextBuilder, SslMethod, SslMode, SslOptions, SslSessionCacheMode,
    SslVerifyMode, SslVersion,
};
use openssl::stack::Stack;
use openssl::x509::store::X509StoreBuilder;
use openssl::x509::verify::X509VerifyFlags;
use openssl::x509::{X509VerifyResult, X509};
use openssl_sys as sys;

use crate::cli::{ChainPolicy, ClientArgs, ServeArgs, TlsArgs, Transport};
use crate::ossl;

use super::certs::{load_chain, read_certificates};
use super::served::{
    available_compressions, comp_alg, compression_name, load_second_chain, load_served_chain,
    precompress, CompressionSetup, ServedChain,
};

/// The server's context and the facts the ready line reports about it.
pub struct ServerContext {
    pub ctx: SslContext,
    pub served_chain: ServedChain,
    pub max_cert_list: u64,
    pub cert_compression: CompressionSetup,
    /// Mutual TLS: what the server asks of clients (`None`: no client certificate asked).
    pub client_auth: Option<ClientAuth>,
    /// Dual-chain serving (`--second-pki`): the address of the second chain's leaf, to tell
    /// which chain a connection was sent.
    pub second_leaf: Option<usize>,
}

/// The client's context plus what error classification needs to know about it.
pub struct ClientContext {
    pub ctx: SslContext,
    /// The client restricted its signature schemes (`--sigalgs`): a handshake_failure alert
    /// before ServerHello can then mean "no shared signature scheme" as well as "no shared
    /// group" (see `errors`).
    pub sigalgs_restricted: bool,
    pub verify: bool,
    /// The client authenticates with a certificate (`--cert-pki`).
    pub client_cert: bool,
}

/// Builds the server context from `serve`'s arguments.
pub fn server(args: &ServeArgs) -> anyhow::Result<ServerContext> {
    build_server(args, None)
}

/// The server context; `answering` (the available list) for a context a `--trust-anchor-ids`
/// server switches a connection to, which answers the extension but chooses nothing.
fn build_server(args: &ServeArgs, answering: Option<&[u8]>) -> anyhow::Result<ServerContext> {
    let mut builder = SslContextBuilder::new(method(args.tls.transport, Role::Server))?;
    common(&mut builder, &args.tls)?;
    if args.prefer_server_groups {
        prefer_server_groups(&mut builder, &args.tls.groups)?;
    }
    if args.tls.transport == Transport::Quic {
        // QUIC requires ALPN (RFC 9001, Section 8.1): agree on ours or refuse the client
        // with no_application_protocol.
        builder.set_alpn_select_callback(|_, offered| {
            openssl::ssl::select_next_proto(QUIC_ALPN, offered).ok_or(AlpnError::ALERT_FATAL)
        });
    }
    builder.set_num_tickets(args.tickets as usize)?;
    // TLS 1.3 tickets are stateless (the session travels inside the ticket), so the server
    // resumes without a session cache; turning the cache off keeps per-connection work
    // independent of how many connections came before.
    builder.set_session_cache_mode(SslSessionCacheMode::OFF);
    // Send exactly the chain file's certificates: never let libssl complete the chain from a
    // store (the served-chain policy is the experiment's variable).
    builder.set_mode(SslMode::NO_AUTO_CHAIN);
    if args.chain.is_mtc() {
        super::mtc::accept_mtc_signature(&mut builder);
    }
    let (served_chain, first) =
        load_served_chain(&mut builder, &args.pki, args.chain, &args.served_file())?;
    let second_leaf = match &args.second_pki {
        Some(dir) => {
            let second = load_second_chain(&mut builder, args, dir)?;
            let address = second.leaf_address();
            // The client's order is libssl's own choice among its certificates.
            if args.chain_order == chainlab_record::dual::ChainOrder::Server {
                super::served::choose_by_server_order(&mut builder, [first, second]);
            }
            Some(address)
        }
        None => None,
    };
    let cert_compression = if args.tls.transport == Transport::Quic {
        // libssl compresses a chain by building a Certificate message on an SSL object of
        // the context, which a QUIC server context cannot make: compress on a TLS context
        // holding the same chain (the message is the same TLS 1.3 Certificate), install here.
        let mut scratch = SslContextBuilder::new(SslMethod::tls_server())?;
        if args.chain.is_mtc() {
            super::mtc::accept_mtc_signature(&mut scratch);
        }
        load_served_chain(&mut scratch, &args.pki, args.chain, &args.served_file())?;
        precompress(&mut scratch, Some(&mut builder), args.tls.cert_compression)?
    } else {
        precompress(&mut builder, None, args.tls.cert_compression)?
    };
    let client_auth = match &args.client_ca {
        Some(path) => Some(require_client_certificates(&mut builder, path)?),
        None => None,
    };
    if args.mtc_retry_standalone {
        if args.tls.transport != Transport::Tcp {
            bail!("--mtc-retry-standalone: TCP only (a QUIC server does not switch certificates by SNI)");
        }
        serve_standalone_on_retry(&mut builder, args)?;
    }
    match answering {
        Some(available) => super::anchors::answer(&mut builder, available.to_vec())?,
        None if args.trust_anchor_ids => serve_by_trust_anchor(&mut builder, args)?,
        None => {}
    }
    Ok(ServerContext {
        second_leaf,
        ctx: builder.build(),
        served_chain,
        max_cert_list: args.tls.max_cert_list,
        cert_compression,
        client_auth,
    })
}

/// Builds the client context from `handshake`'s arguments.
pub fn client(args: &ClientArgs) -> anyhow::Result<ClientContext> {
    let mut builder = SslContextBuilder::new(method(args.tls.transport, Role::Client))?;
    common(&mut builder, &args.tls)?;
    if args.tls.transport == Transport::Quic {
        builder.set_alpn_protos(QUIC_ALPN)?;
    }
    // Sessions are handed from one connection to the next explicitly (`--resume`), never
    // through the library's client cache.
    builder.set_session_cache_mode(SslSessionCacheMode::OFF);
    if args.no_verify {
        builder.set_verify(SslVerifyMode::NONE);
        // With SSL_VERIFY_NONE libssl still runs X509_verify_cert and ignores the result;
        // "no verification" here means no chain work at all (the CertificateVerify
        // signature is still checked: that is the handshake, not chain validation).
        // SAFETY: the context pointer is valid; the callback ignores its argument.
        unsafe {
            ossl::SSL_CTX_set_cert_verify_callback(
                builder.as_ptr(),
                Some(accept_any_chain),
                std::ptr::null_mut(),
            )
        };
    } else if let Some(trust) = &args.mtc_trust {
        super::mtc::install_verifier(&mut builder, args, trust)?;
    } else {
        let ca = args.ca.as_deref().ok_or_else(|| {
            anyhow!("--ca is required unless --no-verify or --mtc-trust is given")
        })?;
        let mut store = X509StoreBuilder::new()?;
        for cert in read_certificates(ca, "--ca")? {
            store.add_cert(cert)?;
        }
        builder.set_cert_store(store.build());
        builder.set_verify(SslVerifyMode::PEER);
        let param = builder.verify_param_mut();
        match args.servername.parse::<IpAddr>() {
            Ok(ip) => param.set_ip(ip)?,
            Err(_) => param.set_host(&args.servername)?,
        }
        if args.partial_chain {
            param.set_flags(X509VerifyFlags::PARTIAL_CHAIN)?;
        }
        if let Some(path) = &args.untrusted {
            install_untrusted(&mut builder, path)?;
        }
    }
    super::anchors::request(&mut builder, args)?;
    if let Some(dir) = &args.cert_pki {
        load_chain(
            &mut builder,
            &dir.join(ChainPolicy::LeafIntermediates.file_name()),
            &dir.join("leaf.key"),
            "--cert-pki",
        )?;
    }
    Ok(ClientContext {
        ctx: builder.build(),
        sigalgs_restricted: args.tls.sigalgs.is_some(),
        verify: !args.no_verify,
        client_cert: args.cert_pki.is_some(),
    })
}

/// The ALPN protocol a QUIC client offers and the server selects (wire format: length-prefixed).
/// QUIC connections must negotiate one; over TCP none is offered, so TLS bytes stay as they were.
const QUIC_ALPN: &[u8] = b"\x08chainlab";

enum Role {
    Server,
    Client,
}

/// The libssl method of a side: TLS over TCP, or OpenSSL's QUIC client or server.
fn method(transport: Transport, role: Role) -> SslMethod {
    match (transport, role) {
        (Transport::Tcp, Role::Server) => SslMethod::tls_server(),
        (Transport::Tcp, Role::Client) => SslMethod::tls_client(),
        // SAFETY: both functions return pointers to static method tables.
        (Transport::Quic, Role::Server) => unsafe {
            SslMethod::from_ptr(ossl::OSSL_QUIC_server_method())
        },
        (Transport::Quic, Role::Client) => unsafe {
            SslMethod::from_ptr(sys::OSSL_QUIC_client_method())
        },
    }
}

/// `--prefer-server-groups`: each of the server's groups its own preference tuple (OpenSSL
/// 3.5's `/`), chosen in the server's order. Within one tuple libssl would take any group the
/// client sent a key share for; across tuples it asks for the first with a
/// HelloRetryRequest instead.
fn prefer_server_groups(builder: &mut SslContextBuilder, groups: &str) -> anyhow::Result<()> {
    let tuples = groups.replace(':', "/");
    if builder.set_groups_list(&tuples).is_err() {
        bail!("--prefer-server-groups: libssl refused the group tuples {tuples:?}");
    }
    builder.set_options(SslOptions::CIPHER_SERVER_PREFERENCE);
    Ok(())
}

/// Settings both sides share: TLS 1.3 only, groups, signature schemes, compression offer,
/// max cert list.
fn common(builder: &mut SslContextBuilder, tls: &TlsArgs) -> anyhow::Result<()> {
    builder.set_min_proto_version(Some(SslVersion::TLS1_3))?;
    builder.set_max_proto_version(Some(SslVersion::TLS1_3))?;
    if builder.set_groups_list(&tls.groups).is_err() {
        bail!(
            "--groups {:?}: not a valid group list for this OpenSSL; allowed (colon-separated): {}",
            tls.groups,
            implemented_groups(builder).join(", ")
        );
    }
    if let Some(sigalgs) = &tls.sigalgs {
        if builder.set_sigalgs_list(sigalgs).is_err() {
            let mut known: Vec<&str> = crate::algorithms::ALGORITHMS
                .iter()
                .map(|a| a.tls_sigalg)
                .collect();
            known.dedup();
            bail!(
                "--sigalgs {sigalgs:?}: not a valid signature scheme list; allowed \
                 (colon-separated TLS names): {}",
                known.join(", ")
            );
        }
    }
    let max = tls.max_cert_list;
    if max == 0 || max > libc::c_long::MAX as u64 {
        bail!(
            "--max-cert-list {max}: must be between 1 and {}",
            libc::c_long::MAX
        );
    }
    // SAFETY: valid context pointer; SSL_CTRL_SET_MAX_CERT_LIST takes the size in larg.
    unsafe {
        sys::SSL_CTX_ctrl(
            builder.as_ptr(),
            ossl::SSL_CTRL_SET_MAX_CERT_LIST,
            max as libc::c_long,
            std::ptr::null_mut(),
        )
    };
    match comp_alg(tls.cert_compression) {
        None => {
            // libssl offers every compiled-in algorithm by default; "none" means none in
            // either direction, so the compress_certificate extension is not even sent.
            builder.set_options(SslOptions::from_bits_retain(
                ossl::SSL_OP_NO_RX_CERTIFICATE_COMPRESSION
                    | ossl::SSL_OP_NO_TX_CERTIFICATE_COMPRESSION,
            ));
        }
        Some(alg) => {
            let mut algs = [alg];
            // SAFETY: valid context; `algs` outlives the call, which copies it.
            let ok = unsafe {
                ossl::SSL_CTX_set1_cert_comp_preference(builder.as_ptr(), algs.as_mut_ptr(), 1)
            };
            if ok != 1 {
                bail!(
                    "--cert-compression {}: not available in this OpenSSL build; allowed: {}",
                    compression_name(tls.cert_compression),
                    available_compressions().join(", ")
                );
            }
        }
    }
    Ok(())
}

// Mutual TLS on the server (`--client-ca`; libssl checks the leaf's clientAuth purpose on the
// server side) and `--untrusted` on the client.
chainlab_record::libssl_verification!(
    SslContextBuilder,
    Stack,
    X509,
    X509StoreBuilder,
    SslVerifyMode,
    read_certificates,
    |c| c.issued(c) == X509VerifyResult::OK,
    ossl::SSL_CTX_set_cert_verify_callback,
    verify_with_untrusted
);

/// Verification callback for `--untrusted`: the peer's chain plus the extra certificates
/// as the untrusted set, then the library's own `X509_verify_cert` (trust store, hostname and
/// purpose checks all as without the callback).
unsafe extern "C" fn verify_with_untrusted(
    store_ctx: *mut sys::X509_STORE_CTX,
    arg: *mut libc::c_void,
) -> libc::c_int {
    // SAFETY (whole function): libssl passes the store context it initialised and our
    // 'static stack; the combined stack only borrows certificates owned by the other two
    // stacks, which outlive it, and is freed (without its elements) before returning.
    let extra = &*(arg as *const Stack<X509>);
    let peer = ossl::X509_STORE_CTX_get0_untrusted(store_ctx);
    let combined = sys::OPENSSL_sk_new_null();
    if combined.is_null() {
        return 0;
    }
    if !peer.is_null() {
        let peer = peer as *const sys::OPENSSL_STACK;
        for i in 0..sys::OPENSSL_sk_num(peer) {
            sys::OPENSSL_sk_push(combined, sys::OPENSSL_sk_value(peer, i));
        }
    }
    for cert in extra {
        sys::OPENSSL_sk_push(combined, cert.as_ptr() as *const libc::c_void);
    }
    ossl::X509_STORE_CTX_set0_untrusted(store_ctx, combined.cast());
    let result = sys::X509_verify_cert(store_ctx);
    ossl::X509_STORE_CTX_set0_untrusted(store_ctx, peer);
    sys::OPENSSL_sk_free(combined);
    result
}

/// Verification callback for `--no-verify`: accepts any chain without looking at it.
unsafe extern "C" fn accept_any_chain(
    _store_ctx: *mut sys::X509_STORE_CTX,
    _arg: *mut libc::c_void,
) -> libc::c_int {
    1
}

/// Group names the library implements (for error messages).
fn implemented_groups(builder: &SslContextBuilder) -> Vec<String> {
    // SAFETY: the stack receives borrowed `const char *` names owned by the library's static
    // group table; it is freed (not its elements) before returning.
    unsafe {
        let stack = sys::OPENSSL_sk_new_null();
        if stack.is_null() {
            return Vec::new();
        }
        sys::SSL_CTX_ctrl(
            builder.as_ptr(),
            ossl::SSL_CTRL_GET0_IMPLEMENTED_GROUPS,
            0,
            stack.cast(),
        );
        let names = (0..sys::OPENSSL_sk_num(stack))
            .filter_map(|i| ossl::static_str(sys::OPENSSL_sk_value(stack, i).cast()))
            .map(str::to_owned)
            .collect();
        sys::OPENSSL_sk_free(stack);
        names
    }
}

/// `--trust-anchor-ids`: the extension answered on this context and on one context per MTC
/// offered by ID, to which a connection requesting that ID is switched (`anchors`).
fn serve_by_trust_anchor(builder: &mut SslContextBuilder, args: &ServeArgs) -> anyhow::Result<()> {
    let super::anchors::Offered { available, by_id } = super::anchors::offered(args)?;
    let offered = by_id
        .into_iter()
        .map(|(offer, id)| {
            let alternate = ServeArgs {
                chain: offer.chain,
                chain_file: Some(offer.file),
                ..args.clone()
            };
            Ok((build_server(&alternate, Some(&available))?.ctx, id))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    super::anchors::answer(builder, available)?;
    super::anchors::choose(builder, offered);
    Ok(())
}

/// `--mtc-retry-standalone`: a ClientHello whose SNI marks a client's retry gets the
/// standalone MTC, from a context like this one holding it (SSL_set_SSL_CTX in the
/// servername callback, which libssl runs before it chooses the certificate).
fn serve_standalone_on_retry(
    builder: &mut SslContextBuilder,
    args: &ServeArgs,
) -> anyhow::Result<()> {
    let standalone = server(&ServeArgs {
        chain: ChainPolicy::MtcStandalone,
        chain_file: None,
        mtc_retry_standalone: false,
        ..args.clone()
    })?
    .ctx;
    builder.set_servername_callback(move |ssl, _alert| {
        let retrying = ssl
            .servername(openssl::ssl::NameType::HOST_NAME)
            .is_some_and(|n| n.starts_with(chainlab_record::args::MTC_RETRY_SNI_PREFIX));
        if retrying {
            ssl.set_ssl_context(&standalone)
                .map_err(|_| openssl::ssl::SniError::ALERT_FATAL)?;
        }
        Ok(())
    });
    Ok(())
}
