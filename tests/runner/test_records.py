"""Engine records into store rows: pairing by conn_id, cut last lines, schema check."""

import json

import pytest

from chainlab.engine import RECORD_SCHEMA
from chainlab.runner import records


def client(seq, conn_id, outcome="ok", warmup=False):
    return {
        "schema": RECORD_SCHEMA, "side": "client", "seq": seq, "warmup": warmup,
        "conn_id": conn_id, "start_unix_ns": 1_000_000_000 * (seq + 1), "total_ns": 2_000_000,
        "bytes_read": 16000, "outcome": outcome, "verify": True, "group": "x25519",
        "peer_chain": [{"der_bytes": 5000, "subject": "CN=l", "sig_alg": "a", "key_alg": "b"},
                       {"der_bytes": 6000, "subject": "CN=i", "sig_alg": "a", "key_alg": "a"}],
        "error_category": None if outcome == "ok" else "connect_refused",
    }  # fmt: skip


def server(conn_id):
    return {"schema": RECORD_SCHEMA, "side": "server", "seq": 0, "conn_id": conn_id,
            "cpu_ns": 123, "bytes_written": 16000, "outcome": "ok"}  # fmt: skip


def test_pairs_by_conn_id_and_leaves_unpaired_server_fields_null():
    rows = records.sample_rows(
        "r", "s", [client(0, "aa", warmup=True), client(1, "bb"), client(2, None, "failed")],
        [server("bb"), server("aa"), server("zz")],
    )  # fmt: skip
    assert [r["server_cpu_ns"] for r in rows] == [123, 123, None]
    assert rows[0]["warmup"] and not rows[1]["warmup"]
    assert rows[1]["chain_len"] == 2 and rows[1]["chain_der_bytes"] == 11000
    assert rows[2]["error_category"] == "connect_refused"
    assert rows[1]["grp"] == "x25519"


def test_a_line_cut_by_a_killed_writer_is_skipped(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text(json.dumps(client(0, "aa")) + "\n" + json.dumps(client(1, "bb"))[:40])
    assert [r["seq"] for r in records.read(f)] == [0]
    assert records.count_lines(f) == 1


def test_reading_after_a_line_count_skips_those_lines_unparsed(tmp_path):
    f = tmp_path / "s.jsonl"
    # Line 2 is not JSON: read from after it, it is never parsed; its number stays its own.
    f.write_text(json.dumps(server("aa")) + "\nnot json\n" + json.dumps(server("bb")) + "\n")
    before = 2
    assert [r["conn_id"] for r in records.read(f, after=before)] == ["bb"]
    with pytest.raises(records.RecordError, match="line 2: not JSON"):
        records.read(f, after=1)
    assert records.read(f, after=records.count_lines(f)) == []


def test_foreign_schema_is_an_error(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text(json.dumps({**client(0, "aa"), "schema": "other/9"}) + "\n")
    with pytest.raises(records.RecordError, match="other/9"):
        records.read(f)


def test_loop_seconds_spans_first_start_to_last_end():
    got = records.loop_seconds([client(0, "a"), client(1, "b")])
    assert got == pytest.approx(1.0 + 0.002)
