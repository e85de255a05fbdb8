"""Settings every test shares."""

import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def primitives_cache(tmp_path_factory):
    """The cost model's primitives cache of this test session (never the user's): the first
    campaign a test runs measures its primitives, later ones take them from here. Set in the
    environment, so `chainlab` subprocesses use it too."""
    d = tmp_path_factory.mktemp("primitives-cache")
    old = os.environ.get("CHAINLAB_PRIMITIVES_CACHE")
    os.environ["CHAINLAB_PRIMITIVES_CACHE"] = str(d)
    yield d
    if old is None:
        os.environ.pop("CHAINLAB_PRIMITIVES_CACHE", None)
    else:
        os.environ["CHAINLAB_PRIMITIVES_CACHE"] = old
