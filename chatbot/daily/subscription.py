"""A channel's subscription and the `subscribe` grammar: `[TOPIC …] [at HH:MM] [on DAYS] [tz ZONE]`.

Core: no Slack, no database, no scheduler. The words of the schedule (day names in English and
Chinese, `weekdays`, `工作日`, range and list separators) are data in `data/schedule.yaml`; the
grammar recognises shapes — a time, a run of day words, a zone — and leaves every other word to
the topic resolver (`chatbot.daily.topics`), which names what it does not know.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, available_timezones

from chatbot.yamlfast import load_yaml

SCHEDULE_WORDS = Path(__file__).resolve().parent / "data" / "schedule.yaml"
DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
DAY_NAMES_ZH = ("周一", "周二", "周三", "周四", "周五", "周六", "周日")
APS_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
WEEKDAYS = frozenset(range(5))
EVERY_DAY = frozenset(range(7))

# Keywords of the grammar (and their Chinese forms): what follows them is their argument.
AT = frozenset({"at", "@", "在"})
ON = frozenset({"on", "days"})
TZ = frozenset({"tz", "timezone", "zone", "时区"})
FLAGS = {"strict": ("strict", True), "严格": ("strict", True), "loose": ("strict", False)}
ANNOUNCE = frozenset({"announce", "announcements", "通知", "公告"})
ON_OFF = {
    "on": True,
    "yes": True,
    "开": True,
    "开启": True,
    "off": False,
    "no": False,
    "关": False,
    "关闭": False,
}

_TIME = re.compile(
    r"^(?P<h>\d{1,2})(?:(?:[:：.h]|点|點|時|时)(?P<m>\d{2})?(?:分)?)?(?P<half>半)?\s*(?P<ampm>am|pm|a\.m\.|p\.m\.)?$",
    re.IGNORECASE,
)


class GrammarError(ValueError):
    """A subscribe command that cannot be understood; the message is one line naming the word."""


@dataclass(frozen=True)
class Topic:
    """One topic of a subscription: a glossary concept (`key` its id) or a free word (`word:…`)."""

    key: str
    label: str
    query: str  # what the search is asked for to find the entries on the topic

    def to_json(self) -> dict[str, str]:
        return {"key": self.key, "label": self.label, "query": self.query}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Topic:
        return cls(str(data["key"]), str(data["label"]), str(data["query"]))


@dataclass(frozen=True)
class Schedule:
    """When a channel gets its PR of the day: a time of day on some weekdays, in a time zone."""

    hour: int
    minute: int
    days: frozenset[int]  # 0 = Monday
    zone: str

    @property
    def time(self) -> str:
        return f"{self.hour:02d}:{self.minute:02d}"

    def day_of_week(self) -> str:
        """APScheduler's day_of_week field: day names, never numbers (its Monday is 0)."""
        return ",".join(APS_DAYS[d] for d in sorted(self.days))

    def describe_days(self, lang: str = "en") -> str:
        if self.days == EVERY_DAY:
            return "每天" if lang == "zh" else "daily"
        if self.days == WEEKDAYS:
            return "工作日" if lang == "zh" else "weekdays"
        if self.days == frozenset({5, 6}):
            return "周末" if lang == "zh" else "weekends"
        names = DAY_NAMES_ZH if lang == "zh" else DAY_NAMES
        return ("、" if lang == "zh" else ", ").join(names[d] for d in sorted(self.days))

    def describe(self, lang: str = "en") -> str:
        """`weekdays 10:00 Europe/Berlin`."""
        return f"{self.describe_days(lang)} {self.time} {self.zone}"


@dataclass(frozen=True)
class Subscription:
    """What a channel asked for: topics (none = all), a schedule, strictness, announcements."""

    channel: str
    schedule: Schedule
    topics: tuple[Topic, ...] = ()
    strict: bool = False  # when every entry on the topics was posted: repeat them, never the rest
    announce: bool = True  # a message when new digest entries on the topics appear
    source: str = "slack"  # "slack" (the store) or "settings" (DAILY_CHANNELS)
    updated_by: str = ""
    updated_at: dt.datetime | None = None
    cron: str = ""  # settings only: the DAILY_CRON line the schedule comes from

    def topic_labels(self) -> list[str]:
        return [t.label for t in self.topics]

    def describe_schedule(self, lang: str = "en") -> str:
        if self.cron:
            return f"DAILY_CRON `{self.cron}` {self.schedule.zone}"
        return self.schedule.describe(lang)


