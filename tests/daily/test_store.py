"""The SQL store on SQLite and PostgreSQL: migrations, claims, thread registry, event dedup."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import threading
from pathlib import Path

from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, inspect

from chatbot.daily.picker import PastPost
from chatbot.store import ClaimOutcome, SqlStore
from chatbot.store.migrate import alembic_config, shipped_head

DAY = dt.date(2026, 9, 1)
NOW = dt.datetime(2026, 9, 1, 1, 30, tzinfo=dt.UTC)


def head_revision(engine: Engine) -> str | None:
    """The head as Alembic reads the scripts."""
    return ScriptDirectory.from_config(alembic_config(engine)).get_current_head()


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def never_stale(_post: object) -> bool:
    return False


def always_stale(_post: object) -> bool:
    return True


def test_migrations_create_the_tables_and_are_idempotent(db_url: str) -> None:
    store = SqlStore.open(db_url, upgrade=False)
    assert current_revision(store.engine) is None
    before, after = store.upgrade()
    assert (before, after) == (None, head_revision(store.engine))
    assert store.upgrade() == (after, after)
    tables = set(inspect(store.engine).get_table_names())
    assert {"daily_posts", "bot_threads", "handled_events", "alembic_version"} <= tables
    store.close()


def test_the_head_read_from_the_scripts_is_alembics(db_url: str) -> None:
    store = SqlStore.open(db_url, upgrade=False)
    assert shipped_head() is not None and shipped_head() == head_revision(store.engine)
    store.close()


def test_a_database_at_head_opens_without_importing_alembic(db_url: str) -> None:
    SqlStore.open(db_url).close()
    probe = (
        "import sys\n"
        "from chatbot.store import SqlStore\n"
        "print(SqlStore.open(sys.argv[1]).upgrade())\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'alembic', 'mako'}))\n"
    )
    run = subprocess.run([sys.executable, "-c", probe, db_url], capture_output=True, text=True, check=True)
    head = shipped_head()
    assert run.stdout.splitlines() == [str((head, head)), "[]"]


def test_an_older_database_is_upgraded_from_its_revision(db_url: str) -> None:
    from alembic import command

    store = SqlStore.open(db_url, upgrade=False)
    config = alembic_config(store.engine)
    with store.engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0002")
    assert "usage_searches" not in inspect(store.engine).get_table_names()
    assert store.upgrade() == ("0002", head_revision(store.engine))
    assert "usage_searches" in inspect(store.engine).get_table_names()
    store.close()


def write_scripts(folder: Path, lines: dict[str, str]) -> Path:
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    for name, body in lines.items():
        (folder / f"{name}.py").write_text(
            f'"""A revision."""\n\n{body}\n\n\ndef upgrade() -> None:\n    pass\n'
        )
    return folder


def test_scripts_that_are_not_one_line_of_revisions_leave_the_head_to_alembic(tmp_path: Path) -> None:
    line = {"a": 'revision = "a"\ndown_revision = None', "b": 'revision: str = "b"\ndown_revision = "a"'}
    assert shipped_head.__wrapped__(write_scripts(tmp_path / "line", line)) == "b"
    two_heads = {**line, "c": 'revision = "c"\ndown_revision = "a"'}
    assert shipped_head.__wrapped__(write_scripts(tmp_path / "two", two_heads)) is None
    merge = {**two_heads, "d": 'revision = "d"\ndown_revision = ("b", "c")'}
    assert shipped_head.__wrapped__(write_scripts(tmp_path / "merge", merge)) is None
    computed = {**line, "c": 'revision = "c"\ndown_revision = PARENT'}
    assert shipped_head.__wrapped__(write_scripts(tmp_path / "computed", computed)) is None
    missing_parent = {"b": 'revision = "b"\ndown_revision = "a"'}
    assert shipped_head.__wrapped__(write_scripts(tmp_path / "orphan", missing_parent)) is None


def test_db_upgrade_command_from_another_directory(db_url: str, tmp_path: Path) -> None:
    env = {
        "DATABASE_URL": db_url,
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    run = subprocess.run(
        [sys.executable, "-m", "chatbot.cli", "db", "upgrade"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    probe = SqlStore.open(db_url, upgrade=False)
    head = head_revision(probe.engine)
    probe.close()
    assert f"database at revision {head} (was empty)" in run.stdout
    again = subprocess.run(
        [sys.executable, "-m", "chatbot.cli", "db", "upgrade"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert "(up to date)" in again.stdout


def test_concurrent_upgrades_apply_once(db_url: str) -> None:
    stores = [SqlStore.open(db_url, upgrade=False) for _ in range(4)]
    errors: list[BaseException] = []

    def upgrade(store: SqlStore) -> None:
        try:
            store.upgrade()
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=upgrade, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert current_revision(stores[0].engine) == head_revision(stores[0].engine)
    for s in stores:
        s.close()


def test_one_claim_wins_then_posted_then_history(db_url: str) -> None:
    store = SqlStore.open(db_url)
    first = store.claim("C1", DAY, "e1", "host:1:a", now=NOW, is_stale=never_stale)
    second = store.claim("C1", DAY, "e2", "host:2:b", now=NOW, is_stale=never_stale)
    assert first.outcome is ClaimOutcome.CLAIMED
    assert second.outcome is ClaimOutcome.BUSY and second.post.owner == "host:1:a"
    assert store.history("C1") == []  # claimed is not posted
    assert store.record_posted("C1", DAY, "host:1:a", "1700000000.000100", now=NOW)
    third = store.claim("C1", DAY, "e3", "host:3:c", now=NOW, is_stale=always_stale)
    assert third.outcome is ClaimOutcome.POSTED
    assert third.post.entry_id == "e1" and third.post.message_ts == "1700000000.000100"
    assert third.post.claimed_at == NOW and third.post.posted_at == NOW
    assert store.history("C1") == [PastPost(DAY, "e1")]
    assert store.history("C2") == []
    store.close()


def test_release_lets_a_later_run_claim_again(db_url: str) -> None:
    store = SqlStore.open(db_url)
    store.claim("C1", DAY, "e1", "host:1:a", now=NOW, is_stale=never_stale)
    assert not store.release("C1", DAY, "host:9:z")  # only the owner releases
    assert store.release("C1", DAY, "host:1:a")
    again = store.claim("C1", DAY, "e1", "host:2:b", now=NOW, is_stale=never_stale)
    assert again.outcome is ClaimOutcome.CLAIMED
    store.close()


def test_stale_claim_is_taken_over_once_keeping_its_entry(db_url: str) -> None:
    store = SqlStore.open(db_url)
    store.claim("C1", DAY, "e1", "host:1:dead", now=NOW, is_stale=never_stale)
    later = NOW + dt.timedelta(minutes=20)
    taken = store.claim("C1", DAY, "e9", "host:2:b", now=later, is_stale=always_stale)
    assert taken.outcome is ClaimOutcome.TAKEN_OVER
    assert taken.post.owner == "host:2:b" and taken.post.entry_id == "e1" and taken.post.claimed_at == later
    assert not store.record_posted("C1", DAY, "host:1:dead", "1.0", now=later)  # the old owner lost it
    store.close()


def test_two_takers_of_one_stale_claim_one_wins(db_url: str) -> None:
    """Both takers read the stale row before either writes (they meet in `is_stale`); the
    compare-and-set on the old owner lets exactly one take it over."""
    setup = SqlStore.open(db_url)
    setup.claim("C1", DAY, "e1", "host:1:dead", now=NOW, is_stale=never_stale)
    later = NOW + dt.timedelta(minutes=20)
    takers = ["host:2:b", "host:3:c"]
    stores = [SqlStore.open(db_url) for _ in takers]
    both_read = threading.Barrier(len(takers), timeout=10)
    outcomes: dict[str, ClaimOutcome] = {}

    def stale_once_both_read(_post: object) -> bool:
        both_read.wait()
        return True

    def take(store: SqlStore, owner: str) -> None:
        outcomes[owner] = store.claim(
            "C1", DAY, "e9", owner, now=later, is_stale=stale_once_both_read
        ).outcome

    threads = [threading.Thread(target=take, args=pair) for pair in zip(stores, takers, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    row = setup.daily_post("C1", DAY)
    assert row is not None
    winner = row.owner
    assert winner in takers
    assert outcomes == {
        owner: ClaimOutcome.TAKEN_OVER if owner == winner else ClaimOutcome.BUSY for owner in takers
    }
    loser = next(owner for owner in takers if owner != winner)
    assert not setup.record_posted("C1", DAY, loser, "2.0", now=later)
    assert setup.record_posted("C1", DAY, winner, "1.0", now=later)
    for store in [setup, *stores]:
        store.close()


def test_thread_registry(db_url: str) -> None:
    store = SqlStore.open(db_url)
    assert store.entry_for("C1", "1.0") is None
    store.register("C1", "1.0", "e1")
    store.register("C1", "1.0", "e2")  # first registration wins; no error
    store.register("C2", "1.0", "e3")
    assert store.entry_for("C1", "1.0") == "e1"
    assert store.entry_for("C2", "1.0") == "e3"
    assert store.entry_for("C1", "2.0") is None
    store.close()


def test_events_are_handled_once_across_store_instances(db_url: str) -> None:
    one, two = SqlStore.open(db_url), SqlStore.open(db_url)
    assert two.mark_handled("message:C1:1.5")
    assert not one.mark_handled("message:C1:1.5")
    assert one.mark_handled("message:C2:1.5")
    assert one.mark_handled("message:C1:1.6")
    assert one.prune_handled_events(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1)) == 3
    assert one.mark_handled("message:C1:1.5")
    one.close()
    two.close()


def test_racing_event_marks_one_winner(db_url: str) -> None:
    stores = [SqlStore.open(db_url) for _ in range(6)]
    wins: list[bool] = []
    barrier = threading.Barrier(len(stores))

    def mark(store: SqlStore) -> None:
        barrier.wait()
        wins.append(store.mark_handled("message:C1:9.9"))

    threads = [threading.Thread(target=mark, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(wins) == [False] * 5 + [True]
    for s in stores:
        s.close()
