"""chainlab: a reproducible laboratory for post-quantum TLS 1.3 certificate hierarchies.

The Python front end: campaign files, orchestration of the Rust engine, the result store,
analysis and reports. `chainlab.open(path)` gives a store's tables as pandas DataFrames.
"""

__version__ = "0.1.0"


def open(path):  # noqa: A001 - the public API name the docs promise
    """Open a result store read-only; see `chainlab.store.Store` for its tables."""
    # Deferred: every `chainlab` command imports this package, most never open a store.
    from chainlab.store import Store

    return Store.open(path, read_only=True)
