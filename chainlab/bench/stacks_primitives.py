"""Part 3 of `chainlab bench stacks`: ML-DSA signing and verification per implementation, in
process, one operation per record (`primitives`, each engine's own subcommand): OpenSSL 3.5
and 4.0 (`chainlab-engine primitives`), BoringSSL (`chainlab-boring primitives`), aws-lc and
liboqs (`chainlab-rustls primitives`, `--signature-impl stack` and `liboqs`: the two
implementations the rustls stack signs with) and Go's crypto/mldsa (`chainlab-go
primitives`), on the TLS 1.3 CertificateVerify content, each operation's thread CPU.
Interleaved rounds, so every implementation meets the same drifting machine; medians over
all rounds, and each implementation's ratio to OpenSSL 3.5's.
"""

from __future__ import annotations

import json
import statistics
import subprocess

from chainlab import engine as engines

ALGORITHMS = ("ML-DSA-44", "ML-DSA-65", "ML-DSA-87")
OPS = ("sign", "verify")
# Each implementation: its name, the stack whose engine times it and the engine's extra
# flags; the reference first.
IMPLEMENTATIONS = (
    ("openssl-3.5", "openssl-3.5", ()),
    ("openssl-4.0", "openssl-4.0", ()),
    ("boringssl", "boringssl", ()),
    ("aws-lc", "rustls", ("--signature-impl", "stack")),
    ("liboqs", "rustls", ("--signature-impl", "liboqs")),
    ("go", "go", ()),
)
NAMES = tuple(name for name, _, _ in IMPLEMENTATIONS)
# Per round and operation: enough operations for a median within a few per cent of a
# sub-millisecond operation, few enough for the part to take well under a minute.
COUNT, WARMUP = 200, 20
ROUNDS = 3
TIMEOUT_S = 120


def run() -> dict[tuple[str, str, str], float]:
    """Median thread CPU in µs per (implementation, algorithm, op), printed as a table."""
    cmd = {name: [str(engines.stack_path(st)), *extra] for name, st, extra in IMPLEMENTATIONS}
    cpu: dict[tuple[str, str, str], list[float]] = {}
    for i in range(ROUNDS):
        order = NAMES if i % 2 == 0 else tuple(reversed(NAMES))
        for alg in ALGORITHMS:
            for op in OPS:
                for name in order:
                    cpu.setdefault((name, alg, op), []).extend(_time(cmd[name], alg, op))
    medians = {k: statistics.median(v) for k, v in cpu.items()}
    print(
        f"3. Signature primitives per implementation (median thread CPU µs over {ROUNDS} x "
        f"{COUNT} operations; the CertificateVerify content)"
    )
    print(f"   {'':18}" + "".join(f"{n:>12}" for n in NAMES) + "   ratios to openssl-3.5")
    for alg in ALGORITHMS:
        for op in OPS:
            row = [medians[(n, alg, op)] for n in NAMES]
            ratios = " ".join(f"{v / row[0]:.3f}" for v in row[1:])
            print(f"   {alg + ' ' + op:18}" + "".join(f"{v:12.1f}" for v in row) + f"   {ratios}")
    return medians


def _time(cmd: list[str], alg: str, op: str) -> list[float]:
    out = subprocess.run(
        [cmd[0], "primitives", *cmd[1:], "--subject", alg, "--op", op,
         "--count", str(COUNT), "--warmup", str(WARMUP)],
        capture_output=True, text=True, check=True, timeout=TIMEOUT_S,
    )  # fmt: skip
    records = [json.loads(line) for line in out.stdout.splitlines()]
    return [r["cpu_ns"] / 1e3 for r in records if not r["warmup"]]
