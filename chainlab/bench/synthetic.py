"""Synthetic result stores with known content, for the report benchmark (`chainlab bench
report`) and the tests (whose own known-answer sets are in tests/synthetic.py).

Nothing here is a measurement. A store is written the way a run writes it: scenarios are
`chainlab.campaign.model.Scenario`s with ids from `chainlab.campaign.ids`, samples are
engine-shaped client and server records (docs/engine-records.md) paired by
`chainlab.runner.records.sample_rows`, and everything goes through `chainlab.store.Store`
(`begin_run`, `register_scenarios`, `write_scenario`, `end_run`). Runs are marked
`"synthetic": true` in their machine record and the campaign file is named
`synthetic-campaign.toml`.

Latencies and CPU times are log-normal with a given mean and coefficient of variation (cv 0
gives constants, for exact answers); bytes are constants as in TLS. Certificate sizes are
the run-time estimate's (`chainlab.model.flights.certificate_bytes`), so chain sizes are
plausible. Emulated networks: a scenario names its profile (`network`), and `build_store`'s
`network_profiles` (rows as tests/synthetic.py's `network_profile` makes them) fill the
`network_profiles` table the way the runner does (configured as the campaign declares it,
measured as calibration reports it, flagged by the calibration's tolerance).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import tomli_w

from chainlab import __version__, axes
from chainlab.axes.algorithms import resumption_ratio, token
from chainlab.campaign import ids
from chainlab.campaign.model import NetworkProfile, SamplingPolicy, Scenario
from chainlab.model import algorithm_costs, flights
from chainlab.network.profile import LOOPBACK
from chainlab.runner import records
from chainlab.store import ScenarioRows, Store

# Id tokens of the two algorithms the synthetic stores use most, as a campaign file's
# [aliases] would give them (every other algorithm gets its plain token: mldsa44, ...).
ALIASES = {"ML-DSA-65": "ml", "SLH-DSA-SHAKE-192s": "slh"}
# Sample columns a scenario's `overrides` may set, and the record field each one is: the
# client's (c) or the server's (s).
OVERRIDES = {
    "total_ns": ("c", "total_ns"),
    "client_cpu_ns": ("c", "cpu_ns"),
    "server_cpu_ns": ("s", "cpu_ns"),
    "bytes_read": ("c", "bytes_read"),
    "bytes_written": ("c", "bytes_written"),
    "server_bytes_read": ("s", "bytes_read"),
    "server_bytes_written": ("s", "bytes_written"),
}
# The sampling policy recorded with every synthetic scenario run (fixed counts).
SAMPLING = SamplingPolicy(
    mode="fixed", count=0, target_rel_halfwidth=0.01, confidence=0.95, min=1, max=1,
    time_cap_s=None, warmup=0, batch_warmup=0, timeout_ms=10_000, max_failed_fraction=0.5,
)  # fmt: skip
# Spacing of handshake start times within a scenario, and of scenarios within a run.
HANDSHAKE_SPACING_NS = 5_000_000
# The Certificate message's 4-byte handshake header, which the ready line's body excludes.
CERT_BODY_HEADER = 4
SCENARIO_SPACING_S = 60


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
    network: str = LOOPBACK
    client_auth: tuple[str, ...] = ()  # mutual TLS: the client hierarchy, root first
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
    # The server's CPU for a connection beyond its handshake span (accept bookkeeping,
    # close_notify, shutdown, close): conn_cpu_ns = cpu_ns + this. A toy default; measured
    # ones are 1-7 % of an ML-DSA-65 handshake.
    server_close_cpu_ms: float = 0.04
    client_cpu_ms: float = 0.4
    cpu_cv: float = 0.0
    bytes_read: int = 16000
    bytes_written: int = 1500
    # With compression: the Certificate message body's share left after it (the server's
    # ready line reports the body before and after; a share >= 1 is not installed).
    compressed_share: float = 0.97
    overrides: dict = field(default_factory=dict)  # OVERRIDES column -> n values (ok rows)
    # Values of other axes (chainlab.axes key -> value); the rest at their defaults.
    axis_values: dict = field(default_factory=dict)
    # A resumption mix (handshake_mode resumeNN): the share of its measured handshakes that
    # resumed (the first ones); None: the mix's own ratio.
    resumed_share: float | None = None

    def resumed(self, measured_index: int) -> bool:
        """Whether the measured handshake at this index (0 = the first after the warm-ups)
        resumed: all of them when resumed, the first share of them in a mix."""
        if self.handshake_mode == "resumed":
            return True
        if self.handshake_mode == "full" or measured_index < 0:
            return False
        share = self.resumed_share
        if share is None:
            share = resumption_ratio(self.handshake_mode)
        return measured_index < round(share * self.n)

    def __post_init__(self):
        # Positions a hierarchy of this depth does not have hold no algorithm.
        if self.depth < 2:
            self.root_alg = None
        if self.depth < 3:
            self.int1_alg = None
        if self.depth < 4:
            self.int2_alg = None
        unknown = sorted(set(self.overrides) - set(OVERRIDES))
        if unknown:
            raise ValueError(f"override {unknown[0]!r}; allowed: {', '.join(OVERRIDES)}")
        for k, v in self.overrides.items():
            if np.asarray(v).size != self.n:
                raise ValueError(
                    f"override {k} has {np.asarray(v).size} values, scenario has n = {self.n}"
                )

    @property
    def hierarchy(self) -> tuple[str, ...]:
        """Algorithms root first, as a campaign declares them (depth 1: the leaf alone)."""
        chain = (*(self.root_alg, self.int1_alg, self.int2_alg)[: self.depth - 1], self.leaf_alg)
        return tuple(a for a in chain if a is not None)

    @property
    def parts(self) -> dict:
        """Axis key -> value, as a campaign's matrix gives them."""
        parts = {a.key: a.default for a in axes.registered()}
        parts.update(
            kex=self.kex,
            hierarchy=self.hierarchy,
            served_chain=self.served_chain,
            handshake_mode=self.handshake_mode,
            cert_compression=self.cert_compression,
            network=self.network,
            client_auth=self.client_auth,
        )
        return {**parts, **self.axis_values}

    @property
    def scenario_id(self) -> str:
        return ids.compose(self.parts, lambda a: ALIASES.get(a) or token(a))

    def scenario(self, profiles: dict[str, NetworkProfile]) -> Scenario:
        return Scenario.from_parts(
            self.scenario_id,
            self.parts,
            sampling=SAMPLING,
            network_profile=profiles.get(self.network),
        )


