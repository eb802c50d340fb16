"""Notes in other hands: parts read by their shape (labels, lists, English), and answers that quote them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chatbot.answers import Answerer
from chatbot.digest import Entry, Library, analyse_note, entry_id, parse_raw_text
from chatbot.text import EMOJI_SHORTCODE
from tests.test_library import run_cli

CURATORS = Path(__file__).with_name("curators")
SECOND_HAND = CURATORS / "second-hand.txt"
HANDS: dict[str, Any] = yaml.safe_load(
    Path(__file__).with_name("curator_notes.yaml").read_text(encoding="utf-8")
)
EXPECT = HANDS["second-hand.txt"]
REPO = "vllm-project/vllm"


def read_hand(name: str) -> dict[int, Entry]:
    path = CURATORS / name
    result = parse_raw_text(path.read_text(encoding="utf-8"), str(path))
    # Every note with a verdict has it found, wherever and however it is written.
    silent = {p for p, want in HANDS[name]["entries"].items() if want["verdict"] is None}
    assert {e.position for e in result.entries if e.verdict is None} == silent
    return {entry.position: entry for entry in result.entries}


@pytest.fixture(scope="module")
def second_hand() -> dict[int, Entry]:
    return read_hand("second-hand.txt")


CASES = [(name, position) for name, hand in HANDS.items() for position in sorted(hand["entries"])]


@pytest.mark.parametrize(("hand", "position"), CASES)
def test_each_part_of_another_curators_note(hand: str, position: int) -> None:
    entry = read_hand(hand)[position]
    want = HANDS[hand]["entries"][position]
    assert entry.verdict == want["verdict"]
    # The verdict is never the why-line or a focus point.
    assert entry.why and entry.why != entry.verdict
    assert entry.verdict not in entry.highlights
    if "why" in want:
        assert want["why"] in entry.why
    for part in want.get("highlights", []):
        assert any(part in h for h in entry.highlights), (part, entry.highlights)
    if "audience" in want:
        assert entry.audience is not None and want["audience"] in entry.audience
    else:
        assert entry.audience is None
    for part in want["caveats"]:
        assert any(part in c for c in entry.caveats), (part, entry.caveats)
    # Caveats and audience are not also focus points.
    assert not set(entry.caveats) & set(entry.highlights)
    assert [r.number for r in entry.refs] == want.get("refs", [])
    assert all(r.url == f"https://github.com/{REPO}/pull/{r.number}" for r in entry.refs)
    assert entry.people == want.get("people", [])


def test_list_numbers_are_not_part_of_the_items(second_hand: dict[int, Entry]) -> None:
    assert second_hand[2].highlights[0] == "把全局锁拆成每个 adapter 一把锁"
    assert second_hand[3].highlights[2] == (
        "The tests compare token streams against the non-speculative path for 500 prompts"
    )
    assert second_hand[5].highlights == [
        "超限时统一归入 `__other__` 桶",
        "上限可配置，默认 100",
        "单测覆盖了并发注册",
    ]


@pytest.mark.parametrize("hand", sorted(HANDS))
def test_follow_ups_quote_the_labelled_part_within_three_quarters(hand: str) -> None:
    entries = read_hand(hand)
    answerer = Answerer(list(entries.values()))
    misses = []
    for case in HANDS[hand]["questions"]:
        entry = entries[case["entry"]]
        answer = answerer.answer(entry, case["q"])
        quoted = answer.text.replace(entry.url or "\0", "")
        if not all(part in answer.text for part in case["expect"]) or len(quoted) >= 0.75 * len(entry.note):
            misses.append((case["entry"], case["q"], answer.text))
    assert len(HANDS[hand]["questions"]) >= 18
    assert misses == []


@pytest.mark.parametrize(
    ("note", "verdict", "why"),
    [
        (
            "五颗星。把重试放进 `Worker.run`，超时不再丢请求。",
            "五颗星",
            "把重试放进 `Worker.run`，超时不再丢请求",
        ),
        ("Solid. Moves the retry into `Worker.run` so timeouts stop dropping requests.", "Solid", None),
        (
            "把重试放进 `Worker.run`，超时不再丢请求。总之值得一读。",
            "值得一读",
            "把重试放进 `Worker.run`，超时不再丢请求",
        ),
        (
            "Moves the retry into `Worker.run`. Overall, worth a look.",
            "worth a look",
            "Moves the retry into `Worker.run`",
        ),
        ("★★★★☆ 把重试放进 `Worker.run`。", "★★★★☆", "把重试放进 `Worker.run`"),
        ("把重试放进 `Worker.run`。总的来说值得一读。", "值得一读", "把重试放进 `Worker.run`"),
        ("五星推荐。测试很一般。", "推荐", "测试很一般"),
        ("把 X 改成 Y。测试很扎实。", None, "把 X 改成 Y"),
    ],
)
def test_verdicts_in_other_words_and_places_never_become_the_why(
    note: str, verdict: str | None, why: str | None
) -> None:
    parts = analyse_note(note, REPO)
    assert parts.verdict == verdict
    if why is not None:
        assert parts.why == why
    assert parts.why and parts.verdict not in (parts.why, *parts.highlights)


def test_url_colon_is_not_a_lead_in_and_english_sentences_end_at_full_stops() -> None:
    note = (
        "Worth reading. Details: https://github.com/vllm-project/vllm/pull/50001 has the numbers. "
        "The fix pins the stream, e.g. the copy stream, before capture."
    )
    parts = analyse_note(note, REPO)
    assert parts.verdict == "Worth reading"
    assert parts.highlights == [
        "Details: https://github.com/vllm-project/vllm/pull/50001 has the numbers",
        "The fix pins the stream, e.g. the copy stream, before capture",
    ]
    assert [r.number for r in parts.refs] == [50001]


@pytest.mark.parametrize(
    ("note", "refs"),
    [
        ("值得一读。见 PR 12345 与 issue 6789。", [12345, 6789]),
        ("Must read. Follows PR #12345; fixes issue #6789 and pull request 4242.", [12345, 6789, 4242]),
        ("值得一读。https://github.com/vllm-project/vllm/issues/6789 和 #12345。", [6789, 12345]),
    ],
)
def test_references_in_words_and_urls_become_refs_with_links(note: str, refs: list[int]) -> None:
    parts = analyse_note(note, REPO)
    assert [(r.number, r.url) for r in parts.refs] == [
        (n, f"https://github.com/{REPO}/pull/{n}") for n in refs
    ]


def test_a_reference_to_another_repository_keeps_its_address() -> None:
    parts = analyse_note("Worth a look. Upstream: https://github.com/pytorch/pytorch/issues/1234.", REPO)
    assert [(r.number, r.url) for r in parts.refs] == [
        (1234, "https://github.com/pytorch/pytorch/issues/1234")
    ]


def test_people_in_english_notes() -> None:
    note = (
        "Worth a look. alice-dev's numbers hold up. bob: the scales are still TODO.\n"
        "carol argued for a flag; dave asked about ROCm. The reviewer asked for a test."
    )
    assert analyse_note(note, REPO).people == ["alice-dev", "bob", "carol", "dave"]


def test_lists_after_a_lead_in_without_a_colon_and_lead_ins_that_announce_risks() -> None:
    parts = analyse_note(
        "值得一读。重点看三处\n1) 锁拆分\n2) 回滚\n3) 事件通知\n有两个坑：A 会泄漏；B 会超时。", REPO
    )
    assert parts.highlights == ["锁拆分", "回滚", "事件通知"]
    assert parts.caveats == ["A 会泄漏", "B 会超时"]
    assert parts.why == "重点看三处：锁拆分；回滚；事件通知"


SHORT_NOTE = (
    "值得一读。把 tokenizer 初始化放进 `functools.cache` 后多 worker 启动快了 3 倍。"
    "坑：缓存键不含 revision，切换 revision 需重启。适合做部署的人。"
)


def test_short_note_answer_is_the_whole_sentence_and_the_link_does_not_count(tmp_path: Path) -> None:
    (tmp_path / "d.yaml").write_text(
        yaml.safe_dump(
            {"repo": REPO, "entries": [{"title": "Tokenizer cache", "note": SHORT_NOTE, "pr": 51111}]},
            allow_unicode=True,
        ),
        encoding="utf-8",
    )
    (entry,) = Library.load(tmp_path).entries
    assert len(entry.note) < 130
    answer = Answerer([entry]).answer(entry, "有什么坑？")
    assert "缓存键不含 revision，切换 revision 需重启" in answer.text
    assert answer.text.endswith("\nhttps://github.com/vllm-project/vllm/pull/51111")
    assert len(answer.text.replace(entry.url or "\0", "")) < 0.75 * len(entry.note)


def test_vllm_digest_ask_quotes_the_gotcha_of_an_english_note() -> None:
    proc = run_cli(
        "ask",
        entry_id(REPO, "Speculative decoding: reject sampling without host sync"),
        "what's the gotcha?",
        "--json",
        digest_dir=CURATORS,
    )
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["intent"] == "risks"
    assert "a draft model with a different vocab size silently truncates logits" in payload["answer"]


_WORDS = st.sampled_from(
    [
        "【看点】",
        "【风险】",
        "【适合】",
        "要点：",
        "坑：",
        "谁该看：",
        "Focus:",
        "Risks:",
        "Who should read:",
        "1. ",
        "2. ",
        "① ",
        "② ",
        "\n",
        "。",
        ". ",
        "；",
        "值得一读",
        "Must read",
        "PR 123",
        "#45",
        "https://github.com/o/r/pull/9",
        "bob: ",
        "carol argued ",
        "缓存",
        "the cache",
        "`x.y`",
        "，",
        " ",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_WORDS, st.text(max_size=8)), max_size=30))
@example(["1. 0", "\n", "0", "\n", "1. 1. "])  # a wrapped item: its line break became a space
@example(["(:", "bob: ", "Focus:"])  # a shortcode inside the point
def test_focus_points_and_caveats_are_the_curators_words(pieces: list[str]) -> None:
    note = "".join(pieces)
    parts = analyse_note(note, "o/r")
    # A wrapped line joins its item with a space where the curator had a line break; an emoji
    # shortcode (`:bob:` in "(:bob: Focus") is a marker, not a word of the point.
    squeezed = ("".join(note.split()), "".join(EMOJI_SHORTCODE.sub("", note).split()))
    for piece in [*parts.highlights, *parts.caveats]:
        assert piece and any("".join(piece.split()) in text for text in squeezed), (piece, note)


def test_validate_explain_shows_each_part_and_hints_at_what_is_missing(tmp_path: Path) -> None:
    digest = tmp_path / "d.txt"
    digest.write_text(
        "vllm-project/vllm\n\nLoRA 锁粒度\n\n推荐指数：高\n要点：\n1. 每个 adapter 一把锁\n2. 失败回滚\n"
        "坑：淘汰顺序和文档不一致。见 PR 45120。\n\nRetry fix\n\nMoves the retry into `Worker.run`.\n",
        encoding="utf-8",
    )
    proc = run_cli("validate", "--explain", str(digest), digest_dir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    first, second = re.split(rf"^{re.escape(str(digest))}:\d+  ", proc.stdout, flags=re.MULTILINE)[1:]
    assert first.startswith("LoRA 锁粒度") and second.startswith("Retry fix")
    assert "verdict:  推荐指数：高" in first
    assert "focus:    每个 adapter 一把锁\n            失败回滚" in first
    assert "caveats:  淘汰顺序和文档不一致" in first
    assert "refs:     #45120 https://github.com/vllm-project/vllm/pull/45120" in first
    assert "hint: no audience found: add `适合：…的人` or `Who should read: anyone working on …`" in first
    assert "hint: no verdict" not in first
    assert "Retry fix" in second and "verdict:  —" in second
    assert "hint: no verdict found" in second
    assert "hint: no caveats found: add `风险：…` or `Risks: …`" in second


def test_list_explain_json_gives_parts_and_hints(tmp_path: Path) -> None:
    (tmp_path / "d.txt").write_text(SECOND_HAND.read_text(encoding="utf-8"), encoding="utf-8")
    proc = run_cli("list", "--explain", "--json", digest_dir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert len(rows) == len(EXPECT["entries"])
    assert rows[0]["parts"]["audience"] == ["做调度器和 KV cache 管理的人"]
    assert rows[0]["hints"] == []
    # The Tokenizer note names no readers: the curator is told how to add them.
    (tokenizer,) = [r for r in rows if r["parts"]["verdict"] == ["力荐"]]
    assert any(h.startswith("no audience found") for h in tokenizer["hints"])
