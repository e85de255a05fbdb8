"""One scenario: PKI, server process, client batches, the sampling rule, the result rows.

Lifecycle: `prepare()` (hierarchy from the cache), then one or more visits of `open()`
(emulated link if any, server started and its ready line awaited), `step()` (one client
batch; True when the scenario is done), `close()` (server stopped, its records read, the
link torn down): one visit in a sequential run, one per batch interleaved. `result()` gives
the rows the store writes in one transaction.

Targets ([targets.<name>]): no hierarchy, no server and no link; the client connects to the
target's address (resolved once, in `prepare()`) with its server name and trust anchors, and
the server-side fields of its rows stay empty.

Emulated networks: a visit opens a link (namespaces, forwarder) or uses the run's
(chainlab.runner.links); a profile is calibrated once per run, its row kept once per run.
"""

from __future__ import annotations

import collections
import contextlib
import os
import subprocess
import time
from pathlib import Path

from chainlab import processes
from chainlab.campaign.model import Scenario, cpu_list
from chainlab.model import estimate
from chainlab.network import emulated_link
from chainlab.network.link import Link
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
    server_cpu,
    servers,
    stopwatch,
    target,
)
from chainlab.runner.context import RunContext
from chainlab.runner.links import Visit, link_timing
from chainlab.runner.scenario_state import Files, Results, State, now
from chainlab.store import ScenarioRows

# How long a server may take to print its ready line: it loads one hierarchy and binds a
# socket, well under a second normally; generous for a loaded shared machine.
SERVER_READY_TIMEOUT_S = 20.0
# Progress poll interval while a client batch runs: reading the records file's size twice a
# second costs nothing measurable next to the engine's two busy processes.
POLL_S = 0.5


# Where a server's records path goes in its command while the command is a kept server's
# name (chainlab.runner.servers): the same for every visit.
KEPT_RECORDS = Path("<records>")


class ScenarioStopped(Exception):
    """The run was stopped from outside this process (a cluster's driver was interrupted)."""


class ScenarioFailed(Exception):
    def __init__(self, cause: str, detail: str):
        super().__init__(f"{cause}: {detail}")
        self.cause = cause
        self.detail = detail


