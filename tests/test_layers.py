"""Imports point down the architecture (ARCHITECTURE.md): a module imports only from its own
layer or a lower one. Every import counts, at module level or deferred inside a function."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "chainlab"

# Lowest first. The first part of a module's name below chainlab/ decides its layer.
LAYERS = (
    {"errors", "schema", "stats", "processes", "engine", "machine", "environment", "__init__"},
    {"network"},
    {"axes"},
    {"campaign"},
    {"model"},
    {"store"},
    {"runner"},
    {"analysis"},
    {"report"},
    {"bench", "commands", "cli", "__main__"},
)
# The public entry point `chainlab.open()` opens a store (a deferred import, said so there).
EXCEPTIONS = {("__init__", "store")}


def layer_of(part: str) -> int:
    for rank, names in enumerate(LAYERS):
        if part in names:
            return rank
    raise AssertionError(f"chainlab/{part} is in no layer of tests/test_layers.py: add it")


def imported_parts(tree: ast.AST, package: Path):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = node.module.split(".")
            if names[0] != "chainlab":
                continue
            if len(names) > 1:
                yield node.lineno, names[1]
            else:  # from chainlab import x: x is a module, or __version__ (the root package)
                for alias in node.names:
                    is_module = (package / alias.name).is_dir() or (
                        package / f"{alias.name}.py"
                    ).is_file()
                    yield node.lineno, alias.name if is_module else "__init__"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names = alias.name.split(".")
                if names[0] == "chainlab" and len(names) > 1:
                    yield node.lineno, names[1]


def upward_imports(package: Path = PACKAGE) -> list[str]:
    found = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package)
        part = rel.parts[0].removesuffix(".py")
        for lineno, target in imported_parts(ast.parse(path.read_text()), package):
            if (part, target) in EXCEPTIONS:
                continue
            if layer_of(target) > layer_of(part):
                found.append(f"chainlab/{rel}:{lineno} ({part}) imports chainlab.{target}")
    return found


def test_imports_only_point_down():
    assert upward_imports() == []


def test_the_check_sees_an_upward_import(tmp_path):
    """The check itself works: a store module importing the analysis, deferred, is caught."""
    for part in ("store", "analysis"):
        (tmp_path / part).mkdir()
    (tmp_path / "store" / "bad.py").write_text("def f():\n    from chainlab.analysis import x\n")
    assert upward_imports(tmp_path) == ["chainlab/store/bad.py:2 (store) imports chainlab.analysis"]


def uncommented_deferred_imports(package: Path = PACKAGE) -> list[str]:
    """Imports inside a function without a comment saying why, on the lines between the
    previous statement (or the docstring) and the import; consecutive imports share one."""
    found = []
    for path in sorted(package.rglob("*.py")):
        lines = path.read_text().splitlines()
        tree = ast.parse("\n".join(lines))
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            prev_end = fn.lineno
            for node in ast.walk(fn):
                if node is fn or not hasattr(node, "lineno"):
                    continue
                if isinstance(node, ast.Import | ast.ImportFrom):
                    above = [
                        n.end_lineno
                        for n in ast.walk(fn)
                        if isinstance(n, ast.stmt)
                        and not isinstance(n, ast.Import | ast.ImportFrom)  # one group, one why
                        and n is not fn
                        and n.end_lineno < node.lineno
                    ]
                    start = max([prev_end, *above])
                    between = lines[start : node.lineno - 1]
                    if not any(line.strip().startswith("#") for line in between):
                        rel = path.relative_to(package.parent)
                        found.append(f"{rel}:{node.lineno}")
    return found


def test_every_deferred_import_says_why():
    assert uncommented_deferred_imports() == []


def test_the_deferred_import_check_finds_a_bare_one(tmp_path):
    pkg = tmp_path / "chainlab"
    pkg.mkdir()
    (pkg / "a.py").write_text(
        "def f():\n    import json\n\n\ndef g():\n    # Deferred: heavy.\n    import csv\n"
    )
    assert uncommented_deferred_imports(pkg) == ["chainlab/a.py:2"]


# No module over this many lines: a feature that grows one past it splits it (ARCHITECTURE.md).
MAX_MODULE_LINES = 600


def test_no_module_is_over_the_limit():
    """The Python package, the engine crates' sources and every test file, Python or Rust."""
    repo = PACKAGE.parent
    files = [
        *PACKAGE.rglob("*.py"),
        *(repo / "tests").rglob("*.py"),
        *(repo / "engine" / "crates").rglob("*.rs"),
    ]
    long = {
        str(p.relative_to(repo)): n
        for p in files
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}, f"split these modules (over {MAX_MODULE_LINES} lines): {long}"
