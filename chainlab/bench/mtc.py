"""Merkle Tree Certificate benchmark: what issuing a batch costs the CA, and what accepting
a certificate costs the client, beside the signature verification it replaces.

Run as `chainlab bench mtc [-- --batch N --rounds R --count C]`. Prints figures only.

1. Issuance: `chainlab-engine pki --mtc-batch N` (default 2^20) for an ML-DSA-44 leaf with
   one ML-DSA-44 cosigner, R times: the engine's time to hash the batch (`hash_ns`: every
   entry built and hashed, depth first on two threads), the whole command's wall time and
   its peak resident memory (the engine's own VmHWM: a child's ru_maxrss would also count
   the forked Python's pages), as median and range.
2. Verification, in-process through `chainlab-engine primitives` on one core: a client's
   acceptance of a landmark-relative MTC (`mtc-verify`, with the proof length the batch
   gave) against one ML-DSA-44 verification of a CertificateVerify (`verify cv`), thread
   CPU per operation, median of C operations each, interleaved R times so drift falls on
   both; and a standalone certificate's client work (acceptance plus one ML-DSA-44
   verification per subtree signature) for 2 and 3 signatures, from the same medians.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from chainlab import engine as engine_binary

# The issue's batch: 2^20 entries (a ~7 minute checkpoint at the draft's per-CA rate).
DEFAULT_BATCH = 1 << 20
# The core the verifications run on (the machine's second when it has one, away from
# whatever the shell runs on core 0).
CPU = "1" if (os.cpu_count() or 1) > 1 else "0"


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="chainlab bench mtc")
    p.add_argument("--batch", type=int, default=DEFAULT_BATCH)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--count", type=int, default=300)
    args = p.parse_args(argv)
    eng = str(engine_binary.path())
    issued = [issue(eng, args.batch) for _ in range(args.rounds)]
    hashes = issued[0]["proof_hashes"]
    mtc_ns, verify_ns = [], []
    for _ in range(args.rounds):
        mtc_ns.append(primitive(eng, "ML-DSA-44", "mtc-verify", ["--message-bytes", str(hashes)],
                                args.count))  # fmt: skip
        verify_ns.append(primitive(eng, "ML-DSA-44", "verify", ["--message", "cv"], args.count))
    report(args, issued, hashes, mtc_ns, verify_ns)
    return 0


def issue(eng: str, batch: int) -> dict:
    """One `pki --mtc-batch`: the engine's hashing time, wall time, peak RSS (KiB)."""
    with tempfile.TemporaryDirectory(prefix="chainlab-bench-mtc-") as tmp:
        argv = [eng, "pki", "--chain", "ML-DSA-44", "--out", str(Path(tmp) / "pki"),
                "--mtc-batch", str(batch), "--mtc-cosigners", "ML-DSA-44"]  # fmt: skip
        start = time.monotonic()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out = proc.stdout.read() if proc.stdout else b""
        _, status, _ = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise SystemExit(f"pki --mtc-batch {batch} failed: {err.strip()}")
        line = json.loads(out.decode().splitlines()[-1])["mtc"]
        return {
            "hash_s": line["hash_ns"] / 1e9,
            "wall_s": wall,
            "maxrss_mib": (line.get("peak_rss_kib") or math.nan) / 1024,
            "proof_hashes": line["proof_hashes"],
            "standalone_der_bytes": line["standalone_der_bytes"],
            "landmark_der_bytes": line["landmark_der_bytes"],
        }


def primitive(eng: str, subject: str, op: str, extra: list[str], count: int) -> float:
    """Median thread CPU (ns) of `count` operations."""
    out = subprocess.run(
        [eng, "primitives", "--subject", subject, "--op", op, *extra,
         "--count", str(count), "--warmup", "20", "--cpus", CPU],
        check=True, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    rows = [json.loads(x) for x in out.stdout.splitlines()]
    return statistics.median(r["cpu_ns"] for r in rows if not r["warmup"])


def report(args, issued, hashes, mtc_ns, verify_ns) -> None:
    def spread(values, unit="", digits=3):
        return (
            f"{statistics.median(values):.{digits}f}{unit} "
            f"({min(values):.{digits}f}-{max(values):.{digits}f})"
        )

    n = args.batch
    print(f"chainlab bench mtc: batch of {n:,} entries, ML-DSA-44 leaf, {args.rounds} rounds")
    print("  issuance (pki --mtc-batch, ML-DSA-44 CA + 1 ML-DSA-44 cosigner):")
    print(f"    hashing the batch:      {spread([i['hash_s'] for i in issued], ' s')}")
    print(f"    whole command:          {spread([i['wall_s'] for i in issued], ' s')}")
    print(f"    peak resident memory:   {spread([i['maxrss_mib'] for i in issued], ' MiB', 1)}")
    per_entry = statistics.median(i["hash_s"] for i in issued) / n * 1e9
    print(f"    per entry:              {per_entry:.0f} ns (two threads)")
    first = issued[0]
    print(
        f"    certificates: landmark {first['landmark_der_bytes']:,} B, standalone "
        f"{first['standalone_der_bytes']:,} B; proof {hashes} hashes = {hashes * 32} B"
    )
    m, v = statistics.median(mtc_ns), statistics.median(verify_ns)
    print(f"  client verification (thread CPU, median per operation, core {CPU}):")
    print(f"    MTC acceptance ({hashes}-hash proof): {spread([x / 1e3 for x in mtc_ns], ' us')}")
    print(f"    one ML-DSA-44 verification:   {spread([x / 1e3 for x in verify_ns], ' us')}")
    rounds = ", ".join(f"{a / b:.3f}" for a, b in zip(mtc_ns, verify_ns, strict=True))
    print(f"    ratio MTC / ML-DSA-44:        {m / v:.3f} (per round: {rounds})")
    for k in (2, 3):
        print(f"    standalone, {k} signatures:     {(m + k * v) / 1e3:.1f} us "
              f"= {(m + k * v) / v:.2f} ML-DSA-44 verifications")  # fmt: skip
