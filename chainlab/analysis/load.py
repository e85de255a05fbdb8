"""A store's content as the analysis needs it: the frames `chainlab.store` reads (which
scenario run counts and which samples: chainlab/store/views.py), joined per scenario, with
the analysis settings of the stored campaign file.
"""

from __future__ import annotations

import functools
import json
import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from chainlab import axes
from chainlab.campaign import Campaign
from chainlab.campaign import load as load_campaign
from chainlab.campaign.analysis_settings import AnalysisConfig, from_campaign_toml
from chainlab.store import AnalysisFrames, Store


@dataclass
class StoreData:
    """A store's content as the analysis needs it (all frames keyed by scenario_id)."""

    path: Path
    meta: dict
    runs: pd.DataFrame
    # scenarios + chosen scenario_runs + moments; one row each. The lab's own scenarios only:
    # targets (servers chainlab did not start, no hierarchy) are in `targets`.
    scenarios: pd.DataFrame
    failures: pd.DataFrame  # scenario_id, error_category, n, example_detail
    # The store's frames: those below that are properties read from it when first asked for.
    frames: AnalysisFrames | None = field(default=None, repr=False, compare=False)
    # Targets: their rows as `scenarios` has them, their failures by category and their load
    # steps (`load_steps` holds the lab's only).
    targets: pd.DataFrame = field(default_factory=pd.DataFrame)
    target_failures: pd.DataFrame = field(default_factory=pd.DataFrame)
    target_load_steps: pd.DataFrame = field(default_factory=pd.DataFrame)
    latencies_ms: dict[str, np.ndarray] = field(default_factory=dict)  # sorted, per scenario
    config: AnalysisConfig = field(default_factory=AnalysisConfig)
    campaign_name: str | None = None
    campaign_sha256: str | None = None
    campaign_hashes: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)  # registered, never executed
    # Load steps of the chosen runs (empty without [load]) and, per (scenario, step), the
    # sorted latencies (ms, from the intended start) of the successful attempts.
    load_steps: pd.DataFrame = field(default_factory=pd.DataFrame)

    # Read from the store the first time an analysis asks (chainlab.store.frames).

    @property
    def campaigns(self) -> pd.DataFrame:
        """campaign, scenario_id."""
        return self._table("campaign_scenarios")

    @property
    def certificates(self) -> pd.DataFrame:
        return self._table("certificates")

    @property
    def observed_chain(self) -> pd.DataFrame:
        return self._table("observed_chain")

    @property
    def network_profiles(self) -> pd.DataFrame:
        return self._table("network_profiles")

    @property
    def observed_client_chain(self) -> pd.DataFrame:
        """Mutual TLS: the client's chain as the server observed it (empty without)."""
        return self._table("observed_client_chain")

    @property
    def network_samples(self) -> pd.DataFrame:
        """Measured ok handshakes of every scenario (_NETWORK_SAMPLES); empty unless some
        scenario ran on an emulated network."""
        return self.frames.network_samples if self.frames is not None else pd.DataFrame()

    @functools.cached_property
    def load_latencies_ms(self) -> dict[tuple[str, int], np.ndarray]:
        """Per (scenario, step) of the lab's load steps, the sorted latencies (ms, from the
        intended start) of the successful attempts."""
        return _by_step(self.frames.load_latencies) if self.frames is not None else {}

    @property
    def host_reference(self) -> pd.DataFrame:
        """The host-speed workload timed around each scenario and load step (may be empty)."""
        return self.frames.host_reference if self.frames is not None else pd.DataFrame()

    @property
    def primitives(self) -> pd.DataFrame:
        """The cost model's inputs: one row per primitive and reference handshake."""
        return self.frames.primitives if self.frames is not None else pd.DataFrame()

    @property
    def rollout_attempts(self) -> pd.DataFrame:
        """Staged rollout: every measured attempt of a scenario with a client population or
        a second chain, with its kind and chain (may be empty)."""
        return self.frames.rollout_attempts if self.frames is not None else pd.DataFrame()

    @property
    def landmark_attempts(self) -> pd.DataFrame:
        """Landmark lag: what each measured attempt of a population's kind was sent and
        verified against a landmark-relative MTC server (may be empty)."""
        return self.frames.landmark_attempts if self.frames is not None else pd.DataFrame()

    @property
    def rollout_load(self) -> pd.DataFrame:
        """The same for the load attempts of those scenarios (may be empty)."""
        return self.frames.rollout_load if self.frames is not None else pd.DataFrame()

    def frame(self, name: str) -> pd.DataFrame:
        """An axis's analysis frame (chainlab.axes.axis.Axis.frames): what the engines
        record for it, per scenario (may be empty)."""
        return self.frames.frame(name) if self.frames is not None else pd.DataFrame()

    def _table(self, name: str) -> pd.DataFrame:
        return self.frames.table(name) if self.frames is not None else pd.DataFrame()

    def uses(self, *keys: str) -> bool:
        """Whether some scenario (the lab's or a target's) holds any of the axes `keys` at
        another value than the axis's default: what a report section needs before its
        analyses can find anything (a store that never set a lever has no data of it)."""
        frames = [f for f in (self.scenarios, self.targets) if not f.empty]
        for key in keys:
            axis = axes.get(key)
            default = dict(zip(axis.column_names, axis.column_values(axis.default), strict=True))
            for f in frames:
                for column in (c for c in axis.column_names if c in f):
                    held = f[column].dropna().astype(str)
                    if (held != str(default[column])).any():
                        return True
        return False

    def algorithms(self) -> set[str]:
        """Every algorithm some lab scenario's hierarchy holds, at any position."""
        columns = [
            c for c in ("root_alg", "int1_alg", "int2_alg", "leaf_alg") if c in self.scenarios
        ]
        return {a for c in columns for a in self.scenarios[c].dropna().astype(str)}


