"""Synthetic result stores with known content, for tests and the report benchmark.

A store is built by executing chainlab/store/schema.sql with DuckDB and inserting rows, so it
is exactly what the analysis reads from a real run. Nothing here is a measurement: runs are
marked `"synthetic": true` in their machine record and the campaign file is named
`synthetic-*.toml`.

Latencies and CPU times are log-normal with a given mean and coefficient of variation (cv 0
gives constants, for exact answers); bytes are constants as in TLS. Certificate sizes come
from `CERT_PART_BYTES` (public key + signature sizes of FIPS 204/205) so chain sizes are
plausible. Emulated networks: a scenario names its profile (`network`), and `build_store`'s
`network_profiles` (rows from `network_profile(...)`) fill the `network_profiles` table the
way the runner does (configured as the campaign declares it, measured as calibration
reports it, `flagged` when the measured RTT or rate is off by more than 5 %).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from chainlab.campaign.estimate import KEY_SIG_BYTES

# Public key and signature sizes per algorithm: the estimator's table (FIPS 204/205 etc.).
CERT_PART_BYTES = KEY_SIG_BYTES
# Fixed part of a certificate (names, validity, extensions, DER framing) in the synthetic PKI.
CERT_OVERHEAD_BYTES = 250

_ID_SHORT = {"ml-dsa": "ml", "slh-dsa": "slh", "ecdsa": "ec", "ed-dsa": "ed", "rsa": "rsa"}
_FAMILY_DEFAULT = {"ml-dsa": "ML-DSA-65", "slh-dsa": "SLH-DSA-SHAKE-192s"}

SAMPLE_COLUMNS = [
    "run_id",
    "scenario_id",
    "seq",
    "warmup",
    "conn_id",
    "start_unix_ns",
    "outcome",
    "error_category",
    "error_detail",
    "connect_ns",
    "handshake_ns",
    "total_ns",
    "client_cpu_ns",
    "client_cpu_user_us",
    "client_cpu_sys_us",
    "bytes_read",
    "bytes_written",
    "conn_bytes_read",
    "conn_bytes_written",
    "grp",
    "sigalg",
    "resumed",
    "verify",
    "chain_len",
    "chain_der_bytes",
    "server_handshake_ns",
    "server_cpu_ns",
    "server_cpu_user_us",
    "server_cpu_sys_us",
    "server_bytes_read",
    "server_bytes_written",
    "server_outcome",
    "server_error_category",
]


def kex_family(kex: str) -> str:
    k = kex.upper()
    if "MLKEM" in k and k.startswith("MLKEM"):
        return "pure_pq"
    if "MLKEM" in k:
        return "hybrid"
    return "classical"


@dataclass
class SyntheticScenario:
    """One scenario of a synthetic store and how to draw its samples."""

    kex: str = "X25519MLKEM768"
    depth: int = 3
    root_alg: str | None = "ML-DSA-65"
    int1_alg: str | None = "ML-DSA-65"
    int2_alg: str | None = None
    leaf_alg: str = "ML-DSA-65"
    served_chain: str = "leaf+intermediates"
    handshake_mode: str = "full"
    cert_compression: str = "none"
    network: str = "loopback"
    scenario_id: str | None = None
    campaigns: tuple[str, ...] = ()
    status: str = "completed"
    failure_cause: str | None = None
    n: int = 200  # successful measured handshakes
    n_failed: int = 0  # failed measured handshakes
    n_warmup: int = 5
    error_category: str = "handshake"
    latency_ms: float = 1.0
    latency_cv: float = 0.0
    connect_fraction: float = 0.1
    server_cpu_ms: float = 0.4
    client_cpu_ms: float = 0.4
    cpu_cv: float = 0.0
    bytes_read: int = 16000
    bytes_written: int = 1500
    overrides: dict = field(default_factory=dict)  # column -> array of length n (ok rows)

    def __post_init__(self):
        if self.depth < 2:
            self.root_alg = None
        if self.depth < 3:
            self.int1_alg = None
        if self.depth < 4:
            self.int2_alg = None
        if self.scenario_id is None:
            self.scenario_id = default_scenario_id(self)

    def chain(self) -> list[tuple[str, str]]:
        """(role, algorithm) from the leaf up, as the engine numbers positions."""
        if self.depth == 1:
            return [("self-signed", self.leaf_alg)]
        out = [("leaf", self.leaf_alg)]
        if self.depth >= 4:
            out.append(("int2", self.int2_alg))
        if self.depth >= 3:
            out.append(("int1", self.int1_alg))
        out.append(("root", self.root_alg))
        return out


def default_scenario_id(s: SyntheticScenario) -> str:
    """A compositional id like the campaign's: x25519mlkem768__slh_root__ml_int__ml_leaf."""
    from chainlab.analysis.families import family

    def slug(alg: str) -> str:
        fam = family(alg)
        if _FAMILY_DEFAULT.get(fam) == alg:
            return _ID_SHORT[fam]
        return alg.lower().replace("-", "")

    parts = [s.kex.lower()]
    if s.depth >= 2:
        parts.append(f"{slug(s.root_alg)}_root")
    if s.depth >= 3:
        parts.append(f"{slug(s.int1_alg)}_int")
    if s.depth >= 4:
        parts.append(f"{slug(s.int2_alg)}_int2")
    parts.append(f"{slug(s.leaf_alg)}_leaf")
    if s.served_chain != "leaf+intermediates":
        parts.append("served_" + s.served_chain.replace("+", "_"))
    if s.handshake_mode != "full":
        parts.append(s.handshake_mode)
    if s.cert_compression != "none":
        parts.append(s.cert_compression)
    if s.network != "loopback":
        parts.append("net_" + s.network)
    return "__".join(parts)


