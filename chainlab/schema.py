"""One checker for every configuration table chainlab reads: campaign files
(chainlab.campaign.loader), network profiles (chainlab.network.profile) and analysis settings
(chainlab.campaign.analysis_settings).

A table's keys are declared once as fields (`Int`, `Num`, `Str`, `Record`, `Mapping`); the
checker collects every problem of a file before anything runs, and says each in one style:

    <file>: <key path>: <what is wrong>; allowed: <what is>

e.g. `quick.toml: network.wan.loss: bad value 1.5; allowed: a number >= 0.0 and <= 0.99`.
`ConfigError` carries the problems, one per line.
"""

from __future__ import annotations

import difflib
import math
import re
from collections import abc
from dataclasses import dataclass, field
from typing import Any

from chainlab.errors import ChainlabError, one_line


class ConfigError(ChainlabError):
    """A configuration that does not validate; `problems` has one line per problem."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


def fmt(value) -> str:
    """A value as a problem line shows it (TOML spelling for booleans, tables, arrays)."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return repr(value)


def allowed(names, bad=None) -> str:
    """The allowed names, with a 'did you mean' for a close miss: of the names difflib finds
    close, the one fewest edits away (SLH-DSA-SHAKE-129f: 128f, one letter off, not 192f)."""
    names = list(names)
    text = ", ".join(str(n) for n in names)
    if isinstance(bad, str):
        lower = {str(n).lower(): str(n) for n in names}
        close = difflib.get_close_matches(bad.lower(), list(lower), n=5, cutoff=0.6)
        if close:
            best = min(close, key=lambda c: (edits(bad.lower(), c), close.index(c)))
            text += f" (did you mean {lower[best]!r}?)"
    return text


def edits(a: str, b: str) -> int:
    """The Levenshtein distance: insertions, deletions and substitutions from a to b."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """'1 scenario', '2 scenarios'."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


# A problem of one scenario: "<where>: scenario <id>: <what>".
_SCENARIO_PROBLEM = re.compile(r"^(?P<where>.*?: )scenario (?P<sid>\S+): (?P<what>.*)$")
# How many scenario ids a merged problem names before "and N more".
_NAMED_IDS = 3


def merged(lines: list[str]) -> list[str]:
    """Each problem once: the same problem of several scenarios becomes one line naming the
    first few (a second chain over QUIC in ten scenarios is one mistake, not ten); other lines
    keep their place, exact repeats go."""
    groups: dict[tuple[str, str], list[str]] = {}
    order: list = []
    for line in lines:
        m = _SCENARIO_PROBLEM.match(line)
        if m is None:
            if line not in order:
                order.append(line)
            continue
        key = (m["where"], m["what"])
        if key not in groups:
            groups[key] = []
            order.append(key)
        if m["sid"] not in groups[key]:
            groups[key].append(m["sid"])
    out = []
    for item in order:
        if isinstance(item, str):
            out.append(item)
            continue
        (where, what), ids = item, groups[item]
        named = ", ".join(ids[:_NAMED_IDS])
        more = f" and {len(ids) - _NAMED_IDS} more" if len(ids) > _NAMED_IDS else ""
        noun = "scenario" if len(ids) == 1 else "scenarios"
        out.append(f"{where}{noun} {named}{more}: {what}")
    return out


class Problems:
    """The problems found in one source (a file, or a named profile)."""

    def __init__(self, source: str):
        self.source = source
        self.lines: list[str] = []

    def bad(self, key: str, message: str) -> None:
        where = f"{self.source}: {key}" if key else self.source
        self.lines.append(one_line(f"{where}: {message}"))

    def raise_if_any(self) -> None:
        if self.lines:
            raise ConfigError(merged(self.lines))

    def keys(self, table: dict, names, where: str) -> None:
        for k in table:
            if k not in names:
                self.bad(_at(where, k), f"unknown key {k!r}; allowed: {allowed(names, k)}")

    def table(self, value, where: str) -> dict:
        if not isinstance(value, dict):
            self.bad(where, f"expected a table, got {fmt(value)}")
            return {}
        return value

    def check(self, fields: abc.Mapping[str, Field], table: dict, where: str, also=()) -> dict:
        """The checked value of every key of `table` that `fields` declares (None where the
        value is bad); keys neither declared nor in `also` (checked by the caller) are
        problems too."""
        self.keys(table, (*fields, *also), where)
        return {k: fields[k].check(v, _at(where, k), self) for k, v in table.items() if k in fields}


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


