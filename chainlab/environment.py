"""Every environment variable chainlab reads, each declared once with what it may hold,
and checked before anything is written: a problem is one line naming the variable, its
value and what is allowed (README, "Environment").

The caches' places are decided here too (`cache_dir`), so the run and its checks agree on
where a hierarchy or a primitive would be kept.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from chainlab.errors import ChainlabError, one_line


def _directory(value: str) -> str | None:
    """A folder chainlab may write in: one that exists and is writable, or one it can make
    (its nearest existing parent is a writable folder)."""
    p = Path(value).expanduser()
    if p.exists():
        if not p.is_dir():
            return "is not a folder"
        return None if os.access(p, os.W_OK | os.X_OK) else "is a folder this user cannot write"
    for parent in p.parents:
        if parent.exists():
            if not parent.is_dir():
                return f"cannot be made: {parent} is not a folder"
            if not os.access(parent, os.W_OK | os.X_OK):
                return f"cannot be made: {parent} is a folder this user cannot write"
            return None
    return "cannot be made"


def _executable(value: str) -> str | None:
    p = Path(value).expanduser()
    if not p.exists():
        return "names no file"
    if not p.is_file():
        return "is not a file"
    return None if os.access(p, os.X_OK) else "is not executable"


def _switch(value: str) -> str | None:
    return None if value.strip().lower() in ("on", "off") else "is neither 'on' nor 'off'"


# What CHAINLAB_HOST_PASSES may hold: passes over the measurements a cache keeps
# (chainlab.runner.host.steady), 1 to measure each once whatever the host did around it.
HOST_PASSES_MAX = 5


def _passes(value: str) -> str | None:
    v = value.strip()
    if not v.isdigit():
        return "is not a whole number"
    return None if 1 <= int(v) <= HOST_PASSES_MAX else f"is outside 1 to {HOST_PASSES_MAX}"


@dataclass(frozen=True)
class Variable:
    name: str
    allowed: str  # what the variable may hold, as an error message says it
    check: Callable[[str], str | None]  # the problem with a value, or None


_DIR = "a folder chainlab can write in, or make"
_EXE = "the path of an executable engine binary"
VARIABLES: dict[str, Variable] = {
    v.name: v
    for v in (
        Variable("CHAINLAB_PKI_CACHE", _DIR, _directory),
        Variable("CHAINLAB_PRIMITIVES_CACHE", _DIR, _directory),
        Variable("XDG_CACHE_HOME", _DIR, _directory),
        Variable("HOME", _DIR + " (the caches go to $HOME/.cache/chainlab)", _directory),
        Variable("CHAINLAB_ENGINE", _EXE, _executable),
        Variable("CHAINLAB_ENGINE_OPENSSL_4_0", _EXE, _executable),
        Variable("CHAINLAB_RUSTLS", _EXE, _executable),
        Variable("CHAINLAB_BORING", _EXE, _executable),
        Variable("CHAINLAB_GO", _EXE, _executable),
        Variable("CHAINLAB_LINK", "the path of an executable chainlab-link", _executable),
        Variable("CHAINLAB_FIGURES", "'on' or 'off' (off: reports without figure files)", _switch),
        Variable(
            "CHAINLAB_HOST_PASSES",
            f"a whole number from 1 to {HOST_PASSES_MAX} (1: each cached measurement taken "
            "once, however slow the host was around it)",
            _passes,
        ),
    )
}
# What decides where the caches are: the first of these that is set.
CACHE_VARIABLES = {
    "pki": ("CHAINLAB_PKI_CACHE", "XDG_CACHE_HOME", "HOME"),
    "primitives": ("CHAINLAB_PRIMITIVES_CACHE", "XDG_CACHE_HOME", "HOME"),
}


def cache_dir(kind: str) -> Path:
    """The folder of cache `kind` ('pki', 'primitives'): its own variable, else
    $XDG_CACHE_HOME/chainlab/<kind>, else ~/.cache/chainlab/<kind>."""
    own, *_ = CACHE_VARIABLES[kind]
    if os.environ.get(own):
        return Path(os.environ[own]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "chainlab" / kind


def host_passes(default: int) -> int:
    """Passes over the measurements a cache keeps: CHAINLAB_HOST_PASSES where set (checked
    with the others before a run starts), else `default`."""
    value = os.environ.get("CHAINLAB_HOST_PASSES", "").strip()
    return int(value) if value and _passes(value) is None else default


def problems(names: Iterable[str] | None = None) -> list[str]:
    """One line per set variable of `names` (default: every one) whose value is not
    allowed; for the caches, the variable that decides their place."""
    out = []
    for name in VARIABLES if names is None else names:
        v = VARIABLES[name]
        value = os.environ.get(name)
        if value is None or value == "":
            continue
        problem = v.check(value)
        if problem:
            out.append(
                f"environment variable {name}={one_line(value)!r}: {problem}; allowed: {v.allowed}"
            )
    return out


def deciding(kind: str) -> str:
    """The variable that decides where cache `kind` goes."""
    return next((n for n in CACHE_VARIABLES[kind] if os.environ.get(n)), "HOME")


def cache_problems(kind: str) -> list[str]:
    """Why cache `kind` cannot be written where the environment puts it (naming the
    variable that puts it there), or nothing."""
    d = cache_dir(kind)
    problem = _directory(str(d))
    if problem is None:
        return []
    name = deciding(kind)
    value = os.environ.get(name, "")
    return [
        f"the {kind} cache {one_line(str(d))} {problem} (placed there by environment "
        f"variable {name}={one_line(value)!r}); allowed: {VARIABLES[name].allowed}"
    ]


def check(names: Iterable[str] | None = None, caches: Iterable[str] = ()) -> None:
    """Raise ChainlabError listing every problem with variables `names` (default: all) and
    with the places of the caches `caches` ('pki', 'primitives'), one line each."""
    found = problems(names)
    for kind in caches:
        said = f"environment variable {deciding(kind)}="
        if not any(p.startswith(said) for p in found):
            found += [p for p in cache_problems(kind) if p not in found]
    if found:
        raise ChainlabError("\n".join(found))
