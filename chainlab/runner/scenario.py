"""One scenario: PKI, server process, client batches, the sampling rule, the result rows.

Lifecycle: `prepare()` (hierarchy from the cache), then one or more visits of
`open()` (emulated link if any, server started and its ready line awaited), `step()`
(one client batch; returns True when the scenario is done), `close()` (server stopped,
its records read, the link torn down). A sequential run makes one visit; the interleaved
order makes one visit per batch. `result()` gives the rows the store writes in one
transaction.

Targets ([targets.<name>]): no hierarchy, no server and no link; the client connects to the
target's address (resolved once, in `prepare()`) with its server name and trust anchors, and
the server-side fields of its rows stay empty.

Emulated networks: every visit gets its own link (namespaces, forwarder), but a profile is
calibrated only on the first link of the run that uses it; every scenario on the profile
carries that calibration's `network_profiles` row, which the store keeps once per run.
"""

from __future__ import annotations

import collections
import contextlib
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from chainlab import processes
from chainlab.campaign import estimate
from chainlab.campaign.model import NetworkProfile, Scenario, cpu_list
from chainlab.network import calibrate, emulated_link
from chainlab.network.profile import LOOPBACK
from chainlab.runner import (
    engine_args,
    host,
    instructions,
    load,
    network,
    pki,
    records,
    sampler,
    scenario_rows,
    seeds,
    target,
)
from chainlab.store import ScenarioRows

# How long a server may take to print its ready line: it loads one hierarchy and binds a
# socket, well under a second normally; generous for a loaded shared machine.
SERVER_READY_TIMEOUT_S = 20.0
# Progress poll interval while a client batch runs: reading the records file's size twice a
# second costs nothing measurable next to the engine's two busy processes.
POLL_S = 0.5


@dataclass
class RunContext:
    engine: Path
    run_id: str
    seed: int
    workdir: Path
    networks: dict[str, NetworkProfile]
    progress: object  # chainlab.runner.progress.Progress
    # profile -> its `network_profiles` row, once the profile is calibrated in this run
    calibrations: dict[str, dict] = field(default_factory=dict)
    # profile -> why it cannot run in this run (chainlab.runner.network.preflight)
    network_errors: dict[str, str] = field(default_factory=dict)
    # A context manager factory under which teardown runs: the campaign runner defers
    # SIGINT/SIGTERM there, so a second Ctrl-C cannot cut a link's teardown short.
    defer: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext
    # The cost model of the run's primitives (None until measured, or without them).
    cost_model: object = None
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


class ScenarioStopped(Exception):
    """The run was stopped from outside this process (a cluster's driver was interrupted)."""


