"""ARCHITECTURE.md's recipes ("Where new code goes") match the code: each recipe names the
tests that prove it, every file and folder the section names exists, the `Axis` fields the
axis recipe names are fields of `Axis`, and the section recipe's decorator takes the
arguments it describes."""

from __future__ import annotations

import dataclasses
import inspect
import re
from pathlib import Path

from chainlab.axes.axis import Axis
from chainlab.axes.handshake import Handshake
from chainlab.report.sections.registry import section

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / "ARCHITECTURE.md").read_text()
# Each recipe (its bullet's bold title) -> the tests that prove it.
RECIPES = {
    "A campaign axis": ("tests/campaign/test_axes.py", "tests/campaign/test_axis_keys.py"),
    "A method": ("tests/test_methods_citations.py",),
    "A report section": ("tests/analysis/test_registry.py",),
    "A TLS stack": ("tests/campaign/test_stacks.py",),
    "An engine's integration tests": ("tests/test_layers.py", "tests/test_engine_modules.py"),
}
# Where a path the recipes name may be relative to.
BASES = [
    ROOT,
    ROOT / "chainlab",
    ROOT / "chainlab" / "campaign",
    *sorted((ROOT / "engine" / "crates").glob("*")),
    *sorted((ROOT / "engine" / "crates").glob("*/src")),
]


def recipes_section() -> str:
    start = TEXT.index("## Where new code goes")
    return TEXT[start : TEXT.index("\n## ", start + 1)]


def recipe(title: str) -> str:
    """The bullet of the recipe `title`, up to the next bullet."""
    text = recipes_section()
    start = text.index(f"- **{title}**")
    end = text.find("\n- **", start + 1)
    return text[start : end if end != -1 else None]


def test_each_recipe_names_the_tests_that_prove_it():
    for title, tests in RECIPES.items():
        body = " ".join(recipe(title).split())
        for t in tests:
            assert f"`{t}`" in body, f"recipe {title!r} does not name {t}"
            assert (ROOT / t).is_file(), f"recipe {title!r} names {t}, which does not exist"


def test_every_file_a_recipe_names_exists():
    missing = []
    for token in re.findall(r"`([^`\s]+)`", recipes_section()):
        if "<" in token or "(" in token or "::" in token:
            continue  # a pattern (`docs/methods/<topic>.md`) or code
        path = token.split("#", 1)[0]
        if not re.search(r"/|\.(py|rs|md|sql|toml)$", path):
            continue
        if not any(any(base.glob(path)) for base in BASES):
            missing.append(token)
    assert not missing, f"ARCHITECTURE.md's recipes name paths that do not exist: {missing}"


def test_the_axis_recipe_names_fields_of_axis():
    fields = {f.name for f in dataclasses.fields(Axis)}
    named = re.findall(r"\(`([a-z_]+)`[:)]", recipe("A campaign axis"))
    assert len(named) >= 10
    # The proof's own axes, declared in its test.
    proofs = {"fruit", "basket"}
    assert all(f'key="{p}"' in (ROOT / RECIPES["A campaign axis"][0]).read_text() for p in proofs)
    unknown = [n for n in named if n not in fields | proofs]
    assert not unknown, f"the axis recipe names {unknown}, which are not Axis fields"
    # Every callable an axis may carry is in the recipe, so a new one is documented.
    callables = {
        f.name
        for f in dataclasses.fields(Axis)
        if "Callable" in str(f.type) and f.name not in ("store", "id_part", "id_read")
    }
    body = recipe("A campaign axis")
    assert not [c for c in callables if f"`{c}`" not in body]
    assert "`Handshake`" in body and Handshake.__module__ == "chainlab.axes.handshake"


def test_the_section_recipe_describes_the_decorator():
    body = recipe("A report section")
    params = inspect.signature(section).parameters
    for arg in re.findall(r"@section\(rank, (\w+)=", body):
        assert arg in params, f"@section takes no {arg!r}"
    assert "rank" in params
