"""Database URLs for tests: a fresh SQLite file, or a fresh PostgreSQL schema dropped afterwards.

Tests that take `db_url` run on both databases; the PostgreSQL half skips visibly when
TEST_DATABASE_URL is unset (see tests/conftest.postgres_url).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url


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
