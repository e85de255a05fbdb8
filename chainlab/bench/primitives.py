"""`chainlab bench primitives`: every primitive chainlab can place, timed in-process through
the engine's OpenSSL, and the reference handshakes of the TLS overhead: how long the whole
measurement takes (target: at most 3 minutes at a 2 % interval) and each primitive's mean.
Beside them, every signature the other implementations' engines time (OpenSSL 4.0, aws-lc
through the rustls engine, BoringSSL, Go, liboqs' ML-DSA), with its ratio to OpenSSL 3.5's
(docs/methods/cost-model.md#implementations).

Every signature algorithm (sign and verify on the CertificateVerify content, verify on a
TBSCertificate), every group (key generation, encapsulation / decapsulation or derivation),
every certificate decompression. Sampling as a campaign run does it
(chainlab.runner.primitives): adaptive to --target, at most --cap seconds of timed
operations per primitive; that cap is what bounds the slowest SLH-DSA signatures (over a
second each) and so the whole run. Nothing is taken from the cache; what is measured is
added to it and written to --store (a store of its own, with the machine facts; by default
bench-primitives-<UTC time>.duckdb beside the primitives cache, ~/.cache/chainlab, never a
file of the working directory).

    chainlab bench primitives [-- --store FILE] [--target 0.02] [--cap 8]
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
import uuid
from pathlib import Path

from chainlab import engine, stats
from chainlab.campaign.model import PrimitivesPlan
from chainlab.model.implementations import REFERENCE
from chainlab.runner import primitives, primitives_cache, references
from chainlab.store import Store

TARGET_SECONDS = 180


def default_store(info: dict) -> Path:
    """Where a run without --store writes: beside this machine's primitives cache, named by
    its UTC start time."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return primitives_cache.cache_path(info).with_name(f"bench-primitives-{stamp}.duckdb")


def label(implementation, key) -> str:
    subject, op, message = key
    return f"{implementation or REFERENCE}: {subject} {op}" + (f" {message}" if message else "")


def implementations_table(summary) -> None:
    """Each signature over the CertificateVerify content in every implementation that timed
    it, as a ratio to OpenSSL 3.5's (measured in this one run)."""
    sig = summary[(summary["message"] == "cv") & summary["implementation"].notna()]
    if sig.empty:
        return
    base = {
        (r["subject"], r["op"]): r["cpu_mean"]
        for r in sig.to_dict("records")
        if r["implementation"] == REFERENCE
    }
    print("\nsignatures per implementation (CPU ms per operation; × OpenSSL 3.5's):")
    for (subject, op), g in sig.groupby(["subject", "op"], sort=True):
        if len(g) < 2 or (subject, op) not in base:
            continue
        print(
            f"  {subject + ' ' + op:<22} "
            + "  ".join(
                f"{r['implementation']} {r['cpu_mean'] / 1e6:.4f} "
                f"({r['cpu_mean'] / base[(subject, op)]:.2f}×)"
                for r in g.to_dict("records")
            )
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="chainlab bench primitives", description=__doc__.split("\n")[0]
    )
    ap.add_argument(
        "--store",
        type=Path,
        default=None,
        help="the store to write (default: bench-primitives-<UTC time>.duckdb beside the "
        "primitives cache)",
    )
    ap.add_argument("--target", type=float, default=0.02, help="relative CI half-width")
    ap.add_argument("--cap", type=float, default=PrimitivesPlan.time_cap_s, help="s per primitive")
    args = ap.parse_args(argv)
    if args.store is None:
        args.store = default_store(engine.info())
    if args.store.exists():
        ap.error(f"--store {args.store} exists; choose a new file")
    plan = PrimitivesPlan(target_rel_halfwidth=args.target, time_cap_s=args.cap)
    eng = engine.path()
    items = primitives.all_items() + primitives.stack_items()
    run_id = uuid.uuid4().hex
    t0 = time.monotonic()
    marks: list[tuple[str, float]] = []

    def on_item(item, i, n):
        marks.append((label(item.implementation, item.key), time.monotonic()))
        print(f"\r[{i + 1}/{n}] {marks[-1][0]:<48}", end="", flush=True)

    with tempfile.TemporaryDirectory(prefix="chainlab-bench-primitives-") as tmp:
        out = primitives.ensure(
            eng, items, plan, run_id, Path(tmp), read_cache=False, on_item=on_item
        )
    wall = time.monotonic() - t0
    print("\r" + " " * 60)
    for note in out.host_notes:
        print(f"host: {note}")
    with Store.create(args.store) as st:
        st.begin_run(primitives_cache.run_row(run_id, engine.info(), "bench primitives"))
        st.write_primitives(out.rows)
        st.end_run(run_id, "completed")
        summary = st.primitive_summary()
    spent = {}
    for (name, at), (_n, nxt) in zip(marks, [*marks[1:], ("end", t0 + wall)], strict=True):
        spent[name] = nxt - at
    print(f"{'primitive':<56} {'mean ms':>10} {'95% CI ±':>9} {'n':>7} {'wall s':>7}")
    capped = 0
    for r in summary.to_dict("records"):
        message = r["message"] if isinstance(r["message"], str) else None
        name = label(r["implementation"], (r["subject"], r["op"], message))
        n = int(r["n"])
        half = (
            stats.z_value(plan.confidence) * stats.se_mean(r["cpu_var"] or 0, n) / r["cpu_mean"]
            if n > 1
            else math.inf
        )
        if half > plan.target_rel_halfwidth:
            capped += 1
        print(
            f"{name:<56} {r['cpu_mean'] / 1e6:>10.4f} {100 * half:>8.2f}% {n:>7} "
            f"{spent.get(name, 0.0):>7.2f}"
        )
    implementations_table(summary)
    print(
        f"\nprimitives: {len(items)} primitives + {len(references.reference_keys())} reference "
        f"handshake sets in {wall:.1f} s (target: at most {TARGET_SECONDS} s); "
        f"{capped} stopped at the {plan.time_cap_s:g} s cap before the "
        f"{100 * plan.target_rel_halfwidth:g} % interval; store {args.store}"
        + (f"; cache not updated: {out.cache_note}" if out.cache_note else "")
    )
    return 0