class Field:
    """A declared value: `check` returns it (normalized) or None after reporting why not."""

    def check(self, value: Any, at: str, problems: Problems) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class Int(Field):
    lo: int
    hi: int | None = None

    def check(self, value: Any, at: str, problems: Problems) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            problems.bad(at, f"expected an integer, got {fmt(value)}")
            return None
        if value < self.lo or (self.hi is not None and value > self.hi):
            rng = f"{self.lo} to {self.hi}" if self.hi is not None else f">= {self.lo}"
            problems.bad(at, f"bad value {value}; allowed: an integer {rng}")
            return None
        return value


@dataclass(frozen=True)
class Num(Field):
    lo: float
    hi: float | None = None
    lo_open: bool = False  # lo itself is not allowed
    hi_open: bool = False  # hi itself is not allowed

    def check(self, value: Any, at: str, problems: Problems) -> Any:
        ok_type = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok_type or not math.isfinite(value):
            problems.bad(at, f"expected a number, got {fmt(value)}")
            return None
        below = value <= self.lo if self.lo_open else value < self.lo
        above = self.hi is not None and (value >= self.hi if self.hi_open else value > self.hi)
        if below or above:
            problems.bad(at, f"bad value {value}; allowed: {self.describe()}")
            return None
        return float(value)

    def describe(self) -> str:
        left = f"> {self.lo}" if self.lo_open else f">= {self.lo}"
        if self.hi is None:
            return f"a number {left}"
        right = f"< {self.hi}" if self.hi_open else f"<= {self.hi}"
        return f"a number {left} and {right}"


@dataclass(frozen=True)
class Str(Field):
    choices: tuple | None = None
    pattern: re.Pattern | None = None
    what: str = "a string"  # what a value is, for messages

    def check(self, value: Any, at: str, problems: Problems) -> Any:
        if not isinstance(value, str):
            problems.bad(at, f"expected {self.what}, got {fmt(value)}")
            return None
        if self.choices is not None and value not in self.choices:
            problems.bad(at, f"bad value {value!r}; allowed: {allowed(self.choices, value)}")
            return None
        if self.pattern is not None and not self.pattern.match(value):
            problems.bad(at, f"bad value {value!r}; allowed: {self.what}")
            return None
        return value


@dataclass(frozen=True)
class Bool(Field):
    def check(self, value: Any, at: str, problems: Problems) -> Any:
        if not isinstance(value, bool):
            problems.bad(at, f"expected true or false, got {fmt(value)}")
            return None
        return value


@dataclass(frozen=True)
class Items(Field):
    """An array of values each checked by `of`, at least `min_len` of them."""

    of: Field
    min_len: int = 1
    what: str = "an array"

    def check(self, value: Any, at: str, problems: Problems) -> Any:
        if not isinstance(value, list):
            problems.bad(at, f"expected {self.what}, got {fmt(value)}")
            return None
        if len(value) < self.min_len:
            # An array, too short: how many it holds and how many it needs (an empty
            # `fractions = []` had read "expected an array of fractions of at least 1, got an
            # array").
            got = "an empty array" if not value else f"{len(value)}"
            problems.bad(
                at,
                f"expected {self.what} with at least {self.min_len} "
                f"value{'s' if self.min_len != 1 else ''}, got {got}",
            )
            return None
        items = [self.of.check(v, f"{at}[{i}]", problems) for i, v in enumerate(value)]
        return None if None in items else items


@dataclass(frozen=True)
class Record(Field):
    """A table of fixed keys, each optional, filled from `defaults`."""

    fields: dict[str, Field]
    defaults: dict = field(default_factory=dict)

    def check(self, value: Any, at: str, problems: Problems) -> Any:
        if not isinstance(value, dict):
            problems.bad(at, f"expected a table ({', '.join(self.fields)}), got {fmt(value)}")
            return None
        got = problems.check(self.fields, value, at)
        if None in got.values() or set(value) - set(self.fields):
            return None
        return {**self.defaults, **got}


@dataclass(frozen=True)
class Mapping(Field):
    """A table of free names, each value checked by `values`; at least one entry."""

    values: Field
    what: str = "a table of names and values"

    def check(self, value: Any, at: str, problems: Problems) -> Any:
        if not isinstance(value, dict) or not value:
            problems.bad(at, f"expected {self.what}, got {fmt(value)}")
            return None
        got = {str(k): self.values.check(v, _at(at, str(k)), problems) for k, v in value.items()}
        return None if None in got.values() else got
