"""When to post the PR of the day (adapter: APScheduler 3 BackgroundScheduler).

One cron job per channel (DAILY_CRON in TIMEZONE). At start, a run missed earlier today within
DAILY_GRACE is caught up once. The scheduler only decides *when*; whether this process posts is
decided by the claim in the shared store, so every replica may run a scheduler.

The clock is injectable: it decides what to catch up and whether a retry still fits in the
grace (`missed_fire_time` and `DailyScheduler.catch_up_runs` take `now`), so tests drive those
decisions without sleeping; APScheduler keeps its own (real) clock for when jobs run.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.date import DateTrigger

from chatbot.daily.poster import DailyResult

log = logging.getLogger(__name__)

RETRY_DELAY = dt.timedelta(minutes=5)


WEEKDAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


def crontab_weekdays(field: str) -> str:
    """A crontab day-of-week field (0 or 7 = Sunday) as APScheduler 3 day names.

    APScheduler 3 numbers days from Monday = 0, and its `from_crontab` passes numbers through,
    so `1-5` would mean Tuesday to Saturday. Numbers, ranges and steps are expanded to names.
    """
    field = field.strip().lower()
    if field in ("*", "?") or any(c.isalpha() for c in field):
        return "*" if field == "?" else field
    days: set[int] = set()
    for part in field.split(","):
        span, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if span in ("*", "?"):
            first, last = 0, 6
        elif "-" in span:
            a, b = span.split("-", 1)
            first, last = int(a), int(b)
        else:
            first = int(span)
            last = 6 if step_text else first
        if not (0 <= first <= 7 and 0 <= last <= 7 and step >= 1):
            raise ValueError(f"day of week out of range in {field!r}")
        days.update(d % 7 for d in range(first, last + 1, step))
    return ",".join(WEEKDAY_NAMES[d] for d in sorted(days))


def daily_trigger(cron: str, zone: ZoneInfo) -> CronTrigger:
    """The CronTrigger of a five-field crontab line (`30 9 * * 1-5`: weekdays 09:30)."""
    minute, hour, day, month, weekday = cron.split()
    return CronTrigger(
        minute=minute, hour=hour, day=day, month=month, day_of_week=crontab_weekdays(weekday), timezone=zone
    )


def missed_fire_time(
    trigger: CronTrigger, now: dt.datetime, grace: dt.timedelta, zone: ZoneInfo
) -> dt.datetime | None:
    """The latest fire time that is today (in `zone`), not after `now` and within `grace` of it."""
    local_now = now.astimezone(zone)
    midnight = local_now.replace(hour=0, minute=0, second=0, microsecond=0)
    start = max(local_now - grace, midnight)
    latest: dt.datetime | None = None
    fire: dt.datetime | None = trigger.get_next_fire_time(None, start)
    while fire is not None and fire <= local_now:
        latest = fire
        fire = trigger.get_next_fire_time(fire, fire + dt.timedelta(seconds=1))
    return latest


@dataclass(frozen=True)
class ScheduledRun:
    channel: str
    day: dt.date
    fire_time: dt.datetime


class DailyScheduler:
    """Cron jobs per channel, catch-up at start, a retry after transient Slack failures."""

    def __init__(
        self,
        run: Callable[[str, dt.date], DailyResult],
        channels: Sequence[str],
        cron: str,
        zone: ZoneInfo,
        grace: dt.timedelta,
        *,
        clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
        retry_delay: dt.timedelta = RETRY_DELAY,
    ) -> None:
        self.run = run
        self.channels = list(channels)
        self.zone = zone
        self.grace = grace
        self.trigger = daily_trigger(cron, zone)
        self.clock = clock
        self.retry_delay = retry_delay
        self.scheduler: BackgroundScheduler | None = None

    def catch_up_runs(self, now: dt.datetime) -> list[ScheduledRun]:
        """The runs to do at start: one per channel when today's run was missed within grace."""
        fire = missed_fire_time(self.trigger, now, self.grace, self.zone)
        if fire is None:
            return []
        return [ScheduledRun(channel, fire.date(), fire) for channel in self.channels]

    def start(self) -> None:
        """Start the background scheduler (nothing when no channel is configured)."""
        if not self.channels:
            log.info("daily post: DAILY_CHANNELS is empty, no PR of the day")
            return
        scheduler = BackgroundScheduler(timezone=self.zone)
        grace_seconds = max(1, int(self.grace.total_seconds()))
        for channel in self.channels:
            scheduler.add_job(
                self._scheduled,
                self.trigger,
                args=[channel],
                id=f"daily:{channel}",
                misfire_grace_time=grace_seconds,
                coalesce=True,
                max_instances=1,
            )
        now = self.clock()
        for run in self.catch_up_runs(now):
            log.info("daily post %s: catching up the run of %s", run.channel, run.fire_time.isoformat())
            # No trigger: APScheduler runs the job once, right away.
            scheduler.add_job(self._once, args=[run], id=f"daily-catch-up:{run.channel}")
        self.scheduler = scheduler  # before start: a catch-up job may schedule its retry at once
        scheduler.start()
        for channel in self.channels:
            job = scheduler.get_job(f"daily:{channel}")
            log.info("daily post %s: next run %s", channel, job.next_run_time if job else "never")

    def shutdown(self) -> None:
        if self.scheduler is not None:
            self.scheduler.shutdown(wait=False)
            self.scheduler = None

    def _scheduled(self, channel: str) -> None:
        now = self.clock().astimezone(self.zone)
        self._once(ScheduledRun(channel, now.date(), now))

    def _once(self, run: ScheduledRun) -> DailyResult | None:
        try:
            result = self.run(run.channel, run.day)
        except Exception:  # a bug or the database is down: log, the next run tries again
            log.exception("daily post %s %s failed", run.channel, run.day)
            return None
        log.log(logging.INFO if result.ok else logging.ERROR, "daily post %s", result.line())
        if (
            result.retry_later
            and self.clock() + self.retry_delay <= run.fire_time + self.grace
            and self.scheduler is not None
        ):
            log.info("daily post %s: retrying in %s", run.channel, self.retry_delay)
            # Job times are APScheduler's (the real clock); the injected clock only decides.
            retry_at = dt.datetime.now(self.zone) + self.retry_delay
            self.scheduler.add_job(self._once, DateTrigger(run_date=retry_at, timezone=self.zone), args=[run])
        return result
