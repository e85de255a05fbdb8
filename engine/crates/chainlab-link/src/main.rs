//! chainlab-link: a userspace network link between two namespaces (the Mahimahi design).
//!
//! Creates a TUN device in each namespace and forwards IP packets between them with a one-way
//! delay, jitter, a rate limit behind a drop-tail queue, seeded random loss and an MTU. Prints
//! a JSON ready line once both devices exist and a JSON statistics line when stopped.

use std::process::ExitCode;

use clap::Parser;

use chainlab_link::cli::Cli;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) if !err.use_stderr() => err.exit(), // --help, --version
        Err(err) => {
            // As the engines say theirs: a "required" error's arguments included (the first
            // line alone had named none).
            eprintln!(
                "chainlab-link: error: {} (see --help)",
                chainlab_record::options::clap_said(&err)
            );
            return ExitCode::from(2);
        }
    };
    let config = match cli.into_config() {
        Ok(config) => config,
        Err(why) => {
            eprintln!("chainlab-link: error: {why}");
            return ExitCode::from(2);
        }
    };
    match chainlab_link::forward::run(&config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // `{:#}` joins the context chain on one line.
            eprintln!("chainlab-link: error: {err:#}");
            ExitCode::from(1)
        }
    }
}
