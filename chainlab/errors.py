"""The one exception type users see: a message saying what is wrong, where, and what to do;
and the command's exit statuses (README, "Exit status")."""

# `chainlab`'s exit statuses: a script or CI job tells from them what a run measured.
EXIT_OK = 0  # every scenario completed (or the command did what it was asked)
EXIT_INTERNAL = 1  # a fault of chainlab's own: one line, the traceback in a log file
EXIT_BAD_INPUT = 2  # bad input: a file, key, value, option or environment variable
EXIT_SOME_FAILED = 3  # a run ended with some scenarios failed (the store holds the rest)
EXIT_NONE_COMPLETED = 4  # a run ended with no scenario completed
EXIT_INTERRUPTED = 130  # Ctrl-C or SIGTERM
EXIT_PIPE_CLOSED = 141  # the reader of its output went away (`| head`), as SIGPIPE's status


class ChainlabError(Exception):
    """A user-facing error: bad input, a failed precondition. Printed as one line, exit 2."""


def one_line(text: str) -> str:
    """`text` with every character that is not printable escaped, line breaks too: a
    problem's key path and message are one line whatever a user's file holds."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def printable(message: str) -> str:
    """`message` as the terminal shows it: its own line breaks kept (one problem per line),
    any other character that is not printable (a control character, a line or record
    separator a key of a user's file may hold) escaped, so no line splits or hides."""
    return "\n".join(one_line(line) for line in message.split("\n"))
