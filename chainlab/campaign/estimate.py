"""Run-time estimate of a campaign, for `chainlab validate` and the run's first ETA.

The cost model (docs/campaigns.md, "Estimated run time"):

    handshake_ms = BASE_MS + sign_ms(leaf) + sum(verify_ms(issuer) for each signed link)
    resumed handshake_ms = BASE_MS           (no certificate, no CertificateVerify)

The leaf's key signs CertificateVerify on every full handshake; the client verifies that
signature and the signature of every certificate on the path below the trust anchor.
Everything else (TCP, key exchange, record layer, process start) is lumped into BASE_MS.
Handshake counts per scenario: fixed mode `count`; adaptive mode a range from `min` to
`max`, cut at the time cap, with the expected count from an assumed coefficient of variation.
During a run the ETA rescales this model by the ratio of measured to estimated time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

from chainlab.campaign.model import Scenario

# Milliseconds per operation: `openssl speed -seconds 1 -mr <alg>` with the project's
# OpenSSL 3.5.5 on this machine kind (2 shared cores), one run per algorithm. A rough
# figure for an estimate only; the lab measures handshakes, never these.
SIGN_VERIFY_MS: dict[str, tuple[float, float]] = {
    "ML-DSA-44": (0.645, 0.128),
    "ML-DSA-65": (1.004, 0.159),
    "ML-DSA-87": (0.905, 0.253),
    "SLH-DSA-SHA2-128s": (310.0, 0.285),
    "SLH-DSA-SHA2-128f": (12.5, 0.740),
    "SLH-DSA-SHA2-192s": (500.0, 0.402),
    "SLH-DSA-SHA2-192f": (21.1, 1.148),
    "SLH-DSA-SHA2-256s": (453.0, 0.785),
    "SLH-DSA-SHA2-256f": (58.8, 1.445),
    "SLH-DSA-SHAKE-128s": (720.0, 0.740),
    "SLH-DSA-SHAKE-128f": (42.3, 2.555),
    "SLH-DSA-SHAKE-192s": (1430.0, 1.017),
    "SLH-DSA-SHAKE-192f": (67.9, 4.076),
    "SLH-DSA-SHAKE-256s": (1060.0, 1.618),
    "SLH-DSA-SHAKE-256f": (108.3, 2.910),
    "ECDSA-P256": (0.0153, 0.0452),
    "ECDSA-P384": (0.565, 0.476),
    "Ed25519": (0.0205, 0.0622),
    "RSA-2048": (0.233, 0.0140),
    "RSA-3072": (0.666, 0.0306),
}

# Everything in a loopback handshake that is not the leaf signature or chain verification:
# ML-DSA-65 root/leaf + X25519MLKEM768 handshakes measured by the engine through quick.toml on
# this machine kind averaged 1.9-2.1 ms (total_ns); minus that chain's 1.0 ms sign and
# 2 x 0.16 ms verify from the table above.
BASE_MS = 0.7

# Per-scenario fixed cost outside handshakes: server start and stop, client process starts,
# record parsing, the store commit (0.2-0.4 s per quick.toml scenario, measured).
SCENARIO_OVERHEAD_S = 0.4

# Assumed coefficient of variation of handshake latency, for the expected adaptive count.
# Measured through quick.toml and signature-placement.toml on a shared 2-core machine:
# millisecond scenarios 0.38-0.41 (scheduling and cache noise on top of a short handshake);
# signing-dominated ones (leaf sign >= 10 ms) 0.004-0.12, the high end under foreign load.
CV_SIGN_DOMINATED = 0.05
CV_FAST = 0.4


def handshake_ms(s: Scenario) -> float:
    """Estimated mean latency of one handshake of the scenario, in ms."""
    if s.handshake_mode == "resumed":
        return BASE_MS
    sign, _ = SIGN_VERIFY_MS.get(s.leaf_alg, (1.0, 0.2))
    # Signed links checked by the client: each certificate below the anchor is verified with
    # its issuer's key; the leaf's CertificateVerify with the leaf's key.
    verify = sum(SIGN_VERIFY_MS.get(a, (1.0, 0.2))[1] for a in s.hierarchy)
    return BASE_MS + sign + verify


@dataclass
class Estimate:
    handshakes_low: int
    handshakes_expected: int
    handshakes_high: int
    seconds_low: float
    seconds_expected: float
    seconds_high: float


def scenario(s: Scenario) -> Estimate:
    """Estimated handshake counts and seconds of one scenario."""
    p = s.sampling
    ms = handshake_ms(s)
    if p.mode == "fixed":
        low = expected = high = p.count
    else:
        cv = CV_SIGN_DOMINATED if ms - BASE_MS >= 10 else CV_FAST
        z = NormalDist().inv_cdf(0.5 + p.confidence / 2)
        need = math.ceil((z * cv / p.target_rel_halfwidth) ** 2)
        low, high = p.min, p.max
        expected = min(max(need, p.min), p.max)
    warm = p.warmup

    def secs(n: int) -> float:
        t = (n + warm) * ms / 1000
        if p.time_cap_s is not None:
            t = min(t, p.time_cap_s + ms / 1000)
        return t + SCENARIO_OVERHEAD_S

    def cap(n: int) -> int:
        if p.time_cap_s is None:
            return n
        return min(n, max(1, int(p.time_cap_s * 1000 / ms)))

    return Estimate(cap(low), cap(expected), cap(high), secs(low), secs(expected), secs(high))


def fmt_duration(seconds: float) -> str:
    """3725 -> '1h02m05s', 65 -> '1m05s', 4.2 -> '4.2s'."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}h{m:02d}m{sec:02d}s" if h else f"{m}m{sec:02d}s"
