"""The Bolt app: which listener handles which Slack input. Wiring only; the work is in handlers/.

`SUBSCRIPTIONS` is the single list of what the app listens to; deploy/slack-app-manifest.yaml
must ask Slack for exactly these (a test checks it).
"""

from __future__ import annotations

import logging
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

from chatbot.slack import action_ids as ids
from chatbot.slack.fairness import note_asker
from chatbot.slack.handlers import actions, messages
from chatbot.slack.handlers.actions import ActionHandlers
from chatbot.slack.handlers.command import CommandHandler
from chatbot.slack.handlers.dm import DirectMessages, is_dm_query
from chatbot.slack.handlers.feedback import FeedbackHandlers
from chatbot.slack.handlers.home import HomeTab
from chatbot.slack.handlers.install import INSTALL_EVENTS, InstallEvents
from chatbot.slack.handlers.links import LinkPreviews
from chatbot.slack.handlers.messages import FollowUpHandler
from chatbot.slack.handlers.shortcut import MessageShortcut
from chatbot.slack.ledger import ReplayMiddleware
from chatbot.slack.ratelimits import RateLimits, gate_clients

log = logging.getLogger(__name__)

# Slack event type → manifest bot events that deliver it.
SUBSCRIBED_EVENTS: dict[str, tuple[str, ...]] = {
    "app_mention": ("app_mention",),
    "message": ("message.channels", "message.groups", "message.im"),
    "link_shared": ("link_shared",),
    "app_home_opened": ("app_home_opened",),
}
# Events answered by the follow-up handler (thread replies, mentions); DM queries go first.
FOLLOW_UP_EVENTS = ("app_mention", "message")

# Bot scopes the listeners and handlers need, and why.
BOT_SCOPES: dict[str, str] = {
    "commands": f"the {ids.COMMAND} slash command",
    "chat:write": "Share to channel, the PR of the day, follow-up answers",
    "app_mentions:read": "app_mention events",
    "channels:history": "message.channels events and conversations.history/replies in public channels",
    "groups:history": "message.groups events and conversations.history/replies in private channels",
    "im:history": "message.im events: topics and follow-ups in direct messages",
    "links:read": "link_shared events for github.com links",
    "links:write": "chat.unfurl: previews of PRs in the digest",
    "channels:read": "conversations.members: only a member of a public channel may share into it; App Home lists a person's channels",
    "groups:read": "conversations.members: the same for private channels the bot is in",
    "im:read": "conversations.members: Ask in a thread on a link preview in a direct message",
    "mpim:read": "conversations.members: the same in a group direct message",
    "users:read": "users.info: each person's locale (DIGEST_LANGUAGE=auto) and whether the asker of `subscriptions` is a workspace admin",
}


class QuietBoltLog(logging.Filter):
    """Drops Bolt's log records that carry a request body (an unhandled request's listener
    suggestion holds `response_url` and the legacy `token`), and the
    warning that `token` is unused: Bolt reads SLACK_BOT_TOKEN from the environment even when it
    is given a client, and the client (SLACK_API_URL, retry handlers) is what it must use."""

    DROPPED = ("Unhandled request", "will be unused")

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not any(marker in message for marker in self.DROPPED)


def bolt_logger() -> logging.Logger:
    logger = logging.getLogger("chatbot.slack.bolt")
    if not any(isinstance(f, QuietBoltLog) for f in logger.filters):
        logger.addFilter(QuietBoltLog())
    return logger


def build_slack_app(
    *,
    client: WebClient,
    signing_secret: str,
    command: CommandHandler,
    buttons: ActionHandlers,
    follow_up: FollowUpHandler,
    listener_executor: Executor,
    replays: ReplayMiddleware,
    votes: FeedbackHandlers | None = None,
    links: LinkPreviews | None = None,
    home: HomeTab | None = None,
    dms: DirectMessages | None = None,
    shortcut: MessageShortcut | None = None,
    loading: Any = None,
    rate_limits: RateLimits | None = None,
    installs: InstallEvents | None = None,
) -> App:
    """A Bolt app whose listeners acknowledge first; answers never hold the HTTP response long.
    Middleware: `_use_middleware`; `installs` hears the install going away."""
    app = App(
        # The name Bolt would read off the caller's frame with `inspect.stack()` (30 ms at start).
        name=Path(__file__).name,
        client=client,
        signing_secret=signing_secret,
        request_verification_enabled=False,  # inbound.py checked it before parsing: not twice
        process_before_response=True,
        listener_executor=listener_executor,
        ignoring_self_events_enabled=False,  # one filter of whose messages: followups.triage, logged
        logger=bolt_logger(),
    )
    app.error(log_error)
    _use_middleware(app, replays, loading, rate_limits)
    app.command(ids.COMMAND)(command)
    app.action(ids.pattern(ids.SHARE_ENTRY))(ack=actions.just_ack, lazy=[buttons.share])
    app.action(ids.pattern(ids.MORE_RESULTS))(ack=actions.just_ack, lazy=[buttons.more])
    app.action(ids.pattern(ids.OPEN_PR))(actions.just_ack)
    if votes is not None:
        for prefix in (ids.FEEDBACK_UP, ids.FEEDBACK_DOWN):
            app.action(ids.pattern(prefix))(ack=actions.just_ack, lazy=[votes.vote])
        app.view(ids.FEEDBACK_MODAL)(ack=actions.just_ack, lazy=[votes.missing])
    if dms is not None:
        app.event("message", matchers=[is_dm_query])(ack=actions.just_ack, lazy=[dms])
        app.view(ids.SHARE_PICKER)(dms.share_picked)
    on_message = messages.follow_up_listener(follow_up)
    for event_type in FOLLOW_UP_EVENTS:
        app.event(event_type)(ack=actions.just_ack, lazy=[on_message])
    if links is not None:
        app.event("link_shared")(ack=actions.just_ack, lazy=[links])
        app.action(ids.pattern(ids.ASK_IN_THREAD))(ack=actions.just_ack, lazy=[links.ask_in_thread])
    if home is not None:
        app.event("app_home_opened")(ack=actions.just_ack, lazy=[home.opened])
        app.action(ids.pattern(ids.OPEN_ENTRY))(ack=actions.just_ack, lazy=[home.open_entry])
        app.action(ids.HOME_SEARCH)(ack=actions.just_ack, lazy=[home.search])
    if shortcut is not None:
        app.shortcut(ids.SHORTCUT)(ack=actions.just_ack, lazy=[shortcut])
    for event_type in INSTALL_EVENTS if installs is not None else ():
        app.event(event_type)(installs)
    return app


def _use_middleware(
    app: App, replays: ReplayMiddleware, loading: Any, rate_limits: RateLimits | None
) -> None:
    """Who asked (the listener pool shares its threads fairly: slack/fairness.py); every listener's
    client waits out Slack's holds; "still loading"; replayed commands and presses dropped."""
    app.use(note_asker)
    if rate_limits is not None:
        app.use(gate_clients(rate_limits))
    if loading is not None:
        app.use(loading)
    app.use(replays)


def log_error(error: Exception, body: dict[str, Any]) -> None:
    """Bolt's error handler: a listener or middleware raised; one line saying what and which
    request (the traceback at DEBUG). Slack gets Bolt's 500 and retries events."""
    event = body.get("event") or {}
    what = body.get("command") or event.get("type") or body.get("type") or "request"
    log.error("slack %s failed: %s: %s", what, type(error).__name__, error)
    log.debug("slack %s failed", what, exc_info=error)
