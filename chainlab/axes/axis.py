"""What a scenario axis is: its key and values, how the loader reads and checks a value,
what the id, the store and the report make of it, and what it asks of the engines and the
estimate. The registry of axes is chainlab.axes; an axis is declared in the
module of its subject (certificates, rollout) or there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class AxisReader(Protocol):
    """What an axis's readers and rules use of the campaign file's reader (the loader's
    validator, chainlab.campaign.loader.Validator): how a problem is reported, the readers
    of plain values and hierarchies, and what the file's earlier tables declared."""

    @property
    def notes(self) -> list[str]: ...

    @property
    def hierarchies(self) -> dict[str, tuple[str, ...]]: ...

    @property
    def clients(self) -> dict[str, Any]: ...

    @property
    def declared_networks(self) -> list[str]: ...

    @property
    def target_names(self) -> list[str]: ...

    def bad(self, key: str, message: str) -> None: ...

    def string(
        self, value: Any, where: str, choices: Iterable[str] | None = None, what: str = "a string"
    ) -> Any: ...

    def integer(self, value: Any, where: str, lo: int, hi: int | None = None) -> Any: ...

    def keys(self, table: dict[str, Any], names: Iterable[str], where: str) -> None: ...

    def table(self, value: Any, where: str) -> dict[str, Any]: ...

    def listish(self, value: Any) -> list[Any]: ...

    def read_hierarchy(self, value: Any, where: str) -> tuple[str, ...] | None: ...

    def resolve_alg(self, ref: Any, where: str) -> str | None: ...

    def axis_values(self, axis: Axis, m: Mapping[str, Any], at: str) -> list[Any] | None: ...


# An id part an axis does not recognise (`Axis.id_read`).
NOT_MINE = object()

# A reader of one value: (the loader's validator, the item, its key path) -> the value, or
# None after reporting what is wrong.
Reader = Callable[[Any, Any, str], Any]


def hierarchy_token(prefix: str) -> Callable[[tuple[str, ...], Callable[[str], str]], str]:
    """The `id_part` of an axis whose value is a hierarchy (a client certificate's, a
    second chain's): `prefix` and its algorithms' tokens root first, joined by '_'."""
    return lambda h, alg_token: prefix + "_".join(alg_token(a) for a in h)


def hierarchy_part(prefix: str, what: str) -> Callable[[str, Mapping[str, str]], Any]:
    """The `id_read` that undoes `hierarchy_token(prefix)`: the algorithms, NOT_MINE for
    another part, ValueError for a bad one."""

    def untoken(part: str, algorithms: Mapping[str, str]) -> Any:
        if not part.startswith(prefix):
            return NOT_MINE
        tokens = part[len(prefix) :].split("_")
        if any(t not in algorithms for t in tokens) or not 1 <= len(tokens) <= 4:
            raise ValueError(
                f"bad {what} part {part!r}; allowed: {prefix} followed by 1 to 4 algorithm "
                f"tokens root first, joined by '_' ({', '.join(sorted(algorithms))})"
            )
        return tuple(algorithms[t] for t in tokens)

    return untoken


def read_with(reader: tuple[str, ...] | Reader, v: AxisReader, item: Any, at: str) -> Any:
    """`item` read as `reader` says: one of a set of strings, or through the reader."""
    if isinstance(reader, tuple):
        return v.string(item, at, choices=reader)
    return reader(v, item, at)


@dataclass(frozen=True)
class Recorded:
    """A per-connection field the engines record for an axis's capability, which the store
    keeps as a column of `samples` (chainlab.store.schema adds it to a store that lacks it
    when the store is created or opened for writing; rows from before hold NULL)."""

    column: str  # the samples column
    sql_type: str  # its DuckDB type: INTEGER, BOOLEAN, VARCHAR, ...
    side: str  # "client" or "server": whose record holds the field
    field: str  # the record's field (engine/crates/chainlab-record/records.schema.json)


