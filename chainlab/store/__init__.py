"""The result store: one DuckDB file per campaign run (`schema.sql` is the contract).

    import chainlab
    st = chainlab.open("results/quick.duckdb")     # read-only
    st.samples            # pandas DataFrame, one row per handshake (client + server paired)
    st.scenarios, st.scenario_runs, st.runs, st.campaign_scenarios, st.certificates,
    st.observed_chain, st.network_profiles
    st.query("SELECT ... FROM samples WHERE ...", [params])

Writes are transactional: a scenario's samples and its `scenario_runs` row are committed
together, so a killed run leaves a store that opens and holds every completed scenario.

This package is the only code that opens a store file, for reading or writing: the runner
writes through `Store`, the analysis reads through `Store.analysis_frames()`
(`chainlab.store.views`), tests and benchmarks build stores through the same writer.

Versions: 2 added `runs.libraries` (the Python analysis libraries of the run) and the load
tables; 3 added `primitive_samples` (the cost model's inputs), instructions per handshake
and the certificate compression sizes of each scenario run; 4 client certificates, targets
and where each scenario ran; 5 the transport (TCP or QUIC) and QUIC's datagram counts; 6
the TLS stack of each side (openssl-3.5, openssl-4.0, rustls).
An older store opens read-only as it is; opened for writing (`--resume`) it is upgraded in
place first, in one transaction.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa

from chainlab import __version__
from chainlab.campaign.algorithms import NO_CLIENT_AUTH
from chainlab.campaign.model import SCENARIO_KEYS
from chainlab.campaign.stacks import DEFAULT_STACK
from chainlab.errors import ChainlabError
from chainlab.store.rows import ScenarioRows
from chainlab.store.views import AnalysisFrames, analysis_frames, primitive_summary

SCHEMA_SQL = Path(__file__).with_name("schema.sql")

__all__ = ["SCHEMA_VERSION", "TABLES", "AnalysisFrames", "ScenarioRows", "Store", "StoreError"]


def _table_sql(name: str) -> str:
    """The CREATE TABLE statement of `name` in schema.sql (for upgrades)."""
    text = SCHEMA_SQL.read_text()
    start = text.index(f"CREATE TABLE {name} (")
    return text[start : text.index("\n);", start) + 3]


SCHEMA_VERSION = 6
# Versions this chainlab reads; each older one has an upgrade step in _UPGRADES.
READABLE_VERSIONS = (1, 2, 3, 4, 5, 6)
# What turns a store of version v into v + 1 (run in one transaction with the version bump).
_UPGRADES = {
    1: (
        "ALTER TABLE runs ADD COLUMN libraries JSON",
        "ALTER TABLE samples ADD COLUMN server_conn_ns BIGINT",
        "ALTER TABLE samples ADD COLUMN server_conn_cpu_ns BIGINT",
        *(
            f"ALTER TABLE scenario_runs ADD COLUMN {column}"
            for column in (
                "link_timer_late_us_mean DOUBLE",
                "link_timer_late_us_max DOUBLE",
                "link_queue_wait_us_max DOUBLE",
                "link_flagged BOOLEAN",
            )
        ),
        # The load tables, as schema.sql declares them.
        *(_table_sql(t) for t in ("load_steps", "load_samples", "host_reference")),
    ),
    2: (
        "ALTER TABLE samples ADD COLUMN client_instructions BIGINT",
        "ALTER TABLE samples ADD COLUMN server_instructions BIGINT",
        "ALTER TABLE scenario_runs ADD COLUMN cert_message_bytes INTEGER",
        "ALTER TABLE scenario_runs ADD COLUMN cert_compressed_bytes INTEGER",
        "ALTER TABLE scenario_runs ADD COLUMN cert_compression_installed BOOLEAN",
        _table_sql("primitive_samples"),
    ),
    3: (
        f"ALTER TABLE scenarios ADD COLUMN client_auth VARCHAR DEFAULT '{NO_CLIENT_AUTH}'",
        "ALTER TABLE scenarios ADD COLUMN target VARCHAR",
        "ALTER TABLE scenarios ALTER COLUMN leaf_alg DROP NOT NULL",
        "ALTER TABLE scenario_runs ADD COLUMN host JSON",
        _table_sql("observed_client_chain"),
    ),
    4: (
        "ALTER TABLE scenarios ADD COLUMN transport VARCHAR DEFAULT 'tcp'",
        *(
            f"ALTER TABLE samples ADD COLUMN {column} BIGINT"
            for column in (
                "datagrams_read",
                "datagrams_written",
                "conn_datagrams_read",
                "conn_datagrams_written",
                "flight_datagrams",
            )
        ),
    ),
    5: (
        f"ALTER TABLE scenarios ADD COLUMN client_stack VARCHAR DEFAULT '{DEFAULT_STACK}'",
        f"ALTER TABLE scenarios ADD COLUMN server_stack VARCHAR DEFAULT '{DEFAULT_STACK}'",
    ),
}

# The `scenarios` columns a Scenario fills from its attributes of the same name (its
# client_auth column is `client_auth_name`).
SCENARIO_COLUMNS = ("scenario_id", "kex_family", *SCENARIO_KEYS, "network", "target")

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
)

# Column types of `samples` as handed to DuckDB (same order as the table).
SAMPLE_COLUMNS = pa.schema(
    [
        ("run_id", pa.string()),
        ("scenario_id", pa.string()),
        ("seq", pa.int64()),
        ("warmup", pa.bool_()),
        ("conn_id", pa.string()),
        ("start_unix_ns", pa.int64()),
        ("outcome", pa.string()),
        ("error_category", pa.string()),
        ("error_detail", pa.string()),
        ("connect_ns", pa.int64()),
        ("handshake_ns", pa.int64()),
        ("total_ns", pa.int64()),
        ("client_cpu_ns", pa.int64()),
        ("client_cpu_user_us", pa.int64()),
        ("client_cpu_sys_us", pa.int64()),
        ("bytes_read", pa.int64()),
        ("bytes_written", pa.int64()),
        ("conn_bytes_read", pa.int64()),
        ("conn_bytes_written", pa.int64()),
        ("grp", pa.string()),
        ("sigalg", pa.string()),
        ("resumed", pa.bool_()),
        ("verify", pa.bool_()),
        ("chain_len", pa.int32()),
        ("chain_der_bytes", pa.int64()),
        ("server_handshake_ns", pa.int64()),
        ("server_cpu_ns", pa.int64()),
        ("server_cpu_user_us", pa.int64()),
        ("server_cpu_sys_us", pa.int64()),
        ("server_bytes_read", pa.int64()),
        ("server_bytes_written", pa.int64()),
        ("server_outcome", pa.string()),
        ("server_error_category", pa.string()),
        ("server_conn_ns", pa.int64()),
        ("server_conn_cpu_ns", pa.int64()),
        ("client_instructions", pa.int64()),
        ("server_instructions", pa.int64()),
        ("datagrams_read", pa.int64()),
        ("datagrams_written", pa.int64()),
        ("conn_datagrams_read", pa.int64()),
        ("conn_datagrams_written", pa.int64()),
        ("flight_datagrams", pa.int64()),
    ]
)
# Column types of `primitive_samples`, likewise.
PRIMITIVE_COLUMNS = pa.schema(
    [
        ("run_id", pa.string()),
        ("subject", pa.string()),
        ("op", pa.string()),
        ("message", pa.string()),
        ("message_bytes", pa.int64()),
        ("seq", pa.int64()),
        ("wall_ns", pa.int64()),
        ("cpu_ns", pa.int64()),
        ("server_cpu_ns", pa.int64()),
        ("kib", pa.float64()),
        ("measured_run", pa.string()),
        ("measured_at", pa.timestamp("us")),
    ]
)
# Column types of `load_samples`, likewise.
LOAD_SAMPLE_COLUMNS = pa.schema(
    [
        ("run_id", pa.string()),
        ("scenario_id", pa.string()),
        ("step", pa.int32()),
        ("seq", pa.int64()),
        ("intended_ns", pa.int64()),
        ("sched_lag_ns", pa.int64()),
        ("latency_ns", pa.int64()),
        ("total_ns", pa.int64()),
        ("outcome", pa.string()),
        ("error_category", pa.string()),
        ("resumed", pa.bool_()),
        ("client_cpu_ns", pa.int64()),
        ("server_cpu_ns", pa.int64()),
        ("server_conn_cpu_ns", pa.int64()),
    ]
)


class StoreError(ChainlabError):
    """The store's file system refused a write (disk full, permission, read-only): the
    transaction was rolled back, so the store holds every scenario committed before."""


class Store:
    """A result store file. Use `create`, `open` or `open_or_create`, not the constructor."""

    def __init__(self, path: Path, con: duckdb.DuckDBPyConnection, read_only: bool):
        self.path = path
        self.con = con
        self.read_only = read_only

    # -- opening -----------------------------------------------------------------------

    @classmethod
    def create(cls, path) -> Store:
        path = Path(path)
        if path.exists():
            raise ChainlabError(f"store {path} already exists; open it, or choose another path")
        path.parent.mkdir(parents=True, exist_ok=True)
        con = _connect(path, read_only=False)
        try:
            con.begin()
            con.execute(SCHEMA_SQL.read_text())
            con.execute(
                "INSERT INTO meta VALUES ('schema_version', ?), ('created_by', ?)",
                [str(SCHEMA_VERSION), f"chainlab {__version__}"],
            )
            con.commit()
        except Exception:
            con.close()
            path.unlink(missing_ok=True)
            raise
        return cls(path, con, read_only=False)

    @classmethod
    def open(cls, path, read_only: bool = True) -> Store:
        path = Path(path)
        if not path.is_file():
            raise ChainlabError(
                f"no store at {path}; `chainlab run CAMPAIGN --store {path}` creates one"
            )
        con = _connect(path, read_only=read_only)
        try:
            version = _check_version(path, con)
            if version < SCHEMA_VERSION and not read_only:
                _upgrade(path, con, version)
        except Exception:
            con.close()
            raise
        return cls(path, con, read_only=read_only)

    @classmethod
    def open_or_create(cls, path) -> Store:
        path = Path(path)
        return cls.open(path, read_only=False) if path.exists() else cls.create(path)

    def close(self) -> None:
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- reading -----------------------------------------------------------------------

    def query(self, sql: str, params=None) -> pd.DataFrame:
        return self.con.execute(sql, params or []).df()

    def table(self, name: str) -> pd.DataFrame:
        if name not in TABLES:
            raise ChainlabError(f"no table {name!r}; allowed: {', '.join(TABLES)}")
        if not self._has_table(name):
            # A table of a later schema version in a store read as it is: empty, with the
            # columns the current schema gives it.
            with duckdb.connect() as mem:
                mem.execute(_table_sql(name))
                return mem.execute(f"SELECT * FROM {name}").df()
        if name == "samples":
            # HUGEINT would become float64 in pandas and lose nanoseconds: hand out int64.
            return self.query(
                "SELECT * REPLACE (CAST(start_unix_ns AS BIGINT) AS start_unix_ns) "
                "FROM samples ORDER BY run_id, scenario_id, seq"
            )
        return self.query(f"SELECT * FROM {name}")

    def _has_table(self, name: str) -> bool:
        rows = self.con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_name = ?", [name]
        ).fetchall()
        return bool(rows)

    samples = property(lambda self: self.table("samples"))
    scenarios = property(lambda self: self.table("scenarios"))
    scenario_runs = property(lambda self: self.table("scenario_runs"))
    runs = property(lambda self: self.table("runs"))
    campaign_scenarios = property(lambda self: self.table("campaign_scenarios"))
    certificates = property(lambda self: self.table("certificates"))
    observed_chain = property(lambda self: self.table("observed_chain"))
    observed_client_chain = property(lambda self: self.table("observed_client_chain"))
    network_profiles = property(lambda self: self.table("network_profiles"))
    load_steps = property(lambda self: self.table("load_steps"))
    load_samples = property(lambda self: self.table("load_samples"))
    host_reference = property(lambda self: self.table("host_reference"))
    primitive_samples = property(lambda self: self.table("primitive_samples"))

    def analysis_frames(self) -> AnalysisFrames:
        """What the analysis reads, as raw frames (chainlab.store.views)."""
        return analysis_frames(self.con, self.path)

    def primitive_summary(self) -> pd.DataFrame:
        """Per primitive and reference handshake: n, means and variances (views.py)."""
        return primitive_summary(
            self.con, {"primitive_samples"} if self._has_table("primitive_samples") else set()
        )

    def primitive_rows(self) -> pd.DataFrame:
        """Every `primitive_samples` row (empty in a store without the table)."""
        return self.table("primitive_samples")

    def export(self, out: Path, fmt: str) -> list[Path]:
        """Every table into `out`, one `<table>.<fmt>` file each (parquet or csv); a table
        of a later schema version than the store's is written empty, with its columns."""
        files = []
        for t in TABLES:
            f = out / f"{t}.{fmt}"
            target = str(f).replace("'", "''")
            if not self._has_table(t):
                self.con.register("_empty", self.table(t))
                src = "_empty"
            elif t == "samples":
                # HUGEINT as BIGINT, so every reader (pandas, spreadsheets) gets integers.
                src = (
                    "(SELECT * REPLACE (CAST(start_unix_ns AS BIGINT) AS start_unix_ns) "
                    "FROM samples)"
                )
            else:
                src = t
            opts = "(FORMAT parquet)" if fmt == "parquet" else "(FORMAT csv, HEADER true)"
            try:
                self.con.execute(f"COPY {src} TO '{target}' {opts}")
            except (duckdb.Error, OSError) as e:
                raise ChainlabError(f"cannot write {f}: {_first_line(e)}") from None
            finally:
                if src == "_empty":
                    self.con.unregister("_empty")
            files.append(f)
        return files

    def completed_scenarios(self) -> set[str]:
        rows = self.con.execute(
            "SELECT DISTINCT scenario_id FROM scenario_runs WHERE status = 'completed'"
        ).fetchall()
        return {r[0] for r in rows}

    # -- writing -----------------------------------------------------------------------

    def begin_run(self, run: dict) -> None:
        """Inserts the `runs` row of a starting run (status 'running')."""
        cols = list(run)
        vals = [json.dumps(v) if isinstance(v, dict) else v for v in run.values()]
        self._write(
            lambda: self.con.execute(
                f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                vals,
            )
        )

    def end_run(self, run_id: str, status: str, ended_at=None) -> None:
        """Marks a run ended with `status`, at `ended_at` (UTC; default now)."""
        self._write(
            lambda: self.con.execute(
                "UPDATE runs SET status = ?, "
                "ended_at = coalesce(?, now() AT TIME ZONE 'UTC') WHERE run_id = ?",
                [status, ended_at, run_id],
            )
        )

    def mark_dead_runs(self) -> None:
        """Runs still 'running' when a writer opens the store were killed (the writer holds
        the file's lock, so no other run is alive): mark them 'interrupted' (ended_at stays
        NULL: when they died is unknown)."""
        self._write(
            lambda: self.con.execute(
                "UPDATE runs SET status = 'interrupted' WHERE status = 'running'"
            )
        )

    def register_scenarios(self, scenarios, memberships) -> None:
        """Adds scenarios and campaign membership; refuses a scenario id the store already
        holds with other parameters (a changed alias would silently mix two experiments)."""
        existing = dict(self.con.execute("SELECT scenario_id, params FROM scenarios").fetchall())

        def work():
            for s in scenarios:
                params = s.params()
                old = existing.get(s.scenario_id)
                if old is not None:
                    # Scenarios stored before client certificates existed had none.
                    old = {"client_auth": NO_CLIENT_AUTH, **json.loads(old)}
                    if old != params:
                        diff = sorted(k for k in params if old.get(k) != params[k])
                        k = diff[0]
                        raise ChainlabError(
                            f"store {self.path} holds scenario {s.scenario_id} with {k} = "
                            f"{old.get(k)!r}, the campaign file now says {params[k]!r}; run the "
                            "changed campaign into a new store (--store)"
                        )
                    continue
                self._insert_row(
                    "scenarios",
                    {
                        **{k: getattr(s, k) for k in SCENARIO_COLUMNS},
                        "client_auth": s.client_auth_name,
                        "params": json.dumps(params),
                    },
                )
            for campaign, sid in memberships:
                self.con.execute(
                    "INSERT INTO campaign_scenarios VALUES (?, ?) ON CONFLICT DO NOTHING",
                    [campaign, sid],
                )

        self._write(work)

    def write_scenario(self, result: ScenarioRows) -> None:
        """One transaction: the scenario_runs row, its samples, observed chain, certificates
        and network calibration. Nothing of it is visible unless all of it is."""

        def work():
            self._insert_scenario_run(result.scenario_run)
            self._insert_samples(result.samples)
            self._insert_observed_chain("observed_chain", result.observed_chain)
            self._insert_observed_chain("observed_client_chain", result.observed_client_chain)
            for c in result.certificates:
                self.con.execute(
                    "INSERT INTO certificates VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    [
                        c[k]
                        for k in (
                            "scenario_id",
                            "position",
                            "role",
                            "algorithm",
                            "der_bytes",
                            "sha256",
                            "served",
                        )
                    ],
                )
            for row in result.load_steps:
                self._insert_row("load_steps", row)
            for row in result.host_reference:
                self._insert_row("host_reference", row)
            self._insert_arrow("load_samples", result.load_samples, LOAD_SAMPLE_COLUMNS)
            if result.network is not None:
                n = result.network
                self.con.execute(
                    "INSERT INTO network_profiles VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    [
                        n["run_id"],
                        n["profile"],
                        json.dumps(n["configured"]),
                        json.dumps(n["measured"]) if n["measured"] is not None else None,
                        n["flagged"],
                    ],
                )

        self._write(work)

    def write_primitives(self, rows: list[dict]) -> None:
        """Primitive and reference-handshake rows (`primitive_samples`), in one transaction."""
        self._write(lambda: self._insert_arrow("primitive_samples", rows, PRIMITIVE_COLUMNS))

    def _insert_scenario_run(self, row: dict) -> None:
        self._insert_row("scenario_runs", row)

    def _insert_row(self, table: str, row: dict) -> None:
        row = {k: json.dumps(v) if isinstance(v, dict) else v for k, v in row.items()}
        cols = list(row)
        self.con.execute(
            f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
            list(row.values()),
        )

    def _insert_samples(self, rows: list[dict]) -> None:
        self._insert_arrow("samples", rows, SAMPLE_COLUMNS)

    def _insert_arrow(self, table: str, rows: list[dict], schema: pa.Schema) -> None:
        if not rows:
            return
        self.con.register("_new_rows", pa.Table.from_pylist(rows, schema=schema))
        try:
            cols = ", ".join(schema.names)
            self.con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM _new_rows")
        finally:
            self.con.unregister("_new_rows")

    def _insert_observed_chain(self, table: str, rows: list[dict]) -> None:
        for r in rows:
            self.con.execute(
                f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    r[k]
                    for k in (
                        "run_id",
                        "scenario_id",
                        "position",
                        "der_bytes",
                        "subject",
                        "sig_alg",
                        "key_alg",
                    )
                ],
            )

    def _write(self, work) -> None:
        if self.read_only:
            raise ChainlabError(f"store {self.path} is open read-only")
        try:
            self.con.begin()
            try:
                work()
                self.con.commit()
            except BaseException:
                _rollback(self.con)
                raise
        except (duckdb.IOException, OSError) as e:
            raise StoreError(
                f"store {self.path}: cannot write ({_first_line(e)}); nothing of this "
                "transaction was kept: free space or fix permissions, then `chainlab run "
                "--resume` completes the run"
            ) from None


