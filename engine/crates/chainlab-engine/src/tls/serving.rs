//! What both OpenSSL servers (`tcp::server`, `quic::server`) say in their ready line beyond
//! what every engine says (`chainlab_record::serve::print_ready`): the library build, the
//! certificate-list limit, the served chain, compression and client authentication.

use serde::Serialize;

use crate::tls::context::{ClientAuth, ServerContext};
use crate::tls::served::{CompressionSetup, ServedChain};

#[derive(Serialize)]
pub(crate) struct EngineFacts<'a> {
    openssl: String,
    patch: String,
    max_cert_list: u64,
    served_chain: &'a ServedChain,
    cert_compression: &'a CompressionSetup,
    client_auth: Option<&'a ClientAuth>,
}

impl<'a> EngineFacts<'a> {
    pub(crate) fn of(server: &'a ServerContext) -> Self {
        let build: serde_json::Value =
            serde_json::from_str(crate::build::OPENSSL_BUILD).unwrap_or_default();
        let field = |key: &str| build[key].as_str().unwrap_or("unknown").to_owned();
        EngineFacts {
            openssl: field("openssl_version"),
            patch: field("patch_sha256_16"),
            max_cert_list: server.max_cert_list,
            served_chain: &server.served_chain,
            cert_compression: &server.cert_compression,
            client_auth: server.client_auth.as_ref(),
        }
    }
}
