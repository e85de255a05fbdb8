//! The command line and `main` of every engine over another TLS stack (BoringSSL's,
//! rustls'): the OpenSSL engine's `serve`, `handshake` and `load` with the very same flags
//! (`args`), a signature `primitives` (`primitives::SignatureArgs`) and `info`, so a
//! campaign's commands run on any stack. A stack plugs its five commands in as a
//! `StackEngine` (`stack_main!` in its crate's root); what it cannot do is parsed and then refused by its own capability checks
//! with a one-line error, never silently ignored.

use std::process::ExitCode;

use anyhow::Result;
use clap::{CommandFactory, Parser, Subcommand};

use crate::args::{HandshakeArgs, LoadArgs, ServeArgs};
use crate::primitives::SignatureArgs;

/// One TLS stack's engine: its binary's name, what `--help` says it is, and its commands.
pub struct StackEngine {
    /// The binary's name, as its errors and `--help` say it.
    pub name: &'static str,
    /// What the engine is (its stack and library), for `--help`.
    pub about: &'static str,
    pub serve: fn(&ServeArgs) -> Result<()>,
    pub handshake: fn(&HandshakeArgs) -> Result<()>,
    pub load: fn(&LoadArgs) -> Result<()>,
    pub primitives: fn(&SignatureArgs) -> Result<()>,
    pub info: fn() -> Result<()>,
}

/// The `main` of an engine over another stack, in its crate's root: the crate's
/// `server::run`, `client::run`, `client::load`, `primitives::run` and `info::run` on the
/// shared command line, under the binary's name and description.
#[macro_export]
macro_rules! stack_main {
    ($name:literal, $about:literal) => {
        fn main() -> std::process::ExitCode {
            $crate::stack_cli::main(&$crate::stack_cli::StackEngine {
                name: $name,
                about: $about,
                serve: server::run,
                handshake: client::run,
                load: client::load,
                primitives: primitives::run,
                info: info::run,
            })
        }
    };
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

/// The command line `engine` parses: the shared subcommands under its name and description.
pub fn command(engine: &StackEngine) -> clap::Command {
    Cli::command()
        .name(engine.name)
        .bin_name(engine.name)
        .about(engine.about)
}

/// The engine's `main`: its command line parsed (a bad one said in one line, exit status 2),
/// the command run, and an error it ends with said in one line, exit status 2.
pub fn main(engine: &StackEngine) -> ExitCode {
    let cli = match crate::options::parse_command_line_as::<Cli>(engine.name, command(engine)) {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let result = match cli.command {
        Command::Serve(args) => (engine.serve)(&args),
        Command::Handshake(args) => (engine.handshake)(&args),
        Command::Load(args) => (engine.load)(&args),
        Command::Primitives(args) => (engine.primitives)(&args),
        Command::Info => (engine.info)(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let said = crate::output::one_line(&format!("{err:#}"));
            eprintln!("{}: error: {said}", engine.name);
            ExitCode::from(2)
        }
    }
}

/// What an engine over another stack says of itself in `info` (records.schema.json,
/// `$defs.info`): the stack's build, and what it can do, which the capability tables and
/// `validate` read (docs/stacks.md).
pub struct StackInfo<'a> {
    pub stack: &'a str,
    /// The crate or module versions of the stack, by name.
    pub build: serde_json::Value,
    /// (algorithm, TLS scheme, whose code verifies it) for every signature it takes.
    pub signatures: Vec<(&'a str, &'a str, &'a str)>,
    pub signature_implementations: &'a [&'a str],
    /// (algorithm, why) for every algorithm it takes only as a root.
    pub root_only: Vec<(&'a str, String)>,
    /// The longest handshake message it takes, where it has a limit of its own.
    pub max_handshake_message: Option<usize>,
    pub groups: Vec<&'a str>,
    pub cert_compressions: &'a [&'a str],
    /// liboqs' version and build, where the engine links it.
    pub liboqs: Option<serde_json::Value>,
}

/// `info`: the fields every engine prints, then `info`'s own, as one JSON document.
pub fn print_info(info: StackInfo<'_>) -> Result<()> {
    let mut out = serde_json::json!({
        "engine_version": env!("CARGO_PKG_VERSION"),
        "stack": info.stack,
        "record_schema": crate::record::SCHEMA,
        "option_rules": crate::options::OPTION_RULES,
        "primitives_revision": crate::primitives::METHOD_REVISION,
        "build": info.build,
        "signature_algorithms": info.signatures.iter().map(|(algorithm, scheme, by)| {
            serde_json::json!({"algorithm": algorithm, "scheme": scheme, "implementation": by})
        }).collect::<Vec<_>>(),
        "signature_implementations": info.signature_implementations,
        "root_only_signature_algorithms": info.root_only.iter().map(|(algorithm, why)| {
            serde_json::json!({"algorithm": algorithm, "reason": why})
        }).collect::<Vec<_>>(),
        "max_handshake_message": info.max_handshake_message,
        "groups": info.groups,
        "cert_compressions": info.cert_compressions,
        "features": crate::features::of(info.stack),
        "hardware_counters": crate::cpu::hardware_counters(),
    });
    if let Some(liboqs) = info.liboqs {
        out["liboqs"] = liboqs;
    }
    crate::output::print_line(&serde_json::to_string_pretty(&out)?)?;
    Ok(())
}

/// Whether Cargo.lock (its text) pins crate `name` at `version`: an engine's `info` names
/// the versions of its stack's crates, and its tests hold them to the lock.
pub fn locked(lock: &str, name: &str, version: &str) -> bool {
    lock.contains(&format!("name = \"{name}\"\nversion = \"{version}\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nothing<A>(_: &A) -> Result<()> {
        Ok(())
    }

    const FAKE: StackEngine = StackEngine {
        name: "chainlab-fake",
        about: "a stack for this test",
        serve: nothing,
        handshake: nothing,
        load: nothing,
        primitives: nothing,
        info: || Ok(()),
    };

    /// The shared command line takes the stack's name and words, and every subcommand.
    #[test]
    fn a_stack_names_the_shared_command_line() {
        let c = command(&FAKE);
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
