"""The console drives the same Bolt handlers from a script, with no settings at all."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from chatbot.console import run_console
from chatbot.settings import Settings
from tests.conftest import DIGESTS

SCRIPT = """\
/vllm-digest compile
1
> 有什么风险？
/vllm-digest help
/vllm-digest xyzzy <!channel>
quit
"""


def console_cli(cwd: Path, script: str) -> subprocess.CompletedProcess[str]:
    """`vllm-digest console` as a user runs it: no Slack, database or digest settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "DATABASE_", "DIGEST_"))}
    return subprocess.run(
        [sys.executable, "-m", "chatbot.cli", "console"],
        input=script,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
    )


def test_console_script_searches_shares_and_renders_block_kit(tmp_path: Path) -> None:
    out = io.StringIO()
    settings = Settings(_env_file=None, digest_dir=DIGESTS, database_url=f"sqlite:///{tmp_path}/c.db")  # type: ignore[call-arg]
    assert run_console(settings, io.StringIO(SCRIPT), out) == 0
    text = out.getvalue()
    search, rest = text.split("» 1\n", 1)
    assert (
        "新增 Qwen3-VL DeepStack 编译契约回归测试 (https://github.com/vllm-project/vllm/pull/53529)" in search
    )
    assert (
        "[1] 分享到频道" in search
        and "[2] 打开 PR ↗ https://github.com/vllm-project/vllm/pull/53529" in search
    )
    shared, rest = rest.split("» > 有什么风险？\n", 1)
    assert "vllm-digest in #C0CONSOLE" in shared
    assert "*为什么值得读*" in shared and "讨论串里追问" in shared
    assert "已分享到频道" in shared
    assert "/vllm-digest today" in rest
    assert "没有找到与 “xyzzy <!channel>” 相关的条目" in rest


def test_console_runs_from_the_command_line_without_any_setting(tmp_path: Path) -> None:
    done = console_cli(tmp_path, "/vllm-digest compile\n")
    assert done.returncode == 0, done.stderr
    assert "8 entries" in done.stdout
    assert "新增 Qwen3-VL DeepStack 编译契约回归测试" in done.stdout
    # With no settings the console runs on the default SQLite file in the working directory.
    assert (tmp_path / "vllm-digest.db").is_file()


def test_console_thread_replies_reach_a_wired_follow_up_handler_with_the_thread_readable() -> None:
    from slack_sdk import WebClient

    from chatbot.console import Console, LocalSlack, Screen
    from chatbot.slack.handlers.followups import Delivery
    from chatbot.wiring import build

    seen: list[tuple[str, list[str]]] = []

    def follow_up(delivery: Delivery, client: WebClient) -> None:
        event = delivery.event
        thread = client.conversations_replies(channel=str(event["channel"]), ts=str(event["thread_ts"]))
        seen.append((str(event["text"]), [m.get("text", "") for m in thread["messages"]]))
        parent = thread["messages"][0]
        entry_id = parent["metadata"]["event_payload"]["entry_id"]
        client.chat_postMessage(
            channel=str(event["channel"]), thread_ts=parent["ts"], text=f"about {entry_id}"
        )

    out = io.StringIO()
    screen = Screen(out)
    local = LocalSlack(screen)
    settings = Settings(_env_file=None, digest_dir=DIGESTS, slack_api_url=local.url + "/api/")  # type: ignore[call-arg]
    bot = build(settings, local=True, follow_up=follow_up)
    console = Console(bot, local, screen)
    try:
        for line in ("/vllm-digest compile", "1", "> 有什么风险？"):
            console.handle(line)
    finally:
        bot.close()
        local.close()
    assert len(seen) == 1
    question, thread = seen[0]
    assert question == "有什么风险？"
    assert "新增 Qwen3-VL DeepStack" in thread[0] and thread[-1] == "有什么风险？"
    assert "about 51badd0821" in out.getvalue()


def test_console_answers_thread_replies_from_the_shared_entry(tmp_path: Path) -> None:
    done = console_cli(tmp_path, "/vllm-digest compile\n1\n> 重点看什么？\n> 有什么风险？\n")
    assert done.returncode == 0, done.stderr
    _, focus = done.stdout.split("» > 重点看什么？\n", 1)
    focus, risks = focus.split("» > 有什么风险？\n", 1)
    assert "vllm-digest in thread" in focus
    assert "重点：" in focus and "它展示了一个高价值的测试模式" in focus
    assert "#53529 (https://github.com/vllm-project/vllm/pull/53529)" in focus
    assert "注意：" in risks and "由于 #53516 尚未调查清楚，该契约未来仍可能被重新审视" in risks
    # The shared thread was registered in the SQLite store, so it outlives the console session.
    from chatbot.store import SqlStore

    store = SqlStore.open(f"sqlite:///{tmp_path}/vllm-digest.db")
    try:
        ts = focus.split("vllm-digest in thread ", 1)[1].split(" ", 1)[0]
        assert store.entry_for("C0CONSOLE", ts) == "51badd0821"
    finally:
        store.close()


def test_console_answers_a_command_that_holds_the_word_payload(tmp_path: Path) -> None:
    """The console hands Bolt the payload it parsed, as the server does: Bolt's own parser
    would take this command for an empty interactivity payload and answer nothing."""
    out = io.StringIO()
    settings = Settings(_env_file=None, digest_dir=DIGESTS, database_url=f"sqlite:///{tmp_path}/c.db")  # type: ignore[call-arg]
    assert run_console(settings, io.StringIO("/vllm-digest compile payload\nquit\n"), out) == 0
    assert (
        "新增 Qwen3-VL DeepStack 编译契约回归测试 (https://github.com/vllm-project/vllm/pull/53529)"
        in out.getvalue()
    )
