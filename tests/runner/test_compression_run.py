"""Certificate compression with the real engine: the sizes a run stores are the server's
ready-line figures, and the client reads less by exactly what they say."""

import subprocess

import pandas as pd
import pytest

import chainlab
from chainlab.analysis.analyze import analyze
from chainlab.analysis.compression import COMPRESSED_CERT_EXTRA
from chainlab.campaign import load
from chainlab.processes import spawn, stop_group, wait_ready
from chainlab.runner import pki
from chainlab.runner.campaign import RunOptions, run

pytestmark = pytest.mark.slow

CAMPAIGN = """
[campaign]
name = "compression"
order = "declared"
seed = 7
[sampling]
mode = "fixed"
count = 5
warmup = 1
[primitives]
measure = false
[matrix.m]
kex = ["X25519"]
hierarchy = [["ML-DSA-44", "ML-DSA-44", "ML-DSA-44"]]
cert_compression = ["none", "zlib", "brotli", "zstd"]
"""


def ready_line(engine_bin, pki_dir, algorithm, tmp_path):
    err = tmp_path / f"{algorithm}.stderr"
    with err.open("wb") as errf:
        proc = spawn(
            [str(engine_bin), "serve", "--pki", str(pki_dir), "--cert-compression", algorithm,
             "--records", str(tmp_path / f"{algorithm}.jsonl")],
            subprocess.PIPE, errf,
        )  # fmt: skip
    try:
        return wait_ready(proc, 30, err)["cert_compression"]
    finally:
        stop_group(proc)


def test_stored_sizes_are_the_ready_line_and_the_bytes_read(engine_bin, pki_cache, tmp_path):
    f = tmp_path / "c.toml"
    f.write_text(CAMPAIGN)
    store = tmp_path / "c.duckdb"
    summary = run(load(f), RunOptions(store=store, live_progress=False))
    assert len(summary.completed) == 4
    with chainlab.open(store) as st:
        sr = st.scenario_runs.set_index("scenario_id")
        assert st.primitive_samples.empty  # [primitives] measure = false
    pki_dir = pki.ensure(engine_bin, ("ML-DSA-44",) * 3, 7)
    a = analyze(store)
    rows = a.compression.set_index("algorithm")
    assert set(rows.index) == {"zlib", "brotli", "zstd"}
    for algorithm in ("zlib", "brotli", "zstd"):
        sid = f"x25519__mldsa44_root__mldsa44_int__mldsa44_leaf__{algorithm}"
        ready = ready_line(engine_bin, pki_dir, algorithm, tmp_path)
        assert sr.loc[sid, "cert_message_bytes"] == ready["uncompressed_bytes"]
        assert sr.loc[sid, "cert_compressed_bytes"] == ready["compressed_bytes"]
        assert bool(sr.loc[sid, "cert_compression_installed"]) == ready["installed"]
        r = rows.loc[algorithm]
        saving = ready["uncompressed_bytes"] - ready["compressed_bytes"]
        assert r["saving_bytes"] == saving > 0
        # Every handshake of a scenario reads the same bytes: the difference is exact.
        assert r["wire_saving_bytes"] == saving - COMPRESSED_CERT_EXTRA
        assert r["expected_wire_saving_bytes"] == r["wire_saving_bytes"]
    none = "x25519__mldsa44_root__mldsa44_int__mldsa44_leaf"
    assert pd.isna(sr.loc[none, "cert_message_bytes"])  # no compression, no sizes
    verdict = a.compression_verdicts.set_index("family").loc["ML-DSA"]
    assert verdict["verdict"] == "does not hold"  # ML-DSA chains shrink by a few per cent
    assert verdict["saving_max"] < 0.1
