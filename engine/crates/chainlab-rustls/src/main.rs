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
mod cli;
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

use cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = match chainlab_record::options::parse_command_line::<Cli>("chainlab-rustls") {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let result = match cli.command {
        Command::Serve(args) => server::run(&args),
        Command::Handshake(args) => client::run(&args),
        Command::Load(args) => client::load(&args),
        Command::Primitives(args) => primitives::run(&args),
        Command::Info => info::run(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!(
                "chainlab-rustls: error: {}",
                chainlab_record::output::one_line(&format!("{err:#}"))
            );
            ExitCode::from(2)
        }
    }
}