def configured_subscriptions(channels: Sequence[str], cron: str, zone: str) -> list[Subscription]:
    """DAILY_CHANNELS as subscriptions: every topic, DAILY_CRON in TIMEZONE, announcements on."""
    schedule = default_schedule(cron, zone)
    return [Subscription(c, schedule, source="settings", cron=cron) for c in channels]


def effective_subscriptions(
    configured: Sequence[Subscription], stored: Sequence[Subscription]
) -> list[Subscription]:
    """One subscription per channel: the one made from Slack wins over DAILY_CHANNELS."""
    by_channel = {s.channel: s for s in configured}
    by_channel.update({s.channel: s for s in stored})
    return [by_channel[c] for c in sorted(by_channel)]


@dataclass(frozen=True)
class SubscribeRequest:
    """What a `subscribe` command said; None where it said nothing (keep or default)."""

    topic_words: list[str] = field(default_factory=list)
    time: tuple[int, int] | None = None
    days: frozenset[int] | None = None
    zone: str | None = None
    strict: bool | None = None
    announce: bool | None = None

    def apply(self, base: Subscription, topics: list[Topic]) -> Subscription:
        """`base` (the channel's current subscription, or the defaults) with this request on top;
        `topics` (resolved from `topic_words`) are added to the ones it has."""
        schedule = base.schedule
        if self.time is not None:
            schedule = replace(schedule, hour=self.time[0], minute=self.time[1])
        if self.days is not None:
            schedule = replace(schedule, days=self.days)
        if self.zone is not None:
            schedule = replace(schedule, zone=self.zone)
        merged = list(base.topics)
        for topic in topics:
            if topic.key not in {t.key for t in merged}:
                merged.append(topic)
        return replace(
            base,
            cron="",
            schedule=schedule,
            topics=tuple(merged),
            strict=base.strict if self.strict is None else self.strict,
            announce=base.announce if self.announce is None else self.announce,
            source="slack",
        )


@dataclass(frozen=True)
class _Words:
    days: dict[str, frozenset[int]]
    range: frozenset[str]
    filler: frozenset[str]
    longest: int


@cache
def schedule_words(path: Path = SCHEDULE_WORDS) -> _Words:
    data = load_yaml(path.read_text(encoding="utf-8"))
    days: dict[str, frozenset[int]] = {}
    for number, words in data["days"].items():
        for word in words:
            days[str(word).casefold()] = frozenset({int(number)})
    for spec in data["sets"].values():
        for word in spec["words"]:
            days[str(word).casefold()] = frozenset(int(d) for d in spec["days"])
    range_words = frozenset(str(w).casefold() for w in data["range"])
    filler = frozenset(str(w).casefold() for w in data["filler"])
    longest = max(len(w) for w in [*days, *range_words, *filler])
    return _Words(days, range_words, filler, longest)


def parse_days(text: str) -> frozenset[int]:
    """`weekdays`, `daily`, `mon,thu`, `mon-fri`, `周一,周四`, `周一至周五`, `工作日` → day numbers.

    Raises GrammarError naming the part that is not a day.
    """
    words = schedule_words()
    read = _DaysRead()
    for word in _day_words(text, words):
        read.take(word, words)
    return read.result()


def _day_words(text: str, words: _Words) -> Iterator[str]:
    """The schedule words of `text` in order (longest first); GrammarError at the first other part."""
    source = text.casefold()
    pos = 0
    while pos < len(source):
        if source[pos].isspace():
            pos += 1
            continue
        match = _longest_word(source, pos, words)
        if match is None:
            rest = text[pos:].split()[0] if text[pos:].split() else text[pos:]
            raise GrammarError(f"not a day: {rest!r} (try weekdays, daily, mon,thu, 周一,周四, 工作日)")
        word, pos = match
        yield word


