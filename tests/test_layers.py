"""Imports point down the architecture (ARCHITECTURE.md): a module imports only from its own
layer or a lower one. Every import counts, at module level or deferred inside a function."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "chainlab"

# Lowest first. The first part of a module's name below chainlab/ decides its layer.
LAYERS = (
    {"errors", "schema", "stats", "processes", "engine", "machine", "__init__"},
    {"network"},
    {"campaign"},
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
