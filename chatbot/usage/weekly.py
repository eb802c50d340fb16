"""The weekly curator report posted to CURATOR_CHANNEL, exactly once per week across replicas.

Like the daily post (chatbot/daily/poster.py): every replica runs the cron job; the first to
insert the (ISO week, channel) row in `curator_reports` posts, the others find the row and do
nothing. Slack refusing the post releases the claim, so the next run (any replica) tries again.
A process dying between the post and the record leaves a claim without a ts: that week is not
posted twice (a missing weekly report costs less than a duplicate in the curator's channel).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from apscheduler.schedulers.background import BackgroundScheduler
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from sqlalchemy import Engine

from chatbot.daily.poster import process_owner
from chatbot.daily.scheduler import daily_trigger
from chatbot.slack.webapi import SlackMessage
from chatbot.usage.report import CuratorReport, build_report
from chatbot.usage.store import UsageStore

log = logging.getLogger(__name__)

WINDOW = dt.timedelta(days=7)


def iso_week(moment: dt.datetime, zone: ZoneInfo) -> str:
    """`2026-W49`: the week a run belongs to, in the schedule's time zone."""
    year, week, _ = moment.astimezone(zone).isocalendar()
    return f"{year}-W{week:02d}"


@dataclass
class WeeklyReport:
    """One `run()` per scheduled time: claim the week, build the report, post it, record it."""

    store: UsageStore
    engine: Engine
    client: WebClient
    channel: str
    render: Callable[[CuratorReport], SlackMessage]
    describe: Callable[[str], tuple[str, int | None]]
    zone: ZoneInfo
    clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC)
    on_result: Callable[[str], None] = lambda status: None

    def run(self) -> str:
        """`posted`, `already posted` (this week, by any replica) or `failed` (claim released)."""
        now = self.clock()
        week = iso_week(now, self.zone)
        owner = process_owner()
        if not self.store.claim_report(week, self.channel, owner, now):
            return self._done("already posted", week)
        message = self.render(build_report(self.engine, now - WINDOW, now, self.describe))
        try:
            response = self.client.chat_postMessage(
                channel=self.channel,
                text=message.text,
                blocks=message.blocks,
                unfurl_links=False,
                unfurl_media=False,
            )
        except (SlackApiError, SlackClientError, OSError) as exc:
            self.store.release_report(week, self.channel, owner)
            log.error(
                "curator report %s %s: Slack refused (%s); will retry next run", self.channel, week, exc
            )
            return self._done("failed", week)
        self.store.record_report(week, self.channel, owner, str(response["ts"]))
        return self._done("posted", week)

    def _done(self, status: str, week: str) -> str:
        log.info("curator report %s %s: %s", self.channel, week, status)
        self.on_result(status)
        return status


def weekly_scheduler(report: WeeklyReport, cron: str) -> BackgroundScheduler:
    """A (not yet started) scheduler running the report on CURATOR_CRON in TIMEZONE; a missed
    run is still done within a day (the claim keeps it to one post per week)."""
    scheduler = BackgroundScheduler(timezone=report.zone)
    scheduler.add_job(
        report.run,
        daily_trigger(cron, report.zone),
        id=f"curator-report:{report.channel}",
        misfire_grace_time=24 * 3600,
        coalesce=True,
        max_instances=1,
    )
    return scheduler
