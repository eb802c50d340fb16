"""The install going away: `app_uninstalled`, or `tokens_revoked` naming the bot's token.

Slack will refuse every later call with this token, so the jobs that post on their own (the PR of
the day, announcements, the weekly report) stop at once instead of failing on every tick; one
ERROR line says what happened and what brings the bot back (reinstall, restart with the new
SLACK_BOT_TOKEN). Revoked user tokens alone leave the bot's token, and the jobs, as they are.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

INSTALL_EVENTS = ("app_uninstalled", "tokens_revoked")


@dataclass
class InstallEvents:
    """Listener for INSTALL_EVENTS; `gone` is set once the bot's install is dead."""

    stop_jobs: Callable[[], None]
    gone: threading.Event = field(default_factory=threading.Event)

    def __call__(self, event: dict[str, Any], body: dict[str, Any]) -> None:
        kind = str(event.get("type"))
        if kind == "tokens_revoked" and not (event.get("tokens") or {}).get("bot"):
            log.info("slack tokens_revoked: user tokens only; the bot's token stands")
            return
        if self.gone.is_set():
            return
        self.gone.set()
        log.error(
            "slack %s (team %s): the bot's install is gone; the PR of the day, announcements and the "
            "weekly report stop. Reinstall the app and restart with its new SLACK_BOT_TOKEN",
            kind,
            body.get("team_id") or "?",
        )
        self.stop_jobs()
