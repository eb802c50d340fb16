"""The new-digest announcement fits in one Slack message whatever the batch (Slack refuses more
than 50 blocks, and `msg_blocks_too_long` above about 12,000 characters of block text): the first
entries in order, then "and N more" with the commands that show the rest."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chatbot.daily.subscription import WEEKDAYS, Schedule, Subscription
from chatbot.digest.model import Entry
from chatbot.slack.action_ids import SHARE_ENTRY
from chatbot.slack.blocks import MAX_MESSAGE_BLOCK_TEXT, block_text_length, fit_groups
from chatbot.slack.subscription_blocks import render_announcement
from tests.test_slack_blocks import BASE, assert_safe, assert_within_limits

SLACK_BLOCK_TEXT_LIMIT = 12_000
SUBSCRIPTION = Subscription("C0ANNOUNCE", Schedule(9, 30, WEEKDAYS, "UTC"))


def entries(count: int, title_length: int) -> list[Entry]:
    base = BASE.entries[0]
    return [
        base.model_copy(update={"id": f"e{n:04d}", "title": f"{n:03d} " + "标题" * (title_length // 2)})
        for n in range(count)
    ]


def shown_ids(message: dict[str, Any]) -> list[str]:
    """The entries with a Share button, in order (`share_entry:<id>`)."""
    return [
        str(element["action_id"]).split(":", 1)[1]
        for block in message["blocks"]
        if block["type"] == "actions"
        for element in block["elements"]
        if str(element["action_id"]).startswith(SHARE_ENTRY)
    ]


@settings(max_examples=60, deadline=None)
@given(count=st.integers(0, 120), title_length=st.integers(1, 400), lang=st.sampled_from(["en", "zh"]))
def test_an_announcement_of_any_size_fits_and_says_how_many_were_left_out(
    count: int, title_length: int, lang: str
) -> None:
    batch = entries(count, title_length)
    message = render_announcement(batch, SUBSCRIPTION, lang)  # type: ignore[arg-type]
    assert_within_limits(message)
    assert_safe(message)
    assert block_text_length(message["blocks"]) <= MAX_MESSAGE_BLOCK_TEXT < SLACK_BLOCK_TEXT_LIMIT
    shown = shown_ids(message)
    assert shown == [e.id for e in batch[: len(shown)]]  # the first entries, in order
    left = count - len(shown)
    last = str(message["blocks"][-1])
    if left:
        assert f"{left} " in last and "/vllm-digest latest" in last
    else:
        assert "/vllm-digest latest" not in last


def test_sixty_entries_show_the_first_and_the_rest_as_and_n_more() -> None:
    message = render_announcement(entries(60, 80), SUBSCRIPTION, "en")
    shown = shown_ids(message)
    assert 10 <= len(shown) < 60 and len(message["blocks"]) <= 50
    assert f"…and {60 - len(shown)} more, not shown here" in str(message["blocks"][-1])


@given(
    sizes=st.lists(st.tuples(st.integers(1, 4), st.integers(0, 4000)), max_size=80),
    head_text=st.integers(0, 3000),
)
def test_fit_groups_keeps_whole_groups_within_both_limits(
    sizes: list[tuple[int, int]], head_text: int
) -> None:
    head = [{"type": "context", "elements": [{"type": "mrkdwn", "text": "h" * head_text}]}]
    groups = [
        [{"type": "section", "text": {"type": "mrkdwn", "text": "x" * (size // blocks)}}] * blocks
        for blocks, size in sizes
    ]

    def more(left: int) -> dict[str, object]:
        return {"type": "context", "elements": [{"type": "mrkdwn", "text": f"and {left} more"}]}

    kept = fit_groups(head, groups, more)
    assert len(kept) <= 50 and block_text_length(kept) <= MAX_MESSAGE_BLOCK_TEXT
    body = kept[1:-1] if kept[-1]["type"] == "context" and len(kept) > 1 else kept[1:]
    taken = 0
    while body:
        group = groups[taken]
        assert body[: len(group)] == group
        body = body[len(group) :]
        taken += 1
    assert (kept[-1] == more(len(groups) - taken)) == (taken < len(groups))
