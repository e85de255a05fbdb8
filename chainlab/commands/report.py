"""Write a report for a result store: self-contained HTML, Markdown and CSV of every table,
and the figures as PNG and SVG, into a folder beside the store (`<store stem>-report/`).

The analysis settings (baseline, heavy family, plausibility thresholds, price, service
classes) come from the campaign file stored in the store (`baseline` and `[analysis]`); the
options below override single settings. docs/methods/ explains every number.
"""

import signal
import time
from pathlib import Path

from chainlab.campaign.analysis_settings import parse_analysis
from chainlab.errors import ChainlabError

HELP = "write the HTML/Markdown/CSV report of a result store"


def add_arguments(parser):
    parser.add_argument("store", type=Path, help="the .duckdb result store")
    parser.add_argument(
        "--out", type=Path, help="report folder (default: <store stem>-report beside the store)"
    )
    parser.add_argument("--baseline", help="scenario id to compare against (overrides the file)")
    parser.add_argument(
        "--heavy-family", help="family whose placement defines the classes (default slh-dsa)"
    )
    parser.add_argument(
        "--price-per-vcpu-hour", type=float, help="cost units per vCPU-hour (illustrative)"
    )
    parser.add_argument(
        "--bootstrap-resamples", type=int, help="B for bootstrap/Monte-Carlo intervals"
    )
    parser.add_argument("--bootstrap-seed", type=int, help="seed of every resampled interval")


def overrides_from(args) -> dict:
    """Command-line overrides, validated exactly like the campaign file's [analysis] keys."""
    given = {
        "baseline": args.baseline,
        "heavy_family": args.heavy_family,
        "price_per_vcpu_hour": args.price_per_vcpu_hour,
        "bootstrap_resamples": args.bootstrap_resamples,
        "bootstrap_seed": args.bootstrap_seed,
    }
    given = {k: v for k, v in given.items() if v is not None}
    if not given:
        return {}
    cfg = parse_analysis(given, "command line", table_name="")
    return {k: getattr(cfg, k) for k in given}


class _Stop:
    """Ctrl-C or SIGTERM during the report: raise KeyboardInterrupt, and remember it. Python
    runs a signal handler between any two bytecodes, also inside a finaliser (`__del__`, a
    weakref callback: matplotlib and pandas have many), where the exception is printed and
    dropped; the flag makes such a stop still end the report unwritten, exit 130."""

    def __init__(self) -> None:
        self.requested = False

    def __call__(self, signum, frame):
        self.requested = True
        raise KeyboardInterrupt


def run(args) -> int:
    # Deferred: the analysis and matplotlib take a second to load; the command line builds
    # every subcommand's parser at start and must stay quick for `chainlab validate`.
    from chainlab.analysis.analyze import analyze
    from chainlab.report import build_report

    overrides = overrides_from(args)
    t0 = time.monotonic()
    a = analyze(args.store, **overrides)
    if a.data.scenarios.empty and a.data.targets.empty:
        # A run stopped (Ctrl-C, a kill) before its first scenario ended: nothing to report.
        files = ", ".join(sorted(set(a.data.runs["campaign_file_name"]))) or "CAMPAIGN"
        raise ChainlabError(
            f"store {args.store} holds no finished scenario yet (its run stopped before the "
            f"first one ended); resume it with `chainlab run {files} --store {args.store} "
            "--resume`"
        )
    if args.baseline is not None and a.baseline is None:
        ids = list(a.summary["scenario_id"])
        shown = ", ".join(ids[:8]) + (", ..." if len(ids) > 8 else "")
        raise ChainlabError(
            f"--baseline {args.baseline}: not a successful scenario of {args.store}; "
            f"allowed: {shown}"
        )
    # SIGTERM as Ctrl-C: the half-built report is removed on the way out (chainlab.report).
    stop = _Stop()
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        out = build_report(args.store, args.out, analysis=a, stopped=lambda: stop.requested)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    elapsed = time.monotonic() - t0
    print(f"report: {out / 'index.html'}")
    print(f"        {out / 'report.md'}, {out / 'tables'}/*.csv, {out / 'figures'}/*.png|svg")
    print(f"        written in {elapsed:.1f} s")
    return 0
