"""Where scenarios run: one interface, two implementations.

- `LocalExecutor` (the default): this machine, one scenario at a time (sequential or
  interleaved order), exactly as a run always did.
- `DaskExecutor`: the workers of a Dask cluster (`chainlab run FILE --cluster
  tcp://HOST:8786`). Each scenario is one task that runs whole on one worker host, which
  declares the Dask worker resource `host=1`, so a host never runs two scenarios at once;
  the task returns the scenario's rows to the driver, which stays the only writer of the
  store (one transaction per scenario). A worker whose engine build differs from
  the driver's is refused before any scenario is sent to it. A worker lost mid-scenario gives
  a failed scenario with cause `worker_lost`, never a silent rerun: a task that finds its
  scenario already started (the scheduler retrying it after its worker died) refuses to run
  it again; `--resume` runs it again. Scenarios only queued on the lost worker (Dask sends a
  worker more tasks than its `host` resource lets it run at once) never started, and run on
  another worker as if nothing happened. Ctrl-C
  cancels the tasks and sets a cluster event that the running scenarios poll between their
  engine's progress reads, so their engine processes stop.

  Placement `split` puts a scenario's server on one worker host and its client on another,
  measured over the network between them: two tasks, each holding its host. The server's
  task starts the engine's server on its worker's address and publishes that address (a
  Dask Variable); the client's task runs the scenario's sampling against it; when the client
  is done (or lost) the driver tells the server to stop, and pairs the two sides' records
  by connection as a local run does. Split scenarios run one at a time (two hosts each), so
  two half-started scenarios can never wait on each other's hosts.

Both call `finish([(scenario, rows), ...])` for the scenarios that ended, in the order they
end: locally those of one host-reading window at once (chainlab.runner.window), on a
cluster each as it ends.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass

from chainlab import engine, machine
from chainlab.campaign.fields import CLUSTER_ADDRESS, CLUSTER_ADDRESS_RE
from chainlab.campaign.model import Scenario
from chainlab.errors import ChainlabError
from chainlab.runner import records, workdir
from chainlab.runner.context import RunContext
from chainlab.runner.progress import Silent
from chainlab.runner.scenario import ScenarioExecution, ScenarioFailed, ScenarioStopped
from chainlab.runner.scenario_rows import chain_rows
from chainlab.runner.window import Window

# The worker resource a host declares: one scenario at a time per host.
HOST_RESOURCE = "host"
# How long the driver waits for the scheduler and for at least one worker (s).
CONNECT_TIMEOUT_S = 30.0
# How long a run waits for the scheduler's TCP port before anything is written (reach).
REACH_TIMEOUT_S = 10.0
# Split placement: how long a client's host waits for the server's host to publish its
# address (PKI generation included: a depth-4 SLH-DSA-256s hierarchy signs for seconds), and
# how often a serving host looks whether its client is done.
SPLIT_SERVER_START_S = 600.0
SPLIT_POLL_S = 0.5


def host_facts(executor: str, worker: str | None = None) -> dict:
    """Where a scenario ran: the host's name, machine facts and engine build (no path)."""
    m = machine.describe()
    return {
        "executor": executor,
        "hostname": socket.gethostname(),
        "worker": worker,
        **{k: m.get(k) for k in ("cpu_model", "cores", "kernel", "arch")},
        "build": engine_build(),
    }


def engine_build() -> dict:
    """What makes two engines measure alike: the engine's version, its OpenSSL and patch,
    and the SHA-256 of the binary."""
    info = engine.info()
    build = info["openssl_build"]
    return {
        "engine_version": info.get("engine_version"),
        "openssl_version": build.get("openssl_version"),
        "patch": build.get("patch_sha256_16"),
        "binary_sha256": engine.binary_sha256(),
    }


def describe_build(b: dict) -> str:
    return (
        f"engine {b.get('engine_version')}, OpenSSL {b.get('openssl_version')} patch "
        f"{b.get('patch')}, binary {str(b.get('binary_sha256'))[:16]}"
    )


# -- local ------------------------------------------------------------------------------


