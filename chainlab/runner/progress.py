"""Progress on stderr: two live bars (campaign, scenario; drawn by rich) on a terminal, with
each finished scenario's line printed above them; one plain line per finished scenario when
stderr is not a terminal or CI=true.

The campaign ETA is the run-time estimate's (chainlab.model.run_estimate: the same model
`validate` prints) of the scenarios left, their hierarchies not yet generated and the network
profiles not yet calibrated, scaled by how the finished
scenarios' measured time compared with their estimate. Failed scenarios say nothing about
the model's speed and are left out of that ratio.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Protocol

from rich.console import Console
from rich.progress import BarColumn, TextColumn
from rich.progress import Progress as Bars

from chainlab.model import calibration_time, estimate
from chainlab.runner.sampler import predicted_count
from chainlab.schema import counted

# Bar width in characters; the text beside each bar says the counts and the ETA.
BAR = 20
# Redraw at most twice a second: enough to follow, and nothing next to the engine's cost.
REDRAW_S = 0.5


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.2f}%"


class Progress:
    def __init__(self, scenarios, live: bool | None = None, stream=None):
        self.stream = stream or sys.stderr
        if live is None:
            live = self.stream.isatty() and os.environ.get("CI", "").lower() not in ("true", "1")
        self.live = live
        self.total = len(scenarios)
        self.scenarios = {s.scenario_id: s for s in scenarios}
        self.estimates = {s.scenario_id: estimate.scenario(s).seconds_expected for s in scenarios}
        # Network profiles still to calibrate (once per run) -> estimated seconds.
        self.calibrations = {
            s.network: calibration_time.calibration_seconds(s.network_profile)
            for s in scenarios
            if s.network_profile is not None
        }
        self.done = 0
        self.spent_est = 0.0
        self.spent_real = 0.0
        self.t0 = time.monotonic()
        self.current = None
        self._last_draw = 0.0
        self._bars: Bars | None = None
        self._finished: set[str] = set()
        self._calibrated: dict[str, float] = {}  # scenario -> calibration estimates in it
        # scenario -> the hierarchies it generates first (chainlab.model.run_estimate)
        self._hierarchies: dict[str, float] = {}

    def use_estimate(self, run) -> None:
        """The run's estimate (chainlab.model.run_estimate.RunEstimate): each scenario's
        hierarchies to generate join its estimate, as its wall time will hold them."""
        self._hierarchies = dict(run.hierarchies_s)
        for sid, seconds in self._hierarchies.items():
            if sid in self.estimates:
                self.estimates[sid] += seconds

    def use_model(self, model) -> None:
        """Re-estimate every scenario with the cost model of this run's primitives."""
        self.estimates = {
            sid: estimate.scenario(s, model).seconds_expected + self._hierarchies.get(sid, 0.0)
            for sid, s in self.scenarios.items()
        }

    def eta(self, current_left: float = 0.0) -> float:
        left = sum(v for k, v in self.estimates.items() if k not in self._finished)
        left += sum(self.calibrations.values())
        ratio = self.spent_real / self.spent_est if self.spent_est > 0 else 1.0
        return left * ratio + current_left

    def start(self) -> None:
        total = sum(self.estimates.values()) + sum(self.calibrations.values())
        total_text = estimate.fmt_duration(total)
        # The run's first line gave the whole run's estimate; this one is what is left once
        # the primitives and references are in hand.
        self._line(
            f"chainlab: {counted(self.total, 'scenario')}, estimated {total_text} from here "
            "(their handshakes and calibrations)"
        )

    def note(self, text: str) -> None:
        """A line above the live bars (a remark of the run: cleanup, calibration)."""
        self._line(text)

    def calibrated(self, plan, profile: str, text: str) -> None:
        """A profile was calibrated; its time is part of the running scenario's wall time,
        so its estimate joins that scenario's."""
        sid = plan.scenario_id
        self._calibrated[sid] = self._calibrated.get(sid, 0.0) + self.calibrations.pop(profile, 0.0)
        self.note(text)

    def calibration_skipped(self, profile: str) -> None:
        """A profile that will not be calibrated in this run (it cannot run)."""
        self.calibrations.pop(profile, None)

    # A scenario is its plan (chainlab.campaign.model.Scenario) and, where it runs in this
    # process, its state (chainlab.runner.scenario_state.State): a cluster's run has none.

    def scenario_start(self, plan, state=None) -> None:
        self.current = plan
        if state is not None:
            self._draw(plan, state, 0, 0, force=True)

    def scenario_tick(self, plan, state, batch_done: int, batch_total: int) -> None:
        if self.live and time.monotonic() - self._last_draw >= 0.5:
            self._draw(plan, state, batch_done, batch_total)

    def scenario_step(self, plan, state) -> None:
        if self.live:
            self._draw(plan, state, 0, 0, force=True)

    def scenario_end(self, plan, result) -> None:
        sid = plan.scenario_id
        self.done += 1
        self._finished.add(sid)
        row = result.scenario_run
        calibration_est = self._calibrated.pop(sid, 0.0)
        if row["status"] == "completed":
            self.spent_est += self.estimates.get(sid, 0.0) + calibration_est
            self.spent_real += row["wall_seconds"]
        msg = (
            f"[{self.done}/{self.total}] {sid}: {row['status']} ({row['stop_reason']}) "
            f"n={row['n_ok']}/{row['n_measured']} ci={_pct(row['ci_rel_halfwidth'])} "
            f"{estimate.fmt_duration(row['wall_seconds'])}"
        )
        if row["status"] == "failed":
            msg += f" cause={row['failure_cause']}: {row['failure_detail']}"
        if self.done < self.total:
            msg += f"; campaign ETA {estimate.fmt_duration(self.eta())}"
        self._line(msg)

    def finish(self, summary: str) -> None:
        self._line(summary)
        if self._bars is not None:
            self._bars.stop()
            self._bars = None

    # -- drawing -----------------------------------------------------------------------

    def _line(self, text: str) -> None:
        if self._bars is not None:
            self._bars.console.print(text, markup=False, highlight=False, soft_wrap=True)
        else:
            print(text, file=self.stream, flush=True)

    def _live_bars(self) -> Bars:
        if self._bars is None:
            console = Console(file=self.stream, force_terminal=True, highlight=False)
            self._bars = Bars(
                TextColumn("{task.description:<8}"),
                BarColumn(bar_width=BAR),
                TextColumn("{task.fields[info]}"),
                console=console,
                auto_refresh=False,
                transient=True,
            )
            self._campaign = self._bars.add_task("campaign", total=1.0, info="")
            self._scenario = self._bars.add_task("scenario", total=1.0, info="")
            self._bars.start()
        return self._bars

    def _draw(self, plan, st, batch_done: int, batch_total: int, force: bool = False) -> None:
        if not self.live:
            return
        now = time.monotonic()
        if not force and now - self._last_draw < REDRAW_S:
            return
        self._last_draw = now
        p = plan.sampling
        n = st.attempted + max(0, batch_done - (p.warmup if st.batches <= 1 else p.batch_warmup))
        if p.mode == "fixed":
            target_n = p.count
        else:
            target_n = p.max
            if st.n_ok >= 2:
                target_n = min(max(predicted_count(st.ok_values, p), p.min), p.max)
        frac = n / max(target_n, 1)
        if p.time_cap_s:
            frac = max(frac, st.sampling_s / p.time_cap_s)
        per = st.seconds_per_handshake or st.estimated_s_per_handshake
        left_here = max(0, target_n - n) * per
        if p.time_cap_s:
            left_here = min(left_here, max(0.0, p.time_cap_s - st.sampling_s))
        c_frac = (self.done + min(frac, 1.0)) / max(self.total, 1)
        bars = self._live_bars()
        bars.update(
            self._campaign,
            completed=min(c_frac, 1.0),
            info=f"{self.done}/{self.total} elapsed {estimate.fmt_duration(now - self.t0)} "
            f"ETA {estimate.fmt_duration(self.eta(left_here))}",
        )
        target = _pct(p.target_rel_halfwidth) if p.mode == "adaptive" else "fixed"
        bars.update(
            self._scenario,
            completed=min(frac, 1.0),
            info=f"n={n}/{target_n} ci={_pct(st.rel_halfwidth)}->{target} {plan.scenario_id}",
        )
        bars.refresh()


class ScenarioProgress(Protocol):
    """What a running scenario tells the progress display (chainlab.runner.scenario's
    RunContext.progress): `Progress` on the terminal, `Silent` where nothing is shown."""

    def note(self, text: str) -> None: ...

    def calibrated(self, plan, profile: str, text: str) -> None: ...

    def scenario_start(self, plan, state=None) -> None: ...

    def scenario_step(self, plan, state) -> None: ...

    def scenario_tick(self, plan, state, batch_done: int, batch_total: int) -> None: ...


class Silent:
    """A progress that shows nothing: a Dask worker's (the driver reports each scenario) and
    the reference handshakes' (they are not campaign scenarios)."""

    def note(self, text: str) -> None:
        pass

    def calibrated(self, plan, profile: str, text: str) -> None:
        pass

    def scenario_start(self, plan, state=None) -> None:
        pass

    def scenario_step(self, plan, state) -> None:
        pass

    def scenario_tick(self, plan, state, batch_done: int, batch_total: int) -> None:
        pass
