"""The report as a document model: sections of paragraphs, tables and figures, built from an
`Analysis`. Rendering to Markdown and HTML is in `render`; every table's raw numbers go to
CSV unchanged (full precision, intervals as `<name>_lo` / `<name>_hi` columns).

Paragraph text uses two inline marks only: `code` and **bold**.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from chainlab import __version__
from chainlab.analysis import families as fam
from chainlab.analysis.compare import AXES
from chainlab.analysis.network import EXCEED_MARK_SHARE, REFERENCE_PROFILES
from chainlab.analysis.paper import SOURCE
from chainlab.analysis.summary import SERVER_BOUND_ELAPSED_SHARE
from chainlab.campaign.analysis_settings import PLAUSIBILITY_CLASSES
from chainlab.report import format as f


class Code(str):
    """A table cell shown as code (scenario ids)."""


@dataclass
class Table:
    name: str  # CSV file stem under tables/
    title: str
    caption: str
    csv: pd.DataFrame
    headers: list[str]
    rows: list[list[str]]
    note: str = ""


@dataclass
class Figure:
    name: str  # file stem under figures/
    title: str
    caption: str
    number: int = 0
    png: str = ""  # relative path
    svg: str = ""  # relative path
    svg_text: str = ""


@dataclass
class Section:
    anchor: str
    title: str
    blocks: list = field(default_factory=list)  # str | Table | Figure


@dataclass
class Document:
    title: str
    sections: list[Section]
    tables: list[Table]
    figures: list[Figure]


# Rows shown in Markdown/HTML for the long counterexample table (the CSV has all).
COUNTEREXAMPLES_SHOWN = 10


def _ci(df: pd.DataFrame, col: str, digits: int = 3) -> list[str]:
    return [
        f.ci(e, lo, hi, digits)
        for e, lo, hi in zip(df[col], df[f"{col}_lo"], df[f"{col}_hi"], strict=True)
    ]


def _nums(values, digits=3) -> list[str]:
    return [f.num(v, digits) for v in values]


def _ints(values) -> list[str]:
    return [f.integer(v) for v in values]


def _codes(values) -> list[Code]:
    return [Code(v) if isinstance(v, str) and v else Code("") for v in values]


def _table(name, title, caption, csv, columns: list[tuple[str, list]], note="") -> Table:
    headers = [h for h, _ in columns]
    n = len(columns[0][1]) if columns else 0
    rows = [
        [str(c[1][i]) if not isinstance(c[1][i], Code) else c[1][i] for c in columns]
        for i in range(n)
    ]
    return Table(name, title, caption, csv.reset_index(drop=True), headers, rows, note)


class Builder:
    def __init__(self, a, figure_sink):
        self.a = a
        self.cfg = a.config
        self.h = fam.FAMILY_DISPLAY.get(self.cfg.heavy_family, self.cfg.heavy_family)
        self.sink = figure_sink
        self.tables: list[Table] = []
        self.figures: list[Figure] = []

    # -- helpers -------------------------------------------------------------------------
    def table(self, *args, **kw) -> Table:
        t = _table(*args, **kw)
        self.tables.append(t)
        return t

    def figure(self, name: str, fn, title: str, caption: str, *args):
        fig = fn(self.a, *args)
        if fig is None:
            return None
        item = Figure(name=name, title=title, caption=caption, number=len(self.figures) + 1)
        self.sink(item, fig)
        self.figures.append(item)
        return item

    def cls_name(self, c: str) -> str:
        return fam.class_display(c, self.cfg.heavy_family)

    @property
    def several_networks(self) -> bool:
        sm = self.a.summary
        return bool(len(sm) and "network" in sm and sm["network"].nunique() > 1)

    def ref_note(self) -> str | None:
        """Which scenarios a cross-scenario section uses, when the store has several
        networks (None otherwise, so a loopback-only report is unchanged)."""
        if not self.several_networks:
            return None
        a = self.a
        ref = a.reference_network
        n = len(a.reference_summary())
        why = "the baseline's network" if a.baseline is not None else "no baseline is set"
        return (
            f"Like with like: this section uses only the {n} scenario(s) on the network "
            f"`{ref}` ({why}; docs/methods.md §12). The other networks' scenarios are in the "
            "scenario summary, the paired comparisons and the emulated-networks section."
        )

    # -- sections ------------------------------------------------------------------------
    def build(self) -> Document:
        from chainlab.report import figures as figs

        self.figs = figs
        sections = [
            self.s_overview(),
            self.s_findings(),
            self.s_scenarios(),
            self.s_transport_timing(),
            self.s_networks(),
            self.s_baseline(),
            self.s_classes(),
            self.s_pairs(),
            self.s_transport_vs_crypto(),
            self.s_decomposition(),
            self.s_capacity(),
            self.s_paper(),
            self.s_methods(),
        ]
        title = f"chainlab report: {self.a.data.campaign_name}"
        return Document(title, [s for s in sections if s is not None], self.tables, self.figures)

    def s_overview(self) -> Section:
        a = self.a
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
            self.table(
                "metadata",
                "Run metadata",
                "From the store's runs table (one row per `chainlab run`; a resume adds a run).",
                md,
                [("field", list(md["field"])), ("value", list(md["value"]))],
            )
        )
        cfg = self.cfg
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
            self.table(
                "settings",
                "Analysis settings",
                "The campaign file's `baseline` and `[analysis]` table, or the documented defaults "
                "(docs/methods.md §9).",
                st,
                [
                    ("setting", _codes(st["setting"])),
                    ("value", list(st["value"])),
                    ("source", list(st["source"])),
                ],
            )
        )
        return s

    def s_findings(self) -> Section:
        s = Section("findings", "Findings")
        s.blocks.append(self.ref_note())
        s.blocks.append(
            "Each line checks one structural question against this store, with the criterion "
            "stated; 'not testable' means the store lacks the scenarios the question needs."
        )
        fd = pd.DataFrame(self.a.findings)
        if fd.empty:
            return s
        s.blocks.append(
            self.table(
                "findings",
                "Findings",
                "Computed by chainlab/analysis/findings.py from the tables below.",
                fd,
                [
                    ("question", list(fd["topic"])),
                    ("holds here", list(fd["holds"])),
                    ("evidence", list(fd["finding"])),
                ],
            )
        )
        return s

    def s_scenarios(self) -> Section:
        a, s = self.a, Section("scenarios", "Scenario summary")
        sm = a.summary
        if sm.empty or "mean_ms" not in sm:
            s.blocks.append("The store holds no executed scenario.")
            return s
        n_fail = int((sm["status"] != "ok").sum())
        s.blocks.append(
            f"{len(sm)} scenario(s) executed, {len(sm) - n_fail} analysed, {n_fail} failed. "
            "Latency is `total_ns` (TCP connect + TLS handshake) of measured (not warm-up) "
            "handshakes with outcome `ok`; failed handshakes are counted, never averaged in. "
            "Means have Student-t intervals; median/p95/p99 are nearest-rank order statistics "
            "with distribution-free order-statistic intervals (docs/methods.md §2)."
        )
        cols = [
            ("scenario", _codes(sm["scenario_id"])),
            ("hierarchy", list(sm["hierarchy"])),
            ("kex", list(sm["kex"])),
            *([("network", _codes(sm["network"]))] if self.several_networks else []),
            ("class", [self.cls_name(c) for c in sm["placement_class"]]),
            ("status", list(sm["status"])),
            ("n ok", _ints(sm["n_ok"])),
            ("n failed", _ints(sm["n_failed"])),
            ("mean ms", _ci(sm, "mean_ms")),
            ("median ms", _ci(sm, "median_ms")),
            ("p95 ms", _ci(sm, "p95_ms")),
            ("p99 ms", _ci(sm, "p99_ms")),
        ]
        s.blocks.append(
            self.table(
                "scenarios",
                "Scenario latency summary",
                "Every column of every scenario is in tables/scenarios.csv "
                "(with `_lo`/`_hi` interval bounds and `_se` log-scale "
                "standard errors).",
                sm,
                cols,
            )
        )
        s.blocks.append(
            self.figure(
                "mean_latency",
                self.figs.fig_mean_latency,
                "Mean handshake latency by scenario",
                "Paper Figure 1. Log scale; error bars are 95 % intervals; "
                "colours are placement classes; the dashed line is the "
                "baseline.",
            )
        )
        s.blocks.append(
            self.figure(
                "p95_latency",
                self.figs.fig_p95_latency,
                "p95 handshake latency by scenario",
                "Paper Figure 2, with p99 marks added.",
            )
        )
        s.blocks.append(
            self.figure(
                "latency_ecdf",
                self.figs.fig_latency_ecdf,
                "Latency distributions",
                "Empirical CDF of each scenario's latency (401 quantiles).",
            )
        )
        fl = a.failures
        if len(fl):
            s.blocks.append(
                self.table(
                    "failures",
                    "Failures",
                    "Failed measured handshakes by scenario and error category (from the samples), "
                    "and failed scenarios with their cause (from scenario_runs). Failed scenarios "
                    "are excluded from every statistic.",
                    fl,
                    [
                        ("scenario", _codes(fl["scenario_id"])),
                        ("scenario status", list(fl["status"])),
                        ("cause", [x if isinstance(x, str) else "" for x in fl["failure"]]),
                        ("error category", list(fl["error_category"])),
                        ("n", _ints(fl["n"])),
                        (
                            "share of measured",
                            [f.num(x * 100, 3) + " %" if x == x else "n/a" for x in fl["share"]],
                        ),
                        (
                            "example",
                            [x if isinstance(x, str) else "" for x in fl["example_detail"]],
                        ),
                    ],
                )
            )
        else:
            s.blocks.append("No measured handshake failed.")
        lab = sm[["scenario_id", "label_chain", "label_kex"]]
        s.blocks.append(
            self.table(
                "labels",
                "Figure labels",
                "Figures label scenarios by hierarchy (root › "
                "intermediates › leaf, short algorithm names) and, on a second line, key exchange "
                "plus whatever else varies in this store.",
                lab,
                [
                    ("scenario", _codes(lab["scenario_id"])),
                    ("label line 1", list(lab["label_chain"])),
                    ("label line 2", list(lab["label_kex"])),
                ],
            )
        )
        return s

    def s_transport_timing(self) -> Section:
        a, s = self.a, Section("transport", "Timing, transport and chain exposure")
        sm = a.summary
        ok = sm[sm["status"] == "ok"] if "status" in sm else sm
        if ok.empty:
            s.blocks.append("No successful scenario.")
            return s
        cols = [
            ("scenario", _codes(ok["scenario_id"])),
            ("TCP connect ms", _ci(ok, "connect_ms")),
            ("TLS ms", _ci(ok, "tls_ms")),
            ("connect share", _nums(ok["connect_share"])),
            ("bytes read", _ci(ok, "bytes_read")),
            ("bytes written", _ci(ok, "bytes_written")),
            ("observed chain len", _nums(ok["chain_len"])),
            ("observed chain bytes", _ci(ok, "chain_bytes")),
            ("served chain bytes", _ints(ok["served_chain_der_bytes"])),
            ("group", list(ok["negotiated_group"].fillna(""))),
            ("sigalg", list(ok["negotiated_sigalg"].fillna(""))),
        ]
        s.blocks.append(
            self.table(
                "transport",
                "Timing and transport per scenario",
                "Means of measured ok handshakes (bytes on the client socket up to the end of the "
                "handshake; chain = the peer chain the client observed). `served chain bytes` is "
                "what the runner recorded for the server's chain file.",
                ok,
                cols,
            )
        )
        varies = ok[ok["chain_len_varies"]]
        if len(varies):
            s.blocks.append(
                "Observed chain length varied within: "
                + ", ".join(f"`{x}`" for x in varies["scenario_id"])
                + "."
            )
        s.blocks.append(
            self.figure(
                "connect_vs_tls",
                self.figs.fig_connect_tls,
                "TCP connect vs TLS handshake time",
                "Mean of each part of the measured latency.",
            )
        )
        s.blocks.append(
            self.figure(
                "transport_bytes",
                self.figs.fig_transport_bytes,
                "Transport bytes by scenario",
                "Paper Figure 12.",
            )
        )
        ex = a.exposure
        if len(ex):
            s.blocks.append(
                self.table(
                    "chain_exposure",
                    "Chain exposure",
                    "Which certificates the server sends (declared: certificates.served) and what "
                    "the client observed (observed_chain of the analysed run), with DER sizes. "
                    "Effective exposure, not depth, decides what is transmitted (paper §7.3).",
                    ex,
                    [
                        ("scenario", _codes(ex["scenario_id"])),
                        ("depth", _ints(ex["depth"])),
                        ("policy", list(ex["served_chain"])),
                        ("sent (declared)", list(ex["declared_sent"])),
                        ("observed by the client", list(ex["observed_chain"])),
                        ("root sent", [f.yes_no(x) for x in ex["root_sent"]]),
                    ],
                )
            )
        return s

    def s_networks(self) -> Section | None:
        net = self.a.network
        if net is None:
            return None
        a, s = self.a, Section("networks", "Emulated networks")
        sm = a.summary
        em = sm[sm["network"] != "loopback"]
        pr = net.profiles
        s.blocks.append(
            f"{len(em)} of the {len(sm)} scenarios ran over emulated links "
            f"({len(pr['profile'].unique())} profile(s)), the others over loopback: client and "
            "server in two network namespaces joined by chainlab's link, which delays, paces "
            "and drops packets while both ends keep the kernel's own TCP (docs/network.md). "
            "A run calibrates each profile before its first use. The **initial window** is "
            "initcwnd × MSS, with MSS = MTU − 52 bytes: IPv4 20 + TCP 20 + the 12-byte "
            "timestamp option Linux negotiates by default (without timestamps it would be "
            "MTU − 40); 'TCP MSS measured' is what the calibration's TCP connection reported, "
            "which checks that assumption per profile."
        )
        bad_mss = pr[pr["mss_confirmed"] == False]  # noqa: E712 (None = not measured)
        if len(bad_mss):
            s.blocks.append(
                "**The MSS assumption does not hold for** "
                + ", ".join(
                    f"`{r.profile}` (measured {f.integer(r.tcp_mss)}, assumed {f.integer(r.mss)})"
                    for r in bad_mss.itertuples()
                )
                + "; its initial-window shares and projections use the assumed MSS."
            )
        several_runs = pr["run_id"].nunique() > 1

        calibrated = np.isfinite(pr["measured_rtt_ms"].to_numpy(dtype=float))

        def flag(v, cal):
            if v is True:
                return "**FLAGGED**"
            return "ok" if v is False and cal else "not calibrated"

        def meas(v, lo, hi):
            if v != v:
                return "n/a"
            if lo == lo and hi == hi and (lo != v or hi != v):
                return f"{f.num(v, 4)} ({f.num(lo, 4)}–{f.num(hi, 4)})"
            return f.num(v, 4)

        def rate_cfg(v):
            return f.num(v, 4) if v == v else "unlimited"

        def rate_meas(r):
            if r["rate_mbit"] == r["rate_mbit"]:
                return f"{f.num(r['measured_rate_mbit'], 4)} (TCP {f.num(r['tcp_rate_mbit'], 4)})"
            if r["measured_rate_mbit"] == r["measured_rate_mbit"]:
                return f"link not limiting (train {f.num(r['measured_rate_mbit'], 4)})"
            return "n/a"

        def pct(v):
            return f.pct(v * 100) if v == v else "n/a"

        def verdict(r):
            parts = [r["source"]]
            if r["calibration_flagged"] is not None:
                cal = "flags it" if r["calibration_flagged"] else "accepts it"
                parts.append(f"calibration {cal}")
            if r["calibration_reasons"]:
                parts.append(r["calibration_reasons"])
            return "; ".join(parts)

        rows = [r for _, r in pr.iterrows()]
        cols = [("profile", _codes(pr["profile"]))]
        if several_runs:
            cols.append(("run", _codes(pr["run_id"])))
        cols += [
            ("RTT ms configured", _nums(pr["rtt_ms"], 4)),
            (
                "RTT ms measured (min–max)",
                [
                    meas(v, lo, hi)
                    for v, lo, hi in zip(
                        pr["measured_rtt_ms"],
                        pr["measured_rtt_min_ms"],
                        pr["measured_rtt_max_ms"],
                        strict=True,
                    )
                ],
            ),
            ("RTT off by", [pct(v) for v in pr["rtt_deviation"]]),
            ("rate Mbit/s configured", [rate_cfg(v) for v in pr["rate_mbit"]]),
            ("rate measured (train, TCP)", [rate_meas(r) for r in rows]),
            ("rate off by", [pct(v) for v in pr["rate_deviation"]]),
            ("loss configured", [f.num(v * 100) + " %" for v in pr["loss"]]),
            (
                "loss measured (probes)",
                [
                    f"{f.num(v * 100)} % ({f.integer(n)})" if v == v else "n/a"
                    for v, n in zip(pr["measured_loss"], pr["loss_probes"], strict=True)
                ],
            ),
            (
                "MTU / MSS / initcwnd",
                [
                    f"{f.integer(m)} / {f.integer(ss)} / {f.integer(i)}"
                    for m, ss, i in zip(pr["mtu"], pr["mss"], pr["initcwnd"], strict=True)
                ],
            ),
            ("initial window bytes", _ints(pr["window_bytes"])),
            ("TCP MSS measured", _ints(pr["tcp_mss"])),
            ("flag", [flag(v, c) for v, c in zip(pr["flagged"], calibrated, strict=True)]),
            ("source, calibration's verdict", [verdict(r) for r in rows]),
            ("scenarios", _ints(pr["n_scenarios"])),
        ]
        s.blocks.append(
            self.table(
                "network_profiles",
                "Network profiles: configured versus measured",
                "Measured before use: RTT = median of TCP connects (min–max over them), rate = "
                "a packet train through the bottleneck (TCP: a bulk transfer), loss = paced UDP "
                "probes both ways (docs/network.md, Calibration). 'flag' is the flag the run "
                "stored: measured RTT or rate more than 5 % off the configuration (the "
                "calibration judges the RTT against the configured RTT plus the SYN's "
                "serialization, with at least 0.2 ms of slack). 'RTT off by' and 'rate off "
                "by' are measured / configured − 1.",
                pr,
                cols,
            )
        )
        flagged = pr[pr["flagged"] == True]  # noqa: E712 (None = not calibrated)
        if len(flagged):
            s.blocks.append(
                "**Flagged: "
                + ", ".join(f"`{x}`" for x in flagged["profile"])
                + ".** The link did not behave as configured (RTT or rate more than 5 % off), "
                "so those scenarios measured the network the calibration describes, not the "
                "one the profile names: read their latencies against the measured RTT and rate "
                "(the projection table's 'predicted at measured link' recomputes the model "
                "with them; the plots put them at their configured RTT, marked '(flagged)'). "
                "Their byte counts stand: they do not depend on the link."
            )
        elif calibrated.all():
            s.blocks.append(
                "No profile is flagged: every measured RTT and rate is within 5 % of its "
                "configuration, so the latencies below belong to the networks as configured."
            )
        else:
            s.blocks.append("No calibrated profile is flagged.")
        if not calibrated.all():
            s.blocks.append(
                "Not calibrated, so nothing confirms that the link behaved as configured: "
                + ", ".join(f"`{x}`" for x in pr.loc[~calibrated, "profile"])
                + "."
            )
        differ = pr[
            pr["flagged"].notna()
            & pr["calibration_flagged"].notna()
            & (pr["flagged"] != pr["calibration_flagged"])
        ]
        if len(differ):
            s.blocks.append(
                "For "
                + ", ".join(f"`{x}`" for x in differ["profile"])
                + " the stored flag and the calibration's own verdict differ (a run that "
                "judged the flag itself, against the configured RTT and rate alone); the "
                "table shows both."
            )
        slack = pr[(pr["flagged"] == False) & (pr["rtt_deviation"].abs() > 0.05)]  # noqa: E712
        if len(slack):
            s.blocks.append(
                "Not flagged although the RTT is more than 5 % off: "
                + ", ".join(
                    f"`{r.profile}` ({f.num(r.measured_rtt_ms - r.rtt_ms, 3)} ms over "
                    f"{f.num(r.rtt_ms, 3)} ms)"
                    for r in slack.itertuples()
                )
                + ". The calibration allows at least 0.2 ms, the link's own latency budget, "
                "below which a millisecond-scale RTT cannot be resolved; such a profile's "
                "latencies carry that fraction of a millisecond per round trip."
            )
        for note in net.notes:
            s.blocks.append(note)

        pts = net.points
        ep = pts[pts["emulated"]] if len(pts) else pts
        if len(ep):
            cols = [
                ("scenario", _codes(ep["scenario_id"])),
                ("hierarchy", list(ep["line_label"])),
                ("profile", _codes(ep["network"])),
                ("RTT ms", _nums(ep["rtt_ms"])),
                ("loss", [f.num(v * 100) + " %" if v == v else "n/a" for v in ep["loss"]]),
                ("n", _ints(ep["n_ok"])),
                ("median ms", _ci(ep, "median_ms")),
                ("mean ms", _ci(ep, "mean_ms")),
                ("p95 ms", _ci(ep, "p95_ms")),
                ("loopback median ms", _nums(ep["loopback_median_ms"])),
                ("server flight bytes (median)", _ints(ep["server_flight_bytes"])),
                ("initial window bytes", _ints(ep["window_bytes"])),
                (
                    "flight > initial window",
                    [
                        f"{f.ci(v, lo, hi)} ({f.integer(k)} of {f.integer(n)})" if v == v else "n/a"
                        for v, lo, hi, k, n in zip(
                            ep["exceed_share"],
                            ep["exceed_share_lo"],
                            ep["exceed_share_hi"],
                            ep["n_exceed"],
                            ep["n_server"],
                            strict=True,
                        )
                    ],
                ),
            ]
            s.blocks.append(
                self.table(
                    "network_scenarios",
                    "Scenarios on emulated networks",
                    "Latency statistics as in the scenario summary (median: order-statistic "
                    "interval). 'flight > initial window': the share of handshakes whose server "
                    "flight (the server's bytes written to the end of its handshake) is larger "
                    "than initcwnd × MSS, with a Wilson interval; such a flight cannot leave in "
                    "the first window and costs at least one more round trip. The CSV also has "
                    "the loopback twins and each point's profile family.",
                    pts,
                    cols,
                )
            )
        s.blocks.append(
            self.figure(
                "network_rtt",
                self.figs.fig_network_rtt,
                "Latency versus RTT per hierarchy",
                "Median latency of each hierarchy on each profile, at the profile's configured "
                "RTT (loopback at 0). Solid and other styled lines join profiles of one family "
                "(differing only in RTT); the dashed line is the model's prediction from the "
                "loopback twin; a ring marks points where at least "
                f"{EXCEED_MARK_SHARE * 100:g} % of the handshakes' server flight exceeded the "
                "initial window. Points of different families at the same RTT are set apart "
                "slightly.",
            )
        )
        loss_fig = self.figure(
            "network_loss",
            self.figs.fig_network_loss,
            "Latency versus loss per hierarchy",
            "Mean latency (the loss tail moves it; bars: 95 % intervals) and p95 of each "
            "hierarchy across profiles that differ only in loss; dashed: the model's loss-free "
            "prediction; rings as in the RTT plot.",
        )
        if loss_fig is not None:
            s.blocks.append(loss_fig)
        elif (pr["loss"] > 0).any():
            s.blocks.append(
                "No latency-versus-loss plot: no two profiles here differ only in loss (it "
                "needs e.g. the same RTT and rate with and without loss). The lossy profiles' "
                "scenarios are in the RTT plot and the tables."
            )
        else:
            s.blocks.append("No profile has loss, so there is no latency-versus-loss plot.")
        s.blocks.append(self.s_projection())
        return s

    def s_projection(self) -> Section:
        net = self.a.network
        s = Section("networks-projection", "Projection from loopback")
        s.blocks.append(
            "The model of docs/network.md (chainlab/network/model.py) predicts a scenario's "
            "latency on a link from its loopback run: **predicted = base + (2 + k)·RTT + "
            "serialization**. Base is the loopback median (both sides' CPU on the critical "
            "path); 2 round trips are the TCP connect and the TLS 1.3 exchange; k more come "
            "from slow start when a flight is larger than the initial window (the window "
            "starts at initcwnd segments and doubles every round trip); serialization is the "
            "time to put the bytes (with 52 header bytes per segment) on a rate-limited link. "
            "It predicts the loss-free latency, so on a lossy link it is the median's "
            "prediction only while p(no loss), the chance a handshake loses no packet, is "
            "at least 0.5."
        )
        s.blocks.append(
            "**How to read it.** A ratio emulated / predicted near 1 (its interval covering "
            "1, or within a few per cent) says the network cost of that scenario is what its "
            "round trips and bytes explain, so the same formula carries its loopback "
            "measurement to networks that were not emulated: take base and the flights from "
            "the tables (the CSVs have them), your RTT, rate and initcwnd, and compute k and "
            "the serialization as above; the second table does this for reference links. "
            "Where the ratio is off, compare the model's round trips with the observed ones "
            "((emulated − base − serialization) / RTT): a fractional excess of a few per cent "
            "of an RTT is the link's and the kernel's own per-packet cost; a whole extra "
            "round trip is a window the model did not foresee (the receive window, delayed "
            "ACKs); a flagged profile is judged by 'predicted at measured link'; on a lossy "
            "profile the excess is retransmission, which the model leaves out."
        )
        pj = net.projection
        if len(pj):
            cols = [
                ("emulated scenario", _codes(pj["emulated_id"])),
                ("profile", _codes(pj["profile"])),
                ("RTT ms", _nums(pj["rtt_ms"])),
                ("base ms", _nums(pj["base_ms"], 4)),
                (
                    "flights C1 / S bytes",
                    [
                        f"{f.integer(c)} / {f.integer(sv)}"
                        for c, sv in zip(
                            pj["client_flight_bytes"], pj["server_flight_bytes"], strict=True
                        )
                    ],
                ),
                (
                    "round trips: model (slow start) | observed",
                    [
                        f"{f.integer(m)} ({f.integer(k)}) | {f.num(o, 3)}"
                        for m, k, o in zip(
                            pj["round_trips"],
                            pj["extra_round_trips"],
                            pj["observed_round_trips"],
                            strict=True,
                        )
                    ],
                ),
                ("serialization ms", _nums(pj["serialization_ms"])),
                ("p(no loss)", _nums(pj["p_no_loss"])),
                ("predicted ms", _ci(pj, "predicted_ms", 4)),
                ("predicted at measured link ms", _nums(pj["predicted_measured_link_ms"], 4)),
                ("emulated median ms", _ci(pj, "emulated_median_ms", 4)),
                ("emulated / predicted", _ci(pj, "ratio")),
                ("emulated / predicted at measured link", _nums(pj["ratio_measured_link"], 4)),
            ]
            s.blocks.append(
                self.table(
                    "network_projection",
                    "Predicted versus emulated latency",
                    "One row per emulated scenario with a loopback twin. Predicted: "
                    "chainlab.network.model.predict on the twin's samples and the configured "
                    "profile (its base is the twin's median; the interval carries the twin's "
                    "median interval, not model error). At measured link: the same with the "
                    "calibrated RTT, rate (where one is configured) and loss. Ratio interval: "
                    "percentile interval of exact bootstrap replicates of both medians "
                    f"(B = {self.cfg.bootstrap_resamples}).",
                    pj,
                    cols,
                )
            )
        rf = net.reference
        if len(rf):
            names = [p["name"] for p in REFERENCE_PROFILES]
            first = rf.drop_duplicates("scenario_id")
            cols = [
                ("loopback scenario", _codes(first["scenario_id"])),
                ("class", [self.cls_name(c) for c in first["placement_class"]]),
                ("base ms", _nums(first["base_ms"], 4)),
                ("server flight bytes", _ints(first["server_flight_bytes"])),
            ]
            for name in names:
                g = rf[rf["profile"] == name].set_index("scenario_id").loc[first["scenario_id"]]
                cols.append(
                    (
                        f"{name}: ms (round trips)",
                        [
                            f"{f.num(v, 4)} ({f.integer(k)})"
                            for v, k in zip(g["predicted_ms"], g["round_trips"], strict=True)
                        ],
                    )
                )
            rp = net.reference_profiles.to_dict("records")[0]
            s.blocks.append(
                self.table(
                    "network_reference_projection",
                    "Projected latency on links that were not emulated",
                    "Every successful loopback scenario, by the model above, on reference "
                    f"links with MTU {f.integer(rp['mtu'])} (MSS {f.integer(rp['mss'])}), "
                    f"initcwnd {f.integer(rp['initcwnd'])} and no loss: "
                    + "; ".join(names)
                    + ". A projection, not a measurement: trust it as far as the ratios above "
                    "are near 1.",
                    rf,
                    cols,
                )
            )
        return s

    def s_baseline(self) -> Section:
        a, s = self.a, Section("baseline", "Relative to the baseline, plausibility, strategy")
        s.blocks.append(a.baseline_note)
        m = a.multipliers
        if m.empty:
            return s
        if "baseline_id" in m:
            ok = a.summary[a.summary["status"] == "ok"]
            missing = sorted(set(ok["scenario_id"]) - set(m["scenario_id"]))
            s.blocks.append(
                "Like with like (docs/methods.md §12): a scenario on another network than the "
                f"baseline's (`{a.reference_network}`) is compared with the baseline's "
                "counterpart on its own network (the same scenario apart from the network), "
                "named in the 'relative to' column, so a multiplier never mixes a network's "
                "round trips into a comparison of hierarchies."
                + (
                    " No counterpart was measured for, so no multiplier is shown for: "
                    + ", ".join(f"`{x}`" for x in missing)
                    + "."
                    if missing
                    else ""
                )
            )
        b = self.cfg.plausibility
        s.blocks.append(
            "Plausibility classes from the mean-latency multiplier vs the baseline: "
            f"**Reasonable** ≤ {b['reasonable']:g}×, **Penalized but plausible** ≤ "
            f"{b['penalized']:g}×, **Operationally problematic** ≤ {b['problematic']:g}×, "
            "above that **Unsuitable for interactive front-end** (thresholds: "
            f"`[analysis.plausibility]`, source: {self.cfg.sources.get('plausibility')}). "
            "'certain' says whether the whole interval lies in the class. Ratios of means use "
            "the log-scale delta method; the p95 ratio an exact order-statistic bootstrap "
            f"(B = {self.cfg.bootstrap_resamples}) (docs/methods.md §3-§4)."
        )
        cols = [
            ("scenario", _codes(m["scenario_id"])),
            *([("relative to", _codes(m["baseline_id"]))] if "baseline_id" in m else []),
            ("class", [self.cls_name(c) for c in m["placement_class"]]),
            ("latency ×", _ci(m, "latency_x")),
            ("p95 ×", _ci(m, "p95_x")),
            ("bytes read ×", _ci(m, "bytes_read_x")),
            ("server CPU ×", _ci(m, "server_cpu_x")),
            ("client CPU ×", _ci(m, "client_cpu_x")),
            ("plausibility", list(m["plausibility"])),
            ("certain", [f.yes_no(x) for x in m["plausibility_certain"]]),
        ]
        s.blocks.append(
            self.table(
                "baseline_multipliers",
                "Baseline multipliers",
                "Scenario / baseline for each metric, 95 % intervals.",
                m,
                cols,
            )
        )
        s.blocks.append(
            self.figure(
                "plausibility",
                self.figs.fig_plausibility,
                "Operational plausibility ranking",
                "Paper Figure 5, for every scenario: latency relative to "
                "the baseline with the class bands.",
            )
        )
        st = a.strategy
        if len(st) > 1:
            s.blocks.append(
                "The strategy matrix (paper Campaign B, Tables 3-4): the scenarios that share "
                "the baseline's key exchange, depth, served-chain policy, handshake mode, "
                "compression and network, so they differ only in the hierarchy's algorithms."
            )
            cols = [
                ("rank", _ints(st["plausibility_rank"])),
                ("scenario", _codes(st["scenario_id"])),
                ("hierarchy", list(st["hierarchy"])),
                (f"{self.h} positions", list(st["heavy_positions"])),
                ("mean ms", _nums(st["mean_ms"])),
                ("latency ×", _ci(st, "latency_x")),
                ("bytes read ×", _ci(st, "bytes_read_x")),
                ("server CPU ×", _ci(st, "server_cpu_x")),
                ("plausibility", list(st["plausibility"])),
            ]
            s.blocks.append(
                self.table(
                    "strategy_matrix",
                    "Strategy matrix",
                    "Rank = plausibility class (1-4), as in the paper's Table 4.",
                    st,
                    cols,
                )
            )
            s.blocks.append(
                self.figure(
                    "strategy_matrix",
                    self.figs.fig_strategy_heatmap,
                    "Normalised strategy matrix",
                    "Paper Figure 4: multipliers vs the baseline, log "
                    "colour scale (red: more than the baseline).",
                )
            )
        return s

    def _class_cols(self, c, label_col="class_name"):
        return [
            ("class", list(c[label_col])),
            ("n", _ints(c["n_scenarios"])),
            ("mean ms", _ci(c, "mean_ms")),
            ("median ms", _ci(c, "median_ms")),
            ("min ms", _nums(c["min_ms"])),
            ("max ms", _nums(c["max_ms"])),
            ("mean latency ×", _ci(c, "mean_latency_x")),
            ("median latency ×", _ci(c, "median_latency_x")),
            ("mean bytes ×", _ci(c, "mean_bytes_x")),
            ("mean server CPU ×", _ci(c, "mean_server_cpu_x")),
            ("server CPU/elapsed", _ci(c, "mean_server_over_elapsed")),
            ("client CPU/elapsed", _ci(c, "mean_client_over_elapsed")),
        ]

    def s_classes(self) -> Section:
        a, s = self.a, Section("placement", "Signature placement classes")
        s.blocks.append(self.ref_note())
        if a.classes.empty:
            s.blocks.append("No successful scenario to classify.")
            return s
        s.blocks.append(
            f"Each scenario's class comes from where the heavy family ({self.h}, "
            f"`[analysis].heavy_family`) sits: in the leaf; else in an intermediate; else in "
            "the root only; else nowhere. Class statistics are over scenario means; their "
            "intervals propagate each scenario mean's uncertainty by Monte Carlo "
            f"(B = {self.cfg.bootstrap_resamples}, docs/methods.md §5). Multipliers are "
            "relative to the baseline."
        )
        s.blocks.append(
            self.table(
                "placement_classes",
                "Placement classes (exclusive)",
                "Each successful scenario counted once.",
                a.classes,
                self._class_cols(a.classes),
            )
        )
        if len(a.table7):
            s.blocks.append(
                self.table(
                    "table7_groups",
                    "Placement groups as in the paper's Table 7",
                    f"The paper's grouping overlaps: '{self.cls_name('intermediate_any')}' also "
                    f"contains scenarios with {self.h} in the leaf.",
                    a.table7,
                    self._class_cols(a.table7),
                )
            )
        s.blocks.append(
            self.figure(
                "placement_classes",
                self.figs.fig_placement_classes,
                "Signature placement summary",
                "Paper Figure 9.",
            )
        )
        return s

    def s_pairs(self) -> Section:
        a, s = self.a, Section("pairs", "Paired comparisons")
        p = a.pairs
        s.blocks.append(
            "Pairs of successful scenarios that differ along exactly one axis, found in the "
            "matrix: one algorithm position, the whole-hierarchy algorithm (uniform "
            "hierarchies, the paper's Campaign A), depth (root and leaf kept; intermediates "
            "added; the served-chain policy may change with the topology, which the context "
            "says), key exchange, served chain, handshake mode, compression or network. "
            "Ratios are to / from with log-scale delta intervals (p95: exact bootstrap). "
            "'campaigns' lists the campaigns holding both scenarios."
        )
        if p.empty:
            s.blocks.append("No two successful scenarios differ along exactly one axis.")
            return s
        for axis in AXES:
            g = p[p["axis"] == axis]
            if g.empty:
                continue
            sub = Section(f"pairs-{axis}", f"Along {AXES[axis]}")
            cols = [
                ("from", _codes(g["from_id"])),
                ("to", _codes(g["to_id"])),
                (
                    "change",
                    [f"{x} → {y}" for x, y in zip(g["from_value"], g["to_value"], strict=True)],
                ),
                ("held fixed", list(g["context"])),
                ("campaigns", list(g["campaigns"])),
                (
                    "mean ms from → to",
                    [
                        f"{f.num(x)} → {f.num(y)}"
                        for x, y in zip(g["from_mean_ms"], g["to_mean_ms"], strict=True)
                    ],
                ),
                ("latency ratio", _ci(g, "latency_ratio")),
                ("p95 ratio", _ci(g, "p95_ratio")),
                ("Δ bytes read", _nums(g["delta_bytes_read"], 4)),
                ("Δ chain bytes", _nums(g["delta_chain_bytes"], 4)),
                ("bytes read ratio", _ci(g, "bytes_read_ratio")),
                ("server CPU ratio", _ci(g, "server_cpu_ratio")),
                ("client CPU ratio", _ci(g, "client_cpu_ratio")),
            ]
            sub.blocks.append(
                self.table(
                    f"pairs_{axis}",
                    f"Pairs along {AXES[axis]}",
                    "Ratios to / from; Δ = to − from.",
                    g,
                    cols,
                )
            )
            sub.blocks.append(
                self.figure(
                    f"pairs_{axis}",
                    self.figs.fig_pairs,
                    f"Paired comparisons: {AXES[axis]}",
                    "Left: the two means; right: the latency ratio with "
                    "its interval (red: higher, blue: lower, grey: not "
                    "distinguishable).",
                    axis,
                )
            )
            s.blocks.append(sub)
        self.tables.append(_table("pairs_all", "All pairs", "", p, []))
        return s

    def s_transport_vs_crypto(self) -> Section:
        a, s = self.a, Section("correlations", "Transport versus cryptography")
        s.blocks.append(self.ref_note())
        c = a.correlations
        if c.empty:
            s.blocks.append("No successful scenario.")
            return s
        s.blocks.append(
            "Correlation over scenarios of mean latency with mean bytes read and with the "
            "observed chain size, for all scenarios and split by whether the heavy family is "
            "in the leaf. Pearson: Fisher z interval; Spearman: Fisher z with the "
            "Bonett-Wright standard error (docs/methods.md §6). Intervals need ≥ 4 scenarios."
        )
        cols = [
            ("subset", list(c["subset"])),
            ("n", _ints(c["n_scenarios"])),
            ("metric", list(c["metric_label"])),
            ("Pearson r", _ci(c, "pearson_r")),
            ("Spearman ρ", _ci(c, "spearman_rho")),
            ("note", list(c["note"])),
        ]
        s.blocks.append(
            self.table(
                "correlations", "Transport-versus-latency correlations", "Paper Table 8.", c, cols
            )
        )
        s.blocks.append(
            self.figure(
                "bytes_vs_latency",
                self.figs.fig_bytes_vs_latency,
                "Bytes read versus mean latency",
                "Paper Figure 10.",
            )
        )
        s.blocks.append(
            self.figure(
                "chain_vs_latency",
                self.figs.fig_chain_vs_latency,
                "Observed chain size versus mean latency",
                "Paper Figure 11.",
            )
        )
        ce = a.counterexamples
        if ce.empty:
            s.blocks.append(
                "No counterexample: no scenario that moves more bytes is "
                "significantly faster than one that moves fewer."
            )
        else:
            shown = ce[ce["rank"] <= COUNTEREXAMPLES_SHOWN]
            n_by = ce.groupby("metric").size().to_dict()
            note = (
                "; ".join(f"{k}: {v} pair(s)" for k, v in n_by.items())
                + f"; the first {COUNTEREXAMPLES_SHOWN} per metric are shown, all in "
                "tables/counterexamples.csv."
            )
            cols = [
                ("metric", list(shown["metric"])),
                ("rank", _ints(shown["rank"])),
                ("more bytes, lower latency", _codes(shown["more_bytes_lower_latency"])),
                ("fewer bytes, higher latency", _codes(shown["less_bytes_higher_latency"])),
                (
                    "bytes",
                    [
                        f"{f.integer(x)} vs {f.integer(y)}"
                        for x, y in zip(shown["more_bytes"], shown["less_bytes"], strict=True)
                    ],
                ),
                (
                    "latency ms",
                    [
                        f"{f.num(x)} vs {f.num(y)}"
                        for x, y in zip(
                            shown["lower_latency_ms"], shown["higher_latency_ms"], strict=True
                        )
                    ],
                ),
                ("latency ratio higher/lower", _ci(shown, "latency_ratio")),
            ]
            s.blocks.append(
                self.table(
                    "counterexamples",
                    "Counterexamples to wire-size-only explanations",
                    "Paper Table 9: ordered pairs where the first scenario moves more bytes yet "
                    "is faster, with the latency ratio's interval above 1; ranked by byte "
                    "difference.",
                    ce,
                    cols,
                    note=note,
                )
            )
        return s

    def s_decomposition(self) -> Section:
        a, s = self.a, Section("decomposition", "Client/server decomposition")
        s.blocks.append(self.ref_note())
        d = a.decomposition
        if d.empty:
            s.blocks.append("No successful scenario.")
            return s
        r = self.cfg.cpu_regimes
        s.blocks.append(
            "Per-connection CPU time of each process (client and server are separate "
            "processes), paired by connection. CPU over elapsed = mean CPU / mean end-to-end "
            "latency; ratios use the paired delta method (docs/methods.md §2, §7). Regime: "
            f"client-skewed below {r['balanced_low']:g}, balanced up to "
            f"{r['balanced_high']:g}, overwhelmingly server-bound from {r['server_bound']:g} "
            f"with server CPU ≥ {SERVER_BOUND_ELAPSED_SHARE:g} of elapsed, else server-skewed "
            "(`[analysis.cpu_regimes]`)."
        )
        missing = d[d["n_server_missing"] > 0]
        if len(missing):
            s.blocks.append(
                "Handshakes without a server record (excluded from CPU "
                "statistics): "
                + ", ".join(
                    f"`{x}` ({n})"
                    for x, n in zip(
                        missing["scenario_id"], missing["n_server_missing"], strict=True
                    )
                )
                + "."
            )
        cols = [
            ("scenario", _codes(d["scenario_id"])),
            ("mean ms", _nums(d["mean_ms"])),
            ("client CPU ms", _ci(d, "client_cpu_ms")),
            ("server CPU ms", _ci(d, "server_cpu_ms")),
            ("client CPU/elapsed", _ci(d, "client_over_elapsed")),
            ("server CPU/elapsed", _ci(d, "server_over_elapsed")),
            ("server/client", _ci(d, "srv_cli_ratio")),
            ("regime", list(d["cpu_regime"])),
        ]
        s.blocks.append(
            self.table("decomposition", "Performance decomposition", "Paper Table 10.", d, cols)
        )
        dc = a.decomposition_classes
        if len(dc):
            cols = [
                ("class", list(dc["class_name"])),
                ("n", _ints(dc["n_scenarios"])),
                ("client CPU ms", _ci(dc, "mean_client_cpu_ms")),
                ("server CPU ms", _ci(dc, "mean_server_cpu_ms")),
                ("client CPU/elapsed", _ci(dc, "mean_client_over_elapsed")),
                ("server CPU/elapsed", _ci(dc, "mean_server_over_elapsed")),
                ("server/client", _ci(dc, "mean_srv_cli_ratio")),
            ]
            s.blocks.append(
                self.table(
                    "decomposition_classes",
                    "Decomposition by class",
                    "Means over each class's scenarios (paper §8.2-8.4), Monte-Carlo intervals.",
                    dc,
                    cols,
                )
            )
        for name, fn, title, cap in (
            ("server_cpu", self.figs.fig_server_cpu, "Server CPU by scenario", "Paper Figure 13."),
            (
                "client_server_cpu",
                self.figs.fig_client_server_cpu,
                "Client versus server CPU by scenario",
                "Paper Figure 14.",
            ),
            (
                "cpu_loglog",
                self.figs.fig_cpu_loglog,
                "Client versus server CPU, log-log",
                "Paper Figure 15; the dashed diagonal is parity.",
            ),
            (
                "cpu_over_elapsed",
                self.figs.fig_cpu_over_elapsed,
                "CPU over elapsed time",
                "Paper Figure 16, both sides.",
            ),
            (
                "srv_cli_ratio",
                self.figs.fig_srv_cli_ratio,
                "Server-to-client CPU ratio",
                "Paper Figure 17.",
            ),
        ):
            s.blocks.append(self.figure(name, fn, title, cap))
        return s

    def s_capacity(self) -> Section:
        a, s = self.a, Section("capacity", "Capacity and cost")
        s.blocks.append(self.ref_note())
        c = a.capacity
        if c.empty:
            s.blocks.append("No successful scenario.")
            return s
        cfg = self.cfg
        s.blocks.append(
            "An interpretation of measured server CPU per handshake, not a measurement of "
            "throughput: one fully busy vCPU completes 1e9 / (server CPU ns) handshakes per "
            "second; handshakes are assumed CPU-bound and perfectly parallel (docs/methods.md "
            f"§8). Price: {cfg.price_per_vcpu_hour:g} cost units per vCPU-hour "
            f"({cfg.sources.get('price_per_vcpu_hour')}; the default is the paper's "
            "illustrative price). Service classes (handshakes per month): "
            + ", ".join(f"{k} {v:,.0f}" for k, v in cfg.service_classes.items())
            + f" ({cfg.sources.get('service_classes')})."
        )
        cols = [
            ("scenario", _codes(c["scenario_id"])),
            ("class", [self.cls_name(x) for x in c["placement_class"]]),
            ("server CPU s", _nums(c["server_cpu_s"], 4)),
            ("handshakes/core-s", _ci(c, "handshakes_per_core_s")),
            ("handshakes/vCPU-h", _ci(c, "handshakes_per_vcpu_hour")),
            ("retained capacity", _ci(c, "retained_capacity")),
            ("capacity loss %", _nums(c["capacity_loss_pct"], 4)),
            ("infrastructure ×", _ci(c, "infra_multiplier")),
        ]
        s.blocks.append(
            self.table("capacity", "Infrastructure capacity", "Paper Table 11.", c, cols)
        )
        cols = [
            ("scenario", _codes(c["scenario_id"])),
            ("CPU-hours per million", _nums(c["cpu_hours_per_million"], 4)),
            ("cost per million", _ci(c, "cost_per_million")),
            ("extra cost per million", _ci(c, "extra_cost_per_million")),
            ("cost ×", _ci(c, "infra_multiplier")),
        ]
        s.blocks.append(
            self.table(
                "cost",
                "Cost per million handshakes",
                "Paper Table 12; extra cost = scenario − baseline (Monte-Carlo interval).",
                c,
                cols,
            )
        )
        sc = a.service_classes
        if len(sc):
            cols = [
                ("service class", list(sc["service_class"])),
                ("handshakes/month", _ints(sc["handshakes_per_month"])),
                ("class", [self.cls_name(x) for x in sc["class"]]),
                ("n", _ints(sc["n_scenarios"])),
                ("mean monthly cost", _ci(sc, "mean_monthly_cost")),
                ("median monthly cost", _ci(sc, "median_monthly_cost")),
                ("mean extra monthly", _ci(sc, "mean_extra_monthly_cost")),
                ("median extra monthly", _ci(sc, "median_extra_monthly_cost")),
            ]
            s.blocks.append(
                self.table(
                    "service_classes",
                    "Service-class translation",
                    "Paper Table 13 (monthly = the class's volume per "
                    "month). Per-scenario values: "
                    "tables/service_classes_per_scenario.csv.",
                    sc,
                    cols,
                )
            )
        self.tables.append(_table("service_classes_per_scenario", "", "", a.service_scenarios, []))
        for name, fn, title, cap in (
            (
                "infra_multiplier",
                self.figs.fig_infra_multiplier,
                "Infrastructure multiplier",
                "Paper Figure 18.",
            ),
            (
                "cost_per_million",
                self.figs.fig_cost_per_million,
                "Cost per million handshakes",
                "Paper Figure 19, with the absolute cost added.",
            ),
            (
                "service_classes",
                self.figs.fig_service_classes,
                "Monthly cost by service class",
                "Paper Figure 20: median over each placement class's scenarios.",
            ),
        ):
            s.blocks.append(self.figure(name, fn, title, cap))
        return s

    def s_paper(self) -> Section:
        a, s = self.a, Section("paper", "Comparison with the paper")
        s.blocks.append(self.ref_note())
        ps = a.paper_scenarios
        s.blocks.append(
            f"The paper's published values ({SOURCE}; kept in chainlab/data with their "
            "source notes) next to this store's, wherever a scenario matches by id (ignoring "
            "repeated underscores) or by structure (key exchange, depth, family per "
            "position, full handshake, no compression). Differences are shown, not "
            "explained away: the paper used OpenSSL 3 + oqsprovider on bare metal and "
            "reports no intervals; 'paper in CI' says whether its value lies inside this "
            "store's 95 % interval (with thousands of samples that interval is narrow, so "
            "'no' is the expected answer across machines)."
        )
        matched = (ps["chainlab_scenario_id"] != "").sum() if len(ps) else 0
        if matched == 0:
            s.blocks.append(
                "No scenario of this store matches one of the paper's Table 1; "
                "the paper's values are in chainlab/data/paper_table1.csv."
            )
            self.tables.append(_table("paper_scenarios", "", "", ps, []))
            return s

        def pair(ours, theirs, digits=3):
            return [
                f"{f.num(p, digits)} | {f.ci(v, lo, hi, digits)} ({f.pct(d)})"
                if v == v
                else f"{f.num(p, digits)} | n/a"
                for p, v, lo, hi, d in zip(
                    ps[theirs],
                    ps[ours],
                    ps[f"{ours}_lo"],
                    ps[f"{ours}_hi"],
                    ps[f"{ours}_diff_pct"],
                    strict=True,
                )
            ]

        cols = [
            ("paper scenario", _codes(ps["paper_scenario_id"])),
            ("chainlab scenario", _codes(ps["chainlab_scenario_id"])),
            ("match", list(ps["match"])),
            ("mean ms: paper | chainlab (diff)", pair("mean_ms", "paper_mean_ms")),
            ("p95 ms", pair("p95_ms", "paper_p95_ms")),
            ("bytes read", pair("bytes_read", "paper_bytes_read", 4)),
            ("server CPU ms", pair("server_cpu_ms", "paper_server_cpu_ms")),
            ("client CPU ms", pair("client_cpu_ms", "paper_client_cpu_ms")),
            ("server/client", pair("srv_cli_ratio", "paper_srv_cli_ratio")),
            (
                "latency × baseline: paper | chainlab",
                [
                    f"{f.num(p)} | {f.ci(v, lo, hi)}"
                    for p, v, lo, hi in zip(
                        ps["paper_latency_x"],
                        ps["latency_x"],
                        ps["latency_x_lo"],
                        ps["latency_x_hi"],
                        strict=True,
                    )
                ],
            ),
            ("mean: paper in CI", [f.yes_no(x) for x in ps["mean_ms_paper_inside_ci"]]),
            ("note", list(ps["note"])),
        ]
        s.blocks.append(
            self.table(
                "paper_scenarios",
                "Paper Table 1 (and Table 10's client CPU) versus this store",
                "Each cell: paper | chainlab [95 % CI] (chainlab − paper, % "
                "of paper). The paper's multiplier is against its own row "
                "matching this store's baseline.",
                ps,
                cols,
            )
        )
        s.blocks.append(
            self.figure(
                "paper_vs_chainlab",
                self.figs.fig_paper_vs_chainlab,
                "Paper versus this store",
                "Matched scenarios; points on the dashed line agree.",
            )
        )
        pc = a.paper_classes
        if len(pc):

            def cmp(col):
                return [
                    f"{f.num(p)} | {f.ci(v, lo, hi)}"
                    for p, v, lo, hi in zip(
                        pc[f"paper_{col}"], pc[col], pc[f"{col}_lo"], pc[f"{col}_hi"], strict=True
                    )
                ]

            cols = [
                ("paper class", list(pc["paper_class"])),
                (
                    "n: paper | chainlab",
                    [
                        f"{f.integer(p)} | {f.integer(v)}"
                        for p, v in zip(pc["paper_n_scenarios"], pc["n_scenarios"], strict=True)
                    ],
                ),
                ("mean ms", cmp("mean_ms")),
                ("mean latency ×", cmp("mean_latency_x")),
                ("median latency ×", cmp("median_latency_x")),
                ("mean bytes ×", cmp("mean_bytes_x")),
                ("mean server CPU ×", cmp("mean_server_cpu_x")),
                ("server CPU/elapsed", cmp("mean_server_over_elapsed")),
                ("client CPU/elapsed", cmp("mean_client_over_elapsed")),
            ]
            s.blocks.append(
                self.table(
                    "paper_classes",
                    "Paper Table 7 versus this store",
                    "paper | chainlab [95 % CI], over each store's own scenarios.",
                    pc,
                    cols,
                )
            )
        pr = a.paper_correlations
        if len(pr):
            cols = [
                ("subset", list(pr["subset"])),
                ("metric", list(pr["metric"])),
                (
                    "n: paper | chainlab",
                    [
                        f"{f.integer(p)} | {f.integer(v)}"
                        for p, v in zip(pr["paper_n"], pr["n_scenarios"], strict=True)
                    ],
                ),
                (
                    "Pearson r: paper | chainlab",
                    [
                        f"{f.num(p)} | {f.ci(v, lo, hi)}"
                        for p, v, lo, hi in zip(
                            pr["paper_pearson_r"],
                            pr["pearson_r"],
                            pr["pearson_r_lo"],
                            pr["pearson_r_hi"],
                            strict=True,
                        )
                    ],
                ),
                (
                    "Spearman ρ: paper | chainlab",
                    [
                        f"{f.num(p)} | {f.ci(v, lo, hi)}"
                        for p, v, lo, hi in zip(
                            pr["paper_spearman_rho"],
                            pr["spearman_rho"],
                            pr["spearman_rho_lo"],
                            pr["spearman_rho_hi"],
                            strict=True,
                        )
                    ],
                ),
            ]
            s.blocks.append(
                self.table(
                    "paper_correlations",
                    "Paper Table 8 versus this store",
                    "Correlations over each store's own scenarios.",
                    pr,
                    cols,
                )
            )
        for name, df, title in (
            ("paper_depth", a.paper_depth, "Paper Table 5 (depth) versus this store"),
            ("paper_kex", a.paper_kex, "Paper Table 6 (key exchange) versus this store"),
        ):
            if df.empty:
                continue
            if name == "paper_depth":
                labels = list(df["pair_label"])
            else:
                labels = [
                    f"{t.replace('_vs_', ' → ')}: {lab}"
                    for t, lab in zip(df["comparison_type"], df["family_label"], strict=True)
                ]
            cols = [
                ("pair", labels),
                (
                    "latency ratio: paper | chainlab",
                    [
                        f"{f.num(p, 4)} | {f.ci(v, lo, hi, 4)}"
                        for p, v, lo, hi in zip(
                            df["paper_latency_ratio"],
                            df["latency_ratio"],
                            df["latency_ratio_lo"],
                            df["latency_ratio_hi"],
                            strict=True,
                        )
                    ],
                ),
                (
                    "server CPU ratio: paper | chainlab",
                    [
                        f"{f.num(p, 4)} | {f.ci(v, lo, hi, 4)}"
                        for p, v, lo, hi in zip(
                            df["paper_server_cpu_ratio"],
                            df["server_cpu_ratio"],
                            df["server_cpu_ratio_lo"],
                            df["server_cpu_ratio_hi"],
                            strict=True,
                        )
                    ],
                ),
                ("paper in CI", [f.yes_no(x) for x in df["latency_ratio_paper_inside_ci"]]),
            ]
            if name == "paper_depth":
                cols.insert(
                    1,
                    (
                        "scenarios (chainlab)",
                        [
                            f"{x} → {y}"
                            for x, y in zip(
                                df["depth2_scenario_id"], df["depth3_scenario_id"], strict=True
                            )
                        ],
                    ),
                )
            else:
                cols.insert(
                    1,
                    (
                        "scenarios (chainlab)",
                        [f"{x} → {y}" for x, y in zip(df["from_id"], df["to_id"], strict=True)],
                    ),
                )
            s.blocks.append(
                self.table(name, title, "A pair not found in this store shows n/a.", df, cols)
            )
        return s

    def s_methods(self) -> Section:
        cfg = self.cfg
        s = Section("methods", "How every number was computed")
        items = [
            "**Samples** (§1): per scenario, the samples of its latest completed scenario "
            "run (or latest failed one); `warmup = false`; latency, bytes and CPU statistics "
            "use `outcome = 'ok'`; failures are counted by error category. Failed scenarios "
            "(status failed, or no successful handshake) are shown with their cause and "
            "excluded from all statistics.",
            f"**Means** (§2): Student-t {cfg.confidence_level:g} interval from the SQL "
            "moments (DuckDB `avg`, `var_samp`).",
            "**Quantiles** (§2): median, p95, p99 are nearest-rank order statistics "
            "x(⌈qn⌉); intervals are the distribution-free binomial order-statistic intervals "
            "(Conover 1999 §3.2); n/a when the sample is too small for a bound.",
            "**Ratios within a scenario** (§2): server/client CPU and CPU over elapsed are "
            "ratios of paired means; log-scale delta-method interval with the sample "
            "covariance.",
            "**Ratios between scenarios** (§3): mean_a/mean_b with interval "
            "exp(log r ± z·√(se_a² + se_b²)), se = standard error of log(mean) "
            "(Casella & Berger §5.5.4). A scenario against itself is exactly 1.",
            f"**Quantile ratios** (§4): percentile interval of B = {cfg.bootstrap_resamples} "
            "exact bootstrap replicates of each order statistic, drawn as "
            "x(⌈n·U⌉), U ~ Beta(k, n−k+1) (Hutson & Ernst 2000), seed "
            f"{cfg.bootstrap_seed}.",
            f"**Statistics over scenarios** (§5): class means/medians, extra costs: B = "
            f"{cfg.bootstrap_resamples} Monte-Carlo draws of every scenario mean from its "
            "large-sample log-normal distribution; the statistic's 2.5/97.5 percentiles.",
            "**Correlations** (§6): over scenario means; Pearson with Fisher z interval, "
            "Spearman with Fisher z and the Bonett-Wright (2000) standard error.",
            f"**Classes, pairs, plausibility, regimes** (§7): heavy family "
            f"{self.h}; pairs differ along exactly one axis; plausibility from the latency "
            f"multiplier with bounds {', '.join(f'{v:g}' for v in cfg.plausibility.values())}"
            f" ({', '.join(PLAUSIBILITY_CLASSES[:3])}; above: {PLAUSIBILITY_CLASSES[3]}).",
            "**Capacity and cost** (§8): 1e9 / server CPU ns handshakes per core-second; "
            "× 3600 per vCPU-hour; cost = CPU-hours × price; all illustrative.",
            "**Comparison with the paper** (§10): the paper's values as published, matched "
            "by id or structure.",
        ]
        if self.a.network is not None:
            items.append(
                "**Emulated networks** (§12): profiles as configured and calibrated, the stored "
                "5 % flag; initial window = initcwnd × (MTU − 52); share of handshakes whose "
                "server bytes written exceed it, Wilson interval; predictions by "
                "chainlab.network.model from each scenario's loopback twin, ratio intervals by "
                "exact bootstrap of both medians; cross-scenario statistics on the reference "
                f"network `{self.a.reference_network}` only, multipliers against the "
                "baseline's counterpart on the same network."
            )
        s.blocks.append(
            "Section numbers refer to docs/methods.md in the chainlab "
            "repository, which gives each method in full with references."
        )
        s.blocks.append(items)
        return s


def build(a, figure_sink) -> Document:
    """The document for analysis `a`; `figure_sink(Figure, matplotlib_figure)` saves each
    figure and fills its paths."""
    return Builder(a, figure_sink).build()
