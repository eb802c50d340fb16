"""Which paragraphs are titles: a curator's appended entry is never merged away (issue 27)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatbot.cli import main
from chatbot.digest.model import DigestParseError
from chatbot.digest.rawtext import parse_raw_text

BUNDLED = Path(__file__).resolve().parents[1] / "chatbot" / "digests" / "vllm-digest-2026-08.txt"
BUNDLED_TEXT = BUNDLED.read_text(encoding="utf-8")
BUNDLED_ENTRIES = parse_raw_text(BUNDLED_TEXT, "vllm-digest-2026-08.txt").entries

# (title, note) as curators append them: Chinese, English, a title ending a sentence, one-liners.
APPENDED = [
    ("新增 Qwen3 投机解码草稿模型", "值得精读，修复了草稿模型的调度顺序。"),
    ("Add sleep mode level 2", "Worth a skim: frees weights and KV cache while idle."),
    ("Add sleep mode level 3.", "Must read. The engine gives its GPU memory back."),
    ("支持 FP8 KV cache？", "可跳过。"),
    ("修复 LoRA 热加载竞态", "值得一读，锁粒度从全局改为每个 adapter。"),
]


def appended(text: str, entries: list[tuple[str, str]]) -> str:
    """The file as a curator leaves it after appending: a line break, title, blank line, note."""
    for title, note in entries:
        text += f"\n{title}\n\n{note}\n"
    return text


def check_kept(text: str, added: list[tuple[str, str]]) -> None:
    result = parse_raw_text(text, "vllm-digest-2026-08.txt")
    assert [(e.id, e.title, e.note) for e in result.entries[: len(BUNDLED_ENTRIES)]] == [
        (e.id, e.title, e.note) for e in BUNDLED_ENTRIES
    ]
    assert [(e.title, e.note) for e in result.entries[len(BUNDLED_ENTRIES) :]] == added
    assert not [w for w in result.warnings if "blank line inside" in w.message]


@pytest.mark.parametrize("count", range(1, len(APPENDED) + 1))
def test_entries_appended_to_the_bundled_digest_are_entries(count: int) -> None:
    """The bundled file ends without a line break: the first appended title lands on the last
    line of the note above it. Every shape appended after it is still an entry of its own."""
    assert not BUNDLED_TEXT.endswith("\n")
    for start in range(len(APPENDED) - count + 1):
        check_kept(appended(BUNDLED_TEXT, APPENDED[start : start + count]), APPENDED[start : start + count])
        check_kept(
            appended(BUNDLED_TEXT + "\n", APPENDED[start : start + count]), APPENDED[start : start + count]
        )


def test_a_title_under_a_note_without_a_line_break_is_a_warning_at_its_line() -> None:
    text = appended(BUNDLED_TEXT, APPENDED[:1])
    result = parse_raw_text(text, "d.txt")
    [warning] = [w for w in result.warnings if "directly under the note" in w.message]
    assert text.splitlines()[warning.line - 1] == "新增 Qwen3 投机解码草稿模型"
    assert (warning.path, warning.severity) == ("d.txt", "warning")


def test_validate_counts_the_appended_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    digest = tmp_path / "vllm-digest-2026-08.txt"
    digest.write_text(appended(BUNDLED_TEXT, APPENDED[:2]), encoding="utf-8")
    main(["validate", str(digest)])
    assert "10 entries, 0 errors" in capsys.readouterr().err


def test_a_blank_line_inside_a_bundled_note_still_joins_it() -> None:
    """The old slip: a blank line left inside a note, where its second half ends a sentence."""
    lines = BUNDLED_TEXT.splitlines()
    at = lines.index(next(line for line in lines if line.startswith("值得精读。它展示了")))
    first, second = lines[at].split("。", 1)
    text = "\n".join([*lines[:at], first + "。", "", second, *lines[at + 1 :]]) + "\n"
    result = parse_raw_text(text, "d.txt")
    assert [e.id for e in result.entries] == [e.id for e in BUNDLED_ENTRIES]
    [warning] = [w for w in result.warnings if "blank line inside" in w.message]
    assert warning.line == at + 3


def test_a_paragraph_that_could_go_either_way_is_an_error_at_its_line() -> None:
    """Join the first and shift the second, or the reverse: the same cost, so nobody guesses."""
    text = "o/r\n\nT0\n\nA note.\n\nFoo bar.\n\nFoo bar.\n\nFoo bar.\n"
    with pytest.raises(DigestParseError) as error:
        parse_raw_text(text, "d.txt")
    assert (error.value.line, error.value.problem.path) == (7, "d.txt")
    assert "cannot tell whether 'Foo bar.' starts a new entry" in str(error.value)


CHINESE_TITLES = st.sampled_from(
    ["修复 KV offload 事件元数据", "新增 Qwen3 草稿模型", "V1 引擎：异步调度", "LoRA 热加载"]
)
ENGLISH_TITLES = st.sampled_from(["Add sleep mode", "[Perf] FlashInfer sampler", "Fix FP8 MoE on ROCm"])
TITLES = st.tuples(
    st.one_of(CHINESE_TITLES, ENGLISH_TITLES),
    st.integers(0, 999),
    st.sampled_from(["", "", "", ".", "。", "？", "!"]),
).map(lambda parts: f"{parts[0]} {parts[1]}{parts[2]}")
NOTES = st.sampled_from(
    [
        "值得精读，重点关注调度顺序。",
        "可跳过。",
        "Worth a skim ★★☆. The fix is two lines.",
        "Must-skim ★★★: robertgshaw2-redhat reworked the scheduler, see RFC 11382.",
        "值得一读。注意：#123 尚未合并。",
        "Must read for anyone working on the KV cache: the eviction order changed and the tests pin it down.",
    ]
)


@given(
    st.lists(st.tuples(TITLES, NOTES), min_size=1, max_size=8, unique_by=lambda entry: entry[0]),
    st.sampled_from(["", "\n"]),
)
@settings(max_examples=150, deadline=None)
def test_written_entries_read_back_to_the_same_titles(entries: list[tuple[str, str]], end: str) -> None:
    """Entries in the file's own style (one-line notes), appended to the bundled month with or
    without its last line break: read back, the same count and titles, the old ones unchanged."""
    text = appended(BUNDLED_TEXT + end, entries)
    result = parse_raw_text(text, "d.txt")
    assert [e.id for e in result.entries[: len(BUNDLED_ENTRIES)]] == [e.id for e in BUNDLED_ENTRIES]
    assert [(e.title, e.note) for e in result.entries[len(BUNDLED_ENTRIES) :]] == entries


@given(st.lists(st.tuples(TITLES, NOTES), min_size=1, max_size=8, unique_by=lambda entry: entry[0]))
@settings(max_examples=150, deadline=None)
def test_a_file_of_written_entries_reads_back(entries: list[tuple[str, str]]) -> None:
    text = "vllm-project/vllm\n" + "".join(f"\n{title}\n\n{note}\n" for title, note in entries)
    assert [(e.title, e.note) for e in parse_raw_text(text, "d.txt").entries] == entries


HEADED = """vllm-project/vllm

