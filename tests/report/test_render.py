"""Golden tests: the Markdown report and every CSV table of a deterministic store.

To regenerate the golden files after an intended change, run

    CHAINLAB_REGEN_GOLDEN=1 .venv/bin/pytest tests/report/test_render.py

and review the diff of tests/report/golden/ before committing it. CSVs are compared with a
relative tolerance of 1e-9 on numbers (exact on text); the Markdown exactly.
"""

import math
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

GOLDEN = Path(__file__).parent / "golden"
REGEN = os.environ.get("CHAINLAB_REGEN_GOLDEN") == "1"


def _regen(report: Path) -> None:
    if GOLDEN.exists():
        shutil.rmtree(GOLDEN)
    (GOLDEN / "tables").mkdir(parents=True)
    shutil.copy(report / "report.md", GOLDEN / "report.md")
    for csv in (report / "tables").glob("*.csv"):
        shutil.copy(csv, GOLDEN / "tables" / csv.name)


def test_markdown_matches_golden(golden_report):
    if REGEN:
        _regen(golden_report)
    expected = (GOLDEN / "report.md").read_text()
    actual = (golden_report / "report.md").read_text()
    assert actual == expected, (
        "report.md differs from tests/report/golden/report.md "
        "(CHAINLAB_REGEN_GOLDEN=1 regenerates it)"
    )


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) and math.isnan(b):
            return True
        return a == pytest.approx(b, rel=1e-9, abs=1e-12)
    return a == b


def test_every_csv_table_matches_golden(golden_report):
    actual = {p.name for p in (golden_report / "tables").glob("*.csv")}
    expected = {p.name for p in (GOLDEN / "tables").glob("*.csv")}
    assert actual == expected
    for name in sorted(expected):
        a = pd.read_csv(golden_report / "tables" / name, keep_default_na=False, na_values=[""])
        e = pd.read_csv(GOLDEN / "tables" / name, keep_default_na=False, na_values=[""])
        assert list(a.columns) == list(e.columns), name
        assert len(a) == len(e), name
        for col in e.columns:
            for i, (x, y) in enumerate(zip(a[col], e[col], strict=True)):
                assert _same(x, y), f"{name} row {i} column {col}: {x!r} != golden {y!r}"


def test_report_holds_the_expected_tables_and_sections(golden_report):
    md = (golden_report / "report.md").read_text()
    for heading in (
        "## Run",
        "## Findings",
        "## Scenario summary",
        "## Paired comparisons",
        "## Transport versus cryptography",
        "## Client/server decomposition",
        "## Capacity and cost",
        "## Comparison with the paper",
        "## How every number was computed",
    ):
        assert heading in md
    assert "handshake_timeout" in md  # the failed scenario is shown with its cause
    assert "**Reasonable** ≤ 1.5×" in md  # thresholds are printed
    tables = {p.stem for p in (golden_report / "tables").glob("*.csv")}
    for t in (
        "scenarios",
        "failures",
        "baseline_multipliers",
        "strategy_matrix",
        "placement_classes",
        "table7_groups",
        "pairs_kex",
        "pairs_depth",
        "correlations",
        "counterexamples",
        "decomposition",
        "capacity",
        "cost",
        "service_classes",
        "paper_scenarios",
        "metadata",
        "settings",
    ):
        assert t in tables
    figures = {p.name for p in (golden_report / "figures").iterdir()}
    for f in (
        "mean_latency",
        "p95_latency",
        "plausibility",
        "cpu_loglog",
        "infra_multiplier",
        "service_classes",
        "pairs_kex",
        "bytes_vs_latency",
    ):
        assert f"{f}.png" in figures and f"{f}.svg" in figures
