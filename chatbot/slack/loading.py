"""While the digests load, Slack still gets an answer: a short "still loading" line.

Slack gives up after 3 s, so a request arriving during the load is answered at once (a command in
its ack, a mention or DM in the thread, a press through its response URL); a reply in a thread
waits for the load instead (a "still loading" under every reply would be noise). docs/slack.md.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from typing import Any

from slack_bolt import BoltRequest, BoltResponse
from slack_bolt.middleware import Middleware
from slack_sdk import WebClient
from slack_sdk.webhook import WebhookClient

from chatbot.slack.action_ids import OPEN_PR
from chatbot.slack.handlers.followups import Delivery, not_a_person, reply_thread
from chatbot.slack.i18n import Language, Texts

log = logging.getLogger(__name__)

LOADING_KEY = "loading.wait"
# Thread replies kept while the digests load; past that, each is logged as lost.
WAITING = 500


class LoadingGate(Middleware):
    """A Bolt global middleware (first in the chain): every request passes once `ready()`.

    A `Middleware` subclass, not a function: Bolt calls `process` directly, where a function
    middleware costs a keyword-argument injection on every request (bench/http.py)."""

    def __init__(
        self,
        ready: Callable[[], bool],
        client: WebClient,
        languages: Callable[[str | None], Language],
        executor: Executor,
        follow_up: Callable[[Delivery, WebClient], None] | None = None,
    ) -> None:
        self.ready = ready
        self.client = client
        self.languages = languages
        self.executor = executor
        self.follow_up = follow_up  # answers the thread replies that waited for the load
        self._waiting: list[Delivery] = []
        self._released = False
        self._lock = threading.Lock()

    def process(
        self, *, req: BoltRequest, resp: BoltResponse, next: Callable[[], BoltResponse]
    ) -> BoltResponse | None:
        if self.ready():
            next()
            return None
        body: Mapping[str, Any] = req.body
        if "command" in body:
            log.info("answered %s while the digests load", body.get("command"))
            text = Texts(self.languages(body.get("user_id")))(LOADING_KEY)
            reply = json.dumps({"response_type": "ephemeral", "text": text}, ensure_ascii=False)
            return BoltResponse(status=200, body=reply, headers={"content-type": "application/json"})
        event = body.get("event") or {}
        if _addressed_to_us(event):
            self.executor.submit(_say_loading, self.client, event, self.languages)
        elif self.follow_up is not None and _thread_reply(event):
            self._wait(Delivery(dict(event), body.get("event_id"), req.context.bot_user_id))
        elif _awaits_an_answer(body):
            self.executor.submit(_respond_loading, body, self.languages)
        else:
            log.info(
                "dropped a %s while the digests load", event.get("type") or body.get("type") or "request"
            )
        return BoltResponse(status=200, body="")

    def _wait(self, delivery: Delivery) -> None:
        """Keep a thread reply until the digests are in (handed on at once when they just came)."""
        with self._lock:
            released = self._released
            kept = not released and len(self._waiting) < WAITING
            if kept:
                self._waiting.append(delivery)
        if released:
            self.executor.submit(self._answer, delivery)
        elif kept:
            log.info("a thread reply waits until the digests are loaded")
        else:
            log.error("lost a thread reply while the digests load: %d already wait", WAITING)

    def release(self) -> None:
        """The digests are in: answer the thread replies that waited (called once, after the load)."""
        with self._lock:
            self._released = True
            waiting, self._waiting = self._waiting, []
        for delivery in waiting:
            self.executor.submit(self._answer, delivery)
        if waiting:
            log.info("answering %d thread replies that waited for the digests", len(waiting))

    def _answer(self, delivery: Delivery) -> None:
        assert self.follow_up is not None
        try:
            self.follow_up(delivery, self.client)
        except Exception as exc:  # as the listener logs it: what was lost, in one line
            event = delivery.event
            log.error(
                "lost a thread reply that waited for the digests (channel %s, ts %s): %s: %s",
                event.get("channel"),
                event.get("ts"),
                type(exc).__name__,
                exc,
            )


def _thread_reply(event: Mapping[str, Any]) -> bool:
    """A person's reply in a thread (maybe one of the bot's: the follow-up handler decides)."""
    return (
        event.get("type") == "message"
        and not_a_person(Delivery(dict(event))) is None
        and reply_thread(dict(event)) is not None
    )


def _addressed_to_us(event: Mapping[str, Any]) -> bool:
    """A person's mention of the bot, or a person's direct message: the follow-ups' own rule for
    what is a person's message (never a bot's: no loops), not a second copy of it."""
    if not_a_person(Delivery(dict(event))) is not None:
        return False
    return event.get("type") == "app_mention" or (
        event.get("type") == "message" and event.get("channel_type") == "im"
    )


def _awaits_an_answer(body: Mapping[str, Any]) -> bool:
    """A press or a message shortcut, whose answer goes to its response URL: the person waits
    for one (a PR link button opens the PR by itself and waits for nothing)."""
    if body.get("type") not in ("block_actions", "message_action") or not body.get("response_url"):
        return False
    actions = body.get("actions") or [{}]
    return not str(actions[0].get("action_id", "")).startswith(OPEN_PR)


def _respond_loading(body: Mapping[str, Any], languages: Callable[[str | None], Language]) -> None:
    """The loading line to the press's or shortcut's response URL, only for the asker."""
    user = (body.get("user") or {}).get("id")
    text = Texts(languages(str(user) if user else None))(LOADING_KEY)
    try:
        WebhookClient(str(body["response_url"]), timeout=5).send(
            text=text, response_type="ephemeral", replace_original=False
        )
        log.info("answered a %s while the digests load", body.get("type"))
    except Exception as exc:  # Slack unreachable: the person presses again, nothing else to do
        log.warning("could not say the digests are loading: %s: %s", type(exc).__name__, exc)


def _say_loading(
    client: WebClient, event: Mapping[str, Any], languages: Callable[[str | None], Language]
) -> None:
    try:
        client.chat_postMessage(
            channel=event["channel"],
            # Under the mention; in a direct message, where it was asked.
            thread_ts=event.get("thread_ts")
            or (event.get("ts") if event.get("type") == "app_mention" else None),
            text=Texts(languages(event.get("user")))(LOADING_KEY),
        )
        log.info("answered a %s while the digests load", event.get("type"))
    except Exception as exc:  # Slack unreachable: the person asks again, nothing else to do
        log.warning("could not say the digests are loading: %s: %s", type(exc).__name__, exc)