def _cert_bytes(chain: list[tuple[str, str]]) -> list[int]:
    sizes = []
    for i, (_, alg) in enumerate(chain):
        issuer = chain[i + 1][1] if i + 1 < len(chain) else alg
        pk = CERT_PART_BYTES.get(alg, (500, 0))[0]
        sig = CERT_PART_BYTES.get(issuer, (0, 500))[1]
        sizes.append(CERT_OVERHEAD_BYTES + pk + sig)
    return sizes


def _served(s: SyntheticScenario, chain) -> list[bool]:
    out = []
    for role, _ in chain:
        if role in ("leaf", "self-signed"):
            out.append(True)
        elif role in ("int1", "int2"):
            out.append(s.served_chain in ("leaf+intermediates", "full"))
        else:
            out.append(s.served_chain == "full")
    return out


def _lognormal(rng, mean: float, cv: float, n: int) -> np.ndarray:
    if cv <= 0:
        return np.full(n, float(mean))
    sigma2 = math.log1p(cv * cv)
    return rng.lognormal(math.log(mean) - sigma2 / 2, math.sqrt(sigma2), n)


def _samples(s: SyntheticScenario, run_id: str, rng, t0_ns: int) -> pd.DataFrame:
    chain = s.chain()
    served = _served(s, chain)
    sizes = _cert_bytes(chain)
    chain_len = sum(served)
    chain_bytes = sum(sz for sz, sv in zip(sizes, served, strict=True) if sv)
    n_ok, n_fail, n_warm = s.n, s.n_failed, s.n_warmup
    total = n_warm + n_ok + n_fail
    lat = _lognormal(rng, s.latency_ms * 1e6, s.latency_cv, n_warm + n_ok)
    srv = _lognormal(rng, s.server_cpu_ms * 1e6, s.cpu_cv, n_warm + n_ok)
    cli = _lognormal(rng, s.client_cpu_ms * 1e6, s.cpu_cv, n_warm + n_ok)
    cols: dict[str, np.ndarray] = {
        "total_ns": lat,
        "server_cpu_ns": srv,
        "client_cpu_ns": cli,
        "bytes_read": np.full(n_warm + n_ok, s.bytes_read, dtype=np.float64),
        "bytes_written": np.full(n_warm + n_ok, s.bytes_written, dtype=np.float64),
        "chain_der_bytes": np.full(n_warm + n_ok, chain_bytes, dtype=np.float64),
        "chain_len": np.full(n_warm + n_ok, chain_len, dtype=np.float64),
    }
    for k, v in s.overrides.items():
        v = np.asarray(v, dtype=np.float64)
        if v.size != n_ok:
            raise ValueError(f"override {k} has {v.size} values, scenario has n = {n_ok}")
        cols.setdefault(k, np.full(n_warm + n_ok, np.nan))
        cols[k] = np.concatenate([cols[k][:n_warm], v])
    # The server writes what the client reads and reads what it writes (to the end of the
    # handshake), unless an override sets the server's side on its own.
    cols.setdefault("server_bytes_written", cols["bytes_read"])
    cols.setdefault("server_bytes_read", cols["bytes_written"])
    ok_n = n_warm + n_ok
    idx = np.arange(total)
    seq_ok = idx[:ok_n]
    df = pd.DataFrame(
        {
            "run_id": run_id,
            "scenario_id": s.scenario_id,
            "seq": idx.astype(np.int64),
            "warmup": idx < n_warm,
            "conn_id": [f"{s.scenario_id[:6]}{i:010x}" for i in idx],
            "start_unix_ns": t0_ns + idx.astype(np.int64) * 5_000_000,
        }
    )
    ok = idx < ok_n
    df["outcome"] = np.where(ok, "ok", "failed")
    df["error_category"] = np.where(ok, None, s.error_category)
    df["error_detail"] = np.where(ok, None, f"synthetic {s.error_category} failure")

    def col(values, dtype="Int64"):
        full = np.full(total, np.nan)
        full[seq_ok] = values
        out = pd.Series(np.round(full), dtype="Float64")
        return out.astype(dtype)

    tot = np.round(cols["total_ns"])
    connect = np.round(tot * s.connect_fraction)
    df["connect_ns"] = col(connect)
    df["handshake_ns"] = col(tot - connect)
    df["total_ns"] = col(tot)
    df["client_cpu_ns"] = col(cols["client_cpu_ns"])
    df["client_cpu_user_us"] = col(cols["client_cpu_ns"] / 1e3 * 0.8)
    df["client_cpu_sys_us"] = col(cols["client_cpu_ns"] / 1e3 * 0.2)
    df["bytes_read"] = col(cols["bytes_read"])
    df["bytes_written"] = col(cols["bytes_written"])
    df["conn_bytes_read"] = col(cols["bytes_read"])
    df["conn_bytes_written"] = col(cols["bytes_written"])
    df["grp"] = np.where(ok, s.kex, None)
    df["sigalg"] = np.where(ok, s.leaf_alg.lower().replace("-", ""), None)
    df["resumed"] = pd.array(np.where(ok, s.handshake_mode == "resumed", False), dtype="boolean")
    df.loc[~ok, "resumed"] = pd.NA
    df["verify"] = True
    df["chain_len"] = col(cols["chain_len"], "Int32")
    df["chain_der_bytes"] = col(cols["chain_der_bytes"])
    df["server_handshake_ns"] = col((tot - connect) * 0.9)
    df["server_cpu_ns"] = col(cols["server_cpu_ns"])
    df["server_cpu_user_us"] = col(cols["server_cpu_ns"] / 1e3 * 0.9)
    df["server_cpu_sys_us"] = col(cols["server_cpu_ns"] / 1e3 * 0.1)
    df["server_bytes_read"] = col(cols["server_bytes_read"])
    df["server_bytes_written"] = col(cols["server_bytes_written"])
    df["server_outcome"] = np.where(ok, "ok", "failed")
    df["server_error_category"] = np.where(ok, None, s.error_category)
    return df[SAMPLE_COLUMNS]


