"""The primitives cache: the rows `chainlab.runner.primitives` measured, kept in a store per
machine and library build (`$CHAINLAB_PRIMITIVES_CACHE`, else
`~/.cache/chainlab/primitives/<key>.duckdb`), so a second campaign on the same machine takes
them from there, and so does a rebuilt engine over the same libraries.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from chainlab import __version__, engine, environment, machine
from chainlab.axes.stack import DEFAULT_STACK
from chainlab.errors import ChainlabError
from chainlab.model import cost, cost_fit, host_speed, implementations, reference_specs
from chainlab.runner import host
from chainlab.store import Store, views


def cache_path(info: dict) -> Path:
    """The cache store of this machine and the libraries the engines time: keyed by what
    determines a primitive's figures (the machine; each stack's library build and the
    engines' method revision, `primitives_revision`), not by the engine binaries, so a
    rebuilt engine over unchanged libraries keeps its cache."""
    facts = machine.describe()
    key = {
        "cpu_model": facts.get("cpu_model"),
        "cores": facts.get("cores"),
        "kernel": facts.get("kernel"),
        "openssl": info["openssl_build"].get("openssl_version"),
        "patch": info["openssl_build"].get("patch_sha256_16"),
        "liboqs": info.get("liboqs"),
        "primitives_revision": info.get("primitives_revision"),
        # Every other engine that times its own implementation's primitives, as built.
        "stack_engines": _stack_libraries(),
        # What a cached row holds beyond its timing: since schema 16 the host's speed around
        # it, which the cost model scales by (model/host_speed.py); rows cached without it
        # would price every later run at no known speed, so they are not read. Since
        # 2026-11-30 the speed around its own batch (campaign.model.BATCH_MAX_S): a
        # primitive read only before and after its whole measurement can carry a spell
        # neither reading saw (OpenSSL 3.5's ML-DSA-65 signing, priced +37 %), so those
        # rows are not read either.
        "rows": "host_cpu_ns per batch",
    }
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return environment.cache_dir("primitives") / f"{digest}.duckdb"


def library_facts(info: dict) -> dict:
    """What of a stack engine's `info` determines its primitives' figures: the libraries
    it was built from and the revision of the timing method."""
    return {
        "build": info.get("build") or info.get("openssl_build"),
        "liboqs": info.get("liboqs"),
        "primitives_revision": info.get("primitives_revision"),
    }


def _stack_libraries() -> dict[str, dict]:
    out = {}
    for stack in engine.STACK_BINARIES:
        if stack == DEFAULT_STACK:
            continue
        try:
            out[stack] = library_facts(engine.stack_info(stack))
        except (ChainlabError, OSError):
            continue  # not built: nothing of it is cached
    return out


def cached_rows(path: Path, keys: frozenset[tuple] | None = None) -> list[dict]:
    """The cache's rows ([] without a cache, or when another process holds it), with `keys`
    those of these (implementation, subject, op, message) only (`Store.primitive_records`).
    Read once per version of the file (its modification time and size): a run asks for them
    more than once (what it must measure, the primitives step), 0.4 s each for 23,000 rows."""
    try:
        st = path.stat()
    except OSError:
        return []
    return list(_rows(path, st.st_mtime_ns, st.st_size, keys))


def cached_summary(path: Path) -> list[dict]:
    """The cache's per-primitive summary (Store.primitive_summary: n, means, variances), []
    without a cache: what the estimates' cost model needs, aggregated by the store (reading
    its 89,000 rows to aggregate them took 1.3 s of every run's start, 0.06 s this way).
    Read once per version of the file, as `cached_rows`."""
    try:
        st = path.stat()
    except OSError:
        return []
    return list(_summary(path, st.st_mtime_ns, st.st_size))


@functools.lru_cache(maxsize=4)
def _summary(path: Path, mtime_ns: int, size: int) -> tuple[dict, ...]:
    kept = _kept_summary(path, mtime_ns, size)
    if kept is not None:
        return kept
    try:
        with Store.open(path) as st:
            frame = st.primitive_summary()
    except ChainlabError:
        return ()
    rows = tuple(frame.to_dict("records"))
    _keep_summary(path, mtime_ns, size, rows)
    return rows


# Beside each cache, its summary as of a version of the file (`<cache>.summary.json`): a run
# reads the summaries of every cache on the machine for its estimate (this build's and the
# earlier builds' it borrows from), 0.11 s each opened (five caches: 0.53 s of browser.toml's
# 15 s, 2026-11-30). It is used only while the file's modification time and size and the
# summary's query are what it was made from; anything else makes it again.
_TIMES = ("first_measured", "last_measured")


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".summary.json")


def _made_from(mtime_ns: int, size: int) -> dict:
    query = hashlib.sha256(views.PRIMITIVE_SUMMARY.encode()).hexdigest()[:16]
    return {"mtime_ns": mtime_ns, "size": size, "query": query}


def _kept_summary(path: Path, mtime_ns: int, size: int) -> tuple[dict, ...] | None:
    try:
        kept = json.loads(_sidecar(path).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("made_from") != _made_from(mtime_ns, size):
        return None
    rows = kept.get("rows")
    if not isinstance(rows, list):
        return None
    return tuple(
        {k: pd.Timestamp(v) if k in _TIMES and v is not None else v for k, v in r.items()}
        for r in rows
    )


def _keep_summary(path: Path, mtime_ns: int, size: int, rows: tuple[dict, ...]) -> None:
    """Writes the sidecar (atomically; a cache that cannot take it goes without)."""
    out = [
        {
            k: v.isoformat() if k in _TIMES and isinstance(v, pd.Timestamp) else v
            for k, v in r.items()
        }
        for r in rows
    ]
    tmp = _sidecar(path).with_suffix(f".{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps({"made_from": _made_from(mtime_ns, size), "rows": out}))
        os.replace(tmp, _sidecar(path))
    except (OSError, TypeError, ValueError):
        with contextlib.suppress(OSError):
            tmp.unlink()


@functools.lru_cache(maxsize=4)
def _rows(path: Path, _mtime_ns: int, _size: int, keys: frozenset | None) -> tuple[dict, ...]:
    try:
        with Store.open(path) as st:
            return tuple(st.primitive_records(keys))
    except ChainlabError:
        return ()


def save_to_cache(path: Path, rows: list[dict], info: dict) -> str | None:
    """Adds measured rows to the cache; a reason when it could not (the run goes on)."""
    if not rows:
        return None
    try:
        with Store.open_or_create(path) as st:
            cache_run = st.query("SELECT run_id FROM runs ORDER BY started_at LIMIT 1")
            if cache_run.empty:
                run_id = uuid.uuid4().hex
                st.begin_run(run_row(run_id, info, "primitives cache"))
                st.end_run(run_id, "completed")
            else:
                run_id = cache_run.iloc[0, 0]
            st.write_primitives([{**r, "run_id": run_id} for r in rows])
    except ChainlabError as e:
        return str(e)
    return None


def run_row(run_id: str, info: dict, what: str) -> dict:
    return {
        "run_id": run_id,
        "started_at": now(),
        "status": "running",
        "campaign_file_name": f"({what})",
        "campaign_file_sha256": hashlib.sha256(b"").hexdigest(),
        "campaign_toml": "",
        "chainlab_version": __version__,
        "chainlab_commit": None,
        "engine_info": info,
        "openssl_version": info["openssl_build"]["openssl_version"],
        "openssl_patch_sha": info["openssl_build"]["patch_sha256_16"],
        "machine": machine.describe(),
        "libraries": machine.libraries(),
        "options": {"what": what},
    }


def now() -> datetime:
    """UTC now, without a time zone (as the store keeps times)."""
    return datetime.now(UTC).replace(tzinfo=None)


def cached_model() -> cost.CostModel | None:
    """The cost model of this machine's primitives cache for this engine build, for the
    estimates; what this build's cache lacks (all of it, before its first run) is taken from
    the latest earlier build's cache beside it that has it (a rebuilt engine's primitives take
    about what they took: interop.toml's first run after a rebuild, priced without them, was
    estimated 1.24x; its run after a campaign that had cached only OpenSSL 3.5's, with the
    other stacks priced from the built-in table, 1.21x). None without either (no engine, no
    cache)."""
    try:
        path = cache_path(engine.info())
    except (ChainlabError, OSError):
        return None
    try:
        earlier = sorted(
            (p for p in path.parent.glob("*.duckdb") if p != path),
            key=lambda p: p.stat().st_mtime_ns,
            reverse=True,
        )
    except OSError:
        earlier = []
    own = cached_summary(path)
    summary = merged_summary([own] + [cached_summary(p) for p in earlier])
    if not summary:
        return None
    if not own:
        source = "primitives cache of an earlier engine build on this machine"
    elif len(own) < len(summary):
        source = (
            "primitives cache of this machine and engine build (what it lacks from an earlier "
            "build's)"
        )
    else:
        source = "primitives cache of this machine and engine build"
    return cost_fit.model_from_summary(summary, source)


def estimate_model(
    read: Callable[[], dict] | None = None, watched: host.LoadWatch | None = None
) -> tuple[cost.CostModel | None, bool, float | None]:
    """What a run's estimate (and `validate`'s) prices with: `cached_model` at the host's
    speed now (`read`: a host reading, chainlab.runner.host.reference; its CPU ns,
    chainlab.model.host_speed.at_reading) with the least spread the other load on the CPUs
    makes now (chainlab.runner.host.foreign_load, or what `watched` saw while the run
    started; host_speed.with_contention); whether that load could be read; and the reading
    (None: not taken, or it failed)."""
    busy = host.foreign_load() if watched is None else watched.end()
    reading = None
    if read is not None:
        try:
            reading = float(read()["cpu_ns"])
        except (host.ReferenceError, ChainlabError, OSError):
            reading = None
    model = host_speed.at_reading(cached_model(), reading)
    return host_speed.with_contention(model, busy), busy is not None, reading


# What identifies a primitive (or reference handshake) in a summary (the store's GROUP BY).
_SUMMARY_KEY = ("implementation", "subject", "op", "message")


def merged_summary(summaries: list[list[dict]]) -> list[dict]:
    """Summary rows (Store.primitive_summary) of several caches, the first holding a primitive
    giving it: one row per implementation, subject, operation and message."""
    out: dict[tuple, dict] = {}
    for summary in summaries:
        for row in summary:
            key = tuple(_absent_as_none(row.get(c)) for c in _SUMMARY_KEY)
            out.setdefault(key, row)
    return list(out.values())


def _absent_as_none(value):
    """A summary's NULL (pandas reads a NULL message as NaN, which equals nothing) as None."""
    return None if isinstance(value, float) and math.isnan(value) else value


