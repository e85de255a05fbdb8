"""An emulated link between a client namespace and a server namespace.

`emulated_link(profile, tag)` creates both namespaces, joins them (backend "tun": a
`chainlab-link` forwarder between a TUN device in each; backend "netem": a veth pair with a
netem qdisc on each end), sets addresses, MTU and the initial congestion window on the routes,
calibrates the link and yields a `Link`. Leaving the block, by return, exception, Ctrl-C or
SIGTERM, stops the forwarder and deletes the namespaces (which deletes their devices).

Addresses: the client is 10.77.0.1 and the server 10.77.0.2, point-to-point /32s that exist
only inside the two namespaces; every link has its own pair of namespaces, so links running
side by side do not collide.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import secrets
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from chainlab import engine, processes
from chainlab.errors import ChainlabError
from chainlab.network import namespaces as nsmod
from chainlab.network.calibrate import calibrate as run_calibration
from chainlab.network.pipes import LineReader
from chainlab.network.profile import Profile, parse_profile

CLIENT_ADDR = "10.77.0.1"
SERVER_ADDR = "10.77.0.2"
DEVICE = "chainlab0"

DISABLE_IPV6 = (
    "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6 && "
    "echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6"
)


# SCHED_FIFO priority of the forwarder when the profile needs its timer (a delay, jitter or a
# rate): its timer wake-ups release delayed packets, and on a busy machine a normal-priority
# wake-up waits behind other tasks (measured on this project's 2-core machine under load:
# mean 100 us late, up to 8 ms, at normal priority; mean 34 us, up to 0.3 ms, at SCHED_FIFO).
# 10 is low among real-time priorities: kernel threads that need to preempt it still can.
# A profile without delay, jitter or rate arms no timer (every packet is written on as it is
# read), and there normal priority is faster: the scheduler may run the woken forwarder on the
# CPU that wrote the packet, where a real-time task is woken on its previous CPU, often idle
# (measured with `chainlab bench link`, machine nearly idle: +0.02 ms per TCP round trip at
# normal priority against +0.06 ms at SCHED_FIFO).
REALTIME_PRIORITY = 10
# How long the forwarder may take to create both devices and print its ready line.
READY_TIMEOUT_S = 10.0
# How long a stopped forwarder may take to print its final statistics and exit.
STOP_TIMEOUT_S = 3.0


def forwarder_path() -> Path:
    """The chainlab-link binary: $CHAINLAB_LINK, else the workspace's release build."""
    return engine.binary("chainlab-link", "CHAINLAB_LINK")


@contextlib.contextmanager
def emulated_link(
    profile: dict,
    tag: str,
    *,
    calibrate: bool = True,
    exit_with_parent: bool = True,
    forwarder_cpus: set[int] | None = None,
) -> Iterator[Link]:
    """Client and server namespaces joined by the link `profile` describes (see
    `chainlab.network.profile`). `tag` goes into the namespace names (e.g. a scenario id).
    With `calibrate`, `link.calibration` holds the measured RTT, rate and loss beside the
    configured ones (see `chainlab.network.calibrate`); otherwise it is None.
    `exit_with_parent=False` lets the forwarder outlive this process (tests of the cleanup).
    `forwarder_cpus`: keep the forwarder on these cores (e.g. one that neither the server nor
    the load generator uses), so its timing does not compete with theirs."""
    prof = parse_profile(profile)
    nsmod.require_privileges()
    if prof.backend == "tun":
        forwarder_path()
    cleaned = nsmod.cleanup_stale()
    with _sigterm_raises():
        link = Link._open(
            prof, tag, exit_with_parent=exit_with_parent, forwarder_cpus=forwarder_cpus
        )
        link.cleaned = cleaned
        try:
            if calibrate:
                link.calibration = run_calibration(link)
            yield link
        finally:
            link.close()


