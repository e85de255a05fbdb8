"""The store's contract with DuckDB: `schema.sql` declares every table and column once (the
lever axes' columns of `scenarios` are their axes'); this module holds what follows from it
(the version, the upgrade of each older version, adding columns as declared there, the
catalog's columns and types) and nothing else. `Store` (chainlab.store) writes and reads
through it.

Versions: 2 added `runs.libraries` (the Python analysis libraries of the run) and the load
tables; 3 added `primitive_samples` (the cost model's inputs), instructions per handshake
and the certificate compression sizes of each scenario run; 4 client certificates, targets
and where each scenario ran; 5 the transport (TCP or QUIC) and QUIC's datagram counts; 6
the TLS stack of each side (openssl-3.5, openssl-4.0, rustls); 7 the certificate axis
(X.509 or a Merkle Tree Certificate) and what a client's MTC verification checked; 8 staged
rollout: each attempt's kind of client and the chain a dual-chain server sent; 9 instruction
counts under callgrind per connection and side, and the steal time around each scenario; 10
whether the counted handshakes drew seeded random bytes; 11 the MTC retry and the
trust_anchors extension of each sample; 12 the server's CPU per scenario run and how much of
it the connections' records account for; 13 which implementation timed each primitive;
14 the run-time estimate each run started with; 15 the landmark a landmark-relative MTC was
verified against (landmark lag), and the landmark intervals a server holds MTCs of; 16 the
host's speed around each primitive's measurement (the cost model's predictions at the host's
speed of each scenario) and an unpinned host reading's time on each CPU.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import duckdb
import pyarrow as pa

from chainlab import axes
from chainlab.axes.axis import Axis
from chainlab.errors import ChainlabError
from chainlab.store.rows import Connection

SCHEMA_SQL = Path(__file__).with_name("schema.sql")


def table_sql(name: str) -> str:
    """The CREATE TABLE statement of `name` in schema.sql (for upgrades)."""
    text = SCHEMA_SQL.read_text()
    start = text.index(f"CREATE TABLE {name} (")
    return text[start : text.index("\n);", start) + 3]


def column_sql(table: str, column: str) -> str:
    """A column's declaration in schema.sql's CREATE TABLE of `table` (its type and
    constraints, without the comment), e.g. "random VARCHAR NOT NULL DEFAULT 'system'"."""
    for line in table_sql(table).splitlines()[1:]:
        code = line.split("--", 1)[0].strip().rstrip(",")
        if code.split(" ", 1)[0] == column:
            return " ".join(code.split())
    raise KeyError(f"schema.sql declares no column {table}.{column}")


def add_columns(table: str, *names: str, if_missing: bool = False) -> tuple[str, ...]:
    """The statements that add columns `names` to `table` as schema.sql declares them: the
    type and default as declared, NOT NULL set after (DuckDB adds no NOT NULL column);
    `if_missing`: a store that already has the column keeps it (one whose table an older
    upgrade made as schema.sql declares it now)."""
    out = []
    for name in names:
        declared = column_sql(table, name)
        not_null = " NOT NULL" in declared
        added = declared.replace(" NOT NULL", "")
        exists = "IF NOT EXISTS " if if_missing else ""
        out.append(f"ALTER TABLE {table} ADD COLUMN {exists}{added}")
        if not_null:
            out.append(f"ALTER TABLE {table} ALTER COLUMN {name} SET NOT NULL")
    return tuple(out)


SCHEMA_VERSION = 16
# Versions this chainlab reads; each older one has an upgrade step in UPGRADES.
READABLE_VERSIONS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)
# What turns a store of version v into v + 1 (run in one transaction with the version bump).
UPGRADES = {
    1: (
        *add_columns("runs", "libraries"),
        *add_columns("samples", "server_conn_ns", "server_conn_cpu_ns"),
        *add_columns(
            "scenario_runs",
            "link_timer_late_us_mean",
            "link_timer_late_us_max",
            "link_queue_wait_us_max",
            "link_flagged",
        ),
        # The load tables, as schema.sql declares them.
        *(table_sql(t) for t in ("load_steps", "load_samples", "host_reference")),
    ),
    2: (
        *add_columns("samples", "client_instructions", "server_instructions"),
        *add_columns(
            "scenario_runs",
            "cert_message_bytes",
            "cert_compressed_bytes",
            "cert_compression_installed",
        ),
        table_sql("primitive_samples"),
    ),
    # The levers' columns (client_auth in 4, transport in 5, the stacks in 6) are added by
    # `axis_columns_sql`, after these steps, like every lever added since.
    3: (
        *add_columns("scenarios", "target"),
        "ALTER TABLE scenarios ALTER COLUMN leaf_alg DROP NOT NULL",
        *add_columns("scenario_runs", "host"),
        table_sql("observed_client_chain"),
    ),
    4: add_columns(
        "samples",
        "datagrams_read",
        "datagrams_written",
        "conn_datagrams_read",
        "conn_datagrams_written",
        "flight_datagrams",
    ),
    5: (),  # the stacks' columns: `axis_columns_sql`
    6: add_columns("samples", "mtc_kind", "mtc_proof_hashes", "mtc_signatures_checked"),
    # and the certificate axis's columns: `axis_columns_sql`
    # if_missing: a version-1 store gets load_samples as schema.sql declares it now.
    7: (
        *add_columns("samples", "client_kind", "chain_index", if_missing=True),
        *add_columns("load_samples", "client_kind", "chain_index", if_missing=True),
    ),  # and the rollout axes' columns: `axis_columns_sql`
    8: (
        *add_columns("host_reference", "steal_ns", if_missing=True),
        table_sql("instruction_samples"),
    ),
    # if_missing: a version-8 store got instruction_samples as schema.sql declares it now.
    9: add_columns("instruction_samples", "random", if_missing=True),
    # and the MTC encoding's column: `axis_columns_sql` (with what older MTCs were written in)
    10: add_columns("samples", "retried"),  # and the trust_anchors axis's recorded columns
    11: add_columns(
        "scenario_runs",
        "server_process_cpu_ns",
        "server_conn_cpu_ns",
        "server_threads_cpu_ns",
        "server_wait_cpu_ns",
    ),
    # if_missing: a version-1 store gets primitive_samples in step 2 as schema.sql declares it.
    12: add_columns("primitive_samples", "implementation", if_missing=True),
    13: add_columns("runs", "estimate"),
    # and the certificate's renewals column: `axis_columns_sql` (1 for older landmark MTCs)
    14: add_columns("samples", "mtc_landmark"),
    # if_missing: a store before 3 gets primitive_samples in step 2 as schema.sql declares it.
    15: (
        *add_columns("primitive_samples", "host_cpu_ns", if_missing=True),
        *add_columns("host_reference", "per_cpu_ns", if_missing=True),
    ),
}


def axis_columns_sql(con: Connection) -> list[str]:
    """The statements that give `scenarios` a column for every lever axis it lacks
    (chainlab.axes): VARCHAR NOT NULL at the axis's default, which every scenario
    stored before the axis existed had. Run on a new store and on every store opened for
    writing, so both have exactly the same columns."""
    have = set(columns(con, "scenarios"))
    out = []
    for axis in axes.levers():
        defaults = axis.column_values(axis.default)
        for column, default in zip(axis.column_names, defaults, strict=True):
            if column in have:
                continue
            literal = _literal(default)
            out += [
                f"ALTER TABLE scenarios ADD COLUMN {column} VARCHAR DEFAULT '{literal}'",
                f"ALTER TABLE scenarios ALTER COLUMN {column} SET NOT NULL",
            ]
            if column in axis.before_column:
                out += _before_column_sql(con, axis, column, have)
    return out


def recorded_columns_sql(con: Connection) -> list[str]:
    """The statements that give `samples` a column for every field an axis records
    (`Axis.recorded`) it lacks: NULL in the rows from before. Run on a new store and on every
    store opened for writing, as `axis_columns_sql`."""
    have = set(columns(con, "samples"))
    return [
        f"ALTER TABLE samples ADD COLUMN {r.column} {r.sql_type}"
        for r in axes.recorded()
        if r.column not in have
    ]


def _literal(value: object) -> str:
    return str(value).replace("'", "''")


def _before_column_sql(con: Connection, axis: Axis, column: str, have: set[str]) -> list[str]:
    """The updates giving each stored scenario what the axis says of scenarios stored
    before `column` existed (from the columns the store has: one it lacks yet reads as its
    axis default, as the view does)."""
    rows = con.execute(f"SELECT {', '.join(sorted(have))} FROM scenarios").df()
    out = []
    for row in rows.to_dict("records"):
        value = axis.value_before(column, row)
        out.append(
            f"UPDATE scenarios SET {column} = '{_literal(value)}' "
            f"WHERE scenario_id = '{_literal(row['scenario_id'])}'"
        )
    return out


TABLES = (
    "runs",
    "scenarios",
    "campaign_scenarios",
    "scenario_runs",
    "certificates",
    "samples",
    "observed_chain",
    "observed_client_chain",
    "network_profiles",
    "load_steps",
    "load_samples",
    "host_reference",
    "primitive_samples",
    "instruction_samples",
)


def _since() -> dict[str, int]:
    """The schema version each table first exists in: the version after the upgrade step
    that creates it, 1 for the tables of the first stores."""
    made = {}
    for version, steps in UPGRADES.items():
        for sql in steps:
            for t in TABLES:
                if sql.startswith(f"CREATE TABLE {t} ("):
                    made[t] = version + 1
    return {t: made.get(t, 1) for t in TABLES}


# Table -> the first schema version that has it.
TABLE_SINCE = _since()


def check_tables(path: Path, con: Connection, version: int) -> None:
    """Every table a store of `version` was made with is there: a store missing one was
    damaged after chainlab wrote it (a dropped table), and nothing reads it as empty."""
    present = {
        r[0]
        for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
        ).fetchall()
    }
    missing = [t for t in TABLES if TABLE_SINCE[t] <= version and t not in present]
    if missing:
        names = ", ".join(repr(t) for t in missing)
        raise ChainlabError(
            f"store {path} is damaged: schema version {version} has table(s) {names}, which "
            "it lacks (dropped after it was written); restore it from a copy, or re-run its "
            "campaign into a new store"
        )


class StoreError(ChainlabError):
    """The store's file system refused a write (disk full, permission, read-only): the
    transaction was rolled back, so the store holds every scenario committed before."""


# DuckDB's column types as Arrow types, for handing rows to DuckDB in bulk. A type not named
# here is left to Arrow to infer from the values (DuckDB casts on insert).
_ARROW_TYPES = {
    "BIGINT": pa.int64(),
    "HUGEINT": pa.int64(),  # start_unix_ns: nanoseconds since 1970 fit in 64 bits until 2262
    "INTEGER": pa.int32(),
    "SMALLINT": pa.int16(),
    "DOUBLE": pa.float64(),
    "FLOAT": pa.float32(),
    "BOOLEAN": pa.bool_(),
    "VARCHAR": pa.string(),
    "JSON": pa.string(),
    "TIMESTAMP": pa.timestamp("us"),
}


def columns(con: Connection, table: str) -> dict[str, str]:
    """The catalog's columns of `table` (name -> DuckDB type), in table order."""
    rows = con.execute(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_name = ? ORDER BY ordinal_position",
        [table],
    ).fetchall()
    return dict(rows)