def cached_index(path: Path, keys: list[tuple] | None = None) -> dict[tuple, list[dict]]:
    """`cache_index` of the cache at `path`, of the rows of these timing keys (an Item's
    `timing_key` or a reference's key; None: every row), made once per version of the file:
    a run asks twice (what it must measure, then the primitives step), 0.13-0.27 s each over
    23,000 rows (2026-11-30). Read it; do not change it."""
    try:
        st = path.stat()
    except OSError:
        return {}
    wanted = None if keys is None else frozenset(keys)
    return _index(path, st.st_mtime_ns, st.st_size, wanted)


@functools.lru_cache(maxsize=2)
def _index(path: Path, _mtime_ns: int, _size: int, wanted: frozenset | None) -> dict:
    return cache_index(cached_rows(path, wanted))


def cache_index(rows: list[dict]) -> dict[tuple, list[dict]]:
    """Cached rows by timing key (implementation, subject, op, message); of a path reference
    or its loopback twin only the newest measurement's, so the two stay a pair taken together
    (`_path_and_twin`; an older cache's path rows without a twin are measured again)."""
    by_key: dict[tuple, list[dict]] = {}
    for r in rows:
        message = r["message"] if isinstance(r["message"], str) else None
        impl = r.get("implementation") or implementations.unrecorded(r["subject"], r["op"])
        by_key.setdefault((impl, r["subject"], r["op"], message), []).append(r)
    for key, got in by_key.items():
        if reference_specs.is_path_reference(key[3]):
            newest = max(got, key=lambda r: r["measured_at"])["measured_run"]
            by_key[key] = [r for r in got if r["measured_run"] == newest]
    return by_key
