//! Command-line options both engines take alike (`chainlab-engine` and `chainlab-rustls`):
//! which certificates a server sends, certificate compression, and what the TLS 1.3 context
//! offers, so a campaign's command lines run on either stack.

use clap::{Args, ValueEnum};

use crate::record::Transport;

/// Which certificates the server sends in its Certificate message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
pub enum ChainPolicy {
    /// The leaf only.
    #[value(name = "leaf")]
    #[serde(rename = "leaf")]
    Leaf,
    /// The leaf and every intermediate (what RFC 8446 asks of a server).
    #[value(name = "leaf+intermediates")]
    #[serde(rename = "leaf+intermediates")]
    LeafIntermediates,
    /// The leaf, every intermediate and the root.
    #[value(name = "full")]
    #[serde(rename = "full")]
    Full,
}

impl ChainPolicy {
    /// File name of this policy's chain file in a hierarchy directory.
    pub fn file_name(self) -> &'static str {
        match self {
            ChainPolicy::Leaf => "chain-leaf.pem",
            ChainPolicy::LeafIntermediates => "chain-leaf+intermediates.pem",
            ChainPolicy::Full => "chain-full.pem",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ChainPolicy::Leaf => "leaf",
            ChainPolicy::LeafIntermediates => "leaf+intermediates",
            ChainPolicy::Full => "full",
        }
    }
}

/// RFC 8879 certificate compression algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    None,
    Zlib,
    Brotli,
    Zstd,
}

/// Options shared by server and client: what the TLS 1.3 context offers.
#[derive(Debug, Clone, Args)]
pub struct TlsArgs {
    /// Transport: TLS over TCP, or QUIC v1 over UDP.
    #[arg(long, value_enum, default_value = "tcp")]
    pub transport: Transport,
    /// Key-exchange groups in preference order, colon-separated OpenSSL names
    /// (e.g. X25519MLKEM768, X25519, MLKEM768, P-256); each engine's `info` says which it has.
    #[arg(long, default_value = "X25519MLKEM768")]
    pub groups: String,
    /// Signature schemes, colon-separated TLS names (e.g. mldsa65:slhdsa_shake_128f);
    /// default: the stack's list (OpenSSL's includes the SLH-DSA schemes of this build).
    #[arg(long)]
    pub sigalgs: Option<String>,
    /// Certificate compression to offer (client) or use (server).
    #[arg(long, value_enum, default_value = "none")]
    pub cert_compression: Compression,
    /// Largest Certificate message accepted, in bytes (the OpenSSL engine). OpenSSL's default
    /// (100 KiB) rejects deep SLH-DSA chains with "excessive message size"; 1 MiB holds any
    /// depth-4 chain. The rustls engine takes it and keeps rustls' own fixed limit.
    #[arg(long, default_value_t = 1 << 20)]
    pub max_cert_list: u64,
}
