"""`serve` is ready fast: the digest snapshot in CACHE_DIR, and honest readiness while loading.

The snapshot tests load a real copy of the bundled digests twice (a real pickle file in a real
cache folder); the readiness tests run the real HTTP server with signed requests against the
fake Slack, the load held back by the library's own lock; the last test runs `vllm-digest
serve` twice as a process.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from chatbot.bot import Bot
from chatbot.digest import Library
from chatbot.live import LiveIndex
from chatbot.slack.server import HttpServer, Starting, asgi_app
from chatbot.snapshot import Key, Snapshots
from chatbot.wiring import build
from tests.fakeslack import FakeSlack
from tests.slackrequests import (
    SIGNING_SECRET,
    button_body,
    command_body,
    event_body,
    post,
    shortcut_body,
    wait_ready,
)
from tests.test_slack_http import settings_for

ROOT = Path(__file__).resolve().parent.parent
DIGESTS = ROOT / "digests"
QUERIES = ["compile", "投机解码", "spec decode", "moe kernel", "DeepSeek", "#53529", "cuda graph"]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A copy of the bundled digests the test may edit."""
    return Path(shutil.copytree(DIGESTS, tmp_path / "digests"))


def results(live: LiveIndex) -> list[list[tuple[str, float]]]:
    return [[(hit.entry.id, hit.score) for hit in live.search(q, limit=10).hits] for q in QUERIES]


def snapshot_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "chatbot.snapshot"]


