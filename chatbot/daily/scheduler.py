"""When to post the PR of the day (adapter: APScheduler 3 BackgroundScheduler).

The scheduler only decides *when*; whether this process posts is decided by the claim in the
shared store, so every replica may run one (and reconcile its jobs from the subscriptions in the
store). The clock is injectable so tests drive catch-up and retry decisions without sleeping;
APScheduler keeps its own (real) clock for when jobs run. docs/daily.md: scheduler and catch-up.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.date import DateTrigger
from croniter import CroniterError, croniter

from chatbot.daily.poster import DailyResult
from chatbot.daily.subscription import Subscription

log = logging.getLogger(__name__)

RETRY_DELAY = dt.timedelta(minutes=5)


WEEKDAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")  # crontab's numbers: Sunday is 0 (and 7)


def crontab_weekdays(field: str) -> str:
    """A crontab day-of-week field (0 or 7 = Sunday) as APScheduler 3 day names.

    APScheduler 3 numbers days from Monday = 0, and its `from_crontab` passes numbers through,
    so `1-5` would mean Tuesday to Saturday. croniter reads the field as cron does; its numbers
    become names. Names (`mon-fri`) mean the same to both and pass through.
    """
    field = field.strip().lower()
    if any(c.isalpha() for c in field):
        return field
    try:
        days = croniter.expand(f"* * * * {field}")[0][4]
    except CroniterError:
        raise ValueError(f"day of week out of range in {field!r}") from None
    if days == ["*"]:
        return "*"
    return ",".join(WEEKDAY_NAMES[d] for d in sorted({int(d) % 7 for d in days}))


def daily_trigger(cron: str, zone: ZoneInfo) -> CronTrigger:
    """The CronTrigger of a five-field crontab line (`30 9 * * 1-5`: weekdays 09:30)."""
    minute, hour, day, month, weekday = cron.split()
    return CronTrigger(
        minute=minute, hour=hour, day=day, month=month, day_of_week=crontab_weekdays(weekday), timezone=zone
    )


def missed_fire_time(
    trigger: CronTrigger, now: dt.datetime, grace: dt.timedelta, zone: ZoneInfo
) -> dt.datetime | None:
    """The latest fire time that is today (in `zone`), not after `now` and within `grace` of it.

    Time is counted in UTC: adding to a zoned time adds to its wall clock, which on the day the
    clocks go back lands an hour early (02:30 CET + 1 s is 02:30:01 CEST), so the next fire time
    after the second 02:30 was that 02:30 again, for ever; and the grace was an hour off."""
    now_utc = now.astimezone(dt.UTC)
    local_now = now.astimezone(zone)
    midnight = dt.datetime.combine(local_now.date(), dt.time(0, 0), zone).astimezone(dt.UTC)
    start = max(now_utc - grace, midnight).astimezone(zone)
    latest: dt.datetime | None = None
    fire: dt.datetime | None = trigger.get_next_fire_time(None, start)
    while fire is not None and fire <= now_utc:
        latest = fire
        after = (fire.astimezone(dt.UTC) + dt.timedelta(seconds=1)).astimezone(zone)
        fire = trigger.get_next_fire_time(fire, after)
    return latest


@dataclass(frozen=True)
class ScheduledRun:
    channel: str
    day: dt.date
    fire_time: dt.datetime


@dataclass(frozen=True)
class ChannelJob:
    """One channel's cron job: `key` says what it was built from (a change replaces the job)."""

    channel: str
    trigger: CronTrigger
    zone: ZoneInfo
    key: str


