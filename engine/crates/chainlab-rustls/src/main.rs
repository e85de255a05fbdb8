//! chainlab-rustls: chainlab's measuring engine over rustls with the aws-lc-rs provider.
//!
//! The OpenSSL engine's `serve` and `handshake`, with the same flags and the same records
//! (`chainlab_record`), so a campaign puts either stack on either side of a connection.
//! Hierarchies come from `chainlab-engine pki` alone: the certificates are byte-identical
//! whichever stack serves or verifies them.

mod anchors;
mod capabilities;
mod chain;
mod client;
mod composite;
mod errors;
mod info;
mod io;
mod liboqs;
mod mtc;
mod oid_verifier;
mod primitives;
mod primitives_kex;
mod server;
mod tls;

// This engine's commands on the command line every stack's engine shares
// (`chainlab_record::stack_cli`).
chainlab_record::stack_main!(
    "chainlab-rustls",
    "chainlab's measuring engine over rustls (aws-lc-rs provider)"
);
