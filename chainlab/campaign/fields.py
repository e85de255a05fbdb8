"""The keys of a campaign file and their types (chainlab.schema), apart from those whose
values depend on the file itself (aliases, hierarchies, matrices), which the loader checks.
docs/campaigns.md is the reference for the format.
"""

from __future__ import annotations

import re

from chainlab.axes.stack import STACKS
from chainlab.network import profile as network_profile
from chainlab.schema import Bool, Int, Items, Num, Str

# Connection slots a load generator keeps open at most (the engines' limit; [load]
# max_in_flight, and what the runner sizes a step's slots to).
MAX_IN_FLIGHT = 4096
# A run's seed: the campaign's `seed` and `chainlab run --seed` alike (every engine's seed
# flag takes an unsigned 64-bit integer; the run's own stays in the signed range DuckDB keeps).
SEED_MAX = 2**63 - 1

# Top-level tables of a campaign file.
TOP_KEYS: tuple[str, ...] = ("campaign", "aliases", "hierarchies", "network", "sampling")
TOP_KEYS += ("matrix", "campaigns", "analysis", "load", "primitives", "targets", "cluster")
TOP_KEYS += ("clients", "measure")
ORDERS = ("random", "interleaved", "declared")
# A [matrix.*]'s keys besides its axes' (chainlab.axes.matrix_keys).
MATRIX_OTHER_KEYS = ("exclude", "description")
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
# [primitives] (docs/campaigns.md): the cost model's primitives, measured before the
# scenarios (chainlab.runner.primitives); defaults in campaign.model.PrimitivesPlan.
PRIMITIVES_FIELDS = {
    "measure": Bool(),
    "target_rel_halfwidth": Num(0.0, 0.5, lo_open=True),
    "confidence": Num(0.5, 0.999, lo_open=True),
    "time_cap_s": Num(0.0, 3600.0, lo_open=True),
}
# A campaign (or [campaigns.<name>]) name.
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
CAMPAIGN_FIELDS = {
    "name": Str(pattern=NAME_RE, what="a name of letters, digits, '.', '_', '-'"),
    "description": Str(),
    # TOML integers are signed 64-bit.
    "seed": Int(0, SEED_MAX),
    "order": Str(choices=ORDERS),
    "baseline": Str(what="a scenario id"),
    # An interop matrix: a scenario whose client stack cannot verify its chain runs anyway,
    # and its handshakes' failure categories are the result (docs/stacks.md, "Interop").
    "interop": Bool(),
}
# An [aliases] name, and a [network.<name>] name: words of scenario ids.
ALIAS_RE = re.compile(r"^[a-z][a-z0-9]*$")
NETWORK_NAME_RE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")

# A [targets.<name>] table (docs/campaigns.md): a TLS 1.3 server chainlab does not start.
# An address is host:port, the host a name or an address (IPv6 in brackets).
TARGET_ADDRESS_RE = re.compile(
    r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?):\d{1,5}$"
)
TARGET_FIELDS = {
    "address": Str(pattern=TARGET_ADDRESS_RE, what='host:port, e.g. "example.com:443"'),
    "servername": Str(what="a host name (SNI and the certificate's name check)"),
    "ca": Str(what="'system', 'none' or a PEM file of trust anchors"),
    "sigalgs": Str(what="signature schemes the client offers, colon-separated"),
    "description": Str(),
}

# [cluster] (docs/campaigns.md): the Dask scheduler whose workers run the scenarios.
# The port: 1 to 65535 (a scheduler at port 99999 had been accepted, the store written,
# then 30 s spent failing to connect).
_PORT = r"(6553[0-5]|655[0-2]\d|65[0-4]\d\d|6[0-4]\d{3}|[1-5]\d{4}|[1-9]\d{0,3})"
CLUSTER_ADDRESS_RE = re.compile(
    r"^(tcp|tls|ws|wss)://(\[[0-9a-fA-F:.]+\]|[^\s:/\[\]]+):" + _PORT + "$"
)
CLUSTER_ADDRESS = (
    "a Dask scheduler address: tcp://, tls://, ws:// or wss://, a host and a port (1 to "
    "65535), such as "
    '"tcp://10.0.0.5:8786"'
)
CLUSTER_FIELDS = {
    "address": Str(pattern=CLUSTER_ADDRESS_RE, what=CLUSTER_ADDRESS),
    # whole: a scenario's server and client on one worker host; split: on two.
    "placement": Str(choices=("whole", "split")),
}

# A CPU list as taskset takes it: "1", "0,2", "0-3".
CPU_LIST_RE = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")
_CPUS = Str(pattern=CPU_LIST_RE, what='a CPU list such as "0", "1", "0-3" or "0,2"')
# Defaults of [load] (docs/campaigns.md): the server on core 0, the generator on core 1.
LOAD_DEFAULTS = {
    "arrivals": "poisson",
    "step_s": 5.0,
    "capacity_s": 5.0,
    # None: each step's own, from its rate and the scenario's latency (chainlab.runner.load
    # in_flight): enough connection slots that a long path does not cap the offer.
    "max_in_flight": None,
    "server_cpus": "0",
    "generator_cpus": "1",
    # Event loops (one per server core, each serving many connections) make a capacity the
    # CPU's on any path; "threads" (a pool of blocking workers) is what the paper's server
    # did, and over a long round trip the pool, not the CPU, sets the pace.
    "server_model": "event",
    # None: one event loop per server CPU, or WORKERS_PER_CORE threads per server CPU. One
    # thread per core leaves the core idle while its connection waits for the client (a
    # loopback round trip, the client's verification).
    "server_workers": None,
    "warmup": 20,
    "verify": True,
    # None: the load generator is the scenario's client stack. The rustls client spends
    # ~0.4 ms per ML-DSA-65 handshake against OpenSSL's ~1.1 ms, so one generator core
    # offers more (chainlab bench load prints both).
    "generator_stack": None,
    # Bisection steps of the sustainable-rate search between half the overload throughput
    # and all of it (chainlab.runner.load): 3 place the sustainable rate within 1/16 of it.
    "search_steps": 3,
}
# [load]: exactly one of `rates` (attempts per second) and `fractions` (of the capacity the
# run measures first) says the offered loads.
LOAD_FIELDS = {
    "rates": Items(Num(0.0, 1_000_000.0, lo_open=True), what="an array of rates"),
    "fractions": Items(Num(0.0, 10.0, lo_open=True), what="an array of fractions"),
    "arrivals": Str(choices=("constant", "poisson")),
    "step_s": Num(0.0, 3600.0, lo_open=True),
    "capacity_s": Num(0.0, 3600.0, lo_open=True),
    "max_in_flight": Int(1, MAX_IN_FLIGHT),
    "server_cpus": _CPUS,
    "generator_cpus": _CPUS,
    "server_model": Str(choices=("event", "threads")),
    "server_workers": Int(1, 4096),
    "warmup": Int(0, 1_000_000),
    # false: the generator skips chain verification (more headroom; the server's work is
    # the same), recorded per attempt.
    "verify": Bool(),
    "generator_stack": Str(choices=STACKS),
    # 0: no search; `fractions` are then of the overload throughput.
    "search_steps": Int(0, 10),
}
# Server workers per server CPU when [load] names none: enough connections in progress to
# keep a core busy through the waits of each (measured: 1 worker kept its core 68 % busy at
# the ML-DSA-65 baseline's capacity step, 4 workers 89-99 %).
WORKERS_PER_CORE = 4
# A load step must hold about this many attempts to say anything about its percentiles.
MIN_STEP_ATTEMPTS = 100
