//! The command line and `main` of every engine over another TLS stack (BoringSSL's,
//! rustls'): the OpenSSL engine's `serve`, `handshake` and `load` with the very same flags
//! (`args`), a signature `primitives` (`primitives::SignatureArgs`) and `info`, so a
//! campaign's commands run on any stack. A stack plugs its five commands in as a
//! `StackEngine`; what it cannot do is parsed and then refused by its own capability checks
//! with a one-line error, never silently ignored.

use std::process::ExitCode;

use anyhow::Result;
use clap::{CommandFactory, Parser, Subcommand};

use crate::args::{HandshakeArgs, LoadArgs, ServeArgs};
use crate::primitives::SignatureArgs;

/// One TLS stack's engine: its binary's name, what `--help` says it is, and its commands.
pub trait StackEngine {
    /// The binary's name, as its errors and `--help` say it.
    const NAME: &'static str;
    /// What the engine is (its stack and library), for `--help`.
    const ABOUT: &'static str;

    fn serve(args: &ServeArgs) -> Result<()>;
    fn handshake(args: &HandshakeArgs) -> Result<()>;
    fn load(args: &LoadArgs) -> Result<()>;
    fn primitives(args: &SignatureArgs) -> Result<()>;
    fn info() -> Result<()>;
}

#[derive(Debug, Parser)]
#[command(version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the TLS 1.3 server; one JSON record per accepted connection.
    Serve(ServeArgs),
    /// Run the measuring client; one JSON record per handshake.
    Handshake(HandshakeArgs),
    /// Open-loop load: start connections on a schedule fixed in advance; one JSON record per
    /// scheduled attempt, then one record of the generator's own health.
    Load(LoadArgs),
    /// Time one signature operation of a handshake (sign, verify) in-process through this
    /// stack's own library, as `chainlab-engine primitives` does through OpenSSL: one JSON
    /// line each.
    Primitives(SignatureArgs),
    /// Print this engine's stack, versions and capabilities as JSON.
    Info,
}

/// The command line `E` parses: the shared subcommands under its name and description.
pub fn command<E: StackEngine>() -> clap::Command {
    Cli::command()
        .name(E::NAME)
        .bin_name(E::NAME)
        .about(E::ABOUT)
}

/// The engine's `main`: its command line parsed (a bad one said in one line, exit status 2),
/// the command run, and an error it ends with said in one line, exit status 2.
pub fn main<E: StackEngine>() -> ExitCode {
    let cli = match crate::options::parse_command_line_as::<Cli>(E::NAME, command::<E>()) {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let result = match cli.command {
        Command::Serve(args) => E::serve(&args),
        Command::Handshake(args) => E::handshake(&args),
        Command::Load(args) => E::load(&args),
        Command::Primitives(args) => E::primitives(&args),
        Command::Info => E::info(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!(
                "{}: error: {}",
                E::NAME,
                crate::output::one_line(&format!("{err:#}"))
            );
            ExitCode::from(2)
        }
    }
}

/// Whether Cargo.lock (its text) pins crate `name` at `version`: an engine's `info` names
/// the versions of its stack's crates, and its tests hold them to the lock.
pub fn locked(lock: &str, name: &str, version: &str) -> bool {
    lock.contains(&format!("name = \"{name}\"\nversion = \"{version}\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fake;
    impl StackEngine for Fake {
        const NAME: &'static str = "chainlab-fake";
        const ABOUT: &'static str = "a stack for this test";
        fn serve(_: &ServeArgs) -> Result<()> {
            Ok(())
        }
        fn handshake(_: &HandshakeArgs) -> Result<()> {
            Ok(())
        }
        fn load(_: &LoadArgs) -> Result<()> {
            Ok(())
        }
        fn primitives(_: &SignatureArgs) -> Result<()> {
            Ok(())
        }
        fn info() -> Result<()> {
            Ok(())
        }
    }

    /// The shared command line takes the stack's name and words, and every subcommand.
    #[test]
    fn a_stack_names_the_shared_command_line() {
        let c = command::<Fake>();
        assert_eq!(c.get_name(), "chainlab-fake");
        assert_eq!(
            c.get_about().map(|a| a.to_string()).as_deref(),
            Some("a stack for this test")
        );
        let subs: Vec<_> = c
            .get_subcommands()
            .map(|s| s.get_name().to_string())
            .collect();
        assert_eq!(subs, ["serve", "handshake", "load", "primitives", "info"]);
        c.debug_assert();
    }

    #[test]
    fn a_locked_version_is_found_in_the_lock_text() {
        let lock = "[[package]]\nname = \"boring\"\nversion = \"5.4.0\"\n";
        assert!(locked(lock, "boring", "5.4.0"));
        assert!(!locked(lock, "boring", "5.4.1"));
        assert!(!locked(lock, "rustls", "5.4.0"));
    }
}
