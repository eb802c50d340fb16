"""Follow-ups from a model server: streamed into the thread, grounded, with the extractive floor.

Real HTTP with signed events, the fake Slack and a fake OpenAI-compatible server (tests/fakeopenai.py).
The PR of the day for (C0DAILY, 2026-11-30) on an empty store is the PD entry (#52912).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from chatbot.answers.grounding import ungrounded
from chatbot.bot import Bot
from chatbot.digest import Library
from chatbot.settings import Settings
from chatbot.slack.server import HttpServer, asgi_app
from chatbot.store import SqlStore
from chatbot.wiring import build
from tests.conftest import DIGESTS
from tests.fakeopenai import FakeModel, Reply
from tests.fakeslack import Call, FakeSlack
from tests.slackrequests import SIGNING_SECRET, all_text, buttons, event_body, post, signed_headers

CHANNEL = "C0DAILY"
PD_PR = 52912
PD_FOCUS = "8 行修复如何解除「前缀缓存越好 PD 越慢」的反直觉失效"
PD_ENTRY = "576f1e507a"  # the pick for the PR of the day these tests post
PD_LINK = "<https://github.com/vllm-project/vllm/pull/52912|#52912>"
GROUNDED_EN = "Focus on the 8 line fix that stops better prefix caching from making PD slower (#52912)."


@dataclass
class ModelApp:
    fake: FakeSlack
    model_url: str
    db: Path
    timeout: float = 5.0
    bot: Bot = field(init=False)
    store: SqlStore = field(init=False)
    server: HttpServer = field(init=False)

    def __post_init__(self) -> None:
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            slack_bot_token="xoxb-test",
            slack_signing_secret=SIGNING_SECRET,
            slack_api_url=self.fake.api_url,
            digest_dir=DIGESTS,
            language="zh",
            llm_base_url=self.model_url,
            llm_timeout=self.timeout,
        )
        self.store = SqlStore.open(f"sqlite:///{self.db}")
        self.bot = build(settings, store=self.store)
        self.server = HttpServer(asgi_app(self.bot.app), host="127.0.0.1", port=0).start()

    def stop(self) -> None:
        self.server.stop()
        self.bot.close()
        self.store.close()

    def send(self, inner: dict[str, Any]) -> float:
        """Post a signed event; the seconds until Slack got its HTTP answer."""
        body = event_body({"channel": CHANNEL, "user": "U0ASKER", **inner})
        headers = {**signed_headers(body), "Content-Type": "application/json"}
        started = time.perf_counter()
        response = post(f"http://127.0.0.1:{self.server.port}/slack/events", body, headers)
        assert response.status_code == 200
        return time.perf_counter() - started

    def pr_of_the_day(self) -> str:
        assert self.bot.daily is not None
        import datetime as dt

        result = self.bot.daily.run(CHANNEL, dt.date(2026, 11, 30))
        assert result.ok and result.message_ts
        return result.message_ts

    def ask(self, text: str, parent: str, ts: str) -> None:
        self.send({"type": "message", "channel_type": "channel", "text": text, "ts": ts, "thread_ts": parent})

    def thread_posts(self, parent: str) -> list[Call]:
        return [c for c in self.fake.calls("chat.postMessage") if c.params.get("thread_ts") == parent]

    def final_update(self, count: int = 1) -> Call:
        """The update that carries a source line (the model's or the curator's): the answer."""
        return self.fake.wait_for(
            "chat.update",
            count=count,
            timeout=15,
            where=lambda c: "🤖" in all_text(c.params) or "📝" in all_text(c.params),
        )


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


@pytest.fixture
def app(fake_slack: FakeSlack, model: FakeModel, tmp_path: Path) -> Iterator[ModelApp]:
    served = ModelApp(fake_slack, model.base_url, tmp_path / "bot.db")
    yield served
    served.stop()


def test_an_english_question_gets_the_models_english_answer_streamed_into_the_thread(
    app: ModelApp, model: FakeModel
) -> None:
    model.script(Reply(GROUNDED_EN, chunks=5))
    parent = app.pr_of_the_day()
    app.ask("what should I focus on?", parent, "1800000000.000100")
    final = app.final_update()
    request = model.requests[0]
    prompt = "\n".join(m["content"] for m in request["messages"])
    assert "what should I focus on?" in prompt
    assert PD_FOCUS in prompt  # the curator's note, verbatim
    assert "Answer in English" in prompt
    assert request["stream"] is True
    assert "U0ASKER" not in json.dumps(request) and CHANNEL not in json.dumps(request)
    shown = all_text(final.params)
    assert "Focus on the 8 line fix that stops better prefix caching from making PD slower" in shown
    assert "Answered by the model from the curator's note" in shown and PD_LINK in shown
    # One message in the thread: the placeholder, updated in place.
    posts = app.thread_posts(parent)
    assert len(posts) == 1
    assert "Answering from the curator's note" in all_text(posts[0].params)
    assert final.params["ts"] == posts[0].response["ts"]
    # 👍/👎 under the model's answer rate it like an extractive one: this question, this entry.
    rating = [b["action_id"] for b in buttons(final.params)]
    assert rating == [f"feedback_up:{PD_ENTRY}", f"feedback_down:{PD_ENTRY}"]


def test_an_answer_naming_a_pr_the_entry_does_not_hold_is_replaced_by_the_extractive_answer(
    app: ModelApp, model: FakeModel
) -> None:
    model.script(Reply("The real fix is in #99999, which makes it 3x faster."))
    parent = app.pr_of_the_day()
    app.ask("重点看什么？", parent, "1800000000.000200")
    shown = all_text(app.final_update().params)
    assert "99999" not in shown and "3x" not in shown
    assert PD_FOCUS in shown and "引自精读笔记" in shown
    assert len(app.thread_posts(parent)) == 1


@pytest.mark.parametrize(
    "reply",
    [Reply(status=500), Reply(status=429), Reply(status=400), Reply(""), Reply("x", malformed=True)],
    ids=["500", "429", "400", "empty", "malformed"],
)
def test_a_failing_model_gives_the_extractive_answer_once(
    app: ModelApp, model: FakeModel, reply: Reply
) -> None:
    model.script(reply)
    parent = app.pr_of_the_day()
    app.ask("重点看什么？", parent, "1800000000.000300")
    shown = all_text(app.final_update().params)
    assert PD_FOCUS in shown and PD_LINK in shown
    assert app.bot.wait_idle(10)
    assert len(app.thread_posts(parent)) == 1
    assert len(app.fake.calls("chat.update")) == 1


def test_a_refused_connection_gives_the_extractive_answer(fake_slack: FakeSlack, tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    app = ModelApp(fake_slack, closed, tmp_path / "bot.db")
    try:
        parent = app.pr_of_the_day()
        app.ask("有什么风险？", parent, "1800000000.000400")
        shown = all_text(app.final_update().params)
        assert "引自精读笔记" in shown and PD_LINK in shown
        assert len(app.thread_posts(parent)) == 1
    finally:
        app.stop()


def test_a_slow_model_does_not_hold_the_ack_and_times_out_to_the_extractive_answer(
    fake_slack: FakeSlack, model: FakeModel, tmp_path: Path
) -> None:
    app = ModelApp(fake_slack, model.base_url, tmp_path / "bot.db", timeout=1.5)
    try:
        model.script(Reply(GROUNDED_EN, hold=True))
        parent = app.pr_of_the_day()
        started = time.perf_counter()
        app.ask("重点看什么？", parent, "1800000000.000500")
        model.wait_for_request()  # the model is now holding its answer; Slack already has its ack
        assert app.fake.calls("chat.update") == []
        shown = all_text(app.final_update().params)
        waited = time.perf_counter() - started
        assert PD_FOCUS in shown and "引自精读笔记" in shown
        assert waited < 1.5 + 3.0  # LLM_TIMEOUT plus the extractive answer's own time
        model.release()
        assert app.bot.wait_idle(10)
        assert len(app.thread_posts(parent)) == 1 and len(app.fake.calls("chat.update")) == 1
    finally:
        app.stop()


def test_the_thread_is_updated_while_the_model_streams(
    fake_slack: FakeSlack, model: FakeModel, tmp_path: Path
) -> None:
    """Partial text reaches the thread before the end (throttled to about once a second)."""
    app = ModelApp(fake_slack, model.base_url, tmp_path / "bot.db")
    try:
        assert app.bot.follow_up is not None
        follow_ups: Any = app.bot.follow_up
        follow_ups.model.update_every = 0.0  # every delta shows; the default throttle is 1 s
        model.script(Reply(GROUNDED_EN, chunks=4))
        parent = app.pr_of_the_day()
        app.ask("what should I focus on?", parent, "1800000000.000600")
        app.final_update()
        updates = [all_text(c.params) for c in app.fake.calls("chat.update")]
        assert len(updates) >= 3
        assert updates[0].endswith("▌") and len(updates[0]) < len(updates[-1])
    finally:
        app.stop()


def test_after_repeated_failures_the_breaker_skips_the_model(app: ModelApp, model: FakeModel) -> None:
    model.script(Reply(status=500), Reply(status=500), Reply(status=500))
    parent = app.pr_of_the_day()
    for n in range(3):
        app.ask("重点看什么？", parent, f"1800000000.00070{n}")
        app.final_update(count=n + 1)
    app.ask("有什么风险？", parent, "1800000000.000710")
    answer = app.fake.wait_for(
        "chat.postMessage", count=4, where=lambda c: c.params.get("thread_ts") == parent
    )
    assert "引自精读笔记" in all_text(answer.params)
    assert len(model.requests) == 3
    outcomes = ("ok", "failed", "circuit_open")
    counted = {o: app.bot.metrics.value("vllm_digest_model_calls_total", {"outcome": o}) for o in outcomes}
    assert counted == {"ok": 0, "failed": 3, "circuit_open": 1}


def test_a_question_across_the_digest_is_answered_with_cited_prs(app: ModelApp, model: FakeModel) -> None:
    model.script(Reply("Read [#53574] first: it fixes the DSv4 speculative decoding crash on SM120."))
    question = "<@UBOT0001> which PRs touch speculative decoding, and which should I read first?"
    app.send({"type": "app_mention", "text": question, "ts": "1800000000.000800"})
    shown = all_text(app.final_update().params)
    assert "<https://github.com/vllm-project/vllm/pull/53574|#53574>" in shown
    prompt = "\n".join(m["content"] for m in model.requests[0]["messages"])
    assert "[#53574]" in prompt and "Cite every PR" in prompt


def test_a_topic_mention_without_a_question_keeps_todays_answer(app: ModelApp, model: FakeModel) -> None:
    app.send({"type": "app_mention", "text": "<@UBOT0001> speculative decoding", "ts": "1800000000.000900"})
    reply = app.fake.wait_for(
        "chat.postMessage", where=lambda c: c.params.get("thread_ts") == "1800000000.000900"
    )
    assert "53574" in all_text(reply.params)
    assert model.requests == []


def test_ask_llm_shows_both_answers(model: FakeModel) -> None:
    model.script(Reply(GROUNDED_EN))
    env = {**os.environ, "LLM_BASE_URL": model.base_url, "DIGEST_DIR": str(DIGESTS)}
    result = subprocess.run(
        [sys.executable, "-m", "chatbot.cli", "ask", "52912", "what should I focus on?", "--llm", "--json"],
        capture_output=True, text=True, env=env, check=True, cwd=Path(__file__).resolve().parent.parent,
    )  # fmt: skip
    payload = json.loads(result.stdout)
    assert PD_FOCUS in payload["answer"]
    assert payload["model"] == {"status": "grounded", "answer": GROUNDED_EN}


# -- the grounding rule, without servers --------------------------------------------------------


@pytest.fixture(scope="module")
def pd_entry() -> Any:
    entry = Library.load(DIGESTS).get(str(PD_PR))
    assert entry is not None
    return entry


def test_grounding_accepts_facts_of_the_entry_in_another_language(pd_entry: Any) -> None:
    assert ungrounded(GROUNDED_EN, [pd_entry]) == []
    assert ungrounded("PR #52912 by the author; read it.", [pd_entry]) == []


@pytest.mark.parametrize(
    ("answer", "named"),
    [
        ("See PR 12345 too.", "#12345"),
        ("It changes `totally_made_up_fn`.", "`totally_made_up_fn`"),
        ("It is 37% faster.", "37%"),
        ("Ask @mallory about it.", "@mallory"),
        ("Fixed in issue #4242.", "#4242"),
    ],
)
def test_grounding_names_what_the_entry_does_not_hold(pd_entry: Any, answer: str, named: str) -> None:
    assert named in ungrounded(answer, [pd_entry])
