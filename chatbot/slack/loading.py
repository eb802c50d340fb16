"""While the digests load, Slack still gets an answer: a short "still loading" line.

`serve` listens at once and loads the digest library on a background thread (seconds at 10k
entries when there is no snapshot). A request arriving meanwhile must not wait for the load (Slack
gives up after 3 s) nor fail: a slash command is acknowledged with the loading line (only the
asker sees it), a mention or a direct message gets it in the thread, anything else (a button,
a thread reply, a link) is acknowledged and dropped with one log line.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from typing import Any

from slack_bolt import BoltRequest, BoltResponse
from slack_bolt.middleware import Middleware
from slack_sdk import WebClient

from chatbot.slack.handlers.followups import Delivery, not_a_person
from chatbot.slack.i18n import Language, Texts

log = logging.getLogger(__name__)

LOADING_KEY = "loading.wait"


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
    ) -> None:
        self.ready = ready
        self.client = client
        self.languages = languages
        self.executor = executor

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
        else:
            log.info(
                "dropped a %s while the digests load", event.get("type") or body.get("type") or "request"
            )
        return BoltResponse(status=200, body="")


def _addressed_to_us(event: Mapping[str, Any]) -> bool:
    """A person's mention of the bot, or a person's direct message: the follow-ups' own rule for
    what is a person's message (never a bot's: no loops), not a second copy of it."""
    if not_a_person(Delivery(dict(event))) is not None:
        return False
    return event.get("type") == "app_mention" or (
        event.get("type") == "message" and event.get("channel_type") == "im"
    )


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