class ScenarioExecution:
    """One scenario run through its lifecycle (the module's doc). Its parts are typed
    (chainlab.runner.scenario_state): `plan` (the Scenario), `files` (what `prepare` made),
    `state` (what happens while it runs) and `results` (what it produced)."""

    def __init__(self, ctx: RunContext, scenario: Scenario):
        self.ctx = ctx
        self.plan = scenario
        self.dir = ctx.workdir / scenario.scenario_id
        self.dir.mkdir(parents=True, exist_ok=True)
        self.files = Files()
        self.state = State(
            estimated_s_per_handshake=estimate.handshake_ms(scenario, ctx.cost_model) / 1000
        )
        self.results = Results()
        self._server_proc: subprocess.Popen | None = None
        self._server_addr: str | None = None
        # The engine's own pid (when this machine can read it) and its CPU at the ready line.
        self._engine_pid: int | None = None
        self._cpu_at_ready: int | None = None
        self._link_stack: contextlib.ExitStack | None = None
        self._link: Link | None = None
        # This visit's use of the run's link, where it shares one (chainlab.runner.links).
        self._visit: Visit | None = None
        # This visit's kept server and its command (chainlab.runner.servers), where it has one.
        self._kept: servers.KeptServer | None = None
        self._kept_key: tuple[str, ...] | None = None

    def fail(self, cause: str, detail: str) -> None:
        self.state.fail(cause, detail)

    # -- lifecycle ---------------------------------------------------------------------

    def prepare(self) -> None:
        """Makes the scenario's `files`: its hierarchies (from the cache) and the clients'
        trust anchors, or a target's address and anchors."""
        plan, ctx = self.plan, self.ctx
        if plan.target_spec is not None:
            try:
                self._server_addr, target_ca = target.resolve(plan.target_spec)
            except target.TargetError as e:
                self.fail(e.cause, e.detail)
                return
            self.files = Files(target_ca=target_ca)
            return
        with ctx.watch.timed(stopwatch.HIERARCHIES):
            try:
                dirs = [pki.ensure(ctx.engine, *spec) for spec in pki.needed(plan, ctx.seed)]
                pki_dir = dirs.pop(0)
                client_pki_dir = dirs.pop(0) if plan.handshake.client_hierarchy else None
                second_pki_dir = dirs.pop(0) if plan.handshake.second_hierarchy else None
                trust_file = None
                if second_pki_dir is not None:
                    trust_file = self.dir / "trust.pem"
                    trust_file.write_bytes(
                        (pki_dir / "ca.pem").read_bytes() + (second_pki_dir / "ca.pem").read_bytes()
                    )
                self.files = Files(
                    pki_dir=pki_dir,
                    client_pki_dir=client_pki_dir,
                    second_pki_dir=second_pki_dir,
                    trust_file=trust_file,
                    chain=pki.sent_chain(pki_dir, plan.handshake.engine_chain),
                )
                self.results.certificates = pki.certificate_rows(pki_dir, plan)
            except (pki.PkiError, OSError, subprocess.TimeoutExpired) as e:
                self.fail("pki_failed", str(e))

    def open(self) -> None:
        """Starts the link (emulated networks) and the server for one visit."""
        if self.state.done:
            return
        self.state.visits += 1
        if self.plan.target_spec is not None:
            # A target is a server of its own: nothing to start.
            if self.state.visits == 1:
                self.reference("start")
            return
        if self.ctx.remote_server is not None:
            # Split placement: the server runs on another host.
            try:
                self._server_addr = self.ctx.remote_server()
            except ScenarioFailed as e:
                self.fail(e.cause, e.detail)
                return
            if self.state.visits == 1:
                self.reference("start")
            return
        try:
            if self.plan.network != LOOPBACK:
                with self.ctx.watch.timed(stopwatch.LINKS):
                    self._open_link()
            if self.state.visits == 1:
                self.reference("start")
            with self.ctx.watch.timed(stopwatch.SERVER_STARTS):
                self._start_server()
        except ScenarioFailed as e:
            self.fail(e.cause, e.detail)
            self.close()

    def _open_link(self) -> None:
        profile = self.ctx.networks[self.plan.network]
        reason = self.ctx.network_errors.get(profile.name)
        if reason is not None:
            raise ScenarioFailed("network_unavailable", reason)
        spec = network.profile_spec(profile, self.ctx.seed)
        first = profile.name not in self.ctx.calibrations
        cpus = self._spare_cpus()

        def open_link():
            return emulated_link(spec, profile.name, calibrate=first, forwarder_cpus=cpus)

        opened = True
        try:
            if (run_links := self.ctx.links) is not None and self.plan.shares_link:
                link, opened = run_links.get(self.plan.network, open_link)
                self._visit = Visit.begin(link, lambda: run_links.drop(self.plan.network))
            else:
                # The stack is ours before the link exists: whatever stops the set-up (an
                # error, Ctrl-C, SIGTERM) leaves through close(), which tears down what was
                # built.
                self._link_stack = contextlib.ExitStack()
                link = self._link_stack.enter_context(open_link())
        except Exception as e:  # the link module's own errors: the scenario fails, not the run
            self._close_link()
            raise ScenarioFailed("network_setup_failed", f"{type(e).__name__}: {e}") from None
        self._link = link
        if opened and link.cleaned:
            self.ctx.progress.note(
                "chainlab: removed leftovers of a killed run: " + ", ".join(link.cleaned)
            )
        if first and link.calibration is not None:
            self.ctx.calibrations[profile.name] = network.profile_row(
                self.ctx.run_id, spec, link.calibration
            )
            self.ctx.progress.calibrated(
                self.plan,
                profile.name,
                network.describe_calibration(profile.name, link.calibration),
            )
        self.results.network_row = self.ctx.calibrations[profile.name]

    def _start_server(self) -> None:
        s = self.plan
        host = self._link.server_addr if self._link is not None else "127.0.0.1"
        if self.ctx.listen_host is not None:
            host = self.ctx.listen_host
        rec = self.dir / f"server-{self.state.visits}.jsonl"
        err = self.dir / f"server-{self.state.visits}.stderr"
        argv = engine_args.server_argv(
            s, self.ctx.engine, self.files, f"{host}:0", KEPT_RECORDS, s.sampling.timeout_ms
        )
        argv += engine_args.random_flags(self.ctx.random_seed)
        key = servers.key(self.ctx, s, self._link is not None, argv)
        if key is not None and self.ctx.servers is not None:
            kept = self.ctx.servers.take(key)
            if kept is not None:
                self._use_kept(key, kept)
                return
            rec, err = self.ctx.servers.files()
        argv[argv.index(str(KEPT_RECORDS))] = str(rec)
        binary = argv[0]
        if self._link is not None:
            argv = self._link.server_cmd(argv)
        with err.open("wb") as errf:
            self._server_proc = processes.spawn(argv, subprocess.PIPE, errf)
        try:
            ready = processes.wait_ready(self._server_proc, SERVER_READY_TIMEOUT_S, err)
        except processes.ServerStartError as e:
            raise ScenarioFailed("server_start_failed", str(e)) from None
        self._server_addr = ready.get("addr")
        self.results.compression = ready.get("cert_compression") or {}
        # The process's CPU from here to the stop (chainlab.runner.server_cpu).
        self._engine_pid = server_cpu.engine_pid(ready, binary)
        self._cpu_at_ready = server_cpu.process_cpu_ns(self._engine_pid)
        if not self._server_addr:
            raise ScenarioFailed("server_start_failed", f"ready line without addr: {ready}")
        if key is not None:
            kept = servers.KeptServer(self._server_proc, rec, err, ready, self._engine_pid)
            self._kept, self._kept_key = kept, key

    def _use_kept(self, key: tuple[str, ...], kept: servers.KeptServer) -> None:
        """This visit is served by `kept`, from its records file's current line and its
        process's CPU now."""
        self._kept, self._kept_key = kept, key
        self._server_proc = kept.proc
        self._server_addr = kept.ready.get("addr")
        self.results.compression = kept.ready.get("cert_compression") or {}
        self._engine_pid = kept.engine_pid
        self._cpu_at_ready = server_cpu.process_cpu_ns(self._engine_pid)

    def close(self) -> None:
        """Stops the server of this visit, collects its records and tears the link down
        (whatever happens to the server), with signals deferred until both are done."""
        watch = self.ctx.watch
        emulated = self.plan.network != LOOPBACK
        with self.ctx.defer():
            try:
                with watch.timed(stopwatch.SERVER_STOPS):
                    self._stop_server()
            finally:
                with watch.timed(stopwatch.LINKS_CLOSED) if emulated else contextlib.nullcontext():
                    self._close_link()

    def stop_server(self) -> None:
        """Stops this visit's server (its records collected), leaving the link up."""
        with self.ctx.defer():
            self._stop_server()

    def count_instructions(self) -> None:
        """The campaign's [measure] instruction counts on this visit's path, once the
        samples and load steps are done (chainlab.runner.instructions)."""
        if self.plan.measure is None or self.state.failed_run or self.files.pki_dir is None:
            return
        self.ctx.readings.measured()
        t0 = time.monotonic()
        try:
            with self.ctx.watch.measuring():  # the counting's time is the handshakes' own
                self.results.instruction_samples = instructions.run(self)
        except (instructions.InstructionError, records.RecordError, OSError) as e:
            self.fail("instructions_failed", str(e))
        self.results.counting_s += time.monotonic() - t0

    def _stop_server(self) -> None:
        if self._server_proc is None:
            return
        kept, key = self._kept, self._kept_key
        self._kept = self._kept_key = None
        path, first = self.server_records_path, 0
        # Read before the sync or the stop, whose own work is no visit's.
        before_stop = server_cpu.process_cpu_ns(self._engine_pid)
        synced = kept is not None and servers.sync(kept)
        ready = self._cpu_at_ready
        served = None if before_stop is None or ready is None else before_stop - ready
        if kept is not None:
            path, first = kept.records, kept.lines
        if synced and kept is not None and key is not None and self.ctx.servers is not None:
            # Every connection of this visit is recorded: the server serves the next.
            kept.lines = records.count_lines(kept.records)
            self.ctx.servers.keep(key, kept)
            self.state.server_exit = self.state.server_exit or "kept"
        else:
            ended = processes.stop_group(self._server_proc)
            if self._server_proc.stdout is not None:
                self._server_proc.stdout.close()
            if self.state.server_exit in (None, "sigterm", "kept"):
                self.state.server_exit = ended
        self._server_proc = None
        try:
            lines = records.read(path, writer=self.plan.handshake.stacks[1], after=first)
        except records.RecordError as e:
            self.fail("bad_records", str(e))
            return
        self.results.server += [r for r in lines if r.get("side") == "server"]
        self.results.server_cpu.add_visit(served, lines)

    def _close_link(self) -> None:
        stack, self._link_stack, link = self._link_stack, None, self._link
        visit, self._visit, self._link = self._visit, None, None
        if visit is not None:
            # The run's link stays up for the next visit; this one's figures are its own.
            if (stats := visit.end()) is not None:
                self.results.link_stats.append(stats)
            elif self.ctx.links is not None:
                self.ctx.links.drop(self.plan.network)
            return
        if stack is not None:
            stack.close()
        if link is not None and link.final_stats is not None:
            self.results.link_stats.append(link.final_stats)

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
        if self._kept is not None:
            return self._kept.records
        return self.dir / f"server-{self.state.visits}.jsonl"

    @property
    def _server_stderr(self) -> Path:
        if self._kept is not None:
            return self._kept.stderr
        return self.dir / f"server-{self.state.visits}.stderr"

    def client_head(self, subcommand: str, stack: str | None = None) -> list[str]:
        """The start of every client command of this scenario (chainlab.runner.engine_args);
        `stack`: another stack's client (the load generator's)."""
        if self._server_addr is None:
            raise ValueError(f"scenario {self.plan.scenario_id}: no server address yet")
        return engine_args.client_head(
            self.plan, self.ctx.engine, subcommand, self._server_addr, self.files, stack
        )

    def client_extras(self, argv: list[str]) -> list[str]:
        """What every client of this scenario adds to its command (engine_args), and the
        emulated link's namespace."""
        seed = seeds.derive(self.ctx.seed, "batch", self.plan.scenario_id, self.state.batches)
        argv = engine_args.client_extras(self.plan, argv, self.files, seed)
        if self._link is not None:
            argv = self._link.client_cmd(argv)
        return argv

    def _spare_cpus(self) -> set[int] | None:
        """Under load, where the link's forwarder runs: a core neither the server nor the
        generator uses, else the generator's cores, never the server's (its capacity is what
        is measured; a forwarder that takes the generator's CPU delays its attempts, which
        the generator's scheduling lag shows). None without load steps."""
        if self.plan.load is None:
            return None
        generator = set(cpu_list(self.plan.load.generator_cpus))
        used = set(cpu_list(self.plan.load.server_cpus)) | generator
        spare = sorted(set(os.sched_getaffinity(0)) - used)
        return {spare[0]} if spare else generator

    # -- host speed --------------------------------------------------------------------

    def reference(self, phase: str, step: int = -1) -> None:
        """Times the host-speed workload (chainlab.runner.host) on the server's cores."""
        cpus = self.plan.load.server_cpus if self.plan.load is not None else None
        window = (phase, step) == ("start", -1)
        try:
            got = self.ctx.readings.take(self.ctx.engine, cpus, window=window)
        except host.ReferenceError as e:
            self.ctx.progress.note(f"chainlab: {self.plan.scenario_id}: host reference: {e}")
            return
        self.add_reference(phase, step, got)

    def add_reference(self, phase: str, step: int, got: dict, note: bool = True) -> None:
        """Keeps `got` as the `phase` reading of `step` (-1: the scenario), noting a move."""
        self.results.host_reference.append(
            {"run_id": self.ctx.run_id, "scenario_id": self.plan.scenario_id, "step": step,
             "phase": phase, **got}
        )  # fmt: skip
        drift = host.drift(self.results.host_reference)
        if note and (phase, step) == ("end", -1) and host.moved(drift):
            self.ctx.progress.note(
                f"chainlab: {self.plan.scenario_id}: the host's speed moved {drift:+.0%} "
                "during the scenario (reference workload, end over start): its figures "
                "were taken on a changing host"
            )

    # -- load --------------------------------------------------------------------------

    def run_load(self) -> None:
        """The campaign's [load] steps on this visit's server, once the single-connection
        phase is done (chainlab.runner.load). Nothing to do without [load], or after a
        failure."""
        if self.plan.load is None or self.state.failed_run or self._server_addr is None:
            return
        try:
            with self.ctx.watch.timed(stopwatch.LOAD_STEPS):
                self.results.load_steps, self.results.load_samples = load.run(self)
        except records.RecordError as e:
            self.fail("load_failed", str(e))

    # -- sampling ----------------------------------------------------------------------

    def decide(self) -> sampler.Decision:
        return sampler.decide(
            self.plan.sampling,
            self.state.ok_values,
            self.state.attempted,
            self.state.failed,
            self.state.sampling_s,
            self.state.seconds_per_handshake or self.state.estimated_s_per_handshake,
        )

    def step(self) -> bool:
        """Runs one client batch (or stops); True when the scenario is done."""
        if self.state.done:
            return True
        d = self.decide()
        self.state.rel_halfwidth = d.rel_halfwidth
        if d.stop:
            self._finish(d.reason or "failed")
            return True
        policy = self.plan.sampling
        warm = policy.warmup if self.state.batches == 0 else policy.batch_warmup
        with self.ctx.watch.timed(stopwatch.CLIENT_BATCHES):
            self._run_batch(d.batch, warm)
        if (
            not self.state.done
            and self._server_proc is not None
            and self._server_proc.poll() is not None
        ):
            self.state.server_exit = processes.describe_exit(self._server_proc.returncode)
            tail = processes.tail(self._server_stderr)
            self.fail(
                "server_exited",
                f"server {self.state.server_exit} before the scenario ended"
                + (f": {tail}" if tail else ""),
            )
        if self.state.done:
            return True
        d = self.decide()
        self.state.rel_halfwidth = d.rel_halfwidth
        if d.stop:
            self._finish(d.reason or "failed")
        return self.state.done

    def _run_batch(self, count: int, warm: int) -> None:
        s = self.plan
        self.state.batches += 1
        self.ctx.readings.measured()
        rec = self.dir / f"client-{self.state.batches}.jsonl"
        err = self.dir / f"client-{self.state.batches}.stderr"
        argv = [
            *self.client_head("handshake"),
            "--count", str(count),
            "--warmup", str(warm),
            "--seq-start", str(self.state.next_seq),
            "--timeout-ms", str(self.plan.sampling.timeout_ms),
            "--records", str(rec),
        ]  # fmt: skip
        if s.load is not None:
            argv += ["--cpus", s.load.generator_cpus]
        if s.handshake.defers_close:
            argv.append("--defer-close")
        argv = self.client_extras(argv + engine_args.random_flags(self.ctx.random_seed))

        cap_left = None
        if self.plan.sampling.mode == "adaptive" and self.plan.sampling.time_cap_s is not None:
            # Cut a batch that overruns the cap by far (a much slower machine than estimated).
            # Fixed counts are a contract (the paper's 10000 / 300): no cap applies to them.
            cap_left = self.plan.sampling.time_cap_s - self.state.sampling_s
            cap_left += max(10.0, 0.5 * self.plan.sampling.time_cap_s)
        t_start = time.monotonic()
        cut = False
        with err.open("wb") as errf:
            proc = processes.spawn(argv, subprocess.DEVNULL, errf)
            try:
                while True:
                    if processes.wait_exit(proc, POLL_S):
                        break
                    done_now = records.count_lines(rec)
                    self.ctx.progress.scenario_tick(self.plan, self.state, done_now, count + warm)
                    if cap_left is not None and time.monotonic() - t_start > cap_left:
                        cut = True
                        break
                    if self.ctx.stopped is not None and self.ctx.stopped():
                        raise ScenarioStopped(f"{self.plan.scenario_id}: the run was stopped")
            finally:
                processes.stop_group(proc)
        wall = time.monotonic() - t_start
        self.state.sampling_s += wall
        try:
            got = records.read(rec, writer=self.plan.handshake.stacks[0])
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
        self.results.client += got
        loop = records.loop_seconds(got)
        self.state.engine_s += loop
        if got:
            self.state.next_seq = max(r["seq"] for r in got) + 1
            self.state.seconds_per_handshake = (loop or wall) / len(got)
        for r in got:
            if r.get("warmup"):
                self.state.warmups += 1
                continue
            self.state.attempted += 1
            if r["outcome"] == "ok" and r.get("total_ns") is not None:
                self.state.ok_values.append(r["total_ns"])
            else:
                self.state.failed += 1
        if cut:
            self.state.sampling_s = max(self.state.sampling_s, self.plan.sampling.time_cap_s or 0.0)

    def _finish(self, reason: str) -> None:
        self.state.done = True
        self.state.stop_reason = reason
        if reason == "failed":
            causes = collections.Counter(
                r.get("error_category") or "unknown"
                for r in self.results.client
                if not r.get("warmup") and r["outcome"] != "ok"
            )
            cause, n = causes.most_common(1)[0] if causes else ("unknown", 0)
            self.state.failure_cause = cause
            self.state.failure_detail = (
                f"{self.state.failed} of {self.state.attempted} measured handshakes failed; "
                f"most often {cause} ({n})"
            )

    # -- result ------------------------------------------------------------------------

    def result(self) -> ScenarioRows:
        """The rows the store writes for this scenario, in one transaction."""
        return scenario_rows.rows(
            self.ctx.run_id,
            self.ctx.host,
            self.plan,
            self.files,
            self.state,
            self.results,
            ended_at=self.state.ended_at or now(),
            link_timing=link_timing(
                self.results.link_stats, self.ctx.networks.get(self.plan.network)
            ),
        )
