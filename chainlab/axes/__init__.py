"""The registry of scenario axes: what a campaign's [matrix.*] may cross, each declared once.

An axis (chainlab.axes.axis.Axis) says everything the rest of chainlab needs of it, as
values and callables: its TOML key and how a value is read and checked against the other
axes, its default (a matrix that leaves the axis out gets it, and an id names nothing at
it), its id token, its store column(s), its label and the order of its values in the
report, the `where` keys it offers, the engine flags it becomes on each side, the trust
anchors it replaces, what it adds to the estimate, what a non-default value needs of a
TLS stack, and what it makes of the scenario's handshake (`shape`:
chainlab.axes.handshake), which the estimate, the stacks' check, other axes' rules and
the runner read in place of its key. Each axis is declared in a module of this package named
by its key (`kex.py`, `served_chain.py`, `certificate.py`, `stack.py`, ...), the four axes of
a staged rollout together in `rollout.py`; this module only registers them, in id order.

The loader (`tables.py`, `matrix_reader.py`, `loader.py`), matrix expansion and `where`
matching (`matrix.py`), ids (`ids.py`), a scenario's values (`model.py`), the store's
scenario columns (`chainlab.store.schema`), the summary and pairing, the estimate and the
runner's command lines (`runner/engine_args.py`) iterate over `registered()` instead of
naming axes one by one.

Four axes shape the id and the run themselves and keep their own code where noted: `kex`
leads the id, `hierarchy` is its positions (stored as depth and one algorithm per role),
`target` replaces the positions (a server chainlab does not start), `network` starts a link.
Every other axis is a *lever* (ARCHITECTURE.md, "A campaign axis", is the recipe).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from chainlab.axes.axis import Axis, Recorded
from chainlab.axes.cert_compression import CERT_COMPRESSION
from chainlab.axes.certificate import CERTIFICATE
from chainlab.axes.client_auth import CLIENT_AUTH
from chainlab.axes.client_profile import CLIENT_PROFILE
from chainlab.axes.handshake import Handshake
from chainlab.axes.handshake_mode import HANDSHAKE_MODE
from chainlab.axes.hierarchy import HIERARCHY
from chainlab.axes.kex import KEX
from chainlab.axes.network import NETWORK
from chainlab.axes.rollout import CHAIN_ORDER, POPULATION, SECOND_CHAIN, SERVER_GROUPS
from chainlab.axes.served_chain import SERVED_CHAIN
from chainlab.axes.signature_impl import SIGNATURE_IMPL
from chainlab.axes.stack import STACK
from chainlab.axes.target import TARGET
from chainlab.axes.transport import TRANSPORT
from chainlab.axes.trust_anchors import TRUST_ANCHORS

__all__ = [
    "CERTIFICATE",
    "CERT_COMPRESSION",
    "CHAIN_ORDER",
    "CLIENT_AUTH",
    "CLIENT_PROFILE",
    "HANDSHAKE_MODE",
    "HIERARCHY",
    "KEX",
    "NETWORK",
    "POPULATION",
    "SECOND_CHAIN",
    "SERVED_CHAIN",
    "SERVER_GROUPS",
    "SIGNATURE_IMPL",
    "STACK",
    "TARGET",
    "TRANSPORT",
    "TRUST_ANCHORS",
    "Axis",
    "Recorded",
]

# In the order an id names them: kex, the hierarchy (or a target), then the suffix parts.
_AXES: list[Axis] = [
    KEX,
    HIERARCHY,
    SERVED_CHAIN,
    CERTIFICATE,
    HANDSHAKE_MODE,
    CERT_COMPRESSION,
    CLIENT_AUTH,
    TRANSPORT,
    STACK,
    SECOND_CHAIN,
    POPULATION,
    SERVER_GROUPS,
    CHAIN_ORDER,
    SIGNATURE_IMPL,
    TRUST_ANCHORS,
    CLIENT_PROFILE,
    NETWORK,
    TARGET,
]


def registered() -> tuple[Axis, ...]:
    """Every axis, in the order an id names them (the network last of the suffix parts)."""
    return tuple(_AXES)


def get(key: str) -> Axis:
    return next(a for a in _AXES if a.key == key)


def recorded() -> tuple[Recorded, ...]:
    """Every axis's recorded per-connection fields (`Axis.recorded`), in registry order."""
    return tuple(r for a in _AXES for r in a.recorded)


def frame_owner(name: str) -> Axis:
    """The axis that declares analysis frame `name` (`Axis.frames`); KeyError if none."""
    for a in _AXES:
        if name in a.frames:
            return a
    raise KeyError(f"no axis declares the analysis frame {name!r}")


