"""Each person's interface language: `DIGEST_LANGUAGE=auto` follows their Slack locale.

Cached per user (a locale rarely changes, and every answer would otherwise cost a round trip); a
failed lookup answers in the channel language and is retried soon, so a Slack hiccup never blocks
an answer. docs/slack.md.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Literal, get_args

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from chatbot.expiring import ExpiringCache
from chatbot.slack.i18n import Language

log = logging.getLogger(__name__)

LanguageSetting = Literal["auto", "zh", "en"]
# A locale in none of the catalogue's languages reads English.
OTHER_LOCALES: Language = "en"
LANGUAGES: tuple[Language, ...] = get_args(Language)

KEEP_LOCALE = 6 * 3600.0
RETRY_FAILED = 60.0
MAX_USERS = 10_000


def language_of_locale(locale: str | None, default: Language) -> Language:
    """`en-US` → en, `zh-CN` / `zh_TW` / `zh-Hant` → zh, `ja-JP` → en; no locale → `default`."""
    if not locale or not locale.strip():
        return default
    primary = locale.strip().replace("_", "-").split("-", 1)[0].casefold()
    for language in LANGUAGES:
        if primary == language:
            return language
    return OTHER_LOCALES


def slack_locale(client: WebClient) -> Callable[[str], str | None]:
    """A user's locale from `users.info` (scope users:read); raises on Slack errors."""

    def lookup(user_id: str) -> str | None:
        response = client.users_info(user=user_id, include_locale=True)
        user = response.get("user") or {}
        locale = user.get("locale")
        return str(locale) if locale else None

    return lookup


class UserLanguages:
    """`languages(user_id)` → the language to answer that person in."""

    def __init__(
        self,
        setting: LanguageSetting,
        locale_of: Callable[[str], str | None] | None = None,
        *,
        default: Language = "zh",
        keep: float = KEEP_LOCALE,
        retry_failed: float = RETRY_FAILED,
        max_users: int = MAX_USERS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.setting: LanguageSetting = setting
        self.default: Language = default if setting == "auto" else setting
        self.locale_of = locale_of
        self.keep = keep
        self.retry_failed = retry_failed
        self.max_users = max_users
        self.clock = clock
        self._cache: ExpiringCache[str, Language] = ExpiringCache(keep, max_users, clock)

    def cached(self, user_id: str | None) -> Language | None:
        """The language if it is known without asking Slack (forced, or cached and fresh)."""
        if self.setting != "auto" or self.locale_of is None or not user_id:
            return self.default
        return self._cache.get(user_id)

    def __call__(self, user_id: str | None) -> Language:
        known = self.cached(user_id)
        if known is not None:
            return known
        assert user_id is not None and self.locale_of is not None
        try:
            language = language_of_locale(self.locale_of(user_id), self.default)
            keep = self.keep
        except (SlackApiError, SlackClientError, OSError) as exc:
            log.warning("locale of %s unknown (%s); answering in %s", user_id, exc, self.default)
            language, keep = self.default, self.retry_failed
        self._cache.put(user_id, language, keep)
        return language
