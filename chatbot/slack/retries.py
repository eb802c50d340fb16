"""Which Slack calls may be sent again after a connection error, so that nothing is posted twice.

A dropped connection or a reset after the request went out may come after Slack acted on it: a
second chat.postMessage would then be a second message. Calls that are safe to repeat (reads, and
writes that set a state: chat.update, chat.unfurl, views.publish, ...) are retried as before; any
other call only when it certainly never reached Slack (connection refused, host not found). An
unknown method counts as a post: missing a retry is a visible error, a duplicate is not undone.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse

from chatbot.daily.poster import never_sent
from chatbot.observability.slackcalls import api_method

log = logging.getLogger(__name__)

# Writes whose second call leaves Slack as the first one did.
IDEMPOTENT_WRITES = frozenset(
    {
        "chat.update",
        "chat.delete",
        "chat.unfurl",
        "views.publish",
        "views.update",
        "reactions.add",
        "reactions.remove",
        "pins.add",
        "pins.remove",
        "conversations.join",
        "conversations.mark",
    }
)
# The last part of a read method's name: users.info, conversations.history, auth.test, ...
_READ_VERBS = frozenset({"info", "list", "history", "replies", "members", "test"})
_READ_PREFIXES = ("get", "lookup")


def safe_to_repeat(method: str) -> bool:
    """True for reads and idempotent writes; False for posts and every method not known here."""
    verb = method.rsplit(".", 1)[-1]
    return method in IDEMPOTENT_WRITES or verb in _READ_VERBS or verb.startswith(_READ_PREFIXES)


class PostOnceRetryHandler(ConnectionErrorRetryHandler):
    """ConnectionErrorRetryHandler that never sends a post again once it may have reached Slack;
    it logs that post's outcome as unknown (one line) instead."""

    def _can_retry(
        self,
        *,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
        **rest: Any,
    ) -> bool:
        if error is None or response is not None:
            return False
        method = api_method(request.url)
        if safe_to_repeat(method) or never_sent(error):
            return super()._can_retry(request=request, response=response, error=error, **rest)
        log.warning(
            "slack %s: no answer after the request was sent (%s: %s); not sent again, it may have been posted",
            method,
            type(error).__name__,
            error,
        )
        return False
