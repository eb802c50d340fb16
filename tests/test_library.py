"""The digest library: the bundled digest loads whole, broken files are reported and skipped,
ids survive reordering, and changed files are picked up without a restart."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from chatbot.digest.library import Library
from chatbot.digest.model import NOTE_PARTS, Entry
from tests.conftest import DIGESTS

SEED = (DIGESTS / "vllm-digest-2026-08.txt").read_text(encoding="utf-8")
BROKEN_YAML = "repo: vllm-project/vllm\nentries:\n  - title: ok\n    pr: not-a-number\n"


def run_cli(*args: str, digest_dir: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DIGEST_DIR": str(digest_dir or DIGESTS)}
    return subprocess.run(
        [sys.executable, "-m", "chatbot.cli", *args], capture_output=True, text=True, env=env, timeout=60
    )


def test_bundled_digest_loads_eight_entries_with_pr_metadata(seed_library: Library) -> None:
    assert seed_library.problems == []
    assert [e.pr for e in seed_library] == [54537, 53529, 52068, 54492, 52912, 53574, 54509, 54501]
    assert all(e.url == f"https://github.com/vllm-project/vllm/pull/{e.pr}" for e in seed_library)


def test_broken_yaml_is_reported_and_the_good_file_still_loads(tmp_path: Path) -> None:
    (tmp_path / "a-broken.yaml").write_text(BROKEN_YAML, encoding="utf-8")
    (tmp_path / "good.txt").write_text(SEED, encoding="utf-8")
    library = Library.load(tmp_path)
    assert [e.title for e in library][:3] == [
        "混合模态媒体并发解析提速 8%-22%",
        "新增 Qwen3-VL DeepStack 编译契约回归测试",
        "修复 KV offload 事件元数据被过早丢弃",
    ]
    assert len(library) == 8 and all(e.pr is None for e in library)  # the broken metadata is not merged
    assert [str(p) for p in library.errors] == [
        f"{tmp_path / 'a-broken.yaml'}:4: error: entries.0.pr: Input should be a valid integer, "
        "unable to parse string as an integer"
    ]

    validate = run_cli("validate", digest_dir=tmp_path)
    assert validate.returncode == 1
    assert "a-broken.yaml:4: error: entries.0.pr" in validate.stdout
    assert "8 entries, 1 errors" in validate.stderr

    listed = run_cli("list", "--json", digest_dir=tmp_path)
    assert listed.returncode == 0
    titles = [e["title"] for e in json.loads(listed.stdout)]
    assert titles[0] == "混合模态媒体并发解析提速 8%-22%" and len(titles) == 8


def test_validate_passes_on_the_bundled_digest_and_warnings_exit_zero(tmp_path: Path) -> None:
    assert run_cli("validate").returncode == 0
    (tmp_path / "w.txt").write_text("o/r\n\nT\n\n没有结论的说明。\n", encoding="utf-8")
    result = run_cli("validate", str(tmp_path))
    assert result.returncode == 0
    assert "w.txt:5: warning: note does not open with a verdict" in result.stdout


def test_list_json_carries_every_field(seed_library: Library) -> None:
    result = run_cli("list", "--json")
    entries = json.loads(result.stdout)
    assert set(entries[0]) >= {
        "id", "repo", "title", "note", "verdict", "highlights", "audience", "caveats", "refs",
        "people", "identifiers", "pr", "url", "author", "date", "tags", "source",
    }  # fmt: skip
    assert entries[1]["refs"][0] == {
        "number": 43617,
        "url": "https://github.com/vllm-project/vllm/pull/43617",
    }
    assert [e["id"] for e in entries] == [e.id for e in seed_library]


def test_ids_survive_reordering_renaming_and_resaving(tmp_path: Path, seed_library: Library) -> None:
    slug, *rest = SEED.split("\n\n")
    pairs = [rest[i : i + 2] for i in range(0, len(rest), 2)]
    reordered = "\n\n".join([slug, *[p for pair in reversed(pairs) for p in pair]])
    # Re-saved with CRLF line ends, extra blank lines and trailing spaces, under another name.
    resaved = reordered.replace("\n\n", "\n  \n\n").replace("\n", "\r\n").replace("\r\n\r\n", " \r\n\r\n")
    (tmp_path / "renamed.txt").write_text(resaved, encoding="utf-8")
    library = Library.load(tmp_path)
    assert {e.title: e.id for e in library} == {e.title: e.id for e in seed_library}
    assert [e.title for e in library] == [e.title for e in reversed(seed_library.entries)]


def test_same_entry_in_two_files_is_one_entry_with_merged_metadata(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("o/r\n\n标题\n\n值得精读。看点：A、B。\n", encoding="utf-8")
    (tmp_path / "b.yaml").write_text(
        "repo: o/r\nentries:\n  - title: 标题\n    pr: 7\n    tags: [x]\n  - title: 没有这条\n    pr: 8\n",
        encoding="utf-8",
    )
    library = Library.load(tmp_path)
    (entry,) = library.entries
    assert (entry.pr, entry.tags, entry.highlights) == (7, ["x"], ["A", "B"])
    assert [str(p) for p in library.problems] == [
        f"{tmp_path / 'b.yaml'}:6: warning: metadata for '没有这条' matches no entry with a note (check the title)"
    ]
    assert library.get("7") == entry and library.get("#7") == entry and library.get(entry.id[:5]) == entry


def test_an_item_with_a_note_and_one_without_in_one_file_are_one_entry(tmp_path: Path) -> None:
    """The note is kept and the other item's metadata fills it, whichever comes first (the note
    was once taken for metadata of another file and dropped with a "matches no entry" warning)."""
    note = "    note: 值得精读。看点：A、B。\n"
    for name, items in {
        "note-first.yaml": ["  - title: 标题\n" + note, "  - title: 标题\n    pr: 7\n    tags: [x]\n"],
        "note-last.yaml": ["  - title: 标题\n    pr: 7\n    tags: [x]\n", "  - title: 标题\n" + note],
    }.items():
        folder = tmp_path / name.removesuffix(".yaml")
        folder.mkdir()
        (folder / name).write_text("repo: o/r\nentries:\n" + "".join(items), encoding="utf-8")
        library = Library.load(folder)
        (entry,) = library.entries
        assert (entry.note, entry.pr, entry.tags, entry.highlights) == (
            "值得精读。看点：A、B。",
            7,
            ["x"],
            ["A", "B"],
        )
        assert library.problems == []


def test_merged_entries_share_their_field_names_and_stay_apart(tmp_path: Path) -> None:
    """Entries share one set of field names (memory); a copy with an update is still its own."""
    (tmp_path / "a.txt").write_text(
        "o/r\n\n标题\n\n值得精读。看点：A、B。\n\n另一条\n\n值得一读。\n", encoding="utf-8"
    )
    (tmp_path / "a.meta.yaml").write_text(
        "repo: o/r\nentries:\n  - title: 标题\n    pr: 7\n", encoding="utf-8"
    )
    first, second = Library.load(tmp_path).entries
    assert first.model_fields_set is second.model_fields_set
    changed = first.model_copy(update={"pr": 9})
    assert (changed.pr, first.pr, second.pr) == (9, 7, None)
    assert first.model_dump()["tags"] == [] and first == first.model_copy()


def test_metadata_records_share_their_note_files_titles_and_handles(tmp_path: Path) -> None:
    """A `.meta.yaml` repeats its note file's titles and the same handles: the records the
    library keeps hold the entries' strings, not copies (memory), through a reload too; a title
    spelt differently (same id) keeps its own spelling."""
    (tmp_path / "a.txt").write_text(
        "o/r\n\n标题 vLLM\n\n值得精读。\n\n另一条\n\n值得一读。\n\n第三条\n\n值得一读。\n", encoding="utf-8"
    )
    (tmp_path / "a.meta.yaml").write_text(
        "repo: o/r\nentries:\n  - title: 标题 vLLM\n    author: alice\n  - title: 另一条\n    author: alice\n"
        "  - title: 第三条\n    author: bob\n",
        encoding="utf-8",
    )
    library = Library.load(tmp_path)
    for stamp in (2, 3):
        entries = library.entries
        metadata = library._parsed[tmp_path / "a.meta.yaml"][1].metadata
        assert [m.title for m in metadata] == [e.title for e in entries]
        assert all(m.title is e.title for m, e in zip(metadata, entries, strict=True))
        assert [e.author for e in entries] == ["alice", "alice", "bob"]
        assert entries[0].author is entries[1].author is metadata[1].author
        os.utime(tmp_path / "a.txt", ns=(1, stamp))
        assert library.refresh() is True
    (tmp_path / "a.meta.yaml").write_text("repo: o/r\nentries:\n  - title: 标题 VLLM\n", encoding="utf-8")
    os.utime(tmp_path / "a.meta.yaml", ns=(1, 4))
    assert library.refresh() is True and library.problems == []
    [meta] = library._parsed[tmp_path / "a.meta.yaml"][1].metadata
    assert (meta.title, library.entries[0].title) == ("标题 VLLM", "标题 vLLM")


def test_refresh_picks_up_new_changed_and_removed_files(tmp_path: Path) -> None:
    library = Library.load(tmp_path)
    assert len(library) == 0 and library.refresh() is False
    first = tmp_path / "one.txt"
    first.write_text("o/r\n\nA\n\n值得精读。\n", encoding="utf-8")
    assert library.refresh() is True
    assert [e.title for e in library] == ["A"]
    first.write_text("o/r\n\nA\n\n值得精读。\n\nB\n\n值得精读。\n", encoding="utf-8")
    os.utime(first, ns=(first.stat().st_atime_ns, first.stat().st_mtime_ns + 1_000_000))
    assert library.refresh() is True
    assert [e.title for e in library] == ["A", "B"]
    assert library.refresh() is False
    first.unlink()
    assert library.refresh() is True and len(library) == 0


def test_unreadable_and_binary_files_are_problems_not_crashes(tmp_path: Path) -> None:
    (tmp_path / "bin.txt").write_bytes(b"\xff\xfe\x00garbage")
    (tmp_path / "ok.txt").write_text("o/r\n\nA\n\n值得精读。\n", encoding="utf-8")
    library = Library.load(tmp_path)
    assert [e.title for e in library] == ["A"]
    assert library.errors[0].path.endswith("bin.txt") and "not UTF-8" in library.errors[0].message


def test_missing_folder_is_one_clear_error(tmp_path: Path) -> None:
    library = Library.load(tmp_path / "nope")
    assert len(library) == 0
    assert "digest folder does not exist (DIGEST_DIR)" in str(library.errors[0])


def test_glossary_edit_bumps_the_generation_without_being_read_as_a_digest(tmp_path: Path) -> None:
    """A curator's glossary edit must reach the search index, which is rebuilt per generation."""
    from chatbot.search.glossary import load_glossary
    from chatbot.search.index import SearchIndex

    (tmp_path / "one.txt").write_text("o/r\n\n龙集群上的调度\n\n值得精读。\n", encoding="utf-8")
    glossary = tmp_path / "team.glossary.yaml"
    glossary.write_text("concepts:\n  - {id: our-cluster, en: [dragon cluster]}\n", encoding="utf-8")
    library = Library.load(tmp_path)
    generation = library.generation
    assert [e.title for e in library] == ["龙集群上的调度"] and library.problems == []
    assert SearchIndex.build(library.entries, load_glossary(tmp_path)).search("dragon cluster").hits == []
    assert library.refresh() is False

    glossary.write_text(
        "concepts:\n  - {id: our-cluster, en: [dragon cluster], zh: [龙集群]}\n", encoding="utf-8"
    )
    os.utime(glossary, ns=(glossary.stat().st_atime_ns, glossary.stat().st_mtime_ns + 1_000_000))
    assert library.refresh() is True
    assert library.generation == generation + 1
    assert [e.title for e in library] == ["龙集群上的调度"] and library.problems == []
    hits = SearchIndex.build(library.entries, load_glossary(tmp_path)).search("dragon cluster").hits
    assert [h.entry.title for h in hits] == ["龙集群上的调度"]
    assert hits[0].matched == ["龙集群"]

    glossary.unlink()
    assert library.refresh() is True and library.generation == generation + 2


