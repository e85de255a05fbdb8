"""What the loader's validator knows while it reads a campaign file, and how it reports a
problem: the base of its readers (chainlab.campaign.tables, .matrix_reader, .clients) and of
the validator itself (chainlab.campaign.loader). Problems are collected by chainlab.schema's
`Problems` and raised together (`check`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from chainlab.axes.rollout import Kind
from chainlab.campaign.model import NetworkProfile, Target
from chainlab.schema import Int, Problems, Str


class Reading:
    """A campaign file being read: its path and parsed data, the problems found so far, and
    what each table read gives the tables read after it."""

    def __init__(self, path: Path, data: dict[str, Any], algorithms: tuple[str, ...]):
        self.path = path
        self.data = data
        self.algorithms = algorithms
        self.p = Problems(str(path))
        self.notes: list[str] = []
        # [campaign] interop: client-side capability problems run as expected failures.
        self.interop = False
        # Filled as the tables are read, in the loader's order.
        self.aliases: dict[str, str] = {}
        self.bad_aliases: set[str] = set()
        self.tokens: dict[str, str] = {}
        self.hierarchies: dict[str, tuple[str, ...]] = {}
        self.networks: dict[str, NetworkProfile] = {}
        self.declared_networks: list[str] = []
        self.targets: dict[str, Target] = {}
        self.target_names: list[str] = []
        self.clients: dict[str, Kind] = {}
        self.campaign_matrices: dict[str, list[str]] = {}
        # [load] and [measure] overrides by `where` (chainlab.campaign.load_plan, .measure_plan).
        self.load_overrides: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self.measure_overrides: list[tuple[dict[str, Any], dict[str, Any]]] = []

    # -- reporting: chainlab.schema -----------------------------------------------------

    def bad(self, key: str, message: str) -> None:
        self.p.bad(key, message)

    def check(self) -> None:
        self.p.raise_if_any()

    def keys(self, table: dict[str, Any], names: Iterable[str], where: str) -> None:
        self.p.keys(table, names, where)

    def table(self, value: Any, where: str) -> dict[str, Any]:
        return self.p.table(value, where)

    def string(
        self, value: Any, where: str, choices: Iterable[str] | None = None, what: str = "a string"
    ) -> Any:
        return Str(choices=tuple(choices) if choices is not None else None, what=what).check(
            value, where, self.p
        )

    def integer(self, value: Any, where: str, lo: int, hi: int | None = None) -> Any:
        return Int(lo, hi).check(value, where, self.p)

    @staticmethod
    def listish(value: Any) -> list[Any]:
        """An array, or a single value standing for a one-element array."""
        return value if isinstance(value, list) else [value]
