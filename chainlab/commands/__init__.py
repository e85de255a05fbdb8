"""The `chainlab` subcommands, one module each (chainlab.cli lists them in workflow order)."""


def campaign_arguments(parser) -> None:
    """The arguments of a command that reads a campaign file: the file and --campaign."""
    parser.add_argument("file", help="campaign file (TOML)")
    parser.add_argument(
        "--campaign",
        action="append",
        metavar="NAME",
        help="only these campaigns of the file (repeatable; default: all)",
    )
