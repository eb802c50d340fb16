"""Slack's rate limits, shared by every call the bot makes, per channel and API method.

The first 429 on (channel, method) holds that pair until its `Retry-After` for every caller in the
process, so no call goes to Slack before Slack said it may; a 429 never posted anything, so
sending again after the hold is safe for every method. docs/slack.md: rate limits.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from slack_bolt import BoltContext, BoltResponse
from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.slack_response import SlackResponse

from chatbot.observability.slackcalls import api_method

# Slack answers 429 with Retry-After; without one (a proxy's 429), this long.
DEFAULT_RETRY_AFTER = 1.0


class RateLimits:
    """When each (channel, method) may be called again; thread-safe, one per bot."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._until: dict[tuple[str, str], float] = {}
        self._changed = threading.Condition()
        self._turns: dict[tuple[str, str], threading.Lock] = {}
        self.stopping = False

    def turn(self, channel: str, method: str) -> threading.Lock:
        """The lock one call to (channel, method) holds while it is out: a second call cannot be
        on its way when the first one's 429 comes back (it would arrive before Retry-After)."""
        with self._changed:
            return self._turns.setdefault((channel, method), threading.Lock())

    def hold(self, channel: str, method: str, seconds: float) -> None:
        """Nothing goes to `method` in `channel` for `seconds` from now (a later hold wins)."""
        with self._changed:
            until = self.clock() + max(seconds, 0.0)
            key = (channel, method)
            self._until[key] = max(until, self._until.get(key, until))
            self._changed.notify_all()

    def remaining(self, channel: str, method: str) -> float:
        """Seconds until `method` may be called in `channel` again (0 when it may now)."""
        with self._changed:
            return self._remaining((channel, method))

    def _remaining(self, key: tuple[str, str]) -> float:
        until = self._until.get(key)
        if until is None:
            return 0.0
        left = until - self.clock()
        if left <= 0:
            del self._until[key]
            return 0.0
        return left

    def wait(self, channel: str, method: str) -> None:
        """Block until the hold on (channel, method) is over, or `stop()` was called."""
        key = (channel, method)
        with self._changed:
            while not self.stopping and (left := self._remaining(key)) > 0:
                self._changed.wait(left)

    def stop(self) -> None:
        """Shutdown: end every wait now, and wait no more."""
        with self._changed:
            self.stopping = True
            self._changed.notify_all()

    def __deepcopy__(self, memo: dict[int, object]) -> RateLimits:
        """Bolt deep-copies a request's client for lazy listeners: the copy shares the holds."""
        return self


def call_channel(body: dict[str, Any] | None) -> str:
    """The channel a call is about ("" when none): `channel`, or `channel_id` (chat.unfurl's `channel`)."""
    if not body:
        return ""
    return str(body.get("channel") or body.get("channel_id") or "")


def request_channel(request: HttpRequest) -> str:
    """The channel of a request as the retry handlers see it (a JSON or form body)."""
    if request.body_params is not None:
        return call_channel(request.body_params)
    data = request.data or b""
    try:
        parsed = json.loads(data) if data[:1] == b"{" else dict(parse_qsl(data.decode("utf-8", "replace")))
    except ValueError:
        return ""
    return call_channel(parsed if isinstance(parsed, dict) else None)


def retry_after(response: HttpResponse) -> float:
    """Slack's `Retry-After` in seconds (DEFAULT_RETRY_AFTER when missing or unreadable)."""
    for name, values in response.headers.items():
        if name.lower() == "retry-after" and values:
            try:
                return max(float(values[0]), 0.0)
            except ValueError:
                break
    return DEFAULT_RETRY_AFTER


class RetryAfterHandler(RateLimitErrorRetryHandler):
    """Records every 429 as a hold on its (channel, method), then sends again once the hold is
    over (up to `max_retry_count` times); the last 429 is raised as `ratelimited`, the hold kept."""

    def __init__(self, limits: RateLimits, max_retry_count: int = 3) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self.limits = limits

    def can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is None or response.status_code != 429:
            return False
        self.limits.hold(request_channel(request), api_method(request.url), retry_after(response))
        return not self.limits.stopping and super().can_retry(
            state=state, request=request, response=response, error=error
        )

    def prepare_for_next_attempt(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        state.next_attempt_requested = True
        self.limits.wait(request_channel(request), api_method(request.url))
        state.increment_current_attempt()

    def __deepcopy__(self, memo: dict[int, object]) -> RetryAfterHandler:
        return self


class GatedWebClient(WebClient):
    """A WebClient that waits out the hold on a call's (channel, method) before sending it."""

    rate_limits: RateLimits

    def api_call(
        self,
        api_method: str,
        *,
        json: dict[str, Any] | None = None,
        data: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
        **rest: Any,
    ) -> SlackResponse:
        channel = call_channel(json) or call_channel(data) or call_channel(params)
        if not channel:  # method-wide limits: waited out, calls not queued one by one
            self.rate_limits.wait(channel, api_method)
            return super().api_call(api_method, json=json, data=data, params=params, **rest)
        with self.rate_limits.turn(channel, api_method):
            self.rate_limits.wait(channel, api_method)
            return super().api_call(api_method, json=json, data=data, params=params, **rest)

    def held(self, channel: str, method: str) -> bool:
        """True while (channel, method) is rate-limited: a call now would wait."""
        return self.rate_limits.remaining(channel, method) > 0


def gated(client: WebClient, limits: RateLimits) -> GatedWebClient:
    """`client` as a GatedWebClient on `limits` (the same object when it already is one)."""
    if isinstance(client, GatedWebClient) and client.rate_limits is limits:
        return client
    copy = GatedWebClient(
        token=client.token,
        base_url=client.base_url,
        timeout=client.timeout,
        ssl=client.ssl,
        proxy=client.proxy,
        headers=client.headers,
        team_id=client.default_params.get("team_id"),
        logger=client.logger,
        retry_handlers=list(client.retry_handlers or []),
    )
    copy.rate_limits = limits
    return copy


def held(client: Any, channel: str, method: str) -> bool:
    """True when `client` is gated and (channel, method) is rate-limited now."""
    return isinstance(client, GatedWebClient) and client.held(channel, method)


def gate_clients(limits: RateLimits) -> Callable[..., BoltResponse]:
    """Bolt middleware: every listener's `client` waits out the shared holds (Bolt builds a plain
    WebClient per request, copying only the app client's settings and retry handlers)."""

    def middleware(context: BoltContext, next: Callable[[], BoltResponse]) -> BoltResponse:
        context["client"] = gated(context.client, limits)
        return next()

    return middleware
