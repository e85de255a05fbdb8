//! chainlab-engine: the measuring half of chainlab.
//!
//! One binary, four subcommands, in workflow order: `pki` builds hierarchies, `serve` runs the
//! TLS 1.3 server, `handshake` runs the measuring client, `info` describes the build. Every
//! subcommand writes raw records (JSON Lines, see `record`); nothing here summarizes.

use std::process::ExitCode;

use chainlab_engine::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = match chainlab_record::options::parse_command_line::<Cli>("chainlab-engine") {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let result = match cli.command {
        Command::Pki(args) => chainlab_engine::pki::run(&args),
        Command::Serve(args) => chainlab_engine::tls::server::run(&args),
        Command::Handshake(args) => chainlab_engine::tls::client::run(&args),
        Command::Load(args) => chainlab_engine::tls::load::run(&args),
        Command::Reference(args) => chainlab_engine::reference::run(&args),
        Command::Primitives(args) => chainlab_engine::primitives::run(&args),
        Command::Info(args) => chainlab_engine::info::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // One line naming what failed and why (bad arguments were refused in one line by
            // `parse_command_line`): errors of the run (files, OpenSSL, sockets).
            eprintln!(
                "chainlab-engine: error: {}",
                chainlab_record::output::one_line(&format!("{err:#}"))
            );
            ExitCode::from(2)
        }
    }
}
