"""Locating the engine binary and reading its build facts.

The binary is `$CHAINLAB_ENGINE` when set, else `<repo>/engine/target/release/chainlab-engine`
(built by `make engine`). `info()` is `chainlab-engine info` parsed: OpenSSL version, patch
hash, the accepted signature algorithms and the record schema.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
from pathlib import Path

from chainlab.errors import ChainlabError

REPO = Path(__file__).resolve().parent.parent
RELEASE_DIR = REPO / "engine" / "target" / "release"
RECORD_SCHEMA = "chainlab.engine.record/1"


def path() -> Path:
    """The engine binary: $CHAINLAB_ENGINE, else the workspace's release build."""
    return binary("chainlab-engine", "CHAINLAB_ENGINE")


def binary(name: str, env_var: str) -> Path:
    """A binary of the Rust workspace: $`env_var`, else the release build; raises
    ChainlabError saying how to get one when it is missing."""
    env = os.environ.get(env_var)
    p = Path(env) if env else RELEASE_DIR / name
    if not p.is_file() or not os.access(p, os.X_OK):
        where = env_var if env else "the default location"
        raise ChainlabError(
            f"{name} not found at {p} ({where}); build it with `make engine` or set "
            f"{env_var} to a {name} binary"
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


@functools.lru_cache(maxsize=4)
def _info(p: str, _mtime: int) -> dict:
    try:
        out = subprocess.run([p, "info"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ChainlabError(f"engine {p} did not run `info`: {e}") from None
    if out.returncode != 0:
        msg = out.stderr.strip().splitlines()[-1:] or [f"exit {out.returncode}"]
        raise ChainlabError(f"engine {p} failed `info`: {msg[0]}")
    try:
        data = json.loads(out.stdout)
        build = data["openssl_build"]
        build["openssl_version"], build["patch_sha256_16"]  # noqa: B018 - presence check
        data["algorithms"]  # noqa: B018 - presence check
    except (ValueError, KeyError, TypeError) as e:
        raise ChainlabError(f"engine {p} printed unexpected `info` output ({e})") from None
    if data.get("record_schema") != RECORD_SCHEMA:
        raise ChainlabError(
            f"engine {p} writes records {data.get('record_schema')!r}; this chainlab reads "
            f"{RECORD_SCHEMA!r}: rebuild the engine from this checkout (`make engine`)"
        )
    return data
