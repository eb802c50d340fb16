"""Action ids shared by the buttons (blocks.py) and their handlers, so the two cannot drift apart.

Buttons carry `<prefix>:<suffix>` ids (Slack wants ids unique within a message); handlers match
the prefix with `pattern()`.
"""

from __future__ import annotations

import re

SHARE_ENTRY = "share_entry"
MORE_RESULTS = "more_results"
OPEN_PR = "open_pr"
OPEN_ENTRY = "open_entry"  # Home / modals: the entry's full card in a modal
ASK_IN_THREAD = "ask_in_thread"  # link previews: post the card in the link's thread
HOME_SEARCH = "home_search"  # the Home tab's search box (block and action id)
SHARE_PICKER = "share_picker"  # modal callback: pick a channel to share to (from a DM)
SHARE_CHANNEL = "share_channel"  # the picker's conversations select (block and action id)
SHORTCUT = "ask_vllm_digest"  # the message shortcut's callback id
FEEDBACK_UP = "feedback_up"
FEEDBACK_DOWN = "feedback_down"
# The 👎 modal ("what was missing?") and its one input.
FEEDBACK_MODAL = "feedback_missing"
FEEDBACK_INPUT = "missing"

COMMAND = "/vllm-digest"


def action_id(prefix: str, suffix: str | int) -> str:
    return f"{prefix}:{suffix}"


def pattern(prefix: str) -> re.Pattern[str]:
    """The regex a handler registers for every button of one kind."""
    return re.compile(rf"^{re.escape(prefix)}(:.*)?$")


def submitted(view: object, block_id: str, action_id: str, key: str = "value") -> str:
    """What a view's input `block_id`/`action_id` holds under `key` (a typed value, a
    `selected_conversation`): "" when the submission lacks it or holds anything but text.
    Slack sends `view.state.values.<block>.<action>`; a submission without it, or with another
    shape, is read as an empty answer rather than raising in the listener (a 500)."""
    node: object = view
    for step in ("state", "values", block_id, action_id):
        node = node.get(step) if isinstance(node, dict) else None
    value = node.get(key) if isinstance(node, dict) else None
    return value if isinstance(value, str) else ""