#### Use CustomOp for fp8 quant · #71001

@alice moved FP8 quantization behind `CustomOp`.

中文：非 forward 路径仍然用 CUDA kernel

Read? yes — 想搞懂 quant fusion 的必读

#### Pipeline parallel on Ray · #71002

@bob made pipeline parallel run on Ray.

中文：需要 Ray 2.x

#### Per-rank XLA cache · #71003

@carol keys the XLA cache by rank.

Read? maybe — TPU 用户看
"""


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["Read? no — skip", "tl;dr done", "Verdict 3/5"]))
def test_where_titles_are_headings_a_plain_line_is_more_of_the_note(tail: str) -> None:
    """Headings are the titles: the `Read? …` line under two paragraphs is the note's last
    paragraph, not an entry, and Markdown's blank lines inside a note raise no warning."""
    text = HEADED.replace("Read? maybe — TPU 用户看", tail)
    result = parse_raw_text(text, "d.md")
    assert [e.title for e in result.entries] == [
        "Use CustomOp for fp8 quant · #71001",
        "Pipeline parallel on Ray · #71002",
        "Per-rank XLA cache · #71003",
    ]
    assert result.entries[0].note.endswith("Read? yes — 想搞懂 quant fusion 的必读")
    assert result.entries[2].note.endswith(tail)
    assert not [w for w in result.warnings if "blank line inside" in w.message]