def levers() -> tuple[Axis, ...]:
    """The axes besides the four structural ones."""
    return tuple(a for a in _AXES if not a.structural)


def suffix_axes() -> tuple[Axis, ...]:
    """The axes an id names after its positions, in id order (levers, then the network)."""
    return tuple(a for a in _AXES if not a.structural or a is NETWORK)


def matrix_keys() -> tuple[str, ...]:
    """The [matrix.*] keys that are axes (a stack pair may also be given side by side)."""
    return tuple(k for a in _AXES for k in (a.key, *a.matrix_keys))


def where_keys() -> tuple[str, ...]:
    """Scenario properties a `where` table may test: the id, then every axis's keys."""
    return ("scenario", *(k for a in _AXES for k in a.where_facts()))


def lever_columns() -> tuple[str, ...]:
    """The scenario columns of the levers (what a comparison of hierarchies holds fixed,
    besides the key exchange and the network)."""
    return tuple(c for a in levers() for c in a.column_names)


def lever_labels(row: Mapping[str, Any], only: set[str] | None = None) -> list[str]:
    """Each lever of a scenario (`row`: its stored columns) at a value other than its
    default, as its axis labels it, in registry order; the stacks left out (a report names
    them itself). `only`: just the levers one of whose columns is in it."""
    out = []
    for a in levers():
        if a is STACK or (only is not None and not only.intersection(a.column_names)):
            continue
        if not all(c in row for c in a.column_names):
            continue  # a frame without the lever (an older store's, a test's)
        values = tuple(row[c] for c in a.column_names)
        if tuple(map(str, values)) != tuple(map(str, a.column_values(a.default))):
            out.append(a.label_of(*values))
    return out


def scenario_keys() -> tuple[str, ...]:
    """The scenario columns that identify a scenario apart from its network (and target): a
    scenario and its twin on another network share them."""
    return ("kex", *HIERARCHY.column_names, *lever_columns())


def labels() -> dict[str, str]:
    """Column -> the report's label, for every lever column and the structural ones a pair
    can differ in."""
    out = {"depth": "depth", "kex": KEX.label}
    for a in levers():
        if len(a.column_names) == 1:
            out[a.column_names[0]] = a.label
        else:
            for c in a.column_names:
                out[c] = f"{c.split('_', 1)[0]} {a.label}"
    out["network"] = NETWORK.label
    return out


def value_order() -> dict[str, Mapping[str, int]]:
    """Column -> the report's order of its values."""
    out: dict[str, Mapping[str, int]] = {"kex_family": KEX.order, "network": NETWORK.order}
    for a in levers():
        if a.order:
            for c in a.column_names:
                out[c] = a.order
    return out


def needs_of(h: Handshake) -> list[tuple[str, str, str]]:
    """(side, capability, text) that a scenario's axis values need of the TLS stacks (`h`:
    its handshake, chainlab.axes.handshake, whose `parts` are the values)."""
    return [n for a in _AXES if a.needs is not None for n in a.needs(h.parts[a.key], h)]


def default_params() -> dict[str, Any]:
    """What a scenario's stored params say of the levers they name even at their default
    (`Axis.params_always`), at the default: what a scenario stored before one of them
    existed had."""
    return {k: v for a in levers() if a.params_always for k, v in a.params_of(a.default).items()}


def handshake(parts: Mapping[str, Any], network_profile: Any = None) -> Handshake:
    """What a scenario's axis values (`parts`) make of its handshake and run: each axis's
    `shape` in registry order (chainlab.axes.handshake)."""
    h = Handshake(
        parts=parts,
        kex=parts["kex"],
        hierarchy=tuple(parts["hierarchy"]),
        target=parts["target"],
        network_profile=network_profile,
    )
    for a in _AXES:
        if a.shape is not None:
            h = a.shape(parts[a.key], h)
    return h


def values_of(parts: Mapping[str, Any]) -> dict[str, Any]:
    """The store's scenario column values of every axis, from a scenario's parts."""
    out: dict[str, Any] = {}
    for a in _AXES:
        out.update(zip(a.column_names, a.column_values(parts[a.key]), strict=True))
    return out


@contextlib.contextmanager
def added(axis: Axis) -> Iterator[Axis]:
    """Registers `axis` (before the network, the last suffix part) for the duration of a
    `with`: how a test shows that an axis needs nothing but its declaration."""
    _AXES.insert(_AXES.index(NETWORK), axis)
    try:
        yield axis
    finally:
        _AXES.remove(axis)
