"""Database faults: every command that opens the store fails in one line naming DATABASE_URL
(password masked) within seconds; during an outage the server is unready and a reply it could
not handle is held until the database is back."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import make_url

from chatbot.slack.server import HttpServer, asgi_app
from chatbot.store import SqlStore
from chatbot.wiring import build
from tests.fakeslack import FakeSlack
from tests.slackrequests import all_text, command_body, event_body, post
from tests.test_slack_http import settings_for

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "hunter2-secret"
COMMANDS = [["serve", "--port", "0"], ["post-today"], ["today"], ["db", "upgrade"]]


def run_cli(args: list[str], db_url: str, fake: FakeSlack, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(ROOT),
        "DATABASE_URL": db_url,
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": "s3cr3t",
        "SLACK_API_URL": fake.api_url,
        "DAILY_CHANNELS": "C0DAILY",
    }
    return subprocess.run(
        [sys.executable, "-m", "chatbot.cli", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=40,
    )


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port whose kernel accepts connections that nobody ever answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield int(listener.getsockname()[1])


def assert_one_line(result: subprocess.CompletedProcess[str], *words: str) -> None:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode not in (0, None), result
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("vllm-digest: setting DATABASE_URL") and "Traceback" not in result.stderr
    assert PASSWORD not in result.stderr + result.stdout
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_a_closed_port_is_one_line(command: list[str], fake_slack: FakeSlack, tmp_path: Path) -> None:
    url = f"postgresql+psycopg://bot:{PASSWORD}@127.0.0.1:{closed_port()}/digest"
    assert_one_line(run_cli(command, url, fake_slack, tmp_path), "bot:***@127.0.0.1")
    assert [c.method for c in fake_slack.calls() if c.method == "chat.postMessage"] == []


@pytest.mark.parametrize("command", [COMMANDS[0], COMMANDS[3]], ids=["serve", "db"])
def test_a_port_that_never_answers_times_out(
    command: list[str], silent_port: int, fake_slack: FakeSlack, tmp_path: Path
) -> None:
    url = f"postgresql+psycopg://bot:{PASSWORD}@127.0.0.1:{silent_port}/digest"
    assert_one_line(run_cli(command, url, fake_slack, tmp_path), "timeout")


@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_unusable_sqlite_paths_are_one_line(
    command: list[str], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    (tmp_path / "adir.db").mkdir()
    for url in (f"sqlite:///{tmp_path / 'adir.db'}", "sqlite:////dev/null/x.db"):
        result = run_cli(command, url, fake_slack, tmp_path)
        assert_one_line(result)
        assert "Slack" not in result.stderr


def test_a_missing_postgres_database_is_one_line(
    postgres_url: str, fake_slack: FakeSlack, tmp_path: Path
) -> None:
    url = make_url(postgres_url).set(database="no_such_database_here", password=PASSWORD)
    for command in COMMANDS:
        result = run_cli(command, url.render_as_string(hide_password=False), fake_slack, tmp_path)
        assert_one_line(result, "no_such_database_here")


class TcpProxy:
    """A loopback TCP forwarder to a real server; `cut()` is an outage (connections drop, new
    ones are refused)."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.sockets: list[socket.socket] = []
        self.down = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.down:
                client.close()
                return
            upstream = socket.create_connection(self.target)
            self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        self.down = True
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        self.listener.close()
        for s in self.sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)


def test_an_outage_makes_the_server_unready_and_a_reply_is_held(
    db_url: str, fake_slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    if db_url.startswith("sqlite"):
        pytest.skip("an outage needs a database server (PostgreSQL half)")
    url = make_url(db_url)
    proxy = TcpProxy(url.host or "127.0.0.1", url.port or 5432)
    proxied = url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    store = SqlStore.open(proxied)
    bot = build(settings_for(fake_slack), store=store)
    server = HttpServer(asgi_app(bot.app, bot.health, ready=bot.readiness), host="127.0.0.1", port=0).start()
    base = f"http://127.0.0.1:{server.port}"
    try:
        assert httpx.get(f"{base}/readyz").json() == {"ok": True, "library": "ok", "store": "ok"}
        proxy.cut()
        caplog.set_level(logging.INFO)
        for path in ("/readyz", "/healthz"):
            unready = httpx.get(f"{base}{path}", timeout=30)
            assert unready.status_code == 503
            assert unready.json()["ok"] is False and "DATABASE_URL" in unready.json()["store"]
        live = httpx.get(f"{base}/livez")
        assert live.status_code == 200 and live.json() == {"ok": True}

        reply = event_body(
            {
                "type": "message",
                "channel": "C0OUT",
                "user": "U0HUMAN",
                "text": "有什么风险？",
                "ts": "1.000001",
                "thread_ts": "1.000000",
            }
        )
        assert post(f"{base}/slack/events", reply).status_code == 200
        # Acknowledged, and held until the database is back (tests/test_outage.py), not lost.
        assert bot.outage is not None and bot.outage.wait_held(1, timeout=30)
        held = [r.getMessage() for r in caplog.records if r.name == "chatbot.store.outage"]
        assert len(held) == 1 and "holding the message C0OUT 1.000001" in held[0], held
        assert not [r for r in caplog.records if "lost a message" in r.getMessage()]
        # A command still gets its answer: the replay check fails open during the outage.
        answer = post(f"{base}/slack/events", command_body("compile", fake_slack.response_url("out")))
        assert answer.status_code == 200 and "DeepStack" in all_text(answer.json())
    finally:
        server.stop()
        bot.close()


def test_a_sqlite_file_another_process_locked_still_gets_commands_answered_in_time(
    tmp_path: Path, fake_slack: FakeSlack, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The replay check on the ack path waited SQLite's busy timeout (30 s; Slack gives an ack
    3 s), so did /readyz, and each batch of usage rows it could not write logged a traceback. The busy timeout is
    cut to 5 s so that the writes the lock holds up give up within the test."""
    monkeypatch.setattr("chatbot.store.engine.SQLITE_BUSY_TIMEOUT_MS", 5_000)
    path = tmp_path / "bot.db"
    bot = build(settings_for(fake_slack), store=SqlStore.open(f"sqlite:///{path}"))
    server = HttpServer(asgi_app(bot.app, bot.health, ready=bot.readiness), host="127.0.0.1", port=0).start()
    base = f"http://127.0.0.1:{server.port}"
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN EXCLUSIVE")  # another process holds the file: every statement waits
        caplog.set_level(logging.INFO)
        started = time.monotonic()
        answer = post(
            f"{base}/slack/events", command_body("compile", fake_slack.response_url("l")), timeout=40
        )
        assert time.monotonic() - started < 3.0
        assert answer.status_code == 200 and "DeepStack" in all_text(answer.json())
        # /readyz waited the busy timeout too; now it says unready within its 2 s.
        started = time.monotonic()
        unready = httpx.get(f"{base}/readyz", timeout=40)
        assert time.monotonic() - started < 3.0
        assert unready.status_code == 503
        assert unready.json()["store"].endswith("the database gave no answer within 2 s")
        assert bot.wait_idle(60)
        replay = [r.getMessage() for r in caplog.records if r.name == "chatbot.slack.ledger"]
        assert replay == [
            "could not check for a replay (LedgerTimeout): the database gave no answer within 0.5 s"
        ]
        usage = [r for r in caplog.records if r.name == "chatbot.usage.recorder"]
        assert usage and all(r.exc_info is None and "database is locked" in r.getMessage() for r in usage)
    finally:
        other.close()
        server.stop()
        bot.close()
