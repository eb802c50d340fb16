"""The digest folder under change: reloads happen off the request path and re-parse only what
changed; broken symlinks are reported with their path; the CLI reports each problem once and
survives a closed pipe."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from chatbot.digest import Library
from chatbot.slack.server import HttpServer, asgi_app
from chatbot.wiring import build
from tests.fakeslack import FakeSlack
from tests.slackrequests import all_text, command_body, post
from tests.test_slack_http import Served, settings_for

ROOT = Path(__file__).resolve().parent.parent
SMALL = "vllm-project/vllm\n\n修复 调度器 死锁\n\n值得精读。一是看锁，二是看队列。\n"


def big_digest(entries: int, word: str) -> str:
    """A raw-text digest with many entries, each mentioning `word` once."""
    notes = "".join(
        f"{word} 第 {i} 号改动：调度器修复 {i}\n\n值得精读。这个 PR 修复了第 {i} 号问题，一是看锁，"
        f"二是看队列，三是看测试。对调度工程师尤其有借鉴意义。注意：需要 #{50000 + i}。\n\n"
        for i in range(entries)
    )
    return "vllm-project/vllm\n\n" + notes


def run_cli(*args: str, digest_dir: Path, stdin_pipe: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DIGEST_DIR": str(digest_dir), "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "chatbot.cli", *args], capture_output=True, text=True, env=env, timeout=120
    )


@pytest.fixture
def served_folder(fake_slack: FakeSlack, tmp_path: Path) -> Iterator[Served]:
    (tmp_path / "a.txt").write_text(SMALL, encoding="utf-8")
    settings = settings_for(fake_slack).model_copy(update={"digest_dir": tmp_path})
    bot = build(settings)
    server = HttpServer(asgi_app(bot.app), host="127.0.0.1", port=0).start()
    yield Served(fake_slack, bot, f"http://127.0.0.1:{server.port}/slack/events")
    server.stop()
    bot.close()


def test_a_big_change_is_reloaded_in_the_background_while_the_old_index_answers(
    served_folder: Served, tmp_path: Path
) -> None:
    served_folder.bot.live.refresh_every = 0  # check on every request
    (tmp_path / "b.txt").write_text(big_digest(600, "星云"), encoding="utf-8")
    # The change is seen by this request, which must not wait for the reload (seconds of
    # parsing and indexing): it answers from the previous index, which has no 星云.
    during = post(
        served_folder.url, command_body("星云", served_folder.fake.response_url("during")), timeout=10
    )
    assert during.status_code == 200
    assert "第 0 号改动" not in all_text(during.json())
    assert served_folder.bot.live.wait_reloaded(120)
    after = post(
        served_folder.url, command_body("星云", served_folder.fake.response_url("after")), timeout=10
    )
    assert "星云 第" in all_text(after.json())
    assert len(served_folder.bot.library) == 601


def test_a_reload_parses_only_the_changed_files(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(SMALL, encoding="utf-8")
    (tmp_path / "b.txt").write_text(big_digest(3, "甲"), encoding="utf-8")
    library = Library.load(tmp_path)
    kept = library.get(next(e.id for e in library if e.title.startswith("修复")) or "")
    changed = tmp_path / "b.txt"
    changed.write_text(big_digest(4, "乙"), encoding="utf-8")
    os.utime(changed, ns=(changed.stat().st_atime_ns, changed.stat().st_mtime_ns + 1_000_000))
    assert library.refresh() is True
    assert sorted(e.title.split(" ")[0] for e in library) == ["乙", "乙", "乙", "乙", "修复"]
    # The unchanged file was not parsed again: its entry is the very same object.
    assert next(e for e in library if e.title.startswith("修复")) is kept


def test_symlink_loops_and_dangling_links_are_reported_with_their_path(tmp_path: Path) -> None:
    (tmp_path / "ok.txt").write_text(SMALL, encoding="utf-8")
    (tmp_path / "self.txt").symlink_to("self.txt")
    (tmp_path / "ping.yaml").symlink_to("pong.yaml")
    (tmp_path / "pong.yaml").symlink_to("ping.yaml")
    (tmp_path / "gone.txt").symlink_to("nowhere.txt")
    result = run_cli("validate", digest_dir=tmp_path)
    assert result.returncode == 1
    out = result.stdout.splitlines()
    for name in ("self.txt", "ping.yaml", "pong.yaml"):
        lines = [line for line in out if line.startswith(f"{tmp_path / name}:")]
        assert len(lines) == 1 and "symlink loop" in lines[0], out
    assert any(line.startswith(f"{tmp_path / 'gone.txt'}:") and "missing file" in line for line in out)
    assert result.stderr.strip().splitlines() == ["1 entries, 4 errors, 0 warnings"]


def test_validate_and_post_today_print_each_problem_once(fake_slack: FakeSlack, tmp_path: Path) -> None:
    (tmp_path / "ok.txt").write_text(SMALL, encoding="utf-8")
    (tmp_path / "bad.yaml").write_text("entries: [\n", encoding="utf-8")
    validated = run_cli("validate", digest_dir=tmp_path)
    both = validated.stdout + validated.stderr
    assert validated.returncode == 1 and both.count("bad.yaml") == 1, both

    env = {
        **os.environ,
        "DIGEST_DIR": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_API_URL": fake_slack.api_url,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'bot.db'}",
    }
    posted = subprocess.run(
        [sys.executable, "-m", "chatbot.cli", "post-today", "--channel", "C0ONCE"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    both = posted.stdout + posted.stderr
    assert posted.returncode == 0 and both.count("bad.yaml") == 1 and both.count("posted entry") == 1, both
    assert len(fake_slack.calls("chat.postMessage")) == 1


@pytest.mark.parametrize("command", ["schema", "list --json"])
def test_a_closed_pipe_ends_quietly(command: str, tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text(big_digest(300, "管道"), encoding="utf-8")
    env = {**os.environ, "DIGEST_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        f"{sys.executable} -m chatbot.cli {command} 2>err.txt | head -1",
        shell=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 0 and result.stdout.strip()
    assert (tmp_path / "err.txt").read_text() == ""
