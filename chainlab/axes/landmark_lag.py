"""Landmark lag (docs/methods/mtc.md, "Landmark lag"): a population of clients that differ by
the Merkle Tree Certificate landmarks they hold, against a server holding the
landmark-relative MTCs of its last m landmark intervals (`certificate`'s `renewals`) and its
standalone MTC, negotiated with the trust_anchors extension.

A kind of client ([clients.<name>]) says `landmark_lag = k`: it holds the landmarks up to k
intervals old (0: current), or `"none"`: it holds none. It asks for its newest landmark's
trust anchor ID and, unless the campaign's certificate says `retry`, the CA's (the
engine's `--trust-anchors-own`); the server sends the landmark-relative MTC of that landmark
when it holds one (k < m), else the standalone MTC, or, for a kind that retries, its default
(newest) landmark-relative MTC, which the kind fails and connects again for the standalone
one. So the share of attempts that fall back is the share of kinds with k >= m or none.

The rules with the other axes (`check`), what each kind is predicted to receive
(`served`, `fallback_share`), and the client's flags live here; the kinds are read by
chainlab.campaign.clients and carried in the population's string
(chainlab.axes.rollout.Kind.landmarks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from chainlab.axes import rollout
from chainlab.axes.credential import LANDMARK, MAX_RENEWALS
from chainlab.schema import fmt

if TYPE_CHECKING:
    from chainlab.axes.axis import AxisReader
    from chainlab.axes.handshake import Handshake

NONE = "none"
# A lag beyond the most renewals a server can hold falls back like any other past them.
MAX_LAG = 4 * MAX_RENEWALS
# What a kind's attempt is predicted to receive.
LANDMARK_SENT, STANDALONE_SENT, RETRIED = "landmark", "standalone", "retry"


class Complaints(Protocol):
    """What reading a kind's landmarks needs of the loader: somewhere to say what is wrong."""

    def bad(self, key: str, message: str) -> None: ...


def read_kind(v: Complaints, value: Any, at: str) -> str | None:
    """[clients.<name>].landmark_lag: a number of landmark intervals 0 to MAX_LAG, or
    'none'; kept as its string."""
    if value == NONE:
        return NONE
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_LAG:
        v.bad(
            at,
            f"bad value {fmt(value)}; allowed: the landmark intervals the kind's landmarks lag "
            f"behind, 0 (current) to {MAX_LAG}, or 'none' (it holds no landmarks)",
        )
        return None
    return str(value)


def lagging(spec: str) -> bool:
    """Whether a population's kinds say which landmarks they hold."""
    return any(k.landmarks for k in rollout.parse(spec))


def served(landmarks: str, renewals: int, retry: bool) -> str:
    """What a kind holding `landmarks` receives from a server holding `renewals`
    landmarks' MTCs: the landmark-relative MTC of its newest landmark, else the standalone
    one, at once or after the retry."""
    if landmarks != NONE and int(landmarks) < renewals:
        return LANDMARK_SENT
    return RETRIED if retry else STANDALONE_SENT


def fallback_share(spec: str, renewals: int) -> float | None:
    """The predicted share of attempts that do not get a landmark-relative MTC (None: the
    population says nothing of landmarks)."""
    kinds = rollout.parse(spec)
    if not any(k.landmarks for k in kinds):
        return None
    back = [k.share for k in kinds if served(k.landmarks, renewals, False) != LANDMARK_SENT]
    return round(sum(back), 6)


def check(v: AxisReader, sid: str, h: Handshake, with_load: bool) -> None:
    """Kinds that hold landmarks need a landmark-relative MTC the client may hold
    (certificate kind 'mtc-landmark', landmark_held not false), the trust_anchors
    extension to ask for it, and every kind saying what it holds."""
    spec = rollout.population_of(h)
    kinds = rollout.parse(spec)
    said = [k for k in kinds if k.landmarks]
    if not said:
        return
    cert = h.credential
    if len(said) != len(kinds):
        quiet = ", ".join(k.name for k in kinds if not k.landmarks)
        v.bad(
            "matrix",
            f"scenario {sid}: kinds {quiet} of a population whose other kinds hold landmarks "
            "say nothing of theirs; allowed: landmark_lag on every kind of the population",
        )
    if cert.kind != LANDMARK or not cert.held:
        what = "a certificate whose landmark is not held" if cert.kind == LANDMARK else (
            f"certificate {cert.kind!r}"
        )  # fmt: skip
        v.bad(
            "matrix",
            f"scenario {sid}: a population whose kinds hold landmarks with {what}; allowed: "
            'certificate { kind = "mtc-landmark", batch = N, renewals = m } (the kinds say '
            "which landmarks they hold)",
        )
    if h.anchors_requested is None:
        v.bad(
            "matrix",
            f"scenario {sid}: a population whose kinds hold landmarks with trust_anchors "
            "'sni': each kind asks for its landmark by ID; allowed: trust_anchors 0 or more "
            "(the IDs of other CAs each kind asks for besides its own)",
        )


def client_flags(requested: int, retry: bool) -> list[str]:
    """A lagging population's request: each kind's own IDs (the engine reads them from the
    trust file and the kind's landmarks), then `requested` IDs of other CAs."""
    flags = ["--trust-anchors", "", "--trust-anchors-own", "--trust-anchors-filler", str(requested)]
    return flags + (["--trust-anchor-retry"] if retry else [])
