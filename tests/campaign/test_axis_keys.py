"""Axes are plugins: each axis's key (and its other [matrix.*] keys and store columns) is
named in the plumbing layers (chainlab/axes, chainlab/campaign, chainlab/model,
chainlab/runner, chainlab/store) only by the registry (axes/__init__.py, axes/axis.py) and
the module that declares the axis. Everything else asks the axis's callables, or the
scenario's handshake (chainlab.axes.handshake) its values make (ARCHITECTURE.md, "A campaign
axis").
Analyses and report sections that study an axis name it freely.

A name counts where code uses it: a string literal (not a docstring), an attribute
(`s.served_chain`), or a keyword argument (`replace(s, handshake_mode=...)`).
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

from chainlab import axes

ROOT = Path(__file__).resolve().parents[2]
PLUMBING = ("axes", "campaign", "model", "runner", "store")
REGISTRY = {"chainlab/axes/__init__.py", "chainlab/axes/axis.py"}
# Where each axis is declared: a module of chainlab/axes named by its key (the rollout's four
# together).
ROLLOUT = ("second_chain", "population", "server_groups", "chain_order")
DECLARED_IN = {
    a.key: f"chainlab/axes/{'rollout' if a.key in ROLLOUT else a.key}.py" for a in axes.registered()
}
# A word that is also an axis's name but names something else in that file.
ELSEWHERE = {
    ("chainlab/axes/signature_impl.py", "stack"): "a value: the stack's own implementation",
    ("chainlab/runner/records.py", "stack"): "an engine record's field: its writer's stack",
    ("chainlab/runner/scenario.py", "cert_compression"): "the engine's ready-line field",
    ("chainlab/axes/stack.py", "client_auth"): "a capability as the engines' info names it",
    ("chainlab/axes/stack.py", "trust_anchors"): "a capability as the engines name it",
    ("chainlab/axes/stack.py", "client_profile"): "a capability as the engines name it",
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
    importing = False  # an import statement: its module paths name modules, not axes
    for i, t in enumerate(toks):
        prev = toks[i - 1] if i else None
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        starts = prev is None or prev.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
        if t.type == tokenize.NEWLINE:
            importing = False
        elif starts and t.type == tokenize.NAME:
            importing = t.string in ("from", "import")
        if importing:
            continue
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
from chainlab.axes.served_chain import SERVED_CHAIN
def f(s, parts):
    """served_chain is named in this docstring only."""
    # served_chain in a comment
    a = parts["served_chain"]
    b = s.served_chain
    c = replace(s, served_chain="full")
    return f"{a} served_chain"
'''
    assert [line for _, line in uses(src, names)] == [6, 7, 8]


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
