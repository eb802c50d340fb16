"""Shared fixtures: the bundled digest and a PostgreSQL URL when the machine has one."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from chatbot.library import Library
from tests.fakeslack import FakeSlack

ROOT = Path(__file__).resolve().parent.parent
DIGESTS = ROOT / "digests"


@pytest.fixture(scope="session")
def seed_library() -> Library:
    return Library.load(DIGESTS)


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The PostgreSQL URL `.ci/run` exports; tests that need it skip visibly elsewhere."""
    url = os.environ.get("TEST_DATABASE_URL")
    if not url:
        pytest.skip("TEST_DATABASE_URL is not set (run .ci/run for the PostgreSQL tests)")
    return url


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    """A fake Slack Web API on a loopback port (see tests/fakeslack.py)."""
    with FakeSlack() as fake:
        yield fake
