"""A curator who titles entries in their own words above an English `.meta.yaml`: each item
reaches its note by what the note says (its PR, its author) or, as a last resort, by place; every
such pairing is a warning, and nothing is paired on a tie or when the counts differ."""

from __future__ import annotations

from pathlib import Path

from chatbot.digest import Library

DIGEST = """vllm-project/vllm

增量 detokenize 用上 DecodeStream

值得精读。Nick Hill（njhill）把增量 detokenization 换成 DecodeStream，QPS 越高收益越明显。

CUDA graph 输出共享 buffer

可跳过。输出也建共享 buffer，显存占用变成常数，见 https://github.com/vllm-project/vllm/pull/5074 。

n-gram 投机解码整理

值得一看。张量全程留在 GPU 上，没匹配上的序列直接返回 None。
"""

META = """entries:
  - pr: 5074
    title: "[Core][CUDA Graph] add output buffer for cudagraph"
    author: youkaichao
  - pr: 15137
    title: "[V1][Perf] Faster incremental detokenization"
    author: njhill
  - pr: 4724
    title: "[Speculative decoding] Improve n-gram efficiency"
    author: comaniac
"""


def _load(tmp_path: Path, digest: str, meta: str) -> Library:
    (tmp_path / "d.txt").write_text(digest, encoding="utf-8")
    (tmp_path / "d.meta.yaml").write_text(meta, encoding="utf-8")
    return Library.load(tmp_path)


def test_items_reach_the_notes_that_name_their_pr_or_author_then_by_place(tmp_path: Path) -> None:
    library = _load(tmp_path, DIGEST, META)
    prs = {e.title: e.pr for e in library}
    assert prs == {
        "增量 detokenize 用上 DecodeStream": 15137,
        "CUDA graph 输出共享 buffer": 5074,
        "n-gram 投机解码整理": 4724,
    }
    warnings = [p.message for p in library.problems if "given to" in p.message]
    assert len(warnings) == 3
    assert any("Improve n-gram" in w and "is at its place" in w for w in warnings)
    assert any("Faster incremental" in w and "names its PR or author" in w for w in warnings)


def test_no_pairing_by_place_when_the_counts_differ(tmp_path: Path) -> None:
    extra = META + '  - pr: 9999\n    title: "Something else"\n    author: someone\n'
    library = _load(tmp_path, DIGEST, extra)
    prs = {e.title: e.pr for e in library}
    assert prs["n-gram 投机解码整理"] is None  # two items left for one note: not guessed
    assert prs["增量 detokenize 用上 DecodeStream"] == 15137
    assert any("Something else" in p.message and "matches no entry" in p.message for p in library.problems)


def test_table_rows_and_qa_lines_are_read_as_the_lines_they_stand_for(tmp_path: Path) -> None:
    """A verdict in a table row, a person at the start of a Q/A answer: read as in prose."""
    digest = (
        "vllm-project/vllm\n\n## 换淘汰策略 (#62001)\n\n| 项 | 说明 |\n|---|---|\n| 结论 | 值得精读 |\n"
        "| 风险 | 默认仍是 LRU |\n\n## Early exit (#62002)\n\n"
        "Q: 这个 PR 解决什么？ A: bhoomit 让 kernel 提前退出。\nQ: worth reading? A: 值得，思路干净。\n"
    )
    (tmp_path / "d.md").write_text(digest, encoding="utf-8")
    library = Library.load(tmp_path)
    table, qa = library.get("62001"), library.get("62002")
    assert table is not None and qa is not None
    assert table.verdict == "值得精读" and "|" not in " ".join(table.caveats)
    assert "bhoomit" in qa.people and qa.verdict is not None and "值得" in qa.verdict


def test_a_handle_opening_a_chinese_clause_before_what_they_did(tmp_path: Path) -> None:
    digest = (
        "vllm-project/vllm\n\n调度器改动 (#63001)\n\n"
        "值得看。mengzhu28 想在 scheduler 里加 offload；qiu-dev 在 H100 上跑了一遍；（zhao-lu 提的思路）。\n"
    )
    (tmp_path / "d.txt").write_text(digest, encoding="utf-8")
    entry = Library.load(tmp_path).get("63001")
    assert entry is not None
    assert {"mengzhu28", "qiu-dev", "zhao-lu"} <= set(entry.people)
    assert "scheduler" not in entry.people


def test_a_field_the_schema_does_not_know_is_an_error_and_the_rest_still_loads(tmp_path: Path) -> None:
    """`state: closed` on each item: reported at its line, and every author is still read."""
    meta = META.replace("    author: njhill\n", "    author: njhill\n    state: closed\n")
    library = _load(tmp_path, DIGEST, meta)
    assert {e.pr: e.author for e in library} == {15137: "njhill", 5074: "youkaichao", 4724: "comaniac"}
    (unknown,) = [p for p in library.problems if "not known" in p.message]
    assert unknown.severity == "error" and unknown.line == 8 and "entries.1.state" in unknown.message