def test_a_metadata_file_edited_alone_refills_the_unchanged_notes(tmp_path: Path) -> None:
    """Editing only the `.meta.yaml` re-reads it and refills the entries of the unchanged raw file
    (not parsed again); deleting it takes its metadata and its warnings away."""
    raw = tmp_path / "a.txt"
    raw.write_text("o/r\n\n标题\n\n值得精读。看点：A、B。\n\n另一条\n\n值得一读。\n", encoding="utf-8")
    meta = tmp_path / "a.meta.yaml"
    meta.write_text(
        "repo: o/r\nentries:\n  - title: 标题\n    pr: 7\n    tags: [x]\n  - title: 没有这条\n    pr: 8\n",
        encoding="utf-8",
    )
    library = Library.load(tmp_path)
    raw_parse = library._parsed[raw]
    assert [(e.pr, e.tags) for e in library] == [(7, ["x"]), (None, [])]
    assert [str(p) for p in library.problems] == [
        f"{meta}:6: warning: metadata for '没有这条' matches no entry with a note (check the title)",
        f"{raw}:7: warning: no PR number: a.meta.yaml has no item titled '另一条' (a typo?)",
    ]
    meta.write_text(
        "repo: o/r\nentries:\n  - title: 另一条\n    pr: 9\n    related: [5]\n  - title: 标题\n    tags: [y]\n",
        encoding="utf-8",
    )
    os.utime(meta, ns=(meta.stat().st_atime_ns, meta.stat().st_mtime_ns + 1_000_000))
    assert library.refresh() is True
    assert library._parsed[raw] is raw_parse  # the raw file was not parsed again
    assert [(e.pr, e.tags, [r.number for r in e.related]) for e in library] == [
        (None, ["y"], []),
        (9, [], [5]),
    ]
    assert library.problems == [] and library.get("9") == library.entries[1]
    meta.unlink()
    assert library.refresh() is True and library._parsed[raw] is raw_parse
    assert [(e.pr, e.tags, e.related) for e in library] == [(None, [], []), (None, [], [])]


