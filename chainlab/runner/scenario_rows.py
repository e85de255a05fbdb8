"""What a finished scenario execution (chainlab.runner.scenario) becomes in the store: its
`scenario_runs` row and the rows of every table it fills (ScenarioRows), written in one
transaction by chainlab.store. It reads the execution's typed parts (plan, files, state,
results: chainlab.runner.scenario_state), never the execution itself."""

from __future__ import annotations

import math
from datetime import datetime

from chainlab.campaign.model import Scenario
from chainlab.runner import records
from chainlab.runner.scenario_state import Files, Results, State
from chainlab.store import ScenarioRows


def rows(
    run_id: str,
    host: dict | None,
    plan: Scenario,
    files: Files,
    state: State,
    results: Results,
    *,
    ended_at: datetime,
    link_timing: dict,
) -> ScenarioRows:
    """The rows of a scenario's execution (its typed parts: chainlab.runner.scenario_state)
    that ran on `host` and ended at `ended_at`."""
    sid = plan.scenario_id
    status = "failed" if state.failed_run else "completed"
    chain, compression = files.chain, results.compression
    row = {
        "run_id": run_id,
        "scenario_id": sid,
        "status": status,
        "started_at": state.started_at,
        "ended_at": ended_at,
        "n_measured": state.attempted,
        "n_ok": state.n_ok,
        "n_failed": state.failed,
        "n_warmup": state.warmups,
        "stop_reason": state.stop_reason or "failed",
        "ci_rel_halfwidth": _finite(state.rel_halfwidth),
        "failure_cause": state.failure_cause if status == "failed" else None,
        "pki_sha256": chain.sha256 if chain else "",
        "served_chain_der_bytes": chain.der_bytes if chain else 0,
        "served_chain_len": chain.length if chain else 0,
        "engine_seconds": state.engine_s,
        "server_exit": state.server_exit,
        "sampling": plan.sampling.to_dict(),
        "batches": state.batches,
        "wall_seconds": state.wall_seconds(),
        "failure_detail": state.failure_detail if status == "failed" else None,
        "cert_message_bytes": compression.get("uncompressed_bytes"),
        "cert_compressed_bytes": compression.get("compressed_bytes"),
        "cert_compression_installed": compression.get("installed"),
        "host": host,
        **link_timing,
        **results.server_cpu.columns(),
    }
    return ScenarioRows(
        scenario_run=row,
        samples=records.sample_rows(run_id, sid, results.client, results.server),
        observed_chain=chain_rows(run_id, sid, results.client),
        # Mutual TLS: the client's chain as the server saw it.
        observed_client_chain=chain_rows(run_id, sid, results.server),
        certificates=results.certificates,
        network=results.network_row,
        load_steps=results.load_steps,
        load_samples=results.load_samples,
        host_reference=results.host_reference,
        instruction_samples=results.instruction_samples,
        counting_seconds=results.counting_s,
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