def load_store(path, config: AnalysisConfig | None = None) -> StoreData:
    """Open the store at `path` read-only and gather what the analysis needs.

    `config`, when given, replaces the settings parsed from the stored campaign file.
    """
    p = Path(path)
    with Store.open(p, read_only=True) as store:
        frames = store.analysis_frames()
    runs, scen, chosen = frames.runs, frames.scenarios, frames.chosen_runs
    lat = frames.latencies

    # Only scenarios that were executed (have a scenario run) are analysed.
    chosen = chosen.rename(
        columns={
            "status": "run_status",
            "n_measured": "sr_n_measured",
            "n_ok": "sr_n_ok",
            "n_failed": "sr_n_failed",
            "n_warmup": "sr_n_warmup",
        }
    )
    df = scen.merge(chosen, on="scenario_id", how="inner")
    not_run = sorted(set(scen["scenario_id"]) - set(chosen["scenario_id"]))
    extras = (frames.moments, frames.cpu, frames.counts, frames.datagrams, frames.mtc)
    for extra in (*extras, frames.instructions):
        if "scenario_id" in extra:
            df = df.merge(extra, on="scenario_id", how="left")
    for c in ("n_ok", "n_measured", "n_failed_samples", "cpu_n", "n_server_missing"):
        df[c] = df[c].fillna(0).astype(int)
    df["failed"] = (df["run_status"] != "completed") | (df["n_ok"] == 0)
    df["failure_note"] = [_failure_note(r) if r["failed"] else None for _, r in df.iterrows()]
    df = df.sort_values("scenario_id").reset_index(drop=True)
    is_target = df["target"].notna()
    targets, df = df[is_target].reset_index(drop=True), df[~is_target].reset_index(drop=True)
    target_ids = set(targets["scenario_id"])
    failures = frames.failures
    target_failures = failures[failures["scenario_id"].isin(target_ids)]
    failures = failures[~failures["scenario_id"].isin(target_ids)]
    load_steps, target_load_steps = frames.load_steps, pd.DataFrame()
    if len(load_steps) and len(frames.load_windows):
        # Each step's completions within its schedule's length (the store's _LOAD_WINDOWS).
        load_steps = load_steps.merge(frames.load_windows, on=["scenario_id", "step"], how="left")
    if len(load_steps):
        on_target = load_steps["scenario_id"].isin(target_ids)
        load_steps, target_load_steps = load_steps[~on_target], load_steps[on_target]

    # Sorted latencies in ms of the scenarios that have any (the store's views sort them).
    latencies = {sid: v / 1e6 for sid, v in lat.items() if len(v)}

    last = runs.iloc[-1]
    where = f"store {p}, campaign file {last['campaign_file_name']}"
    cfg = config if config is not None else from_campaign_toml(last["campaign_toml"], where)
    return StoreData(
        path=p,
        meta=frames.meta,
        runs=runs,
        scenarios=df,
        failures=failures,
        frames=frames,
        targets=targets,
        target_failures=target_failures,
        latencies_ms=latencies,
        config=cfg,
        campaign_name=str(last["campaign_file_name"]),
        campaign_sha256=str(last["campaign_file_sha256"]),
        campaign_hashes=sorted(set(runs["campaign_file_sha256"].astype(str))),
        not_run=not_run,
        load_steps=load_steps,
        target_load_steps=target_load_steps,
    )


def _by_step(lat: dict) -> dict[tuple[str, int], np.ndarray]:
    """Sorted latencies in ms per (scenario, step) from the store's ordered columns."""
    out: dict[tuple[str, int], np.ndarray] = {}
    if not lat or not len(lat["scenario_id"]):
        return out
    keys = list(zip(lat["scenario_id"], lat["step"], strict=True))
    values = np.asarray(lat["latency_ns"], dtype=np.float64) / 1e6
    start = 0
    for i in range(1, len(keys) + 1):
        if i == len(keys) or keys[i] != keys[start]:
            out[(str(keys[start][0]), int(keys[start][1]))] = values[start:i]
            start = i
    return out


def _failure_note(r) -> str:
    if r["run_status"] != "completed":
        cause = r.get("failure_cause")
        cause = cause if isinstance(cause, str) and cause else "no cause recorded"
        detail = r.get("failure_detail")
        if isinstance(detail, str) and detail:
            cause = f"{cause} - {detail}"
        return (
            f"scenario run {r['run_status']}: {cause} ({int(r['sr_n_failed'])} of "
            f"{int(r['sr_n_measured'])} measured handshakes failed)"
        )
    return "no successful measured handshake"


def parse_json(value) -> dict:
    """A JSON column value as a dict (DuckDB returns JSON as text)."""
    if isinstance(value, dict):
        return value
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return {}
    try:
        out = json.loads(value)
    except (TypeError, ValueError):
        return {}
    return out if isinstance(out, dict) else {}


def stored_campaign(run) -> Campaign:
    """The campaign file a stored run ran (`runs.campaign_toml` under its file name), loaded
    as this version reads it (raises ChainlabError where it no longer loads)."""
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / Path(run["campaign_file_name"]).name
        f.write_text(run["campaign_toml"])
        return load_campaign(f)
