"""A digest without PR metadata still links each entry to its PR when the title ends with it."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from chatbot.digest import Library, parse_raw_text

REPO = "vllm-project/vllm"


def _digest(*titles: str) -> str:
    body = "\n\n".join(f"{title}\n\n值得一读。重点看调度器的改动。" for title in titles)
    return f"{REPO}\n\n{body}\n"


def test_titles_ending_with_their_pr_give_the_entry_its_pr_and_link() -> None:
    result = parse_raw_text(
        _digest(
            "[Bugfix] Fix the MoE marlin kernel (#14447)",
            "【修复】FP8 KV cache 在旧卡上崩溃 #45880",
            "NixlConnector 文档 · vllm-project/vllm#24249",
            "TPU 默认启用 V1（#17673）",
        ),
        "vllm-digest-2026-05.txt",
    )
    assert [(e.pr, e.url) for e in result.entries] == [
        (14447, f"https://github.com/{REPO}/pull/14447"),
        (45880, f"https://github.com/{REPO}/pull/45880"),
        (24249, f"https://github.com/{REPO}/pull/24249"),
        (17673, f"https://github.com/{REPO}/pull/17673"),
    ]


def test_a_title_that_points_at_another_pr_or_repository_is_not_its_pr() -> None:
    result = parse_raw_text(
        _digest(
            "Revert #1234",
            "Follow-up to #99",
            "回滚 #77",
            "Port of sgl-project/sglang#11737",
            "没有编号的标题",
        ),
        "d.txt",
    )
    assert [e.pr for e in result.entries] == [None, None, None, None, None]


@given(st.integers(min_value=1, max_value=9_999_999), st.sampled_from(["(#{n})", "#{n}", f"· {REPO}#{{n}}"]))
def test_any_number_in_any_of_the_forms(number: int, form: str) -> None:
    title = "Speed up the scheduler " + form.format(n=number)
    entry = parse_raw_text(_digest(title), "d.txt").entries[0]
    assert entry.pr == number
    assert entry.title == title  # the title (and so the entry's id) is as written


def test_the_metadata_pr_wins_over_a_number_the_title_ends_with(tmp_path: Path) -> None:
    """GitHub titles may end with the issue they fix (`… (#10395)`): the `.meta.yaml` says which PR."""
    title = "[BugFix] Fix hermes tool parser stream arguments (#10395)"
    (tmp_path / "d.txt").write_text(_digest(title), encoding="utf-8")
    (tmp_path / "d.meta.yaml").write_text(
        f'repo: {REPO}\nentries:\n  - title: "{title}"\n    pr: 10398\n', encoding="utf-8"
    )
    (entry,) = list(Library.load(tmp_path))
    assert (entry.pr, entry.url) == (10398, f"https://github.com/{REPO}/pull/10398")
