"""The sampling rule: how many handshakes the next batch gets, and when a scenario stops.

Pure logic over numbers (no processes, no clock), so it is unit-tested on synthetic data.
docs/sampling.md states the rule with its method and reference; in short:

- fixed: `count` measured handshakes, then stop (`fixed_count`).
- adaptive (a sequential fixed-relative-width confidence interval, Chow & Robbins 1965;
  Law, *Simulation Modeling and Analysis*, 5th ed., §9.4.1): after each batch, with the
  successful measured latencies x_1..x_n, stop when n >= min and the Student-t interval's
  half-width over the mean is <= target (`ci_target`); else stop at `max` attempted
  handshakes (`max_count`) or when the scenario's sampling time reaches the cap (`time_cap`).
- either mode: stop with `failed` when more than `max_failed_fraction` of the measured
  handshakes so far failed (checked after every batch).

Batch sizes (adaptive): the first batch brings n to `min`; later ones aim at the count the
current estimate predicts, n* = (t_{n-1} s / (target mean))^2, but at most multiply n by
SAMPLE_GROWTH while n is below SETTLED_N (an early variance estimate is itself uncertain), at
least 1, never past `max` and never past what the remaining time cap allows at the measured
per-handshake time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from chainlab.campaign.model import SAMPLE_GROWTH, SETTLED_N, SamplingPolicy
from chainlab.stats import relative_halfwidth, t_value


@dataclass(frozen=True)
class Decision:
    """`batch` handshakes next, or stop (`batch == 0`) for `reason`."""

    batch: int
    reason: str | None = None  # fixed_count | ci_target | max_count | time_cap | failed
    rel_halfwidth: float | None = None  # the statistic the decision saw (None: not computed)

    @property
    def stop(self) -> bool:
        return self.batch == 0


def decide(
    policy: SamplingPolicy,
    ok_values,
    attempted: int,
    failed: int,
    elapsed_s: float,
    seconds_per_handshake: float | None,
) -> Decision:
    """The next step for a scenario.

    ok_values: latencies of the successful measured (non-warm-up) handshakes so far.
    attempted, failed: measured handshakes so far, and how many of them failed.
    elapsed_s: the scenario's sampling time so far (for the time cap).
    seconds_per_handshake: measured wall time per handshake (None before the first batch).
    """
    n = len(ok_values)
    if attempted > 0 and failed / attempted > policy.max_failed_fraction:
        return Decision(0, "failed")
    rhw = relative_halfwidth(ok_values, policy.confidence) if n >= 2 else None

    if policy.mode == "fixed":
        if attempted >= policy.count:
            return Decision(0, "fixed_count", rhw)
        return Decision(policy.count - attempted, None, rhw)

    if n >= policy.min and rhw is not None and rhw <= policy.target_rel_halfwidth:
        return Decision(0, "ci_target", rhw)
    if attempted >= policy.max:
        return Decision(0, "max_count", rhw)
    if policy.time_cap_s is not None and elapsed_s >= policy.time_cap_s:
        return Decision(0, "time_cap", rhw)

    if n < policy.min or rhw is None or not math.isfinite(rhw):
        want = max(policy.min - n, 1)
    else:
        want = max(predicted_count(ok_values, policy) - n, 1)
        if n < SETTLED_N:
            want = min(want, max((SAMPLE_GROWTH - 1) * n, 1))
    want = min(want, policy.max - attempted)
    if policy.time_cap_s is not None and seconds_per_handshake:
        left = policy.time_cap_s - elapsed_s
        want = min(want, max(1, math.floor(left / seconds_per_handshake)))
    return Decision(max(want, 1), None, rhw)


def predicted_count(ok_values, policy: SamplingPolicy) -> int:
    """n* = (t s / (target mean))^2: the count at which the interval would meet the target
    if the current mean and standard deviation held (t at the current degrees of freedom)."""
    n = len(ok_values)
    if n < 2:
        return policy.min
    mean = sum(ok_values) / n
    var = sum((x - mean) ** 2 for x in ok_values) / (n - 1)
    if mean == 0:
        return policy.max
    t = t_value(policy.confidence, n - 1)
    return math.ceil((t * math.sqrt(var) / (policy.target_rel_halfwidth * abs(mean))) ** 2)
