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
(`chainlab.store.frames`, its queries in `chainlab.store.views`), tests and benchmarks
build stores through the same writer.

Rows are inserted by column name, with the types the catalog gives each column
(`chainlab.store.schema`); a key the table lacks is an error, never dropped. An older store
opens read-only as it is; opened for writing (`--resume`) it is upgraded in place first, in
one transaction, to exactly the columns of a new store.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import duckdb
import pandas as pd
import pyarrow as pa

from chainlab import __version__, axes
from chainlab.errors import ChainlabError
from chainlab.store import schema
from chainlab.store.frames import AnalysisFrames, analysis_frames
from chainlab.store.rows import TABLES_OF_A_SCENARIO, Row, ScenarioRows
from chainlab.store.schema import (
    SCHEMA_SQL,
    SCHEMA_VERSION,
    TABLES,
    StoreError,
    first_line,
    rollback,
    table_sql,
)
from chainlab.store.views import primitive_summary

T = TypeVar("T")

if TYPE_CHECKING:
    from chainlab.campaign.model import Scenario

__all__ = ["SCHEMA_VERSION", "TABLES", "AnalysisFrames", "ScenarioRows", "Store", "StoreError"]


class Store:
    """A result store file. Use `create`, `open` or `open_or_create`, not the constructor."""

    def __init__(self, path: Path, con: duckdb.DuckDBPyConnection, read_only: bool):
        self.path = path
        self.con = con
        self.read_only = read_only
        # Table -> the catalog's columns, read once per table: a store's schema changes only
        # when it is upgraded, on opening.
        self._catalog: dict[str, dict[str, str]] = {}

    # -- opening -----------------------------------------------------------------------

    @classmethod
    def create(cls, path: str | Path) -> Store:
        path = Path(path)
        if path.exists():
            raise ChainlabError(f"store {path} already exists; open it, or choose another path")
        path.parent.mkdir(parents=True, exist_ok=True)
        con = _connect(path, read_only=False)
        try:
            con.begin()
            con.execute(SCHEMA_SQL.read_text())
            for sql in schema.axis_columns_sql(con) + schema.recorded_columns_sql(con):
                con.execute(sql)
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
    def open(cls, path: str | Path, read_only: bool = True) -> Store:
        path = Path(path)
        if path.is_dir():
            raise ChainlabError(not_a_file(path))
        if not path.is_file():
            raise ChainlabError(
                f"no store at {path}; `chainlab run CAMPAIGN --store {path}` creates one"
            )
        con = _connect(path, read_only=read_only)
        try:
            version = schema.check_version(path, con)
            schema.check_tables(path, con, version)
            if not read_only:
                schema.upgrade(path, con, version)
        except duckdb.Error as e:
            con.close()
            raise damaged(path, e) from None
        except Exception:
            con.close()
            raise
        return cls(path, con, read_only=read_only)

    @classmethod
    def open_or_create(cls, path: str | Path) -> Store:
        path = Path(path)
        return cls.open(path, read_only=False) if path.exists() else cls.create(path)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading -----------------------------------------------------------------------

    def query(self, sql: str, params: list[Any] | None = None) -> pd.DataFrame:
        return self.con.execute(sql, params or []).df()

    def table(self, name: str) -> pd.DataFrame:
        if name not in TABLES:
            raise ChainlabError(f"no table {name!r}; allowed: {', '.join(TABLES)}")
        if not self._has_table(name):
            # A table of a later schema version in a store read as it is: empty, with the
            # columns the current schema gives it.
            with duckdb.connect() as mem:
                mem.execute(table_sql(name))
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
    instruction_samples = property(lambda self: self.table("instruction_samples"))
    primitive_samples = property(lambda self: self.table("primitive_samples"))

    def analysis_frames(self) -> AnalysisFrames:
        """What the analysis reads, as raw frames (chainlab.store.frames): what every report
        reads now, the rest from the store when first asked for (`read_later`)."""
        try:
            return analysis_frames(self.con, self.path, functools.partial(read_later, self.path))
        except duckdb.Error as e:
            raise damaged(self.path, e) from None

    def primitive_summary(self, run_id: str | None = None) -> pd.DataFrame:
        """Per primitive and reference handshake: n, means and variances (views.py); with
        `run_id`, of that run's rows alone."""
        return primitive_summary(
            self.con,
            {"primitive_samples"} if self._has_table("primitive_samples") else set(),
            run_id,
        )

    def primitive_rows(self) -> pd.DataFrame:
        """Every `primitive_samples` row (empty in a store without the table)."""
        return self.table("primitive_samples")

    def primitive_records(
        self, keys: Iterable[tuple[str, str, str, str | None]] | None = None
    ) -> list[Row]:
        """Every `primitive_samples` row as plain Python values, None for NULL (DuckDB's own
        conversion: a primitives cache's 89,000 rows in 0.2 s, through pandas 1.3 s); with
        `keys`, only the rows of those (implementation, subject, op, message), and of their
        (subject, op, message) where a row names no implementation (a store before schema
        13). A cache holds every stack's rows of an operation: quick.toml's keys matched
        75,348 rows by (subject, op, message) alone, 0.20 s to read, for its 15,000."""
        if not self._has_table("primitive_samples"):
            return []
        if keys is None:
            cur = self.con.execute("SELECT * FROM primitive_samples")
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
        wanted = sorted({(k[0], k[1], k[2], k[3] or "") for k in keys})
        table = pa.table(
            {
                n: pa.array([k[i] for k in wanted], pa.string())
                for i, n in enumerate(("implementation", "subject", "op", "message"))
            }
        )
        self.con.register("_wanted_keys", table)
        try:
            cur = self.con.execute(
                "SELECT p.* FROM primitive_samples p SEMI JOIN _wanted_keys w ON p.subject = "
                "w.subject AND p.op = w.op AND coalesce(p.message, '') = w.message AND "
                "coalesce(p.implementation, w.implementation) = w.implementation"
            )
            columns = [d[0] for d in cur.description]
            return [dict(zip(columns, row, strict=True)) for row in cur.fetchall()]
        finally:
            self.con.unregister("_wanted_keys")

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
            except duckdb.IOException as e:
                if str(self.path) in str(e):
                    raise damaged(self.path, e) from None
                raise ChainlabError(f"cannot write {f}: {first_line(e)}") from None
            except (duckdb.Error, OSError) as e:
                raise ChainlabError(f"cannot write {f}: {first_line(e)}") from None
            finally:
                if src == "_empty":
                    self.con.unregister("_empty")
            files.append(f)
        return files

    def campaign_files(self) -> set[str]:
        """The campaign files the store's runs ran (not a benchmark's or a probe's own)."""
        rows = self.con.execute("SELECT DISTINCT campaign_file_name FROM runs").fetchall()
        return {r[0] for r in rows if not r[0].startswith("(")}

    def run_seeds(self) -> set[int]:
        """The seeds this store's runs were made with (their options' `seed`)."""
        if not self._has_table("runs"):
            return set()
        df = self.query("SELECT DISTINCT options->>'seed' AS seed FROM runs")
        return {int(x) for x in df["seed"].dropna()}

    def completed_scenarios(self) -> set[str]:
        rows = self.con.execute(
            "SELECT DISTINCT scenario_id FROM scenario_runs WHERE status = 'completed'"
        ).fetchall()
        return {r[0] for r in rows}

    # -- writing -----------------------------------------------------------------------

    def begin_run(self, run: Row) -> None:
        """Inserts the `runs` row of a starting run (status 'running')."""
        self._write(lambda: self.insert("runs", [run]))

    def end_run(self, run_id: str, status: str, ended_at: datetime | None = None) -> None:
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

    def register_scenarios(
        self, scenarios: Iterable[Scenario], memberships: Iterable[tuple[str, str]]
    ) -> None:
        """Adds scenarios and campaign membership; refuses a scenario id the store already
        holds with other parameters (a changed alias would silently mix two experiments)."""
        existing = dict(self.con.execute("SELECT scenario_id, params FROM scenarios").fetchall())

        def work() -> None:
            new = []
            for s in scenarios:
                params = s.params()
                old = existing.get(s.scenario_id)
                if old is not None:
                    # A scenario stored before an axis its params always name existed (a
                    # client certificate) had that axis at its default.
                    old = {**axes.default_params(), **json.loads(old)}
                    if old != params:
                        diff = sorted(k for k in params if old.get(k) != params[k])
                        k = diff[0]
                        raise ChainlabError(
                            f"store {self.path} holds scenario {s.scenario_id} with {k} = "
                            f"{old.get(k)!r}, the campaign file now says {params[k]!r}; run the "
                            "changed campaign into a new store (--store)"
                        )
                    continue
                new.append({"scenario_id": s.scenario_id, **s.columns(), "params": params})
            self.insert("scenarios", new)
            self.insert(
                "campaign_scenarios",
                [{"campaign": c, "scenario_id": sid} for c, sid in memberships],
                or_ignore=True,
            )

        self._write(work)

    def write_scenario(self, result: ScenarioRows) -> None:
        """One transaction: the scenario_runs row, its samples, observed chain, certificates
        and network calibration. Nothing of it is visible unless all of it is."""
        self.write_scenarios([result])

    def write_scenarios(self, results: list[ScenarioRows]) -> None:
        """`write_scenario` for several scenarios in one transaction, each table's rows of
        all of them in one statement (DuckDB's cost is per statement: 22 rows into
        `samples` took 9-14 ms, 2200 rows 13 ms, 2026-11-30)."""

        def rows(name: str) -> list[Row]:
            return [r for result in results for r in getattr(result, name)]

        def work() -> None:
            self.insert("scenario_runs", [r.scenario_run for r in results])
            for table in TABLES_OF_A_SCENARIO:
                self.insert(table, rows(table))
            # Certificates and a profile's calibration are kept once (per scenario, per run).
            self.insert("certificates", rows("certificates"), or_ignore=True)
            networks = [r.network for r in results if r.network is not None]
            self.insert("network_profiles", networks, or_ignore=True)

        self._write(work)

    def write_primitives(self, rows: list[Row]) -> None:
        """Primitive and reference-handshake rows (`primitive_samples`), in one transaction."""
        self._write(lambda: self.insert("primitive_samples", rows))

    def insert(self, table: str, rows: list[Row], or_ignore: bool = False) -> None:
        """Inserts `rows` into `table` by column name, inside the caller's transaction.

        Each column's values go to DuckDB with the type the catalog gives it (JSON columns
        take dicts and lists as JSON text); a column no row names is left to its default. A
        key the table has no column for is an error, never dropped silently."""
        if not rows:
            return
        catalog = self._columns(table)
        named = set().union(*rows)
        unknown = sorted(named - catalog.keys())
        if unknown:
            raise ChainlabError(
                f"store {self.path}: table {table} has no column {', '.join(map(repr, unknown))}; "
                f"its columns: {', '.join(catalog)} (chainlab/store/schema.sql)"
            )
        given = [col for col in catalog if col in named]
        arrays, fields = [], []
        for col in given:
            values = [r.get(col) for r in rows]
            if catalog[col] == "JSON":
                values = [v if v is None or isinstance(v, str) else json.dumps(v) for v in values]
            field = schema.arrow_field(col, catalog[col])
            array = pa.array(values, type=field.type if field is not None else None)
            arrays.append(array)
            fields.append(field or pa.field(col, array.type))
        # DuckDB reads the table by this local's name (its replacement scan of the calling
        # frame): 2.5 ms an insert, where register()/unregister() around it took 4.4 ms
        # (60 columns of 100 rows, 2026-12-01), and a scenario's write is ten inserts.
        chainlab_new_rows = pa.Table.from_arrays(arrays, schema=pa.schema(fields))  # noqa: F841
        cols = ", ".join(given)
        verb = "INSERT OR IGNORE" if or_ignore else "INSERT"
        self.con.execute(f"{verb} INTO {table} ({cols}) SELECT {cols} FROM chainlab_new_rows")

    def _columns(self, table: str) -> dict[str, str]:
        """The catalog's columns of `table`."""
        if table not in self._catalog:
            self._catalog[table] = schema.columns(self.con, table)
        return self._catalog[table]

    def _write(self, work: Callable[[], object]) -> None:
        if self.read_only:
            raise ChainlabError(f"store {self.path} is open read-only")
        try:
            self.con.begin()
            try:
                work()
                self.con.commit()
            except BaseException:
                rollback(self.con)
                raise
        except (duckdb.IOException, OSError) as e:
            raise StoreError(
                f"store {self.path}: cannot write ({first_line(e)}); nothing of this "
                "transaction was kept: free space or fix permissions, then `chainlab run "
                "--resume` completes the run"
            ) from None


