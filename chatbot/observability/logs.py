"""Logs: plain text or one JSON object a line (`LOG_FORMAT=json`), with a request id, redacted.

The request id is a contextvar set where a Slack request enters (a Bolt middleware, see
`request_id_middleware`); the wiring's thread pools run submitted work in a copy of the
submitter's context, so the id follows a command or event into its answer and lazy listeners.

Secrets never reach a log line: `Redactor` (a logging filter on the handler) rewrites every
record's message and exception text, replacing Slack tokens (`xoxb-…`, `xoxp-…`, `xapp-…`),
response/webhook URLs (`hooks.slack.com/…`) and Slack user ids. The code does not log request
bodies in the first place; this is the belt to those braces.
"""

from __future__ import annotations

import contextvars
import datetime as dt
import json
import logging
import os
import re
import sys
from collections.abc import Callable
from typing import IO, Any, Literal

from slack_bolt import BoltRequest, BoltResponse
from slack_bolt.middleware import Middleware

LogFormat = Literal["text", "json"]

request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)

# xoxb-/xoxp-/xoxa-/xoxe-/xoxr-/xoxs- and app-level xapp- tokens, whatever follows.
_TOKEN = re.compile(r"\bx(?:ox[a-z]|app)-[A-Za-z0-9\-._~+/=]*")
_SLACK_HOOK = re.compile(r"https?://hooks\.slack(?:-gov)?\.com/\S*")
# Slack user ids: U or W, then uppercase letters and digits (at least one digit), 8-12 long.
_USER_ID = re.compile(r"\b[UW](?=[A-Z0-9]*\d)[A-Z0-9]{7,11}\b")


def redact(text: str) -> str:
    """Text with Slack tokens, hook URLs and user ids replaced by placeholders."""
    text = _TOKEN.sub("[token]", text)
    text = _SLACK_HOOK.sub("[slack-url]", text)
    return _USER_ID.sub("[user]", text)


def new_request_id() -> str:
    return os.urandom(8).hex()


class Redactor(logging.Filter):
    """Rewrites each record's message (arguments merged) and exception text, redacted."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        record.msg = redact(message)
        record.args = None
        if record.exc_info:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


class RequestIdFilter(logging.Filter):
    """Puts the current request id on each record (`-` outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get() or "-"
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, request id, exception."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or request_id.get(),
        }
        if record.exc_text:
            entry["exception"] = record.exc_text
        elif record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return redact(json.dumps(entry, ensure_ascii=False))


TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"


def configure_logging(
    log_format: LogFormat = "text", level: int = logging.INFO, stream: IO[str] | None = None
) -> logging.Handler:
    """One handler on the root logger, replacing earlier ones; returns it (tests remove it)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.addFilter(RequestIdFilter())
    handler.addFilter(Redactor())
    handler.setFormatter(JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, "_vllm_digest", False):
            root.removeHandler(old)
    handler._vllm_digest = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level)
    return handler


class RequestIdMiddleware(Middleware):
    """A Bolt middleware: a fresh request id for each Slack request, logged with its kind.

    Bolt runs the listeners after the middleware chain has returned (its `next()` only lets the
    chain go on), so the id is set and left set: the dispatch runs in its own context (HTTP:
    Starlette's thread pool copies one per request; Socket Mode: the next request sets its own).
    A `Middleware` subclass: Bolt calls `process` directly, without a function middleware's
    per-request argument injection."""

    def __init__(self, logger: logging.Logger) -> None:
        self.logger = logger

    def process(
        self, *, req: BoltRequest, resp: BoltResponse, next: Callable[[], BoltResponse]
    ) -> BoltResponse | None:
        request_id.set(new_request_id())
        if self.logger.isEnabledFor(logging.INFO):
            self.logger.info("slack request %s", request_kind(req.body))
        return next()


def request_kind(body: dict[str, Any]) -> str:
    """What arrived, in words safe to log: `command search`, `event message`, `block_actions`."""
    if "command" in body:
        return "command"
    kind = str(body.get("type") or "unknown")
    if kind == "event_callback":
        event = body.get("event") or {}
        return f"event {event.get('type', '?')}" + (f"/{event['subtype']}" if event.get("subtype") else "")
    return kind
