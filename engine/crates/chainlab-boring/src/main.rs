//! chainlab-boring: chainlab's measuring engine over BoringSSL, the TLS stack in Chrome.
//!
//! The OpenSSL engine's `serve`, `handshake` and `load`, with the same flags and the same
//! records (`chainlab_record`), so a campaign puts this stack on either side of a connection
//! beside the others. Hierarchies come from `chainlab-engine pki` alone: the certificates
//! are byte-identical whichever stack serves or verifies them (an ML-DSA private key is read
//! from the seed inside the file, the one form BoringSSL parses: `keys`).

use std::process::ExitCode;

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

use chainlab_record::args::{HandshakeArgs, LoadArgs, ServeArgs};
use chainlab_record::primitives::SignatureArgs;
use chainlab_record::stack_cli::StackEngine;

/// This engine's commands on the command line every stack's engine shares
/// (`chainlab_record::stack_cli`).
struct Boring;

impl StackEngine for Boring {
    const NAME: &'static str = "chainlab-boring";
    const ABOUT: &'static str =
        "chainlab's measuring engine over BoringSSL (the TLS stack in Chrome)";

    fn serve(args: &ServeArgs) -> anyhow::Result<()> {
        server::run(args)
    }
    fn handshake(args: &HandshakeArgs) -> anyhow::Result<()> {
        client::run(args)
    }
    fn load(args: &LoadArgs) -> anyhow::Result<()> {
        client::load(args)
    }
    fn primitives(args: &SignatureArgs) -> anyhow::Result<()> {
        primitives::run(args)
    }
    fn info() -> anyhow::Result<()> {
        info::run()
    }
}

fn main() -> ExitCode {
    chainlab_record::stack_cli::main::<Boring>()
}
