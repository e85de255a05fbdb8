"""Part 3 of `chainlab bench stacks`: ML-DSA signing and verification per implementation, in
process, one operation per record (`primitives`, the engines' own subcommand): OpenSSL 3.5
and 4.0 (`chainlab-engine primitives`) and BoringSSL (`chainlab-boring primitives`), on the
TLS 1.3 CertificateVerify content, each operation's thread CPU. Interleaved rounds, so every
implementation meets the same drifting machine; medians over all rounds, and each
implementation's ratio to OpenSSL 3.5's. aws-lc (the rustls stack) and liboqs have no
`primitives` subcommand yet, so they are not timed here (their handshakes' instruction
counts are part 2's).
"""

from __future__ import annotations

import json
import statistics
import subprocess

from chainlab import engine as engines

ALGORITHMS = ("ML-DSA-44", "ML-DSA-65", "ML-DSA-87")
OPS = ("sign", "verify")
# The stacks whose engines time primitives, the reference first.
IMPLEMENTATIONS = ("openssl-3.5", "openssl-4.0", "boringssl")
# Per round and operation: enough operations for a median within a few per cent of a
# sub-millisecond operation, few enough for the part to take well under a minute.
COUNT, WARMUP = 200, 20
ROUNDS = 3
TIMEOUT_S = 120


def run() -> dict[tuple[str, str, str], float]:
    """Median thread CPU in µs per (implementation, algorithm, op), printed as a table."""
    binaries = {s: str(engines.stack_path(s)) for s in IMPLEMENTATIONS}
    cpu: dict[tuple[str, str, str], list[float]] = {}
    for i in range(ROUNDS):
        order = IMPLEMENTATIONS if i % 2 == 0 else tuple(reversed(IMPLEMENTATIONS))
        for alg in ALGORITHMS:
            for op in OPS:
                for stack in order:
                    cpu.setdefault((stack, alg, op), []).extend(_time(binaries[stack], alg, op))
    medians = {k: statistics.median(v) for k, v in cpu.items()}
    print(
        f"3. Signature primitives per implementation (median thread CPU µs over {ROUNDS} x "
        f"{COUNT} operations; CertificateVerify content; aws-lc and liboqs have no primitives "
        "command yet)"
    )
    print(f"   {'':22}" + "".join(f"{s:>14}" for s in IMPLEMENTATIONS) + "   ratios to openssl-3.5")
    for alg in ALGORITHMS:
        for op in OPS:
            row = [medians[(s, alg, op)] for s in IMPLEMENTATIONS]
            ratios = " ".join(f"{v / row[0]:.3f}" for v in row[1:])
            print(f"   {alg + ' ' + op:22}" + "".join(f"{v:14.1f}" for v in row) + f"   {ratios}")
    return medians


def _time(binary: str, alg: str, op: str) -> list[float]:
    out = subprocess.run(
        [binary, "primitives", "--subject", alg, "--op", op,
         "--count", str(COUNT), "--warmup", str(WARMUP)],
        capture_output=True, text=True, check=True, timeout=TIMEOUT_S,
    )  # fmt: skip
    records = [json.loads(line) for line in out.stdout.splitlines()]
    return [r["cpu_ns"] / 1e3 for r in records if not r["warmup"]]
