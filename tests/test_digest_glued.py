"""Digests written with each title on the first line of its note's paragraph, cards whose title
opens with the PR, and `.meta.yaml` files written without `repo` or with the English title only:
every entry is read, with its PR, and nothing is merged away."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from chatbot.digest import Library, parse_raw_text

REPO = "vllm-project/vllm"


def test_titles_glued_above_their_notes_are_read(tmp_path: Path) -> None:
    (tmp_path / "d.txt").write_text(
        f"{REPO}\n\n"
        "[Core] Chunked prefill scheduler (#3853)\n"
        "Read this if you own the scheduler. Verdict: worth it.\n\n"
        "[Bugfix] Fix the hermes parser (#10398)\n"
        "Skip unless you run tool calling.\n",
        encoding="utf-8",
    )
    library = Library.load(tmp_path)
    assert [(e.title, e.note, e.pr) for e in library.entries] == [
        (
            "[Core] Chunked prefill scheduler (#3853)",
            "Read this if you own the scheduler. Verdict: worth it.",
            3853,
        ),
        ("[Bugfix] Fix the hermes parser (#10398)", "Skip unless you run tool calling.", 10398),
    ]
    assert not library.errors


def test_markdown_cards_under_a_document_heading(tmp_path: Path) -> None:
    (tmp_path / "d.md").write_text(
        f"{REPO}\n\n# PR 精选 · 2027-09\n\n"
        "### [#16035] V1 EAGLE 加载\n**评分**: 4/5\n**概述**: 第一步。\n\n"
        "### [#9027] Granite tool parser\n**评分**: 3/5\n**风险**: streaming 有 bug。\n",
        encoding="utf-8",
    )
    library = Library.load(tmp_path)
    assert [(e.title, e.pr) for e in library.entries] == [
        ("[#16035] V1 EAGLE 加载", 16035),
        ("[#9027] Granite tool parser", 9027),
    ]
    assert library.entries[1].note == "**评分**: 3/5\n**风险**: streaming 有 bug。"
    assert any("read as the digest's heading" in str(w) for w in library.problems)


def test_metadata_without_repo_finds_its_entry_by_pr_or_english_title(tmp_path: Path) -> None:
    (tmp_path / "d.md").write_text(
        f"{REPO}\n\n"
        "## V1 前缀缓存 — [V1] Prefix caching (take 2)\n📌 推荐：必读\n💡 要点：空闲块用双向链表。\n\n"
        "## Granite 解析器 (#9027)\n📌 推荐：选读\n",
        encoding="utf-8",
    )
    (tmp_path / "d.meta.yaml").write_text(
        "entries:\n"
        "  - {title: '[V1] Prefix caching (take 2)', pr: 9972, author: comaniac}\n"
        "  - {title: '[Frontend] Granite tool parser', pr: 9027, author: maxdebayser}\n",
        encoding="utf-8",
    )
    library = Library.load(tmp_path)
    assert [(e.pr, e.author) for e in library.entries] == [(9972, "comaniac"), (9027, "maxdebayser")]
    assert not library.errors
    assert not [w for w in library.problems if "matches no entry" in str(w) or "no PR number" in str(w)]


def test_one_line_title_paragraphs_keep_the_plain_reading() -> None:
    text = f"{REPO}\n\n标题一\n\n值得精读。第一段。\n第二行。\n\n标题二\n\n可跳过。\n"
    entries = parse_raw_text(text, "d.txt").entries
    assert [(e.title, e.note) for e in entries] == [
        ("标题一", "值得精读。第一段。\n第二行。"),
        ("标题二", "可跳过。"),
    ]


_line = (
    st.text(alphabet=st.sampled_from("abcxyz 值得看坑数据-_`#"), min_size=1, max_size=30)
    .map(str.strip)
    .filter(lambda s: s and not s.startswith("#"))
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(_line, st.lists(_line, min_size=1, max_size=3)),
        min_size=1,
        max_size=5,
        unique_by=lambda e: e[0],
    )
)
def test_glued_and_blank_separated_titles_read_alike(entries: list[tuple[str, list[str]]]) -> None:
    glued = "\n\n".join(f"{title}\n" + "\n".join(note) for title, note in entries)
    spaced = "\n\n".join(f"{title}\n\n" + "\n".join(note) for title, note in entries)
    read_glued = parse_raw_text(f"{REPO}\n\n{glued}\n", "d.txt").entries
    read_spaced = parse_raw_text(f"{REPO}\n\n{spaced}\n", "d.txt").entries
    assert [(e.title, e.note) for e in read_glued] == [(e.title, e.note) for e in read_spaced]
    assert [e.title for e in read_glued] == [title for title, _ in entries]