SECTIONS = [
    "★★☆ worth a skim",
    "**TL;DR:** one kernel launch instead of two.",
    "值得看：the launch fusion trick.",
    "注意：\n- only on CUDA\n- not tested with TP>1",
    "谁该读：kernel folks",
    "How to try: `VLLM_WIDGET=1`",
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(SECTIONS), min_size=1, max_size=6), min_size=3, max_size=6))
def test_headings_naming_prs_are_the_titles_however_many_paragraphs_a_note_has(
    notes: list[list[str]],
) -> None:
    """`## … (#N)` over a rating, `TL;DR:`, `值得看：`, a list…, each its own paragraph: one entry
    per heading, every paragraph in its note, under a document heading and intro of its own."""
    body = "".join(f"## Widget {i} (#7{i}001)\n\n" + "\n\n".join(n) + "\n\n" for i, n in enumerate(notes))
    text = "vllm-project/vllm\n\n# Digest · 2029-02\n\n本月主题：kernels。\n\n" + body
    result = parse_raw_text(text, "d.md")
    assert [e.title for e in result.entries] == [f"Widget {i} (#7{i}001)" for i in range(len(notes))]
    assert [e.note for e in result.entries] == ["\n".join(n) for n in notes]
    assert [w.line for w in result.warnings if "digest's heading" in w.message] == [3]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(SECTIONS), min_size=4, max_size=6, unique=True), min_size=3, max_size=6)
)
def test_headings_are_the_titles_where_no_other_paragraph_would_be_one(notes: list[list[str]]) -> None:
    """`## Widget 0` without a PR, over labelled paragraphs that no title opens with: the headings."""
    body = "".join(f"## Widget {i}\n\n" + "\n\n".join(n) + "\n\n" for i, n in enumerate(notes))
    result = parse_raw_text("vllm-project/vllm\n\n" + body, "d.md")
    assert [(e.title, e.note) for e in result.entries] == [
        (f"Widget {i}", "\n".join(n)) for i, n in enumerate(notes)
    ]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=3, max_size=6), st.booleans())
def test_entries_parted_by_two_blank_lines_keep_their_paragraphs(paragraphs: list[int], glued: bool) -> None:
    """Title over its first paragraph (or a blank line under it), one blank line between a
    note's paragraphs, two between entries: each note whole, however many paragraphs."""
    under = "\n" if glued else "\n\n"
    entries = [
        (
            f"Fix widget {i} (#8{i}001)",
            [f"第 {i} 条的第 {p} 段：这一段讲的是改动的细节，和上一段一样以句号结尾。" for p in range(n)],
        )
        for i, n in enumerate(paragraphs)
    ]
    text = "vllm-project/vllm\n\n" + "\n\n\n".join(t + under + "\n\n".join(ps) for t, ps in entries) + "\n"
    result = parse_raw_text(text, "d.txt")
    assert [(e.title, e.note) for e in result.entries] == [(t, "\n".join(ps)) for t, ps in entries]


def test_gaps_do_not_rearrange_a_file_the_paragraphs_read() -> None:
    """Two blank lines before one entry and one before the next: the plain reading stands."""
    text = "o/r\n\nT0\n\n值得精读。\n\n\nT1\n\n可跳过。\n\nT2\n\n值得一读。\n\n\nT3\n\n可跳过。\n"
    assert [e.title for e in parse_raw_text(text, "d.txt").entries] == ["T0", "T1", "T2", "T3"]


@pytest.mark.parametrize(
    ("line", "pr"),
    [
        ("PR: https://github.com/vllm-project/vllm/pull/12345", 12345),
        ("**Link:** <https://github.com/vllm-project/vllm/pull/12345>", 12345),
        (":link: https://github.com/vllm-project/vllm/pull/12345", 12345),
        ("- 🔗 [#12345](https://github.com/vllm-project/vllm/pull/12345)", 12345),
        ("see https://github.com/vllm-project/vllm/pull/12345 for the first try", None),  # a reference
        ("PR: https://github.com/other/repo/pull/12345", None),  # another repository's
    ],
)
def test_a_note_linking_its_pr_on_a_line_of_its_own_gives_the_entry_its_pr(line: str, pr: int | None) -> None:
    """`## Faster MoE` names no PR; the note's own link line does (two such lines: neither)."""
    others = "".join(f"\n## Widget {i} (#7{i}001)\n\n**TL;DR:** faster.\n\n注意：none.\n" for i in range(3))
    text = f"vllm-project/vllm\n\n## Faster MoE\n\n**TL;DR:** one launch.\n\n{line}\n"
    assert parse_raw_text(text + others, "d.md").entries[0].pr == pr
    two = f"{text}\nPR: https://github.com/vllm-project/vllm/pull/999\n{others}"
    assert parse_raw_text(two, "d.md").entries[0].pr == (None if pr else 999)
