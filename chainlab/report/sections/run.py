"""The run: what produced this report, the store's run metadata and the analysis settings."""

from __future__ import annotations

import pandas as pd

from chainlab import __version__
from chainlab.report.builder import Builder, codes
from chainlab.report.document import Section
from chainlab.report.sections.registry import section


@section(900)
def build(b: Builder) -> Section:
    a = b.a
    s = Section("run", "Run")
    s.blocks.append(
        f"This report was produced by chainlab {__version__} from the store "
        f"`{a.data.path.name}`. It is generic over the campaign: everything below is "
        "computed from the store; nothing is copied from the paper except in the "
        "comparison section, which shows the paper's published values next to this "
        "store's."
    )
    s.blocks.append(a.baseline_note)
    md = pd.DataFrame(a.metadata, columns=["field", "value"])
    s.blocks.append(
        b.table(
            "metadata",
            "Run metadata",
            "From the store's runs table (one row per `chainlab run`; a resume adds a run).",
            md,
            [("field", list(md["field"])), ("value", list(md["value"]))],
        )
    )
    cfg = b.cfg
    settings = [
        ("baseline", str(cfg.baseline)),
        ("heavy_family", cfg.heavy_family),
        ("confidence_level", f"{cfg.confidence_level:g}"),
        ("bootstrap_resamples", str(cfg.bootstrap_resamples)),
        ("bootstrap_seed", str(cfg.bootstrap_seed)),
        ("plausibility", ", ".join(f"{k} ≤ {v:g}×" for k, v in cfg.plausibility.items())),
        ("cpu_regimes", ", ".join(f"{k} = {v:g}" for k, v in cfg.cpu_regimes.items())),
        ("price_per_vcpu_hour", f"{cfg.price_per_vcpu_hour:g} (cost units, illustrative)"),
        (
            "service_classes",
            ", ".join(f"{k} = {v:,.0f}/month" for k, v in cfg.service_classes.items()),
        ),
    ]
    st = pd.DataFrame(
        [(k, v, cfg.sources.get(k, "default")) for k, v in settings],
        columns=["setting", "value", "source"],
    )
    s.blocks.append(
        b.table(
            "settings",
            "Analysis settings",
            "The campaign file's `baseline` and `[analysis]` table, or the documented defaults "
            "(docs/methods/settings.md#baseline-and-analysis).",
            st,
            [
                ("setting", codes(st["setting"])),
                ("value", list(st["value"])),
                ("source", list(st["source"])),
            ],
        )
    )
    return s
