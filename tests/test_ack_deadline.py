"""The slash command's ack deadline kept on the event loop (chatbot.slack.deadline): the answer
in the response when it is ready in time, else the stand-in at the budget and the answer later;
and the listener's own path (one answer-cache lookup per uncached command)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from slack_bolt import BoltResponse
from starlette.concurrency import run_in_threadpool

from chatbot.slack import deadline
from chatbot.slack.deadline import AckDeadline, within_deadline


def stand_in() -> BoltResponse:
    return BoltResponse(status=200, body="searching")


def test_an_answer_finished_in_time_goes_in_the_response() -> None:
    timed = AckDeadline()
    timed.defer(stand_in, budget=10.0)
    assert timed.expire() is None  # not due yet
    assert timed.finish() is True
    assert timed.expire() is None  # finished: the stand-in is never made


def test_past_the_budget_the_stand_in_goes_once_and_the_answer_is_late() -> None:
    made: list[int] = []

    def counted() -> BoltResponse:
        made.append(1)
        return stand_in()

    timed = AckDeadline()
    timed.defer(counted, budget=0.0)
    response = timed.expire()
    assert response is not None and response.body == "searching"
    assert timed.finish() is False
    assert made == [1]


def test_nothing_deferred_is_looked_at_again_after_a_poll() -> None:
    timed = AckDeadline()
    assert timed.wait() == deadline.POLL
    assert timed.expire() is None
    timed.defer(stand_in, budget=5.0)
    assert 4.0 < timed.wait() <= 5.0


def listener(budget: float, work: float, answer: str = "answer", fail: bool = False) -> Any:
    """A dispatch like the slash command's: defer, work `work` seconds, then finish."""
    finished: dict[str, object] = {}
    done = threading.Event()

    def dispatch() -> BoltResponse:
        timed = deadline.current.get()
        assert timed is not None, "the deadline reaches the dispatch thread"
        timed.defer(stand_in, budget)
        time.sleep(work)
        finished["in_time"] = timed.finish()
        done.set()
        if fail:
            raise RuntimeError("listener failed")
        return BoltResponse(status=200, body=answer)

    return dispatch, finished, done


def test_within_deadline_returns_the_answer_when_it_is_in_time() -> None:
    dispatch, finished, _ = listener(budget=5.0, work=0.01)

    async def run() -> BoltResponse:
        return await within_deadline(lambda: run_in_threadpool(dispatch))

    response = asyncio.run(run())
    assert response.body == "answer"
    assert finished == {"in_time": True}
    assert deadline.current.get() is None  # set for the dispatch only


def test_within_deadline_sends_the_stand_in_and_lets_the_dispatch_finish() -> None:
    dispatch, finished, done = listener(budget=0.05, work=0.3, fail=True)

    async def run() -> tuple[BoltResponse, float]:
        started = time.monotonic()
        response = await within_deadline(lambda: run_in_threadpool(dispatch))
        waited = time.monotonic() - started
        await asyncio.sleep(0.5)  # the late dispatch ends (its error is read, not reported)
        return response, waited

    response, waited = asyncio.run(run())
    assert response.body == "searching"
    assert waited < 0.25
    assert done.is_set() and finished == {"in_time": False}
    assert not deadline._late  # forgotten once done


def test_a_slow_dispatch_that_never_defers_is_waited_for() -> None:
    def slow() -> BoltResponse:
        time.sleep(3 * deadline.POLL)
        return BoltResponse(status=200, body="late but whole")

    async def run() -> BoltResponse:
        return await within_deadline(lambda: run_in_threadpool(slow))

    assert asyncio.run(run()).body == "late but whole"


def test_a_dispatch_error_in_time_is_raised_to_the_server() -> None:
    dispatch, _, _ = listener(budget=5.0, work=0.0, fail=True)

    async def run() -> BoltResponse:
        return await within_deadline(lambda: run_in_threadpool(dispatch))

    with pytest.raises(RuntimeError, match="listener failed"):
        asyncio.run(run())


def test_an_uncached_command_looks_in_the_answer_cache_once(seed_library: Any) -> None:
    """The listener looks the answer up before answering; the answer path does not again."""
    import json
    from concurrent.futures import ThreadPoolExecutor

    from chatbot.search.index import SearchIndex
    from chatbot.slack.handlers.command import Answers, CommandHandler, Request

    lookups: list[Request] = []

    class Counted(Answers):
        def cached(self, request: Request, offset: int = 0, lang: Any = None) -> Any:
            lookups.append(request)
            return super().cached(request, offset, lang)

    answers = Counted(SearchIndex.build(seed_library.entries), lambda n: [], lambda: None, "en")
    with ThreadPoolExecutor(1) as pool:
        handler = CommandHandler(answers, pool)
        command = {"text": "compile", "user_id": "U1"}
        first = json.loads(str(handler(command, respond=None).body))
        assert len(lookups) == 1  # missed, then answered without a second look
        again = json.loads(str(handler(command, respond=None).body))
        assert len(lookups) == 2 and again == first  # the second time, from the cache
