"""Golden tests: the Markdown report and every CSV table of a deterministic store.

To regenerate the golden files after an intended change, run

    CHAINLAB_REGEN_GOLDEN=1 .venv/bin/pytest tests/report/test_render.py

and review the diff of tests/report/golden/ and tests/report/golden_network/ before
committing it. CSVs are compared with a relative tolerance of 1e-9 on numbers (exact on
text); the Markdown exactly. golden/ is a loopback-only store's whole report (which has no
network section); golden_network/ the emulated-networks section and the tables that change
with networks of tests/synthetic.py's network_example's store.
"""

import math
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

GOLDEN = Path(__file__).parent / "golden"
GOLDEN_NETWORK = Path(__file__).parent / "golden_network"
# The network store's tables kept as golden files: the network section's own and those
# whose rows or columns the network axis changes.
NETWORK_TABLES = (
    "network_profiles",
    "network_scenarios",
    "network_projection",
    "network_reference_projection",
    "baseline_multipliers",
    "pairs_network",
    "placement_classes",
)
REGEN = os.environ.get("CHAINLAB_REGEN_GOLDEN") == "1"
# The one row that describes the environment the report is made in, not the store: its
# value is checked for shape, then left out of the comparison.
THIS_ENVIRONMENT = "libraries (this report)"


def _stable(md: str) -> str:
    out = []
    for line in md.splitlines(keepends=True):
        if line.startswith(f"| {THIS_ENVIRONMENT} |"):
            assert "numpy " in line and "scipy " in line and "duckdb " in line, line
            line = f"| {THIS_ENVIRONMENT} | (this environment) |\n"
        out.append(line)
    return "".join(out)


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
    expected = _stable((GOLDEN / "report.md").read_text())
    actual = _stable((golden_report / "report.md").read_text())
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


def _same_csv(actual: Path, expected: Path) -> None:
    name = expected.name
    a = pd.read_csv(actual, keep_default_na=False, na_values=[""])
    e = pd.read_csv(expected, keep_default_na=False, na_values=[""])
    assert list(a.columns) == list(e.columns), name
    assert len(a) == len(e), name
    if "field" in e.columns:  # the metadata table: see THIS_ENVIRONMENT
        a, e = (t[t["field"] != THIS_ENVIRONMENT].reset_index(drop=True) for t in (a, e))
    for col in e.columns:
        for i, (x, y) in enumerate(zip(a[col], e[col], strict=True)):
            assert _same(x, y), f"{name} row {i} column {col}: {x!r} != golden {y!r}"


def test_every_csv_table_matches_golden(golden_report):
    actual = {p.name for p in (golden_report / "tables").glob("*.csv")}
    expected = {p.name for p in (GOLDEN / "tables").glob("*.csv")}
    assert actual == expected
    assert not any(n.startswith("network_") for n in actual)  # loopback only: no section
    for name in sorted(expected):
        _same_csv(golden_report / "tables" / name, GOLDEN / "tables" / name)


def network_section(md: str) -> str:
    """The emulated-networks section of a report.md, up to the next top-level section's anchor
    (a subsection's anchor is followed by a `###` heading, a section's by `##`)."""
    import re

    start = md.index('<a id="networks"></a>')
    end = re.compile(r'<a id="[^"]+"></a>\n\n## ').search(md, start + 1).start()
    return md[start:end]


def test_network_section_and_tables_match_golden(network_report):
    section = network_section((network_report / "report.md").read_text())
    tables = network_report / "tables"
    if REGEN:
        if GOLDEN_NETWORK.exists():
            shutil.rmtree(GOLDEN_NETWORK)
        (GOLDEN_NETWORK / "tables").mkdir(parents=True)
        (GOLDEN_NETWORK / "networks.md").write_text(section)
        for name in NETWORK_TABLES:
            shutil.copy(tables / f"{name}.csv", GOLDEN_NETWORK / "tables")
    assert section == (GOLDEN_NETWORK / "networks.md").read_text(), (
        "the network section differs from tests/report/golden_network/networks.md "
        "(CHAINLAB_REGEN_GOLDEN=1 regenerates it)"
    )
    for name in NETWORK_TABLES:
        _same_csv(tables / f"{name}.csv", GOLDEN_NETWORK / "tables" / f"{name}.csv")


def test_network_report_states_its_rules_and_flags(network_report):
    md = (network_report / "report.md").read_text()
    section = network_section(md)
    assert "## Emulated networks" in section and "### Projection from loopback" in section
    assert "MSS = MTU − 52" in section
    lines = section.splitlines()
    # the flagged profile is flagged in its table row and named with what it means
    flagged = next(line for line in lines if line.startswith("| `net100`"))
    assert "**FLAGGED**" in flagged and "+8.00 %" in flagged
    fine = next(line for line in lines if line.startswith("| `net20` "))
    assert "**FLAGGED**" not in fine and "| ok |" in fine
    assert "**Flagged: `net100`.**" in section
    assert "Not flagged although the RTT is more than 5 % off: `lan` (0.180 ms over 1.00 ms)" in (
        section
    )
    assert "Not calibrated, so nothing confirms that the link behaved as configured: `edge`." in (
        section
    )
    # like with like: every cross-scenario section says which network it uses
    assert md.count("Like with like: this section uses only the 3 scenario(s)") == 6
    assert "| relative to |" in md
    assert "| network |" in md  # the scenario table names each scenario's network


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


def test_a_report_at_another_confidence_level_says_so(golden_store, tmp_path, figures):
    """Captions and figure labels carry the configured level; none says 95 % at 90 %."""
    from chainlab.report import build_report

    out = build_report(golden_store, tmp_path / "at90", confidence_level=0.9)
    md = (out / "report.md").read_text()
    assert "error bars are 90 % intervals" in md
    assert "Scenario / baseline for each metric, 90 % intervals." in md
    assert "95 %" not in md
    svg = (out / "figures" / "mean_latency.svg").read_text()
    assert "bars: 90 % CI" in svg and "95 %" not in svg


def test_a_report_stopped_while_it_was_written_lands_nowhere(golden_store, tmp_path):
    """An interrupt whose KeyboardInterrupt Python dropped (raised inside a finaliser, printed
    and ignored) still stops the report: `stopped()` is asked once the files are written,
    before they move into place, and nothing half-built or whole is left."""
    from chainlab.report import build_report

    out = tmp_path / "r"
    with pytest.raises(KeyboardInterrupt):
        build_report(golden_store, out, stopped=lambda: True)
    assert not out.exists()
    assert list(tmp_path.glob(".r.partial-*")) == []
    assert (build_report(golden_store, out, stopped=lambda: False) / "index.html").exists()
