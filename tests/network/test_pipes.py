"""LineReader: whole lines, a timeout that returns None, and EOF."""

import os
import time

from chainlab.network.pipes import LineReader


def test_lines_timeouts_and_eof():
    r, w = os.pipe()
    try:
        reader = LineReader(r)
        os.write(w, b'{"a": 1}\npartial')
        assert reader.readline(timeout=1) == '{"a": 1}'
        t0 = time.monotonic()
        assert reader.readline(timeout=0.1) is None  # "partial" has no newline yet
        assert time.monotonic() - t0 >= 0.09  # waited its timeout, then gave up
        os.write(w, b" line\n")
        assert reader.readline(timeout=1) == "partial line"
        os.close(w)
        w = None
        assert reader.readline(timeout=1) is None  # EOF
    finally:
        os.close(r)
        if w is not None:
            os.close(w)
