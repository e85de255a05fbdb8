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
mod cli;
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

use cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = match chainlab_record::options::parse_command_line::<Cli>("chainlab-boring") {
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
                "chainlab-boring: error: {}",
                chainlab_record::output::one_line(&format!("{err:#}"))
            );
            ExitCode::from(2)
        }
    }
}