def _lognormal(rng, mean: float, cv: float, n: int) -> np.ndarray:
    if cv <= 0:
        return np.full(n, float(mean))
    sigma2 = math.log1p(cv * cv)
    return rng.lognormal(math.log(mean) - sigma2 / 2, math.sqrt(sigma2), n)


def _certificates(sc: Scenario) -> list[dict]:
    """`certificates` rows, leaf first (position 0), as the runner's PKI step gives them."""
    sizes = list(reversed(flights.certificate_bytes(sc)))  # leaf first
    algs = list(reversed(sc.hierarchy))
    roles = sc.certificate_roles
    n_served = len(flights.served_certificate_bytes(sc))
    return [
        {
            "scenario_id": sc.scenario_id,
            "position": pos,
            "role": role,
            "algorithm": alg,
            "der_bytes": size,
            "sha256": hashlib.sha256(f"{sc.scenario_id}/{pos}".encode()).hexdigest(),
            "served": pos < n_served,
        }
        for pos, (role, alg, size) in enumerate(zip(roles, algs, sizes, strict=True))
    ]


def _records(s: SyntheticScenario, sc: Scenario, certs: list[dict], rng, t0_ns: int):
    """Engine-shaped (client, server) records: warm-ups, successes, then failures."""
    n_ok = s.n_warmup + s.n
    cols = {
        ("c", "total_ns"): _lognormal(rng, s.latency_ms * 1e6, s.latency_cv, n_ok),
        ("s", "cpu_ns"): _lognormal(rng, s.server_cpu_ms * 1e6, s.cpu_cv, n_ok),
        ("c", "cpu_ns"): _lognormal(rng, s.client_cpu_ms * 1e6, s.cpu_cv, n_ok),
        ("c", "bytes_read"): np.full(n_ok, float(s.bytes_read)),
        ("c", "bytes_written"): np.full(n_ok, float(s.bytes_written)),
    }
    # The server writes what the client reads and reads what it writes (to the end of the
    # handshake), unless an override sets the server's side on its own.
    cols[("s", "bytes_written")] = cols[("c", "bytes_read")].copy()
    cols[("s", "bytes_read")] = cols[("c", "bytes_written")].copy()
    for column, values in s.overrides.items():
        key = OVERRIDES[column]
        cols[key] = np.concatenate([cols[key][: s.n_warmup], np.asarray(values, float)])
        if column in ("bytes_read", "bytes_written"):  # the server's side follows
            other = ("s", "bytes_written" if column == "bytes_read" else "bytes_read")
            if column.replace("bytes", "server_bytes") not in s.overrides:
                cols[other] = cols[key].copy()
    chain = [
        {"der_bytes": c["der_bytes"], "subject": f"CN=synthetic {c['role']}",
         "sig_alg": c["algorithm"], "key_alg": c["algorithm"]}
        for c in certs if c["served"]
    ]  # fmt: skip
    sigalg = token(sc.hierarchy[-1])
    client: list[dict[str, Any]] = []
    server: list[dict[str, Any]] = []
    for i in range(n_ok + s.n_failed):
        conn = f"{hashlib.sha256(sc.scenario_id.encode()).hexdigest()[:6]}{i:010x}"
        start = t0_ns + i * HANDSHAKE_SPACING_NS
        if i >= n_ok:
            fail = {"outcome": "failed", "error_category": s.error_category}
            client.append({"seq": i, "warmup": False, "conn_id": conn, "start_unix_ns": start,
                           "error_detail": f"synthetic {s.error_category} failure",
                           "verify": True, **fail})  # fmt: skip
            server.append({"conn_id": conn, **fail})
            continue
        total = round(float(cols[("c", "total_ns")][i]))
        connect = round(total * s.connect_fraction)
        ccpu = round(float(cols[("c", "cpu_ns")][i]))
        scpu = round(float(cols[("s", "cpu_ns")][i]))
        read, written = round(cols[("c", "bytes_read")][i]), round(cols[("c", "bytes_written")][i])
        client.append({
            "seq": i, "warmup": i < s.n_warmup, "conn_id": conn, "start_unix_ns": start,
            "outcome": "ok", "connect_ns": connect, "handshake_ns": total - connect,
            "total_ns": total, "cpu_ns": ccpu, "cpu_user_us": round(ccpu / 1e3 * 0.8),
            "cpu_sys_us": round(ccpu / 1e3 * 0.2), "bytes_read": read, "bytes_written": written,
            "conn_bytes_read": read, "conn_bytes_written": written, "group": sc.kex,
            "sigalg": sigalg, "resumed": s.resumed(i - s.n_warmup), "verify": True,
            "peer_chain": chain,
        })  # fmt: skip
        server.append({
            "conn_id": conn, "outcome": "ok", "handshake_ns": round((total - connect) * 0.9),
            "cpu_ns": scpu, "cpu_user_us": round(scpu / 1e3 * 0.9),
            "cpu_sys_us": round(scpu / 1e3 * 0.1),
            "conn_cpu_ns": scpu + round(s.server_close_cpu_ms * 1e6),
            "conn_ns": total - connect + 100_000,
            "bytes_read": round(cols[("s", "bytes_read")][i]),
            "bytes_written": round(cols[("s", "bytes_written")][i]),
        })  # fmt: skip
    return client, server


