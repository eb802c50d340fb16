"""Admitting a request to `/slack/events`: size, signature, then parsing, in that order.

Nothing from an unsigned request is decoded or parsed: a body that does not fit the cap is
refused (413) before it is read whole, the v0 signature and the timestamp are checked on the raw
bytes (401), and only then is the body decoded and parsed the way Slack sends it (JSON events,
form-encoded commands, form-encoded `payload=` JSON for interactivity); what does not parse, or
parses into a shape Slack never sends, is refused with 400. Bodies are never logged: a rejected
request's body can carry a `response_url` and the legacy verification `token`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Required
from urllib.parse import parse_qsl

from pydantic import AfterValidator, TypeAdapter, ValidationError
from slack_bolt import BoltRequest
from typing_extensions import TypedDict  # pydantic takes typing.TypedDict from Python 3.12 on

# Slack's payloads are far below this (a command is ~1 KB, an event with blocks a few KB).
MAX_BODY_BYTES = 1 << 20
# Slack's replay window: a request whose timestamp is further from now than this is refused.
TIMESTAMP_WINDOW = 5 * 60


class Rejected(Exception):
    """A request refused before dispatch: the HTTP status and one line saying why (no body)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def declared_length(headers: Mapping[str, str]) -> int | None:
    """Content-Length, refused when it is not a number or over the cap (before any byte is read)."""
    value = headers.get("content-length")
    if value is None:
        return None
    if not value.strip().isdigit():
        raise Rejected(400, "Content-Length is not a number")
    length = int(value)
    if length > MAX_BODY_BYTES:
        raise Rejected(413, f"body of {length} bytes is over the {MAX_BODY_BYTES}-byte cap")
    return length


class CappedBody:
    """Collects body chunks, refusing (413) the moment the total passes the cap."""

    def __init__(self, limit: int = MAX_BODY_BYTES) -> None:
        self.limit = limit
        self._chunks: list[bytes] = []
        self._size = 0

    def add(self, chunk: bytes) -> None:
        self._size += len(chunk)
        if self._size > self.limit:
            raise Rejected(413, f"body over the {self.limit}-byte cap")
        self._chunks.append(chunk)

    def bytes(self) -> bytes:
        return b"".join(self._chunks)


def verify_signature(
    secret: str, headers: Mapping[str, str], body: bytes, now: Callable[[], float] = time.time
) -> None:
    """Slack's v0 signature over the raw body and a timestamp inside the replay window."""
    timestamp = headers.get("x-slack-request-timestamp", "")
    signature = headers.get("x-slack-signature", "")
    if not timestamp or not signature:
        raise Rejected(401, "missing X-Slack-Signature or X-Slack-Request-Timestamp")
    if not timestamp.isascii() or not timestamp.isdigit():
        raise Rejected(401, "X-Slack-Request-Timestamp is not a number")
    if not _within_window(timestamp, now()):
        raise Rejected(401, "X-Slack-Request-Timestamp outside the 5-minute window")
    digest = hmac.new(secret.encode(), b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256)
    # compare_digest raises on a non-ASCII str: such a signature is simply not ours.
    if not signature.isascii() or not hmac.compare_digest("v0=" + digest.hexdigest(), signature):
        raise Rejected(401, "signature does not match")


# More digits than any Unix time near now (10 until 2286): outside the window, whatever its
# value. Converting it would cost time or fail (int() refuses over 4300 digits; float()
# overflows past ~309), which answered 500.
_MAX_TIMESTAMP_DIGITS = 12


def _within_window(timestamp: str, now: float) -> bool:
    """A string of ASCII digits within TIMESTAMP_WINDOW seconds of `now`, compared to the
    fraction of a second (as Bolt does): `now` cut to whole seconds let a request 300.9 s ahead in."""
    digits = timestamp.lstrip("0") or "0"
    if len(digits) > _MAX_TIMESTAMP_DIGITS:
        return False
    return abs(now - int(digits)) <= TIMESTAMP_WINDOW


def decode(body: bytes) -> str:
    """The body's text, decoded once: parsing and Bolt's signature check both read it."""
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise Rejected(400, "body is not UTF-8") from None


