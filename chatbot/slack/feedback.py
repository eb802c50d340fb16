"""Block Kit of feedback: the 👍/👎 buttons on answers and results, and the 👎 modal. Pure.

blocks.py puts the buttons on search results, so this module builds its few elements itself
rather than importing blocks.py back.

A button's value names what it rates (kind, target, entry, intent) in compact JSON, so the
handler needs no lookup and a cached answer carries the right buttons. The modal carries the
same value in `private_metadata` back to its `view_submission`.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any

from chatbot.slack import action_ids as ids
from chatbot.slack.i18n import Language, Texts
from chatbot.slack.mrkdwn import MAX_BUTTON_TEXT, MAX_BUTTON_VALUE, clip_line
from chatbot.usage import FeedbackTarget

MAX_MISSING_TEXT = 1000
MAX_MODAL_TITLE = 24


def _plain(text: str, limit: int) -> dict[str, Any]:
    return {"type": "plain_text", "text": clip_line(text, limit), "emoji": True}


def _button(text: str, action: str, value: str) -> dict[str, Any]:
    return {"type": "button", "text": _plain(text, MAX_BUTTON_TEXT), "action_id": action, "value": value}


def feedback_value(target: FeedbackTarget) -> str:
    """`{"k":…,"t":…,"e":…(,"i":…)}`: what `json.dumps(…, ensure_ascii=False, separators=(",",
    ":"))` writes, put together from the encoded strings (two buttons on every hit of every
    answer: the dict and the encoder's set-up cost more than the strings)."""
    parts = [f'{{"k":{_string(target.kind)},"t":{_string(target.target)},"e":{_string(target.entry_id)}']
    if target.intent:
        parts.append(f',"i":{_string(target.intent)}')
    parts.append("}")
    return "".join(parts)[:MAX_BUTTON_VALUE]


def _string(text: str) -> str:
    """A JSON string as `json.dumps(text, ensure_ascii=False)` writes it."""
    return str(encode_basestring(text))


def parse_feedback_value(value: str) -> FeedbackTarget | None:
    """The target a button or modal names; None for anything we did not write."""
    try:
        data = json.loads(value)
        kind = data["k"]
        if kind not in ("search", "answer"):
            return None
        return FeedbackTarget(kind, str(data["t"]), str(data["e"]), data.get("i"))
    except (ValueError, KeyError, TypeError):
        return None


def feedback_buttons(target: FeedbackTarget, texts: Texts) -> list[dict[str, Any]]:
    """👍 and 👎 for one target (their action ids are unique within a message per entry)."""
    value = feedback_value(target)
    suffix = target.entry_id
    return [
        _button(texts("feedback.up"), ids.action_id(ids.FEEDBACK_UP, suffix), value),
        _button(texts("feedback.down"), ids.action_id(ids.FEEDBACK_DOWN, suffix), value),
    ]


def feedback_row(target: FeedbackTarget, lang: Language) -> dict[str, Any]:
    """An actions block with 👍 and 👎 (for messages without another button row)."""
    return {"type": "actions", "elements": feedback_buttons(target, Texts(lang))}


def missing_modal(target: FeedbackTarget, lang: Language) -> dict[str, Any]:
    """The one optional question a 👎 asks: what was missing?"""
    texts = Texts(lang)
    return {
        "type": "modal",
        "callback_id": ids.FEEDBACK_MODAL,
        "private_metadata": feedback_value(target),
        "title": _plain(texts("feedback.modal.title"), MAX_MODAL_TITLE),
        "submit": _plain(texts("feedback.modal.submit"), MAX_MODAL_TITLE),
        "close": _plain(texts("feedback.modal.close"), MAX_MODAL_TITLE),
        "blocks": [
            {
                "type": "input",
                "block_id": ids.FEEDBACK_INPUT,
                "optional": True,
                "label": _plain(texts("feedback.modal.question"), 2000),
                "element": {
                    "type": "plain_text_input",
                    "action_id": ids.FEEDBACK_INPUT,
                    "multiline": True,
                    "max_length": MAX_MISSING_TEXT,
                },
            }
        ],
    }


def submitted_text(view: dict[str, Any]) -> str:
    """What the person typed into the modal ('' when they left it empty)."""
    return ids.submitted(view, ids.FEEDBACK_INPUT, ids.FEEDBACK_INPUT)[:MAX_MISSING_TEXT]
