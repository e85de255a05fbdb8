"""A store's content as the analysis reads it, before any statistics (the queries are in
chainlab/store/views.py).

What every report reads (the runs, the scenarios, their moments, counts, failures and sorted
latencies) is read when the frames are made. The rest is read from the store the first time
something asks for it, then kept: the optional tables, the emulated samples, the load
steps' latencies, the host reference, the primitives, the rollout attempts. A report whose
sections never ask for a frame never runs its query (chainlab.report.sections: a section
whose data the store lacks is not built). Each late read opens the store read-only for that
read alone, so an analysis holds no lock on the file between reads.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from chainlab import axes
from chainlab.errors import ChainlabError
from chainlab.network.profile import LOOPBACK
from chainlab.store.rows import Connection
from chainlab.store.views import (
    _COUNTS,
    _DATAGRAMS,
    _FAILURES,
    _HOST_REFERENCE,
    _LANDMARK_ATTEMPTS,
    _LOAD_LATENCIES,
    _LOAD_STEPS,
    _LOAD_WINDOWS,
    _MOMENTS,
    _MTC,
    _NETWORK_SAMPLES,
    _OPTIONAL_TABLES,
    _REQUIRED_TABLES,
    _ROLLOUT_ATTEMPTS,
    _ROLLOUT_LOAD,
    _SCENARIO_RUNS,
    _columns,
    _cpu_sql,
    _instructions_sql,
    _latencies,
    measured_query,
    primitive_summary,
)

# Runs `query(con)` on a read-only connection to the store, opened for that call alone.
Reader = Callable[[Callable[[Any], Any]], Any]


@dataclass
class AnalysisFrames:
    """A store's frames: the fields are read at once, the properties on first use."""

    meta: dict[str, str]
    runs: pd.DataFrame  # ordered by start
    scenarios: pd.DataFrame  # the scenarios table, ordered by id
    chosen_runs: pd.DataFrame  # the chosen scenario run of each executed scenario
    moments: pd.DataFrame  # per scenario (_MOMENTS)
    cpu: pd.DataFrame  # per scenario (_CPU)
    counts: pd.DataFrame  # per scenario (_COUNTS)
    datagrams: pd.DataFrame  # per QUIC scenario (_DATAGRAMS); empty before version 5
    mtc: pd.DataFrame  # per MTC scenario (_MTC); empty before version 7
    failures: pd.DataFrame  # scenario_id, error_category, n, example_detail
    # scenario_id -> sorted total_ns (int64) of its chosen run (_LATENCIES)
    latencies: dict[str, np.ndarray]
    load_steps: pd.DataFrame  # _LOAD_STEPS; empty without load steps (or a version-1 store)
    load_windows: pd.DataFrame  # _LOAD_WINDOWS; empty without load steps
    # Per scenario with instruction counts (_INSTRUCTIONS); empty before version 9 or without.
    instructions: pd.DataFrame
    # What the late reads need: how to read, which tables and sample columns the store has,
    # whether any scenario ran on an emulated network.
    read: Reader = field(repr=False)
    tables: frozenset[str] = frozenset()
    sample_columns: frozenset[str] = frozenset()
    emulated: bool = False
    _tables_read: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)
    _frames_read: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)

    def table(self, name: str) -> pd.DataFrame:
        """One of _OPTIONAL_TABLES, whole; empty where the store lacks it."""
        if name not in _OPTIONAL_TABLES:
            raise ValueError(f"not an optional table: {name}")
        if name not in self._tables_read:
            self._tables_read[name] = (
                self.read(lambda con: con.execute(f"SELECT * FROM {name}").df())
                if name in self.tables
                else pd.DataFrame()
            )
        return self._tables_read[name]

    def frame(self, name: str) -> pd.DataFrame:
        """An axis's analysis frame (`Axis.frames`), read when first asked for; empty where
        the store lacks a column the axis records (a store from before the axis recorded)."""
        if name not in self._frames_read:
            axis = axes.frame_owner(name)
            held = all(r.column in self.sample_columns for r in axis.recorded)
            self._frames_read[name] = (
                self.read(lambda con: con.execute(measured_query(axis.frames[name])).df())
                if held
                else pd.DataFrame()
            )
        return self._frames_read[name]

    @functools.cached_property
    def network_samples(self) -> pd.DataFrame:
        """_NETWORK_SAMPLES; empty unless a scenario is emulated."""
        if not self.emulated:
            return pd.DataFrame()
        return self.read(lambda con: con.execute(_NETWORK_SAMPLES).df())

    @functools.cached_property
    def load_latencies(self) -> dict[str, np.ndarray]:
        """fetchnumpy of _LOAD_LATENCIES: scenario_id, step, latency_ns ({} without)."""
        if "load_samples" not in self.tables:
            return {}
        got: dict[str, np.ndarray] = self.read(
            lambda con: con.execute(_LOAD_LATENCIES).fetchnumpy()
        )
        return got

    @functools.cached_property
    def host_reference(self) -> pd.DataFrame:
        """_HOST_REFERENCE; empty in stores without it."""
        if "host_reference" not in self.tables:
            return pd.DataFrame()
        return self.read(lambda con: con.execute(_HOST_REFERENCE).df())

    @functools.cached_property
    def primitives(self) -> pd.DataFrame:
        """PRIMITIVE_SUMMARY; empty (with its columns) in stores without primitives."""
        return self.read(lambda con: primitive_summary(con, set(self.tables)))

    @functools.cached_property
    def rollout_attempts(self) -> pd.DataFrame:
        """_ROLLOUT_ATTEMPTS; empty before version 8 or without a population."""
        if "client_kind" not in self.sample_columns:
            return pd.DataFrame()
        return self.read(lambda con: con.execute(_ROLLOUT_ATTEMPTS).df())

    @functools.cached_property
    def landmark_attempts(self) -> pd.DataFrame:
        """_LANDMARK_ATTEMPTS; empty before version 15 (no landmark lag then)."""
        if "mtc_landmark" not in self.sample_columns:
            return pd.DataFrame()
        return self.read(lambda con: con.execute(_LANDMARK_ATTEMPTS).df())

    @functools.cached_property
    def rollout_load(self) -> pd.DataFrame:
        """_ROLLOUT_LOAD; empty without a population's load steps."""
        if "client_kind" not in self.sample_columns or "load_samples" not in self.tables:
            return pd.DataFrame()
        return self.read(lambda con: con.execute(_ROLLOUT_LOAD).df())


