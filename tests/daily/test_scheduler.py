"""Scheduler: cron in a time zone, catch-up of a run missed earlier today, retry after failures.

The clock is injected; waits are on events set by the job, never on sleeps.
"""

from __future__ import annotations

import datetime as dt
import threading
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy.exc import OperationalError

from chatbot.daily.poster import DailyResult, Status
from chatbot.daily.scheduler import DailyScheduler, crontab_weekdays, daily_trigger, missed_fire_time

SHANGHAI = ZoneInfo("Asia/Shanghai")
WEEKDAYS_0930 = "30 9 * * 1-5"
GRACE = dt.timedelta(hours=4)


def shanghai(day: int, hour: int, minute: int = 0) -> dt.datetime:
    """A time in November 2026 in Shanghai (the 30th is a Monday, the 29th a Sunday)."""
    return dt.datetime(2026, 11, day, hour, minute, tzinfo=SHANGHAI)


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        (shanghai(30, 9, 33), shanghai(30, 9, 30)),  # 3 minutes late: catch up
        (shanghai(30, 13, 29), shanghai(30, 9, 30)),  # just inside the 4 h grace
        (shanghai(30, 13, 31), None),  # grace passed
        (shanghai(30, 9, 29), None),  # not yet due today
        (shanghai(30, 9, 30), shanghai(30, 9, 30)),  # due this very second
        (shanghai(29, 10, 0), None),  # Sunday: no run today
        (shanghai(30, 0, 30), None),  # Friday's run is not today's
    ],
)
def test_missed_fire_time(now: dt.datetime, expected: dt.datetime | None) -> None:
    trigger = daily_trigger(WEEKDAYS_0930, SHANGHAI)
    assert missed_fire_time(trigger, now.astimezone(dt.UTC), GRACE, SHANGHAI) == expected


def test_missed_run_yesterday_evening_is_not_caught_up_after_midnight() -> None:
    trigger = daily_trigger("30 23 * * *", SHANGHAI)
    assert missed_fire_time(trigger, shanghai(30, 0, 10), GRACE, SHANGHAI) is None
    assert missed_fire_time(trigger, shanghai(30, 23, 40), GRACE, SHANGHAI) == shanghai(30, 23, 30)


def test_several_runs_a_day_catch_up_the_latest_only() -> None:
    trigger = daily_trigger("0 9,11 * * *", SHANGHAI)
    assert missed_fire_time(trigger, shanghai(30, 11, 5), GRACE, SHANGHAI) == shanghai(30, 11, 0)


def test_the_day_is_the_day_in_the_time_zone() -> None:
    # 09:30 Monday in Shanghai is 01:30 UTC Monday; 08:00 in Shanghai is still Sunday in UTC.
    scheduler = DailyScheduler(
        lambda c, d: DailyResult(Status.POSTED, c, d), ["C1", "C2"], "0 8 * * *", SHANGHAI, GRACE
    )
    runs = scheduler.catch_up_runs(shanghai(30, 8, 3).astimezone(dt.UTC))
    assert [(r.channel, r.day) for r in runs] == [
        ("C1", dt.date(2026, 11, 30)),
        ("C2", dt.date(2026, 11, 30)),
    ]


class Recorder:
    """A run function that records its calls and lets the test wait for the n-th."""

    def __init__(self, results: list[Status | Exception]) -> None:
        self.results = results
        self.calls: list[tuple[str, dt.date]] = []
        self.cond = threading.Condition()

    def __call__(self, channel: str, day: dt.date) -> DailyResult:
        with self.cond:
            status = self.results[min(len(self.calls), len(self.results) - 1)]
            self.calls.append((channel, day))
            self.cond.notify_all()
        if isinstance(status, Exception):
            raise status
        return DailyResult(status, channel, day)

    def wait(self, count: int, timeout: float = 10) -> list[tuple[str, dt.date]]:
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.calls) >= count, timeout), self.calls
            return list(self.calls)


