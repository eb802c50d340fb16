"""Another curator's month and broken files, through the real parser, loader and CLI: every way
of naming a PR is a ref, every bad file is a problem with its place, the good files still load."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatbot.digest.model import DigestParseError, pull_url
from chatbot.digest.rawtext import parse_raw_text
from chatbot.digest.structured import parse_structured

SLUGS = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,12}/[A-Za-z0-9._-]{1,16}", fullmatch=True)
# What a curator writes around a reference: Chinese or English prose and its punctuation.
BEFORE = st.sampled_from(["见 ", "注意：暂不支持，见 ", "See ", "（", "相关：", "", "、"])
AFTER = st.sampled_from(["。", "）", ".", " 的讨论。", "，另见下文。", ""])


@given(SLUGS, st.integers(1, 9_999_999), BEFORE, AFTER, st.booleans())
@settings(max_examples=150)
def test_a_repository_qualified_reference_is_a_ref_of_that_repository(
    other: str, number: int, before: str, after: str, same: bool
) -> None:
    repo = "vllm-project/vllm"
    slug = repo.upper() if same else other
    text = f"{repo}\n\nT\n\n值得精读。{before}{slug}#{number}{after}\n"
    (entry,) = parse_raw_text(text, "d.txt").entries
    expected = (
        pull_url(repo, number) if slug.casefold() == repo else f"https://github.com/{slug}/pull/{number}"
    )
    assert [(r.number, r.url) for r in entry.refs] == [(number, expected)]


@given(
    st.integers(0, 4),
    st.sampled_from(["2026-13-01", "2026-02-30", "2025-00-10", "2026-1-32"]),
    st.sampled_from(["", "  # PR date\n"]),
)
@settings(max_examples=40, deadline=None)
def test_a_date_that_does_not_exist_is_an_error_at_its_line(at: int, date: str, comment: str) -> None:
    lines = ["repo: vllm-project/vllm", "entries:"]
    date_line = 0
    for index in range(5):
        lines += [f"  - title: 条目 {index}", f"    pr: {100 + index}"]
        if index == at:
            lines.append(f"    date: {date}")
            date_line = len(lines)
        lines.append(f"    tags: [t{index}]")
    text = comment + "\n".join(lines) + "\n"
    with pytest.raises(DigestParseError) as raised:
        parse_structured(text, "d.meta.yaml")
    assert raised.value.problem.line == date_line + text.count("\n", 0, len(comment))
    message = raised.value.problem.message
    assert date in message or "date" in message