class LocalExecutor:
    """This machine, one scenario at a time."""

    name = "local"

    def __init__(self, order: str):
        self.order = order

    def execute(self, ctx: RunContext, todo, finish: Callable) -> None:
        ctx.host = host_facts("local")
        if self.order == "interleaved":
            self._interleaved(ctx, todo, finish)
        else:
            self._sequential(ctx, todo, finish)

    @staticmethod
    def _sequential(ctx, todo, finish) -> None:
        window = Window(ctx, finish)
        try:
            for s in todo:
                ex = ScenarioExecution(ctx, s)
                ctx.progress.scenario_start(ex.plan, ex.state)
                try:
                    run_whole(ex, ctx.progress, window.read_end)
                finally:
                    ex.close()
                window.ended_one(ex)
        finally:
            window.close()

    @staticmethod
    def _interleaved(ctx, todo, finish) -> None:
        """Round robin: every unfinished scenario gets one batch per round (server restarted
        per visit), so a slow drift of the machine is spread over all scenarios."""
        window = Window(ctx, finish)
        active = []
        for s in todo:
            ex = ScenarioExecution(ctx, s)
            ex.prepare()
            ex.state.set_aside()
            active.append(ex)
        try:
            while active:
                still = []
                for ex in active:
                    ex.state.resume()  # its wall time leaves out the other scenarios' visits
                    ctx.progress.scenario_start(ex.plan, ex.state)
                    try:
                        ex.open()
                        finished = ex.step()
                        if finished:
                            ex.run_load()
                            window.read_end(ex)
                            ex.count_instructions()
                    finally:
                        ex.close()
                    if finished:
                        window.ended_one(ex)
                    else:
                        ex.state.set_aside()
                        still.append(ex)
                active = still
        finally:
            window.close()


def run_whole(ex: ScenarioExecution, progress, read_end: Callable | None = None) -> None:
    """One scenario start to end in one visit (the caller closes it); its end reading now,
    or by `read_end` (chainlab.runner.window)."""
    ex.prepare()
    ex.open()
    while not ex.step():
        progress.scenario_step(ex.plan, ex.state)
    ex.run_load()
    if read_end is None:
        ex.reference("end")
    else:
        read_end(ex)
    ex.count_instructions()


# -- Dask -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """What a worker needs to run one scenario (everything picklable)."""

    scenario: Scenario
    run_id: str
    seed: int
    networks: dict
    build: dict  # the driver's engine build
    stop_event: str  # name of the cluster event that stops the run


def run_on_worker(job: Job):
    """The task: one scenario, whole, on this worker host. Returns (rows, host facts)."""
    # Deferred: distributed (Dask) is needed only on a cluster; a local run never loads it.
    from distributed import Event, get_worker

    worker = get_worker()
    check_build(worker, job.build)
    stop = Event(job.stop_event)
    started = Event(f"{job.stop_event}-started-{job.scenario.scenario_id}")
    if started.is_set():
        raise WorkerLost(
            f"{job.scenario.scenario_id} was started on a worker that was lost; not rerun"
        )
    started.set()
    with _work_dir() as tmp:
        ctx = RunContext(engine.path(), job.run_id, job.seed, tmp, job.networks, Silent())
        ctx.host = host_facts("dask", worker.address)
        ctx.stopped = stop.is_set
        ex = ScenarioExecution(ctx, job.scenario)
        try:
            run_whole(ex, ctx.progress)
        finally:
            ex.close()
        return ex.result()


def serve_on_worker(job: Job, address_name: str, done_name: str) -> dict:
    """Split placement, server side: start the scenario's server on this worker's address,
    publish it, serve until the driver says the client is done, return the records."""
    # Deferred: distributed (Dask) is needed only on a cluster; a local run never loads it.
    from distributed import Event, Variable, get_worker

    worker = get_worker()
    check_build(worker, job.build)
    address = Variable(address_name)
    stop, done = Event(job.stop_event), Event(done_name)
    with _work_dir() as tmp:
        ctx = RunContext(engine.path(), job.run_id, job.seed, tmp, job.networks, Silent())
        ctx.listen_host = worker.address.split("://", 1)[1].rsplit(":", 1)[0].strip("[]")
        ex = ScenarioExecution(ctx, job.scenario)
        try:
            ex.prepare()
            ex.open()
            address.set(
                ex.server_addr if not ex.state.done else f"failed: {ex.state.failure_detail}"
            )
            while not (done.is_set() or stop.is_set()):
                done.wait(timeout=SPLIT_POLL_S)
        finally:
            ex.close()
        return {
            "server": ex.results.server,
            "compression": ex.results.compression,
            "server_exit": ex.state.server_exit,
            "host": host_facts("dask", worker.address),
            "failure": (
                (ex.state.failure_cause, ex.state.failure_detail) if ex.state.done else None
            ),
        }


