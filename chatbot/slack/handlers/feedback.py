"""👍/👎 presses and the 👎 modal: one vote per person and answer, a second press changes it.

Bolt lazy listeners: the press is acknowledged at once. A 👎 opens the "what was missing?"
modal first (its trigger id expires three seconds after the press), then stores the vote; a 👍
stores the vote and thanks the person ephemerally. The modal's submission is acknowledged
(closing it) and its text is added to that person's vote. Who voted is kept only as a salted
hash (`UsageRecorder.voter`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError, SlackClientError

from chatbot.slack import action_ids as ids
from chatbot.slack import blocks
from chatbot.slack.feedback import missing_modal, parse_feedback_value, submitted_text
from chatbot.slack.i18n import Language, Texts
from chatbot.usage import FeedbackTarget
from chatbot.usage.recorder import UsageRecorder

log = logging.getLogger(__name__)


@dataclass
class FeedbackHandlers:
    """The listeners for the feedback buttons and the modal."""

    recorder: UsageRecorder
    language: Language

    def vote(self, body: dict[str, Any], client: Any, respond: Any) -> None:
        action = (body.get("actions") or [{}])[0]
        target = parse_feedback_value(str(action.get("value") or ""))
        user = _presser(body)
        if target is None or not user:
            log.warning("feedback press without a target or a user; ignored")
            return
        down = str(action.get("action_id", "")).startswith(ids.FEEDBACK_DOWN)
        if down:
            self.ask_what_was_missing(body, client, target)
        outcome = self.recorder.vote(target, user, -1 if down else 1)
        log.info("feedback %s on %s %s: %s", "down" if down else "up", target.kind, target.entry_id, outcome)
        if not down:
            thanks = Texts(self.language)("feedback.thanks")
            respond(**blocks.render_text(thanks), response_type="ephemeral", replace_original=False)

    def ask_what_was_missing(self, body: dict[str, Any], client: Any, target: FeedbackTarget) -> None:
        """A 👎 opens the modal before the vote is stored: its trigger id expires in seconds."""
        if not body.get("trigger_id"):
            return
        try:
            client.views_open(trigger_id=body["trigger_id"], view=missing_modal(target, self.language))
        except (SlackApiError, SlackClientError) as exc:
            log.warning("opening the feedback modal failed: %s", exc)

    def missing(self, body: dict[str, Any]) -> None:
        """The modal was sent: keep its (optional) text with the vote."""
        view = body.get("view") or {}
        target = parse_feedback_value(str(view.get("private_metadata") or ""))
        user = _presser(body)
        text = submitted_text(view)
        if target is None or not user or not text.strip():
            return
        if not self.recorder.missing(target, user, text):
            log.info("feedback text for %s %s without a stored vote", target.kind, target.entry_id)


def _presser(body: dict[str, Any]) -> str:
    """The Slack user id of who pressed or submitted ("" when the payload names nobody)."""
    return str((body.get("user") or {}).get("id") or "")
