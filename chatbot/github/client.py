"""A polite GitHub REST client (httpx): conditional requests, rate limits honoured, token fallback.

Every GET carries the ETag GitHub gave last time (`If-None-Match`), so an unchanged resource is a
304 that costs no quota. When GitHub says the quota is spent (`X-RateLimit-Remaining: 0` with
`X-RateLimit-Reset`), or asks to wait (`Retry-After`, a secondary rate limit), nothing is sent
until then: a call in between raises `RateLimited` without touching the network. A revoked
token (401) is said once, and the client goes on unauthenticated.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

log = logging.getLogger("chatbot.github")

# What a secondary rate limit without Retry-After asks for: at least a minute (GitHub's docs).
SECONDARY_WAIT = dt.timedelta(minutes=1)
HEADERS = {
    "Accept": "application/vnd.github+json",
    "X-GitHub-Api-Version": "2022-11-28",
    "User-Agent": "vllm-digest",
}


class GitHubUnavailable(Exception):
    """GitHub did not answer usefully (5xx, timeout, refused): keep the last facts, retry later."""


class RateLimited(GitHubUnavailable):
    """GitHub asked to wait until `until` (UTC); nothing is sent before then."""

    def __init__(self, until: dt.datetime) -> None:
        super().__init__(f"GitHub rate limit: waiting until {until:%Y-%m-%d %H:%M:%S} UTC")
        self.until = until


class NotFound(Exception):
    """GitHub does not know the resource (404)."""


@dataclass(frozen=True)
class Fetched:
    """One GET's outcome: `body` None when GitHub said 304 (the stored copy still holds)."""

    body: Any
    etag: str | None


class GitHubClient:
    """GETs against GITHUB_API_URL; one instance per process (it holds the rate-limit wait)."""

    def __init__(
        self,
        api_url: str,
        token: str | None = None,
        *,
        timeout: float = 10.0,
        clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.token = token
        self.clock = clock
        self.blocked_until: dt.datetime | None = None
        self._http = httpx.Client(timeout=timeout, headers=HEADERS, follow_redirects=True)
        if token is None:
            log.warning("GitHub: no GITHUB_TOKEN; unauthenticated (60 requests an hour)")

    def close(self) -> None:
        self._http.close()

    def get(self, path: str, etag: str | None = None) -> Fetched:
        """GET `path` (`/repos/o/r/pulls/1`); `etag`: the stored one, for a conditional request."""
        now = self.clock()
        if self.blocked_until is not None and now < self.blocked_until:
            raise RateLimited(self.blocked_until)
        response = self._send(path, etag)
        if response.status_code == 401 and self.token is not None:
            log.warning("GitHub: GITHUB_TOKEN was refused (401, revoked?); going on unauthenticated")
            self.token = None
            response = self._send(path, etag)
        return self._read(response)

    def _send(self, path: str, etag: str | None) -> httpx.Response:
        headers = {"If-None-Match": etag} if etag else {}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            return self._http.get(self.api_url + path, headers=headers)
        except httpx.HTTPError as exc:
            raise GitHubUnavailable(f"GitHub: {type(exc).__name__} on {path}") from None

    def _read(self, response: httpx.Response) -> Fetched:
        """The body or 304; the rate-limit headers noted for the next call."""
        wait = self._wait_asked(response)
        if wait is not None:
            self.blocked_until = wait
        status = response.status_code
        if status == 304:
            return Fetched(None, response.headers.get("ETag"))
        if status == 404:
            raise NotFound(response.url.path)
        if wait is not None and status in (403, 429):
            raise RateLimited(wait)
        if status >= 400:
            raise GitHubUnavailable(f"GitHub: HTTP {status} on {response.url.path}")
        try:
            body = response.json()
        except ValueError:
            raise GitHubUnavailable(f"GitHub: not JSON on {response.url.path}") from None
        return Fetched(body, response.headers.get("ETag"))

    def _wait_asked(self, response: httpx.Response) -> dt.datetime | None:
        """Until when GitHub asks to send nothing: Retry-After, a spent quota's reset, or a
        secondary limit's minute; None when it does not."""
        headers = response.headers
        now = self.clock()
        retry_after = headers.get("Retry-After", "").strip()
        if retry_after.isdigit():
            return now + dt.timedelta(seconds=int(retry_after))
        if headers.get("X-RateLimit-Remaining", "").strip() == "0":
            reset = headers.get("X-RateLimit-Reset", "").strip()
            if reset.isdigit():
                return max(now, dt.datetime.fromtimestamp(int(reset), dt.UTC))
            return now + SECONDARY_WAIT
        if response.status_code in (403, 429) and "rate limit" in response.text.lower():
            return now + SECONDARY_WAIT
        return None
