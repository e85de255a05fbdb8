"""The one exception type users see: a message saying what is wrong, where, and what to do."""


class ChainlabError(Exception):
    """A user-facing error: bad input, a failed precondition. Printed as one line, exit 2."""
