"""Which Slack calls may be sent again after a connection error or a 5xx, so that nothing is posted twice.

Reads and writes that set a state are retried; any other call only when it certainly never reached
Slack. An unknown method counts as a post: missing a retry is a visible error, a duplicate is not
undone. `slack_web_client` is the one factory of Web API clients, all on the bot's one `RateLimits`.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler
from slack_sdk.http_retry.builtin_interval_calculators import BackoffRetryIntervalCalculator
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse

from chatbot.observability.slackcalls import api_method
from chatbot.settings import Settings
from chatbot.slack.ratelimits import GatedWebClient, RateLimits, RetryAfterHandler
from chatbot.slack.webapi import never_sent

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


def may_resend(method: str, why: str, level: int) -> bool:
    """The one rule of what is sent again after a call that may have reached Slack: reads and
    idempotent writes; anything else is logged once as possibly posted, and not sent again."""
    if safe_to_repeat(method):
        return True
    log.log(level, "slack %s: %s; not sent again, it may have been posted", method, why)
    return False


class PostOnceRetryHandler(ConnectionErrorRetryHandler):
    """Sends again after a connection error or a 500/503, with backoff, but never a post that may
    have reached Slack: that post's outcome is logged as unknown (one line at `unknown_level`;
    DEBUG where the caller reports it itself: the PR of the day, announcements)."""

    def __init__(self, *args: Any, unknown_level: int = logging.WARNING, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.unknown_level = unknown_level

    def _can_retry(
        self,
        *,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
        **rest: Any,
    ) -> bool:
        method = api_method(request.url)
        if response is not None:  # ServerErrorRetryHandler's statuses
            status = response.status_code
            return status in (500, 503) and may_resend(method, f"HTTP {status}", self.unknown_level)
        if error is None:
            return False
        why = f"no answer after the request was sent ({type(error).__name__}: {error})"
        return (never_sent(error) or may_resend(method, why, self.unknown_level)) and super()._can_retry(
            request=request, response=response, error=error, **rest
        )


def slack_web_client(
    token: str | None,
    base_url: str,
    *,
    limits: RateLimits | None = None,
    timeout: float = 10.0,
    retries: int = 2,
    backoff: float = 0.5,
    reports_unknown: bool = False,
) -> GatedWebClient:
    """The bot's Web API client: waits out and records rate limits on `limits` (shared with
    every other client of the bot), sends again after connection and server errors with backoff,
    but a post only when it certainly never reached Slack. `reports_unknown`: the caller logs a
    post's unknown outcome itself (the jobs), so the handler's line goes to DEBUG."""
    limits = limits or RateLimits()
    post_once = PostOnceRetryHandler(
        max_retry_count=retries,
        interval_calculator=BackoffRetryIntervalCalculator(backoff_factor=backoff),
        unknown_level=logging.DEBUG if reports_unknown else logging.WARNING,
    )
    client = GatedWebClient(
        token=token,
        base_url=base_url,
        timeout=timeout,  # type: ignore[arg-type]  # urllib takes fractions of a second too
        retry_handlers=[post_once, RetryAfterHandler(limits, max_retry_count=max(retries, 3))],
    )
    client.rate_limits = limits
    return client


def web_client(
    settings: Settings, token: str | None, limits: RateLimits | None = None, *, daily: bool = False
) -> WebClient:
    """The bot's Web API client for SLACK_API_URL (chatbot.slack.retries.slack_web_client: Slack's
    Retry-After per channel and method on `limits`, nothing posted twice). It waits at most 10 s
    for an answer (someone is waiting on it), less when SLACK_TIMEOUT says so; the jobs that post
    (`daily`: PR of the day, announcements) wait SLACK_TIMEOUT."""
    timeout = settings.slack_timeout if daily else min(10.0, settings.slack_timeout)
    return slack_web_client(
        token, settings.slack_api_url, limits=limits, timeout=timeout, reports_unknown=daily
    )
