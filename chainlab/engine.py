"""Locating the engine binaries and reading their build facts.

The engine is `$CHAINLAB_ENGINE` when set, else `<repo>/engine/target/release/chainlab-engine`
(built by `make engine`; every stack by `make engines`). `info()` is `chainlab-engine info`
parsed: OpenSSL version, patch hash, the accepted signature algorithms and the record schema.

Each TLS stack (chainlab.axes.stack) has its own binary, found by `stack_path()`: the
engine above for openssl-3.5, the engine linked against OpenSSL 4.0, the rustls, BoringSSL
and Go engines, each overridable by an environment variable (`STACK_BINARIES`).

`ensure(parts)` builds the parts a run needs that are not built yet (`engine/build.sh`, one
line each saying what and about how long): `make run` builds the OpenSSL 3.5 engine alone,
and a campaign that asks for another stack, liboqs' algorithms or an emulated link has it
built the first time (docs/stacks.md#building).
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path

from chainlab.errors import ChainlabError

REPO = Path(__file__).resolve().parent.parent
RELEASE_DIR = REPO / "engine" / "target" / "release"
RECORD_SCHEMA = "chainlab.engine.record/1"
# Each stack's binary: its path under engine/target (as `make engines` builds it) and the
# environment variable that overrides it.
STACK_BINARIES = {
    "openssl-3.5": ("release/chainlab-engine", "CHAINLAB_ENGINE"),
    "openssl-4.0": ("openssl-4.0/release/chainlab-engine", "CHAINLAB_ENGINE_OPENSSL_4_0"),
    "rustls": ("release/chainlab-rustls", "CHAINLAB_RUSTLS"),
    "boringssl": ("release/chainlab-boring", "CHAINLAB_BORING"),
    # Not a cargo binary: engine/build.sh go builds engine/go/ with Go 1.27 into the same folder.
    "go": ("release/chainlab-go", "CHAINLAB_GO"),
}
# The engines' file names: an engine started under one of them directly (no wrapper) sets
# its own parent-death signal when chainlab names its pid (chainlab.processes.spawn).
ENGINE_NAMES = frozenset(Path(rel).name for rel, _ in STACK_BINARIES.values())
# The variable that names it (engine/crates/chainlab-record/src/parent.rs,
# engine/go/parent.go).
PARENT_PID_VAR = "CHAINLAB_PARENT_PID"
# The engines that enter an emulated link's network namespace themselves, named by its file
# in this variable (engine/crates/chainlab-record/src/netns.rs), before any thread starts:
# the Rust ones. Go's runtime has threads before its code runs; it is wrapped in
# `ip netns exec` (chainlab.processes).
NETNS_VAR = "CHAINLAB_NETNS"
NETNS_ENGINE_NAMES = ENGINE_NAMES - {Path(STACK_BINARIES["go"][0]).name}
# The parts engine/build.sh builds, each as (what it is, about how long its first build
# takes on two cores with nothing cached, measured and rounded up: docs/stacks.md#building).
# A stack's part has the stack's name.
PARTS: dict[str, tuple[str, str]] = {
    "openssl-3.5": ("the OpenSSL 3.5 engine (OpenSSL 3.5, then the engine)", "5 min"),
    "liboqs": ("liboqs into the OpenSSL 3.5 engine (Falcon, MAYO, UOV, CROSS)", "4 min"),
    "openssl-4.0": ("the OpenSSL 4.0 engine (OpenSSL 4.0, then the engine)", "4 min"),
    "rustls": ("the rustls engine (aws-lc and liboqs)", "6 min"),
    "boringssl": ("the BoringSSL engine (BoringSSL, then the engine)", "5 min"),
    "go": ("the Go engine (Go 1.27 and quic-go from the Go module proxy)", "1 min"),
    "link": ("the emulated link's forwarder (chainlab-link)", "1 min"),
}
LINK = ("chainlab-link", "CHAINLAB_LINK")
BUILD_SCRIPT = REPO / "engine" / "build.sh"
BUILD_LOGS = REPO / "build"


def path() -> Path:
    """The engine binary (stack openssl-3.5): $CHAINLAB_ENGINE, else the release build."""
    return stack_path("openssl-3.5")


def stack_path(stack: str) -> Path:
    """The engine binary of a TLS stack (raises ChainlabError saying how to build it)."""
    rel, env_var = STACK_BINARIES[stack]
    return binary(rel, env_var, base=RELEASE_DIR.parent)


def stack_info(stack: str) -> dict:
    """`info` of a stack's binary (cached per binary and modification time); it must name
    the stack it was asked for and write this chainlab's records."""
    p = stack_path(stack)
    data = _run_info(str(p), p.stat().st_mtime_ns)
    if data.get("stack") != stack:
        raise ChainlabError(
            f"{p} is the engine of stack {data.get('stack')!r}, not {stack!r}: rebuild the "
            "engines from this checkout (`make engines`)"
        )
    return data


