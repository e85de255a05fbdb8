"""The one register of the report's figures: each figure function is registered once, by the
`figure` decorator, with its name (the file stem under figures/) and its title; the report's
sections ask for figures by name and add only the caption.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    name: str
    # The title, or a function of the figure's arguments giving it (one figure per axis).
    title: str | Callable[..., str]
    draw: Callable  # draw(analysis, *args) -> matplotlib Figure, or None: nothing to plot

    def title_for(self, *args) -> str:
        return self.title(*args) if callable(self.title) else self.title


REGISTRY: dict[str, Entry] = {}


def figure(name: str, title: str | Callable[..., str]):
    """Register the decorated function as the figure `name` with `title`."""

    def register(fn):
        if name in REGISTRY:
            raise ValueError(f"figure {name!r} is registered twice")
        REGISTRY[name] = Entry(name, title, fn)
        return fn

    return register
