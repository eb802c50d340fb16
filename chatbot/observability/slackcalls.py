"""Counting Slack Web API calls by method and error, for every client the bot uses.

Bolt builds a fresh `WebClient` per request from the app's client, copying its retry handlers,
so a subclass of WebClient would miss every call a listener makes. slack_sdk asks each retry
handler about every response (200s included), every HTTP error and every connection error:
a handler that never asks for a retry and only counts sees all of them, once per attempt.
Installed once per client in the wiring (`count_slack_calls`).
"""

from __future__ import annotations

import json

from slack_sdk import WebClient
from slack_sdk.http_retry.handler import RetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState

from chatbot.observability.metrics import Metrics


def api_method(url: str) -> str:
    """`https://slack.com/api/chat.postMessage?x=1` → `chat.postMessage`."""
    return url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1] or "unknown"


def call_error(response: HttpResponse | None, error: Exception | None) -> str:
    """`ok`, Slack's error code, `http_<status>`, or the connection error's type."""
    if response is None:
        return type(error).__name__ if error is not None else "unknown"
    body = response.body if isinstance(response.body, dict) else _json_object(response.data)
    if response.status_code == 200:
        if body.get("ok", True):
            return "ok"
        return str(body.get("error") or "unknown")[:64]
    return str(body.get("error") or f"http_{response.status_code}")[:64]


def _json_object(data: bytes | None) -> dict[str, object]:
    try:
        parsed = json.loads(data or b"")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


class SlackCallCounter(RetryHandler):
    """A retry handler that never retries: it counts the attempt it is shown."""

    def __init__(self, metrics: Metrics) -> None:
        super().__init__(max_retry_count=0)
        self.metrics = metrics

    def can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        self.metrics.slack_calls.labels(api_method(request.url), call_error(response, error)).inc()
        return False

    def __deepcopy__(self, memo: dict[int, object]) -> SlackCallCounter:
        """Bolt deep-copies the request context (its client, with this handler) for lazy
        listeners: the copy must count into the same metrics, not clone them."""
        return self


def count_slack_calls(client: WebClient, metrics: Metrics) -> WebClient:
    """Put the counter first among the client's retry handlers (once); the same client back."""
    handlers = list(client.retry_handlers or [])
    if not any(isinstance(h, SlackCallCounter) for h in handlers):
        client.retry_handlers = [SlackCallCounter(metrics), *handlers]
    return client