def analysis_frames(con: Connection, path: Path, read: Reader) -> AnalysisFrames:
    """What every report reads, from an open store connection; `read` for the rest."""
    tables = {
        r[0]
        for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
        ).fetchall()
    }
    missing = [t for t in _REQUIRED_TABLES if t not in tables]
    if missing:
        raise ChainlabError(
            f"store {path}: not a chainlab result store (missing table {missing[0]!r}); "
            "stores are written by `chainlab run`"
        )
    runs = con.execute("SELECT * FROM runs ORDER BY started_at, run_id").df()
    if runs.empty:
        raise ChainlabError(f"store {path}: holds no run (the runs table is empty)")
    scenarios = _scenarios(con)
    # Older stores (read as they are) lack the whole-connection CPU (v1) and instructions.
    sample_columns = _columns(con, "samples")
    counted = con.execute(
        "SELECT count(*) FROM scenarios WHERE network <> ?", [LOOPBACK]
    ).fetchone()
    emulated = counted is not None and counted[0] > 0
    chosen = con.execute(_SCENARIO_RUNS).df()
    return AnalysisFrames(
        meta=dict(con.execute("SELECT key, value FROM meta").fetchall()),
        runs=runs,
        scenarios=scenarios,
        chosen_runs=chosen,
        moments=con.execute(_MOMENTS).df(),
        cpu=con.execute(_cpu_sql(sample_columns)).df(),
        counts=con.execute(_COUNTS).df(),
        datagrams=(
            con.execute(_DATAGRAMS).df() if "datagrams_read" in sample_columns else pd.DataFrame()
        ),
        mtc=con.execute(_MTC).df() if "mtc_kind" in sample_columns else pd.DataFrame(),
        failures=con.execute(_FAILURES).df(),
        latencies=_latencies(con, chosen),
        load_steps=con.execute(_LOAD_STEPS).df() if "load_steps" in tables else pd.DataFrame(),
        load_windows=(
            con.execute(_LOAD_WINDOWS).df()
            if {"load_samples", "load_steps"} <= tables
            else pd.DataFrame()
        ),
        instructions=(
            con.execute(_instructions_sql(con)).df()
            if "instruction_samples" in tables
            else pd.DataFrame()
        ),
        read=read,
        tables=frozenset(tables),
        sample_columns=frozenset(sample_columns),
        emulated=bool(emulated),
    )


def _scenarios(con: Connection) -> pd.DataFrame:
    """The scenarios table, ordered by id, with every lever's columns: a store read as it is,
    made before a lever existed, ran every scenario at its default (no client certificate
    before version 4, TCP before 5, OpenSSL 3.5 before 6) or at what the axis says of
    scenarios stored before the column (an MTC's encoding)."""
    scenarios = con.execute("SELECT * FROM scenarios ORDER BY scenario_id").df()
    if "target" not in scenarios:
        # Stores before version 4 (read as they are) knew no targets.
        scenarios["target"] = None
    for axis in axes.levers():
        for column in axis.column_names:
            if column not in scenarios:
                scenarios[column] = [
                    axis.value_before(column, row) for row in scenarios.to_dict("records")
                ] if len(scenarios) else axis.value_before(column, {})  # fmt: skip
    return scenarios
