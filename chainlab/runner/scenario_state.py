"""A scenario's execution in typed parts, so each module receives the part it needs:

- the plan: what the scenario is (chainlab.campaign.model.Scenario, immutable; its sampling
  policy is `plan.sampling`);
- `Files`: what `prepare()` made for it (hierarchies, trust anchors, the served chain),
  fixed once made;
- `State`: what happens while it runs (the sampling rule's counts and clocks, how it
  stopped or failed);
- `Results`: what it produced (records, rows of the other tables), which
  chainlab.runner.scenario_rows turns into the store's rows;
- `Visit`: what a step that starts its own engine processes on the running scenario's
  server (load steps, instruction counts) may use of it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from chainlab.campaign.model import LoadPlan, MeasurePlan, Scenario
from chainlab.runner import pki
from chainlab.runner.server_cpu import ServerCpu


def now() -> datetime:
    """UTC, without a zone (the store's TIMESTAMP columns)."""
    return datetime.now(UTC).replace(tzinfo=None)


@dataclass(frozen=True)
class Files:
    """What `prepare()` made: the hierarchy directories, the clients' trust anchors, the
    chain the server sends. None where the scenario has none (a target has no hierarchy;
    only mutual TLS has a client hierarchy; only a dual-chain server a second one)."""

    pki_dir: Path | None = None
    client_pki_dir: Path | None = None  # mutual TLS: the client's hierarchy
    second_pki_dir: Path | None = None  # a dual-chain server's second hierarchy
    trust_file: Path | None = None  # then: both roots, the clients' anchors
    target_ca: Path | None = None  # a target's trust anchors (None: no verification)
    chain: pki.ServedChain | None = None


@dataclass
class State:
    """What happens while the scenario runs: the sampling rule's counts and clocks, and how
    it stopped (`stop_reason`) or failed (`failure_cause`, `failure_detail`)."""

    # Before any measurement: the cost model's seconds per handshake, for the sampling rule
    # and the progress bar until a batch measures its own.
    estimated_s_per_handshake: float
    started_at: datetime = field(default_factory=now)
    t0: float = field(default_factory=time.monotonic)
    # Interleaved order: the time spent on other scenarios between this one's visits
    # (`set_aside` / `resume`), which is not this scenario's wall time.
    waited_s: float = 0.0
    set_aside_at: float | None = None
    # When it ended (`end`), where its rows are made later (chainlab.runner.window).
    ended_at: datetime | None = None
    t_end: float | None = None
    ok_values: list[int] = field(default_factory=list)  # successful latencies, ns
    attempted: int = 0
    failed: int = 0
    warmups: int = 0
    batches: int = 0
    visits: int = 0
    next_seq: int = 0
    engine_s: float = 0.0
    sampling_s: float = 0.0
    seconds_per_handshake: float | None = None
    done: bool = False
    stop_reason: str | None = None
    rel_halfwidth: float | None = None
    failure_cause: str | None = None
    failure_detail: str | None = None
    server_exit: str | None = None

    @property
    def n_ok(self) -> int:
        return len(self.ok_values)

    @property
    def failed_run(self) -> bool:
        return self.stop_reason == "failed"

    def fail(self, cause: str, detail: str) -> None:
        self.done = True
        self.stop_reason = "failed"
        self.failure_cause = cause
        self.failure_detail = detail

    def set_aside(self) -> None:
        """Between visits: other scenarios run until `resume`."""
        self.set_aside_at = time.monotonic()

    def resume(self) -> None:
        if self.set_aside_at is not None:
            self.waited_s += time.monotonic() - self.set_aside_at
            self.set_aside_at = None

    def end(self) -> None:
        """The scenario is over: its wall time stops here."""
        self.ended_at, self.t_end = now(), time.monotonic()

    def wall_seconds(self) -> float:
        """This scenario's own wall time: since it was made until it ended (else now), less
        its waits between visits."""
        end = self.t_end if self.t_end is not None else time.monotonic()
        return end - self.t0 - self.waited_s


@dataclass
class Results:
    """What the scenario produced, for the store (chainlab.runner.scenario_rows)."""

    client: list[dict] = field(default_factory=list)  # the client's records
    server: list[dict] = field(default_factory=list)  # the server's records
    certificates: list[dict] = field(default_factory=list)
    network_row: dict | None = None  # the profile's calibration (emulated networks)
    load_steps: list[dict] = field(default_factory=list)
    load_samples: list[dict] = field(default_factory=list)
    host_reference: list[dict] = field(default_factory=list)
    instruction_samples: list[dict] = field(default_factory=list)
    # The wall time of the instruction counts (valgrind's starts included).
    counting_s: float = 0.0
    # The forwarder's final statistics of each visit's link (emulated networks).
    link_stats: list[dict] = field(default_factory=list)
    # The server's ready line on certificate compression (sizes before and after).
    compression: dict = field(default_factory=dict)
    # The server's CPU while it served, and what its records account for.
    server_cpu: ServerCpu = field(default_factory=ServerCpu)


class Visit(Protocol):
    """What load steps and instruction counts use of the running scenario: its plan, files
    and directory, its server (records, process, link) and the clients' command lines."""

    plan: Scenario
    files: Files
    dir: Path
    state: State
    results: Results

    @property
    def ctx(self): ...  # chainlab.runner.context.RunContext

    @property
    def link(self): ...

    @property
    def server_pid(self) -> int | None: ...

    @property
    def on_loopback(self) -> bool: ...

    @property
    def server_records_path(self) -> Path: ...

    def client_head(self, subcommand: str, stack: str | None = None) -> list[str]: ...

    def client_extras(self, argv: list[str]) -> list[str]: ...

    def reference(self, phase: str, step: int = -1) -> None: ...

    def stop_server(self) -> None: ...


def load_plan_of(ex: Visit) -> LoadPlan:
    """The [load] plan of a scenario whose load steps run (the runner calls `run` only then)."""
    plan = ex.plan.load
    if plan is None:
        raise ValueError(f"scenario {ex.plan.scenario_id} has no load steps")
    return plan


def measure_plan_of(ex: Visit) -> MeasurePlan:
    """The [measure] plan of a scenario whose instructions are counted."""
    plan = ex.plan.measure
    if plan is None:
        raise ValueError(f"scenario {ex.plan.scenario_id} counts no instructions")
    return plan
