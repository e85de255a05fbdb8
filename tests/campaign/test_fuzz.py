"""Campaign files fuzzed (issue #39): Hypothesis takes the bundled campaigns and mutates them
as a user's mistakes would (wrong types, missing and unknown keys, out-of-range numbers,
misspelt algorithms and values, axes that conflict) and `chainlab validate` must answer each
with exit status 0 or 2: never a traceback, each problem on one line and only once, nothing
written. Examples Hypothesis found are kept as `@example`s, so they stay regression cases.
"""

from __future__ import annotations

import copy
import os
import tomllib
from pathlib import Path

import pytest
import tomli_w
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chainlab import cli

CAMPAIGNS = Path(__file__).resolve().parents[2] / "campaigns"
BASES = {
    p.stem: tomllib.loads(p.read_text())
    for p in sorted(CAMPAIGNS.glob("*.toml"))
    if p.stem in ("quick", "levers", "load", "mtc", "network", "rollout", "browser", "interop")
}

# Values a mistaken key may hold: every TOML type, edge numbers, near-miss names.
SCALARS = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.sampled_from([0, -1, 1, 2**31, 10**12, -(10**9)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.5, 1.5, 1e-12, 1e300]),
    st.text(max_size=20),
    st.sampled_from(
        [
            "",
            "ML-DSA-66",
            "SLH-DSA-SHAKE-129f",
            "ml",
            "x25519",
            "quic",
            "mtc-landmark",
            "openssl-3.5",
            "boringssl",
            "rustls",
            "nonsense",
            "a.b.c",
            "__",
        ]
    ),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)
# Keys a matrix or table might be given by mistake or by conflict.
KEYS = st.one_of(
    st.text(min_size=1, max_size=12),
    st.sampled_from(
        [
            "stack",
            "client_stack",
            "server_stack",
            "transport",
            "network",
            "certificate",
            "trust_anchors",
            "client_profile",
            "cert_compression",
            "handshake_mode",
            "served_chain",
            "kex",
            "hierarchy",
            "where",
            "min",
            "max",
            "count",
            "warmup",
            "mode",
            "rate",
            "steps",
            "seed",
            "order",
            "baseline",
        ]
    ),
)


def paths(doc, at=()) -> list[tuple]:
    """Every key path of a parsed TOML document: tables, keys and array elements."""
    out = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc)
    for k, v in items:
        here = (*at, k)
        out.append(here)
        if isinstance(v, dict | list):
            out += paths(v, here)
    return out


def parent(doc, path):
    for k in path[:-1]:
        doc = doc[k]
    return doc


# Plausible values of the axes, so that mutations also make valid files whose axes conflict.
PLAUSIBLE = st.sampled_from(
    [
        ["quic"],
        ["tcp", "quic"],
        ["rustls"],
        ["boringssl"],
        ["openssl-4.0"],
        [0, 28],
        ["sni"],
        ["chrome"],
        ["zlib"],
        ["resumed"],
        ["leaf"],
        ["mtc-landmark"],
        [{"kind": "mtc-standalone", "batch": 64}],
        [{"kind": "mtc-landmark", "batch": 64, "landmark_held": False, "retry": True}],
        ["rtt50"],
        ["X25519", "MLKEM1024"],
        [["ml", "ml", "ml", "ml", "ml"]],
        [["SLH-DSA-SHAKE-128f"]],
    ]
)


def misspelt(text: str, draw) -> str:
    """`text` with one character changed, dropped or doubled."""
    if not text:
        return "x"
    i = draw(st.integers(0, len(text) - 1))
    how = draw(st.sampled_from(["change", "drop", "double"]))
    if how == "drop":
        return text[:i] + text[i + 1 :]
    if how == "double":
        return text[: i + 1] + text[i:]
    return text[:i] + draw(st.characters(codec="ascii")) + text[i + 1 :]


@st.composite
def mutated(draw):
    """A bundled campaign with one to three mistakes."""
    name = draw(st.sampled_from(sorted(BASES)))
    doc = copy.deepcopy(BASES[name])
    for _ in range(draw(st.integers(1, 3))):
        everywhere = paths(doc) or [("campaign",)]
        matrices = [p for p in everywhere if p[0] == "matrix" and len(p) >= 3]
        where = draw(st.sampled_from(matrices if matrices and draw(st.booleans()) else everywhere))
        holder = parent(doc, where) if len(where) > 1 else doc
        key = where[-1]
        op = draw(st.sampled_from(["delete", "replace", "add", "append", "misspell", "axis"]))
        value = holder[key]
        if op == "delete" and key in (holder if isinstance(holder, dict) else range(len(holder))):
            del holder[key]
        elif op == "replace":
            holder[key] = draw(VALUES)
        elif op == "misspell" and isinstance(value, str):
            holder[key] = misspelt(value, draw)
        elif op == "axis" and isinstance(holder, dict):
            holder[draw(KEYS)] = copy.deepcopy(draw(PLAUSIBLE))  # never the constant itself
        elif op == "add" and isinstance(holder, dict):
            holder[draw(KEYS)] = draw(VALUES)
        elif op == "append" and isinstance(
            holder.get(key) if isinstance(holder, dict) else None, list
        ):
            holder[key].append(draw(VALUES))
    return name, doc


def validate(tmp_path: Path, text: str, capsys) -> tuple[int, str, bool]:
    """validate's exit status, its standard error, and whether the folder of the file (the
    working directory) is as it was."""
    f = tmp_path / "fuzzed.toml"
    f.write_text(text)
    before = sorted(tmp_path.rglob("*"))
    code = cli.main(["validate", str(f)])
    err = capsys.readouterr().err
    return code, err, sorted(tmp_path.rglob("*")) == before


@pytest.mark.parametrize("name", sorted(BASES))
def test_the_bundled_campaigns_validate(tmp_path, capsys, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    code, err, _ = validate(tmp_path, tomli_w.dumps(BASES[name]), capsys)
    assert code == 0, err


@settings(
    max_examples=int(os.environ.get("CHAINLAB_FUZZ_EXAMPLES", "200")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=mutated())
@example(case=("quick", {"campaign": {"name": "q"}, "matrix": {"m": {"kex": [[]]}}}))
# Found by Hypothesis: a key holding a record separator or a line break split its problem's
# line in two.
@example(case=("quick", {**BASES["quick"], "\x1e": False}))
@example(case=("quick", {**BASES["quick"], "\n": []}))
@pytest.mark.bad_input
def test_a_mistaken_campaign_is_refused_in_lines_never_a_traceback(
    tmp_path, capsys, monkeypatch, case
):
    name, doc = case
    try:
        text = tomli_w.dumps(doc)
    except (TypeError, ValueError):
        return  # not writable as TOML (e.g. a key that is not a string): no file a user has
    monkeypatch.chdir(tmp_path)
    code, err, unchanged = validate(tmp_path, text, capsys)
    assert code in (0, 2), err
    lines = [line for line in err.splitlines() if line.strip()]
    if code == 2:
        assert lines, "a refusal says why"
        assert len(lines) == len(set(lines)), f"a problem said twice:\n{err}"
        assert all(line.startswith("chainlab: error: ") or "fuzzed.toml" in line for line in lines)
    assert unchanged, "validate wrote nothing"