def _rows(s, sc, run_id, rng, t0_ns, started: dt.datetime, network_row) -> ScenarioRows:
    certs = _certificates(sc)
    client, server = _records(s, sc, certs, rng, t0_ns)
    samples = records.sample_rows(run_id, sc.scenario_id, client, server)
    served = [c for c in certs if c["served"]]
    observed = []
    if s.n > 0:
        observed = [
            {"run_id": run_id, "scenario_id": sc.scenario_id, "position": pos,
             "der_bytes": c["der_bytes"], "subject": c["subject"], "sig_alg": c["sig_alg"],
             "key_alg": c["key_alg"]}
            for pos, c in enumerate(client[s.n_warmup].get("peer_chain") or [])
        ]  # fmt: skip
    row = {
        "run_id": run_id,
        "scenario_id": sc.scenario_id,
        "status": s.status,
        "started_at": started,
        "ended_at": started + dt.timedelta(seconds=SCENARIO_SPACING_S - 1),
        "n_measured": s.n + s.n_failed,
        "n_ok": s.n,
        "n_failed": s.n_failed,
        "n_warmup": s.n_warmup,
        "stop_reason": "fixed_count" if s.status == "completed" else "failed",
        "ci_rel_halfwidth": None,
        "failure_cause": s.failure_cause,
        "pki_sha256": hashlib.sha256(sc.scenario_id.encode()).hexdigest(),
        "served_chain_der_bytes": sum(c["der_bytes"] for c in served),
        "served_chain_len": len(served),
        "engine_seconds": sum(r.get("total_ns") or 0 for r in client) / 1e9,
        "server_exit": "sigterm",
        "sampling": sc.sampling.to_dict(),
        "batches": 1,
        "wall_seconds": float(SCENARIO_SPACING_S - 1),
    }
    if sc.value("cert_compression") != "none":
        body = flights.certificate_message_bytes(sc) - CERT_BODY_HEADER
        row["cert_message_bytes"] = body
        row["cert_compressed_bytes"] = round(body * s.compressed_share)
        row["cert_compression_installed"] = s.compressed_share < 1
    return ScenarioRows(row, samples, observed, certs, network_row)


