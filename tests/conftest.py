"""Shared fixtures: the bundled digest and a PostgreSQL URL when the machine has one."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from chatbot.digest.library import Library
from tests.fakeslack import FakeSlack

ROOT = Path(__file__).resolve().parent.parent
DIGESTS = ROOT / "digests"


@pytest.fixture(autouse=True)
def _cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """CACHE_DIR in the test's own folder: no test reads or writes the user's digest snapshots
    (a `serve` subprocess that copies the environment gets it too)."""
    monkeypatch.setenv("CACHE_DIR", str(tmp_path / "cache"))


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


# Database URLs for tests: a fresh SQLite file, or a fresh PostgreSQL schema dropped afterwards.
# Tests that take `db_url` run on both databases; the PostgreSQL half skips visibly when
# TEST_DATABASE_URL is unset.
def fresh_postgres_schema(base_url: str) -> tuple[str, str]:
    """(url whose search_path is a new empty schema, schema name)."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    engine = create_engine(base_url)
    with engine.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine.dispose()
    url = make_url(base_url).update_query_dict({"options": f"-csearch_path={schema}"})
    return url.render_as_string(hide_password=False), schema


def drop_postgres_schema(base_url: str, schema: str) -> None:
    engine = create_engine(base_url)
    with engine.begin() as conn:
        conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A DATABASE_URL nobody else uses: the test may create, race and break whatever it likes."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'bot.db'}"
        return
    base = request.getfixturevalue("postgres_url")
    url, schema = fresh_postgres_schema(base)
    try:
        yield url
    finally:
        drop_postgres_schema(base, schema)
