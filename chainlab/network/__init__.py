"""Emulated networks: client and server in two network namespaces joined by a link with a
delay, jitter, rate, loss, MTU, queue and initial congestion window (docs/network.md).

    with emulated_link({"name": "wan", "delay_ms": 25, "rate_mbit": 10}, tag="s1") as link:
        server = subprocess.Popen(link.server_cmd([engine, "serve", "--listen",
                                                   f"{link.server_addr}:0", ...]))
        subprocess.run(link.client_cmd([engine, "handshake", "--connect", ...]))
        link.calibration   # measured RTT / rate / loss beside the configured values

`cleanup_stale()` removes what killed runs left behind; `require_privileges()` fails with a
clear message without root. `chainlab.network.model` projects loopback measurements onto a
profile.
"""

from chainlab.network.link import Link, emulated_link
from chainlab.network.namespaces import cleanup_stale, require_privileges
from chainlab.network.profile import Profile, parse_profile

__all__ = [
    "Link",
    "Profile",
    "cleanup_stale",
    "emulated_link",
    "parse_profile",
    "require_privileges",
]
