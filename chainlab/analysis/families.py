"""Algorithm families, where the heavy family sits in a hierarchy, and short scenario labels.

Families are the engine's table's (`chainlab.axes.algorithms`: ml-dsa, slh-dsa, ecdsa,
ed-dsa, rsa, and liboqs' falcon, mayo, uov, cross); a name the table lacks (another engine's,
e.g. Ed448 from a probed server) is read by its prefix.
"""

from __future__ import annotations

import pandas as pd

from chainlab import axes
from chainlab.axes.algorithms import ALGORITHM_FAMILY, NO_CLIENT_AUTH

FAMILY_DISPLAY = {
    "ml-dsa": "ML-DSA",
    "slh-dsa": "SLH-DSA",
    "ecdsa": "ECDSA",
    "ed-dsa": "EdDSA",
    "rsa": "RSA",
    "falcon": "Falcon",
    "mayo": "MAYO",
    "uov": "UOV",
    "cross": "CROSS",
    "composite": "composite ML-DSA",
}
FAMILY_SHORT: dict[str | None, str] = {
    "ml-dsa": "ML",
    "slh-dsa": "SLH",
    "ecdsa": "EC",
    "ed-dsa": "Ed",
    "rsa": "RSA",
    "falcon": "FN",
    "mayo": "MAYO",
    "uov": "UOV",
    "cross": "CROSS",
    "composite": "COMP",
}
_BY_NAME = {name.upper(): fam for name, fam in ALGORITHM_FAMILY.items()}

# Positions from the top of a hierarchy down; depth 1 has only a self-signed leaf.
POSITIONS = ("root", "int1", "int2", "leaf")

# Exclusive placement classes (every scenario has exactly one), in display order; the colour
# of each is fixed so every figure uses the same one (Okabe & Ito colour-blind-safe set).
PLACEMENT_CLASSES = ("none", "root", "intermediate", "leaf")
PLACEMENT_COLOURS = {
    "none": "#0072B2",
    "root": "#009E73",
    "intermediate": "#E69F00",
    "leaf": "#D55E00",
    "failed": "#999999",
}

# The paper's Table 7 groups (overlapping: a scenario with the heavy family in an
# intermediate and in the leaf belongs to both 'intermediate_any' and 'leaf').
TABLE7_GROUPS = ("none", "root_leaf_not_heavy", "intermediate_any", "leaf")


def family(algorithm: str | None) -> str | None:
    """The family of an algorithm name, or None for no algorithm; unknown names -> 'other'."""
    if algorithm is None or (isinstance(algorithm, float) and pd.isna(algorithm)):
        return None
    a = str(algorithm).strip().upper()
    if a in _BY_NAME:
        return _BY_NAME[a]
    if a.startswith("ML-DSA"):
        return "ml-dsa"
    if a.startswith("SLH-DSA"):
        return "slh-dsa"
    if a.startswith("ECDSA"):
        return "ecdsa"
    if a in ("ED25519", "ED448"):
        return "ed-dsa"
    if a.startswith("RSA"):
        return "rsa"
    return "other"


def positions(row) -> dict[str, str | None]:
    """Algorithm per hierarchy position of a scenario row (None where the depth has none)."""
    depth = int(row["depth"])
    out: dict[str, str | None] = {p: None for p in POSITIONS}
    out["leaf"] = row["leaf_alg"]
    if depth >= 2:
        out["root"] = row["root_alg"]
    if depth >= 3:
        out["int1"] = row["int1_alg"]
    if depth >= 4:
        out["int2"] = row["int2_alg"]
    return out


def heavy_positions(row, heavy: str) -> list[str]:
    """Positions whose algorithm belongs to the heavy family, top-down."""
    pos = positions(row)
    return [p for p in POSITIONS if pos[p] is not None and family(pos[p]) == heavy]


def placement_class(row, heavy: str) -> str:
    """Exclusive class: 'leaf' if the leaf is heavy, else 'intermediate' if an intermediate
    is, else 'root' if the root is, else 'none'."""
    hp = heavy_positions(row, heavy)
    if "leaf" in hp:
        return "leaf"
    if "int1" in hp or "int2" in hp:
        return "intermediate"
    if "root" in hp:
        return "root"
    return "none"