def not_a_file(path: Path) -> str:
    """What a store path that is a directory gets told."""
    return f"{path} is a directory, not a store; allowed: a store file (e.g. {path}/run.duckdb)"


def damaged(path: Path, e: BaseException) -> ChainlabError:
    """A store DuckDB could open but not read (truncated, or changed by another program)."""
    return ChainlabError(
        f"store {path} is damaged and cannot be read ({first_line(e)}); restore it from a "
        "copy, or run its campaign into a new store (--store)"
    )


def read_later(path: Path, query: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
    """`query(con)` on the store at `path`, opened read-only for this read alone (a frame the
    analysis asks for after the store it was made from was closed)."""
    con = _connect(path, read_only=True)
    try:
        return query(con)
    except duckdb.Error as e:
        raise damaged(path, e) from None
    finally:
        con.close()


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
        if "not a valid DuckDB database file" in msg:
            raise ChainlabError(
                f"{path} is not a chainlab store (not a DuckDB database file); stores are "
                "written by `chainlab run`"
            ) from None
        raise ChainlabError(f"cannot open store {path}: {msg.splitlines()[0]}") from None
    except duckdb.Error as e:
        raise ChainlabError(
            f"{path} is not a chainlab store (DuckDB: {str(e).splitlines()[0]})"
        ) from None