class Link:
    """A live emulated link. `server_cmd`/`client_cmd` wrap a command to run it inside the
    server or client namespace; the server listens on `server_addr`, the client connects
    to it from `client_addr`."""

    client_addr = CLIENT_ADDR
    server_addr = SERVER_ADDR
    device = DEVICE

    def __init__(self, profile: Profile, link_id: str, client_ns: str, server_ns: str):
        self.profile = profile
        self.link_id = link_id
        self.client_ns = client_ns
        self.server_ns = server_ns
        self.calibration: dict | None = None
        self.cleaned: list[str] = []
        self.final_stats: dict | None = None
        # The forwarder's scheduling policy and offload mode as it reported them (None and
        # False without a forwarder).
        self.scheduler: dict | None = None
        self.offload = False
        self.forwarder_cpus: list[int] | None = None  # where the forwarder was kept, if pinned
        self._forwarder: subprocess.Popen | None = None
        self._lines: LineReader | None = None
        self._stderr: IO[bytes] | None = None
        self._state: dict = {}
        self._closed = False
        self._lock = threading.Lock()

    # -- what callers use -------------------------------------------------------------------

    def server_cmd(self, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.server_ns, *map(str, argv)]

    def client_cmd(self, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.client_ns, *map(str, argv)]

    @property
    def mss(self) -> int:
        return self.profile.mss

    @property
    def initcwnd(self) -> int:
        return self.profile.initcwnd

    @property
    def forwarder_pid(self) -> int | None:
        return self._forwarder.pid if self._forwarder else None

    def forwarder_stats(self) -> dict:
        """The forwarder's counters now (per direction: packets in, forwarded, dropped by
        loss/queue/oversize), via SIGUSR1. Only for the "tun" backend."""
        if self._forwarder is None or self._lines is None or self._closed:
            raise ChainlabError("forwarder_stats: this link has no running forwarder")
        self._forwarder.send_signal(signal.SIGUSR1)
        line = self._lines.readline(timeout=STOP_TIMEOUT_S)
        stats = _parse_line(line)
        if not stats or stats.get("event") != "stats":
            raise ChainlabError(f"forwarder answered SIGUSR1 with {line!r}, not a stats line")
        return stats

    def close(self) -> None:
        """Stop the forwarder, delete both namespaces and the state file. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            self._stop_forwarder()
        finally:
            nsmod.teardown(self._state)
            with contextlib.suppress(FileNotFoundError):
                (nsmod.STATE_DIR / f"{self.link_id}.json").unlink()
            atexit.unregister(self.close)
            if self._stderr is not None:
                self._stderr.close()

    # -- setting up -------------------------------------------------------------------------

    @classmethod
    def _open(
        cls,
        profile: Profile,
        tag: str,
        *,
        exit_with_parent: bool,
        forwarder_cpus: set[int] | None = None,
    ) -> Link:
        link_id = secrets.token_hex(4)
        base = f"{nsmod.NS_PREFIX}{nsmod.sanitize_tag(tag)}-{link_id}"
        link = cls(profile, link_id, f"{base}-c", f"{base}-s")
        link._state = {
            "owner": nsmod.own_identity(),
            "namespaces": [link.client_ns, link.server_ns],
            "forwarder": None,
            "profile": profile.to_dict(),
            "created_unix": time.time(),
        }
        # The state file goes first: whatever exists later is claimed by a live owner.
        nsmod.write_state(link_id, link._state)
        atexit.register(link.close)
        try:
            for ns in (link.client_ns, link.server_ns):
                nsmod.create_namespace(ns)
                _prepare_namespace(ns)
            if profile.backend == "tun":
                link._start_forwarder(exit_with_parent, forwarder_cpus)
            else:  # netem, and the plain veth reference
                link._create_veth()
            link._configure()
            if profile.backend == "netem":
                link._apply_netem()
        except BaseException:
            link.close()
            raise
        return link

    def _start_forwarder(self, exit_with_parent: bool, cpus: set[int] | None = None) -> None:
        p = self.profile
        argv = [
            str(forwarder_path()),
            "--a-netns", self.client_ns, "--a-dev", DEVICE,
            "--b-netns", self.server_ns, "--b-dev", DEVICE,
            "--delay-ms", repr(p.delay_ms),
            "--jitter-ms", repr(p.jitter_ms),
            "--loss", repr(p.loss),
            "--mtu", str(p.mtu),
            "--seed", str(p.seed),
        ]  # fmt: skip
        if p.rate_mbit is not None:
            argv += ["--rate-mbit", repr(p.rate_mbit), "--queue-packets", str(p.queue_limit)]
        if exit_with_parent:
            argv.append("--exit-with-parent")
        if REALTIME_PRIORITY is not None and needs_timer(p):
            argv += ["--realtime-priority", str(REALTIME_PRIORITY)]
        if offloads(p):
            argv.append("--offload")
        # Closed in close(), which every path out of _open and emulated_link reaches.
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115
        # Own session: a terminal's Ctrl-C reaches chainlab, which then stops the link itself.
        self._forwarder = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=self._stderr, start_new_session=True
        )
        if cpus:
            os.sched_setaffinity(self._forwarder.pid, cpus)
        self.forwarder_cpus = sorted(cpus) if cpus else None
        self._state["forwarder"] = {
            "pid": self._forwarder.pid,
            "start": nsmod.process_start(self._forwarder.pid),
        }
        nsmod.write_state(self.link_id, self._state)
        self._lines = LineReader(processes.pipe(self._forwarder.stdout).fileno())
        line = self._lines.readline(timeout=READY_TIMEOUT_S)
        ready = _parse_line(line)
        if not ready or ready.get("event") != "ready":
            self._forwarder.kill()
            self._forwarder.wait()
            raise ChainlabError(
                f"chainlab-link did not start ({self._forwarder_error() or 'no ready line'})"
            )
        self.scheduler = ready.get("scheduler")
        self.offload = bool(ready.get("offload"))

    def _forwarder_error(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        lines = self._stderr.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else ""

    def _stop_forwarder(self) -> None:
        proc = self._forwarder
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while self._lines is not None:
            line = self._lines.readline(timeout=max(0.0, deadline - time.monotonic()))
            if line is None:
                break
            parsed = _parse_line(line)
            if parsed and parsed.get("event") == "stats" and parsed.get("final"):
                self.final_stats = parsed
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

    def _create_veth(self) -> None:
        nsmod.ip(
            "link", "add", DEVICE, "type", "veth", "peer", "name", DEVICE,
            "netns", self.server_ns, netns=self.client_ns,
        )  # fmt: skip

    def _configure(self) -> None:
        """Addresses, MTU, and the route to the peer carrying the initial congestion window
        and the congestion control. Both are route attributes so they hold for every
        connection between the two ends whatever the host's defaults (a namespace inherits
        the host's default congestion control, and only the initial namespace may change
        it to one outside tcp_allowed_congestion_control)."""
        p = self.profile
        for ns, local, peer in (
            (self.client_ns, CLIENT_ADDR, SERVER_ADDR),
            (self.server_ns, SERVER_ADDR, CLIENT_ADDR),
        ):
            commands = "\n".join(
                [
                    f"link set dev {DEVICE} mtu {p.mtu} up",
                    f"addr add {local}/32 peer {peer}/32 dev {DEVICE}",
                    f"route replace {peer}/32 dev {DEVICE} proto kernel scope link src {local} "
                    f"initcwnd {p.initcwnd} congctl {p.congestion_control}",
                ]
            )
            nsmod.ip("-batch", "-", netns=ns, stdin=commands + "\n")

    def _apply_netem(self) -> None:
        p = self.profile
        args = ["limit", str(p.queue_limit or 1000), "delay", f"{p.delay_ms}ms"]
        if p.jitter_ms:
            args.append(f"{p.jitter_ms}ms")
        if p.loss:
            args += ["loss", "random", f"{p.loss * 100}%"]
        if p.rate_mbit is not None:
            args += ["rate", f"{p.rate_mbit}mbit"]
        for ns in (self.client_ns, self.server_ns):
            try:
                nsmod.run(
                    ["tc", "-n", ns, "qdisc", "replace", "dev", DEVICE, "root", "netem", *args]
                )
            except ChainlabError as e:
                raise ChainlabError(
                    f"network profile {p.name!r}: backend 'netem' needs the kernel's sch_netem, "
                    f'which this machine lacks or refused ({e}); use backend = "tun"'
                ) from None


def offloads(profile: Profile) -> bool:
    """Whether the forwarder passes TCP frames of several segments (TSO/GRO) on this profile:
    only without a rate and without loss, where all segments of a frame would be released at
    the same instant anyway. The kernel then moves a server flight as a veth pair does, as one
    frame instead of one packet per segment, which is what keeps the link's own cost per
    handshake small (see docs/network.md)."""
    return profile.rate_mbit is None and profile.loss == 0


def needs_timer(profile: Profile) -> bool:
    """Whether the forwarder will hold packets (and so keep time) on this profile."""
    return bool(profile.delay_ms or profile.jitter_ms or profile.rate_mbit is not None)


def _prepare_namespace(ns: str) -> None:
    """Loopback up; IPv6 off, so no router or multicast chatter crosses the link and every
    packet on it is one the measurement sent (also keeps the seeded loss pattern exact)."""
    nsmod.ip("link", "set", "lo", "up", netns=ns)
    # /proc/sys/net shows the namespace of the process that opens it; a kernel without IPv6
    # has no such files and no chatter to silence, hence check=False.
    nsmod.run(["ip", "netns", "exec", ns, "sh", "-c", DISABLE_IPV6], check=False)


@contextlib.contextmanager
def _sigterm_raises():
    """While a link exists, SIGTERM raises SystemExit (so `finally` blocks tear it down),
    unless someone (the campaign runner) already handles SIGTERM."""
    installed = False
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.getsignal(signal.SIGTERM)
        if previous in (signal.SIG_DFL, None):
            signal.signal(signal.SIGTERM, _raise_system_exit)
            installed = True
    try:
        yield
    finally:
        if installed:
            signal.signal(signal.SIGTERM, previous)


def _raise_system_exit(signum, _frame):
    raise SystemExit(128 + signum)


def _parse_line(line: str | None) -> dict | None:
    if not line:
        return None
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
