"""Interop: every client stack against every server stack, one matrix per chain
(docs/methods/stacks.md#interop).

A cell is one scenario: the client stack, the server stack and everything else fixed (the
context: the chain's algorithms root first, and any other axis that varies). Its outcome is
`ok` when every measured handshake completed, else the failure category of most of its
failed handshakes, with the counts. Each cell also says what the stacks' capability tables
predicted, read as `validate` reads them (chainlab.axes.stack_check.problems: what the client
meets on the wire): a client that cannot verify an algorithm of the chain fails
verification; one that cannot receive the chain fails; otherwise every handshake completes.
A cell whose outcome differs from the prediction is flagged: an interop bug, or a table that
is wrong.
"""

from __future__ import annotations

import pandas as pd

from chainlab import axes
from chainlab.analysis.registry import produces
from chainlab.axes import certificate as certificate_axis
from chainlab.axes import stack_check
from chainlab.axes.handshake import Handshake

# The columns a cell's context is made of besides the hierarchy: every identity column but
# the two stacks' (chainlab.axes), and the network.
_STACK_COLUMNS = ("client_stack", "server_stack")
_POSITIONS = ("root_alg", "int1_alg", "int2_alg", "leaf_alg")


def predicted(row) -> str:
    """What the stacks' capability tables (chainlab.axes.stack_check.problems, as `validate`
    reads them) predict for the cell: `ok`, the category the client records (a chain with an
    algorithm the client does not verify: `verify_failed`), or `failed` (some failure)."""
    chain = tuple(row[c] for c in _POSITIONS if isinstance(row.get(c), str) and row[c])
    h = Handshake(
        parts={},
        kex=row["kex"],
        hierarchy=chain,
        stacks=(row["client_stack"], row["server_stack"]),
        # A Merkle Tree Certificate's client verifies its signers, not the chain's issuers.
        credential=certificate_axis.from_columns(row),
    )
    wire = [p for p in stack_check.problems(h, False, []) if p.on_the_wire]
    if not wire:
        return "ok"
    return next((p.category for p in wire if p.category), "failed")


def _as_predicted(outcome: str, expected: str) -> bool:
    return outcome == expected or (expected == "failed" and outcome != "ok")


def cells(summary: pd.DataFrame, failures: pd.DataFrame) -> pd.DataFrame:
    """One row per scenario of a store whose scenarios pair more than one client or server
    stack (empty otherwise): its context, the two stacks, its outcome and the prediction."""
    if summary.empty or summary[list(_STACK_COLUMNS)].drop_duplicates().shape[0] < 2:
        return pd.DataFrame()
    varies = {
        c
        for c in ("kex", *axes.lever_columns(), "network")
        if c not in _STACK_COLUMNS and c in summary and summary[c].nunique(dropna=False) > 1
    }
    top = (
        failures[failures["n"] > 0]
        .sort_values(["scenario_id", "n"], ascending=[True, False])
        .drop_duplicates("scenario_id")
        .set_index("scenario_id")
        if not failures.empty
        else pd.DataFrame(columns=["error_category", "example_detail"])
    )
    rows = []
    for _, r in summary.iterrows():
        sid = r["scenario_id"]
        failed = int(r["n_failed"])
        category = top.loc[sid, "error_category"] if failed and sid in top.index else None
        outcome = "ok" if failed == 0 and r["status"] == "ok" else (category or "failed")
        expect = predicted(r)
        chain = " → ".join(r[c] for c in _POSITIONS if isinstance(r.get(c), str) and r[c])
        context = " · ".join([chain, *_context(r, varies)])
        rows.append(
            {
                "scenario_id": sid,
                "context": context,
                "client_stack": r["client_stack"],
                "server_stack": r["server_stack"],
                "outcome": outcome,
                "n_ok": int(r["n_ok"]),
                "n_failed": failed,
                "predicted": expect,
                "as_predicted": _as_predicted(outcome, expect),
                "example_detail": top.loc[sid, "example_detail"] if category else None,
            }
        )
    return pd.DataFrame(rows).sort_values(["context", "client_stack", "server_stack"])


def _context(row, varies: set[str]) -> list[str]:
    """What else sets a cell apart, in words: each varying lever at a value other than its
    default (as its axis labels it), the key exchange and the network where they vary."""
    kex = [f"kex {row['kex']}"] if "kex" in varies else []
    network = [f"network {row['network']}"] if "network" in varies else []
    return [*kex, *axes.lever_labels(row, only=varies), *network]


@produces("interop")
def _analysis_interop(a) -> pd.DataFrame:
    return cells(a.summary, a.failures)
