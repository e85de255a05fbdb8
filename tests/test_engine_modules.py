"""No import circles inside the engine's crates: within each crate, the modules' references
to each other (`use crate::...`, `use super::...`, and paths such as `crate::serve::X` in
code) form no cycle, as tests/test_layers.py holds the Python layers to pointing down.

A module is a file (`src/a/b.rs` or `src/a/b/mod.rs` is `a::b`; `lib.rs` and `main.rs` the
crate's root); inline modules belong to their file, and a `#[cfg(test)]` one (unit tests,
compiled only for `cargo test`, which may use their file's parent) counts for nothing. A reference
counts for the longest module its path names: `super::Stack` from `serve/event.rs` is a
reference to `serve` (its `mod.rs`), `super::stack::Stack` one to `serve::stack`. A parent
declaring its children (`mod event;`) is no reference; using them is.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CRATES = Path(__file__).resolve().parents[1] / "engine" / "crates"

# A path starting at `crate`, `super` or `self` (up to its last `::segment`), or the
# contents of a braced `use` group after such a prefix.
_PATH = re.compile(r"\b(crate|super|self)(?=::)((?:::(?:super|[A-Za-z_]\w*))*)(::\{([^}]*)\})?")
_BARE = re.compile(r"(?<![\w:])([a-z_]\w*)::")
_INLINE_MOD = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([a-z_]\w*)\s*\{")
_COMMENT = re.compile(r"//.*$")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_USE = re.compile(r"\buse\s[^;]*;")


def modules(src: Path) -> dict[tuple[str, ...], Path]:
    """Module path -> its file, for one crate's `src`."""
    out = {}
    for f in src.rglob("*.rs"):
        parts = f.relative_to(src).with_suffix("").parts
        if parts in (("lib",), ("main",)):
            parts = ()
        elif parts[-1] == "mod":
            parts = parts[:-1]
        out.setdefault(parts, f)
    return out


def _resolve(known: set, here: tuple[str, ...], root: str, rest: list[str]):
    """The longest known module that a path from module `here` names (`here` may end in
    inline modules, which are their file's)."""
    path = [] if root == "crate" else list(here)
    if root == "super":
        path.pop()
    segs = list(rest)
    while segs and segs[0] == "super":
        path.pop()
        segs.pop(0)
    while path and tuple(path) not in known:
        path.pop()  # an inline module: its file's
    best = tuple(path)
    for s in segs:
        path.append(s)
        if tuple(path) not in known:
            break
        best = tuple(path)
    return best


def _code_lines(text: str) -> list[str]:
    """The file's lines without comments and string contents, each `use` statement on one
    line (a braced group may span several)."""
    code = "\n".join(_STRING.sub('""', _COMMENT.sub("", raw)) for raw in text.splitlines())
    return _USE.sub(lambda m: " ".join(m.group(0).split()), code).splitlines()


def references(src: Path) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    """Module -> the other modules of its crate it references."""
    mods = modules(src)
    known = set(mods)
    out: dict[tuple[str, ...], set] = {m: set() for m in mods}
    for mod, f in mods.items():
        inline: list[tuple[str, int, bool]] = []  # (name, brace depth it opened at, a test's)
        depth = 0
        previous = ""
        for line in _code_lines(f.read_text()):
            m = _INLINE_MOD.match(line)
            if m:
                inline.append((m.group(1), depth, previous.strip() == "#[cfg(test)]"))
            if line.strip():
                previous = line
            here = mod + tuple(n for n, _, _ in inline)
            if any(test for _, _, test in inline):
                depth += line.count("{") - line.count("}")
                while inline and depth <= inline[-1][1]:
                    inline.pop()
                continue
            targets = []
            for g in _PATH.finditer(line):
                target = _resolve(known, here, g.group(1), [s for s in g.group(2).split("::") if s])
                if g.group(3) is None:
                    targets.append(target)
                    continue
                # A group: each child module it names, and the prefix for its own items.
                for item in g.group(4).split(","):
                    seg = item.strip().split("::")[0].split(" ")[0]
                    if seg and (*target, seg) in known:
                        targets.append((*target, seg))
                    elif seg:
                        targets.append(target)
            # A path relative to the module itself (`event::run()`, `use event::X`): a
            # child's name (or, in the crate's root, a top-level module's).
            for g in _BARE.finditer(line):
                if (*mod, g.group(1)) in known:
                    targets.append((*mod, g.group(1)))
            out[mod].update(t for t in targets if t != mod)
            depth += line.count("{") - line.count("}")
            while inline and depth <= inline[-1][1]:
                inline.pop()
    return out


def cycles(graph: dict) -> list[list]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on: set = set()
    found = []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _name(m: tuple[str, ...]) -> str:
    return "::".join(("crate", *m))


@pytest.mark.parametrize("crate", sorted(p.name for p in CRATES.iterdir() if (p / "src").is_dir()))
def test_no_crate_has_an_import_circle(crate):
    graph = references(CRATES / crate / "src")
    found = cycles(graph)
    assert found == [], f"{crate}: modules that reference each other in a circle: " + "; ".join(
        " <-> ".join(_name(m) for m in c) for c in found
    )


def test_the_checker_finds_a_circle_and_its_parts(tmp_path):
    src = tmp_path / "src"
    (src / "serve").mkdir(parents=True)
    (src / "lib.rs").write_text("pub mod args;\npub mod record;\npub mod serve;\n")
    (src / "args.rs").write_text("use crate::record::Transport;\n")
    (src / "record.rs").write_text("pub enum Transport {}\n")
    (src / "serve" / "mod.rs").write_text(
        "mod event;\nmod stack;\npub fn go() { event::run() }\n"
        "#[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::args;\n}\n"
    )
    (src / "serve" / "event.rs").write_text("use super::{stack::Stack, go};\n")
    (src / "serve" / "stack.rs").write_text("pub trait Stack {}\n")
    (src / "serve" / "tracked.rs").write_text("use super::{\n    stack,\n    event::Event,\n};\n")
    graph = references(src)
    assert graph[("args",)] == {("record",)}
    assert graph[("serve", "event")] == {("serve",), ("serve", "stack")}
    # A group naming only child modules is no reference to the parent.
    assert graph[("serve", "tracked")] == {("serve", "stack"), ("serve", "event")}
    # `mod stack;` is a declaration, no reference; `event::run()` uses the child. The
    # unit tests' `use crate::args` counts for nothing.
    assert graph[("serve",)] == {("serve", "event")}
    assert cycles(graph) == [[("serve",), ("serve", "event")]]
    (src / "serve" / "event.rs").write_text("use super::stack::Stack;\n")
    assert cycles(references(src)) == []
    (src / "record.rs").write_text("use crate::args::Mode;\npub enum Transport {}\n")
    assert cycles(references(src)) == [[("args",), ("record",)]]
