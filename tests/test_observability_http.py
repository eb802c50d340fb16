"""Observability end to end: a known mix of commands, events and presses over signed HTTP, then
/metrics, `vllm-digest stats --json`, the JSON logs and every table of the store."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import inspect, select, table, text

from chatbot.bot import Bot
from chatbot.observability import configure_logging
from chatbot.observability.metrics import samples
from chatbot.slack.server import HttpServer, asgi_app
from chatbot.store import SqlStore
from chatbot.wiring import build
from tests.conftest import DIGESTS
from tests.fakeslack import Call, FakeSlack
from tests.slackrequests import (
    SIGNING_SECRET,
    button_body,
    buttons,
    command_body,
    event_body,
    post,
    signed_headers,
    view_submission_body,
)
from tests.test_followups_http import settings_for

CHANNEL = "C0OBSERVE"
# Realistic Slack user ids (the log redaction recognises their shape; the test checks the
# store and logs never hold them, redaction or not).
ALICE = "U07ALICE42"
BOB = "U07BOB0099"
KV_ENTRY = "83c92f2724"  # #52068: its note names no risks, so "有什么风险？" is "not in the note"
DEEPSTACK_ENTRY = "51badd0821"
TOKEN = "xoxb-test"


@dataclass
class Observed:
    """The bot over HTTP with /metrics, on a store, logging JSON into `logs`."""

    fake: FakeSlack
    db_url: str
    logs: io.StringIO = field(default_factory=io.StringIO)

    def __post_init__(self) -> None:
        self.handler = configure_logging("json", stream=self.logs)
        self.store = SqlStore.open(self.db_url)
        self.bot: Bot = build(settings_for(self.fake), store=self.store)
        self.server = HttpServer(
            asgi_app(self.bot.app, self.bot.health, self.bot.metrics.exposition), host="127.0.0.1", port=0
        ).start()

    def close(self) -> None:
        self.server.stop()
        self.bot.close()
        self.store.close()
        import logging

        logging.getLogger().removeHandler(self.handler)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    def send(self, body: str, *, json_body: bool = False, retry: int = 0) -> httpx.Response:
        headers = signed_headers(body)
        if json_body:
            headers["Content-Type"] = "application/json"
        if retry:
            headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
        response = post(f"{self.base}/slack/events", body, headers)
        assert response.status_code == 200, response.text
        return response

    def command(self, text: str, user: str = ALICE) -> dict[str, Any]:
        answer: dict[str, Any] = self.send(
            command_body(text, self.fake.response_url("cmd"), channel=CHANNEL, user=user)
        ).json()
        return answer

    def press(self, button: dict[str, Any], user: str) -> None:
        self.send(button_body(button, self.fake.response_url("press"), channel=CHANNEL, user=user))
        self.settle()

    def settle(self) -> None:
        assert self.bot.wait_idle(timeout=10)

    def metrics(self) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
        response = httpx.get(f"{self.base}/metrics", timeout=5)
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain")
        return {(name, frozenset(labels.items())): value for name, labels, value in samples(response.text)}


def value(scraped: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    return scraped.get((name, frozenset(labels.items())), 0.0)


@pytest.fixture
def observed(fake_slack: FakeSlack, db_url: str) -> Iterator[Observed]:
    served = Observed(fake_slack, db_url)
    yield served
    served.close()


def thread_reply(text: str, ts: str, thread_ts: str, user: str = ALICE) -> str:
    return event_body(
        {
            "type": "message",
            "channel": CHANNEL,
            "channel_type": "channel",
            "user": user,
            "text": text,
            "ts": ts,
            "thread_ts": thread_ts,
        }
    )


def feedback_buttons(message: dict[str, Any], entry_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    found = {b["action_id"]: b for b in buttons(message)}
    return found[f"feedback_up:{entry_id}"], found[f"feedback_down:{entry_id}"]


def answer_in_thread(fake: FakeSlack, thread_ts: str, count: int = 1) -> Call:
    return fake.wait_for(
        "chat.postMessage", count=count, where=lambda c: c.params.get("thread_ts") == thread_ts
    )


def test_a_known_mix_shows_in_metrics_stats_and_nowhere_a_token_or_user_id(
    observed: Observed, tmp_path: Path
) -> None:
    fake = observed.fake
    # -- commands: 2 searches with results (the second from the answer cache), 2 spellings of
    #    one query that matches nothing, help, topics.
    kv = observed.command("kv offload")
    assert observed.command("kv offload") == kv
    assert "没有找到" in json.dumps(observed.command("Quantum  Teleport?", user=BOB), ensure_ascii=False)
    observed.command("quantum teleport")
    observed.command("help")
    observed.command("topics")

    # -- Share the KV offload entry, ask two questions in its thread (one the note cannot
    #    answer), and let Slack retry one event.
    share = next(b for b in buttons(kv) if b["action_id"] == f"share_entry:{KV_ENTRY}")
    observed.press(share, ALICE)
    card = fake.wait_for("chat.postMessage", where=lambda c: not c.params.get("thread_ts"))
    parent = str(fake.messages(CHANNEL)[0]["ts"])
    assert card.params["channel"] == CHANNEL
    risks = thread_reply("有什么风险？", "1800000000.000100", parent)
    observed.send(risks, json_body=True)
    answer = answer_in_thread(fake, parent)
    observed.send(risks, json_body=True, retry=1)
    observed.send(thread_reply("重点看什么？", "1800000000.000200", parent, user=BOB), json_body=True)
    answer_in_thread(fake, parent, count=2)
    observed.settle()

    # -- Feedback: Alice 👍 then 👎 on the risks answer (a change, not a second vote), then
    #    says what was missing in the modal; Bob 👎 on the KV result of his search.
    up, down = feedback_buttons(answer.params, KV_ENTRY)
    observed.press(up, ALICE)
    observed.press(down, ALICE)
    modal = fake.wait_for("views.open").params["view"]
    missing = "the benchmark numbers; my token xoxb-1234-5678-abcdef"
    observed.send(
        view_submission_body(
            modal, {"missing": {"missing": {"type": "plain_text_input", "value": missing}}}, user=ALICE
        )
    )
    _, kv_down = feedback_buttons(kv, KV_ENTRY)
    observed.press(kv_down, BOB)
    fake.wait_for("views.open", count=2)
    observed.settle()

    # -- /metrics: exact counts.
    scraped = observed.metrics()
    expected = {
        ("vllm_digest_commands_total", (("kind", "search"),)): 4,
        ("vllm_digest_commands_total", (("kind", "help"),)): 1,
        ("vllm_digest_commands_total", (("kind", "topics"),)): 1,
        ("vllm_digest_searches_total", (("source", "command"), ("outcome", "results"))): 2,
        ("vllm_digest_searches_total", (("source", "command"), ("outcome", "no_results"))): 2,
        ("vllm_digest_followup_answers_total", (("intent", "risks"), ("outcome", "not_in_note"))): 1,
        ("vllm_digest_followup_answers_total", (("intent", "focus"), ("outcome", "found"))): 1,
        ("vllm_digest_events_deduplicated_total", (("by", "message"),)): 1,
        ("vllm_digest_feedback_total", (("kind", "answer"), ("vote", "up"), ("outcome", "new"))): 1,
        ("vllm_digest_feedback_total", (("kind", "answer"), ("vote", "down"), ("outcome", "changed"))): 1,
        ("vllm_digest_feedback_total", (("kind", "search"), ("vote", "down"), ("outcome", "new"))): 1,
        ("vllm_digest_slack_api_calls_total", (("method", "chat.postMessage"), ("error", "ok"))): 3,
        ("vllm_digest_slack_api_calls_total", (("method", "views.open"), ("error", "ok"))): 2,
        ("vllm_digest_answer_seconds_count", ()): 2,
        ("vllm_digest_digest_entries", ()): 8,
        ("vllm_digest_digest_problems", (("severity", "error"),)): 0,
        ("vllm_digest_digest_reloads_total", ()): 0,
    }
    got = {key: value(scraped, key[0], **dict(key[1])) for key in expected}
    assert got == expected
    # The cached repeat did not search the index again: 3 index searches for 4 searches.
    assert value(scraped, "vllm_digest_search_seconds_count") == 3
    assert value(scraped, "vllm_digest_model_calls_total", outcome="ok") == 0
    assert not any(
        name == "vllm_digest_followup_answers_total" and dict(labels).get("intent") == "other"
        for name, labels in scraped
    )

    # -- stats --json: the gap grouped under its normalised form, the votes per entry.
    env = {
        "DATABASE_URL": observed.db_url,
        "DIGEST_DIR": str(DIGESTS),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }
    run = subprocess.run(
        [sys.executable, "-m", "chatbot.cli", "stats", "--since", "1d", "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    stats = json.loads(run.stdout)
    assert stats["searches"] == 4
    assert [(g["query"], g["searches"]) for g in stats["no_match"]] == [("quantum teleport", 2)]
    assert [(t["query"], t["searches"]) for t in stats["top_queries"]] == [("kv offload", 2)]
    entries = {e["entry"]: e for e in stats["entries"]}
    assert (entries[KV_ENTRY]["up"], entries[KV_ENTRY]["down"]) == (0, 2)
    assert entries[KV_ENTRY]["shares"] == 1 and entries[KV_ENTRY]["questions"] == 2
    assert entries[KV_ENTRY]["views"] == 2  # first in both "kv offload" result pages
    assert [(q["entry"], q["intent"], q["question"]) for q in stats["not_in_note"]] == [
        (KV_ENTRY, "risks", "有什么风险")
    ]
    assert [m["text"] for m in stats["missing"]] == ["the benchmark numbers; my token [token]"]

    # -- Nothing in the logs or any table holds a token, a signing secret or a user id.
    secrets = [TOKEN, "xoxb-1234-5678-abcdef", SIGNING_SECRET, ALICE, BOB, "/response/"]
    lines = observed.logs.getvalue().splitlines()
    assert lines, "no log lines captured"
    records = [json.loads(line) for line in lines]
    request_lines = [r for r in records if r["message"].startswith("slack request")]
    assert len(request_lines) >= 13 and all(r["request_id"] for r in request_lines)
    assert len({r["request_id"] for r in request_lines}) == len(request_lines)
    # The id follows a press into its lazy listener, a retried event into the dedup.
    ids_of_requests = {r["request_id"] for r in request_lines}
    followed = [r for r in records if r["message"].startswith(("feedback ", "event "))]
    assert len(followed) == 4 and all(r["request_id"] in ids_of_requests for r in followed)
    for secret in secrets:
        assert secret not in observed.logs.getvalue()
    dumped = dump_tables(observed.store)
    assert "usage_feedback" in dumped and "usage_searches" in dumped
    for name, rows in dumped.items():
        for secret in secrets:
            assert secret not in rows, f"{secret!r} in table {name}"


def dump_tables(store: SqlStore) -> dict[str, str]:
    """Every row of every table, as text."""
    dumped: dict[str, str] = {}
    with store.engine.connect() as conn:
        for name in inspect(conn).get_table_names():
            columns = [c["name"] for c in inspect(conn).get_columns(name)]
            query = select(*[text(f'"{c}"') for c in columns]).select_from(table(name))
            dumped[name] = repr([tuple(row) for row in conn.execute(query)])
    return dumped
