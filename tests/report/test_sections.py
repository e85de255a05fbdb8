"""Sections join the report by registering (`@section`); the report opens with the answers to
the campaign that ran, links each to its section, and keeps run metadata below."""

import re

import pytest
from synthetic import SyntheticScenario, build_store

from chainlab.report import build_report, sections
from chainlab.report.sections.registry import registered

from .conftest import scenario


def anchors(md: str) -> list[str]:
    """The top-level sections of a report.md, in order."""
    return re.findall(r'<a id="([^"]+)"></a>\n\n## ', md)


def test_every_section_module_is_registered_under_its_own_name():
    names = {r.anchor for r in sections.order()}
    assert {"answers", "findings", "run", "methods", "load", "quic", "stacks"} <= names
    assert "projection" not in names  # a subsection of networks, not a section
    ranks = [r.rank for r in registered()]
    assert ranks == sorted(ranks)


def test_the_report_opens_with_answers_and_ends_with_run_and_methods(golden_report):
    md = (golden_report / "report.md").read_text()
    order = anchors(md)
    assert order[0] == "answers" and order[-2:] == ["run", "methods"]
    # Each section's anchor is its module's name, so the answers' links resolve.
    assert set(order) <= {r.anchor for r in registered()}
    answers = md.split('<a id="answers"></a>')[1].split('<a id="findings"></a>')[0]
    assert "| [Findings](#findings) |" in answers
    # The table of contents is nested: subsections (pairs along each axis) under theirs.
    assert "\n- [Paired comparisons](#pairs)\n  - [Along leaf algorithm](#pairs-leaf_alg)" in md
    assert '<a id="pairs-leaf_alg"></a>' in md


@pytest.fixture(scope="module")
def lever_report(tmp_path_factory):
    """A campaign of one lever (certificate compression), none of the placement questions."""
    d = tmp_path_factory.mktemp("lever")
    store = build_store(
        d / "lever.duckdb",
        [
            scenario(1.0, 0.5, 0.5, bytes_read=16000),
            scenario(0.9, 0.55, 0.52, bytes_read=12000, cert_compression="zlib"),
        ],
    )
    return (build_report(store, d / "report") / "report.md").read_text()


def test_a_lever_campaign_answers_its_lever_not_the_placement_questions(lever_report):
    order = anchors(lever_report)
    assert order[0] == "answers"
    assert "findings" not in order  # every placement question is 'not testable' here
    answers = lever_report.split('<a id="answers"></a>')[1].split("CSV: `tables/answers.csv`")[0]
    assert "Does compression pay for" in answers
    assert "[Certificate compression, judged](#compression)" in answers
    assert re.search(r"latency × [0-9.]+ \[[0-9.]+, [0-9.]+\]", answers), answers
    assert "not testable" not in answers


def test_a_store_of_one_scenario_answers_its_own_figures_and_no_comparison(tmp_path):
    """One scenario: no placement question is testable, no lever has a twin; the sections
    that hold a figure of it still answer (its transport, CPU, capacity)."""
    store = build_store(tmp_path / "one.duckdb", [SyntheticScenario(n=20)])
    md = (build_report(store, tmp_path / "r") / "report.md").read_text()
    answers = md.split('<a id="answers"></a>')[1].split("<a id=")[0]
    assert "[Timing, transport and chain exposure](#transport)" in answers
    assert "[Capacity and cost](#capacity)" in answers
    for comparison in ("fastest", "Which single change", "baseline", "Findings"):
        assert comparison not in answers, answers


# Sections whose results another section's answers carry, or that hold no result.
NO_HEADLINE = {
    "answers": "the answers themselves",
    "placement": "the findings answer the placement study's questions",
    "correlations": "the findings answer transport versus cryptography",
    "run": "the run's metadata, not a result",
    "methods": "how the numbers are made, not a result",
}


def test_every_section_with_a_result_answers():
    missing = {r.anchor for r in registered() if r.headline is None}
    assert missing == set(NO_HEADLINE), missing - set(NO_HEADLINE)


def test_an_answer_from_unlike_scenarios_says_what_it_mixes(tmp_path):
    """Full and resumed handshakes: an answer drawn from both says it mixes them."""
    store = build_store(
        tmp_path / "two.duckdb",
        [scenario(1.0, 0.5, 0.5), scenario(0.4, 0.1, 0.1, handshake_mode="resumed")],
    )
    md = (build_report(store, tmp_path / "r") / "report.md").read_text()
    answers = md.split('<a id="answers"></a>')[1].split("CSV: `tables/answers.csv`")[0]
    line = next(x for x in answers.splitlines() if "fastest" in x)
    assert "(mixes handshake modes full, resumed)" in line, line


def test_only_the_sections_whose_data_the_store_holds_are_built_and_their_analyses_run(
    tmp_path, caplog
):
    """A compression campaign: the sections of axes it never set (QUIC, MTC, stacks,
    rollout, ...) are not built, none of their analyses runs, and the debug log says which
    sections were left out and why, and which analyses ran."""
    from chainlab.analysis.analyze import analyze

    store = build_store(
        tmp_path / "lever.duckdb",
        [
            scenario(1.0, 0.5, 0.5, bytes_read=16000),
            scenario(0.9, 0.55, 0.52, bytes_read=12000, cert_compression="zlib"),
        ],
    )
    a = analyze(store)
    with caplog.at_level("DEBUG", logger="chainlab.report"):
        doc = sections.build(a, lambda item, fig: None)
    built = {s.anchor for s in doc.sections}
    assert "compression" in built
    assert not built & {"quic", "mtc", "stacks", "interop", "rollout", "composite", "probe"}
    for analysis in ("compression", "compression_verdicts", "summary"):
        assert analysis in a.computed
    for analysis in ("quic", "mtc", "stacks", "interop", "rollout_shares", "trust_anchors"):
        assert analysis not in a.computed, analysis
    log = caplog.text
    assert "section quic not built: the store holds no data of it (it needs: a scenario " \
        "with transport other than tcp)" in log  # fmt: skip
    assert "section compression not built" not in log
    ran = next(line for line in log.splitlines() if "analyses computed" in line)
    assert "compression_verdicts" in ran and " quic," not in ran


def test_a_section_applies_where_some_scenario_or_target_sets_its_axis(tmp_path):
    """StoreData.uses: an axis counts as used where one scenario holds another value than
    its default; the default in every scenario is no use of it."""
    from chainlab.analysis.load import load_store

    store = build_store(
        tmp_path / "s.duckdb",
        [
            scenario(1.0, 0.5, 0.5),
            scenario(0.9, 0.5, 0.5, handshake_mode="resumed", root_alg="SLH-DSA-SHA2-128s"),
        ],
    )
    data = load_store(store)
    assert data.uses("handshake_mode") and data.uses("cert_compression", "handshake_mode")
    assert not data.uses("cert_compression") and not data.uses("transport", "stack")
    assert data.algorithms() == {"ML-DSA-65", "SLH-DSA-SHA2-128s"}
