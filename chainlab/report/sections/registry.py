"""How a section joins the report: `@section(rank)` on its module's `build`, as figures join
with `@figure`. A section is one module in this package; its anchor is the module's name.

    @section(45, headline=answers)
    def build(b: Builder) -> Section | None: ...

`rank` orders the report (lower first). `headline(b)` gives the section's answers for the
report's opening "Answers" section: (question, answer) rows, each answer with its interval,
an empty list where the section has nothing to say for this store. `last=True` builds the
section after all others (the answers link to the sections that were built). `applies(b)`
says cheaply whether the section belongs in this store's report at all: where it is false
the section is not built, so none of the analyses it reads is computed (analyses run when
first asked for: chainlab.analysis.registry).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from chainlab import axes


@dataclass(frozen=True)
class Registered:
    rank: float
    anchor: str  # the module's name, which is the section's anchor
    build: Callable
    headline: Callable | None
    # Built after every other section (it reads what they built), shown at its rank.
    last: bool = False
    # Whether the section belongs in this store's report (None: always).
    applies: Callable | None = None


_SECTIONS: dict[str, Registered] = {}


def section(
    rank: float,
    headline: Callable | None = None,
    last: bool = False,
    applies: Callable | None = None,
) -> Callable:
    """Registers the decorated `build` as the section of its module."""

    def register(build: Callable) -> Callable:
        anchor = build.__module__.rsplit(".", 1)[-1]
        _SECTIONS[anchor] = Registered(rank, anchor, build, headline, last, applies)
        return build

    return register


def _frame(data, name: str):
    """A store's frame by name: an axis's (`Axis.frames`) or a StoreData field."""
    try:
        axes.frame_owner(name)
    except KeyError:
        return getattr(data, name)
    return data.frame(name)


def registered() -> list[Registered]:
    """The sections registered so far, in report order (chainlab.report.sections imports
    every module of the package first, which registers them)."""
    return sorted(_SECTIONS.values(), key=lambda r: (r.rank, r.anchor))


def placement_study(b) -> bool:
    """a placement study: scenarios that vary no lever but the served chain

    `applies` of the placement study's sections (the paper's tables of classes, the
    strategy matrix, correlations, capacity and cost, findings, the paper comparison): a
    store whose scenarios vary no lever but the served chain (chainlab.analysis.compare:
    `placement_study`). A campaign that varies another lever is read lever by lever."""
    return bool(b.a.placement_study)


def uses(*keys: str) -> Callable:
    """`applies` of a section that reads axes `keys`: some scenario holds one of them off its
    default (chainlab.analysis.load.StoreData.uses)."""

    def applies(b) -> bool:
        return b.a.data.uses(*keys)

    defaults = (
        f"{k} other than {'/'.join(axes.get(k).column_values(axes.get(k).default))}" for k in keys
    )
    applies.__doc__ = f"a scenario with {' or '.join(defaults)}"
    return applies


def holds(*frames: str) -> Callable:
    """`applies` of a section whose data is one of the store's optional frames `frames`
    (chainlab.analysis.load.StoreData fields, or an axis's frame: `Axis.frames`): the
    section runs where any is not empty."""

    def applies(b) -> bool:
        return any(len(_frame(b.a.data, f)) for f in frames)

    applies.__doc__ = f"the store holds {' or '.join(frames)}"
    return applies
