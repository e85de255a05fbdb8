"""`chainlab` command line: parse, dispatch to one module per subcommand, errors in one place.

Subcommands, in workflow order, each a module of `chainlab.commands` with `HELP`,
`add_arguments(parser)` and `run(args) -> int`.
"""

import argparse
import datetime
import importlib
import logging
import os
import sys
import tempfile
import traceback
from pathlib import Path

from chainlab import __version__, environment
from chainlab.errors import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_PIPE_CLOSED,
    ChainlabError,
    printable,
)

COMMANDS = ["validate", "predict", "run", "probe", "export", "report", "bench"]


def main(argv=None) -> int:
    """The command: its exit status (chainlab.errors: 0, 2 bad input, 3 and 4 a run with
    failed scenarios, 130 interrupted, 1 a fault of chainlab's own). No input reaches a
    traceback on screen: an unexpected exception is one line naming a log file."""
    try:
        return _dispatch(argv)
    except ChainlabError as err:
        print(f"chainlab: error: {printable(str(err))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("chainlab: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Whoever read the output stopped (`chainlab validate F | head`): nothing to say,
        # and nothing more may go to that pipe when Python flushes it on the way out.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_PIPE_CLOSED
    except Exception as err:  # noqa: BLE001 - the outermost handler: no traceback on screen
        what = printable(f"{type(err).__name__}: {err}").replace("\n", " ")
        try:
            where = f"the traceback is in {crash_log(argv if argv is not None else sys.argv[1:])}"
        except OSError as e:
            where = f"its traceback could not be written: {e}"
        print(
            f"chainlab: internal error: {what} (a fault of chainlab's, not of the input; {where})",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _dispatch(argv) -> int:
    parser = argparse.ArgumentParser(
        prog="chainlab", description="Post-quantum TLS 1.3 certificate hierarchy laboratory."
    )
    parser.add_argument("--version", action="version", version=f"chainlab {__version__}")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="say on stderr what the command did at debug level (report: the sections built, "
        "those left out and why, the analyses computed)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands = {}
    for name in COMMANDS:
        module = importlib.import_module(f"chainlab.commands.{name}")
        p = sub.add_parser(name, help=module.HELP, description=module.__doc__)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
        commands[name] = p
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        # Said by the subcommand's own parser, with its usage (argparse's top level would
        # show `chainlab COMMAND ...`, which says nothing of what the command takes).
        commands[args.command].error(
            f"unrecognized arguments: {' '.join(unknown)} (its options: chainlab "
            f"{args.command} --help)"
        )
    # Every environment variable chainlab reads, before any command reads or writes.
    environment.check()
    if args.debug:
        logging.basicConfig(level=logging.DEBUG, format="chainlab: debug: %(message)s")
        # Only chainlab's own: matplotlib and the libraries log much at debug level.
        logging.getLogger().setLevel(logging.WARNING)
        logging.getLogger("chainlab").setLevel(logging.DEBUG)
    return args._run(args) or 0


def crash_log(argv) -> Path:
    """The current exception's traceback and the command line, written to a new file in
    the temporary directory (it names no file of the user's: nothing else is written)."""
    fd, name = tempfile.mkstemp(prefix="chainlab-crash-", suffix=".log")
    with os.fdopen(fd, "w") as f:
        f.write(f"chainlab {__version__} at {datetime.datetime.now().isoformat()}\n")
        f.write(f"command: chainlab {' '.join(map(str, argv))}\n\n")
        traceback.print_exc(file=f)
    return Path(name)