def default_campaign_toml(baseline: str | None, analysis: dict | None = None) -> str:
    """A small campaign text holding what the report reads: `baseline` and `[analysis]`."""
    lines = ["# synthetic campaign (chainlab.analysis.synthetic)", 'name = "synthetic"']
    if baseline is not None:
        lines.append(f"baseline = {json.dumps(baseline)}")
    if analysis:
        scalars = {k: v for k, v in analysis.items() if not isinstance(v, dict)}
        tables = {k: v for k, v in analysis.items() if isinstance(v, dict)}
        lines.append("")
        lines.append("[analysis]")
        for k, v in scalars.items():
            lines.append(f"{k} = {json.dumps(v)}")
        for t, body in tables.items():
            lines.append("")
            lines.append(f"[analysis.{t}]")
            for k, v in body.items():
                lines.append(f"{k} = {json.dumps(v)}")
    return "\n".join(lines) + "\n"


# Calibration tolerance a profile is flagged by (docs/network.md): measured RTT or rate off
# the configured value by more than 5 %.
FLAG_TOLERANCE = 0.05


def network_profile(
    name: str,
    *,
    delay_ms: float = 0.0,
    jitter_ms: float = 0.0,
    rate_mbit: float | None = None,
    loss: float = 0.0,
    mtu: int = 1500,
    initcwnd: int | None = None,
    measured_rtt_ms: float | None = None,
    measured_rate_mbit: float | None = None,
    measured_loss: float | None = None,
    tcp_mss: int | None = None,
    flagged: bool | None = None,
) -> dict:
    """A `network_profiles` row for `build_store`: `configured` as the campaign file's
    `[network.<name>]` table gives it (chainlab.campaign.model.NetworkProfile.to_dict()),
    `measured` with the calibration's keys (None: not calibrated). `flagged` defaults to
    measured RTT or rate off the configured one by more than 5 % (the calibration's rule
    without its absolute slack, which these tests do not need)."""
    configured = {
        "name": name,
        "delay_ms": float(delay_ms),
        "jitter_ms": float(jitter_ms),
        "rate_mbit": rate_mbit,
        "loss": float(loss),
        "mtu": mtu,
        "queue_packets": None,
        "initcwnd": initcwnd,
        "backend": "tun",
        "seed": 1,
        "description": "",
    }
    measured = None
    if measured_rtt_ms is not None:
        measured = {
            "profile": name,
            "rtt_ms": measured_rtt_ms,
            "rtt_ms_min": measured_rtt_ms,
            "rtt_ms_max": measured_rtt_ms,
            "rtt_samples": 15,
            "expected_rtt_ms": 2 * delay_ms,
            "rate_mbit": measured_rate_mbit,
            "loss": measured_loss if measured_loss is not None else loss,
            "loss_probes": 1000,
            "tcp_mss": tcp_mss if tcp_mss is not None else mtu - 52,
            "configured_rtt_ms": 2 * delay_ms,
            "configured_rate_mbit": rate_mbit,
            "configured_loss": loss,
            "flag_reasons": [],
        }
    if flagged is None:
        flagged = False
        if measured is not None:
            rtt = 2 * delay_ms
            if rtt > 0 and abs(measured_rtt_ms - rtt) / rtt > FLAG_TOLERANCE:
                flagged = True
            if rate_mbit and measured_rate_mbit is not None:
                flagged |= abs(measured_rate_mbit - rate_mbit) / rate_mbit > FLAG_TOLERANCE
    if measured is not None:
        measured["flagged"] = bool(flagged)
    return {"profile": name, "configured": configured, "measured": measured, "flagged": flagged}


