"""`chainlab bench report`: time `chainlab report` on a 200,000-sample store and measure its
peak memory.

The store is synthetic (chainlab.bench.synthetic.paper_matrix: the paper's 15 distinct
scenario shapes with a toy cost model, 200,000 measured handshakes; no measured number), so
the benchmark needs no engine and no campaign run. `chainlab report` runs as a child process:

    wall time   time.monotonic() around the child, from start to exit;
    peak memory the report process's own high-water resident set (VmHWM of /proc/self/status,
                read by the child as it ends). Not RUSAGE_CHILDREN's ru_maxrss: Linux
                counts in it the resident set the child had between fork and exec, a copy
                of this process's (which built the store), so it reported this process's
                size, not the report's.

Targets: a 20,000,000-sample store reports in at most 60 s and 2 GiB on this 2-core
machine (structure issue), and a 200,000-sample report does not get slower.

    chainlab bench report [-- --samples N] [--scenarios K] [--keep DIR] [--repeat K]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from chainlab.bench.synthetic import build_store, paper_matrix

TARGET_SECONDS = 60.0
TARGET_BYTES = 2 * 2**30
# Runs `chainlab report` in this interpreter, then prints the process's peak resident set
# (KiB), which /proc counts for this program alone (from its exec on).
_MEASURED_REPORT = """
import sys
from chainlab.cli import main
rc = main(["report", *sys.argv[1:]])
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print("peak_kib", int(hwm.split()[1]), flush=True)
sys.exit(rc)
"""


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
    child process (its own peak, see the module's doc)."""
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", _MEASURED_REPORT, str(store), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.monotonic() - t0
    peak = [
        int(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("peak_kib ")
    ]
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
    return wall, (peak[-1] * 1024 if peak else 0), proc.returncode


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
                + f"(target < {TARGET_BYTES / 2**30:.0f} GiB)"
                + ("" if rc == 0 else f", exit code {rc}")
            )
        if args.keep:
            print(f"kept: {store} and {where / 'bench-report-report'}")
    return worst_rc


if __name__ == "__main__":
    sys.exit(main())
