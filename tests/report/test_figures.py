"""Figure functions: what they draw for a full store, what they skip for a minimal one."""

import matplotlib
import matplotlib.pyplot as plt
import pytest
from synthetic import SyntheticScenario, build_store

from chainlab.analysis.analyze import analyze
from chainlab.analysis.families import PLACEMENT_COLOURS
from chainlab.report import figures as F


@pytest.fixture(scope="module")
def golden_analysis(golden_store):
    return analyze(golden_store)


NETWORK_FIGURES = ("network_rtt", "network_loss")
# Drawn only for stores with load steps.
LOAD_FIGURES = ("load_latency", "load_throughput")
# Drawn only for stores with measured primitives (the kept version-3 store has them).
MODEL_FIGURES = ("cost_breakdown",)
# Drawn only for stores with resumption mixes (tests/runner/test_resumption_run.py draws it).
RESUMPTION_FIGURES = ("resumption_mix",)
# Drawn only for stores with client certificates (tests/runner/test_levers_run.py draws it).
LEVER_FIGURES = ("client_auth_split",)


def draw(name, a, *args):
    return F.REGISTRY[name].draw(a, *args)


def test_every_figure_draws_for_the_golden_store(golden_analysis):
    for name, entry in F.REGISTRY.items():
        excluded = (*NETWORK_FIGURES, *LOAD_FIGURES, *MODEL_FIGURES, *RESUMPTION_FIGURES)
        if name in (*excluded, *LEVER_FIGURES):
            continue
        args = ("kex",) if name == "pairs" else ()
        fig = entry.draw(golden_analysis, *args)
        assert fig is not None, name
        assert fig.axes, name
        assert entry.title_for(*args), name
        plt.close(fig)


def test_the_cost_breakdown_draws_for_a_store_with_primitives(tmp_path):
    import shutil
    from pathlib import Path

    kept = Path(__file__).parents[1] / "data" / "stores" / "v3-tiny.duckdb"
    shutil.copy(kept, tmp_path / kept.name)
    a = analyze(tmp_path / kept.name)
    assert len(a.cost_model) == 3
    fig = draw("cost_breakdown", a)
    assert [ax.get_title() for ax in fig.axes] == ["server", "client"]
    labels = {t.get_text() for t in fig.legends[0].get_texts()}
    assert {"sign", "key exchange", "residual", "measured mean", "predicted"} <= labels
    plt.close(fig)


def test_the_registry_names_each_figure_once_with_its_title():
    assert F.REGISTRY["mean_latency"].title == "Mean handshake latency by scenario"
    assert F.REGISTRY["pairs"].title_for("kex") == "Paired comparisons: key exchange"
    with pytest.raises(ValueError, match="registered twice"):
        F.registry.figure("mean_latency", "again")(lambda a: None)


def test_axis_labels_follow_the_confidence_level(golden_analysis):
    """The report's level, not a typed-in 95 %."""

    at90 = golden_analysis.with_config(golden_analysis.config.replace(confidence_level=0.9))
    fig = draw("mean_latency", at90)
    assert "bars: 90 % CI" in fig.axes[0].get_xlabel()
    plt.close(fig)


def test_bars_use_class_colours_and_short_labels(golden_analysis):
    fig = draw("mean_latency", golden_analysis)
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
        fig = draw("pairs", golden_analysis, axis)
        assert fig is not None and len(fig.axes) == 2
        plt.close(fig)
    assert draw("pairs", golden_analysis, "network") is None


def test_single_scenario_store_skips_what_needs_a_baseline(tmp_path):
    p = build_store(tmp_path / "one.duckdb", [SyntheticScenario(n=20)])
    a = analyze(p)
    assert draw("plausibility", a) is None
    assert draw("strategy_matrix", a) is None
    assert draw("infra_multiplier", a) is None
    assert draw("bytes_vs_latency", a) is None  # one point is no scatter
    fig = draw("mean_latency", a)
    assert fig is not None
    plt.close(fig)


def _hex(colour: str) -> tuple:
    return tuple(round(int(colour[i : i + 2], 16) / 255, 3) for i in (1, 3, 5))


def test_network_figures_only_for_stores_with_emulated_networks(golden_analysis, network_store):
    for name in NETWORK_FIGURES:
        assert draw(name, golden_analysis) is None
    a = analyze(network_store)
    fig = draw("network_rtt", a)
    # one panel per placement class present, in the class colours
    assert [ax.get_title() for ax in fig.axes] == ["no SLH-DSA", "SLH-DSA in root only"]
    for ax, cls in zip(fig.axes, ("none", "root"), strict=True):
        colours = {
            tuple(round(c, 3) for c in matplotlib.colors.to_rgb(line.get_color()))
            for line in ax.get_lines()
            if line.get_marker() not in ("None", None, "") and line.get_mfc() != "none"
        }
        assert colours == {_hex(PLACEMENT_COLOURS[cls])}, cls
    # rings (open black circles) where most server flights exceeded the initial window:
    # B on net20, net20lossy and edge; C on net20
    rings = [
        line
        for ax in fig.axes
        for line in ax.get_lines()
        if line.get_mfc() == "none" and line.get_mec() == "black"
    ]
    assert sum(len(line.get_xdata()) for line in rings) == 4
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert "100 ms\nnet100 (flagged)" in ticks
    plt.close(fig)
    fig = draw("network_loss", a)
    # only the families whose loss varies: 0 % (net20) and 2 % (net20lossy)
    for ax in fig.axes:
        assert [t.get_text() for t in ax.get_xticklabels()] == ["0 %\nnet20", "2 %\nnet20lossy"]
    plt.close(fig)
