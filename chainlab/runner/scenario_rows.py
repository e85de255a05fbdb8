"""What a finished scenario execution (chainlab.runner.scenario) becomes in the store: its
`scenario_runs` row and the rows of every table it fills (ScenarioRows), written in one
transaction by chainlab.store."""

from __future__ import annotations

import math
from datetime import datetime

from chainlab.runner import records
from chainlab.store import ScenarioRows


def rows(ex, ended_at: datetime, link_timing: dict) -> ScenarioRows:
    """The rows of execution `ex` (a ScenarioExecution), ended at `ended_at`."""
    run_id, sid = ex.ctx.run_id, ex.s.scenario_id
    status = "failed" if ex.stop_reason == "failed" else "completed"
    row = {
        "run_id": run_id,
        "scenario_id": sid,
        "status": status,
        "started_at": ex.started_at,
        "ended_at": ended_at,
        "n_measured": ex.attempted,
        "n_ok": ex.n_ok,
        "n_failed": ex.failed,
        "n_warmup": ex.warmups,
        "stop_reason": ex.stop_reason or "failed",
        "ci_rel_halfwidth": _finite(ex.rel_halfwidth),
        "failure_cause": ex.failure_cause if status == "failed" else None,
        "pki_sha256": ex.chain.sha256 if ex.chain else "",
        "served_chain_der_bytes": ex.chain.der_bytes if ex.chain else 0,
        "served_chain_len": ex.chain.length if ex.chain else 0,
        "engine_seconds": ex.engine_s,
        "server_exit": ex.server_exit,
        "sampling": ex.policy.to_dict(),
        "batches": ex.batches,
        "wall_seconds": ex.wall_seconds(),
        "failure_detail": ex.failure_detail if status == "failed" else None,
        "cert_message_bytes": ex.compression.get("uncompressed_bytes"),
        "cert_compressed_bytes": ex.compression.get("compressed_bytes"),
        "cert_compression_installed": ex.compression.get("installed"),
        "host": ex.ctx.host,
        **link_timing,
    }
    return ScenarioRows(
        scenario_run=row,
        samples=records.sample_rows(run_id, sid, ex.client, ex.server),
        observed_chain=chain_rows(run_id, sid, ex.client),
        # Mutual TLS: the client's chain as the server saw it.
        observed_client_chain=chain_rows(run_id, sid, ex.server),
        certificates=ex.certificates,
        network=ex.network_row,
        load_steps=ex.load_steps,
        load_samples=ex.load_samples,
        host_reference=ex.host_reference,
        instruction_samples=ex.instruction_samples,
    )


def chain_rows(run_id: str, sid: str, records: list[dict]) -> list[dict]:
    """`observed_chain` rows of the peer chain in the first successful record that has one
    (position 0 = the peer's leaf, as sent)."""
    first_ok = next((r for r in records if r["outcome"] == "ok" and r.get("peer_chain")), None)
    if first_ok is None:
        return []
    return [
        {
            "run_id": run_id,
            "scenario_id": sid,
            "position": pos,
            "der_bytes": c["der_bytes"],
            "subject": c.get("subject", ""),
            "sig_alg": c.get("sig_alg", ""),
            "key_alg": c.get("key_alg", ""),
        }
        for pos, c in enumerate(first_ok["peer_chain"])
    ]


def _finite(x):
    return x if x is not None and math.isfinite(x) else None
