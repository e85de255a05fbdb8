"""How every number was computed (docs/methods/ in brief)."""

from __future__ import annotations

from chainlab.campaign.analysis_settings import PLAUSIBILITY_CLASSES
from chainlab.report.builder import Builder
from chainlab.report.document import Section
from chainlab.report.sections.networks import TOLERANCE_TEXT
from chainlab.report.sections.registry import section


@section(1000)
def build(b: Builder) -> Section:
    cfg = b.cfg
    s = Section("methods", "How every number was computed")
    items = [
        "**Samples** (statistics.md#which-samples-count): per scenario, the samples of its latest "
        "completed scenario "
        "run (or latest failed one); `warmup = false`; latency, bytes and CPU statistics "
        "use `outcome = 'ok'`; failures are counted by error category. Failed scenarios "
        "(status failed, or no successful handshake) are shown with their cause and "
        "excluded from all statistics.",
        f"**Means** (statistics.md#per-scenario-statistics): Student-t {cfg.confidence_level:g} "
        "interval from the SQL "
        "moments (DuckDB `avg`, `var_samp`).",
        "**Quantiles** (statistics.md#per-scenario-statistics): median, p95, p99 are nearest-rank "
        "order statistics "
        "x(⌈qn⌉); intervals are the distribution-free binomial order-statistic intervals "
        "(Conover 1999 §3.2); n/a when the sample is too small for a bound.",
        "**Ratios within a scenario** (statistics.md#per-scenario-statistics): server/client CPU "
        "and CPU over elapsed are "
        "ratios of paired means; log-scale delta-method interval with the sample "
        "covariance.",
        "**Ratios between scenarios** (statistics.md#ratios-between-scenarios): mean_a/mean_b with "
        "interval "
        "exp(log r ± z·√(se_a² + se_b²)), se = standard error of log(mean) "
        "(Casella & Berger §5.5.4). A scenario against itself is exactly 1.",
        "**Quantile ratios** (statistics.md#quantile-ratios): percentile interval of B = "
        f"{cfg.bootstrap_resamples} "
        "exact bootstrap replicates of each order statistic, drawn as "
        "x(⌈n·U⌉), U ~ Beta(k, n−k+1) (Hutson & Ernst 2000), seed "
        f"{cfg.bootstrap_seed}.",
        "**Statistics over scenarios** (statistics.md#over-several-scenarios): class "
        "means/medians, extra costs: B = "
        f"{cfg.bootstrap_resamples} Monte-Carlo draws of every scenario mean from its "
        "large-sample log-normal distribution; the statistic's 2.5/97.5 percentiles.",
        "**Correlations** (statistics.md#correlations): over scenario means; Pearson with Fisher z "
        "interval, "
        "Spearman with Fisher z and the Bonett-Wright (2000) standard error.",
        "**Classes, pairs, plausibility, regimes** (placement.md#classes-pairs-regimes): heavy "
        "family "
        f"{b.h}; pairs differ along exactly one axis; plausibility from the latency "
        f"multiplier with bounds {', '.join(f'{v:g}' for v in cfg.plausibility.values())}"
        f" ({', '.join(PLAUSIBILITY_CLASSES[:3])}; above: {PLAUSIBILITY_CLASSES[3]}).",
        "**Capacity and cost** (capacity.md#capacity-from-cpu): 1e9 / server CPU ns handshakes per "
        "core-second; "
        "× 3600 per vCPU-hour; cost = CPU-hours × price; all illustrative.",
        "**Comparison with the paper** (placement.md#paper-comparison): the paper's values as "
        "published, matched "
        "by id or structure.",
    ]
    if b.a.network is not None:
        items.append(
            "**Emulated networks** (networks.md#emulated-networks): profiles as configured and "
            "calibrated, the stored "
            f"{TOLERANCE_TEXT} flag; initial window = initcwnd × (MTU − 52); share of handshakes "
            "whose "
            "server bytes written exceed it, Wilson interval; predictions by "
            "chainlab.network.model from each scenario's loopback twin, ratio intervals by "
            "exact bootstrap of both medians; cross-scenario statistics on the reference "
            f"network `{b.a.reference_network}` only, multipliers against the "
            "baseline's counterpart on the same network."
        )
    s.blocks.append(
        "Names in parentheses are topics of docs/methods/ (file#anchor) in the chainlab "
        "repository, which gives each method in full with references."
    )
    s.blocks.append(items)
    return s
