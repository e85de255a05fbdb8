"""docs/bad-input.md lists every class of bad input a test checks chainlab refuses, generated
from the tests themselves so the count is visible and never typed in by hand (issue #39):
each case of a Python test marked `bad_input` (a campaign, a store, an option, a file), and
each engine test whose name says it refuses input. Regenerate with
`CHAINLAB_REGEN_DOC=1 .venv/bin/python -m pytest tests/test_bad_input_doc.py`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "bad-input.md"
# The floor: classes across the command line and the engines.
AT_LEAST = 100
# An engine test of refused input: `#[test]` on a function whose name says so.
ENGINE_TEST = re.compile(r"#\[test\]\s*\n\s*fn ([a-z0-9_]+)\(")
SAYS_REFUSED = re.compile(r"bad|refuse|one_line|unparsable|is_rejected")
# Faults of a peer, the network or a chain, not input (their names say "refused" of those).
NOT_INPUT = re.compile(r"connect_refused|killed|rejections|sent_checked|wrong_root")


def python_cases() -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "bad_input",
         "-p", "no:cacheprovider", "tests"],
        capture_output=True, text=True, cwd=REPO, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return [line for line in out.stdout.splitlines() if "::" in line]


def engine_cases() -> list[tuple[str, str]]:
    cases = []
    for f in sorted((REPO / "engine" / "crates").glob("*/tests/*.rs")):
        for name in ENGINE_TEST.findall(f.read_text()):
            if SAYS_REFUSED.search(name) and not NOT_INPUT.search(name):
                cases.append((str(f.relative_to(REPO)), name))
    return cases


def cell(text: str) -> str:
    """A test id as a table cell: its pipes escaped, its line breaks shown."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", "\\n").replace("<", "&lt;")


def generate() -> tuple[str, int]:
    py, rs = python_cases(), engine_cases()
    lines = [
        "# Bad input chainlab refuses",
        "",
        "Generated from the tests by `tests/test_bad_input_doc.py` (never edited by hand): every",
        "case of a Python test marked `bad_input` and every engine test whose name says it refuses",
        "input. Each is a class of mistake a user can make (a value, a key, a file, a store, an",
        "option), checked to be refused with a message naming what is wrong and what is allowed",
        "(one line and exit status 2 where the test runs the command, nothing written where it",
        "could be); the two fuzz tests (`test_fuzz.py`, `test_engine_fuzz.py`) stand for every",
        "mutation Hypothesis tries. Engine tests each check several inputs.",
        "",
        f"**{len(py) + len(rs)} classes**: {len(py)} through the `chainlab` command line and its "
        f"files, {len(rs)} engine tests.",
        "",
        "## The command line, campaign files and stores",
        "",
        "| # | test file | test | case |",
        "|---|---|---|---|",
    ]
    for i, node in enumerate(py, 1):
        path, rest = node.split("::", 1)
        name, _, case = rest.partition("[")
        lines.append(f"| {i} | {cell(path)} | {cell(name)} | {cell(case.removesuffix(']'))} |")
    lines += ["", "## The engines", "", "| # | test file | test |", "|---|---|---|"]
    for i, (path, name) in enumerate(rs, len(py) + 1):
        lines.append(f"| {i} | {cell(path)} | {cell(name)} |")
    return "\n".join(lines) + "\n", len(py) + len(rs)


def test_the_bad_input_table_is_the_tests_and_counts_at_least_a_hundred():
    text, count = generate()
    if os.environ.get("CHAINLAB_REGEN_DOC"):
        DOC.write_text(text)
    assert count >= AT_LEAST, count
    assert DOC.read_text() == text, (
        "docs/bad-input.md is stale: CHAINLAB_REGEN_DOC=1 .venv/bin/python -m pytest "
        "tests/test_bad_input_doc.py"
    )
