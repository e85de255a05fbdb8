"""Settings every test shares."""

import contextlib
import os

import pytest


@contextlib.contextmanager
def environment(name: str, value: str):
    """`name` set to `value` in the environment (and so in subprocesses) while inside."""
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


@pytest.fixture(scope="session", autouse=True)
def primitives_cache(tmp_path_factory):
    """The cost model's primitives cache of this test session (never the user's): the first
    campaign a test runs measures its primitives, later ones take them from here. Set in the
    environment, so `chainlab` subprocesses use it too."""
    d = tmp_path_factory.mktemp("primitives-cache")
    with environment("CHAINLAB_PRIMITIVES_CACHE", str(d)):
        yield d
