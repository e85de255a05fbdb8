"""`chainlab` command line: parse, dispatch to one module per subcommand, errors in one place.

Subcommands, in workflow order, each a module of `chainlab.commands` with `HELP`,
`add_arguments(parser)` and `run(args) -> int`.
"""

import argparse
import importlib
import sys

from chainlab import __version__
from chainlab.errors import ChainlabError, printable

COMMANDS = ["validate", "predict", "run", "probe", "export", "report", "bench"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="chainlab", description="Post-quantum TLS 1.3 certificate hierarchy laboratory."
    )
    parser.add_argument("--version", action="version", version=f"chainlab {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"chainlab.commands.{name}")
        p = sub.add_parser(name, help=module.HELP, description=module.__doc__)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    args = parser.parse_args(argv)
    try:
        return args._run(args) or 0
    except ChainlabError as err:
        print(f"chainlab: error: {printable(str(err))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("chainlab: interrupted", file=sys.stderr)
        return 130