def schema_sql() -> str:
    """The store schema, read from the package (chainlab/store/schema.sql)."""
    return (Path(__file__).resolve().parent.parent / "store" / "schema.sql").read_text()


def build_store(
    path,
    scenarios: list[SyntheticScenario],
    *,
    baseline: str | None = None,
    analysis: dict | None = None,
    campaign_toml: str | None = None,
    seed: int = 1,
    started_at: dt.datetime = dt.datetime(2026, 4, 6, 12, 0, 0),
    machine: dict | None = None,
    network_profiles: list[dict] = (),
) -> Path:
    """Write a store with `scenarios` to `path` (overwritten) and return the path.
    `network_profiles`: rows from `network_profile(...)`, stored for the run."""
    p = Path(path)
    if p.exists():
        p.unlink()
    rng = np.random.default_rng(seed)
    text = campaign_toml if campaign_toml is not None else default_campaign_toml(baseline, analysis)
    run_id = hashlib.sha256(f"synthetic-{seed}".encode()).hexdigest()[:32]
    machine = machine or {
        "synthetic": True,
        "cpu_model": "synthetic (no measurement)",
        "cores": 2,
        "memory_bytes": 8 * 2**30,
        "kernel": "n/a",
        "governor": None,
        "os": "n/a",
    }
    engine_info = {"synthetic": True, "openssl": {"version": "3.5.5", "patch_sha256": "0" * 64}}
    con = duckdb.connect(str(p))
    try:
        con.execute(schema_sql())
        con.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', '1'), "
            "('created_by', 'chainlab.analysis.synthetic')"
        )
        ended = started_at + dt.timedelta(seconds=60 * max(1, len(scenarios)))
        con.execute(
            "INSERT INTO runs (run_id, started_at, ended_at, status, campaign_file_name, "
            "campaign_file_sha256, campaign_toml, chainlab_version, chainlab_commit, "
            "engine_info, openssl_version, openssl_patch_sha, machine, options) "
            "VALUES (?, ?, ?, 'completed', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                run_id,
                started_at,
                ended,
                "synthetic-campaign.toml",
                hashlib.sha256(text.encode()).hexdigest(),
                text,
                "0.1.0",
                "synthetic",
                json.dumps(engine_info),
                "3.5.5",
                "0" * 16,
                json.dumps(machine),
                json.dumps({"seed": seed}),
            ],
        )
        t0 = int(started_at.replace(tzinfo=dt.UTC).timestamp() * 1e9)
        frames = []
        for i, s in enumerate(scenarios):
            chain = s.chain()
            sizes = _cert_bytes(chain)
            served = _served(s, chain)
            params = {
                "kex": s.kex,
                "kex_family": kex_family(s.kex),
                "depth": s.depth,
                "root_alg": s.root_alg,
                "int1_alg": s.int1_alg,
                "int2_alg": s.int2_alg,
                "leaf_alg": s.leaf_alg,
                "served_chain": s.served_chain,
                "handshake_mode": s.handshake_mode,
                "cert_compression": s.cert_compression,
                "network": s.network,
            }
            con.execute(
                "INSERT INTO scenarios (scenario_id, kex, kex_family, depth, root_alg, int1_alg, "
                "int2_alg, leaf_alg, served_chain, handshake_mode, cert_compression, network, "
                "params) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [s.scenario_id, *params.values(), json.dumps(params)],
            )
            for c in s.campaigns:
                con.execute(
                    "INSERT INTO campaign_scenarios (campaign, scenario_id) VALUES (?, ?)",
                    [c, s.scenario_id],
                )
            for pos, ((role, alg), size, sv) in enumerate(zip(chain, sizes, served, strict=True)):
                con.execute(
                    "INSERT INTO certificates (scenario_id, position, role, algorithm, "
                    "der_bytes, sha256, served) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [s.scenario_id, pos, role, alg, size, f"{pos:064x}", sv],
                )
            start = started_at + dt.timedelta(seconds=60 * i)
            df = _samples(s, run_id, rng, t0 + i * 60_000_000_000)
            frames.append(df)
            served_bytes = sum(sz for sz, sv in zip(sizes, served, strict=True) if sv)
            engine_s = float(df["total_ns"].fillna(0).sum()) / 1e9
            con.execute(
                "INSERT INTO scenario_runs (run_id, scenario_id, status, started_at, ended_at, "
                "n_measured, n_ok, n_failed, n_warmup, stop_reason, ci_rel_halfwidth, "
                "failure_cause, pki_sha256, served_chain_der_bytes, served_chain_len, "
                "engine_seconds, server_exit) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'sigterm')",
                [
                    run_id,
                    s.scenario_id,
                    s.status,
                    start,
                    start + dt.timedelta(seconds=59),
                    s.n + s.n_failed,
                    s.n,
                    s.n_failed,
                    s.n_warmup,
                    "fixed_count" if s.status == "completed" else "failed",
                    None,
                    s.failure_cause,
                    f"{i:064x}",
                    served_bytes,
                    sum(served),
                    engine_s,
                ],
            )
            if s.n > 0:
                pos = 0
                for (role, alg), size, sv in zip(chain, sizes, served, strict=True):
                    if sv:
                        con.execute(
                            "INSERT INTO observed_chain (run_id, scenario_id, position, "
                            "der_bytes, subject, sig_alg, key_alg) VALUES (?, ?, ?, ?, ?, ?, ?)",
                            [run_id, s.scenario_id, pos, size, f"CN=synthetic {role}", alg, alg],
                        )
                        pos += 1
        for row in network_profiles:
            con.execute(
                "INSERT INTO network_profiles (run_id, profile, configured, measured, flagged) "
                "VALUES (?, ?, ?, ?, ?)",
                [
                    run_id,
                    row["profile"],
                    json.dumps(row["configured"]),
                    json.dumps(row["measured"]) if row["measured"] is not None else None,
                    bool(row["flagged"]),
                ],
            )
        if frames:
            all_samples = pd.concat(frames, ignore_index=True)
            con.register("synthetic_samples", all_samples)
            cols = ", ".join(SAMPLE_COLUMNS)
            con.execute(f"INSERT INTO samples ({cols}) SELECT {cols} FROM synthetic_samples")
            con.unregister("synthetic_samples")
    finally:
        con.close()
    return p