def test_entries_built_without_validation_are_what_validation_makes_of_them(tmp_path: Path) -> None:
    """The parsers build entries from values they checked, not validated twice: each field holds
    exactly the type and value pydantic would have made of it, and the parts (not fields) read
    from the note are those of the validated entry."""
    for name in ("vllm-digest-2026-08.txt", "vllm-digest-2026-08.meta.yaml"):
        (tmp_path / name).write_text((DIGESTS / name).read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "more.yaml").write_text(
        "repo: o/r\nentries:\n  - title: 标题\n    note: 值得精读。见 #12。\n    date: 2026-08-01\n"
        "    related: [5]\n",
        encoding="utf-8",
    )
    entries = Library.load(tmp_path).entries
    assert len(entries) == 9
    for entry in entries:
        assert list(entry.__dict__) == list(Entry.model_fields)  # the fields only: no part cut yet
        validated = Entry.model_validate(entry.model_dump(exclude=set(NOTE_PARTS)))
        assert validated == entry
        assert [type(v) for v in entry.__dict__.values()] == [type(v) for v in validated.__dict__.values()]
        assert entry.model_dump() == validated.model_dump()


def test_note_copies_and_metadata_of_several_files_merge_in_file_order(tmp_path: Path) -> None:
    """Two copies of a note (raw and YAML) and two metadata files: the first file's note and
    values win, lists (refs, tags, related) are unioned in file order, a title spelt with other
    case adds its code names; a reload that re-parses nothing merges the kept values into the same entries."""
    (tmp_path / "a.txt").write_text(
        "o/r\n\nFix `foo_bar`\n\n值得精读。看点：A、B。见 #12。\n", encoding="utf-8"
    )
    (tmp_path / "b.yaml").write_text(
        'repo: o/r\nentries:\n  - title: fix `foo_bar`\n    note: "值得一读。看点：B、C。见 #13。"\n'
        "    pr: 7\n    tags: [x, y]\n    related: [5]\n",
        encoding="utf-8",
    )
    (tmp_path / "c.meta.yaml").write_text(
        "repo: o/r\nentries:\n  - title: FIX `Foo_Bar`\n    pr: 8\n    author: ann\n    tags: [y, z]\n"
        "    related: [6, 5]\n",
        encoding="utf-8",
    )
    (tmp_path / "d.meta.yaml").write_text(
        "repo: o/r\nentries:\n  - title: Fix `foo_bar`\n    author: bob\n    github_title: GH\n",
        encoding="utf-8",
    )
    library = Library.load(tmp_path)
    (entry,) = library.entries
    assert (entry.title, entry.source) == ("Fix `foo_bar`", f"{tmp_path / 'a.txt'}:3")
    assert (entry.pr, entry.author, entry.github_title) == (7, "ann", "GH")
    assert [r.number for r in entry.refs] == [12, 13]
    assert (entry.tags, [r.number for r in entry.related]) == (["x", "y", "z"], [5, 6])
    assert entry.identifiers == ["foo_bar", "Foo_Bar"]
    before = [e.model_dump() for e in library]
    (tmp_path / "e.txt").write_text("o/r\n\n另一条\n\n值得一读。\n", encoding="utf-8")
    assert library.refresh() is True and len(library) == 2
    assert [e.model_dump() for e in library if e.title != "另一条"] == before
