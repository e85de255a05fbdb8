"""The hierarchy and primitives caches are keyed by what determines their contents (the
libraries' builds, `pki`'s and the timing method's revisions, the machine), not by the engine
binary: a rebuilt engine over unchanged libraries finds both caches warm (issue #57); a path
reference is cached with the loopback twin taken around it."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

from chainlab import engine
from chainlab.campaign.model import PATH_REFERENCE_COUNT, NetworkProfile, PrimitivesPlan
from chainlab.model import reference_specs
from chainlab.runner import pki, primitives, primitives_cache, references

HIERARCHY = ("ML-DSA-44", "ML-DSA-44")


def test_a_rebuilt_engine_finds_the_same_hierarchies(engine_bin, tmp_path, monkeypatch):
    rebuilt = tmp_path / "chainlab-engine"
    shutil.copy2(engine_bin, rebuilt)
    with open(rebuilt, "ab") as f:
        f.write(b"another build of the same sources")  # other bytes, the same `info`
    assert engine.binary_sha256(rebuilt) != engine.binary_sha256(engine_bin)
    assert pki.location(rebuilt, HIERARCHY, 1) == pki.location(engine_bin, HIERARCHY, 1)
    assert pki.location(engine_bin, HIERARCHY, 1) != pki.location(engine_bin, HIERARCHY, 2)
    # Another revision of what `pki` writes, or another OpenSSL, is another hierarchy.
    real = engine.binary_info

    def revised(p, **change):
        return lambda q: {**real(q), **change} if q == p else real(q)

    before = pki.location(engine_bin, HIERARCHY, 1)
    newer = real(engine_bin)["pki_revision"] + 1
    monkeypatch.setattr(engine, "binary_info", revised(engine_bin, pki_revision=newer))
    assert pki.location(engine_bin, HIERARCHY, 1) != before
    other = {**real(engine_bin)["openssl_build"], "openssl_version": "3.5.6"}
    monkeypatch.setattr(engine, "binary_info", revised(engine_bin, openssl_build=other))
    assert pki.location(engine_bin, HIERARCHY, 1) != before


def test_the_primitives_cache_is_the_libraries_not_the_binaries(engine_bin, monkeypatch):
    info = engine.info()
    path = primitives_cache.cache_path(info)
    # Not the binary: the same libraries through another binary hash find the same cache.
    monkeypatch.setattr(engine, "binary_sha256", lambda p=None: "0" * 64)
    assert primitives_cache.cache_path(info) == path
    # The OpenSSL build, liboqs or the timing method's revision: another cache.
    assert primitives_cache.cache_path({**info, "primitives_revision": 2}) != path
    assert primitives_cache.cache_path({**info, "liboqs": None}) != path
    other = {**info["openssl_build"], "patch_sha256_16": "0" * 16}
    assert primitives_cache.cache_path({**info, "openssl_build": other}) != path
    # Another stack's library build too.
    real = engine.stack_info

    def rebuilt_boring(stack):
        got = real(stack)
        if stack == "boringssl":
            return {**got, "build": {**got["build"], "boring_sys": "5.5.0"}}
        return got

    monkeypatch.setattr(engine, "stack_info", rebuilt_boring)
    assert primitives_cache.cache_path(info) != path


def test_a_cached_path_reference_is_the_newest_one_with_its_loopback_twin():
    wan = NetworkProfile(name="wan", delay_ms=25.0)
    keys = references.path_reference_keys(wan, "rustls")
    paths, twins = keys[:2], keys[2:]
    assert [k[3] for k in twins] == [reference_specs.path_base_key(wan)] * 2

    def rows(key, run, hour, n=30):
        stack, subject, mode, message = key
        return [
            {"implementation": stack, "subject": subject, "op": mode, "message": message,
             "cpu_ns": 1, "measured_run": run, "measured_at": datetime(2026, 11, 29, hour)}
            for _ in range(n)
        ]  # fmt: skip

    plan = PrimitivesPlan(target_rel_halfwidth=0.5, time_cap_s=0.05)
    # An older cache: path references without twins: all four are measured again.
    old = [r for k in paths for r in rows(k, "old", 5)]
    by_key = primitives_cache.cache_index(old)
    assert [primitives.needs_measuring(k, by_key, plan) for k in keys] == [False] * 2 + [True] * 2
    # Measured again with their twins: only the newest run's rows of each are kept, so the
    # pair stays one taken together (the old path rows are not mixed in).
    both = old + [r for k in keys for r in rows(k, "new", 17)]
    by_key = primitives_cache.cache_index(both)
    assert not any(primitives.needs_measuring(k, by_key, plan) for k in keys)
    assert {r["measured_run"] for k in keys for r in by_key[k]} == {"new"}
    assert len(by_key[paths[0]]) == 30


def test_a_path_reference_and_its_twin_are_taken_in_halves_seeded_alike(monkeypatch, tmp_path):
    """Twin, path, path, twin: each half of the path seeded as the half of the twin it pairs
    with, on a stack whose engine takes --random-seed (OpenSSL's); unseeded on the others.
    The rows keep distinct seqs, and a changed method measures a cache's path rows again."""
    wan = NetworkProfile(name="wan", delay_ms=50.0)
    calls = []

    def fake(*args, first_seq=0, profile=None, twin_of=None, random_seed=None, **_kw):
        count = args[7]
        calls.append((profile is not None, count, first_seq, random_seed))
        out = [{"seq": first_seq + 3 + i, "over": profile is not None} for i in range(count)]
        return out, [40_000_000, 40_000_000]

    monkeypatch.setattr(references, "time_reference", fake)
    monkeypatch.setattr(primitives.host, "at_host", lambda rows, readings: rows)
    half = PATH_REFERENCE_COUNT // 2
    rest = PATH_REFERENCE_COUNT - half
    for stack, seeded in (("openssl-3.5", True), ("rustls", False)):
        calls.clear()
        rows = primitives._path_and_twin(
            Path("engine"), "mldsa", "full", 7, tmp_path, "run", stack, wan
        )
        assert [c[:3] for c in calls] == [
            (False, half, 0), (True, half, 0), (True, rest, half), (False, rest, half)
        ]  # fmt: skip
        first, second = calls[0][3], calls[2][3]
        assert (calls[1][3], calls[3][3]) == (first, second)
        if seeded:
            assert None not in (first, second) and first != second
        else:
            assert (first, second) == (None, None)
        for over in (True, False):
            seqs = [r["seq"] for r in rows if r["over"] is over]
            assert len(seqs) == len(set(seqs)) == PATH_REFERENCE_COUNT
    # Path rows of the earlier, unseeded method are not this method's: measured again.
    now = reference_specs.path_key(wan), reference_specs.path_base_key(wan)
    monkeypatch.setattr(reference_specs, "PATH_METHOD", reference_specs.PATH_METHOD - 1)
    before = reference_specs.path_key(wan), reference_specs.path_base_key(wan)
    assert now[0] != before[0] and now[1] != before[1]
    assert reference_specs.path_profile(now[0]) == reference_specs.path_profile(before[0]) == "wan"