def table7_groups(row, heavy: str) -> list[str]:
    """The paper's Table 7 groups a scenario belongs to (possibly two)."""
    hp = heavy_positions(row, heavy)
    groups = []
    if not hp:
        groups.append("none")
    if "root" in hp and "leaf" not in hp:
        groups.append("root_leaf_not_heavy")
    if "int1" in hp or "int2" in hp:
        groups.append("intermediate_any")
    if "leaf" in hp:
        groups.append("leaf")
    return groups


def class_display(cls: str, heavy: str) -> str:
    """Human name of an exclusive class or Table 7 group, for the heavy family."""
    h = FAMILY_DISPLAY.get(heavy, heavy)
    return {
        "none": f"no {h}",
        "root": f"{h} in root only",
        "intermediate": f"{h} in an intermediate (leaf not {h})",
        "leaf": f"{h} in leaf",
        "root_leaf_not_heavy": f"{h} in root, leaf not {h}",
        "intermediate_any": f"{h} in any intermediate",
        "failed": "failed",
    }.get(cls, cls)


def hierarchy_label(row) -> str:
    """'SLH root / ML int / ML leaf' in the paper's style (families per position)."""
    pos = positions(row)
    names = {"root": "root", "int1": "int", "int2": "int2", "leaf": "leaf"}
    parts = []
    for p in POSITIONS:
        if pos[p] is not None:
            parts.append(f"{FAMILY_SHORT.get(family(pos[p]), pos[p])} {names[p]}")
    if int(row["depth"]) == 1:
        parts = [parts[0] + " (self-signed)"]
    return " / ".join(parts)


def short_algorithm(name: str | None, slh_hash_varies: bool) -> str:
    """Compact algorithm name for plot labels: ML65, SLH192s (SLH-SHA2-128f when the hash
    family varies within the store), P256, Ed25519, RSA2048."""
    if name is None:
        return "-"
    a = str(name)
    up = a.upper()
    if up.startswith("ML-DSA-"):
        return "ML" + a[7:]
    if up.startswith("SLH-DSA-"):
        rest = a[8:]  # SHAKE-192s / SHA2-128f
        hash_name, _, size = rest.partition("-")
        return f"SLH-{hash_name}-{size}" if slh_hash_varies else f"SLH{size}"
    if up.startswith("ECDSA-"):
        return a[6:]
    if up.startswith("RSA-"):
        return "RSA" + a[4:]
    return a


def scenario_labels(scen: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """Two-line labels per scenario id: (hierarchy, key exchange + whatever else varies).

    Only axes that vary within the store are shown, so labels stay short: a store measured
    entirely on loopback never says 'loopback'. Labels are made unique with '#2', '#3'.
    """
    algs = pd.concat([scen[c] for c in ("root_alg", "int1_alg", "int2_alg", "leaf_alg")])
    slh = {str(a).split("-")[2] for a in algs.dropna() if str(a).upper().startswith("SLH-DSA-")}
    slh_varies = len(slh) > 1
    # The levers (chainlab.axes) and the network, each named where it varies.
    named = [*axes.levers(), axes.NETWORK]
    varies = {
        a.key: any(c in scen and scen[c].nunique(dropna=False) > 1 for c in a.column_names)
        for a in named
    }
    labels: dict[str, tuple[str, str]] = {}
    seen: dict[tuple[str, str], int] = {}
    for _, row in scen.iterrows():
        pos = positions(row)
        chain = " › ".join(
            short_algorithm(pos[p], slh_varies) for p in POSITIONS if pos[p] is not None
        )
        if int(row["depth"]) == 1:
            chain += " (self-signed)"
        extra = [str(row["kex"])]
        for a in named:
            if not varies[a.key]:
                continue
            if a is axes.CLIENT_AUTH:
                # The client's leaf, named as the server chain's algorithms are.
                client = str(row["client_auth"])
                extra.append(
                    "no client cert"
                    if client == NO_CLIENT_AUTH
                    else f"client {short_algorithm(client.split(',')[-1], slh_varies)}"
                )
            else:
                extra.append(a.label_of(*(row.get(c) for c in a.column_names)))
        second = " · ".join(extra)
        key = (chain, second)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            second += f" #{seen[key]}"
        labels[row["scenario_id"]] = (chain, second)
    return labels
