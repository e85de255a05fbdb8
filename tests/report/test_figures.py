"""Figure functions: what they draw for a full store, what they skip for a minimal one."""

import matplotlib.pyplot as plt
import pytest

from chainlab.analysis.analyze import analyze
from chainlab.analysis.families import PLACEMENT_COLOURS
from chainlab.analysis.synthetic import SyntheticScenario, build_store
from chainlab.report import figures as F


@pytest.fixture(scope="module")
def golden_analysis(golden_store):
    return analyze(golden_store)


def test_every_figure_draws_for_the_golden_store(golden_analysis):
    for name, (fn, _title) in F.FIGURES.items():
        fig = fn(golden_analysis)
        assert fig is not None, name
        assert fig.axes, name
        plt.close(fig)


def test_bars_use_class_colours_and_short_labels(golden_analysis):
    fig = F.fig_mean_latency(golden_analysis)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert "ML65 › ML65 › ML65\nX25519MLKEM768 · sends leaf+intermediates" in labels
    assert ax.get_xscale() == "log"
    colours = {tuple(round(c, 3) for c in p.get_facecolor()[:3]) for p in ax.patches}
    leaf = tuple(round(int(PLACEMENT_COLOURS["leaf"][i : i + 2], 16) / 255, 3) for i in (1, 3, 5))
    assert leaf in colours
    # the failed scenario is listed and marked, not drawn as a bar
    assert any("failed" in t.get_text() for t in ax.texts)
    plt.close(fig)


def test_pairs_figure_per_axis(golden_analysis):
    for axis in ("kex", "depth", "leaf_alg"):
        fig = F.fig_pairs(golden_analysis, axis)
        assert fig is not None and len(fig.axes) == 2
        plt.close(fig)
    assert F.fig_pairs(golden_analysis, "network") is None


def test_single_scenario_store_skips_what_needs_a_baseline(tmp_path):
    p = build_store(tmp_path / "one.duckdb", [SyntheticScenario(n=20)])
    a = analyze(p)
    assert F.fig_plausibility(a) is None
    assert F.fig_strategy_heatmap(a) is None
    assert F.fig_infra_multiplier(a) is None
    assert F.fig_bytes_vs_latency(a) is None  # one point is no scatter
    fig = F.fig_mean_latency(a)
    assert fig is not None
    plt.close(fig)