def subscription_job(subscription: Subscription) -> ChannelJob:
    """The cron job of a subscription: its DAILY_CRON line, or its time and days in its zone."""
    zone = ZoneInfo(subscription.schedule.zone)
    if subscription.cron:
        trigger = daily_trigger(subscription.cron, zone)
    else:
        s = subscription.schedule
        trigger = CronTrigger(hour=s.hour, minute=s.minute, day_of_week=s.day_of_week(), timezone=zone)
    return ChannelJob(subscription.channel, trigger, zone, subscription.describe_schedule())


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
        subscriptions: Callable[[], Sequence[Subscription]] | None = None,
        reconcile_every: float = 60.0,
        after_reconcile: Callable[[], object] | None = None,
    ) -> None:
        self.run = run
        self.channels = list(channels)
        self.zone = zone
        self.grace = grace
        self.trigger = daily_trigger(cron, zone)
        self.clock = clock
        self.retry_delay = retry_delay
        self.scheduler: BackgroundScheduler | None = None
        self.subscriptions = subscriptions
        self.reconcile_every = min(max(reconcile_every, 0.1), 60.0)
        self.after_reconcile = after_reconcile
        self._jobs: dict[str, str] = {}  # channel → key of its scheduled job
        self._last_wanted: dict[str, ChannelJob] = {}
        self._reconcile_lock = threading.Lock()
        # start (on the loading thread) and shutdown (on SIGTERM) may meet: one at a time, and a
        # scheduler shut down before it started never starts.
        self._lifecycle = threading.Lock()
        self._stopped = False

    def wanted(self) -> dict[str, ChannelJob]:
        """The jobs there should be: DAILY_CHANNELS on DAILY_CRON, then the subscriptions (which win)."""
        jobs = self._settings_jobs()
        for subscription in self.subscriptions() if self.subscriptions else ():
            try:
                jobs[subscription.channel] = subscription_job(subscription)
            except (ValueError, KeyError) as exc:  # a zone this machine lacks: skip, say so
                log.error("daily post %s: cannot schedule %s: %s", subscription.channel, subscription, exc)
        return jobs

    def catch_up_runs(self, now: dt.datetime) -> list[ScheduledRun]:
        """The runs to do at start: one per channel when today's run was missed within grace."""
        fire = missed_fire_time(self.trigger, now, self.grace, self.zone)
        if fire is None:
            return []
        return [ScheduledRun(channel, fire.date(), fire) for channel in self.channels]

    def start(self) -> None:
        """Start the background scheduler (nothing when no channel is configured and there is no
        source of subscriptions, or once shut down)."""
        with self._lifecycle:
            if not self._stopped:
                self._start()

    def _start(self) -> None:
        if not self.channels and self.subscriptions is None:
            log.info("daily post: DAILY_CHANNELS is empty, no PR of the day")
            return
        scheduler = BackgroundScheduler(timezone=self.zone)
        self.scheduler = scheduler  # before start: a catch-up job may schedule its retry at once
        wanted = self._reconcile_jobs(self._wanted_or_settings())
        now = self.clock()
        for job in wanted.values():
            fire = missed_fire_time(job.trigger, now, self.grace, job.zone)
            if fire is None:
                continue
            log.info("daily post %s: catching up the run of %s", job.channel, fire.isoformat())
            # No trigger: APScheduler runs the job once, right away.
            run = ScheduledRun(job.channel, fire.date(), fire)
            scheduler.add_job(self._once, args=[run], id=f"daily-catch-up:{job.channel}")
        if self.subscriptions is not None:
            # Its first tick at once: it announces what is new (`after_reconcile`) right after start.
            # (A one-off job for that raced shutdown: APScheduler logged a JobLookupError traceback.)
            scheduler.add_job(
                self.reconcile,
                "interval",
                seconds=self.reconcile_every,
                id="daily-reconcile",
                coalesce=True,
                max_instances=1,
                next_run_time=dt.datetime.now(self.zone),
            )
        elif self.after_reconcile is not None:
            scheduler.add_job(self._after_reconcile, id="daily-reconcile-first")
        scheduler.start()
        for channel in wanted:
            job = scheduler.get_job(f"daily:{channel}")
            log.info("daily post %s: next run %s", channel, job.next_run_time if job else "never")

    def reconcile(self) -> dict[str, ChannelJob]:
        """Bring the jobs in line with the subscriptions in the store (run every `reconcile_every`)."""
        wanted = self._reconcile_jobs(self._wanted_or_settings())
        self._after_reconcile()
        return wanted

    def _wanted_or_settings(self) -> dict[str, ChannelJob]:
        try:
            return self.wanted()
        except Exception:  # the database is away: keep the jobs there are, try again next tick
            log.exception("daily post: cannot read the subscriptions; keeping the current jobs")
            return {**self._settings_jobs(), **self._last_wanted}

    def _settings_jobs(self) -> dict[str, ChannelJob]:
        return {c: ChannelJob(c, self.trigger, self.zone, f"DAILY_CRON {self.zone}") for c in self.channels}

    def _reconcile_jobs(self, wanted: dict[str, ChannelJob]) -> dict[str, ChannelJob]:
        scheduler = self.scheduler
        if scheduler is None:
            return wanted
        grace_seconds = max(1, int(self.grace.total_seconds()))
        with self._reconcile_lock:
            for channel, job in wanted.items():
                if self._jobs.get(channel) == job.key:
                    continue
                scheduler.add_job(
                    self._scheduled,
                    job.trigger,
                    args=[channel, job.zone],
                    id=f"daily:{channel}",
                    replace_existing=True,
                    misfire_grace_time=grace_seconds,
                    coalesce=True,
                    max_instances=1,
                )
                self._jobs[channel] = job.key
                log.info("daily post %s: scheduled %s", channel, job.key)
            for channel in set(self._jobs) - set(wanted):
                if scheduler.get_job(f"daily:{channel}") is not None:
                    scheduler.remove_job(f"daily:{channel}")
                del self._jobs[channel]
                log.info("daily post %s: unscheduled", channel)
            self._last_wanted = dict(wanted)
        return wanted

    def _after_reconcile(self) -> None:
        if self.after_reconcile is None:
            return
        try:
            self.after_reconcile()
        except Exception:  # announcing failed (database, Slack): the next tick tries again
            log.exception("announcing new digest entries failed")

    def shutdown(self) -> None:
        with self._lifecycle:
            self._stopped = True
            if self.scheduler is not None and self.scheduler.running:
                self.scheduler.shutdown(wait=False)
            self.scheduler = None

    def _scheduled(self, channel: str, zone: ZoneInfo | None = None) -> None:
        now = self.clock().astimezone(zone or self.zone)
        self._once(ScheduledRun(channel, now.date(), now))

    def _once(self, run: ScheduledRun) -> DailyResult | None:
        try:
            result = self.run(run.channel, run.day)
        except Exception:  # a bug, or the database failed where the poster did not expect it
            log.exception("daily post %s %s failed", run.channel, run.day)
            self._retry(run)  # never a lost day: the claim still makes it once
            return None
        log.log(logging.INFO if result.ok else logging.ERROR, "daily post %s", result.line())
        if result.retry_later:
            self._retry(run)
        return result

    def _retry(self, run: ScheduledRun) -> None:
        """Run again in `retry_delay` while that is still within the grace after the fire time."""
        if (
            self.scheduler is None
            or self.clock() + self.retry_delay > run.fire_time.astimezone(dt.UTC) + self.grace
        ):
            return
        log.info("daily post %s: retrying in %s", run.channel, self.retry_delay)
        # Job times are APScheduler's (the real clock); the injected clock only decides.
        retry_at = dt.datetime.now(self.zone) + self.retry_delay
        self.scheduler.add_job(self._once, DateTrigger(run_date=retry_at, timezone=self.zone), args=[run])
