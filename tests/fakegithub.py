"""A fake GitHub REST API on loopback, for tests that fetch PR facts through a real HTTP boundary.

`FakeGitHub` is a real `ThreadingHTTPServer` on 127.0.0.1 and a free port, so the bot in-process
(`GitHubClient(fake.api_url)`) and `vllm-digest` subprocesses (`GITHUB_API_URL=fake.api_url`) both
talk to it. It serves `GET /repos/{o}/{r}/pulls/{n}`, `/pulls/{n}/reviews` and
`/issues/{n}/timeline` from what a test put in, with ETags (a matching `If-None-Match` is a 304),
records every request, and can be told to fail:

    fake = FakeGitHub()
    fake.add_pr("vllm-project/vllm", 53529, merged_at="2026-08-24T10:00:00Z", title="…")
    fake.add_review("vllm-project/vllm", 53529, "alice", "APPROVED")
    fake.add_cross_reference("vllm-project/vllm", 53529, 53600, title='Revert "…"')
    fake.fail(403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1900000000"})
    fake.fail(502)                       # the next request gets a 502
    fake.hang()                          # the next requests get no answer until `release()`
    fake.revoke("ghp_old")               # a 401 for that token
    fake.wait_for(lambda calls: len(calls) >= 3)
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PATH_RE = re.compile(
    r"^/repos/(?P<repo>[^/]+/[^/]+)/(?P<kind>pulls|issues)/(?P<n>\d+)(?P<rest>/reviews|/timeline)?$"
)


@dataclass(frozen=True)
class Call:
    """One request: its path (without the query), headers (lower-case names), the status sent."""

    path: str
    headers: dict[str, str]
    status: int


@dataclass
class _Failure:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: str = '{"message": "failure"}'


class FakeGitHub:
    """A loopback GitHub REST API; see the module docstring. Thread-safe; close() when done."""

    def __init__(self) -> None:
        self.pulls: dict[tuple[str, int], dict[str, Any]] = {}
        self.reviews: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self.timelines: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self.calls: list[Call] = []
        self._failures: list[_Failure] = []
        self._revoked: set[str] = set()
        self._hanging = threading.Event()
        self._released = threading.Event()
        self._changed = threading.Condition()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()

    # -- what GitHub knows ---------------------------------------------------------------------

    def add_pr(self, repo: str, number: int, **fields: Any) -> None:
        """A PR; `merged_at` makes it merged (and closed), `state="closed"` alone closed unmerged."""
        merged_at = fields.pop("merged_at", None)
        state = fields.pop("state", "closed" if merged_at else "open")
        self.pulls[(repo, number)] = {
            "number": number,
            "state": state,
            "merged": merged_at is not None,
            "merged_at": merged_at,
            "closed_at": fields.pop("closed_at", merged_at),
            "created_at": fields.pop("created_at", "2026-08-01T08:00:00Z"),
            "title": fields.pop("title", f"PR {number}"),
            "user": {"login": fields.pop("author", "someone")},
            "labels": [{"name": name} for name in fields.pop("labels", [])],
            "additions": fields.pop("additions", 10),
            "deletions": fields.pop("deletions", 2),
            "changed_files": fields.pop("changed_files", 1),
            **fields,
        }
        self.reviews.setdefault((repo, number), [])
        self.timelines.setdefault((repo, number), [])

    def add_review(self, repo: str, number: int, user: str, state: str) -> None:
        self.reviews[(repo, number)].append({"user": {"login": user}, "state": state})

    def add_cross_reference(
        self, repo: str, number: int, source: int, *, title: str = "", body: str = "", merged: bool = True
    ) -> None:
        """A later PR `source` of the same repository that references PR `number`."""
        self.timelines[(repo, number)].append(
            {
                "event": "cross-referenced",
                "source": {
                    "type": "issue",
                    "issue": {
                        "number": source,
                        "title": title,
                        "body": body,
                        "state": "closed" if merged else "open",
                        "pull_request": {"merged_at": "2026-09-02T00:00:00Z" if merged else None},
                        "repository": {"full_name": repo},
                    },
                },
            }
        )

    # -- failures ------------------------------------------------------------------------------

    def fail(self, status: int, headers: dict[str, str] | None = None, body: str | None = None) -> None:
        """The next request gets this status (and headers) instead of its answer."""
        with self._changed:
            self._failures.append(_Failure(status, headers or {}, body or '{"message": "failure"}'))

    def hang(self) -> None:
        """Requests get no answer until `release()` (the client's timeout ends them)."""
        self._released.clear()
        self._hanging.set()

    def release(self) -> None:
        self._hanging.clear()
        self._released.set()

    def revoke(self, token: str) -> None:
        self._revoked.add(token)

    def wait_for(self, done: Callable[[list[Call]], bool], timeout: float = 5.0) -> list[Call]:
        """The calls once `done(calls)` holds; AssertionError after `timeout` seconds."""
        with self._changed:
            if not self._changed.wait_for(lambda: done(list(self.calls)), timeout):
                raise AssertionError(f"fake GitHub: condition not met; calls: {[c.path for c in self.calls]}")
            return list(self.calls)

    # -- serving -------------------------------------------------------------------------------

    def _answer(self, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        token = headers.get("authorization", "").removeprefix("Bearer ")
        if token and token in self._revoked:
            return 401, {}, b'{"message": "Bad credentials"}'
        with self._changed:
            failure = self._failures.pop(0) if self._failures else None
        if failure is not None:
            return failure.status, failure.headers, failure.body.encode()
        body = self._resource(path)
        if body is None:
            return 404, {}, b'{"message": "Not Found"}'
        data = json.dumps(body, sort_keys=True).encode()
        etag = '"' + hashlib.sha1(data).hexdigest() + '"'
        limits = {"X-RateLimit-Remaining": "4999", "X-RateLimit-Reset": "1900000000", "ETag": etag}
        if headers.get("if-none-match") == etag:
            return 304, limits, b""
        return 200, limits, data

    def _resource(self, path: str) -> Any:
        match = PATH_RE.match(path)
        if match is None:
            return None
        key = (match["repo"], int(match["n"]))
        kind = (match["kind"], match["rest"] or "")
        store: dict[tuple[str, int], Any] = {
            ("pulls", ""): self.pulls,
            ("pulls", "/reviews"): self.reviews,
            ("issues", "/timeline"): self.timelines,
        }.get(kind, {})
        return store.get(key)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                headers = {name.lower(): value for name, value in self.headers.items()}
                if fake._hanging.is_set():
                    fake._record(Call(path, headers, 0))
                    fake._released.wait(30)
                    return
                status, extra, body = fake._answer(path, headers)
                fake._record(Call(path, headers, status))
                self.send_response(status)
                for name, value in extra.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def _record(self, call: Call) -> None:
        with self._changed:
            self.calls.append(call)
            self._changed.notify_all()
