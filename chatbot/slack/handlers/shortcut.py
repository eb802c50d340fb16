"""The message shortcut "Ask vllm-digest": what does the digest say about this message?

On any message (someone else's too) it looks for the PRs the message names — `#12345` and
pull request links of a digest's repository — and answers, visible only to the person who used
it, with their entries. A message naming no PR of the digest is read as a topic and answered
with the top matches (a no-match says so and suggests topics). The answer goes through the
shortcut's response URL after the ack, in the person's language.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from chatbot.digest import Entry
from chatbot.slack import blocks
from chatbot.slack.handlers.command import Searchable
from chatbot.slack.handlers.followups import query_language, render_top_results, strip_mentions
from chatbot.slack.handlers.links import PR_URL, entry_for_pr
from chatbot.slack.i18n import Language
from chatbot.slack.views import render_shortcut_answer
from chatbot.usage.recorder import UsageRecorder

log = logging.getLogger(__name__)

# `#12345` standing alone (not part of a URL fragment, a channel link or a longer word).
PR_REF = re.compile(r"(?<![\w/&#])#(\d{1,7})(?!\w)")
# Slack wraps links as <url> or <url|label>; the label is what people see.
_SLACK_LINK = re.compile(r"<(https?://[^<>|\s]+)(?:\|([^<>]*))?>")
MAX_ENTRIES = 10
MAX_QUERY = 300


def message_text(message: dict[str, Any]) -> str:
    """The text a message shows: its text, and the text of its attachments (forwarded, unfurled)."""
    parts = [str(message.get("text") or "")]
    attachments = message.get("attachments")
    for attachment in attachments if isinstance(attachments, list) else []:
        if isinstance(attachment, dict):  # anything else is skipped, not the end of the answer
            parts += [str(attachment.get(k) or "") for k in ("title", "title_link", "text", "fallback")]
    return "\n".join(p for p in parts if p)


def named_entries(text: str, entries: Sequence[Entry]) -> list[Entry]:
    """Entries whose PR the text names, in the order named, each once."""
    found: list[tuple[int, Entry]] = []
    for match in PR_URL.finditer(text):
        entry = entry_for_pr(entries, match["repo"].casefold(), int(match["number"]))
        if entry is not None:
            found.append((match.start(), entry))
    for match in PR_REF.finditer(_SLACK_LINK.sub(" ", text)):
        entry = entry_for_pr(entries, None, int(match[1]))
        if entry is not None:
            found.append((match.start(), entry))
    out: list[Entry] = []
    for _, entry in sorted(found, key=lambda pair: pair[0]):
        if entry not in out:
            out.append(entry)
    return out[:MAX_ENTRIES]


def topic_of(text: str) -> str:
    """The message as a topic query: links, mentions and markup out, one line, cut."""
    words = strip_mentions(_SLACK_LINK.sub(lambda m: m[2] or " ", text))
    return re.sub(r"https?://\S+", " ", words).strip()[:MAX_QUERY]


@dataclass
class MessageShortcut:
    """Lazy listener for the message shortcut."""

    entries: Callable[[], Sequence[Entry]]
    index: Searchable
    languages: Callable[[str | None], Language]
    usage: UsageRecorder | None = None  # counts searches

    def answer(self, text: str, lang: Language) -> blocks.Message:
        named = named_entries(text, self.entries())
        if named:
            return render_shortcut_answer(named, lang)
        topic = topic_of(text)
        if not topic:
            return render_shortcut_answer([], lang)
        return render_top_results(self.index, topic, query_language(topic, lang), self.usage, "shortcut")

    def __call__(self, body: dict[str, Any], respond: Any) -> None:
        lang = self.languages((body.get("user") or {}).get("id"))
        answer = self.answer(message_text(body.get("message") or {}), lang)
        try:
            respond(**answer, response_type="ephemeral", replace_original=False)
        except Exception:
            log.exception("answering the shortcut failed")