# A toy cost model for benchmark stores (not a measurement): per-handshake milliseconds of
# signing (the leaf key signs CertificateVerify) and verifying, from the primitive costs in
# /work/shared/reference/openssl-pq-facts.md ('openssl speed' on this machine kind).
_SIGN_MS = {"ML-DSA-65": 0.99, "SLH-DSA-SHAKE-192s": 1297.0, "SLH-DSA-SHAKE-128f": 37.0}
_VERIFY_MS = {"ML-DSA-65": 0.18, "SLH-DSA-SHAKE-192s": 1.06, "SLH-DSA-SHAKE-128f": 2.1}


def paper_matrix(total_samples: int = 200_000, heavy_share: float = 0.03) -> list:
    """The paper's 15 distinct scenario shapes (Appendix A, deduplicated) with toy costs.

    `total_samples` measured handshakes are split so each leaf-SLH scenario gets
    `heavy_share` of a light one's count (like the paper's 300 vs 10000); latencies follow
    the toy cost model above with a 10 % coefficient of variation.
    """
    ml, slh = "ML-DSA-65", "SLH-DSA-SHAKE-192s"
    shapes = [
        ("X25519", 2, ml, None, ml, "A"),
        ("X25519", 2, slh, None, slh, "A"),
        ("X25519MLKEM768", 2, ml, None, ml, "A"),
        ("X25519MLKEM768", 2, slh, None, slh, "A"),
        ("X25519MLKEM768", 3, ml, ml, ml, "B"),
        ("X25519MLKEM768", 3, ml, ml, slh, "B"),
        ("X25519MLKEM768", 3, ml, slh, slh, "B"),
        ("X25519MLKEM768", 3, slh, ml, ml, "B"),
        ("X25519MLKEM768", 3, slh, ml, slh, "B"),
        ("X25519MLKEM768", 3, slh, slh, slh, "B"),
        ("X25519MLKEM768", 2, ml, None, slh, "C"),
        ("X25519MLKEM768", 2, slh, None, ml, "C"),
        ("MLKEM768", 2, ml, None, ml, "D"),
        ("MLKEM768", 3, slh, ml, ml, "D"),
        ("MLKEM768", 2, slh, None, slh, "D"),
    ]
    weights = [heavy_share if leaf == slh else 1.0 for *_, leaf, _ in shapes]
    counts = np.floor(np.array(weights) / sum(weights) * total_samples).astype(int)
    counts[int(np.argmax(counts))] += total_samples - int(counts.sum())
    out = []
    for (kex, depth, root, int1, leaf, camp), n in zip(shapes, counts, strict=True):
        s = SyntheticScenario(
            kex=kex,
            depth=depth,
            root_alg=root,
            int1_alg=int1,
            leaf_alg=leaf,
            served_chain="full" if depth == 2 else "leaf+intermediates",
            campaigns=(camp,),
            n=int(n),
            n_warmup=0,
            latency_cv=0.1,
            cpu_cv=0.1,
        )
        chain = s.chain()
        served = _served(s, chain)
        verified = [chain[i + 1][1] for i in range(len(chain) - 1) if served[i]]
        kex_ms = {"X25519": 0.05, "X25519MLKEM768": 0.12, "MLKEM768": 0.08}[kex]
        server = 0.25 + kex_ms + _SIGN_MS[leaf]
        client = 0.25 + kex_ms + _VERIFY_MS[leaf] + sum(_VERIFY_MS[a] for a in verified)
        s.server_cpu_ms = server
        s.client_cpu_ms = client
        s.latency_ms = server + client + 0.05
        s.bytes_read = 1400 + sum(
            sz for sz, sv in zip(_cert_bytes(chain), served, strict=True) if sv
        )
        out.append(s)
    return out


