//! chainlab-boring: chainlab's measuring engine over BoringSSL, the TLS stack in Chrome.
//!
//! The OpenSSL engine's `serve`, `handshake` and `load`, with the same flags and the same
//! records (`chainlab_record`), so a campaign puts this stack on either side of a connection
//! beside the others. Hierarchies come from `chainlab-engine pki` alone: the certificates
//! are byte-identical whichever stack serves or verifies them (an ML-DSA private key is read
//! from the seed inside the file, the one form BoringSSL parses: `keys`).

mod anchors;
mod capabilities;
mod chain;
mod client;
mod compression;
mod context;
mod errors;
mod info;
mod keys;
mod mtc;
mod primitives;
mod primitives_kex;
mod profile;
mod server;

// This engine's commands on the command line every stack's engine shares
// (`chainlab_record::stack_cli`).
chainlab_record::stack_main!(
    "chainlab-boring",
    "chainlab's measuring engine over BoringSSL (the TLS stack in Chrome)"
);