class ScenarioFailed(Exception):
    def __init__(self, cause: str, detail: str):
        super().__init__(f"{cause}: {detail}")
        self.cause = cause
        self.detail = detail


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class ScenarioExecution:
    def __init__(self, ctx: RunContext, scenario: Scenario):
        self.ctx = ctx
        self.s = scenario
        self.policy = scenario.sampling
        self.dir = ctx.workdir / scenario.scenario_id
        self.dir.mkdir(parents=True, exist_ok=True)
        self.started_at = _now()
        self.t0 = time.monotonic()
        # Interleaved order: the time spent on other scenarios between this one's visits
        # (`set_aside` / `resume`), which is not this scenario's wall time.
        self.waited_s = 0.0
        self._set_aside_at: float | None = None
        self.client: list[dict] = []
        self.server: list[dict] = []
        self.ok_values: list[int] = []
        self.attempted = 0
        self.failed = 0
        self.warmups = 0
        self.batches = 0
        self.visits = 0
        self.next_seq = 0
        self.engine_s = 0.0
        self.sampling_s = 0.0
        self.seconds_per_handshake: float | None = None
        self.done = False
        self.stop_reason: str | None = None
        self.rel_halfwidth: float | None = None
        self.failure_cause: str | None = None
        self.failure_detail: str | None = None
        self.server_exit: str | None = None
        self.pki_dir: Path | None = None
        self.client_pki_dir: Path | None = None  # mutual TLS: the client's hierarchy
        self.second_pki_dir: Path | None = None  # a dual-chain server's second hierarchy
        self.trust_file: Path | None = None  # then: both roots, the clients' anchors
        self.target_ca: Path | None = None  # a target's trust anchors (None: no verification)
        self.chain: pki.ServedChain | None = None
        self.certificates: list[dict] = []
        self.network_row: dict | None = None
        self.load_steps: list[dict] = []
        self.load_samples: list[dict] = []
        self.host_reference: list[dict] = []
        self.instruction_samples: list[dict] = []
        # The forwarder's final statistics of each visit's link (emulated networks).
        self.link_stats: list[dict] = []
        # The server's ready line on certificate compression (sizes before and after).
        self.compression: dict = {}
        self._server_proc: subprocess.Popen | None = None
        self._server_addr: str | None = None
        self._link_stack: contextlib.ExitStack | None = None
        self._link = None
        self.estimated_s_per_handshake = estimate.handshake_ms(scenario, ctx.cost_model) / 1000

    # -- failure -----------------------------------------------------------------------

    def set_aside(self) -> None:
        """Between visits: other scenarios run until `resume`."""
        self._set_aside_at = time.monotonic()

    def resume(self) -> None:
        if self._set_aside_at is not None:
            self.waited_s += time.monotonic() - self._set_aside_at
            self._set_aside_at = None

    def wall_seconds(self) -> float:
        """This scenario's own wall time: since it was made, less its waits between visits."""
        return time.monotonic() - self.t0 - self.waited_s

    def fail(self, cause: str, detail: str) -> None:
        self.done = True
        self.stop_reason = "failed"
        self.failure_cause = cause
        self.failure_detail = detail

    # -- lifecycle ---------------------------------------------------------------------

    def prepare(self) -> None:
        if self.s.target_spec is not None:
            self._prepare_target()
            return
        try:
            self.pki_dir = pki.ensure(
                self.ctx.engine, self.s.hierarchy, self.ctx.seed,
                mtc=self.s.certificate.pki_flags(),
            )  # fmt: skip
            if self.s.client_auth:
                self.client_pki_dir = pki.ensure_client(
                    self.ctx.engine, self.s.client_auth, self.ctx.seed
                )
            second = self.s.value("second_chain")
            if second:
                self.second_pki_dir = pki.ensure_second(self.ctx.engine, second, self.ctx.seed)
                self.trust_file = self.dir / "trust.pem"
                self.trust_file.write_bytes(
                    (self.pki_dir / "ca.pem").read_bytes()
                    + (self.second_pki_dir / "ca.pem").read_bytes()
                )
            self.chain = pki.served_chain(self.pki_dir, self.s.engine_chain)
            self.certificates = pki.certificate_rows(self.pki_dir, self.s)
        except (pki.PkiError, OSError, subprocess.TimeoutExpired) as e:
            self.fail("pki_failed", str(e))

    def _prepare_target(self) -> None:
        try:
            self._server_addr, self.target_ca = target.resolve(self.s.target_spec)
        except target.TargetError as e:
            self.fail(e.cause, e.detail)

    def open(self) -> None:
        """Starts the link (emulated networks) and the server for one visit."""
        if self.done:
            return
        self.visits += 1
        if self.s.target_spec is not None:
            # A target is a server of its own: nothing to start.
            if self.visits == 1:
                self.reference("start")
            return
        if self.ctx.remote_server is not None:
            # Split placement: the server runs on another host.
            try:
                self._server_addr = self.ctx.remote_server()
            except ScenarioFailed as e:
                self.fail(e.cause, e.detail)
                return
            if self.visits == 1:
                self.reference("start")
            return
        try:
            if self.s.network != LOOPBACK:
                self._open_link()
            if self.visits == 1:
                self.reference("start")
            self._start_server()
        except ScenarioFailed as e:
            self.fail(e.cause, e.detail)
            self.close()

    def _open_link(self) -> None:
        profile = self.ctx.networks[self.s.network]
        reason = self.ctx.network_errors.get(profile.name)
        if reason is not None:
            raise ScenarioFailed("network_unavailable", reason)
        spec = network.profile_spec(profile, self.ctx.seed)
        first = profile.name not in self.ctx.calibrations
        # The stack is ours before the link exists: whatever stops the set-up (an error,
        # Ctrl-C, SIGTERM) leaves through close(), which tears down what was built.
        self._link_stack = contextlib.ExitStack()
        try:
            link = self._link_stack.enter_context(
                emulated_link(
                    spec, profile.name, calibrate=first, forwarder_cpus=self._spare_cpus()
                )
            )
        except Exception as e:  # the link module's own errors: the scenario fails, not the run
            self._close_link()
            raise ScenarioFailed("network_setup_failed", f"{type(e).__name__}: {e}") from None
        self._link = link
        if link.cleaned:
            self.ctx.progress.note(
                "chainlab: removed leftovers of a killed run: " + ", ".join(link.cleaned)
            )
        if first:
            self.ctx.calibrations[profile.name] = network.profile_row(
                self.ctx.run_id, spec, link.calibration
            )
            self.ctx.progress.calibrated(
                self, profile.name, network.describe_calibration(profile.name, link.calibration)
            )
        self.network_row = self.ctx.calibrations[profile.name]

    def _start_server(self) -> None:
        s = self.s
        host = self._link.server_addr if self._link is not None else "127.0.0.1"
        if self.ctx.listen_host is not None:
            host = self.ctx.listen_host
        rec = self.dir / f"server-{self.visits}.jsonl"
        argv = engine_args.server_argv(
            s, self.ctx.engine, self.pki_dir, f"{host}:0", rec, self.policy.timeout_ms,
            self.client_pki_dir, self.second_pki_dir,
        )  # fmt: skip
        if self._link is not None:
            argv = self._link.server_cmd(argv)
        err = self.dir / f"server-{self.visits}.stderr"
        with err.open("wb") as errf:
            self._server_proc = processes.spawn(argv, subprocess.PIPE, errf)
        try:
            ready = processes.wait_ready(self._server_proc, SERVER_READY_TIMEOUT_S, err)
        except processes.ServerStartError as e:
            raise ScenarioFailed("server_start_failed", str(e)) from None
        self._server_addr = ready.get("addr")
        self.compression = ready.get("cert_compression") or {}
        if not self._server_addr:
            raise ScenarioFailed("server_start_failed", f"ready line without addr: {ready}")

    def close(self) -> None:
        """Stops the server of this visit, collects its records and tears the link down
        (whatever happens to the server), with signals deferred until both are done."""
        with self.ctx.defer():
            try:
                self._stop_server()
            finally:
                self._close_link()

    def stop_server(self) -> None:
        """Stops this visit's server (its records collected), leaving the link up."""
        with self.ctx.defer():
            self._stop_server()

    def count_instructions(self) -> None:
        """The campaign's [measure] instruction counts on this visit's path, once the
        samples and load steps are done (chainlab.runner.instructions)."""
        if self.s.measure is None or self.stop_reason == "failed" or self.pki_dir is None:
            return
        try:
            self.instruction_samples = instructions.run(self)
        except (instructions.InstructionError, records.RecordError, OSError) as e:
            self.fail("instructions_failed", str(e))

    def _stop_server(self) -> None:
        if self._server_proc is None:
            return
        ended = processes.stop_group(self._server_proc)
        if self._server_proc.stdout is not None:
            self._server_proc.stdout.close()
        if self.server_exit is None or self.server_exit == "sigterm":
            self.server_exit = ended
        self._server_proc = None
        try:
            self.server += records.server_connections(
                self.dir / f"server-{self.visits}.jsonl", stack=self.s.server_stack
            )
        except records.RecordError as e:
            self.fail("bad_records", str(e))

    def _close_link(self) -> None:
        stack, self._link_stack, link = self._link_stack, None, self._link
        self._link = None
        if stack is not None:
            stack.close()
        if link is not None and link.final_stats is not None:
            self.link_stats.append(link.final_stats)

    @property
    def server_addr(self) -> str | None:
        return self._server_addr

    @property
    def server_pid(self) -> int | None:
        return self._server_proc.pid if self._server_proc is not None else None

    @property
    def on_loopback(self) -> bool:
        return self._link is None

    @property
    def link(self):
        """This visit's emulated link (chainlab.network.link), None on loopback."""
        return self._link

    @property
    def server_records_path(self) -> Path:
        return self.dir / f"server-{self.visits}.jsonl"

    def client_head(self, subcommand: str, stack: str | None = None) -> list[str]:
        """The start of every client command of this scenario (chainlab.runner.engine_args);
        `stack`: another stack's client (the load generator's)."""
        return engine_args.client_head(
            self.s, self.ctx.engine, subcommand, self._server_addr, self.pki_dir,
            self.client_pki_dir, self.target_ca, stack, self.trust_file,
        )  # fmt: skip

    def client_extras(self, argv: list[str]) -> list[str]:
        """What every client of this scenario adds to its command (engine_args), and the
        emulated link's namespace."""
        seed = seeds.derive(self.ctx.seed, "batch", self.s.scenario_id, self.batches)
        argv = engine_args.client_extras(self.s, argv, self.pki_dir, seed)
        if self._link is not None:
            argv = self._link.client_cmd(argv)
        return argv

    def _link_timing(self) -> dict:
        """The forwarder's timer lateness and bottleneck queueing over this scenario's links;
        flagged when its packets were late on average by more than the profile allows."""
        if not self.link_stats:
            return {}
        wakeups = sum(st["timer"]["wakeups"] for st in self.link_stats)
        late = sum(st["timer"]["late_ns_total"] for st in self.link_stats)
        late_max = max(st["timer"]["late_ns_max"] for st in self.link_stats)
        wait_max = max(
            st[d].get("queue_wait_ns_max", 0)
            for st in self.link_stats
            for d in ("a_to_b", "b_to_a")
        )
        allowed_ms = calibrate.link_allowance_ms(self.ctx.networks[self.s.network])
        return {
            "link_timer_late_us_mean": late / wakeups / 1e3 if wakeups else None,
            "link_timer_late_us_max": late_max / 1e3,
            "link_queue_wait_us_max": wait_max / 1e3,
            "link_flagged": bool(wakeups) and late / wakeups / 1e6 > allowed_ms,
        }

    def _spare_cpus(self) -> set[int] | None:
        """Under load, where the link's forwarder runs: a core neither the server nor the
        generator uses, else the generator's cores, never the server's (its capacity is what
        is measured; a forwarder that takes the generator's CPU delays its attempts, which
        the generator's scheduling lag shows). None without load steps."""
        if self.s.load is None:
            return None
        generator = set(cpu_list(self.s.load.generator_cpus))
        used = set(cpu_list(self.s.load.server_cpus)) | generator
        spare = sorted(set(os.sched_getaffinity(0)) - used)
        return {spare[0]} if spare else generator

    # -- host speed --------------------------------------------------------------------

    def reference(self, phase: str, step: int = -1) -> None:
        """Times the host-speed workload (chainlab.runner.host) on the server's cores."""
        cpus = self.s.load.server_cpus if self.s.load is not None else None
        try:
            got = host.reference(self.ctx.engine, cpus)
        except host.ReferenceError as e:
            self.ctx.progress.note(f"chainlab: {self.s.scenario_id}: host reference: {e}")
            return
        self.host_reference.append(
            {"run_id": self.ctx.run_id, "scenario_id": self.s.scenario_id, "step": step,
             "phase": phase, **got}
        )  # fmt: skip
        drift = host.drift(self.host_reference)
        if (
            phase == "end"
            and step == -1
            and drift is not None
            and abs(drift) > host.HOST_DRIFT_LIMIT
        ):
            self.ctx.progress.note(
                f"chainlab: {self.s.scenario_id}: the host's speed moved {drift:+.0%} "
                "during the scenario (reference workload, end over start): its figures "
                "were taken on a changing host"
            )

    # -- load --------------------------------------------------------------------------

    def run_load(self) -> None:
        """The campaign's [load] steps on this visit's server, once the single-connection
        phase is done (chainlab.runner.load). Nothing to do without [load], or after a
        failure."""
        if self.s.load is None or self.stop_reason == "failed" or self._server_addr is None:
            return
        try:
            self.load_steps, self.load_samples = load.run(self)
        except records.RecordError as e:
            self.fail("load_failed", str(e))

    # -- sampling ----------------------------------------------------------------------

    def decide(self) -> sampler.Decision:
        return sampler.decide(
            self.policy,
            self.ok_values,
            self.attempted,
            self.failed,
            self.sampling_s,
            self.seconds_per_handshake or self.estimated_s_per_handshake,
        )

    def step(self) -> bool:
        """Runs one client batch (or stops); True when the scenario is done."""
        if self.done:
            return True
        d = self.decide()
        self.rel_halfwidth = d.rel_halfwidth
        if d.stop:
            self._finish(d.reason)
            return True
        warm = self.policy.warmup if self.batches == 0 else self.policy.batch_warmup
        self._run_batch(d.batch, warm)
        if not self.done and self._server_proc is not None and self._server_proc.poll() is not None:
            self.server_exit = processes.describe_exit(self._server_proc.returncode)
            tail = processes.tail(self.dir / f"server-{self.visits}.stderr")
            self.fail(
                "server_exited",
                f"server {self.server_exit} before the scenario ended"
                + (f": {tail}" if tail else ""),
            )
        if self.done:
            return True
        d = self.decide()
        self.rel_halfwidth = d.rel_halfwidth
        if d.stop:
            self._finish(d.reason)
        return self.done

    def _run_batch(self, count: int, warm: int) -> None:
        s = self.s
        self.batches += 1
        rec = self.dir / f"client-{self.batches}.jsonl"
        err = self.dir / f"client-{self.batches}.stderr"
        argv = [
            *self.client_head("handshake"),
            "--count", str(count),
            "--warmup", str(warm),
            "--seq-start", str(self.next_seq),
            "--timeout-ms", str(self.policy.timeout_ms),
            "--records", str(rec),
        ]  # fmt: skip
        if s.load is not None:
            argv += ["--cpus", s.load.generator_cpus]
        argv = self.client_extras(argv)

        cap_left = None
        if self.policy.mode == "adaptive" and self.policy.time_cap_s is not None:
            # Cut a batch that overruns the cap by far (a much slower machine than estimated).
            # Fixed counts are a contract (the paper's 10000 / 300): no cap applies to them.
            cap_left = self.policy.time_cap_s - self.sampling_s
            cap_left += max(10.0, 0.5 * self.policy.time_cap_s)
        t_start = time.monotonic()
        cut = False
        with err.open("wb") as errf:
            proc = processes.spawn(argv, subprocess.DEVNULL, errf)
            try:
                while True:
                    if processes.wait_exit(proc, POLL_S):
                        break
                    done_now = records.count_lines(rec)
                    self.ctx.progress.scenario_tick(self, done_now, count + warm)
                    if cap_left is not None and time.monotonic() - t_start > cap_left:
                        cut = True
                        break
                    if self.ctx.stopped is not None and self.ctx.stopped():
                        raise ScenarioStopped(f"{self.s.scenario_id}: the run was stopped")
            finally:
                processes.stop_group(proc)
        wall = time.monotonic() - t_start
        self.sampling_s += wall
        try:
            got = records.read(rec, stack=self.s.client_stack)
        except records.RecordError as e:
            self.fail("bad_records", str(e))
            return
        if proc.returncode not in (0, None) and not got and not cut:
            tail = processes.tail(err)
            self.fail(
                "client_error",
                f"client {processes.describe_exit(proc.returncode)}"
                + (f": {tail}" if tail else ""),
            )
            return
        self.client += got
        loop = records.loop_seconds(got)
        self.engine_s += loop
        if got:
            self.next_seq = max(r["seq"] for r in got) + 1
            self.seconds_per_handshake = (loop or wall) / len(got)
        for r in got:
            if r.get("warmup"):
                self.warmups += 1
                continue
            self.attempted += 1
            if r["outcome"] == "ok" and r.get("total_ns") is not None:
                self.ok_values.append(r["total_ns"])
            else:
                self.failed += 1
        if cut:
            self.sampling_s = max(self.sampling_s, self.policy.time_cap_s or 0.0)

    def _finish(self, reason: str) -> None:
        self.done = True
        self.stop_reason = reason
        if reason == "failed":
            causes = collections.Counter(
                r.get("error_category") or "unknown"
                for r in self.client
                if not r.get("warmup") and r["outcome"] != "ok"
            )
            cause, n = causes.most_common(1)[0] if causes else ("unknown", 0)
            self.failure_cause = cause
            self.failure_detail = (
                f"{self.failed} of {self.attempted} measured handshakes failed; "
                f"most often {cause} ({n})"
            )

    # -- result ------------------------------------------------------------------------

    @property
    def n_ok(self) -> int:
        return len(self.ok_values)

    def result(self) -> ScenarioRows:
        """The rows the store writes for this scenario, in one transaction."""
        return scenario_rows.rows(self, _now(), self._link_timing())
