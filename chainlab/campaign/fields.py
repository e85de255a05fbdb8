"""The keys of a campaign file and their types (chainlab.schema), apart from those whose
values depend on the file itself (aliases, hierarchies, matrices), which the loader checks.
docs/campaigns.md is the reference for the format.
"""

from __future__ import annotations

import re

from chainlab.campaign.matrix import MATRIX_AXES
from chainlab.network import profile as network_profile
from chainlab.schema import Int, Num, Str

# Top-level tables of a campaign file.
TOP_KEYS = ("campaign", "aliases", "hierarchies", "network", "sampling", "matrix", "campaigns")
TOP_KEYS += ("analysis",)
ORDERS = ("random", "interleaved", "declared")
MATRIX_KEYS = (*MATRIX_AXES, "exclude", "description")
CAMPAIGNS_KEYS = ("description", "matrices", "scenarios")
# A [network.<name>] table: the link's own fields, less the name (the table's name is).
NETWORK_FIELDS = {k: v for k, v in network_profile.FIELDS.items() if k != "name"}
# Defaults of [sampling]; docs/sampling.md explains each.
SAMPLING_DEFAULTS = {
    "mode": "adaptive",
    "count": 1000,
    "target_rel_halfwidth": 0.01,
    "confidence": 0.95,
    "min": 100,
    "max": 10000,
    "time_cap_s": 300.0,
    "warmup": 10,
    "batch_warmup": 1,
    "timeout_ms": 10000,
    "max_failed_fraction": 0.5,
}
# Types and ranges of [sampling] and [[sampling.override]] keys.
SAMPLING_FIELDS = {
    "mode": Str(choices=("fixed", "adaptive")),
    "count": Int(1, 10_000_000),
    "target_rel_halfwidth": Num(0.0, 0.5, lo_open=True),
    "confidence": Num(0.5, 0.999, lo_open=True),
    "min": Int(1, 10_000_000),
    "max": Int(1, 10_000_000),
    "time_cap_s": Num(0.0, 7 * 86400.0, lo_open=True),
    "warmup": Int(0, 1_000_000),
    "batch_warmup": Int(0, 1_000_000),
    "timeout_ms": Int(1, 3_600_000),
    "max_failed_fraction": Num(0.0, 1.0),
}
# A campaign (or [campaigns.<name>]) name.
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
CAMPAIGN_FIELDS = {
    "name": Str(pattern=NAME_RE, what="a name of letters, digits, '.', '_', '-'"),
    "description": Str(),
    # TOML integers are signed 64-bit.
    "seed": Int(0, 2**63 - 1),
    "order": Str(choices=ORDERS),
    "baseline": Str(what="a scenario id"),
}
# An [aliases] name, and a [network.<name>] name: words of scenario ids.
ALIAS_RE = re.compile(r"^[a-z][a-z0-9]*$")
NETWORK_NAME_RE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
