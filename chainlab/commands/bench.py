"""Placeholder until its issue lands."""

from chainlab.errors import ChainlabError

HELP = "(not implemented yet)"


def add_arguments(parser):
    parser.add_argument("args", nargs="*")


def run(args):
    raise ChainlabError("'bench' is not implemented yet")
