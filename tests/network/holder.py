"""Test helper: hold an emulated link (and a process inside its server namespace) until
killed. argv: profile JSON, tag, exit_with_parent (1/0). Prints one JSON line once ready."""

import json
import subprocess
import sys
import time

from chainlab.network import emulated_link


def main() -> None:
    profile, tag, exit_with_parent = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
    with emulated_link(profile, tag, calibrate=False, exit_with_parent=exit_with_parent) as link:
        sleeper = subprocess.Popen(link.server_cmd(["sleep", "60"]))
        print(
            json.dumps(
                {
                    "client_ns": link.client_ns,
                    "server_ns": link.server_ns,
                    "forwarder": link.forwarder_pid,
                    "sleeper": sleeper.pid,
                }
            ),
            flush=True,
        )
        # Bounded: the tests kill this process long before.
        time.sleep(60)


if __name__ == "__main__":
    main()