def client_on_worker(job: Job, address_name: str):
    """Split placement, client side: the scenario's sampling against the server another
    host runs. Returns the rows (server fields empty until the driver pairs them) and the
    client's records."""
    # Deferred: distributed (Dask) is needed only on a cluster; a local run never loads it.
    from distributed import Event, Variable, get_worker

    worker = get_worker()
    check_build(worker, job.build)
    address = Variable(address_name)

    def remote_server() -> str:
        try:
            got = address.get(timeout=SPLIT_SERVER_START_S)
        except TimeoutError:
            raise ScenarioFailed(
                "server_start_failed",
                f"the server's host published no address within {SPLIT_SERVER_START_S:g} s",
            ) from None
        if got.startswith("failed: "):
            raise ScenarioFailed("server_start_failed", got[len("failed: ") :])
        return got

    stop = Event(job.stop_event)
    with _work_dir() as tmp:
        ctx = RunContext(engine.path(), job.run_id, job.seed, tmp, job.networks, Silent())
        ctx.host = host_facts("dask", worker.address)
        ctx.stopped = stop.is_set
        ctx.remote_server = remote_server
        ex = ScenarioExecution(ctx, job.scenario)
        try:
            run_whole(ex, ctx.progress)
        finally:
            ex.close()
        return ex.result(), ex.results.client


def _work_dir():
    """A worker's work directory for one scenario, once the directories of killed workers
    on its machine are removed (chainlab.runner.workdir)."""
    workdir.remove_orphans(workdir.WORKER_PREFIX)
    return workdir.held(workdir.WORKER_PREFIX)


def check_build(worker, build: dict) -> None:
    mine = engine_build()
    if mine != build:
        raise BuildMismatch(
            f"worker {worker.address} runs {describe_build(mine)}; the driver "
            f"{describe_build(build)}"
        )


class BuildMismatch(ChainlabError):
    """A worker's engine build differs from the driver's."""


class WorkerLost(ChainlabError):
    """The scenario's task was started before, on a worker that was lost."""


def reach(address: str, timeout_s: float = REACH_TIMEOUT_S) -> None:
    """The scheduler at `address` (fields.CLUSTER_ADDRESS_RE) accepts a connection, else a
    ChainlabError naming it: checked before a run builds or writes anything, so an
    unreachable cluster leaves no store behind."""
    m = CLUSTER_ADDRESS_RE.match(address)
    if m is None:
        raise ChainlabError(f"--cluster {address!r}: allowed: {CLUSTER_ADDRESS}")
    host, port = m.group(2).strip("[]"), int(m.group(3))
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as e:
        raise ChainlabError(
            f"--cluster {address}: cannot reach the scheduler ({e.strerror or e}); nothing "
            "was written"
        ) from None


