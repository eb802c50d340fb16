"""Observability (adapter): Prometheus metrics in a registry per bot, Slack call counting,
structured logs with a request id and redaction. No module-level state besides the request-id
contextvar; the wiring builds `Metrics` and installs the log handler."""

from chatbot.observability.logs import RequestIdMiddleware, configure_logging, redact, request_id
from chatbot.observability.metrics import LibraryState, Metrics
from chatbot.observability.slackcalls import count_slack_calls

__all__ = [
    "LibraryState",
    "Metrics",
    "RequestIdMiddleware",
    "configure_logging",
    "count_slack_calls",
    "redact",
    "request_id",
]
