"""Each person's language: Slack locales to interface languages, the cache, forced settings."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from slack_sdk.errors import SlackApiError

from chatbot.settings import Settings
from chatbot.slack.locale import UserLanguages, language_of_locale


@pytest.mark.parametrize(
    ("locale", "language"),
    [
        ("en-US", "en"),
        ("en-GB", "en"),
        ("zh-CN", "zh"),
        ("zh-TW", "zh"),
        ("zh_Hant_TW", "zh"),
        ("ZH-cn", "zh"),
        ("ja-JP", "en"),
        ("fr-FR", "en"),
        ("es-LA", "en"),
    ],
)
def test_slack_locales_map_to_a_catalogue_language(locale: str, language: str) -> None:
    assert language_of_locale(locale, "zh") == language


@given(st.text(max_size=20))
def test_any_locale_gets_a_language_of_the_catalogue(locale: str) -> None:
    assert language_of_locale(locale, "zh") in ("zh", "en")


def test_no_locale_is_the_default() -> None:
    assert language_of_locale(None, "zh") == "zh"
    assert language_of_locale("  ", "en") == "en"
    channel = [Settings(_env_file=None, language=lang).channel_language for lang in ("auto", "zh", "en")]  # type: ignore[call-arg]
    assert channel == ["zh", "zh", "en"]


class Locales:
    """users.info stand-in counting lookups; `fail` makes the next lookups raise like Slack."""

    def __init__(self, locales: dict[str, str]) -> None:
        self.locales = locales
        self.asked: list[str] = []
        self.fail = False

    def __call__(self, user: str) -> str | None:
        self.asked.append(user)
        if self.fail:
            raise SlackApiError("user_not_found", {"ok": False, "error": "user_not_found"})
        return self.locales.get(user)


def test_locales_are_cached_until_they_expire() -> None:
    now = [0.0]
    locales = Locales({"U1": "en-US", "U2": "zh-CN"})
    languages = UserLanguages("auto", locales, keep=100.0, clock=lambda: now[0])
    assert languages.cached("U1") is None
    assert [languages("U1"), languages("U2"), languages("U1")] == ["en", "zh", "en"]
    assert locales.asked == ["U1", "U2"] and languages.cached("U1") == "en"
    now[0] = 101.0
    locales.locales["U1"] = "zh-TW"
    assert languages("U1") == "zh" and locales.asked == ["U1", "U2", "U1"]


def test_a_failed_lookup_answers_in_the_default_and_is_retried_soon() -> None:
    now = [0.0]
    locales = Locales({"U1": "en-US"})
    locales.fail = True
    languages = UserLanguages("auto", locales, keep=1000.0, retry_failed=10.0, clock=lambda: now[0])
    assert languages("U1") == "zh" and languages("U1") == "zh"
    assert locales.asked == ["U1"]
    locales.fail = False
    now[0] = 11.0
    assert languages("U1") == "en"


def test_a_forced_language_never_looks_up() -> None:
    locales = Locales({"U1": "zh-CN"})
    languages = UserLanguages("en", locales)
    assert languages("U1") == "en" and languages(None) == "en" and locales.asked == []


def test_the_cache_is_bounded() -> None:
    locales = Locales({})
    languages = UserLanguages("auto", locales, max_users=2)
    for user in ("U1", "U2", "U3"):
        languages(user)
    assert languages.cached("U1") is None and languages.cached("U3") == "zh"