@dataclass
class _DaysRead:
    """What `parse_days` has read so far: the days, the start of a range that waits for its end
    (`mon-`), and the last single day (a range word needs one before it)."""

    found: set[int] = field(default_factory=set)
    pending_range: int | None = None
    last_single: int | None = None

    def take(self, word: str, words: _Words) -> None:
        if word in words.range and word not in words.days:
            if self.last_single is None:
                raise GrammarError(f"a range needs a day before {word!r} (e.g. mon-fri, 周一至周五)")
            self.pending_range = self.last_single
        elif word not in words.filler:
            self._days(words.days[word], word)

    def _days(self, days: frozenset[int], word: str) -> None:
        if self.pending_range is None:
            self.found.update(days)
            self.last_single = next(iter(days)) if len(days) == 1 else None
            return
        if len(days) != 1:
            raise GrammarError(f"a range needs a single day after it, not {word!r}")
        first, last = self.pending_range, next(iter(days))
        # A range may wrap past Sunday: fri-mon.
        self.found.update(
            range(first, last + 1) if last >= first else [*range(first, 7), *range(0, last + 1)]
        )
        self.pending_range = None
        self.last_single = None

    def result(self) -> frozenset[int]:
        if self.pending_range is not None:
            raise GrammarError("a range needs a day after it (e.g. mon-fri, 周一至周五)")
        if not self.found:
            raise GrammarError("no days given (try weekdays, daily, mon,thu, 周一,周四)")
        return frozenset(self.found)


def _longest_word(source: str, pos: int, words: _Words) -> tuple[str, int] | None:
    """The longest schedule word at `pos`; a Latin word must end at a word boundary."""
    for length in range(min(words.longest, len(source) - pos), 0, -1):
        candidate = source[pos : pos + length]
        if candidate not in words.days and candidate not in words.range and candidate not in words.filler:
            continue
        end = pos + length
        if candidate[-1].isascii() and candidate[-1].isalnum() and end < len(source):
            following = source[end]
            if following.isascii() and following.isalnum():
                continue
        return candidate, end
    return None


def looks_like_days(word: str) -> bool:
    """A word made only of day words (`weekdays`, `mon,thu`, `周一至周五`): days without `on`."""
    try:
        parse_days(word)
    except GrammarError:
        return False
    return True


def parse_time(word: str) -> tuple[int, int]:
    """`10:00`, `9:30`, `0930`? no — `10am`, `3pm`, `10点`, `10点半`, `10時` → (hour, minute)."""
    match = _TIME.match(word.strip())
    if match is None:
        raise GrammarError(f"not a time: {word!r} (use HH:MM, e.g. 09:30)")
    hour = int(match["h"])
    minute = 30 if match["half"] else int(match["m"] or 0)
    ampm = (match["ampm"] or "").replace(".", "").casefold()
    if ampm:
        if not 1 <= hour <= 12:
            raise GrammarError(f"not a time: {word!r} (with am/pm the hour runs 1–12)")
        hour = hour % 12 + (12 if ampm == "pm" else 0)
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        raise GrammarError(f"not a time: {word!r} (hours run 00–23, minutes 00–59)")
    return hour, minute


def looks_like_time(word: str) -> bool:
    """A word that is a time without `at`: it needs a separator or a marker (`9:30`, `10am`, `10点`)."""
    return bool(_TIME.match(word)) and not word.isdigit()


@cache
def _zones() -> dict[str, str]:
    """Lower-cased zone names and unambiguous city names → the IANA name."""
    names = available_timezones()
    out: dict[str, str] = {name.casefold(): name for name in names}
    cities: dict[str, set[str]] = {}
    for name in names:
        if "/" in name:
            cities.setdefault(name.rsplit("/", 1)[1].casefold().replace("_", " "), set()).add(name)
    for city, found in cities.items():
        if len(found) == 1 and city not in out:
            out[city] = next(iter(found))
    return out


