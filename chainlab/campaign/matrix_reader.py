"""The campaign file's [matrix.*] and [campaigns.*] tables: each matrix's axes read and
checked, then expanded (chainlab.campaign.matrix) into scenario ids; the loader's validator
(chainlab.campaign.loader) mixes these readers in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chainlab.axes.axis import Axis

from chainlab import axes
from chainlab.campaign import ids, matrix
from chainlab.campaign.fields import (
    CAMPAIGNS_KEYS,
    MATRIX_OTHER_KEYS,
    NAME_RE,
)
from chainlab.campaign.tables import TableReaders
from chainlab.network.profile import LOOPBACK
from chainlab.schema import fmt


class MatrixReaders(TableReaders):
    """Readers of [matrix.*] and [campaigns.*] (methods of the loader's validator)."""

    def read_matrices(self, value: Any) -> dict[str, dict[str, Any]]:
        out = {}
        for mname, m in self.table(value, "matrix").items():
            at = f"matrix.{mname}"
            m = self.table(m, at)
            self.keys(m, (*axes.matrix_keys(), *MATRIX_OTHER_KEYS), at)
            if "target" in m:
                self.check_target_matrix(m, at)
            for req in ("kex", "hierarchy") if "target" not in m else ("kex",):
                if req not in m:
                    self.bad(
                        f"{at}.{req}",
                        "missing; allowed: an array of "
                        + ("key-exchange groups" if req == "kex" else "hierarchies"),
                    )
            values: dict[str, list[Any]] = {}
            for axis in axes.registered():
                if axis.matrix_read is not None:
                    got = axis.matrix_read(self, m, at)
                else:
                    got = self.axis_values(axis, m, at)
                if got:
                    values[axis.key] = got
            if "target" in m:
                values["hierarchy"] = [()]  # a target serves its own chain
            excludes = []
            ex = m.get("exclude", [])
            if not isinstance(ex, list):
                self.bad(f"{at}.exclude", f"expected an array of tables, got {fmt(ex)}")
                ex = []
            for i, e in enumerate(ex):
                excludes.append(self.read_where(e, f"{at}.exclude[{i}]"))
            out[mname] = {"axes": values, "exclude": excludes}
        return out

    def axis_values(self, axis: Axis, m: Mapping[str, Any], at: str) -> list[Any] | None:
        """An axis's values as a matrix gives them: one value or an array of them under its
        key, each read as `axis.read` says (None: the matrix leaves the axis out)."""
        raw = m.get(axis.key)
        if raw is None:
            return None
        if axis is axes.HIERARCHY and self.flat_hierarchy(raw, at):
            return None
        items = self.listish(raw)
        if not items:
            self.bad(f"{at}.{axis.key}", "empty array; allowed: at least one value")
            return None
        vals = []
        for i, item in enumerate(items):
            iat = f"{at}.{axis.key}[{i}]" if isinstance(raw, list) else f"{at}.{axis.key}"
            got = self.read_value(axis.read, item, iat)
            if got is not None and got not in vals:
                vals.append(got)
        return vals

    def flat_hierarchy(self, raw: Any, at: str) -> bool:
        """One hierarchy given as a flat array of names is a common slip: say so."""
        if (
            isinstance(raw, list)
            and raw
            and all(isinstance(x, str) for x in raw)
            and any(x not in self.hierarchies for x in raw)
        ):
            self.bad(
                f"{at}.hierarchy",
                f'expected an array of hierarchies, got {raw!r}; allowed: e.g. [["ml", "ml"]] '
                "or names of [hierarchies] entries",
            )
            return True
        return False

    def check_target_matrix(self, m: dict[str, Any], at: str) -> None:
        """A matrix of targets sets only what the client chooses."""
        chooses = [
            k for a in axes.registered() if not a.not_with_target for k in (a.key, *a.matrix_keys)
        ]
        for axis in axes.registered():
            if axis.not_with_target and axis.key in m:
                self.bad(
                    f"{at}.{axis.key}",
                    "given with target; allowed: only what the client chooses ("
                    + ", ".join(k for k in chooses if k not in ("target", "network"))
                    + "): a target serves its own chain",
                )
        nets = self.listish(m.get("network", LOOPBACK))
        if any(n != LOOPBACK for n in nets):
            self.bad(
                f"{at}.network",
                "given with target; allowed: loopback only (a target is reached over the "
                "real network between this machine and it)",
            )

    def expand(
        self, mname: str, m: dict[str, Any], parts_by_id: dict[str, dict[str, Any]]
    ) -> list[str]:
        """The scenario ids of matrix `mname` (matrix.expand), with what it reports."""
        ids_, unused = matrix.expand(m["axes"], m["exclude"], self.alg_token, parts_by_id)
        for i in unused:
            self.notes.append(f"matrix.{mname}.exclude[{i}] excludes no scenario")
        if not ids_:
            self.bad(
                f"matrix.{mname}",
                "every combination is excluded; allowed: a matrix leaving at least one scenario",
            )
        return ids_

    def read_campaigns(
        self,
        value: Any,
        matrices: dict[str, dict[str, Any]],
        matrix_ids: dict[str, list[str]],
        parts_by_id: dict[str, dict[str, Any]],
    ) -> dict[str, list[str]]:
        self.campaign_matrices = {}
        if value is None:
            # No [campaigns]: one campaign, named after the file, of every matrix.
            name = self.path.stem
            self.campaign_matrices[name] = list(matrices)
            return {name: [sid for m in matrices for sid in matrix_ids.get(m, [])]}
        out = {}
        for cname, c in self.table(value, "campaigns").items():
            at = f"campaigns.{cname}"
            if not NAME_RE.match(cname):
                self.bad(
                    at, f"bad campaign name {cname!r}; allowed: letters, digits, '.', '_', '-'"
                )
                continue
            c = self.table(c, at)
            self.keys(c, CAMPAIGNS_KEYS, at)
            if "description" in c:
                self.string(c["description"], f"{at}.description")
            members: list[str] = []
            mlist = self.listish(c.get("matrices", []))
            self.campaign_matrices[cname] = []
            for i, mname in enumerate(mlist):
                mat = f"{at}.matrices[{i}]"
                if self.string(mname, mat, choices=list(matrices)) is None:
                    continue
                self.campaign_matrices[cname].append(mname)
                members += [s for s in matrix_ids.get(mname, []) if s not in members]
            for i, sid in enumerate(self.listish(c.get("scenarios", []))):
                sat = f"{at}.scenarios[{i}]"
                if self.string(sid, sat, what="a scenario id") is None:
                    continue
                if sid not in parts_by_id:
                    try:
                        parts = ids.decode(sid, self.tokens, set(self.networks), set(self.targets))
                    except ValueError as e:
                        self.bad(sat, f"bad scenario id {sid!r}: {e}")
                        continue
                    for axis in axes.registered():
                        if axis.resolve is not None:
                            parts[axis.key] = axis.resolve(self, parts[axis.key], sat)
                    parts_by_id[sid] = parts
                if sid not in members:
                    members.append(sid)
            if not members:
                self.bad(at, "no scenarios; allowed: a campaign with `matrices` and/or `scenarios`")
            out[cname] = members
        return out
