"""Network namespaces, the state that lets a later run find leftovers, and their cleanup.

Every emulated link owns two namespaces named `chainlab-<tag>-<id>-c` (client) and
`chainlab-<tag>-<id>-s` (server). Before it creates anything, the owner writes a state file
`/run/chainlab/links/<id>.json` naming its own process (pid and start time), the namespaces and,
once started, the forwarder. Teardown removes the forwarder, the namespaces, then the file.

A run killed with SIGKILL skips its teardown. `cleanup_stale()` finds what it left: state files
whose owner is no longer alive (the pid is gone, or now belongs to a process that started
later), `chainlab-*` namespaces that no live owner claims, and `chainlab-link` forwarders
between namespaces that no live owner claims. It never touches a live run's link, so parallel
runs on one machine are safe.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

from chainlab.errors import ChainlabError

NS_PREFIX = "chainlab-"
STATE_DIR = Path("/run/chainlab/links")
NETNS_DIR = Path("/run/netns")
FORWARDER_NAME = "chainlab-link"

# Linux capability bits (include/uapi/linux/capability.h).
CAP_NET_ADMIN = 12
CAP_SYS_ADMIN = 21

# How long `ip` may take for one command before the machine is considered wedged.
IP_TIMEOUT_S = 15


def require_privileges() -> None:
    """Raise ChainlabError unless this process may create namespaces and network devices."""
    if os.geteuid() != 0:
        caps = _effective_capabilities()
        missing = [
            name
            for name, bit in (("CAP_NET_ADMIN", CAP_NET_ADMIN), ("CAP_SYS_ADMIN", CAP_SYS_ADMIN))
            if not caps >> bit & 1
        ]
        if missing:
            raise ChainlabError(
                "emulated network profiles need root (or " + " and ".join(missing) + ") to "
                "create network namespaces and devices; run chainlab as root, or use only the "
                "'loopback' network"
            )
    if not _which("ip"):
        raise ChainlabError(
            "emulated network profiles need the `ip` command (iproute2); install it, or use "
            "only the 'loopback' network"
        )


def _effective_capabilities() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    except OSError:
        pass
    return 0


def _which(cmd: str) -> str | None:
    return shutil.which(cmd)


def cleanup_stale() -> list[str]:
    """Remove what killed earlier runs left behind; returns one line per removed item."""
    removed: list[str] = []
    # Namespaces are listed before the state files are read: an owner writes its state file
    # before creating namespaces, so every namespace listed here already has its file.
    namespaces = list_namespaces()
    live_claims: set[str] = set()
    for path in sorted(STATE_DIR.glob("*.json")) if STATE_DIR.is_dir() else []:
        state = _read_state(path)
        if state is None:
            continue
        owner = state.get("owner") or {}
        if process_alive(owner.get("pid"), owner.get("start")):
            live_claims.update(state.get("namespaces", []))
            continue
        removed += teardown(state)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed.append(f"state file {path.name}")
    for ns in namespaces:
        if ns.startswith(NS_PREFIX) and ns not in live_claims and namespace_exists(ns):
            removed += _empty_namespace(ns)
            delete_namespace(ns)
            removed.append(f"namespace {ns}")
    for pid, argv in forwarder_processes():
        names = set(_forwarder_namespaces(argv))
        ours = any(n.startswith(NS_PREFIX) for n in names)
        if ours and not names & live_claims and _terminate(pid, None):
            removed.append(f"forwarder pid {pid}")
    return removed


def teardown(state: dict) -> list[str]:
    """Stop the forwarder and delete the namespaces a state names; idempotent."""
    removed: list[str] = []
    fwd = state.get("forwarder") or {}
    if fwd.get("pid") and _terminate(fwd["pid"], fwd.get("start")):
        removed.append(f"forwarder pid {fwd['pid']}")
    for ns in state.get("namespaces", []):
        if namespace_exists(ns):
            removed += _empty_namespace(ns)
            delete_namespace(ns)
            removed.append(f"namespace {ns}")
    return removed


def write_state(link_id: str, state: dict) -> Path:
    STATE_DIR.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = STATE_DIR / f"{link_id}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state))
    tmp.replace(path)
    return path


def _read_state(path: Path) -> dict | None:
    try:
        state = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        # A torn or foreign file: treat as owned by nobody, so its namespaces get cleaned.
        return {"namespaces": []}
    return state if isinstance(state, dict) else {"namespaces": []}


def own_identity() -> dict:
    pid = os.getpid()
    return {"pid": pid, "start": process_start(pid)}


def process_start(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 2 (comm) may hold spaces and parentheses; the fields after the last ')' are plain.
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[19])


def process_alive(pid, start) -> bool:
    """True if `pid` runs and is the same process (same start time) as when recorded."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    now = process_start(pid)
    if now is None:
        return False
    if _is_zombie(pid):
        return False
    return start is None or now == start


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2 :].split()[0] in ("Z", "X")


