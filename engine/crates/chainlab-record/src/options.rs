//! The command line as a whole, whatever the stack: every rule between two options (one
//! table, `OPTION_RULES`, printed by every engine's `info`), and the parse that refuses a
//! bad command line in one line with exit status 2 (`parse_command_line`). The options
//! themselves are `args`'.

/// What one option asks of another: `Needs`, the other given too; `NeedsValue`, the other's
/// value (given or its default) to be this one; `Conflicts`, the other not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum Rule {
    Needs {
        other: &'static str,
    },
    NeedsValue {
        other: &'static str,
        value: &'static str,
    },
    Conflicts {
        other: &'static str,
    },
}

/// One rule between two options of the named subcommands (long names, without `--`).
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct OptionRule {
    pub subcommands: &'static [&'static str],
    pub option: &'static str,
    #[serde(flatten)]
    pub rule: Rule,
}

const CLIENT: &[&str] = &["handshake", "load"];

/// Every rule between options, for every engine of this language alike (the Go engine keeps
/// the same table in engine/go/args.go; `info` prints it, `tests/test_engine_options.py`
/// walks every pair on every stack). An option that needs another or conflicts with one is
/// refused in one line naming both, before anything else is checked: a stack that lacks
/// the capability behind an option says so only once the options agree.
pub const OPTION_RULES: &[OptionRule] = &[
    rule(CLIENT, "mtc-trust", Rule::Conflicts { other: "ca" }),
    rule(CLIENT, "mtc-trust", Rule::Conflicts { other: "no-verify" }),
    rule(CLIENT, "mtc-trust", Rule::Conflicts { other: "untrusted" }),
    rule(
        CLIENT,
        "mtc-trust",
        Rule::Conflicts {
            other: "partial-chain",
        },
    ),
    rule(CLIENT, "mtc-landmarks", Rule::Needs { other: "mtc-trust" }),
    rule(
        CLIENT,
        "mtc-landmark-lag",
        Rule::Needs {
            other: "mtc-landmarks",
        },
    ),
    rule(
        CLIENT,
        "trust-anchors-own",
        Rule::Needs { other: "mtc-trust" },
    ),
    rule(
        CLIENT,
        "trust-anchors-own",
        Rule::Needs {
            other: "trust-anchors",
        },
    ),
    rule(
        CLIENT,
        "mtc-cosigners-required",
        Rule::Needs { other: "mtc-trust" },
    ),
    rule(CLIENT, "mtc-retry", Rule::Needs { other: "mtc-trust" }),
    rule(
        CLIENT,
        "trust-anchors",
        Rule::Conflicts { other: "untrusted" },
    ),
    rule(
        CLIENT,
        "trust-anchors-filler",
        Rule::Needs {
            other: "trust-anchors",
        },
    ),
    rule(
        CLIENT,
        "trust-anchor-retry",
        Rule::Needs {
            other: "trust-anchors",
        },
    ),
    rule(
        CLIENT,
        "trust-anchor-retry",
        Rule::Needs { other: "mtc-trust" },
    ),
    rule(CLIENT, "resume-ratio", Rule::Conflicts { other: "resume" }),
    rule(
        CLIENT,
        "resume-seed",
        Rule::Needs {
            other: "resume-ratio",
        },
    ),
    rule(
        CLIENT,
        "population-seed",
        Rule::Needs {
            other: "population",
        },
    ),
    rule(
        &["handshake"],
        "count",
        Rule::Conflicts {
            other: "duration-ms",
        },
    ),
    rule(
        &["handshake"],
        "random-seed",
        Rule::NeedsValue {
            other: "transport",
            value: "tcp",
        },
    ),
    rule(
        &["serve"],
        "random-seed",
        Rule::NeedsValue {
            other: "transport",
            value: "tcp",
        },
    ),
    rule(
        &["serve"],
        "random-seed",
        Rule::NeedsValue {
            other: "workers",
            value: "1",
        },
    ),
    rule(
        &["serve"],
        "chain-order",
        Rule::Needs {
            other: "second-pki",
        },
    ),
    rule(
        &["serve"],
        "mtc-retry-standalone",
        Rule::NeedsValue {
            other: "chain",
            value: "mtc-landmark",
        },
    ),
];

const fn rule(
    subcommands: &'static [&'static str],
    option: &'static str,
    rule: Rule,
) -> OptionRule {
    OptionRule {
        subcommands,
        option,
        rule,
    }
}

