#!/usr/bin/env python3
"""Runs two test commands at once, one beside the other, where neither times anything
(docs/testing.md, "Parallel only where nothing is timed"): BESIDE with its output into LOG,
printed whole when both have ended; MAIN with its output as it runs. Exits non-zero when
either failed, saying which.

    scripts/beside.py LOG 'BESIDE' MAIN ARGS...

MAIN stays in this process's group, so Ctrl-C reaches it as it would in the foreground;
BESIDE runs in a session of its own, stopped whole (its group) when MAIN ends by a signal,
on Ctrl-C and on a SIGTERM to this process. Both start with the default signal handling
(a shell's background job would start with SIGINT ignored, and every process below it
would inherit that).
"""

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print("usage: scripts/beside.py LOG 'BESIDE' MAIN ARGS...", file=sys.stderr)
        return 2
    log, beside, command = Path(argv[0]), argv[1], argv[2:]
    # Ctrl-C is ours to handle even where a shell started us with SIGINT ignored (its
    # background job); the children then start with the default.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        other = subprocess.Popen(
            ["bash", "-c", beside], stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        primary = subprocess.Popen(command)

        def stop_both() -> None:
            if primary.poll() is None:
                primary.send_signal(signal.SIGTERM)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(other.pid, signal.SIGTERM)

        stopped: list[int] = []

        def on_term(signum, _frame):
            # Only signals here: the main thread's wait() returns once they have ended
            # (waiting in a handler too would wait on the lock that wait() holds).
            stopped.append(signum)
            stop_both()

        signal.signal(signal.SIGTERM, on_term)
        try:
            main_rc = primary.wait()
            other_rc = other.wait()
        except KeyboardInterrupt:
            # Ctrl-C reached MAIN through the group; BESIDE is in its own session.
            stopped.append(signal.SIGINT)
            stop_both()
            primary.wait()
            other.wait()
        if stopped:
            return 128 + stopped[0]
    print(f"---- beside it: {beside} (output kept in {log})", flush=True)
    sys.stdout.write(log.read_text())
    if other_rc != 0:
        print(f"beside.py: {beside!r} failed (exit {other_rc})", file=sys.stderr)
    if main_rc != 0:
        print(f"beside.py: {' '.join(command)!r} failed (exit {main_rc})", file=sys.stderr)
    return 0 if main_rc == 0 and other_rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
