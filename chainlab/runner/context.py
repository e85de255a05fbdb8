"""What every scenario of a run shares: the engine, the run's identity and seed, its
networks and their calibrations, the cost model, the host readings, the links and servers
kept between visits, and where the run's own time goes (chainlab.runner.stopwatch)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from chainlab.campaign.model import NetworkProfile
from chainlab.model.cost import CostModel
from chainlab.runner.host import LastReading
from chainlab.runner.links import SharedLinks
from chainlab.runner.progress import ScenarioProgress
from chainlab.runner.servers import ServerPool
from chainlab.runner.stopwatch import Stopwatch


@dataclass
class RunContext:
    engine: Path
    run_id: str
    seed: int
    workdir: Path
    networks: dict[str, NetworkProfile]
    progress: ScenarioProgress
    # profile -> its `network_profiles` row, once the profile is calibrated in this run
    calibrations: dict[str, dict] = field(default_factory=dict)
    # profile -> why it cannot run in this run (chainlab.runner.network.preflight)
    network_errors: dict[str, str] = field(default_factory=dict)
    # A context manager factory under which teardown runs: the campaign runner defers
    # SIGINT/SIGTERM there, so a second Ctrl-C cannot cut a link's teardown short.
    defer: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext
    # The cost model of the run's primitives (None until measured, or without them).
    cost_model: CostModel | None = None
    # Where the scenarios run (chainlab.runner.executors.host_facts), stored per scenario.
    host: dict | None = None
    # A cluster's stop signal: true once the driver was interrupted (None: local run, where
    # the signal itself interrupts). Polled while a client batch runs.
    stopped: Callable[[], bool] | None = None
    # Split placement (chainlab.runner.executors): the server's host listens on this address
    # instead of loopback; the client's host starts no server and gets the address of the
    # one on the other host from this call (which may raise ScenarioFailed).
    listen_host: str | None = None
    remote_server: Callable[[], str] | None = None
    # The latest host reading, which a scenario's start reading right after another's end
    # reuses (chainlab.runner.host).
    readings: LastReading = field(default_factory=LastReading)
    # The run's links kept from one scenario to the next (chainlab.runner.links); None: each
    # visit opens and closes its own. Whoever sets it closes them.
    links: SharedLinks | None = None
    # The run's servers kept from one visit to the next (chainlab.runner.servers); None:
    # each visit starts and stops its own. Whoever sets it closes them.
    servers: ServerPool | None = None
    # Both sides' --random-seed (engine_args.random_flags), where runs of one scenario must
    # draw the same bytes per connection (a path reference and its loopback twin).
    random_seed: int | None = None
    # Where the run's own time goes outside its handshakes (chainlab.runner.stopwatch).
    watch: Stopwatch = field(default_factory=Stopwatch)
