"""`chainlab bench campaign`: run a campaign (default: the bundled signature-placement study)
into a temporary store and print what it cost.

Figures: campaign wall time; per scenario the samples, stop reason and achieved 95 % CI
half-width; and the orchestration overhead,

    overhead = 1 - (sum of engine handshake-loop time) / (campaign wall time)

where a handshake loop runs from a client batch's first handshake start to its last
handshake's end (from the records), and the wall time runs from the start of `run` to the
store's last commit. Everything else - process starts, server readiness, hierarchy
generation, record parsing, store writes - is overhead. Hierarchies are generated (or found
in the cache) before the clock starts and their time is printed apart: generating them is a
one-time cost of a new hierarchy, not of orchestration (`--fresh-pki` times it from empty).
The targets (issue: campaigns) are <= 15 min wall time and < 5 % overhead on a 2-core machine.

    chainlab bench campaign [-- FILE] [--keep STORE] [--campaign NAME] [--fresh-pki]

The full study takes ~10-15 minutes of both cores: run it once, not in a loop.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from chainlab import engine, machine
from chainlab.campaign import load
from chainlab.engine import REPO
from chainlab.model import estimate
from chainlab.runner import pki
from chainlab.runner.campaign import RunOptions, run
from chainlab.store import Store

DEFAULT = REPO / "campaigns" / "signature-placement.toml"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="chainlab bench campaign",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("file", nargs="?", type=Path, default=DEFAULT, help="campaign file")
    ap.add_argument("--keep", type=Path, help="write the store here (default: a temp file)")
    ap.add_argument("--campaign", action="append", help="only these campaigns")
    ap.add_argument(
        "--fresh-pki",
        action="store_true",
        help="generate hierarchies into an empty cache (counts their signing time)",
    )
    args = ap.parse_args(argv)

    campaign = load(args.file)
    with tempfile.TemporaryDirectory(prefix="chainlab-bench-") as tmp:
        if args.fresh_pki:
            os.environ["CHAINLAB_PKI_CACHE"] = str(Path(tmp) / "pki")
        store_path = args.keep or Path(tmp) / "bench.duckdb"
        m = machine.describe()
        print(f"machine: {m['cpu_model']}, {m['cores']} cores, kernel {m['kernel']}")
        print(f"campaign: {args.file.name}, {len(campaign.select(args.campaign))} scenarios")
        t_pki = time.monotonic()
        for h in sorted({s.hierarchy for s in campaign.select(args.campaign)}):
            pki.ensure(engine.path(), h, campaign.seed)
        t_pki = time.monotonic() - t_pki
        print(
            f"hierarchies: ready in {t_pki:.1f} s (before the timed run; "
            f"{'generated' if args.fresh_pki else 'from the cache or generated'})"
        )
        t0 = time.monotonic()
        summary = run(campaign, RunOptions(store=store_path, campaigns=args.campaign))
        wall = time.monotonic() - t0
        with Store.open(store_path) as st:
            sr = st.query(
                "SELECT scenario_id, status, stop_reason, n_ok, n_measured, n_warmup, batches, "
                "ci_rel_halfwidth, engine_seconds, wall_seconds FROM scenario_runs "
                "ORDER BY started_at"
            )
            means = st.query(
                "SELECT scenario_id, avg(total_ns) / 1e6 AS mean_ms FROM samples "
                "WHERE NOT warmup AND outcome = 'ok' GROUP BY 1"
            ).set_index("scenario_id")["mean_ms"]
    w = max(len(s) for s in sr["scenario_id"])
    print(
        f"\n{'scenario':<{w}}  {'status':<9} {'stop':<9} {'n':>6} {'warmup':>6} "
        f"{'batches':>7} {'mean ms':>9} {'CI +-%':>7} {'time':>7}"
    )
    for _, r in sr.iterrows():
        ci = (
            "-"
            if r["ci_rel_halfwidth"] != r["ci_rel_halfwidth"]
            else (f"{100 * r['ci_rel_halfwidth']:.2f}")
        )
        mean = means.get(r["scenario_id"])
        mean_s = f"{mean:9.3f}" if mean is not None else f"{'-':>9}"
        print(
            f"{r['scenario_id']:<{w}}  {r['status']:<9} {r['stop_reason']:<9} "
            f"{r['n_ok']:>6} {r['n_warmup']:>6} {r['batches']:>7} {mean_s} {ci:>7} "
            f"{estimate.fmt_duration(r['wall_seconds']):>7}"
        )
    engine_s = float(sr["engine_seconds"].sum())
    scen_s = float(sr["wall_seconds"].sum())
    print(f"\nwall time:            {estimate.fmt_duration(wall)} ({wall:.1f} s; target <= 15 min)")
    print(
        f"samples:              {int(sr['n_ok'].sum())} measured ok, "
        f"{int(sr['n_warmup'].sum())} warm-up"
    )
    print(f"scenarios:            {len(summary.completed)} completed, {len(summary.failed)} failed")
    print(f"engine handshake loops: {engine_s:.1f} s")
    print(
        f"orchestration overhead: {100 * (1 - engine_s / wall):.2f} % of wall time (target < 5 %)"
    )
    print(
        f"  of which outside scenarios (startup, store): {wall - scen_s:.1f} s; inside "
        f"scenarios but outside loops (PKI, processes, parsing, commits): {scen_s - engine_s:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
