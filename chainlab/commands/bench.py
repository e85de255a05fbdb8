"""Benchmarks that print figures (never pass/fail): the speed and overhead targets of each
part, measured side by side in one run so ratios survive a noisy, shared machine.

  engine     engine vs `openssl s_server` + `s_time`; instrumentation overhead
  campaign   the bundled signature-placement campaign: wall time, samples, CI widths, overhead
  report     `chainlab report` on a 200,000-sample store: time and peak memory
  link       the userspace network link: added latency and throughput
  load       the load generator's headroom; capacity measured vs derived vs s_time
  primitives every primitive timed (at most 3 minutes), the TLS overhead's references
  model      the cost model's accuracy and the run-time estimate against stored runs
  cluster    a local two-worker Dask cluster's overhead beside the local executor's
  stacks     each TLS stack as server and client: rates and instructions per handshake
  mtc        Merkle Tree Certificates: issuing a batch (time, memory); a client's
             acceptance against one ML-DSA-44 verification
  instructions  the baseline handshake's instructions per side under callgrind, their
             spread over rounds, and the wall time counting costs per handshake
  cpu        each server's connections' CPU over its process's, and where the rest went
  path       a server's CPU, context switches and system calls per handshake on loopback
             and over a 50 ms path, one at a time and under load
"""

import importlib
import sys

from chainlab import engine
from chainlab.axes.stack import STACKS

HELP = "run a benchmark and print its figures"
BENCHMARKS = [
    "engine",
    "campaign",
    "report",
    "link",
    "load",
    "primitives",
    "model",
    "cluster",
    "stacks",
    "mtc",
    "instructions",
    "cpu",
    "path",
]

# The engine parts a benchmark runs beyond the OpenSSL 3.5 engine, built first where this
# checkout lacks them (chainlab.engine.ensure).
_FOUR = ("openssl-3.5", "rustls", "boringssl", "go")
PARTS = {
    "link": ("link",),
    "load": (*_FOUR, "link"),
    "stacks": STACKS,
    "cpu": _FOUR,
    "path": ("rustls", "link"),
}


def add_arguments(parser):
    parser.add_argument("benchmark", choices=BENCHMARKS, help="which benchmark to run")
    parser.add_argument("args", nargs="*", help="options passed to the benchmark (after --)")


def run(args) -> int:
    module = importlib.import_module(f"chainlab.bench.{args.benchmark}")
    engine.ensure(
        ("openssl-3.5", *PARTS.get(args.benchmark, ())),
        say=lambda text: print(f"chainlab: {text}", file=sys.stderr, flush=True),
    )
    return module.main(args.args) or 0
