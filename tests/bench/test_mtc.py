"""The MTC benchmark's printing (the benchmark itself only prints figures)."""

import argparse

from chainlab.bench import mtc


def test_the_report_prints_issuance_and_the_verification_ratio(capsys):
    args = argparse.Namespace(batch=1 << 20, rounds=2, count=10)
    issued = [
        {"hash_s": 1.0, "wall_s": 1.2, "maxrss_mib": 12.0, "proof_hashes": 19,
         "standalone_der_bytes": 5000, "landmark_der_bytes": 2000},
        {"hash_s": 3.0, "wall_s": 3.2, "maxrss_mib": 14.0, "proof_hashes": 19,
         "standalone_der_bytes": 5000, "landmark_der_bytes": 2000},
    ]  # fmt: skip
    mtc.report(args, issued, 19, [10_000.0, 12_000.0], [100_000.0, 100_000.0])
    out = capsys.readouterr().out
    assert "batch of 1,048,576 entries" in out
    assert "hashing the batch:      2.000 s (1.000-3.000)" in out
    assert "per entry:              1907 ns" in out
    assert "proof 19 hashes = 608 B" in out
    assert "ratio MTC / ML-DSA-44:        0.110 (per round: 0.100, 0.120)" in out
    assert "standalone, 2 signatures:     211.0 us = 2.11 ML-DSA-44 verifications" in out