def test_a_second_load_reuses_the_snapshot_and_answers_the_same(
    folder: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    snapshots = Snapshots(tmp_path / "cache", folder)
    first = LiveIndex(Library(folder), snapshots=snapshots)
    assert first.loaded_from == "digest files" and snapshots.path.is_file()
    second = LiveIndex(Library(folder), snapshots=snapshots)
    assert second.loaded_from == "snapshot"
    assert len(second.library) == len(first.library) > 0
    assert [e.model_dump() for e in second.library] == [e.model_dump() for e in first.library]
    assert results(second) == results(first) and any(results(first))
    assert second.library.get("53529") == first.library.get("53529") is not None
    # The snapshot keeps the per-file parses: an edit re-parses that file and reloads.
    parses = dict(second.library._parsed)
    assert parses.keys() == first.library._parsed.keys() and len(parses) > 1
    digest = sorted(folder.glob("*.txt"))[0]
    title = next(e.title for e in second.library if e.source.startswith(str(digest)))
    digest.write_text(
        digest.read_text(encoding="utf-8").replace(title, "Snapshot 测试标题"), encoding="utf-8"
    )
    assert second.wait_reloaded() and second.generation == 2
    assert second.search("Snapshot 测试标题").hits[0].entry.title == "Snapshot 测试标题"
    reused = [path for path, parse in second.library._parsed.items() if parse is parses.get(path)]
    assert sorted(reused) == sorted(path for path in parses if path != digest)


def test_digest_problems_are_logged_on_every_start_also_from_the_snapshot(
    folder: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A broken file stayed silent from the second start on: the snapshot path logged nothing."""
    (folder / "broken.yaml").write_text("entries:\n  - title: [unclosed\n", encoding="utf-8")
    (folder / "glossary.yaml").write_text("concepts: {oops: [\n", encoding="utf-8")
    snapshots = Snapshots(tmp_path / "cache", folder)
    logged: list[list[str]] = []
    for _ in range(2):
        caplog.clear()
        caplog.set_level(logging.WARNING, logger="chatbot.live")
        live = LiveIndex(Library(folder), snapshots=snapshots)
        logged.append([r.getMessage() for r in caplog.records if r.name == "chatbot.live"])
    assert live.loaded_from == "snapshot"
    assert logged[0] == logged[1]
    assert any("broken.yaml:" in line for line in logged[1]), logged
    assert any("glossary.yaml:" in line for line in logged[1]), logged


def test_an_edited_digest_file_invalidates_the_snapshot(
    folder: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    snapshots = Snapshots(tmp_path / "cache", folder)
    LiveIndex(Library(folder), snapshots=snapshots)
    digest = sorted(folder.glob("*.txt"))[0]
    before = digest.stat()
    text = digest.read_text(encoding="utf-8")
    # Same size and mtime, other bytes: only the content hash can tell.
    swapped = text.replace("PR", "pr", 1)
    assert swapped != text and len(swapped.encode()) == before.st_size
    digest.write_text(swapped, encoding="utf-8")
    os.utime(digest, ns=(before.st_atime_ns, before.st_mtime_ns))
    caplog.set_level(logging.INFO)
    again = LiveIndex(Library(folder), snapshots=snapshots)
    assert again.loaded_from == "digest files"
    assert any("is stale" in line for line in snapshot_lines(caplog))
    assert LiveIndex(Library(folder), snapshots=snapshots).loaded_from == "snapshot"  # the new one


def test_a_snapshot_of_other_code_is_not_used(folder: Path, tmp_path: Path) -> None:
    snapshots = Snapshots(tmp_path / "cache", folder)
    live = LiveIndex(Library(folder), snapshots=snapshots)
    key = Key.of(folder)
    assert snapshots.load(key, Library(folder)) is not None
    other = Key("another code version", key.folder, key.files)
    assert snapshots.load(other, Library(folder)) is None
    assert snapshots.save(key, live.library, live.current())


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
def test_a_corrupt_snapshot_is_rebuilt_with_one_log_line(
    damage: str, folder: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    snapshots = Snapshots(tmp_path / "cache", folder)
    expected = results(LiveIndex(Library(folder), snapshots=snapshots))
    data = snapshots.path.read_bytes()
    damaged = {"truncated": data[: len(data) // 2], "garbage": b"\x80\x05not a pickle", "empty": b""}
    snapshots.path.write_bytes(damaged[damage])
    caplog.set_level(logging.INFO)
    rebuilt = LiveIndex(Library(folder), snapshots=snapshots)
    assert rebuilt.loaded_from == "digest files" and results(rebuilt) == expected
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "ignoring the unreadable digest snapshot" in warnings[0].getMessage()
    assert LiveIndex(Library(folder), snapshots=snapshots).loaded_from == "snapshot"


def test_an_unwritable_cache_is_one_line_and_the_bot_still_loads(
    folder: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    live = LiveIndex(Library(folder), snapshots=Snapshots(blocked / "cache", folder))
    assert live.state() == "ok" and len(live.library) > 0
    assert [e.id for e in live.library.entries] == [e.id for e in Library.load(folder).entries]
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and warnings[0].startswith("cannot write the digest snapshot"), warnings


# -- readiness while loading ------------------------------------------------------------------


class Loading:
    """A bot whose digests are still loading (its library's lock is held) behind the real server."""

    def __init__(self, fake: FakeSlack, language: str) -> None:
        self.bot: Bot = build(settings_for(fake, language), load=False)
        self.server = HttpServer(
            asgi_app(self.bot.app, self.bot.health, ready=self.bot.readiness), host="127.0.0.1", port=0
        ).start()
        self.base = f"http://127.0.0.1:{self.server.port}"
        self.fake = fake

    def stop(self) -> None:
        self.server.stop()
        self.bot.close()


@pytest.fixture(params=["zh", "en"])
def loading(request: pytest.FixtureRequest, fake_slack: FakeSlack) -> Iterator[Loading]:
    served = Loading(fake_slack, request.param)
    yield served
    served.stop()


WAIT = {"zh": "正在加载 digest，请过几秒再试", "en": "Still loading the digests, try again in a few seconds"}


def test_not_ready_until_loaded_and_asking_meanwhile_gets_a_polite_answer(loading: Loading) -> None:
    bot, base, fake = loading.bot, loading.base, loading.fake
    lang = bot.settings.channel_language
    with bot.library._lock:  # the load waits here, inside Library.refresh
        bot.start()
        assert httpx.get(f"{base}/livez").json() == {"ok": True}
        for path in ("/readyz", "/healthz"):
            unready = httpx.get(f"{base}{path}")
            assert unready.status_code == 503
            assert unready.json()["ok"] is False and unready.json()["library"] == "loading the digests"
        answer = post(f"{base}/slack/events", command_body("compile", fake.response_url()))
        assert answer.status_code == 200
        assert answer.json()["response_type"] == "ephemeral" and WAIT[lang] in answer.json()["text"]
        mention = {"type": "app_mention", "channel": "C0CHAN", "user": "U0ASKER", "ts": "1700000001.000100"}
        mention["text"] = "<@U0BOT> compile 有什么风险？"
        assert post(f"{base}/slack/events", event_body(mention)).status_code == 200
        said = fake.wait_for("chat.postMessage", timeout=10)
        assert said.params["channel"] == "C0CHAN" and said.params["thread_ts"] == "1700000001.000100"
        assert WAIT[lang] in said.params["text"]
        # A bot's own direct message is acknowledged, never answered (no loops).
        own = {"type": "message", "channel": "D0DM", "channel_type": "im", "bot_id": "B0BOT", "ts": "2.0"}
        assert post(f"{base}/slack/events", event_body({**own, "text": "hi"})).status_code == 200
    ready = wait_ready(base, timeout=60)
    assert ready.json() == {"ok": True, "library": "ok"}
    assert httpx.get(f"{base}/healthz").json() == {"ok": True, "library": "ok", "entries": 8, "errors": 0}
    answer = post(f"{base}/slack/events", command_body("compile", fake.response_url())).json()
    assert WAIT[lang] not in str(answer) and "compile" in str(answer).lower()
    assert bot.wait_idle(10)
    assert [c.params["text"] for c in fake.calls("chat.postMessage")] == [said.params["text"]]


def test_a_thread_question_while_loading_is_answered_once_loaded(
    loading: Loading, seed_library: Library
) -> None:
    """A reply under the bot's post was acknowledged and dropped while the digests loaded."""
    bot, base, fake = loading.bot, loading.base, loading.fake
    entry = seed_library.get("53529")
    assert entry is not None
    parent = "1700000000.000100"
    bot.threads.register("C0CHAN", parent, entry.id)
    reply = {"type": "message", "channel": "C0CHAN", "user": "U0ASKER", "ts": "1700000002.000100"}
    reply |= {"thread_ts": parent, "text": "what should I focus on?", "channel_type": "channel"}
    with bot.library._lock:
        bot.start()
        assert post(f"{base}/slack/events", event_body(reply)).status_code == 200
        assert httpx.get(f"{base}/readyz").status_code == 503  # still loading: nothing answered yet
        assert fake.calls("chat.postMessage") == []
    wait_ready(base, timeout=60)
    answer = fake.wait_for(
        "chat.postMessage", where=lambda c: c.params.get("thread_ts") == parent, timeout=10
    )
    assert WAIT[bot.settings.channel_language] not in str(answer.params)
    assert entry.pr is not None and f"#{entry.pr}" in str(answer.params)
    assert bot.wait_idle(10)
    assert len(fake.calls("chat.postMessage")) == 1


def test_a_press_or_a_shortcut_while_loading_is_told_to_wait_the_pr_link_is_not(loading: Loading) -> None:
    """The presser waits for an answer at the response URL; the PR link button opened the PR."""
    bot, base, fake = loading.bot, loading.base, loading.fake
    lang = bot.settings.channel_language
    share = {"action_id": "share_entry:51badd0821", "value": "51badd0821"}
    link = {"action_id": "open_pr:51badd0821"}
    with bot.library._lock:
        bot.start()
        assert post(f"{base}/slack/events", button_body(share, fake.response_url("share"))).status_code == 200
        assert post(f"{base}/slack/events", button_body(link, fake.response_url("link"))).status_code == 200
        shortcut = shortcut_body("ask_vllm_digest", "#53529", fake.response_url("shortcut"))
        assert post(f"{base}/slack/events", shortcut).status_code == 200
        for key in ("share", "shortcut"):
            told = fake.wait_for("response", where=lambda c, key=key: c.path.endswith(f"/{key}"), timeout=10)
            assert WAIT[lang] in told.params["text"]
            assert told.params["response_type"] == "ephemeral" and told.params["replace_original"] is False
    wait_ready(base, timeout=60)
    assert bot.wait_idle(10)
    assert not [c for c in fake.calls("response") if c.path.endswith("/link")]
    assert fake.calls("chat.postMessage") == []  # nothing was shared while loading


# -- the process ---------------------------------------------------------------------------------


def wait_logged(log: Path, line: str, timeout: float = 60.0) -> None:
    """Until the log file holds `line` (polled against a deadline)."""
    deadline = time.monotonic() + timeout
    while line not in log.read_text(encoding="utf-8"):
        assert time.monotonic() < deadline, f"no {line!r} in {log}:\n{log.read_text(encoding='utf-8')}"
        time.sleep(0.02)  # polling another process's log: nothing to wait on


def serve_once(
    fake: FakeSlack, folder: Path, cache: Path, log: Path, then: str = "", stop: int = signal.SIGTERM
) -> tuple[str, int]:
    """`vllm-digest serve` until /readyz is 200 (and the log says `then`), then stopped by `stop`;
    its log and exit code."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SLACK_")},
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": fake.api_url,
        "DIGEST_DIR": str(folder),
        "CACHE_DIR": str(cache),
        "DATABASE_URL": f"sqlite:///{log.parent / 'bot.db'}",
        "PYTHONPATH": str(ROOT),
    }
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "chatbot.cli", "serve", "--port", str(port)],
            env=env,
            cwd=log.parent,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            wait_ready(f"http://127.0.0.1:{port}", timeout=120)
            wait_logged(log, then)
        finally:
            process.send_signal(stop)
            code = process.wait(timeout=30)
    return log.read_text(encoding="utf-8"), code


def test_serve_saves_the_snapshot_and_a_restart_loads_it(
    fake_slack: FakeSlack, folder: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "serve-cache"
    # The snapshot is written once the bot is ready, not before.
    first, _ = serve_once(fake_slack, folder, cache, tmp_path / "first.log", then="saved the digest snapshot")
    assert "from the digest files" in first and "saved the digest snapshot" in first, first
    second, _ = serve_once(fake_slack, folder, cache, tmp_path / "second.log")
    assert "from the snapshot" in second and "saved the digest snapshot" not in second, second
    entries = len(Library.load(folder))
    assert f"loaded {entries} digest entries from the snapshot" in second


def test_serve_listens_before_the_bot_is_built(fake_slack: FakeSlack) -> None:
    """`Starting`: the probes answer at once; a Slack request waits for the bot's app (or, when
    it never comes within `wait`, gets a 503 that Slack retries, never a hang)."""
    from concurrent.futures import ThreadPoolExecutor

    starting = Starting(wait=30)
    server = HttpServer(starting, host="127.0.0.1", port=0).start()
    base = f"http://127.0.0.1:{server.port}"
    try:
        assert httpx.get(f"{base}/livez").json() == {"ok": True}
        for path in ("/readyz", "/healthz"):
            unready = httpx.get(f"{base}{path}")
            assert unready.status_code == 503 and unready.json() == {"ok": False, "library": "starting"}
        with ThreadPoolExecutor(1) as pool:
            asked = pool.submit(
                post, f"{base}/slack/events", command_body("help", fake_slack.response_url()), None, 60
            )
            bot = build(settings_for(fake_slack))
            starting.set(asgi_app(bot.app, bot.health, ready=bot.readiness))
            assert "/vllm-digest latest" in str(asked.result().json())
        assert httpx.get(f"{base}/readyz").json() == {"ok": True, "library": "ok"}
        bot.close()
    finally:
        server.stop()
    never = Starting(wait=0.2)
    server = HttpServer(never, host="127.0.0.1", port=0).start()
    try:
        body = command_body("help", fake_slack.response_url())
        assert post(f"http://127.0.0.1:{server.port}/slack/events", body).status_code == 503
    finally:
        server.stop()


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_serve_stops_on_sigterm_or_ctrl_c_with_one_line_and_exit_code_0(
    fake_slack: FakeSlack, folder: Path, tmp_path: Path, stop: signal.Signals
) -> None:
    # uvicorn raises the signal again once it has shut down: without a handler of ours SIGTERM
    # killed the process before the answers in progress drained (-15), Ctrl-C printed a traceback.
    log, code = serve_once(fake_slack, folder, tmp_path / "cache", tmp_path / "serve.log", stop=stop)
    assert code == 0, log
    assert f"vllm-digest: {stop.name}: stopping, finishing the answers in progress" in log
    assert "Traceback" not in log and "KeyboardInterrupt" not in log, log