def default_campaign_toml(baseline: str | None, analysis: dict | None = None) -> str:
    """A small campaign text holding what the report reads: `baseline` and `[analysis]`."""
    doc: dict = {"name": "synthetic"}
    if baseline is not None:
        doc["baseline"] = baseline
    if analysis:
        doc["analysis"] = analysis
    return "# synthetic campaign (chainlab.bench.synthetic)\n" + tomli_w.dumps(doc)


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
    network_profiles: Sequence[dict] = (),
) -> Path:
    """Write a store with `scenarios` to `path` (overwritten) through `chainlab.store.Store`
    and return the path. `network_profiles`: `network_profiles` rows (`profile`,
    `configured`, `measured`, `flagged`; tests/synthetic.py's `network_profile`)."""
    p = Path(path)
    p.unlink(missing_ok=True)
    rng = np.random.default_rng(seed)
    text = campaign_toml if campaign_toml is not None else default_campaign_toml(baseline, analysis)
    run_id = hashlib.sha256(f"synthetic-{seed}".encode()).hexdigest()[:32]
    profiles = {r["profile"]: NetworkProfile(**r["configured"]) for r in network_profiles}
    rows_by_profile = {
        r["profile"]: {"run_id": run_id, **{k: r[k] for k in ("profile", "configured",
                                                                "measured", "flagged")}}
        for r in network_profiles
    }  # fmt: skip
    scen = [(s, s.scenario(profiles)) for s in scenarios]
    memberships = [(c, sc.scenario_id) for s, sc in scen for c in s.campaigns]
    with Store.create(p) as store:
        store.register_scenarios([sc for _, sc in scen], memberships)
        store.begin_run(
            {
                "run_id": run_id,
                "started_at": started_at,
                "status": "running",
                "campaign_file_name": "synthetic-campaign.toml",
                "campaign_file_sha256": hashlib.sha256(text.encode()).hexdigest(),
                "campaign_toml": text,
                "chainlab_version": __version__,
                "chainlab_commit": "synthetic",
                "engine_info": {"synthetic": True, "openssl_build": {
                    "openssl_version": "3.5.5", "patch_sha256_16": "0" * 16}},
                "openssl_version": "3.5.5",
                "openssl_patch_sha": "0" * 16,
                "machine": machine or {
                    "synthetic": True, "cpu_model": "synthetic (no measurement)", "cores": 2,
                    "memory_bytes": 8 * 2**30, "kernel": "n/a", "governor": None, "os": "n/a",
                },
                "options": {"seed": seed},
            }
        )  # fmt: skip
        t0 = int(started_at.replace(tzinfo=dt.UTC).timestamp() * 1e9)
        written: set[str] = set()
        for i, (s, sc) in enumerate(scen):
            start = started_at + dt.timedelta(seconds=SCENARIO_SPACING_S * i)
            t0_i = t0 + i * SCENARIO_SPACING_S * 1_000_000_000
            net = rows_by_profile.get(sc.network) if sc.network not in written else None
            written.add(sc.network)
            store.write_scenario(_rows(s, sc, run_id, rng, t0_i, start, net))
        store.end_run(run_id, "completed", ended_at=started_at + dt.timedelta(
            seconds=SCENARIO_SPACING_S * max(1, len(scen))))  # fmt: skip
    return p


# Key-exchange CPU per handshake and side (ms), a toy figure for benchmark stores only; the
# signatures' costs are the run-time estimate's table (chainlab.model.estimate).
_KEX_MS = {"X25519": 0.05, "X25519MLKEM768": 0.12, "MLKEM768": 0.08}
# Everything else in a handshake, per side (ms), likewise a toy figure.
_OTHER_MS = 0.25


def paper_matrix(total_samples: int = 200_000, heavy_share: float = 0.03) -> list:
    """The paper's 15 distinct scenario shapes (Appendix A, deduplicated) with toy costs.

    `total_samples` measured handshakes are split so each leaf-SLH scenario gets
    `heavy_share` of a light one's count (like the paper's 300 vs 10000); CPU follows the
    estimate's signing and verification times (the leaf key signs, the client verifies the
    CertificateVerify and each served certificate's signature) with a 10 % coefficient of
    variation.
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
        sc = s.scenario({})
        h = sc.hierarchy
        served = len(flights.served_certificate_bytes(sc))
        # Leaf first: certificate i is signed by i + 1 (the top one by itself, not verified).
        issuers = list(reversed(h))[1 : served + 1] if depth > 1 else []
        sign, verify = algorithm_costs.SIGN_VERIFY_MS[leaf]
        s.server_cpu_ms = _OTHER_MS + _KEX_MS[kex] + sign
        s.client_cpu_ms = (
            _OTHER_MS
            + _KEX_MS[kex]
            + verify
            + sum(algorithm_costs.SIGN_VERIFY_MS[a][1] for a in issuers)
        )
        s.latency_ms = s.server_cpu_ms + s.client_cpu_ms + 0.05
        s.bytes_read = 1400 + sum(flights.served_certificate_bytes(sc))
        out.append(s)
    return out
