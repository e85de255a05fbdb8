"""The record contract, machine-checked (engine/crates/chainlab-record/records.schema.json):

- docs/engine-records.md documents exactly the schema's fields: the field names of each
  record's table (the backticked names of its first column) are the schema's properties,
  and the fields it marks "absent" (present only sometimes) are the ones the schema does
  not require; so the doc, the schema and (through chainlab-record's tests/schema.rs) the
  Rust types cannot drift apart silently;
- every built engine's ready line and records, of `serve`, `handshake` and `load` (and QUIC
  where the stack has it), its `primitives` lines and its `info`, and the OpenSSL engine's
  `reference` line, validate against the schema with a full JSON Schema validator: a field
  an engine leaves out, adds or mistypes fails here, whichever language wrote it.

Every Rust engine test checks each line it reads against the same file too
(chainlab-test-support `assert_contract`), MTC, trust-anchor and QUIC runs included."""

import json
import re
import subprocess
from pathlib import Path

import jsonschema
import pytest

from chainlab import engine, processes
from chainlab.axes import stack as stacks
from chainlab.errors import ChainlabError

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "engine-records.md"
SCHEMA = REPO / "engine" / "crates" / "chainlab-record" / "records.schema.json"
CHAIN = "ML-DSA-44,ML-DSA-44"
READY_S = 20.0
KINDS = (
    "ready",
    "client",
    "server",
    "generator",
    "server_thread",
    "primitive",
    "reference",
    "info",
)
# Optional fields documented in the sections of their own (load, QUIC), not marked "absent"
# in the client and server tables.
LOAD_FIELDS = {"intended_ns", "sched_lag_ns", "latency_ns"}


def schema() -> dict:
    return json.loads(SCHEMA.read_text())


def validator(kind: str | None = None) -> jsonschema.Draft202012Validator:
    s = schema()
    if kind is not None:
        s = {**s, "oneOf": [{"$ref": f"#/$defs/{kind}"}]}
    return jsonschema.Draft202012Validator(s)


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
    """kind -> (its documented fields, those documented as sometimes absent)."""
    s = doc_sections()
    load_client, _ = table_fields(s["Load records (`load`)"], 0)
    generator = table_fields(s["Load records (`load`)"], 1)
    quic, _ = table_fields(s["QUIC (`--transport quic`)"], 0)
    datagrams = {f for f in quic if f.startswith(("datagrams", "conn_datagrams"))}
    client, client_opt = table_fields(s['Client record (`side: "client"`)'])
    server, server_opt = table_fields(s['Server record (`side: "server"`)'])
    thread, _ = table_fields(s['Server record (`side: "server"`)'], 1)
    ready, ready_opt = table_fields(s["The server's ready line"])
    quic_client = datagrams | {"flight_datagrams"}
    # Every record gains `transport` (the QUIC section's prose says so).
    return {
        "ready": (ready, ready_opt),
        "client": (
            client | {"transport"} | quic_client | load_client,
            client_opt | quic_client | load_client,
        ),
        "server": (server | {"transport"} | datagrams, server_opt | datagrams),
        "generator": generator,
        "server_thread": (thread, set()),
        "primitive": table_fields(s["Primitive records (`primitives`)"]),
        "reference": table_fields(s["Host reference (`chainlab-engine reference`)"]),
        "info": table_fields(s["The engine's `info`"]),
    }


@pytest.mark.parametrize("kind", KINDS)
def test_the_doc_documents_exactly_the_schemas_fields(kind):
    definition = schema()["$defs"][kind]
    properties, required = set(definition["properties"]), set(definition["required"])
    fields, sometimes = documented()[kind]
    assert fields == properties, (
        f"docs/engine-records.md against records.schema.json, {kind}: only in the doc "
        f"{sorted(fields - properties)}, only in the schema {sorted(properties - fields)}"
    )
    assert sometimes == properties - required, (
        f"{kind}: documented as sometimes absent {sorted(sometimes)}, not required by the "
        f"schema {sorted(properties - required)}"
    )


def test_the_schema_refuses_a_missing_an_extra_and_a_mistyped_field():
    good = {
        "schema": "chainlab.engine.record/1", "side": "generator", "rate": 50.0,
        "arrivals": "poisson", "duration_ns": 10, "max_in_flight": 64, "cpus": None,
        "scheduled": 5, "started": 5, "saturated": 0, "wall_ns": 11, "process_cpu_ns": 3,
        "scheduler_cpu_ns": 1, "max_dispatch_lag_ns": 0,
    }  # fmt: skip
    v = validator()
    assert v.is_valid(good)
    assert not v.is_valid({k: x for k, x in good.items() if k != "started"})
    assert not v.is_valid({**good, "colour": "blue"})
    assert not v.is_valid({**good, "started": "5"})
    assert not v.is_valid({**good, "side": "elsewhere"})


def engines() -> list[tuple[str, Path]]:
    out = []
    for stack in stacks.STACKS:
        try:
            out.append((stack, engine.stack_path(stack)))
        except ChainlabError:
            continue  # not built here: the engine tests cover what exists
    return out


