"""Certificate compression, judged (RFC 8879): what compressing the Certificate message
saves a store's hierarchies, what it costs the client, and what that does to latency, beside
the engineering guide's claim (chainlab/data/guide_claims.csv).

Per scenario with compression, against its twin without (the same scenario otherwise):
- the Certificate message body before and after compression, as the server's ready line
  reported them (a chain that does not shrink is not installed and goes uncompressed), the
  saving in bytes and percent, and the bytes the client read less (on the wire);
- the client's decompression CPU: the measured client CPU difference to the twin (with a
  Welch interval) and, where the store holds primitives, the decompression primitive scaled
  to the message;
- the latency ratio to the twin (delta-method interval), on loopback and each profile.
Verdict per signature family of the hierarchy: the guide's range holds where the family's
median saving reaches its low end; it does not where even the largest saving falls short.
"""

from __future__ import annotations

import math

import pandas as pd

from chainlab.analysis import twins
from chainlab.analysis.paper import DATA_DIR
from chainlab.analysis.registry import produces
from chainlab.model.cost import DECOMPRESS_BYTES

# RFC 8879 §4: a CompressedCertificate carries, beyond the compressed bytes, the algorithm
# (2 bytes), the uncompressed length (3) and the compressed data's length (3): what a client
# reads less is the saving minus these (checked against the engine in
# tests/runner/test_compression_run.py).
COMPRESSED_CERT_EXTRA = 8


def guide_claim(name: str = "certificate_compression_saving") -> dict:
    """One of the guide's claims (chainlab/data/guide_claims.csv): low, high, quote, line;
    by default the compression claim this module judges."""
    claims = pd.read_csv(DATA_DIR / "guide_claims.csv", comment="#")
    row = claims[claims["claim"] == name].iloc[0]
    return {k: row[k] for k in ("low", "high", "quote", "line")}


def family_of(hierarchy: str) -> str:
    """The hierarchy's signature family for the verdict: post-quantum families by name,
    'mixed' when it holds several, 'classical' without either."""
    pq = [f for f in ("ML", "SLH") if f in hierarchy.replace("/", " ").split()]
    if len(pq) > 1:
        return "mixed ML-DSA + SLH-DSA"
    if pq:
        return {"ML": "ML-DSA", "SLH": "SLH-DSA"}[pq[0]]
    return "classical"


def per_scenario(summary: pd.DataFrame, primitives: pd.DataFrame, level: float) -> pd.DataFrame:
    """One row per successful compressed scenario that has an uncompressed twin."""
    if summary.empty or "cert_message_bytes" not in summary:
        return pd.DataFrame()
    decompress = {}
    if primitives is not None and len(primitives):
        d = primitives[primitives["op"] == "decompress"]
        decompress = dict(zip(d["subject"], d["cpu_mean"] / 1e6, strict=True))
    rows = []
    for r, twin in twins.pairs(summary, "cert_compression", "none"):
        before = r.get("cert_message_bytes")
        if before is None or not math.isfinite(before):
            continue
        installed = bool(r.get("cert_compression_installed"))
        after = r["cert_compressed_bytes"] if installed else before
        cpu_diff, cpu_lo, cpu_hi = twins.difference(r, twin, "client_cpu_ms", level)
        ratio, lo, hi = twins.ratio(r, twin, "mean_ms", level)
        per_byte = decompress.get(r["cert_compression"])
        rows.append(
            {
                "scenario_id": r["scenario_id"],
                "twin_id": twin["scenario_id"],
                "hierarchy": r["hierarchy"],
                "family": family_of(r["hierarchy"]),
                "algorithm": r["cert_compression"],
                "network": r["network"],
                "handshake_mode": r["handshake_mode"],
                "installed": installed,
                "before_bytes": int(before),
                "after_bytes": int(after),
                "saving_bytes": int(before - after),
                "saving": (before - after) / before if before else math.nan,
                "wire_saving_bytes": twin["bytes_read"] - r["bytes_read"],
                # What the sizes say the client should read less (0 when not installed).
                "expected_wire_saving_bytes": (
                    int(before - after) - COMPRESSED_CERT_EXTRA if installed else 0
                ),
                "client_cpu_diff_ms": cpu_diff,
                "client_cpu_diff_ms_lo": cpu_lo,
                "client_cpu_diff_ms_hi": cpu_hi,
                "decompress_ms": per_byte * before / DECOMPRESS_BYTES if per_byte else math.nan,
                "latency_ratio": ratio,
                "latency_ratio_lo": lo,
                "latency_ratio_hi": hi,
            }
        )
    return pd.DataFrame(rows)


def verdicts(rows: pd.DataFrame) -> pd.DataFrame:
    """Per family (full handshakes, where a Certificate is sent): savings against the claim."""
    claim = guide_claim()
    if rows.empty:
        return pd.DataFrame()
    full = rows[rows["handshake_mode"] == "full"].drop_duplicates(["hierarchy", "algorithm"])
    out = []
    for family, g in full.groupby("family", sort=True):
        low, median, high = g["saving"].min(), g["saving"].median(), g["saving"].max()
        if median >= claim["low"]:
            verdict = "holds"
        elif high < claim["low"]:
            verdict = "does not hold"
        else:
            verdict = "holds for some"
        out.append(
            {
                "family": family,
                "n": len(g),
                "saving_min": low,
                "saving_median": median,
                "saving_max": high,
                "claim_low": claim["low"],
                "claim_high": claim["high"],
                "verdict": verdict,
            }
        )
    return pd.DataFrame(out)


@produces("compression")
def _analysis_compression(a) -> pd.DataFrame:
    return per_scenario(a.summary, a.data.primitives, a.config.confidence_level)


@produces("compression_verdicts")
def _analysis_compression_verdicts(a) -> pd.DataFrame:
    return verdicts(a.compression)
