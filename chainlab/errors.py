"""The one exception type users see: a message saying what is wrong, where, and what to do."""


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