def run_engine(tmp_path: Path, eng: Path, pki: Path, *, transport="tcp", load=False, more=()):
    """(ready line, server records, client records) of a few handshakes."""
    tag = f"{transport}-{'load' if load else 'handshake'}-{len(more)}"
    srv = tmp_path / f"server-{tag}.jsonl"
    err = tmp_path / f"server-{tag}.stderr"
    with err.open("wb") as errf:
        server = processes.spawn(
            [str(eng), "serve", "--pki", str(pki), "--transport", transport,
             "--tickets", "1", "--records", str(srv)],
            subprocess.PIPE, errf,
        )  # fmt: skip
    try:
        ready = processes.wait_ready(server, READY_S, err)
        client = tmp_path / f"client-{tag}.jsonl"
        head = [str(eng), "load" if load else "handshake", "--connect", ready["addr"],
                "--ca", str(pki / "ca.pem"), "--transport", transport, "--warmup", "1",
                "--records", str(client), *more]  # fmt: skip
        count = ["--rate", "50", "--duration-ms", "100"] if load else ["--count", "3"]
        subprocess.run(head + count, check=True, capture_output=True, timeout=120)
    finally:
        processes.stop_group(server)
    read = lambda p: [json.loads(x) for x in p.read_text().splitlines()]  # noqa: E731
    return ready, read(srv), read(client)


@pytest.fixture(scope="module")
def pki(tmp_path_factory, engine_bin):
    d = tmp_path_factory.mktemp("records-contract")
    subprocess.run(
        [str(engine.path()), "pki", "--chain", CHAIN, "--out", str(d / "pki"), "--seed", "doc"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return d / "pki"


def assert_valid(line: dict, where: str) -> None:
    errors = sorted(validator().iter_errors(line), key=str)
    # oneOf reports the closest definition's errors as its context.
    said = [str(c.message) for e in errors for c in (e.context or [e])]
    assert not errors, f"{where}: a line breaks records.schema.json: {said[:6]} in {line}"


@pytest.mark.parametrize("stack,eng", engines(), ids=[s for s, _ in engines()])
def test_every_engine_keeps_the_record_contract(stack, eng, pki, tmp_path):
    seen: set[str] = set()
    runs = [
        ("handshake", run_engine(tmp_path, eng, pki)),
        ("load", run_engine(tmp_path, eng, pki, load=True)),
    ]
    if stacks.has(stack, "resumption_mix"):
        mix = ("--resume-ratio", "0.6")
        runs.append(("resume mix", run_engine(tmp_path, eng, pki, more=mix)))
    if stacks.has(stack, "quic"):
        runs.append(("quic", run_engine(tmp_path, eng, pki, transport="quic")))
    for what, (ready, server, client) in runs:
        assert_valid(ready, f"{stack} {what} ready line")
        assert ready["stack"] == stack
        for r in server + client:
            assert_valid(r, f"{stack} {what}")
            assert r.get("stack", stack) == stack
            seen |= set(r)
        attempts = [r for r in client if r["side"] == "client"]
        assert [r["side"] for r in server].count("server") == len(attempts) >= 4, what
        assert all(r["outcome"] == "ok" for r in attempts), what
    # What these runs exercise of the optional fields did appear.
    assert seen >= LOAD_FIELDS
    if stacks.has(stack, "resumption_mix"):
        assert "resume_offered" in seen


@pytest.mark.parametrize("stack,eng", engines(), ids=[s for s, _ in engines()])
def test_every_engine_prints_info_and_primitives_as_the_schema_says(stack, eng, engine_bin):
    info = json.loads(
        subprocess.run([str(eng), "info"], check=True, capture_output=True, timeout=60).stdout
    )
    errors = [e.message for e in validator("info").iter_errors(info)]
    assert not errors, f"{stack} info breaks records.schema.json: {errors[:6]}"
    assert info["stack"] == stack
    out = subprocess.run(
        [str(eng), "primitives", "--subject", "ML-DSA-44", "--op", "sign", "--count", "2",
         "--warmup", "1"],
        check=True, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    lines = [json.loads(x) for x in out.stdout.splitlines()]
    assert len(lines) == 3
    for line in lines:
        assert_valid(line, f"{stack} primitives")


def test_the_host_reference_line_keeps_the_schema(engine_bin):
    out = subprocess.run(
        [str(engine.path()), "reference", "--rounds", "2"], check=True, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert_valid(json.loads(out.stdout), "chainlab-engine reference")


def test_the_info_schema_refuses_a_mixed_shape_and_an_unknown_field():
    base = {
        "stack": "go", "engine_version": "0.1.0", "record_schema": "chainlab.engine.record/1",
        "primitives_revision": 1, "option_rules": [], "hardware_counters": {"available": False},
        "build": {"go": "go1.27.3"}, "groups": ["X25519"], "signature_algorithms": [],
        "signature_implementations": ["stack"], "root_only_signature_algorithms": [],
        "max_handshake_message": None, "cert_compressions": [], "features": [],
    }  # fmt: skip
    v = validator("info")
    assert v.is_valid(base)
    assert not v.is_valid({**base, "colour": "blue"})
    assert not v.is_valid({k: x for k, x in base.items() if k != "groups"})
    # Another stack cannot carry the OpenSSL engine's shape, nor the reverse.
    assert not v.is_valid({**base, "stack": "openssl-3.5"})
    assert not v.is_valid({**base, "pki_revision": 1})
