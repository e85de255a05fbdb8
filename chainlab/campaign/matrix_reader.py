"""The campaign file's [matrix.*] and [campaigns.*] tables: each matrix's axes read and
checked, then expanded (chainlab.campaign.matrix) into scenario ids; the loader's validator
(chainlab.campaign.loader) mixes these readers in.
"""

from __future__ import annotations

from chainlab.campaign import axes, certificates, ids, matrix
from chainlab.campaign.algorithms import (
    MIX_ALLOWED,
    NO_CLIENT_AUTH,
    is_handshake_mode,
    mode_of_ratio,
)
from chainlab.campaign.fields import (
    CAMPAIGNS_KEYS,
    MATRIX_OTHER_KEYS,
    NAME_RE,
)
from chainlab.campaign.stacks import DEFAULT_STACK, STACKS
from chainlab.network.profile import LOOPBACK
from chainlab.schema import allowed, fmt


class MatrixReaders:
    """Readers of [matrix.*] and [campaigns.*] (methods of the loader's validator)."""

    def read_matrices(self, value) -> dict[str, dict]:
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
            values: dict[str, list] = {}
            for axis in axes.registered():
                if axis is axes.STACK:
                    # A pair: `stack` (both sides), or client_stack x server_stack.
                    pairs = self.stack_pairs(m, at)
                    if pairs:
                        values["stack"] = pairs
                    continue
                raw = m.get(axis.key)
                if raw is None:
                    continue
                if axis is axes.HIERARCHY and self.flat_hierarchy(raw, at):
                    continue
                items = self.listish(raw)
                if not items:
                    self.bad(f"{at}.{axis.key}", "empty array; allowed: at least one value")
                    continue
                vals = []
                for i, item in enumerate(items):
                    iat = f"{at}.{axis.key}[{i}]" if isinstance(raw, list) else f"{at}.{axis.key}"
                    got = self.read_value(axis.read, item, iat)
                    if got is not None and got not in vals:
                        vals.append(got)
                values[axis.key] = vals
            if "target" in m:
                values["hierarchy"] = [()]  # a target serves its own chain
            if "resumption_ratio" in m:
                modes = self.resumption_ratios(m["resumption_ratio"], f"{at}.resumption_ratio")
                if "handshake_mode" in m:
                    self.bad(
                        f"{at}.resumption_ratio",
                        "given with handshake_mode; allowed: one of the two (a ratio of 0 is "
                        "handshake_mode 'full', 1 'resumed')",
                    )
                elif modes:
                    values["handshake_mode"] = modes
            excludes = []
            ex = m.get("exclude", [])
            if not isinstance(ex, list):
                self.bad(f"{at}.exclude", f"expected an array of tables, got {fmt(ex)}")
                ex = []
            for i, e in enumerate(ex):
                excludes.append(self.read_where(e, f"{at}.exclude[{i}]"))
            out[mname] = {"axes": values, "exclude": excludes}
        return out

    def flat_hierarchy(self, raw, at: str) -> bool:
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

    def stack_pairs(self, m: dict, at: str) -> list[tuple[str, str]]:
        """The (client, server) stack pairs of a matrix: `stack` (both sides alike), or
        `client_stack` x `server_stack` (a side left out is on the default stack)."""
        if "stack" in m and ("client_stack" in m or "server_stack" in m):
            self.bad(
                f"{at}.stack",
                "given with client_stack/server_stack; allowed: `stack` (both sides on one "
                "stack) or client_stack and server_stack (each side its own)",
            )
            return []
        chosen = {}
        for key in ("stack", "client_stack", "server_stack"):
            if key not in m:
                continue
            raw = m[key]
            items = self.listish(raw)
            if not items:
                self.bad(f"{at}.{key}", "empty array; allowed: at least one value")
            vals = []
            for i, item in enumerate(items):
                iat = f"{at}.{key}[{i}]" if isinstance(raw, list) else f"{at}.{key}"
                got = self.string(item, iat, choices=STACKS)
                if got is not None and got not in vals:
                    vals.append(got)
            chosen[key] = vals
        if "stack" in chosen:
            return [(s, s) for s in chosen["stack"]]
        if not chosen:
            return []
        clients = chosen.get("client_stack", [DEFAULT_STACK])
        servers = chosen.get("server_stack", [DEFAULT_STACK])
        return [(c, s) for c in clients for s in servers]

    def check_target_matrix(self, m: dict, at: str) -> None:
        """A matrix of targets sets only what the client chooses."""
        for key in ("hierarchy", "served_chain", "client_auth", "certificate"):
            if key in m:
                self.bad(
                    f"{at}.{key}",
                    "given with target; allowed: only what the client chooses (kex, "
                    "handshake_mode or resumption_ratio, cert_compression): a target serves "
                    "its own chain",
                )
        nets = self.listish(m.get("network", LOOPBACK))
        if any(n != LOOPBACK for n in nets):
            self.bad(
                f"{at}.network",
                "given with target; allowed: loopback only (a target is reached over the "
                "real network between this machine and it)",
            )

    def client_auth(self, item, at: str) -> tuple[str, ...] | None:
        """A client certificate: 'none', or its hierarchy (an array of algorithms root to
        leaf, or a [hierarchies] name)."""
        if item == NO_CLIENT_AUTH:
            return ()
        if isinstance(item, str) and item not in self.hierarchies:
            self.bad(
                at,
                f"bad value {fmt(item)}; allowed: 'none', a [hierarchies] name "
                f"({allowed(self.hierarchies, item) or 'none declared'}) or an array of "
                "algorithms root to leaf",
            )
            return None
        return self.read_hierarchy(item, at)

    def certificate(self, item, at: str) -> str | None:
        """A certificate: "x509", or a Merkle Tree Certificate's table { kind, batch, ca,
        cosigners, landmark_held } (or its canonical string); chainlab.campaign.certificates."""
        C = certificates
        if isinstance(item, str):
            try:
                return C.parse(item).spec
            except ValueError as e:
                self.bad(
                    at, f"{e}; allowed: 'x509' or a table such as "
                    '{ kind = "mtc-landmark", batch = 4096 }',
                )  # fmt: skip
                return None
        t = self.table(item, at)
        self.keys(t, C.TABLE_KEYS, at)
        kind = self.string(t.get("kind"), f"{at}.kind", choices=C.KINDS)
        if kind is None:
            return None
        if kind == C.X509:
            extra = [k for k in t if k != "kind"]
            if extra:
                self.bad(f"{at}.{extra[0]}", "given with kind 'x509'; allowed: MTC kinds only")
            return C.X509
        if "batch" not in t:
            self.bad(f"{at}.batch", "missing; allowed: the log batch's entries, 2 to 2^26")
            return None
        batch = self.integer(t["batch"], f"{at}.batch", C.MIN_BATCH, C.MAX_BATCH)
        ca = self.resolve_alg(t["ca"], f"{at}.ca") if "ca" in t else C.DEFAULT_CA
        cosigners: list[str] = []
        for i, a in enumerate(self.listish(t.get("cosigners", []))):
            got = self.resolve_alg(a, f"{at}.cosigners[{i}]")
            if got is not None:
                cosigners.append(got)
        held, retry = t.get("landmark_held", True), t.get("retry", False)
        for key, v in (("landmark_held", held), ("retry", retry)):
            if not isinstance(v, bool):
                self.bad(f"{at}.{key}", f"expected true or false, got {fmt(v)}")
        if retry is True and (kind != C.LANDMARK or held is not False):
            self.bad(
                f"{at}.retry",
                "allowed only with kind 'mtc-landmark' and landmark_held = false (the client "
                "that cannot use the landmark-relative certificate retries)",
            )
            return None
        if kind == C.LANDMARK and ("cosigners" in t or "ca" in t):
            key = "cosigners" if "cosigners" in t else "ca"
            self.bad(
                f"{at}.{key}",
                "given with kind 'mtc-landmark': a landmark-relative certificate carries no "
                "signatures; allowed: cosigners and ca with kind 'mtc-standalone'",
            )
            return None
        if kind == C.STANDALONE and "landmark_held" in t:
            self.bad(
                f"{at}.landmark_held",
                "given with kind 'mtc-standalone'; allowed: with kind 'mtc-landmark' (whether "
                "the client holds the landmark)",
            )
            return None
        if batch is None or ca is None:
            return None
        return C.Certificate(kind, batch, ca if kind == C.STANDALONE else None,
                             tuple(cosigners), held is not False, retry is True).spec  # fmt: skip

    def handshake_mode(self, item, at: str) -> str | None:
        """A handshake mode: full, resumed, or a resumption mix resumeNN."""
        got = self.string(item, at, what="a handshake mode")
        if got is not None and not is_handshake_mode(got):
            self.bad(at, f"bad value {fmt(got)}; allowed: {MIX_ALLOWED}")
            return None
        return got

    def resumption_ratios(self, raw, at: str) -> list[str]:
        """`resumption_ratio = [0, 0.5, 0.9]`: the handshake modes these ratios are."""
        items = self.listish(raw)
        if not items:
            self.bad(at, "empty array; allowed: at least one value")
        modes = []
        for i, item in enumerate(items):
            iat = f"{at}[{i}]" if isinstance(raw, list) else at
            mode = None
            if isinstance(item, int | float) and not isinstance(item, bool):
                mode = mode_of_ratio(float(item))
            if mode is None:
                self.bad(
                    iat,
                    f"bad value {fmt(item)}; allowed: a share from 0 to 1 in whole per cent "
                    "(0, 0.5, 0.9, 0.99, 1)",
                )
            elif mode not in modes:
                modes.append(mode)
        return modes

    def expand(self, mname: str, m: dict, parts_by_id: dict[str, dict]) -> list[str]:
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

    def read_campaigns(self, value, matrices, matrix_ids, parts_by_id) -> dict[str, list[str]]:
        self.campaign_matrices: dict[str, list[str]] = {}
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
                    parts["population"] = self.resolve_population(parts["population"], sat)
                    parts_by_id[sid] = parts
                if sid not in members:
                    members.append(sid)
            if not members:
                self.bad(at, "no scenarios; allowed: a campaign with `matrices` and/or `scenarios`")
            out[cname] = members
        return out
