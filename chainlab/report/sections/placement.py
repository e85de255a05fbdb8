"""Signature placement classes (exclusive, and the paper's Table 7 groups)."""

from __future__ import annotations

from chainlab.report.builder import Builder, ci, ints, nums
from chainlab.report.document import Section
from chainlab.report.sections.registry import placement_study, section


def class_cols(b: Builder, c, label_col="class_name"):
    """The columns of a class table (exclusive classes, or Table 7 groups)."""
    return [
        ("class", list(c[label_col])),
        ("n", ints(c["n_scenarios"])),
        ("mean ms", ci(c, "mean_ms")),
        ("median ms", ci(c, "median_ms")),
        ("min ms", nums(c["min_ms"])),
        ("max ms", nums(c["max_ms"])),
        ("mean latency ×", ci(c, "mean_latency_x")),
        ("median latency ×", ci(c, "median_latency_x")),
        ("mean bytes ×", ci(c, "mean_bytes_x")),
        ("mean server CPU ×", ci(c, "mean_server_cpu_x")),
        ("server CPU/elapsed", ci(c, "mean_server_over_elapsed")),
        ("client CPU/elapsed", ci(c, "mean_client_over_elapsed")),
    ]


@section(70, applies=placement_study)
def build(b: Builder) -> Section:
    a, s = b.a, Section("placement", "Signature placement classes")
    s.blocks.append(b.ref_note())
    if a.classes.empty:
        s.blocks.append("No successful scenario to classify.")
        return s
    s.blocks.append(
        f"Each scenario's class comes from where the heavy family ({b.h}, "
        f"`[analysis].heavy_family`) sits: in the leaf; else in an intermediate; else in "
        "the root only; else nowhere. Class statistics are over scenario means; their "
        "intervals propagate each scenario mean's uncertainty by Monte Carlo "
        f"(B = {b.cfg.bootstrap_resamples}, docs/methods/statistics.md#over-several-scenarios). "
        "Multipliers are "
        "relative to the baseline."
    )
    s.blocks.append(
        b.table(
            "placement_classes",
            "Placement classes (exclusive)",
            "Each successful scenario counted once.",
            a.classes,
            class_cols(b, a.classes),
        )
    )
    if len(a.table7):
        s.blocks.append(
            b.table(
                "table7_groups",
                "Placement groups as in the paper's Table 7",
                f"The paper's grouping overlaps: '{b.cls_name('intermediate_any')}' also "
                f"contains scenarios with {b.h} in the leaf.",
                a.table7,
                class_cols(b, a.table7),
            )
        )
    s.blocks.append(
        b.figure(
            "placement_classes",
            "Paper Figure 9.",
        )
    )
    return s
