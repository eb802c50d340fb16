"""A fake Slack Web API on loopback, for tests that talk to Slack through a real HTTP boundary.

`FakeSlack` is a real `ThreadingHTTPServer` on 127.0.0.1 and a free port, so it serves the bot
in-process (`WebClient(base_url=fake.api_url)`) and `vllm-digest` subprocesses alike
(`SLACK_API_URL=fake.api_url`). It answers like Slack: `{"ok": true, ...}` envelopes, form or
JSON bodies, token in the Authorization header. It keeps the messages it was sent, records
every call, can be told to fail, and lets a test wait for a call without sleeping.

    fake = FakeSlack()                  # or the `fake_slack` pytest fixture
    client = WebClient(token="xoxb-test", base_url=fake.api_url)
    fake.fail("chat.postMessage", status=429, retry_after=0)
    fake.fail("chat.postMessage", error="channel_not_found")
    fake.fail("chat.postMessage", status=502, bare=True)   # a proxy's HTML page, no Slack error code
    fake.rate_limit("chat.postMessage", every=1.0, retry_after=2)  # per channel, as Slack does
    fake.early_calls("chat.postMessage")              # calls sent while a Retry-After still ran
    fake.answer_late("chat.postMessage", 3.0)         # acts on the call, answers 3 s later
    fake.drop_after_acting("chat.postMessage")        # acts on the call, then hangs up unanswered
    call = fake.wait_for("chat.postMessage")          # the first call, or AssertionError after 5 s
    fake.messages("C1")                               # what the channel holds, oldest first
    url = fake.response_url("abc")                    # a slash command's response_url
    fake.wait_for("response")                         # a POST to any response URL

Methods: auth.test, chat.postMessage, chat.postEphemeral, chat.update, chat.unfurl,
conversations.history, conversations.replies, views.publish, views.open, views.push, users.info
(`fake.set_locale("U1", "zh-CN")`, everyone else is `en-US`, Slack's default;
`fake.users["U1"] = {"is_admin": True}`), conversations.members, conversations.info and users.conversations
(`fake.set_members("CSECRET", ["U2"], private=True)`; a channel nobody was put in holds the fake
workspace's `people`: the ids the test helpers send as), apps.connections.open (the `ws://` URL of
`fake.socket_mode`, a tests/fakesocketmode.py backend, for an app-level `xapp-` token), response
URLs (`/response/<id>`); any other method answers `{"ok": false, "error": "unknown_method"}` (and
is recorded).
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

BOT_USER_ID = "UBOT0001"
# The fake workspace's people: every channel not given members holds them (the ids tests send as).
PEOPLE = (
    *("U0ASKER", "U0000USER", "U0HUMAN", "U1", "U2", "U0EN", "U0ZH", "U0A", "U0AUTHOR", "U0ALICE"),
    *("U0ADMIN", "U0OWNER", "U0OTHER", "U0NOBODY", "U0GONE", "U07ALICE42", "U07BOB0099"),
)
BOT_ID = "BBOT0001"
TEAM_ID = "T0000001"

# What a proxy in front of Slack answers for a bare 5xx: HTML, no JSON envelope, no error code.
_BARE_BODY = b"<html><body><h1>%d</h1>upstream trouble</body></html>"
# Form fields that Slack clients send as JSON strings.
_JSON_FIELDS = ("blocks", "attachments", "metadata", "unfurls", "view")


@dataclass(frozen=True)
class Call:
    """One request the fake received: the API method (or "response"), its params, its headers."""

    method: str
    params: dict[str, Any]
    headers: dict[str, str]
    path: str
    status: int = 200
    response: dict[str, Any] = field(default_factory=dict)
    at: float = field(default_factory=time.monotonic)  # when it arrived (time.monotonic)

    @property
    def token(self) -> str | None:
        auth = self.headers.get("authorization", "")
        return auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else self.params.get("token")


@dataclass(frozen=True)
class Failure:
    """A queued failure: an HTTP status (500, 429 with Retry-After) or a Slack error code;
    `bare`: a non-JSON body, as a proxy or load balancer in front of Slack answers."""

    status: int = 200
    error: str | None = None
    retry_after: int | None = None
    bare: bool = False


class FakeSlack:
    """A loopback Slack Web API; see the module docstring. Thread-safe; close() when done."""

    def __init__(self, bot_user_id: str = BOT_USER_ID, team_id: str = TEAM_ID) -> None:
        self.bot_user_id = bot_user_id
        self.team_id = team_id
        self._lock = threading.Condition()
        self._calls: list[Call] = []
        self._failures: dict[str, list[Failure]] = {}
        self._refusals: list[tuple[str, str, str]] = []  # (method, text in the params, error)
        self._delays: dict[str, list[float]] = {}
        self._drops: dict[str, list[bool]] = {}
        self._closing = threading.Event()
        self._channels: dict[str, list[dict[str, Any]]] = {}
        self._last_ts = 0.0
        self._locales: dict[str, str] = {}
        self._views = 0
        self._rates: dict[str, tuple[float, int]] = {}  # method → (one call per `every` s, Retry-After)
        self._last_allowed: dict[tuple[str, str], float] = {}  # (method, channel) → when
        self._held_until: dict[tuple[str, str], float] = {}  # (method, channel) → end of Retry-After
        self._early: list[Call] = []
        self.users: dict[str, dict[str, Any]] = {}  # users.info answers: id → fields (is_admin, …)
        self.people: set[str] = set(PEOPLE)
        self._members: dict[str, list[str]] = {}
        self._private: set[str] = set()
        self.socket_mode: Any = None  # a FakeSocketMode whose URL apps.connections.open answers
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                fake._handle(self)

            def do_GET(self) -> None:
                fake._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), name="fake-slack", daemon=True
        )
        self._thread.start()

    # -- addresses -------------------------------------------------------------------------

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def api_url(self) -> str:
        """Base URL for `WebClient(base_url=...)` and `SLACK_API_URL` (ends with a slash)."""
        return f"{self.url}/api/"

    def response_url(self, key: str = "1") -> str:
        """A response_url for a slash command or button press; POSTs to it are method "response"."""
        return f"{self.url}/response/{key}"

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeSlack:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- test controls ---------------------------------------------------------------------

    def fail(
        self,
        method: str,
        *,
        status: int = 200,
        error: str | None = None,
        retry_after: int | None = None,
        bare: bool = False,
        times: int = 1,
    ) -> None:
        """Queue `times` failures for the next calls of `method` ("response" for response URLs).

        `status=500` answers HTTP 500 `{"ok": false, "error": "internal_error"}`; `status=429`
        answers 429 with `Retry-After: retry_after` (default 1); `error="channel_not_found"`
        answers 200 `{"ok": false, "error": ...}` (any status with `status=`); `bare=True`
        answers the status with an HTML page instead of JSON, so no Slack error code at all.
        """
        if status == 200 and (error is None or bare):
            raise ValueError("give an HTTP status other than 200 or a Slack error code")
        if status == 429 and retry_after is None:
            retry_after = 1
        with self._lock:
            failure = Failure(status, error, retry_after, bare)
            self._failures.setdefault(method, []).extend([failure] * times)

    def rate_limit(self, method: str, *, every: float = 1.0, retry_after: int = 1) -> None:
        """Slack's per-channel limit: one call of `method` per channel every `every` seconds; a
        call sooner is answered 429 `Retry-After: retry_after` and holds (method, channel) that
        long. Calls arriving before a hold is over are answered 429 too and kept in `early_calls`."""
        with self._lock:
            self._rates[method] = (every, retry_after)

    def early_calls(self, method: str | None = None) -> list[Call]:
        """Calls that arrived while their (method, channel) was held by an earlier Retry-After."""
        with self._lock:
            return [c for c in self._early if method is None or c.method == method]

    def refuse(self, method: str, error: str, *, containing: str) -> None:
        """Answer every later call of `method` whose parameters mention `containing` with 200
        `{"ok": false, "error": error}`: Slack refusing one message (its blocks) each time."""
        with self._lock:
            self._refusals.append((method, containing, error))

    def answer_late(self, method: str, seconds: float, *, times: int = 1) -> None:
        """The next `times` calls of `method` are carried out (a post is stored) but answered only
        after `seconds`: what a client that gave up earlier cannot tell from a lost request."""
        with self._lock:
            self._delays.setdefault(method, []).extend([seconds] * times)

    def drop_after_acting(self, method: str, *, times: int = 1) -> None:
        """The next `times` calls of `method` are carried out (a post is stored) and recorded, then
        the connection is closed without an answer: the client sees "Remote end closed connection
        without response", the way a response lost on the way back looks to it."""
        with self._lock:
            self._drops.setdefault(method, []).extend([True] * times)

    def calls(self, method: str | None = None) -> list[Call]:
        """Every recorded call (of one method), oldest first, failed ones included."""
        with self._lock:
            return [c for c in self._calls if method is None or c.method == method]

    def wait_for(
        self,
        method: str,
        count: int = 1,
        timeout: float = 5.0,
        where: Callable[[Call], bool] | None = None,
    ) -> Call:
        """Block until `count` calls of `method` (matching `where`) arrived; return the count-th.

        Raises AssertionError naming what did arrive when the timeout passes.
        """

        def matching() -> list[Call]:
            return [c for c in self._calls if c.method == method and (where is None or where(c))]

        with self._lock:
            if not self._lock.wait_for(lambda: len(matching()) >= count, timeout):
                seen = ", ".join(c.method for c in self._calls) or "nothing"
                raise AssertionError(f"no {count}× {method} within {timeout}s; calls so far: {seen}")
            return matching()[count - 1]

    def messages(self, channel: str) -> list[dict[str, Any]]:
        """Messages of a channel (thread replies included), oldest first."""
        with self._lock:
            return [dict(m) for m in self._channels.get(channel, [])]

    def add_message(
        self,
        channel: str,
        text: str,
        *,
        user: str = "U0000USER",
        thread_ts: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """Put a message into a channel as if someone (by default a human) had written it."""
        with self._lock:
            message: dict[str, Any] = {"type": "message", "user": user, "text": text, "ts": self._next_ts()}
            if thread_ts:
                message["thread_ts"] = thread_ts
            message.update(extra)
            self._channels.setdefault(channel, []).append(message)
            return dict(message)

    def set_members(self, channel: str, users: list[str], *, private: bool = False) -> None:
        """Who is in `channel` (conversations.members, users.conversations); a private channel
        the bot is not in answers channel_not_found, as Slack does."""
        with self._lock:
            self._members[channel] = list(users)
            if private:
                self._private.add(channel)

    def members_of(self, channel: str) -> list[str]:
        """The channel's members as the fake answers them."""
        with self._lock:
            return self._members_of(channel)

    def _members_of(self, channel: str) -> list[str]:
        if channel in self._members:
            return list(self._members[channel])
        return sorted(self.people | {self.bot_user_id})

    def set_locale(self, user: str, locale: str) -> None:
        """What users.info (include_locale) answers as `user`'s Slack locale."""
        with self._lock:
            self._locales[user] = locale

    # -- serving ---------------------------------------------------------------------------

    def _next_ts(self) -> str:
        self._last_ts = max(time.time(), self._last_ts + 0.000001)
        return f"{self._last_ts:.6f}"

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(request.path)
        length = int(request.headers.get("Content-Length") or 0)
        body = request.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in request.headers.items()}
        params: dict[str, Any] = dict(parse_qsl(parts.query))
        params.update(_parse_body(body, headers.get("content-type", "")))
        if parts.path.startswith("/response/"):
            method = "response"
        elif parts.path.startswith("/api/"):
            method = parts.path.removeprefix("/api/")
        else:
            method = parts.path.lstrip("/")
        with self._lock:
            failures = self._failures.get(method)
            failure = failures.pop(0) if failures else self._refusal(method, params)
            early = False
            if failure is None and method in self._rates:
                failure, early = self._rate_limited(method, str(params.get("channel") or ""))
            out: bytes | None = None
            payload: dict[str, Any]
            if failure is not None and failure.bare:
                status, payload, out = failure.status, {}, _BARE_BODY % failure.status
            elif failure is not None:
                status, payload = self._failure_payload(failure)
            elif method == "response":
                status, payload = 200, {"ok": True}
            else:
                status, payload = 200, self._answer(method, params, Call(method, params, headers, "").token)
            self._calls.append(Call(method, params, headers, request.path, status, payload))
            if early:
                self._early.append(self._calls[-1])
            self._lock.notify_all()
            delays = self._delays.get(method)
            delay = delays.pop(0) if delays else 0.0
            drops = self._drops.get(method)
            drop = drops.pop(0) if drops else False
        if drop:
            request.close_connection = True  # the server closes the socket: no status line at all
            return
        if delay:
            self._closing.wait(delay)  # answer late (or at close)
        if out is None:
            out = b"ok" if method == "response" and status == 200 else json.dumps(payload).encode()
        try:
            request.send_response(status)
            kind = "application/json" if out[:1] == b"{" else "text/html" if out[:1] == b"<" else "text/plain"
            request.send_header("Content-Type", kind)
            request.send_header("Content-Length", str(len(out)))
            if failure is not None and failure.retry_after is not None:
                request.send_header("Retry-After", str(failure.retry_after))
            request.end_headers()
            request.wfile.write(out)
        except (BrokenPipeError, ConnectionResetError):  # a client that gave up on a late answer
            request.close_connection = True

    def _rate_limited(self, method: str, channel: str) -> tuple[Failure | None, bool]:
        """(a 429 or None, whether the call came before an earlier Retry-After was over)."""
        every, retry_after = self._rates[method]
        key, now = (method, channel), time.monotonic()
        held_until = self._held_until.get(key, 0.0)
        if now < held_until:
            return Failure(429, retry_after=max(1, math.ceil(held_until - now))), True
        if now - self._last_allowed.get(key, -every) < every:
            self._held_until[key] = now + retry_after
            return Failure(429, retry_after=retry_after), False
        self._last_allowed[key] = now
        return None, False

    def _refusal(self, method: str, params: dict[str, Any]) -> Failure | None:
        said = json.dumps(params, ensure_ascii=False, default=str)
        refused = (error for m, text, error in self._refusals if m == method and text in said)
        error = next(refused, None)
        return Failure(error=error) if error is not None else None

    @staticmethod
    def _failure_payload(failure: Failure) -> tuple[int, dict[str, Any]]:
        if failure.error is not None:
            return failure.status, {"ok": False, "error": failure.error}
        if failure.status == 429:
            return 429, {"ok": False, "error": "ratelimited"}
        return failure.status, {"ok": False, "error": "internal_error"}

    def _answer(self, method: str, params: dict[str, Any], token: str | None = None) -> dict[str, Any]:
        """The Web API method's answer; called with the lock held."""
        if method == "auth.test":
            return {
                "ok": True,
                "url": "https://fake.slack.com/",
                "team": "Fake",
                "user": "vllm-digest",
                "team_id": self.team_id,
                "user_id": self.bot_user_id,
                "bot_id": BOT_ID,
                "is_enterprise_install": False,
            }
        if method in ("chat.postMessage", "chat.postEphemeral", "chat.update"):
            channel = params.get("channel")
            if not channel:
                return {"ok": False, "error": "channel_not_found"}
            if not (params.get("text") or params.get("blocks") or params.get("attachments")):
                return {"ok": False, "error": "no_text"}
            if method == "chat.postEphemeral":
                return {"ok": True, "message_ts": self._next_ts()}
            if method == "chat.update":
                return self._update(channel, params)
            return self._post(channel, params)
        if method == "chat.unfurl":
            if not params.get("unfurls") or not (params.get("unfurl_id") or params.get("ts")):
                return {"ok": False, "error": "invalid_arguments"}
            return {"ok": True}
        if method in ("views.publish", "views.open", "views.push"):
            return self._view(method, params)
        if method == "apps.connections.open":
            return self._socket_mode_url(token)
        reads: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "users.info": self._user,
            "conversations.history": self._history,
            "conversations.replies": self._replies,
            "conversations.members": self._conversation_members,
            "conversations.info": self._conversation_info,
            "users.conversations": self._user_conversations,
        }
        read = reads.get(method)
        return read(params) if read else {"ok": False, "error": "unknown_method"}

    def _socket_mode_url(self, token: str | None) -> dict[str, Any]:
        """Slack answers only an app-level token, and only when Socket Mode is on."""
        if not token or not token.startswith("xapp-"):
            return {"ok": False, "error": "not_allowed_token_type" if token else "not_authed"}
        if self.socket_mode is None:
            return {"ok": False, "error": "socket_mode_not_enabled"}
        return {"ok": True, "url": self.socket_mode.url}

    def _post(self, channel: str, params: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {
            "type": "message",
            "user": self.bot_user_id,
            "bot_id": BOT_ID,
            "text": params.get("text", ""),
            "ts": self._next_ts(),
        }
        for name in ("blocks", "attachments", "metadata", "thread_ts"):
            if params.get(name):
                message[name] = params[name]
        self._channels.setdefault(channel, []).append(message)
        return {"ok": True, "channel": channel, "ts": message["ts"], "message": message}

    def _update(self, channel: str, params: dict[str, Any]) -> dict[str, Any]:
        for message in self._channels.get(channel, []):
            if message["ts"] == params.get("ts"):
                for name in ("text", "blocks", "metadata"):
                    if name in params:
                        message[name] = params[name]
                return {"ok": True, "channel": channel, "ts": message["ts"], "text": message["text"]}
        return {"ok": False, "error": "message_not_found"}

    def _view(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        view = params.get("view")
        if not isinstance(view, dict) or "blocks" not in view:
            return {"ok": False, "error": "invalid_arguments"}
        if method == "views.publish" and not params.get("user_id"):
            return {"ok": False, "error": "invalid_arguments"}
        if method != "views.publish" and not params.get("trigger_id"):
            return {"ok": False, "error": "invalid_trigger_id"}
        self._views += 1
        return {"ok": True, "view": {**view, "id": f"V{self._views:08d}"}}

    def _user(self, params: dict[str, Any]) -> dict[str, Any]:
        user_id = str(params.get("user") or "")
        if not user_id:
            return {"ok": False, "error": "user_not_found"}
        user: dict[str, Any] = {
            "id": user_id,
            "name": user_id.lower(),
            "is_bot": False,
            "is_admin": False,
            "is_owner": False,
            **self.users.get(user_id, {}),
        }
        if _truthy(params.get("include_locale")):
            user["locale"] = self._locales.get(user_id, "en-US")
        return {"ok": True, "user": user}

    def _history(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = params.get("channel", "")
        oldest = float(params.get("oldest") or 0)
        latest = float(params.get("latest") or "inf")
        limit = int(params.get("limit") or 100)
        with_metadata = _truthy(params.get("include_all_metadata"))
        top_level = [
            m
            for m in self._channels.get(channel, [])
            if m.get("thread_ts", m["ts"]) == m["ts"] and oldest < float(m["ts"]) < latest
        ]
        newest_first = [_shown(m, with_metadata) for m in reversed(top_level)]
        return {"ok": True, "messages": newest_first[:limit], "has_more": len(newest_first) > limit}

    def _conversation_members(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = str(params.get("channel") or "")
        members = self._members_of(channel)
        if not channel or (channel in self._private and self.bot_user_id not in members):
            return {"ok": False, "error": "channel_not_found"}
        page, cursor = _page(members, params)
        return {"ok": True, "members": page, "response_metadata": {"next_cursor": cursor}}

    def _conversation_info(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = str(params.get("channel") or "")
        if not channel or (channel in self._private and self.bot_user_id not in self._members_of(channel)):
            return {"ok": False, "error": "channel_not_found"}
        im = channel.startswith("D")
        private = channel in self._private
        return {
            "ok": True,
            "channel": {
                "id": channel,
                "is_channel": not (im or private),
                "is_im": im,
                "is_private": private or im,
            },
        }

    def _user_conversations(self, params: dict[str, Any]) -> dict[str, Any]:
        user = str(params.get("user") or self.bot_user_id)
        known = sorted(set(self._channels) | set(self._members))
        mine = [
            {"id": c, "is_channel": c not in self._private, "is_private": c in self._private}
            for c in known
            if user in self._members_of(c)
            and (c not in self._private or self.bot_user_id in self._members_of(c))
        ]
        page, cursor = _page(mine, params)
        return {"ok": True, "channels": page, "response_metadata": {"next_cursor": cursor}}

    def _replies(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, ts = params.get("channel", ""), params.get("ts", "")
        thread = [m for m in self._channels.get(channel, []) if m["ts"] == ts or m.get("thread_ts") == ts]
        if not thread:
            return {"ok": False, "error": "thread_not_found"}
        with_metadata = _truthy(params.get("include_all_metadata"))
        return {"ok": True, "messages": [_shown(m, with_metadata) for m in thread], "has_more": False}


def _page(items: list[Any], params: dict[str, Any]) -> tuple[list[Any], str]:
    """One page of `items` by Slack's cursor (`limit`, `cursor`: an offset here) and the next cursor."""
    start = int(params.get("cursor") or 0)
    limit = int(params.get("limit") or 100)
    end = start + limit
    return items[start:end], str(end) if end < len(items) else ""


def _shown(message: dict[str, Any], with_metadata: bool) -> dict[str, Any]:
    shown = dict(message)
    if not with_metadata:
        shown.pop("metadata", None)
    return shown


def _truthy(value: Any) -> bool:
    return value in (True, 1, "1", "true", "True")


def _parse_body(body: bytes, content_type: str) -> dict[str, Any]:
    if not body:
        return {}
    text = body.decode("utf-8")
    if content_type.startswith("application/json"):
        data = json.loads(text)
        return data if isinstance(data, dict) else {"payload": data}
    params: dict[str, Any] = dict(parse_qsl(text, keep_blank_values=True))
    for name in _JSON_FIELDS:
        if isinstance(params.get(name), str) and params[name][:1] in ("[", "{"):
            params[name] = json.loads(params[name])
    return params
