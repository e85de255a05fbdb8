"""`chainlab bench report`: time `chainlab report` on a 200,000-sample store and measure its
peak memory.

The store is synthetic (chainlab.bench.synthetic.paper_matrix: the paper's 15 distinct
scenario shapes with a toy cost model, 200,000 measured handshakes; no measured number), so
the benchmark needs no engine and no campaign run. `chainlab report` runs as a child process:

    wall time   time.monotonic() around the child, from start to exit;
    peak memory resource.getrusage(RUSAGE_CHILDREN).ru_maxrss after it exits (Linux: KiB),
                i.e. the largest resident set of the report process.

Targets (issue: analysis and report): under 30 s and under 1 GiB on this 2-core machine.

    chainlab bench report [-- --samples N] [--scenarios K] [--keep DIR] [--repeat K]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from chainlab.bench.synthetic import build_store, paper_matrix

TARGET_SECONDS = 30.0
TARGET_BYTES = 2**30


def build_benchmark_store(path: Path, samples: int, scenarios: int = 15, seed: int = 1) -> Path:
    """A store with `samples` measured handshakes over the first `scenarios` of the paper's
    15 scenario shapes (the baseline is the fifth)."""
    shapes = paper_matrix(samples)[:scenarios]
    total = sum(s.n for s in shapes)
    shapes[0].n += samples - total  # keep the requested total
    return build_store(
        path,
        shapes,
        baseline="x25519mlkem768__ml_root__ml_int__ml_leaf",
        seed=seed,
    )


def run_report(store: Path, out: Path) -> tuple[float, int, int]:
    """(wall seconds, peak RSS bytes, exit code) of `chainlab report STORE --out OUT` run as a
    child process. RUSAGE_CHILDREN's ru_maxrss is the largest resident set of any child
    waited for so far, so with several runs it is the peak over the runs so far."""
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "chainlab", "report", str(store), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    wall = time.monotonic() - t0
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # Linux: KiB
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
    return wall, peak_kib * 1024, proc.returncode


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="chainlab bench report",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--samples", type=int, default=200_000, help="measured handshakes in the store")
    ap.add_argument("--keep", type=Path, help="keep the store and the report in this folder")
    ap.add_argument("--repeat", type=int, default=1, help="report runs (wall time of each)")
    ap.add_argument(
        "--scenarios",
        type=int,
        default=15,
        help="use the first N of the paper's 15 scenario shapes (default 15)",
    )
    args = ap.parse_args(argv)
    if args.samples < 1000:
        ap.error(f"--samples {args.samples}: allowed: at least 1000")
    if args.repeat < 1:
        ap.error(f"--repeat {args.repeat}: allowed: at least 1")
    if not 1 <= args.scenarios <= 15:
        ap.error(f"--scenarios {args.scenarios}: allowed: 1..15")

    with tempfile.TemporaryDirectory(prefix="chainlab-bench-report-") as tmp:
        where = args.keep or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        store = where / "bench-report.duckdb"
        t0 = time.monotonic()
        build_benchmark_store(store, args.samples, args.scenarios)
        print(
            f"store: {args.samples:,} synthetic measured handshakes, {args.scenarios} scenario(s), "
            f"{store.stat().st_size / 2**20:.1f} MiB, built in {time.monotonic() - t0:.1f} s"
        )
        worst_rc = 0
        for k in range(args.repeat):
            wall, peak, rc = run_report(store, where / "bench-report-report")
            worst_rc = max(worst_rc, rc)
            print(
                f"chainlab report run {k + 1}: wall time {wall:.1f} s "
                f"(target < {TARGET_SECONDS:.0f} s), peak memory {peak / 2**20:.0f} MiB "
                + ("" if k == 0 else "(max over runs so far) ")
                + f"(target < {TARGET_BYTES / 2**30:.0f} GiB)"
                + ("" if rc == 0 else f", exit code {rc}")
            )
        if args.keep:
            print(f"kept: {store} and {where / 'bench-report-report'}")
    return worst_rc


if __name__ == "__main__":
    sys.exit(main())
