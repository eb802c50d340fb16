"""Another curator's month and broken files, through the real parser, loader and CLI: every way
of naming a PR is a ref, every bad file is a problem with its place, the good files still load."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from chatbot.digest.model import pull_url
from chatbot.digest.rawtext import parse_raw_text

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
