"""The console drives the same Bolt handlers from a script, with no settings at all."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from chatbot.settings import Settings
from chatbot.slack.console import run_console
from tests.conftest import DIGESTS

SCRIPT = """\
/vllm-digest compile
1
> 有什么风险？
/vllm-digest help
/vllm-digest xyzzy <!channel>
quit
"""


def test_console_script_searches_shares_and_renders_block_kit() -> None:
    out = io.StringIO()
    settings = Settings(_env_file=None, digest_dir=DIGESTS)  # type: ignore[call-arg]
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
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "DATABASE_", "DIGEST_"))}
    done = subprocess.run(
        [sys.executable, "-m", "chatbot.cli", "console"],
        input="/vllm-digest compile\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "8 entries" in done.stdout
    assert "新增 Qwen3-VL DeepStack 编译契约回归测试" in done.stdout


def test_console_thread_replies_reach_a_wired_follow_up_handler_with_the_thread_readable() -> None:
    from slack_sdk import WebClient

    from chatbot.slack.console import Console, LocalSlack, Screen
    from chatbot.wiring import build

    seen: list[tuple[str, list[str]]] = []

    def follow_up(event: dict[str, object], client: WebClient) -> None:
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
