"""Axes are plugins: each axis's key (and its other [matrix.*] keys and store columns) is
named in the plumbing layers (chainlab/campaign, chainlab/model, chainlab/runner,
chainlab/store) only by the registry (campaign/axes.py, campaign/axis.py) and the module
that declares the axis. Everything else asks the axis's callables, or the scenario's handshake
(chainlab.campaign.handshake) its values make (ARCHITECTURE.md, "A campaign axis").
Analyses and report sections that study an axis name it freely.

A name counts where code uses it: a string literal (not a docstring), an attribute
(`s.served_chain`), or a keyword argument (`replace(s, handshake_mode=...)`).
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

from chainlab.campaign import axes

ROOT = Path(__file__).resolve().parents[2]
PLUMBING = ("campaign", "model", "runner", "store")
REGISTRY = {"chainlab/campaign/axes.py", "chainlab/campaign/axis.py"}
# Where an axis is declared outside the registry.
DECLARED_IN = {
    "stack": "chainlab/campaign/stacks.py",
    "certificate": "chainlab/campaign/certificates.py",
    "second_chain": "chainlab/campaign/rollout.py",
    "population": "chainlab/campaign/rollout.py",
    "server_groups": "chainlab/campaign/rollout.py",
    "chain_order": "chainlab/campaign/rollout.py",
    "trust_anchors": "chainlab/campaign/anchors.py",
    "client_profile": "chainlab/campaign/profiles.py",
}
# A word that is also an axis's name but names something else in that file.
ELSEWHERE = {
    ("chainlab/runner/records.py", "stack"): "an engine record's field: its writer's stack",
    ("chainlab/runner/scenario.py", "cert_compression"): "the engine's ready-line field",
    ("chainlab/campaign/stacks.py", "client_auth"): "a capability as the engines' info names it",
    ("chainlab/campaign/stacks.py", "trust_anchors"): "a capability as the engines name it",
    ("chainlab/campaign/stacks.py", "client_profile"): "a capability as the engines name it",
}


def axis_names() -> dict[str, str]:
    """Every name of every non-structural axis -> the axis's key."""
    out = {}
    for a in axes.levers():
        for name in (a.key, *a.matrix_keys, *a.column_names):
            out[name] = a.key
    return out


def uses(src: str, names: dict[str, str]) -> list[tuple[str, int]]:
    """(name, line) of each use of a name in Python source."""
    toks = [
        t
        for t in tokenize.generate_tokens(io.StringIO(src).readline)
        if t.type not in (tokenize.COMMENT, tokenize.NL)
    ]
    out = []
    for i, t in enumerate(toks):
        prev = toks[i - 1] if i else None
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if t.type == tokenize.STRING:
            statement = prev is None or prev.type in (
                tokenize.NEWLINE,
                tokenize.INDENT,
                tokenize.DEDENT,
            )
            if statement:  # a docstring
                continue
            try:
                value = ast.literal_eval(t.string)
            except (ValueError, SyntaxError):  # an f-string
                continue
            if isinstance(value, str) and value in names:
                out.append((value, t.start[0]))
        elif t.type == tokenize.NAME and t.string in names and prev is not None:
            keyword = nxt is not None and nxt.string == "=" and prev.string in ("(", ",")
            if prev.string == "." or keyword:
                out.append((t.string, t.start[0]))
    return out


def test_the_scan_finds_each_kind_of_use():
    names = {"served_chain": "served_chain"}
    src = '''
def f(s, parts):
    """served_chain is named in this docstring only."""
    # served_chain in a comment
    a = parts["served_chain"]
    b = s.served_chain
    c = replace(s, served_chain="full")
    return f"{a} served_chain"
'''
    assert [line for _, line in uses(src, names)] == [5, 6, 7]


def test_axis_keys_are_named_only_by_the_registry_and_their_own_module():
    names = axis_names()
    found = []
    for layer in PLUMBING:
        for path in sorted((ROOT / "chainlab" / layer).glob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in REGISTRY:
                continue
            for name, line in uses(path.read_text(), names):
                key = names[name]
                if DECLARED_IN.get(key) == rel or (rel, name) in ELSEWHERE:
                    continue
                found.append(f"{rel}:{line}: {name!r} (axis {key!r})")
    assert not found, "axis names outside the registry and their own module:\n" + "\n".join(found)


def test_each_exemption_is_still_needed():
    names = axis_names()
    for (rel, name), why in ELSEWHERE.items():
        got = [n for n, _ in uses((ROOT / rel).read_text(), names)]
        assert name in got, f"{rel} no longer names {name!r} ({why}): drop the exemption"
