"""A target ([targets.<name>]): a server chainlab measures but does not start. Its address is
resolved once per scenario (so every batch meets the same server) and its trust anchors
found on this machine."""

from __future__ import annotations

import socket
from pathlib import Path

from chainlab.campaign.model import Target

# Where a target's `ca = "system"` finds this machine's CA bundle (Debian and derivatives,
# Fedora and derivatives, Alpine and macOS), first match wins. The engine is linked against
# its own static OpenSSL, whose compiled-in default paths point into its build tree, so the
# bundle is handed over explicitly.
SYSTEM_CA_FILES = (
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
)


class TargetError(Exception):
    """Why a target cannot be measured: a failure cause (the store's category) and detail."""

    def __init__(self, cause: str, detail: str):
        super().__init__(f"{cause}: {detail}")
        self.cause = cause
        self.detail = detail


def resolve(t: Target) -> tuple[str, Path | None]:
    """(the address to connect to, ip:port; the trust anchors' file, None: no verification)."""
    try:
        info = socket.getaddrinfo(t.host, t.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as e:
        raise TargetError(
            "target_unresolved", f"{t.address}: cannot resolve {t.host!r}: {e}"
        ) from None
    family, _, _, _, sockaddr = info[0]
    ip = sockaddr[0]
    addr = f"[{ip}]:{t.port}" if family == socket.AF_INET6 else f"{ip}:{t.port}"
    if t.ca == "system":
        found = next((Path(f) for f in SYSTEM_CA_FILES if Path(f).is_file()), None)
        if found is None:
            raise TargetError(
                "target_ca_missing",
                f"ca = 'system': no CA bundle on this machine ({', '.join(SYSTEM_CA_FILES)}); "
                "give the target a PEM file of trust anchors",
            )
        return addr, found
    return addr, (None if t.ca == "none" else t.ca_file)
