"""The Bolt app: which listener handles which Slack input. Wiring only; the work is in handlers/.

`SUBSCRIPTIONS` is the single list of what the app listens to; deploy/slack-app-manifest.yaml
must ask Slack for exactly these (a test checks it).
"""

from __future__ import annotations

from concurrent.futures import Executor

from slack_bolt import App
from slack_sdk import WebClient

from chatbot.slack import action_ids as ids
from chatbot.slack.handlers import actions, feedback, messages
from chatbot.slack.handlers.actions import ActionHandlers
from chatbot.slack.handlers.command import CommandHandler
from chatbot.slack.handlers.feedback import FeedbackHandlers
from chatbot.slack.handlers.messages import FollowUpHandler

# Slack event type → manifest bot events that deliver it.
SUBSCRIBED_EVENTS: dict[str, tuple[str, ...]] = {
    "app_mention": ("app_mention",),
    "message": ("message.channels", "message.groups"),
}

# Bot scopes the listeners and handlers need, and why.
BOT_SCOPES: dict[str, str] = {
    "commands": f"the {ids.COMMAND} slash command",
    "chat:write": "Share to channel, the PR of the day, follow-up answers",
    "app_mentions:read": "app_mention events",
    "channels:history": "message.channels events and conversations.history/replies in public channels",
    "groups:history": "message.groups events and conversations.history/replies in private channels",
    "users:read": "users.info: whether the asker of `subscriptions` is a workspace admin (sees every channel)",
}


def build_slack_app(
    *,
    client: WebClient,
    signing_secret: str,
    command: CommandHandler,
    buttons: ActionHandlers,
    follow_up: FollowUpHandler | None,
    listener_executor: Executor,
    votes: FeedbackHandlers | None = None,
) -> App:
    """A Bolt app whose listeners acknowledge first; answers never hold the HTTP response long."""
    app = App(
        client=client,
        signing_secret=signing_secret,
        process_before_response=True,
        listener_executor=listener_executor,
    )
    app.command(ids.COMMAND)(command)
    app.action(ids.pattern(ids.SHARE_ENTRY))(ack=actions.just_ack, lazy=[buttons.share])
    app.action(ids.pattern(ids.MORE_RESULTS))(ack=actions.just_ack, lazy=[buttons.more])
    app.action(ids.pattern(ids.OPEN_PR))(actions.just_ack)
    if votes is not None:
        for prefix in (ids.FEEDBACK_UP, ids.FEEDBACK_DOWN):
            app.action(ids.pattern(prefix))(ack=feedback.just_ack, lazy=[votes.vote])
        app.view(ids.FEEDBACK_MODAL)(ack=feedback.just_ack, lazy=[votes.missing])
    on_message = messages.follow_up_listener(follow_up)
    for event_type in SUBSCRIBED_EVENTS:
        app.event(event_type)(ack=messages.just_ack, lazy=[on_message])
    return app