def arrow_field(name: str, duck_type: str) -> pa.Field | None:
    """The Arrow field a column's values are handed over as (None: inferred)."""
    t = _ARROW_TYPES.get(duck_type)
    return pa.field(name, t) if t is not None else None


def rollback(con: Connection) -> None:
    """Roll back, if the connection still can (a failed commit may have ended the
    transaction already)."""
    with contextlib.suppress(duckdb.Error):
        con.rollback()


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    if isinstance(e, OSError) and e.strerror:
        text = e.strerror
    return text.splitlines()[0] if text else type(e).__name__


def check_version(path: Path, con: Connection) -> int:
    """The store's schema version, if this chainlab reads it."""
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except duckdb.CatalogException:
        raise ChainlabError(
            f"{path} is not a chainlab store (missing table 'meta'); stores are written by "
            "`chainlab run`"
        ) from None
    except duckdb.BinderException:
        raise ChainlabError(
            f"{path} is not a chainlab store (its table 'meta' has no key and value columns); "
            "stores are written by `chainlab run`"
        ) from None
    if row is None:
        raise ChainlabError(f"{path} is not a chainlab store (no schema version)")
    try:
        version = int(row[0])
    except ValueError:
        raise ChainlabError(f"{path} is not a chainlab store (schema version {row[0]!r})") from None
    if version not in READABLE_VERSIONS:
        if version < READABLE_VERSIONS[0]:
            what = (
                f"it was written by an older chainlab: read it with that version (e.g. "
                f"`chainlab export {path}` there), or re-run its campaign into a new store"
            )
        else:
            what = "it was written by a newer chainlab: upgrade chainlab to read it"
        raise ChainlabError(
            f"store {path} has schema version {version}, this chainlab reads version "
            f"{SCHEMA_VERSION} and older versions down to {READABLE_VERSIONS[0]}; {what}"
        )
    return version


def upgrade(path: Path, con: Connection, version: int) -> None:
    """Bring a store opened for writing to SCHEMA_VERSION, one version at a time, and give
    it the column of every lever axis it lacks, in one transaction: a store is either wholly
    upgraded or left as it was."""
    try:
        con.begin()
        old = version
        while version < SCHEMA_VERSION:
            for sql in UPGRADES[version]:
                con.execute(sql)
            version += 1
        for sql in axis_columns_sql(con) + recorded_columns_sql(con):
            con.execute(sql)
        if old != version:
            con.execute(
                "UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION)]
            )
        con.commit()
    except duckdb.Error as e:
        rollback(con)
        raise StoreError(
            f"store {path}: cannot upgrade to schema version {SCHEMA_VERSION} ({first_line(e)})"
        ) from None
