"""Reading a child process's output line by line with a timeout."""

from __future__ import annotations

import os
import selectors
import time


class LineReader:
    """Lines from a pipe with a timeout (a buffered file object cannot be select()ed)."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buffer = b""
        self.eof = False

    def readline(self, timeout: float) -> str | None:
        """The next line, or None at EOF or when `timeout` passes first."""
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(self.fd, selectors.EVENT_READ)
            while b"\n" not in self.buffer and not self.eof:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    return None
                chunk = os.read(self.fd, 65536)
                if chunk:
                    self.buffer += chunk
                else:
                    self.eof = True
        if b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            return line.decode(errors="replace")
        return None