def parse_payload(text: str, content_type: str) -> dict[str, Any]:
    """The request as Slack sends it: a JSON object, a form, or a form whose `payload` is JSON."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind == "application/json" or (kind in _FORM and text.startswith("{")):
        # Bolt reads a body that starts with "{" as JSON whatever its Content-Type: agree with it.
        data = _json_object(text, "JSON body")
    elif kind in _FORM:
        try:
            form = dict(parse_qsl(text, keep_blank_values=True, strict_parsing=bool(text)))
        except ValueError:
            raise Rejected(400, "form body does not parse") from None
        data = _json_object(form["payload"], "payload field") if "payload" in form else form
    else:
        raise Rejected(400, f"unsupported Content-Type {kind!r}")
    check_shape(data)
    return data


_FORM = ("application/x-www-form-urlencoded", "")


def bolt_request(
    text: str, payload: dict[str, Any], headers: Mapping[str, Any], query: Mapping[str, Any] | None = None
) -> BoltRequest:
    """The request for Bolt, carrying the payload `parse_payload` made of `text`. Bolt's own
    parser takes any form body holding the word "payload" (a command `/vllm-digest payload
    size`) for an interactivity payload and, finding no such field, dispatches an empty
    request that no listener answers; it would also parse the body a second time. Built as
    Bolt builds a Socket Mode request (from the parsed payload), then made an HTTP one again."""
    request = BoltRequest(body=payload, query=dict(query or {}), headers=dict(headers), mode="socket_mode")
    request.raw_body, request.mode = text, "http"
    return request


def _json_object(text: str, what: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError:
        raise Rejected(400, f"{what} is not JSON") from None
    if not isinstance(data, dict):
        raise Rejected(400, f"{what} is not a JSON object")
    return data


# Slack's ids (`C0123ABC`, `U…`, `T…`) are about a dozen characters and its timestamps
# (`1700000000.000100`) seventeen; the store keeps them in String(64) and String(32) columns,
# where PostgreSQL refused anything longer and the request went unanswered: refused here instead.
def _at_most(width: int) -> AfterValidator:
    """A string no longer than `width`; a value of another type is the listeners' to judge."""

    def check(value: Any) -> Any:
        if isinstance(value, str) and len(value) > width:
            raise ValueError(f"longer than {width} characters")
        return value

    return AfterValidator(check)


Id = Annotated[Any, _at_most(64)]
Ts = Annotated[Any, _at_most(32)]
Obj = dict[str, Any]


class _Event(TypedDict, total=False):
    type: Required[str]
    channel: Id
    user: Id
    ts: Ts
    thread_ts: Ts
    message_ts: Ts


class _Action(TypedDict, total=False):
    action_id: str


class _Named(TypedDict, total=False):
    id: Id


class _Container(TypedDict, total=False):
    channel_id: Id
    message_ts: Ts
    thread_ts: Ts


class _Payload(TypedDict, total=False):
    """The fields Bolt and the handlers read before any listener runs, as Slack sends them
    (strict: a string where an object is read never reaches a matcher)."""

    type: str
    command: str
    text: str
    trigger_id: str
    channel_id: Id
    user_id: Id
    team_id: Id
    event: _Event
    view: Obj
    message: Obj
    container: _Container
    state: Obj
    team: _Named | str | None
    user: _Named | str
    channel: _Named | str
    enterprise: Obj | str | None
    authorizations: list[Obj]
    actions: list[_Action]


_PAYLOAD = TypeAdapter(_Payload)
# What a payload of each type must carry: Bolt's matchers read it by index (a 500 when missing).
_NEEDS = {
    "event_callback": "event",
    "block_actions": "actions",
    "interactive_message": "actions",
    "view_submission": "view",
    "view_closed": "view",
}


def check_shape(data: dict[str, Any]) -> None:
    """Refuse (400) a payload whose fields have types Slack never sends, so no listener,
    matcher or context extractor meets a string where it expects an object."""
    try:
        _PAYLOAD.validate_python(data, strict=True)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise Rejected(400, f"field {_path(data, error['loc'])!r}: {error['msg']}") from None
    _check_needed(data)


def _check_needed(data: dict[str, Any]) -> None:
    """What the payload's type must carry, read by index before any listener runs."""
    kind = data.get("type", "")
    needed = _NEEDS.get(kind)
    if needed is not None and (needed not in data or data[needed] == []):
        raise Rejected(400, f"{kind} payload without {needed!r}")
    if kind == "block_actions" and not all("action_id" in action for action in data["actions"]):
        raise Rejected(400, "action without a string 'action_id'")
    view = data.get("view") or {}
    if "callback_id" in view and not isinstance(
        view.get("type"), str
    ):  # Bolt's workflow-step check reads view["type"]
        raise Rejected(400, "view without a string 'type'")


def _path(data: Any, loc: tuple[int | str, ...]) -> str:
    """The field an error is about, as a path into the payload (without pydantic's union tags)."""
    path: list[str] = []
    for part in loc:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            continue
        path.append(str(part))
    return ".".join(path)


def describe(data: dict[str, Any]) -> str:
    """A short name for a payload in a log line (type, command, action ids, event type) — no text."""
    if "command" in data:
        return f"command {data['command']}"
    kind = str(data.get("type") or "request")
    if isinstance(data.get("event"), dict):
        return f"{kind} {data['event'].get('type')}"
    actions = data.get("actions")
    if isinstance(actions, list) and actions:
        return f"{kind} " + ",".join(str(a.get("action_id")) for a in actions if isinstance(a, dict))
    if isinstance(data.get("view"), dict):
        return f"{kind} {data['view'].get('callback_id', '')}".rstrip()
    return kind
