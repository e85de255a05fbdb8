"""docs/engine-records.md is the records' contract: every field a real ready line, client,
server, load or generator record of each engine carries is documented there, and every
documented field that is not marked "absent" (present only sometimes) is in the records.

The field names are read from the doc's tables (the backticked names of each table's first
column), so the doc and this test cannot drift apart silently."""

import json
import re
import subprocess
from pathlib import Path

import pytest

from chainlab import engine, processes
from chainlab.errors import ChainlabError

DOC = Path(__file__).resolve().parents[1] / "docs" / "engine-records.md"
CHAIN = "ML-DSA-44,ML-DSA-44"
READY_S = 20.0


def doc_sections() -> dict[str, str]:
    """`## ` heading -> its text."""
    parts = re.split(r"^## ", DOC.read_text(), flags=re.M)
    return {p.split("\n", 1)[0].strip(): p for p in parts[1:]}


def table_fields(text: str, first: int = 0) -> tuple[set[str], set[str]]:
    """(every field, the fields marked "absent") of the `first`-th field table in `text`. A
    dotted name (`served_chain.policy`) is its top-level key."""
    tables = re.findall(r"^\| field \|.*?\n((?:\|.*\n)+)", text, flags=re.M)
    fields, optional = set(), set()
    for row in tables[first].splitlines()[1:]:  # the |---| line first
        cells = [c.strip() for c in row.strip("|").split("|")]
        names = {n.split(".")[0] for n in re.findall(r"`([a-z_][a-z0-9_.]*)`", cells[0])}
        fields |= names
        if len(cells) > 1 and "absent" in cells[1]:
            optional |= names
    return fields, optional


def documented() -> dict[str, tuple[set[str], set[str]]]:
    s = doc_sections()
    load_client, _ = table_fields(s["Load records (`load`)"], 0)
    generator = table_fields(s["Load records (`load`)"], 1)
    quic, _ = table_fields(s["QUIC (`--transport quic`)"], 0)
    quic_only = {f for f in quic if f.startswith(("datagrams", "conn_datagrams", "flight"))}
    client, client_opt = table_fields(s['Client record (`side: "client"`)'])
    server, server_opt = table_fields(s['Server record (`side: "server"`)'])
    thread, _ = table_fields(s['Server record (`side: "server"`)'], 1)
    ready, _ = table_fields(s["The server's ready line"])
    # Every record gains `transport` (the QUIC section's prose says so).
    return {
        "ready": (ready, set()),
        "client": (client | {"transport"} | quic_only, client_opt | quic_only),
        "server": (server | {"transport"} | quic_only, server_opt | quic_only),
        "load": (client | {"transport"} | quic_only | load_client, client_opt | quic_only),
        "generator": generator,
        "server_thread": (thread, set()),
    }


def engines() -> list[tuple[str, Path]]:
    out = []
    for stack in ("openssl-3.5", "openssl-4.0", "rustls"):
        try:
            out.append((stack, engine.stack_path(stack)))
        except ChainlabError:
            continue  # not built here: the engine tests cover what exists
    return out


def run_engine(tmp_path: Path, eng: Path, pki: Path, *, transport: str, load: bool):
    """(ready line, server records, client records) of a few handshakes."""
    srv = tmp_path / f"server-{transport}.jsonl"
    err = tmp_path / f"server-{transport}.stderr"
    with err.open("wb") as errf:
        server = processes.spawn(
            [str(eng), "serve", "--pki", str(pki), "--transport", transport,
             "--records", str(srv)],
            subprocess.PIPE, errf,
        )  # fmt: skip
    try:
        ready = processes.wait_ready(server, READY_S, err)
        client = tmp_path / f"client-{transport}.jsonl"
        head = [str(eng), "load" if load else "handshake", "--connect", ready["addr"],
                "--ca", str(pki / "ca.pem"), "--transport", transport, "--warmup", "1",
                "--records", str(client)]  # fmt: skip
        more = ["--rate", "50", "--duration-ms", "100"] if load else ["--count", "3"]
        subprocess.run(head + more, check=True, capture_output=True, timeout=120)
    finally:
        processes.stop_group(server)
    read = lambda p: [json.loads(x) for x in p.read_text().splitlines()]  # noqa: E731
    return ready, read(srv), read(client)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("records-doc")
    subprocess.run(
        [str(engine.path()), "pki", "--chain", CHAIN, "--out", str(d / "pki"), "--seed", "doc"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return d / "pki"


def check(kind: str, record: dict, docs: dict) -> None:
    fields, optional = docs[kind]
    undocumented = set(record) - fields
    missing = fields - optional - set(record)
    assert not undocumented, f"{kind} fields not in docs/engine-records.md: {sorted(undocumented)}"
    assert not missing, f"{kind} fields documented but missing: {sorted(missing)}"


@pytest.mark.parametrize("stack,eng", engines(), ids=[s for s, _ in engines()])
def test_every_engine_writes_what_the_doc_says(stack, eng, pki, tmp_path):
    docs = documented()
    ready, server, client = run_engine(tmp_path, eng, pki, transport="tcp", load=False)
    assert set(ready) <= docs["ready"][0], sorted(set(ready) - docs["ready"][0])
    assert [r["side"] for r in server].count("server_thread") == 1
    for r in server:
        check(r["side"], r, docs)
    for r in client:
        check("client", r, docs)


def test_quic_and_load_records_are_documented(pki, tmp_path):
    docs = documented()
    eng = engine.path()
    _, server, client = run_engine(tmp_path, eng, pki, transport="quic", load=False)
    quic_fields = {"datagrams_read", "datagrams_written", "conn_datagrams_read"}
    for kind, records in (("server", server), ("client", client)):
        for r in records:
            check(kind, r, docs)
            assert quic_fields <= set(r), r
    _, _, loaded = run_engine(tmp_path, eng, pki, transport="tcp", load=True)
    *attempts, generator = loaded
    for r in attempts:
        # A warm-up is unscheduled: a client record without the schedule's fields.
        check("client" if r["warmup"] else "load", r, docs)
    assert any(not r["warmup"] for r in attempts)
    check("generator", generator, docs)