class DaskExecutor:
    """The workers of a Dask cluster, one scenario per worker host at a time."""

    name = "dask"

    def __init__(self, address: str, placement: str = "whole"):
        self.address = address
        self.placement = placement

    def execute(self, ctx: RunContext, todo, finish: Callable) -> None:
        try:
            # Deferred: distributed (Dask) is needed only on a cluster, and a missing one is
            # reported below as this run's error, not at import.
            from distributed import Client, Event, as_completed
        except ImportError as e:  # pragma: no cover - the lock installs it
            raise ChainlabError(f"--cluster needs dask.distributed: {e}") from None
        try:
            client = Client(self.address, timeout=CONNECT_TIMEOUT_S)
        except OSError as e:
            raise ChainlabError(
                f"--cluster {self.address}: cannot reach the scheduler ({e})"
            ) from None
        try:
            self._run(client, Event, as_completed, ctx, todo, finish)
        finally:
            client.close()

    def _run(self, client, Event, as_completed, ctx, todo, finish) -> None:
        build = engine_build()
        workers = self.usable_workers(client, build, ctx.progress)
        stop_name = f"chainlab-stop-{ctx.run_id}"
        stop = Event(stop_name, client=client)
        stop.clear()
        if self.placement == "split":
            self._split(client, Event, ctx, todo, finish, build, workers, stop, stop_name)
            return
        pending = {}
        for s in todo:
            job = Job(s, ctx.run_id, ctx.seed, ctx.networks, build, stop_name)
            fut = client.submit(
                run_on_worker, job, resources={HOST_RESOURCE: 1}, workers=workers,
                allow_other_workers=False, key=f"chainlab-{ctx.run_id}-{s.scenario_id}",
                pure=False,
            )  # fmt: skip
            pending[fut] = s
        try:
            for fut in as_completed(list(pending)):
                s = pending.pop(fut)
                ctx.progress.scenario_start(s)
                finish([(s, self._rows(ctx, s, fut))])
        except BaseException:
            # Ctrl-C (or anything else): stop every running scenario, cancel the rest.
            stop.set()
            client.cancel(list(pending), force=True)
            raise

    def _split(self, client, Event, ctx, todo, finish, build, workers, stop, stop_name):
        """Each scenario's server on one host and client on another, one scenario at a
        time, the two hosts taking turns."""
        if len(workers) < 2:
            raise ChainlabError(
                f"placement 'split' needs two worker hosts; the cluster has {len(workers)} "
                "with the driver's engine build"
            )
        futures = []
        try:
            for i, s in enumerate(todo):
                server_host, client_host = workers[i % 2], workers[(i + 1) % 2]
                job = Job(s, ctx.run_id, ctx.seed, ctx.networks, build, stop_name)
                base = f"chainlab-{ctx.run_id}-{s.scenario_id}"
                common = dict(resources={HOST_RESOURCE: 1}, allow_other_workers=False, pure=False)
                server = client.submit(
                    serve_on_worker, job, f"{base}-address", f"{base}-done",
                    workers=[server_host], key=f"{base}-server", **common,
                )  # fmt: skip
                remote = client.submit(
                    client_on_worker, job, f"{base}-address",
                    workers=[client_host], key=f"{base}-client", **common,
                )  # fmt: skip
                futures = [server, remote]
                ctx.progress.scenario_start(s)
                try:
                    client_rows, client_records = remote.result()
                except Exception:
                    client_rows = client_records = None
                Event(f"{base}-done", client=client).set()
                finish([(s, self._merge(ctx, s, remote, client_rows, client_records, server))])
        except BaseException:
            stop.set()
            client.cancel(futures, force=True)
            raise

    def _merge(self, ctx, s, remote, client_rows, client_records, server):
        """The scenario's rows from both sides: the client's, with the server's records paired
        in by connection, or a failed scenario's when a side did not return."""
        if client_rows is None:
            return self._rows(ctx, s, remote)  # the client's failure, classified
        try:
            side = server.result()
        except Exception as e:  # the server's host lost or failed
            rows = self._rows(ctx, s, server)
            rows.scenario_run["failure_detail"] = f"server side: {e}"
            return rows
        rows = client_rows
        rows.samples = records.sample_rows(ctx.run_id, s.scenario_id, client_records,
                                           side["server"])  # fmt: skip
        rows.observed_client_chain = chain_rows(ctx.run_id, s.scenario_id, side["server"])
        compression = side["compression"] or {}
        rows.scenario_run.update(
            server_exit=side["server_exit"],
            cert_message_bytes=compression.get("uncompressed_bytes"),
            cert_compressed_bytes=compression.get("compressed_bytes"),
            cert_compression_installed=compression.get("installed"),
            host={
                "placement": "split",
                "server": side["host"],
                "client": rows.scenario_run.get("host"),
            },
        )
        if side["failure"] is not None and rows.scenario_run["status"] == "completed":
            cause, detail = side["failure"]
            rows.scenario_run.update(status="failed", stop_reason="failed",
                                     failure_cause=cause, failure_detail=detail)  # fmt: skip
        return rows

    @staticmethod
    def _rows(ctx, s, fut):
        """The scenario's rows, or a failed scenario's when its task did not return them."""
        try:
            return fut.result()
        except BuildMismatch as e:
            cause, detail = "worker_build_mismatch", str(e)
        except WorkerLost as e:
            cause, detail = "worker_lost", f"{e}; --resume runs it again"
        except ScenarioStopped as e:
            cause, detail = "interrupted", str(e)
        except Exception as e:
            # Deferred, as above: only a cluster run reaches here.
            from distributed.scheduler import KilledWorker

            if isinstance(e, KilledWorker):
                cause = "worker_lost"
                detail = f"the worker running it was lost ({e}); --resume runs it again"
            else:
                cause, detail = "worker_error", f"{type(e).__name__}: {e}"
        ex = ScenarioExecution(ctx, s)
        ex.fail(cause, detail)
        return ex.result()

    @staticmethod
    def usable_workers(client, build: dict, progress) -> list[str]:
        """Workers with the host resource and the driver's engine build; the others are
        refused (and said so) before any scenario is sent."""
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
        info = client.scheduler_info()["workers"]
        hosts = [a for a, w in info.items() if w.get("resources", {}).get(HOST_RESOURCE)]
        if not hosts:
            raise ChainlabError(
                f"no worker declares the resource {HOST_RESOURCE}=1; start workers with "
                f"`dask worker SCHEDULER --nthreads 1 --resources {HOST_RESOURCE}=1`"
            )
        builds = client.run(engine_build, workers=hosts)
        ok = [a for a in hosts if builds.get(a) == build]
        for a in hosts:
            if a not in ok:
                progress.note(
                    f"chainlab: refusing worker {a}: it runs {describe_build(builds.get(a, {}))}"
                    f"; the driver {describe_build(build)}"
                )
        if not ok:
            raise ChainlabError(
                f"no worker runs the driver's engine build ({describe_build(build)})"
            )
        return ok


def executor(cluster: str | None, order: str, placement: str = "whole"):
    """The executor of a run: Dask at `cluster`, else this machine."""
    if cluster:
        return DaskExecutor(cluster, placement)
    if placement != "whole":
        raise ChainlabError(f"placement {placement!r} needs a cluster (--cluster); allowed "
                            "locally: 'whole'")  # fmt: skip
    return LocalExecutor(order)
