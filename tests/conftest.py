"""Shared fixtures of the project's own tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def private_verify_cache(tmp_path_factory, monkeypatch):
    """.ci/run exports VERIFY_CACHE_DIR (the verdicts CI keeps between clones): the fixture repositories these
    tests build and verify must not leave their entries there."""
    monkeypatch.setenv("VERIFY_CACHE_DIR", str(tmp_path_factory.mktemp("verify-cache")))


@pytest.fixture
def run_notebooks(tmp_path):
    """Run notebooks through the real Runner with a private cache; returns results by name."""
    from verify.cache import Cache
    from verify.runner import RunOptions, Runner

    def run(*paths, refresh=False, timeout=60, use_cache=False, jobs=2, probe=None):
        runner = Runner(RunOptions(timeout=timeout, jobs=jobs, refresh=refresh, use_cache=use_cache, probe=probe),
                        cache=Cache(tmp_path / "cache"))
        results = runner.run([Path(p) for p in paths])
        return {Path(r.path).stem: r for r in results}

    return run


def pytest_collection_modifyitems(config, items):
    """After ./dev setup the default run needs no network: tests marked `network` run only with VERIFY_NETWORK=1
    (CI sets it; see README, 浏览器测试 / 离线)."""
    if os.environ.get("VERIFY_NETWORK") == "1":
        return
    skip = pytest.mark.skip(reason="needs the network (package index / npm registry); VERIFY_NETWORK=1 runs it")
    for item in items:
        if "network" in item.keywords:
            item.add_marker(skip)