/// The first rule of `OPTION_RULES` a subcommand's command line breaks, as its one line:
/// `given(name)` says whether an option was on the command line, `value(name)` what it holds
/// (given or by default).
pub fn broken_rule(
    subcommand: &str,
    given: impl Fn(&str) -> bool,
    value: impl Fn(&str) -> Option<String>,
) -> Option<String> {
    for r in OPTION_RULES {
        if !r.subcommands.contains(&subcommand) || !given(r.option) {
            continue;
        }
        let a = r.option;
        let broken = match r.rule {
            Rule::Needs { other } => (!given(other)).then(|| format!("--{a} needs --{other}")),
            Rule::NeedsValue { other, value: want } => {
                let has = value(other).unwrap_or_default();
                (has != want).then(|| format!("--{a} needs --{other} {want} (it is {has})"))
            }
            Rule::Conflicts { other } => {
                given(other).then(|| format!("--{a} and --{other} cannot be given together"))
            }
        };
        if broken.is_some() {
            return broken;
        }
    }
    None
}

/// The command line, or the one line that says what is wrong with it and exit status 2
/// (after the parent-death signal, `parent::die_with_parent`, and the network namespace,
/// `netns::enter_namespace`, which end the engine the same way where its parent is gone or
/// the namespace cannot be entered):
/// clap's first line names the option and the bad value (the rest of its message is a usage
/// hint, left to `--help`). `--help` and `--version` print as clap prints them.
pub fn parse_command_line<C: clap::Parser>(engine: &str) -> Result<C, std::process::ExitCode> {
    parse_command_line_as::<C>(engine, C::command())
}

/// `parse_command_line` with the command `C` derives changed first (another engine's name
/// and description on one shared set of subcommands: `stack_cli`).
pub fn parse_command_line_as<C: clap::Parser>(
    engine: &str,
    command: clap::Command,
) -> Result<C, std::process::ExitCode> {
    // First of all: die with the chainlab process that started this one (`parent`), and
    // enter the network namespace it names while this is the only thread (`netns`).
    let started = crate::parent::die_with_parent().and_then(|()| crate::netns::enter_namespace());
    if let Err(line) = started {
        eprintln!("{engine}: error: {line}");
        return Err(std::process::ExitCode::from(2));
    }
    let parsed = command
        .clone()
        .try_get_matches()
        .and_then(|m| C::from_arg_matches(&m).map(|c| (c, m)));
    match parsed {
        Ok((cli, matches)) => {
            if let Some((sub, m)) = matches.subcommand() {
                if let Some(line) = broken_rule(sub, |name| given(m, name), |name| value(m, name)) {
                    eprintln!("{engine}: error: {line} (see --help)");
                    return Err(std::process::ExitCode::from(2));
                }
            }
            Ok(cli)
        }
        Err(err) if !err.use_stderr() => err.exit(),
        Err(err)
            if matches!(
                err.kind(),
                clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                    | clap::error::ErrorKind::MissingSubcommand
            ) =>
        {
            // clap would print the whole help here.
            let commands: Vec<String> = command
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            eprintln!(
                "{engine}: error: no subcommand given; allowed: {} (see --help)",
                commands.join(", ")
            );
            Err(std::process::ExitCode::from(2))
        }
        Err(err) => {
            eprintln!("{engine}: error: {} (see --help)", clap_said(&err));
            Err(std::process::ExitCode::from(2))
        }
    }
}

/// What a clap error says, on one line: its message up to its first blank line (the
/// arguments a "required" error lists follow on lines of their own; its usage hint after
/// the blank line), without clap's `error: ` (every engine and chainlab-link print it so).
pub fn clap_said(err: &clap::Error) -> String {
    let text = err.to_string();
    let said: Vec<&str> = text
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    let first = said.join(" ");
    let what = first.strip_prefix("error: ").unwrap_or(&first);
    crate::output::one_line(what)
}

/// The clap id of a long option (`mtc-trust` -> `mtc_trust`), if the command declares it.
fn arg_id(m: &clap::ArgMatches, name: &str) -> Option<String> {
    let id = name.replace('-', "_");
    m.ids().any(|i| i.as_str() == id).then_some(id)
}

fn given(m: &clap::ArgMatches, name: &str) -> bool {
    arg_id(m, name)
        .is_some_and(|id| m.value_source(&id) == Some(clap::parser::ValueSource::CommandLine))
}

fn value(m: &clap::ArgMatches, name: &str) -> Option<String> {
    let id = arg_id(m, name)?;
    let raw = m.get_raw(&id)?.next()?;
    Some(raw.to_string_lossy().into_owned())
}
