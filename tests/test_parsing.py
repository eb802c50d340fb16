"""Both digest forms: structure errors name their line (fuzzing: test_parser_fuzz.py)."""

from __future__ import annotations

import pytest

from chatbot.digest.model import DigestParseError, Problem, entry_id
from chatbot.digest.rawtext import parse_raw_text
from chatbot.digest.structured import json_schema, parse_structured

GOOD_RAW = """vllm-project/vllm

标题一

值得精读。重点关注两点：一是 A 设计；二是 B 测试。注意：#123 尚未合并。

Title two

值得精读，属于小修复。对 frontend 工程师有直接参考价值。
"""


def test_raw_text_entries_with_lines_and_parts() -> None:
    result = parse_raw_text(GOOD_RAW, "d/x.txt")
    first, second = result.entries
    assert (first.title, first.source, first.position) == ("标题一", "d/x.txt:3", 1)
    assert first.highlights == ["A 设计", "B 测试"]
    assert first.caveats == ["#123 尚未合并"]
    assert [r.url for r in first.refs] == ["https://github.com/vllm-project/vllm/pull/123"]
    assert (second.why, second.audience) == ("属于小修复", "对 frontend 工程师有直接参考价值")
    assert first.id == entry_id("vllm-project/vllm", "标题一")
    assert result.warnings == []


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("", 1, "empty file"),
        ("not a slug\n\nT\n\nN\n", 1, "repository slug"),
        ("o/r\n\nTitle only\n", 3, "has no note"),
        ("o/r\n\nT1\n\n值得精读。\n\nT2\n", 7, "has no note"),
        ("o/r\n\nTitle\nstill title\n\n值得精读。\n", 4, "a title is one line"),
        ("o/r\nextra\n\nT\n\nN\n", 2, "blank line"),
    ],
)
def test_raw_text_errors_name_the_line(text: str, line: int, words: str) -> None:
    with pytest.raises(DigestParseError) as info:
        parse_raw_text(text, "bad.txt")
    assert info.value.line == line
    assert words in str(info.value)
    assert str(info.value).startswith(f"bad.txt:{line}: ")


def test_raw_text_without_verdict_is_a_warning_with_line() -> None:
    result = parse_raw_text("o/r\n\nT\n\n就是一个说明。\n", "w.txt")
    assert [str(w) for w in result.warnings] == [
        "w.txt:5: warning: note does not open with a verdict (e.g. 值得精读)"
    ]


GOOD_YAML = """repo: vllm-project/vllm
entries:
  - title: 标题一
    pr: 1234
    date: 2026-08-01
    tags: [compile]
    note: 值得精读。注意：可能被重新审视。
  - title: Only metadata
    author: someone
"""


def test_structured_entries_and_metadata_only_items() -> None:
    result = parse_structured(GOOD_YAML, "d/m.yaml")
    (full,) = result.entries
    (meta,) = result.metadata
    assert full.url == "https://github.com/vllm-project/vllm/pull/1234"
    assert full.source == "d/m.yaml:3"
    assert full.caveats == ["可能被重新审视"]
    assert (meta.title, meta.author, meta.line) == ("Only metadata", "someone", 8)
    assert meta.id == entry_id("vllm-project/vllm", "only  METADATA")


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("repo: o/r\nentries:\n  - title: [unclosed\n", 4, "invalid YAML"),
        ("- just a list\n", 1, "expected a mapping"),
        ("repo: o/r\nentries:\n  - title: T\n    pr: -3\n", 4, "entries.0.pr"),
        ("repo: not-a-slug\nentries: []\n", 1, "repo"),
        ("repo: o/r\nentries:\n  - title: T\n    date: tomorrow\n", 4, "entries.0.date"),
    ],
)
def test_structured_errors_name_the_line(text: str, line: int, words: str) -> None:
    with pytest.raises(DigestParseError) as info:
        parse_structured(text, "bad.yaml")
    assert info.value.line == line, str(info.value)
    assert words in str(info.value)


def test_a_field_not_known_is_an_error_at_its_line_and_the_rest_loads() -> None:
    result = parse_structured(
        "repo: o/r\nentries:\n  - title: T\n    note: 值得看。\n  - title: U\n    note: 可跳过。\n    surprise: 1\n",
        "bad.yaml",
    )
    assert [e.title for e in result.entries] == ["T", "U"]
    (problem,) = [f for f in result.found if isinstance(f, Problem)]
    assert (problem.line, problem.severity) == (7, "error") and "entries.1.surprise" in problem.message


def test_json_schema_describes_the_structured_form() -> None:
    import json

    schema = json.loads(json_schema())
    assert schema["required"] == ["entries"]  # `repo` defaults to vllm-project/vllm
    assert schema["properties"]["repo"]["default"] == "vllm-project/vllm"
    item = schema["$defs"]["StructuredEntry"]["properties"]
    assert {"title", "note", "pr", "url", "author", "date", "tags", "related"} <= set(item)


def test_github_urls_are_refs_and_a_reading_suggestion_is_not_an_audience() -> None:
    text = (
        "o/r\n\nT\n\n值得精读。见 https://github.com/o/r/issues/42 与 #17。"
        "建议重点阅读 `sched.py` 的实现，可作为参考。\n"
    )
    (entry,) = parse_raw_text(text, "u.txt").entries
    assert [(r.number, r.url) for r in entry.refs] == [
        (42, "https://github.com/o/r/pull/42"),
        (17, "https://github.com/o/r/pull/17"),
    ]
    assert entry.audience is None