def network_example(n: int = 30) -> tuple[list[SyntheticScenario], list[dict], str]:
    """A small store with emulated networks and exact answers (latencies are constants that
    follow chainlab.network.model where a test wants a ratio of 1): (scenarios, profile
    rows for `build_store(network_profiles=...)`, campaign text). The baseline is line A on
    loopback.

    Profiles: net20 (RTT 20 ms, measured 20.2: not flagged), net100 (RTT 100, measured 108:
    flagged), lan (RTT 1, measured 1.18: 18 % off yet not flagged, as the calibration's
    0.2 ms slack judges it), net20lossy (RTT 20, 2 % loss), slow20 (RTT 20 at 10 Mbit/s),
    and edge (RTT 50) declared only in the campaign text, with no calibration row.
    Lines (server flight = bytes read; initial window 10 x 1448 = 14,480 bytes):
      A  ML-DSA-65 root + leaf, X25519MLKEM768, 12,000-byte flight (fits): loopback 1 ms,
         lan 3.36 and net100 217 (1 + 2 measured RTTs), net20 41, slow20 52.2608 (2 RTT +
         11.2608 ms serialization), net20lossy 41 with 3 of n handshakes 200 ms slower (a
         retransmission timeout)
      B  SLH-DSA-SHAKE-128f root + ML-DSA-65 leaf, 40,000-byte flight (one slow-start round
         more): loopback 5 ms, net20 65, edge 155, net20lossy 65 with 2 of n 200 ms slower
      C  as A with X25519, but 60 % of its handshakes' server flights are 20,000 bytes (the
         rest 12,000): loopback 0.8 ms; on net20 60.8 ms (3 RTT) for the large flights and
         40.8 ms for the others
      D  as A with MLKEM768, on net100 only (no loopback twin): 217 ms
    """
    ml, slh = "ML-DSA-65", "SLH-DSA-SHAKE-128f"

    def ns(values_ms) -> np.ndarray:
        return np.asarray(values_ms, dtype=np.float64) * 1e6

    def line(kex, root, latency_ms, flight, network="loopback", **kw):
        return SyntheticScenario(
            kex=kex,
            depth=2,
            root_alg=root,
            leaf_alg=ml,
            served_chain="full",
            network=network,
            n=n,
            n_warmup=2,
            latency_ms=latency_ms,
            server_cpu_ms=0.4,
            client_cpu_ms=0.4,
            bytes_read=flight,
            bytes_written=1500,
            **kw,
        )

    lossy_a = np.full(n, 41.0)
    lossy_a[:3] += 200.0
    lossy_b = np.full(n, 65.0)
    lossy_b[:2] += 200.0
    k_c = round(0.6 * n)
    flight_c = np.where(np.arange(n) < k_c, 20000.0, 12000.0)
    lat_c = np.where(flight_c > 14480, 60.8, 40.8)
    kex = "X25519MLKEM768"
    scenarios = [
        line(kex, ml, 1.0, 12000),
        line(kex, ml, 41.0, 12000, "net20"),
        line(kex, ml, 217.0, 12000, "net100"),
        line(kex, ml, 3.36, 12000, "lan"),
        line(kex, ml, 52.2608, 12000, "slow20"),
        line(kex, ml, 41.0, 12000, "net20lossy", overrides={"total_ns": ns(lossy_a)}),
        line(kex, slh, 5.0, 40000),
        line(kex, slh, 65.0, 40000, "net20"),
        line(kex, slh, 155.0, 40000, "edge"),
        line(kex, slh, 65.0, 40000, "net20lossy", overrides={"total_ns": ns(lossy_b)}),
        line("X25519", ml, 0.8, 12000, overrides={"server_bytes_written": flight_c}),
        line(
            "X25519",
            ml,
            40.8,
            12000,
            "net20",
            overrides={"total_ns": ns(lat_c), "server_bytes_written": flight_c},
        ),
        line("MLKEM768", ml, 217.0, 12000, "net100"),
    ]
    profiles = [
        network_profile("net20", delay_ms=10, measured_rtt_ms=20.2),
        network_profile("net100", delay_ms=50, measured_rtt_ms=108.0),
        network_profile("lan", delay_ms=0.5, measured_rtt_ms=1.18, flagged=False),
        network_profile("net20lossy", delay_ms=10, loss=0.02, measured_rtt_ms=20.1,
                        measured_loss=0.021),
        network_profile("slow20", delay_ms=10, rate_mbit=10, measured_rtt_ms=20.3,
                        measured_rate_mbit=9.95),
    ]  # fmt: skip
    baseline = scenarios[0].scenario_id
    campaign = default_campaign_toml(baseline) + "\n[network.edge]\ndelay_ms = 25\n"
    return scenarios, profiles, campaign