def _rollback(con) -> None:
    """Roll back, if the connection still can (a failed commit may have ended the
    transaction already)."""
    with contextlib.suppress(duckdb.Error):
        con.rollback()


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    if isinstance(e, OSError) and e.strerror:
        text = e.strerror
    return text.splitlines()[0] if text else type(e).__name__


def _connect(path: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(str(path), read_only=read_only)
    except duckdb.IOException as e:
        msg = str(e)
        if "lock" in msg.lower():
            raise ChainlabError(
                f"store {path} is in use by another process (a running `chainlab run`?); "
                "open it when that ends"
            ) from None
        raise ChainlabError(f"cannot open store {path}: {msg.splitlines()[0]}") from None
    except duckdb.Error as e:
        raise ChainlabError(
            f"{path} is not a chainlab store (DuckDB: {str(e).splitlines()[0]})"
        ) from None


def _check_version(path: Path, con) -> int:
    """The store's schema version, if this chainlab reads it."""
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except duckdb.CatalogException:
        raise ChainlabError(
            f"{path} is not a chainlab store (missing table 'meta'); stores are written by "
            "`chainlab run`"
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


def _upgrade(path: Path, con, version: int) -> None:
    """Bring a store opened for writing to SCHEMA_VERSION, one version at a time, in one
    transaction: a store is either wholly upgraded or left as it was."""
    try:
        con.begin()
        while version < SCHEMA_VERSION:
            for sql in _UPGRADES[version]:
                con.execute(sql)
            version += 1
        con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION)])
        con.commit()
    except duckdb.Error as e:
        _rollback(con)
        raise StoreError(
            f"store {path}: cannot upgrade to schema version {SCHEMA_VERSION} ({_first_line(e)})"
        ) from None
