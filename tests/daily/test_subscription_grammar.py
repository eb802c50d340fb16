"""The subscribe grammar (core): times, days in English and Chinese, zones, flags; topics
resolved through the glossary with unknown words named."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatbot.daily.subscription import (
    EVERY_DAY,
    WEEKDAYS,
    GrammarError,
    Schedule,
    Subscription,
    default_schedule,
    parse_days,
    parse_subscribe,
    parse_time,
    parse_zone,
)
from chatbot.daily.topics import entries_on, resolve_topics
from chatbot.digest.library import Library
from chatbot.search import SearchIndex, load_glossary


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("weekdays", WEEKDAYS),
        ("daily", EVERY_DAY),
        ("every day", EVERY_DAY),
        ("mon,thu", {0, 3}),
        ("Mon, Thu", {0, 3}),
        ("monday and thursday", {0, 3}),
        ("mon-fri", WEEKDAYS),
        ("fri-mon", {4, 5, 6, 0}),
        ("周一,周四", {0, 3}),
        ("周一，周四", {0, 3}),
        ("周一、周四", {0, 3}),
        ("周一周四", {0, 3}),
        ("每周一和周四", {0, 3}),
        ("星期二", {1}),
        ("周一至周五", WEEKDAYS),
        ("周一到周三", {0, 1, 2}),
        ("工作日", WEEKDAYS),
        ("每天", EVERY_DAY),
        ("周末", {5, 6}),
        ("weekends", {5, 6}),
    ],
)
def test_days_in_english_and_chinese(text: str, days: set[int]) -> None:
    assert parse_days(text) == frozenset(days)


@pytest.mark.parametrize("text", ["someday", "mon,blursday", "周八", "-fri", "mon-", "and"])
def test_a_bad_day_is_named(text: str) -> None:
    with pytest.raises(GrammarError) as raised:
        parse_days(text)
    assert "\n" not in str(raised.value)


ENGLISH = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
SHORT = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
CHINESE = ["周一", "周二", "周三", "周四", "周五", "周六", "周日"]


@given(
    st.lists(st.integers(0, 6), min_size=1, max_size=7),
    st.sampled_from([ENGLISH, SHORT, CHINESE]),
    st.sampled_from([",", ", ", "、", " and ", "，", " "]),
    st.booleans(),
)
def test_any_list_of_days_reads_back(days: list[int], names: list[str], separator: str, upper: bool) -> None:
    text = separator.join(names[d] for d in days)
    assert parse_days(text.upper() if upper else text) == frozenset(days)


@pytest.mark.parametrize(
    ("word", "time"),
    [
        ("10:00", (10, 0)),
        ("9:30", (9, 30)),
        ("09:05", (9, 5)),
        ("10am", (10, 0)),
        ("3pm", (15, 0)),
        ("12am", (0, 0)),
        ("10点", (10, 0)),
        ("10点半", (10, 30)),
        ("10点15", (10, 15)),
        ("10：30", (10, 30)),
        ("7", (7, 0)),
    ],
)
def test_times(word: str, time: tuple[int, int]) -> None:
    assert parse_time(word) == time


@pytest.mark.parametrize("word", ["25:00", "10:75", "noon", "13pm", "10:5", "ten"])
def test_a_bad_time_is_named(word: str) -> None:
    with pytest.raises(GrammarError, match="not a time"):
        parse_time(word)


def test_zones_by_name_case_and_city() -> None:
    assert parse_zone("Europe/Berlin") == "Europe/Berlin"
    assert parse_zone("asia/shanghai") == "Asia/Shanghai"
    assert parse_zone("UTC") == "UTC"
    assert parse_zone("berlin") == "Europe/Berlin"
    assert parse_zone("New_York") == "America/New_York"
    with pytest.raises(GrammarError, match="unknown time zone 'Mars/Olympus'"):
        parse_zone("Mars/Olympus")


def test_the_whole_command() -> None:
    request = parse_subscribe("kv cache, offload at 10:00 on weekdays tz Europe/Berlin")
    assert request.topic_words == ["kv", "cache,", "offload"]
    assert request.time == (10, 0)
    assert request.days == WEEKDAYS
    assert request.zone == "Europe/Berlin"
    request = parse_subscribe("多模态 周一,周四 10点半 strict announce off")
    assert (request.topic_words, request.days, request.time) == (["多模态"], frozenset({0, 3}), (10, 30))
    assert request.strict is True and request.announce is False
    assert parse_subscribe("").topic_words == []


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("kv cache at 25:00", "25:00"),
        ("kv cache on someday", "someday"),
        ("kv cache tz Mars/Olympus", "Mars/Olympus"),
        ("kv cache at", "'at'"),
        ("kv cache on", "'on'"),
        ("announce maybe", "'announce'"),
    ],
)
def test_bad_arguments_name_the_word(text: str, named: str) -> None:
    with pytest.raises(GrammarError) as raised:
        parse_subscribe(text)
    assert named in str(raised.value)


def test_apply_keeps_what_the_request_does_not_say() -> None:
    base = Subscription("C1", Schedule(9, 30, WEEKDAYS, "Asia/Shanghai"))
    first = parse_subscribe("at 10:00 tz Europe/Berlin").apply(base, [])
    second = parse_subscribe("on mon,thu").apply(first, [])
    assert second.schedule == Schedule(10, 0, frozenset({0, 3}), "Europe/Berlin")
    assert second.schedule.describe() == "Mon, Thu 10:00 Europe/Berlin"
    assert second.schedule.describe("zh") == "周一、周四 10:00 Europe/Berlin"


def test_default_schedule_reads_daily_cron() -> None:
    assert default_schedule("30 9 * * 1-5", "Asia/Shanghai") == Schedule(9, 30, WEEKDAYS, "Asia/Shanghai")
    assert default_schedule("0 10 * * 1,4", "UTC").days == frozenset({0, 3})
    assert default_schedule("0 8 * * 0", "UTC").days == frozenset({6})
    assert default_schedule("*/5 * * * *", "UTC") == Schedule(9, 30, WEEKDAYS, "UTC")


@pytest.fixture(scope="module")
def index(seed_library: Library) -> SearchIndex:
    return SearchIndex.build(seed_library.entries, load_glossary())


def test_topics_resolve_through_the_glossary_in_any_language(index: SearchIndex) -> None:
    glossary = index.glossary
    resolved = resolve_topics(["kv", "cache,", "多模态", "spec", "decode"], glossary, index)
    assert [t.key for t in resolved.topics] == ["kv-cache", "multimodal", "speculative-decoding"]
    assert resolved.unknown == []
    chinese = resolve_topics(["投机解码"], glossary, index)
    assert [t.key for t in chinese.topics] == ["speculative-decoding"]


def test_unknown_topic_words_are_named_not_guessed(index: SearchIndex) -> None:
    resolved = resolve_topics(["kv", "cache", "frobnicate", "berlin"], index.glossary, index)
    assert [t.key for t in resolved.topics] == ["kv-cache"]
    assert resolved.unknown == ["frobnicate", "berlin"]


def test_a_topic_selects_the_entries_its_search_finds(index: SearchIndex) -> None:
    resolved = resolve_topics(["多模态"], index.glossary, index)
    selected = entries_on(resolved.topics, index)
    assert selected == {hit.entry.id for hit in index.rank("multimodal")}
    assert 0 < len(selected) < len(index.entries)