def binary(name: str, env_var: str, base: Path = RELEASE_DIR) -> Path:
    """A binary of the Rust workspace: $`env_var`, else `base`/`name` (the release build);
    raises ChainlabError saying how to get one when it is missing."""
    env = os.environ.get(env_var)
    p = Path(env) if env else base / name
    if not p.is_file() or not os.access(p, os.X_OK):
        where = env_var if env else "the default location"
        raise ChainlabError(
            f"{name} not found at {p} ({where}); build it with `make engines` (or "
            f"`engine/build.sh PART`, docs/stacks.md#building) or set {env_var} to a {name} "
            "binary"
        )
    return p


def binary_sha256(p: Path | None = None) -> str:
    """SHA-256 of the engine binary (or of `p`): what tells two builds apart (cached per
    file and modification time)."""
    p = p or path()
    return _sha256(str(p), p.stat().st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _sha256(p: str, _mtime: int) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def info() -> dict:
    """`chainlab-engine info` as a dict (cached per binary and modification time)."""
    p = path()
    return _info(str(p), p.stat().st_mtime_ns)


def binary_info(p: Path) -> dict:
    """`<p> info` of an OpenSSL engine binary `p` (as `info`, cached the same way)."""
    return _info(str(p), p.stat().st_mtime_ns)


def _info(p: str, mtime: int) -> dict:
    data = _run_info(p, mtime)
    try:
        build = data["openssl_build"]
        build["openssl_version"], build["patch_sha256_16"]  # noqa: B018 - presence check
        data["algorithms"]  # noqa: B018 - presence check
    except (KeyError, TypeError) as e:
        raise ChainlabError(f"engine {p} printed unexpected `info` output ({e})") from None
    return data


@functools.lru_cache(maxsize=8)
def _run_info(p: str, _mtime: int) -> dict:
    """`<binary> info`, parsed, with its record schema checked."""
    try:
        out = subprocess.run([p, "info"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ChainlabError(f"engine {p} did not run `info`: {e}") from None
    if out.returncode != 0:
        msg = out.stderr.strip().splitlines()[-1:] or [f"exit {out.returncode}"]
        raise ChainlabError(f"engine {p} failed `info`: {msg[0]}")
    try:
        data = json.loads(out.stdout)
        if not isinstance(data, dict):
            raise TypeError("not a JSON object")
    except (ValueError, TypeError) as e:
        raise ChainlabError(f"engine {p} printed unexpected `info` output ({e})") from None
    if data.get("record_schema") != RECORD_SCHEMA:
        raise ChainlabError(
            f"engine {p} writes records {data.get('record_schema')!r}; this chainlab reads "
            f"{RECORD_SCHEMA!r}: rebuild the engines from this checkout (`make engines`)"
        )
    return data


def missing(part: str) -> bool:
    """Whether `part` (a key of PARTS) is not built in this checkout. A binary an
    environment variable names is the user's: never missing here (`stack_path` and
    `binary` say what is wrong with it)."""
    if part == "liboqs":
        return missing("openssl-3.5") or info().get("liboqs") is None
    rel, env_var = STACK_BINARIES.get(part, LINK)
    if os.environ.get(env_var):
        return False
    p = RELEASE_DIR.parent / rel if part in STACK_BINARIES else RELEASE_DIR / rel
    return not (p.is_file() and os.access(p, os.X_OK))


def ensure(parts: Iterable[str], say: Callable[[str], None]) -> list[str]:
    """Build each of `parts` this checkout lacks, in order, one `engine/build.sh` at a time
    (other chainlab processes wait for it); `say` gets one line a build. Returns the parts
    built; raises ChainlabError naming the part and its log when a build fails."""
    todo = [p for p in dict.fromkeys(parts) if missing(p)]
    if not todo:
        return []
    if not BUILD_SCRIPT.is_file():
        raise ChainlabError(
            f"{', '.join(todo)} not built, and this chainlab has no {BUILD_SCRIPT} to build "
            "them; set the binaries' environment variables (README, 'Using it')"
        )
    BUILD_LOGS.mkdir(parents=True, exist_ok=True)
    built = []
    with open(BUILD_LOGS / "engine-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for part in todo:
            if not missing(part):  # another chainlab built it while this one waited
                continue
            what, takes = PARTS[part]
            log = BUILD_LOGS / f"engine-{part}.log"
            say(f"building {what}, once: about {takes} on 2 cores (log: {log})")
            with open(log, "w") as out:
                done = subprocess.run(
                    [str(BUILD_SCRIPT), part], stdout=out, stderr=subprocess.STDOUT, check=False
                )
            if done.returncode != 0 or missing(part):
                last = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
                why = last[-1].strip() if last else f"exit {done.returncode}"
                raise ChainlabError(f"building {what} failed: {why} (the whole log: {log})")
            built.append(part)
    return built