def _terminate(pid: int, start: int | None, grace_s: float = 2.0) -> bool:
    """SIGTERM, then SIGKILL after `grace_s`, a process if it is the recorded one."""
    if not process_alive(pid, start):
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not process_alive(pid, start):
            return True
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    return True


def forwarder_processes() -> list[tuple[int, list[str]]]:
    """(pid, argv) of every running chainlab-link process."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and Path(argv[0].decode(errors="replace")).name == FORWARDER_NAME:
            pid = int(entry.name)
            if process_alive(pid, None):
                found.append((pid, [a.decode(errors="replace") for a in argv if a]))
    return found


def _forwarder_namespaces(argv: list[str]) -> list[str]:
    out = []
    for i, arg in enumerate(argv):
        if arg in ("--a-netns", "--b-netns") and i + 1 < len(argv):
            out.append(argv[i + 1])
        elif arg.startswith(("--a-netns=", "--b-netns=")):
            out.append(arg.split("=", 1)[1])
    return out


def list_namespaces() -> list[str]:
    """Names of the namespaces `ip netns` knows (the files under /run/netns)."""
    try:
        return sorted(p.name for p in NETNS_DIR.iterdir())
    except FileNotFoundError:
        return []


def namespace_exists(name: str) -> bool:
    return (NETNS_DIR / name).exists()


def create_namespace(name: str) -> None:
    ip("netns", "add", name)


def delete_namespace(name: str) -> None:
    """Delete a namespace; a missing one is not an error (teardown is idempotent)."""
    if namespace_exists(name):
        ip("netns", "delete", name, check=False)


def _empty_namespace(name: str) -> list[str]:
    """Kill every process still inside a namespace (a server a killed run left behind); a
    process holding a namespace keeps it alive after `ip netns delete`."""
    out = ip("netns", "pids", name, check=False)
    removed = []
    for token in out.split():
        if token.isdigit() and int(token) != os.getpid():
            pid = int(token)
            if _terminate(pid, process_start(pid)):
                removed.append(f"process {pid} in {name}")
    return removed


def ip(*args: str, netns: str | None = None, check: bool = True, stdin: str | None = None) -> str:
    """Run `ip [-n NETNS] ARGS`; ChainlabError with ip's message when it fails and `check`."""
    argv = ["ip", *(["-n", netns] if netns else []), *args]
    return run(argv, check=check, stdin=stdin)


def run(argv: list[str], *, check: bool = True, stdin: str | None = None) -> str:
    try:
        done = subprocess.run(
            argv,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=IP_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ChainlabError(f"`{' '.join(argv)}` did not run: {e}") from None
    if check and done.returncode != 0:
        msg = " ".join(done.stderr.split()) or f"exit {done.returncode}"
        raise ChainlabError(f"`{' '.join(argv)}` failed: {msg}")
    return done.stdout


_TAG_RE = re.compile(r"[^a-z0-9]+")


def sanitize_tag(tag: str) -> str:
    """A tag usable inside a namespace name: lower-case letters, digits and '-', <= 24."""
    clean = _TAG_RE.sub("-", str(tag).lower()).strip("-")[:24].strip("-")
    return clean or "link"
