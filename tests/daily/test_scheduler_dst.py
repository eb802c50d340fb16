"""The scheduler's catch-up across daylight-saving changes and in odd zones: a schedule whose time
happens twice (Europe/Berlin 02:30 on the last Sunday of October) or not at all (the last Sunday
of March), zones with half-hour offsets. `missed_fire_time` decides at every start what to catch
up; it must answer (it looped forever on a time that happens twice: `serve` never listened) and
answer a time that is today, not after now and within the grace in real elapsed time."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from typing import TypeVar
from zoneinfo import ZoneInfo

import pytest
from apscheduler.triggers.cron import CronTrigger

from chatbot.daily.poster import DailyResult, Status
from chatbot.daily.scheduler import DailyScheduler, missed_fire_time
from chatbot.daily.subscription import EVERY_DAY, Schedule, Subscription

T = TypeVar("T")
GRACE = dt.timedelta(hours=4)
BERLIN = ZoneInfo("Europe/Berlin")


def within(seconds: float, call: Callable[[], T]) -> T:
    """call() on a daemon thread; fails the test when it has not returned in time (a hang)."""
    box: list[T] = []
    worker = threading.Thread(target=lambda: box.append(call()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert box, f"no answer within {seconds} s"
    return box[0]


# (zone, the day of a change, the hours around it)
CHANGES = [
    ("Europe/Berlin", dt.date(2026, 10, 25)),  # 03:00 CEST -> 02:00 CET: 02:00-02:59 twice
    ("Europe/Berlin", dt.date(2026, 3, 29)),  # 02:00 CET -> 03:00 CEST: 02:00-02:59 never
    ("America/St_Johns", dt.date(2026, 11, 1)),  # -02:30 -> -03:30: 01:00-01:59 twice
    ("America/St_Johns", dt.date(2026, 3, 8)),  # -03:30 -> -02:30: 02:00-02:59 never
    ("Asia/Kolkata", dt.date(2026, 10, 25)),
    ("UTC", dt.date(2026, 10, 25)),
]


@pytest.mark.parametrize(("zone_name", "day"), CHANGES)
def test_catch_up_answers_today_within_the_grace_on_a_change_of_clocks(zone_name: str, day: dt.date) -> None:
    zone = ZoneInfo(zone_name)
    start = dt.datetime.combine(day, dt.time(0, 0), zone).astimezone(dt.UTC)

    def check_day() -> int:
        checked = 0
        for hour, minute in [(h, m) for h in range(5) for m in (0, 30)]:
            trigger = CronTrigger(hour=hour, minute=minute, timezone=zone)
            for step in range(0, 8 * 60, 10):
                now = start + dt.timedelta(minutes=step)
                fire = missed_fire_time(trigger, now, GRACE, zone)
                if fire is not None:
                    assert fire <= now and now - fire <= GRACE, (hour, minute, now, fire)
                    assert fire.astimezone(zone).date() == now.astimezone(zone).date()
                checked += 1
        return checked

    assert within(30, check_day) > 0


def test_a_time_that_happens_twice_is_caught_up_once_at_its_second_instance() -> None:
    trigger = CronTrigger(hour=2, minute=30, timezone=BERLIN)
    now = dt.datetime(2026, 10, 25, 1, 40, tzinfo=dt.UTC)  # 02:40 CET, after the second 02:30
    fire = within(10, lambda: missed_fire_time(trigger, now, GRACE, BERLIN))
    assert fire is not None and fire.astimezone(dt.UTC) == dt.datetime(2026, 10, 25, 1, 30, tzinfo=dt.UTC)


def test_a_replica_started_in_the_repeated_hour_starts_and_catches_up_the_day() -> None:
    """A subscription at 02:30 in Europe/Berlin and a replica (re)started at 02:40 CET on the
    day the clocks go back: start() returns (the HTTP server starts after it) and posts the day."""
    calls: list[tuple[str, dt.date]] = []
    done = threading.Event()

    def run(channel: str, day: dt.date) -> DailyResult:
        calls.append((channel, day))
        done.set()
        return DailyResult(Status.POSTED, channel, day)

    subscription = Subscription("C0BERLIN", Schedule(2, 30, EVERY_DAY, "Europe/Berlin"))
    now = dt.datetime(2026, 10, 25, 1, 40, tzinfo=dt.UTC)
    scheduler = DailyScheduler(
        run, [], "30 9 * * 1-5", BERLIN, GRACE, clock=lambda: now, subscriptions=lambda: [subscription]
    )
    try:
        within(10, scheduler.start)
        assert done.wait(10)
        assert calls == [("C0BERLIN", dt.date(2026, 10, 25))]
    finally:
        scheduler.shutdown()
