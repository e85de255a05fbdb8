//! chainlab-rustls: chainlab's measuring engine over rustls with the aws-lc-rs provider.
//!
//! The OpenSSL engine's `serve` and `handshake`, with the same flags and the same records
//! (`chainlab_record`), so a campaign puts either stack on either side of a connection.
//! Hierarchies come from `chainlab-engine pki` alone: the certificates are byte-identical
//! whichever stack serves or verifies them.

use std::process::ExitCode;

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

use chainlab_record::args::{HandshakeArgs, LoadArgs, ServeArgs};
use chainlab_record::primitives::SignatureArgs;
use chainlab_record::stack_cli::StackEngine;

/// This engine's commands on the command line every stack's engine shares
/// (`chainlab_record::stack_cli`).
struct Rustls;

impl StackEngine for Rustls {
    const NAME: &'static str = "chainlab-rustls";
    const ABOUT: &'static str = "chainlab's measuring engine over rustls (aws-lc-rs provider)";

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
    chainlab_record::stack_cli::main::<Rustls>()
}