@dataclass(frozen=True)
class Axis:
    """One scenario axis. Only `key`, `label`, `default` and `read` are required: a lever
    whose value is one string of a fixed set needs nothing else but its id token."""

    key: str  # the [matrix.*] key, the `where` key, the scenario's attribute
    label: str  # what the report calls it ("certificate compression")
    default: Any  # a matrix that leaves the axis out gets this; the id names nothing then
    # How the loader reads one value: the allowed strings, or a reader `read(v, item, at)`
    # given the loader's validator `v` (its `bad`, `table`, `string`, `integer`,
    # `resolve_alg`, `read_hierarchy`, ... and what the file declared: `hierarchies`,
    # `clients`, `targets`, `networks`), which returns the value or None after `v.bad`.
    read: tuple[str, ...] | Reader
    # The scenario (store, summary) columns the axis sets; None: one column named `key`.
    columns: tuple[str, ...] | None = None
    # The store's value(s) of each column from the axis's value; None: the value itself.
    store: Callable[[Any], tuple[Any, ...]] | None = None
    # What a scenario stored before a column existed holds in it, from its other columns
    # (a mapping of column name to value); a column not named holds the axis default's.
    before_column: Mapping[str, Callable[[Mapping[str, Any]], Any]] = field(default_factory=dict)
    # The report's order of values (lower first; values not named come after, by name).
    order: Mapping[str, int] = field(default_factory=dict)
    # The id's part for a value (None at the default); `alg_token` names an algorithm.
    id_part: Callable[[Any, Callable[[str], str]], str | None] | None = None
    # The value an id part stands for, given the file's token -> algorithm map; NOT_MINE.
    id_read: Callable[[str, Mapping[str, str]], Any] | None = None
    # What the id grammar allows for this axis, for the message of an unknown part.
    id_help: str = ""
    # The words its id parts are or begin with: never an algorithm alias or a client kind's
    # name, so an id reads back one way only (chainlab.campaign.ids.RESERVED).
    id_words: tuple[str, ...] = ()
    # A value as an id gives it, completed from the file (`resolve(v, value, at)`: a
    # population's kinds by name); None: the id's value as it is.
    resolve: Callable[[Any, Any, str], Any] | None = None
    # A target serves its own chain: a matrix of targets may not set this axis.
    not_with_target: bool = False
    # `where` keys the axis offers and the set of values a scenario's value has for each;
    # None: one key, `key`, tested against the value itself.
    where: Mapping[str, Callable[[Any], set[Any]]] | None = None
    # How a matrix gives the axis's values when not as one key's array of `read` values:
    # `matrix_read(v, matrix, at)` -> the values, or None when the matrix gives none (a
    # stack pair may be given side by side, as client_stack and server_stack).
    matrix_read: Callable[[Any, Mapping[str, Any], str], list[Any] | None] | None = None
    # More [matrix.*] keys the axis reads through `matrix_read` (besides `key`).
    matrix_keys: tuple[str, ...] = ()
    # How the loader reads a value of each `where` key (as `read`); None: `read` for `key`.
    where_read: Mapping[str, tuple[str, ...] | Reader] | None = None
    # What a value makes of the scenario's handshake (chainlab.axes.handshake): the
    # estimate, the stacks' capability check, other axes' rules and the runner read that,
    # never this axis's key. `shape(value, h)` returns `h` with this axis's fields set
    # (`h.parts` holds every axis's value; axes are folded in registry order).
    shape: Callable[[Any, Any], Any] | None = None
    # The rules a scenario's value must keep with the other axes' values:
    # `check(v, sid, h, with_load)` reports each broken one through `v.bad` (or notes
    # through `v.notes`); `h` is the scenario's handshake (its `parts`: the axis values),
    # `with_load` whether [load] steps apply to it.
    check: Callable[[Any, str, Any, bool], None] | None = None
    # Engine flags both sides take for a value (None: none).
    flags: Callable[[Any], list[str]] | None = None
    # What the server (`serve`) and every client (`handshake`, `load`) add for a value,
    # given the scenario (chainlab.campaign.model.Scenario: `s.value(key)` is another
    # axis's value) and its files (chainlab.runner.scenario_state.Files: hierarchy
    # directories, trust anchors); a client's also gets its batch's seed.
    server_flags: Callable[[Any, Any, Any], list[str]] | None = None
    client_flags: Callable[[Any, Any, Any, int], list[str]] | None = None
    # The client's trust anchors when the value replaces the hierarchy's (`--ca`): a
    # Merkle Tree Certificate's, a dual-chain server's two roots; None: the hierarchy's.
    trust: Callable[[Any, Any], list[str] | None] | None = None
    # What a value adds to the run-time estimate of one handshake, in ms (None: nothing
    # beyond what chainlab.model.estimate prices itself).
    estimate_ms: Callable[[Any, Any], float] | None = None
    # Cryptographic operations a value adds to one handshake beyond those of its hierarchy,
    # key exchange and mode (`operations(value, h)`: chainlab.model.cost.Operation
    # fields as (side, category, subject, op, message, count)); the cost model prices them
    # and the runner measures their primitives. None: nothing.
    operations: Callable[[Any, Any], list[tuple[Any, ...]]] | None = None
    # (side, capability) pairs a value needs of the stacks, given the scenario's handshake
    # (`needs(value, h)`): checked against each stack's missing features
    # (chainlab.axes.stack), with the text it reads as.
    needs: Callable[[Any, Any], list[tuple[str, str, str]]] | None = None
    # How a scenario's label names its value where the axis varies in a store, from its
    # column values; None: "<key> <value>".
    describe: Callable[..., str] | None = None
    # The scenario's stored params (`scenarios.params`) for a value: None: {key: value}.
    # `params_always`: named even at the default (the axes the first stores had), else only
    # where the value is not the default, so older scenarios keep their params.
    params: Callable[[Any], dict[str, Any]] | None = None
    params_always: bool = False
    # Whether the axis is one of the four the id and the runner handle themselves.
    structural: bool = False
    # The per-connection fields the engines record for the axis (kept in `samples`).
    recorded: tuple[Recorded, ...] = ()
    # The analysis frames made of them: name -> a query over `measured` (the measured
    # attempts of each scenario's chosen run: chainlab.store.views.measured_query), read
    # the first time an analysis asks (chainlab.analysis.load.StoreData.frame); an empty
    # frame in a store without the `recorded` columns.
    frames: Mapping[str, str] = field(default_factory=dict)

    @property
    def column_names(self) -> tuple[str, ...]:
        return self.columns if self.columns is not None else (self.key,)

    def column_values(self, value: Any) -> tuple[Any, ...]:
        """The store's values of `column_names` for an axis value."""
        return self.store(value) if self.store is not None else (value,)

    def value_before(self, column: str, row: Mapping[str, Any]) -> Any:
        """What column `column` holds for a scenario (`row`: its other columns) stored
        before the column existed."""
        if column in self.before_column:
            return self.before_column[column](row)
        defaults = dict(zip(self.column_names, self.column_values(self.default), strict=True))
        return defaults[column]

    def params_of(self, value: Any) -> dict[str, Any]:
        """What the scenario's stored params say of `value` (empty at an unnamed default)."""
        if value == self.default and not self.params_always:
            return {}
        return self.params(value) if self.params is not None else {self.key: value}

    def where_facts(self) -> Mapping[str, Callable[[Any], set[Any]]]:
        return self.where if self.where is not None else {self.key: lambda v: {v}}

    def where_reader(self, key: str) -> tuple[str, ...] | Reader:
        """How the loader reads a value of `where` key `key`."""
        return (self.where_read or {}).get(key, self.read)

    def token(self, value: Any, alg_token: Callable[[str], str]) -> str | None:
        """The id part of `value` (None at the default)."""
        if value == self.default:
            return None
        if self.id_part is not None:
            return self.id_part(value, alg_token)
        return f"{self.key}_{value}"

    def untoken(self, part: str, algorithms: Mapping[str, str]) -> Any:
        """The value an id part stands for, or NOT_MINE."""
        if self.id_read is not None:
            return self.id_read(part, algorithms)
        prefix = f"{self.key}_"
        if part.startswith(prefix) and isinstance(self.read, tuple):
            value = part[len(prefix) :]
            if value in self.read and value != self.default:
                return value
        return NOT_MINE

    def label_of(self, *column_values: Any) -> str:
        """What a scenario's label adds for this axis (where it varies in the store)."""
        if self.describe is not None:
            return self.describe(*column_values)
        return f"{self.key} {' '.join(map(str, column_values))}"

    def help(self) -> str:
        if self.id_help:
            return self.id_help
        if isinstance(self.read, tuple):
            return ", ".join(f"{self.key}_{v}" for v in self.read if v != self.default)
        return f"{self.key}_<value>"