def parse_zone(word: str) -> str:
    """An IANA time zone (`Europe/Berlin`, `asia/shanghai`, `UTC`) or an unambiguous city (`berlin`)."""
    name = _zones().get(word.strip().casefold().replace("_", " ")) or _zones().get(word.strip().casefold())
    if name is None:
        raise GrammarError(
            f"unknown time zone {word!r} (an IANA name such as Europe/Berlin or Asia/Shanghai)"
        )
    ZoneInfo(name)
    return name


def parse_subscribe(text: str) -> SubscribeRequest:
    """The words of `subscribe …` after the subcommand. Every word is a keyword with its argument,
    a time, a run of days, or a topic word; a keyword with a bad argument raises GrammarError."""
    words = text.replace("，", ", ").split()
    request = SubscribeRequest()
    i = 0
    while i < len(words):
        request, i = _read_word(words, i, request)
    return request


def _read_word(words: list[str], i: int, request: SubscribeRequest) -> tuple[SubscribeRequest, int]:
    """The request with the word at `i` (and its argument) read; the index of the next word."""
    word = words[i]
    key = word.casefold()
    argument = words[i + 1] if i + 1 < len(words) else None
    if key in AT:
        return replace(
            request, time=parse_time(_needs(word, argument, "a time after it (e.g. at 10:00)"))
        ), i + 2
    if key in ON:
        run = _days_after_on(word, words, i + 1)
        return replace(request, days=parse_days(" ".join(run))), i + 1 + len(run)
    if key in TZ:
        zone = parse_zone(_needs(word, argument, "a time zone after it (e.g. tz Europe/Berlin)"))
        return replace(request, zone=zone), i + 2
    if key in FLAGS:
        return replace(request, strict=FLAGS[key][1]), i + 1
    if key in ANNOUNCE:
        return replace(request, announce=_on_or_off(word, argument)), i + 2
    if looks_like_time(word):
        return replace(request, time=parse_time(word)), i + 1
    if looks_like_days(word):
        run = _day_run(words, i)
        return replace(request, days=parse_days(" ".join(run))), i + len(run)
    request.topic_words.append(word)
    return request, i + 1


def _on_or_off(keyword: str, argument: str | None) -> bool:
    if argument is None or argument.casefold() not in ON_OFF:
        raise GrammarError(f"{keyword!r} needs on or off after it (e.g. announce off)")
    return ON_OFF[argument.casefold()]


def _days_after_on(keyword: str, words: list[str], start: int) -> list[str]:
    """The run of day words after `on`; GrammarError naming the word when there is none."""
    run = _day_run(words, start)
    if not run and start < len(words):
        parse_days(words[start])  # raises, naming the word that is not a day
    if not run:
        raise GrammarError(f"{keyword!r} needs days after it (e.g. on mon,thu or on weekdays)")
    return run


def _needs(keyword: str, argument: str | None, what: str) -> str:
    if argument is None:
        raise GrammarError(f"{keyword!r} needs {what}")
    return argument


def _day_run(words: list[str], start: int) -> list[str]:
    """The words from `start` that read as days (`mon , thu`, `mon and thu`), up to the next other word."""
    run: list[str] = []
    for word in words[start:]:
        if not looks_like_days(word) and word.casefold() not in schedule_words().filler:
            break
        run.append(word)
    while run and run[-1].casefold() in schedule_words().filler:
        run.pop()
    return run


def default_schedule(cron: str, zone: str) -> Schedule:
    """The schedule of a five-field crontab line (DAILY_CRON) when it is one time on some days;
    otherwise weekdays 09:30. Day numbers as cron reads them (croniter: 0 or 7 = Sunday)."""
    from croniter import CroniterError, croniter  # imported where needed: 30 ms off every command

    fields = cron.split()
    try:
        minute, hour = int(fields[0]), int(fields[1])
        days = croniter.expand(f"* * * * {fields[4]}")[0][4]
    except (ValueError, IndexError, CroniterError):
        return Schedule(9, 30, WEEKDAYS, zone)
    return Schedule(hour, minute, EVERY_DAY if days == ["*"] else frozenset((d - 1) % 7 for d in days), zone)
