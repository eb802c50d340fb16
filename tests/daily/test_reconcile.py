"""The scheduler follows the subscriptions in the store: jobs added, rescheduled, removed on each
reconcile, DAILY_CHANNELS kept, and kept when the store cannot be read."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from zoneinfo import ZoneInfo

import pytest

from chatbot.daily.poster import DailyResult, Status
from chatbot.daily.scheduler import DailyScheduler
from chatbot.daily.subscription import Schedule, Subscription
from chatbot.settings import SettingsError, load_settings

SHANGHAI = ZoneInfo("Asia/Shanghai")


def never_runs(channel: str, day: dt.date) -> DailyResult:
    return DailyResult(Status.NO_ENTRIES, channel, day)


class Source:
    """Subscriptions as the store would return them; `broken` makes reading fail."""

    def __init__(self) -> None:
        self.items: list[Subscription] = []
        self.broken = False

    def __call__(self) -> list[Subscription]:
        if self.broken:
            raise OSError("database is away")
        return list(self.items)


@pytest.fixture
def source() -> Source:
    return Source()


@pytest.fixture
def scheduler(source: Source) -> Iterator[DailyScheduler]:
    daily = DailyScheduler(
        never_runs,
        ["C0SETTING"],
        "30 9 * * 1-5",
        SHANGHAI,
        dt.timedelta(hours=4),
        clock=lambda: dt.datetime(2026, 12, 1, 0, 5, tzinfo=SHANGHAI),  # nothing to catch up
        subscriptions=source,
        reconcile_every=60,
    )
    daily.start()
    yield daily
    daily.shutdown()


def fields(daily: DailyScheduler, channel: str) -> dict[str, str]:
    assert daily.scheduler is not None
    job = daily.scheduler.get_job(f"daily:{channel}")
    assert job is not None, f"no job for {channel}"
    return {f.name: str(f) for f in job.trigger.fields} | {"zone": str(job.trigger.timezone)}


def test_jobs_follow_the_subscriptions(scheduler: DailyScheduler, source: Source) -> None:
    assert set(scheduler.wanted()) == {"C0SETTING"}
    assert fields(scheduler, "C0SETTING")["day_of_week"] == "mon,tue,wed,thu,fri"

    source.items = [Subscription("C0KV", Schedule(10, 0, frozenset({0, 3}), "Europe/Berlin"))]
    scheduler.reconcile()
    kv = fields(scheduler, "C0KV")
    assert (kv["hour"], kv["minute"], kv["day_of_week"], kv["zone"]) == (
        "10",
        "0",
        "mon,thu",
        "Europe/Berlin",
    )

    source.items = [Subscription("C0KV", Schedule(7, 15, frozenset(range(7)), "UTC"))]
    scheduler.reconcile()
    kv = fields(scheduler, "C0KV")
    assert (kv["hour"], kv["minute"], kv["day_of_week"], kv["zone"]) == (
        "7",
        "15",
        "mon,tue,wed,thu,fri,sat,sun",
        "UTC",
    )

    # A subscription from Slack for a DAILY_CHANNELS channel takes its place.
    source.items.append(Subscription("C0SETTING", Schedule(8, 0, frozenset({4}), "Asia/Shanghai")))
    scheduler.reconcile()
    assert fields(scheduler, "C0SETTING")["day_of_week"] == "fri"

    source.broken = True  # the store is away: every job stays
    scheduler.reconcile()
    assert fields(scheduler, "C0KV")["hour"] == "7" and fields(scheduler, "C0SETTING")["hour"] == "8"

    source.broken = False
    source.items = []
    scheduler.reconcile()
    assert scheduler.scheduler is not None
    assert scheduler.scheduler.get_job("daily:C0KV") is None
    assert fields(scheduler, "C0SETTING")["day_of_week"] == "mon,tue,wed,thu,fri"  # DAILY_CRON again


def test_the_reconcile_interval_is_a_setting_of_at_most_a_minute() -> None:
    assert load_settings(_env_file=None, reconcile_seconds="1").reconcile_seconds == 1.0
    with pytest.raises(SettingsError, match=r"^setting RECONCILE_SECONDS: .*60"):
        load_settings(_env_file=None, reconcile_seconds="120")
