"""Engine records (JSON Lines, docs/engine-records.md) into store rows.

Client and server records of one connection carry the same `conn_id` (the first 8 bytes of
the ClientHello random); a sample row is the client record with the server's fields added
(server_* NULL when the server never saw the connection, e.g. connect refused).
"""

from __future__ import annotations

from pathlib import Path

import orjson

from chainlab import axes
from chainlab.engine import RECORD_SCHEMA

# The record field naming the TLS stack of the engine that wrote it (docs/engine-records.md).
RECORD_STACK = "stack"


class RecordError(Exception):
    pass


def read(path: Path, writer: str | None = None, after: int = 0) -> list[dict]:
    """Every complete record in a JSON Lines file, from line `after` + 1 on (the lines before
    it, as `count_lines` counted them, are not parsed: a load step reads the records its
    server wrote since the step began, not the scenario's thousands before). A last line
    without its newline is a record cut by a killed writer and is skipped; any other bad
    line is an error, and so is a record of another TLS stack than `writer` (when given)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    lines = data.split(b"\n")
    if lines and lines[-1] != b"":
        lines = lines[:-1]  # cut mid-write
    out = []
    for i, line in enumerate(lines[after:], after + 1):
        if not line.strip():
            continue
        try:
            # orjson: a paper-matrix run parses ~67,000 records; json took 14 us each.
            rec = orjson.loads(line)
        except orjson.JSONDecodeError as e:
            raise RecordError(f"{path.name} line {i}: not JSON ({e})") from None
        if rec.get("schema") != RECORD_SCHEMA:
            raise RecordError(
                f"{path.name} line {i}: record schema {rec.get('schema')!r}, expected "
                f"{RECORD_SCHEMA!r}"
            )
        if writer is not None and rec.get(RECORD_STACK) != writer:
            raise RecordError(
                f"{path.name} line {i}: written by stack {rec.get(RECORD_STACK)!r}, expected "
                f"{writer!r} (the scenario's engine binary is of another stack)"
            )
        out.append(rec)
    return out


def server_connections(path: Path, writer: str | None = None) -> list[dict]:
    """A server's records of its connections: `read`, without the serving threads' accounts
    (`side: "server_thread"`) written as it stops."""
    return [r for r in read(path, writer) if r.get("side") == "server"]


def count_lines(path: Path) -> int:
    """Complete records written so far (for live progress; no parsing)."""
    try:
        with path.open("rb") as f:
            return f.read().count(b"\n")
    except FileNotFoundError:
        return 0


def sample_rows(run_id: str, scenario_id: str, client: list[dict], server: list[dict]):
    """Store rows for client records, paired with server records by conn_id."""
    by_conn = {r["conn_id"]: r for r in server if r.get("conn_id")}
    rows = []
    for c in client:
        s = by_conn.get(c.get("conn_id")) if c.get("conn_id") else None
        if s is not None and c.get("first_conn_id") in by_conn:
            # An MTC retry: the attempt's server side is both connections' together.
            s = _both(by_conn[c["first_conn_id"]], s)
        chain = c.get("peer_chain")
        rows.append(
            {
                "run_id": run_id,
                "scenario_id": scenario_id,
                "seq": c["seq"],
                "warmup": bool(c.get("warmup")),
                "conn_id": c.get("conn_id"),
                "start_unix_ns": c["start_unix_ns"],
                "outcome": c["outcome"],
                "error_category": c.get("error_category"),
                "error_detail": c.get("error_detail"),
                "connect_ns": c.get("connect_ns"),
                "handshake_ns": c.get("handshake_ns"),
                "total_ns": c.get("total_ns"),
                "client_cpu_ns": c.get("cpu_ns"),
                "client_cpu_user_us": c.get("cpu_user_us"),
                "client_cpu_sys_us": c.get("cpu_sys_us"),
                "bytes_read": c.get("bytes_read"),
                "bytes_written": c.get("bytes_written"),
                "conn_bytes_read": c.get("conn_bytes_read"),
                "conn_bytes_written": c.get("conn_bytes_written"),
                "grp": c.get("group"),
                "sigalg": c.get("sigalg"),
                "resumed": c.get("resumed"),
                "verify": bool(c.get("verify")),
                "chain_len": len(chain) if chain is not None else None,
                "chain_der_bytes": sum(x["der_bytes"] for x in chain) if chain else None,
                "server_handshake_ns": s.get("handshake_ns") if s else None,
                "server_cpu_ns": s.get("cpu_ns") if s else None,
                "server_cpu_user_us": s.get("cpu_user_us") if s else None,
                "server_cpu_sys_us": s.get("cpu_sys_us") if s else None,
                "server_bytes_read": s.get("bytes_read") if s else None,
                "server_bytes_written": s.get("bytes_written") if s else None,
                "server_outcome": s.get("outcome") if s else None,
                "server_error_category": s.get("error_category") if s else None,
                "server_conn_ns": s.get("conn_ns") if s else None,
                "server_conn_cpu_ns": s.get("conn_cpu_ns") if s else None,
                "client_instructions": c.get("instructions"),
                "server_instructions": s.get("instructions") if s else None,
                # QUIC only (absent from TCP records): the client's datagram counts.
                "datagrams_read": c.get("datagrams_read"),
                "datagrams_written": c.get("datagrams_written"),
                "conn_datagrams_read": c.get("conn_datagrams_read"),
                "conn_datagrams_written": c.get("conn_datagrams_written"),
                "flight_datagrams": c.get("flight_datagrams"),
                # Merkle Tree Certificates only: what the client's verification checked.
                "mtc_kind": c.get("mtc_kind"),
                "mtc_proof_hashes": c.get("mtc_proof_hashes"),
                "mtc_signatures_checked": c.get("mtc_signatures_checked"),
                "mtc_landmark": c.get("mtc_landmark"),
                # Staged rollout only: the kind of client drawn, the chain the server sent.
                "client_kind": c.get("client_kind"),
                "chain_index": s.get("chain_index") if s else None,
                # An attempt of two connections (the MTC retry).
                "retried": c.get("first_conn_id") is not None,
                # The fields the axes record (their columns: `Axis.recorded`).
                **{
                    r.column: (s.get(r.field) if s else None)
                    if r.side == "server"
                    else c.get(r.field)
                    for r in axes.recorded()
                },
            }
        )
    return rows


def _both(first: dict, second: dict) -> dict:
    """Two server records of one retried attempt as one: the second's outcome, both
    connections' CPU, bytes and time."""
    out = dict(second)
    for k in ("handshake_ns", "cpu_ns", "cpu_user_us", "cpu_sys_us", "instructions",
              "bytes_read", "bytes_written", "conn_ns", "conn_cpu_ns"):  # fmt: skip
        a, b = first.get(k), second.get(k)
        out[k] = a + b if a is not None and b is not None else b
    return out


def loop_seconds(client: list[dict]) -> float:
    """Wall time of one client's handshake loop: first handshake start to last one's end."""
    if not client:
        return 0.0
    first = min(r["start_unix_ns"] for r in client)
    last = max(r["start_unix_ns"] + (r.get("total_ns") or 0) for r in client)
    return max(0, last - first) / 1e9