def test_start_catches_up_once_per_channel_and_schedules_the_next_weekday() -> None:
    run = Recorder([Status.POSTED])
    now = shanghai(30, 9, 33).astimezone(dt.UTC)
    scheduler = DailyScheduler(run, ["C1", "C2"], WEEKDAYS_0930, SHANGHAI, GRACE, clock=lambda: now)
    scheduler.start()
    try:
        calls = run.wait(2)
        assert sorted(calls) == [("C1", dt.date(2026, 11, 30)), ("C2", dt.date(2026, 11, 30))]
        assert scheduler.scheduler is not None
        jobs = {job.id: job for job in scheduler.scheduler.get_jobs()}
        assert set(jobs) == {"daily:C1", "daily:C2"}  # the one-off catch-up jobs are gone
        assert jobs["daily:C1"].next_run_time > dt.datetime.now(SHANGHAI)
        assert jobs["daily:C1"].next_run_time.astimezone(SHANGHAI).time() == dt.time(9, 30)
    finally:
        scheduler.shutdown()
    assert len(run.calls) == 2


def test_nothing_to_catch_up_outside_the_grace() -> None:
    run = Recorder([Status.POSTED])
    now = shanghai(30, 15, 0).astimezone(dt.UTC)
    scheduler = DailyScheduler(run, ["C1"], WEEKDAYS_0930, SHANGHAI, GRACE, clock=lambda: now)
    assert scheduler.catch_up_runs(now) == []


def test_no_channels_no_scheduler() -> None:
    scheduler = DailyScheduler(Recorder([Status.POSTED]), [], WEEKDAYS_0930, SHANGHAI, GRACE)
    scheduler.start()
    assert scheduler.scheduler is None


@pytest.mark.parametrize(
    "first",
    # A database failure the poster did not turn into a result lost the day: no retry.
    [Status.FAILED, OperationalError("SELECT 1", {}, Exception("server closed the connection"))],
    ids=["failed", "raised"],
)
def test_transient_failure_is_retried_within_the_grace(first: Status | Exception) -> None:
    run = Recorder([first, Status.POSTED])
    now = shanghai(30, 9, 33).astimezone(dt.UTC)
    scheduler = DailyScheduler(
        run, ["C1"], WEEKDAYS_0930, SHANGHAI, GRACE, clock=lambda: now, retry_delay=dt.timedelta(0)
    )
    scheduler.start()
    try:
        assert run.wait(2) == [("C1", dt.date(2026, 11, 30))] * 2
    finally:
        scheduler.shutdown()


def test_permanent_refusal_is_not_retried() -> None:
    run = Recorder([Status.REFUSED])
    now = shanghai(30, 9, 33).astimezone(dt.UTC)
    scheduler = DailyScheduler(
        run, ["C1"], WEEKDAYS_0930, SHANGHAI, GRACE, clock=lambda: now, retry_delay=dt.timedelta(0)
    )
    scheduler.start()
    try:
        run.wait(1)
        assert scheduler.scheduler is not None
        assert [job.id for job in scheduler.scheduler.get_jobs()] == ["daily:C1"]
    finally:
        scheduler.shutdown()


@pytest.mark.parametrize(
    ("field", "names"),
    [
        ("1-5", "mon,tue,wed,thu,fri"),
        ("0", "sun"),
        ("7", "sun"),
        ("0,6", "sun,sat"),
        ("5-7", "sun,fri,sat"),
        ("*/2", "sun,tue,thu,sat"),
        ("*", "*"),
        ("MON-FRI", "mon-fri"),
    ],
)
def test_crontab_day_numbers_mean_what_cron_means(field: str, names: str) -> None:
    assert crontab_weekdays(field) == names


def test_weekday_cron_fires_monday_to_friday() -> None:
    trigger = daily_trigger(WEEKDAYS_0930, SHANGHAI)
    fire = trigger.get_next_fire_time(None, shanghai(28, 12))  # Saturday noon
    days = []
    for _ in range(6):
        assert fire is not None
        days.append(fire.strftime("%a %H:%M"))
        fire = trigger.get_next_fire_time(fire, fire + dt.timedelta(seconds=1))
    assert days == ["Mon 09:30", "Tue 09:30", "Wed 09:30", "Thu 09:30", "Fri 09:30", "Mon 09:30"]


def test_shut_down_before_it_started_it_never_starts() -> None:
    """SIGTERM while the digests load: close() shuts the scheduler down before the loading
    thread starts it; that start must not run jobs (or raise SchedulerNotRunningError)."""
    run = Recorder([Status.POSTED])
    scheduler = DailyScheduler(run, ["C1"], WEEKDAYS_0930, SHANGHAI, GRACE)
    scheduler.shutdown()
    scheduler.start()
    assert scheduler.scheduler is None
    scheduler.shutdown()  # twice is fine
