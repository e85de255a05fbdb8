"""Every citation of docs/methods/ resolves: code, docs, campaigns and the report cite a
method as `docs/methods/<topic>.md#<anchor>` (further anchors of the same file as `, #<anchor>`),
the report's methods section as `<topic>.md#<anchor>`, the topic files each other by link.
An anchor is a `<a id="..."></a>` line of its file; numbers (`methods.md §13`) are gone."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
METHODS = REPO / "docs" / "methods"

CITATION = re.compile(r"docs/methods/([\w-]+)\.md((?:#[\w-]+)(?:, #[\w-]+)*)?")
SHORT = re.compile(r"\b([a-z][\w-]*)\.md#([\w-]+)")
LINK = re.compile(r"\]\(([\w-]+\.md)?(?:#([\w-]+))?\)")
ANCHOR = re.compile(r'^<a id="([\w-]+)"></a>$', re.M)
OLD = re.compile(r"methods\.md|methods/?\s*§\d")
# Files that hold text (not stores, keys, images).
_TEXT = {".py", ".rs", ".md", ".toml", ".sql", ".sh", ".txt", ".cfg", ""}


def anchors(methods: Path) -> dict[str, set[str]]:
    """Topic file name -> its anchors."""
    return {p.name: set(ANCHOR.findall(p.read_text())) for p in methods.glob("*.md")}


def problems(text: str, where: str, known: dict[str, set[str]], short: bool = False) -> list:
    """The citations in `text` that resolve to nothing (and numbered ones)."""
    out = []
    for m in CITATION.finditer(text):
        name = f"{m.group(1)}.md"
        for anchor in re.findall(r"#([\w-]+)", m.group(2) or ""):
            if anchor not in known.get(name, ()):
                out.append(f"{where}: {m.group(0)}: no anchor #{anchor} in docs/methods/{name}")
        if name not in known:
            out.append(f"{where}: {m.group(0)}: no docs/methods/{name}")
    if short:
        for m in SHORT.finditer(text):
            if m.group(2) not in known.get(f"{m.group(1)}.md", ()):
                out.append(f"{where}: {m.group(0)} resolves to nothing in docs/methods/")
    for m in OLD.finditer(text):
        out.append(f"{where}: {m.group(0)!r}: cite docs/methods/<topic>.md#<anchor>")
    return out


def tracked_texts() -> list[Path]:
    names = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [
        REPO / n
        for n in names
        if Path(n).suffix in _TEXT and not n.startswith("tests/data/") and (REPO / n).is_file()
    ]


def test_every_citation_of_a_method_resolves():
    known = anchors(METHODS)
    found = []
    for path in tracked_texts():
        rel = str(path.relative_to(REPO))
        if rel == "tests/test_methods_citations.py":
            continue
        short = rel == "chainlab/report/sections/methods.py"
        found += problems(path.read_text(errors="replace"), rel, known, short)
    assert found == [], "\n".join(found)


def test_the_topic_files_links_resolve_and_anchors_are_unique():
    known = anchors(METHODS)
    found = []
    seen: dict[str, str] = {}
    for name, names in known.items():
        for a in names:
            if a in seen:
                found.append(f"#{a} in both {seen[a]} and {name}")
            seen[a] = name
        for m in LINK.finditer((METHODS / name).read_text()):
            target = m.group(1) or name
            if target not in known:
                found.append(f"{name}: link to {target}, no such topic")
            elif m.group(2) and m.group(2) not in known[target]:
                found.append(f"{name}: link to {target}#{m.group(2)}, no such anchor")
    assert found == [], "\n".join(found)
    assert len(seen) >= 24  # every method of the numbered file it replaced has its name


def test_the_checker_finds_what_resolves_to_nothing():
    known = {"capacity.md": {"capacity-under-load"}}
    text = (
        "ok docs/methods/capacity.md#capacity-under-load; bad docs/methods/capacity.md#gone, "
        "#capacity-under-load; docs/methods/nope.md; docs/methods.md §13; load.md#x"
    )
    got = problems(text, "f", known, short=True)
    assert got == [
        "f: docs/methods/capacity.md#gone, #capacity-under-load: no anchor #gone in "
        "docs/methods/capacity.md",
        "f: docs/methods/nope.md: no docs/methods/nope.md",
        "f: capacity.md#gone resolves to nothing in docs/methods/",
        "f: load.md#x resolves to nothing in docs/methods/",
        "f: 'methods.md': cite docs/methods/<topic>.md#<anchor>",
    ]
