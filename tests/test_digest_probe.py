"""Another curator's month and broken files, through the real parser, loader and CLI: every way
of naming a PR is a ref, every bad file is a problem with its place, the good files still load."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from chatbot.digest import Library
from chatbot.digest.model import DigestParseError
from chatbot.digest.rawtext import parse_raw_text
from chatbot.digest.refs import pull_url
from chatbot.digest.structured import parse_structured
from chatbot.search import SearchIndex
from tests.test_digest_folder import ROOT, run_cli

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


SEED = ROOT / "digests"


def month_with_faults(folder: Path) -> None:
    """The bundled month, and another one whose metadata reuses one of its PRs, gives one PR to
    two titles and lacks the item of a third entry; a folder named like a digest; editor files."""
    for path in SEED.iterdir():
        shutil.copy(path, folder / path.name)
    (folder / "vllm-digest-2026-09.txt").write_text(
        "vllm-project/vllm\n\n"
        "EAGLE-3 草稿模型支持\n\n值得精读。多层隐藏状态拼接。\n\n"  # line 3
        "FlashInfer 采样器\n\n值得一读。避免排序。\n\n"  # line 7
        "GGUF MoE 模型\n\n值得一读。专家权重加载。\n\n"  # line 11
        "LoRA 运行时加载\n\n值得一读。两个新接口。\n",  # line 15
        encoding="utf-8",
    )
    (folder / "vllm-digest-2026-09.meta.yaml").write_text(
        "repo: vllm-project/vllm\nentries:\n"
        "  - title: EAGLE-3 草稿模型支持\n    pr: 54537\n"  # the PR of the bundled month's first entry
        "  - title: FlashInfer 采样器\n    pr: 19205\n"
        "  - title: GGUF MoE 模型\n    pr: 19205\n"
        "  - title: LoRA 运行时加载的错字\n    pr: 6566\n",  # line 9: the title has a typo
        encoding="utf-8",
    )
    (folder / "vllm-digest-2026-10.txt").mkdir()
    for name in (".#vllm-digest-2026-09.txt", "vllm-digest-2026-09.txt~"):
        (folder / name).write_text("not a digest", encoding="utf-8")


def test_validate_names_every_faulty_place_and_the_good_entries_still_load(tmp_path: Path) -> None:
    month_with_faults(tmp_path)
    result = run_cli("validate", digest_dir=tmp_path)
    meta, sept = tmp_path / "vllm-digest-2026-09.meta.yaml", tmp_path / "vllm-digest-2026-09.txt"
    aug = tmp_path / "vllm-digest-2026-08.txt"
    assert result.stdout.splitlines() == [
        f"{tmp_path / 'vllm-digest-2026-10.txt'}:0: error: a folder named like a digest file: not read",
        f"{meta}:9: warning: metadata for 'LoRA 运行时加载的错字' matches no entry with a note (check the title)",
        f"{sept}:3: error: PR 54537 is also the PR of '混合模态媒体并发解析提速 8%-22%' ({aug}:3): one PR, one entry",
        f"{sept}:11: error: PR 19205 is also the PR of 'FlashInfer 采样器' ({sept}:7): one PR, one entry",
        f"{sept}:15: warning: no PR number: vllm-digest-2026-09.meta.yaml has no item titled 'LoRA 运行时加载' (a typo?)",
    ]
    assert result.returncode == 1 and result.stderr.splitlines() == ["12 entries, 3 errors, 2 warnings"]


# Handles whose plain YAML scalar means them (`00`, `0x1f`, `no` are other values to YAML).
HANDLES = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9-]{0,20}", fullmatch=True).filter(
    lambda handle: str(yaml.safe_load(handle)) == handle
)


@given(HANDLES, st.sampled_from(['"@{}"', "'@{}'", "{}", '" @{} "', "'{} '"]))
@settings(max_examples=60, deadline=None)
def test_an_author_written_with_or_without_at_is_the_handle(handle: str, written: str) -> None:
    text = "repo: vllm-project/vllm\nentries:\n  - title: T\n    pr: 12\n    author: " + written.format(
        handle
    )
    (meta,) = parse_structured(text + "\n", "d.meta.yaml").metadata
    assert meta.author == handle


def test_an_unquoted_at_handle_is_an_error_that_says_to_quote_it(tmp_path: Path) -> None:
    (tmp_path / "d.txt").write_text("vllm-project/vllm\n\nT\n\n值得精读。说明。\n", encoding="utf-8")
    (tmp_path / "d.meta.yaml").write_text(
        "repo: vllm-project/vllm\nentries:\n  - title: T\n    pr: 12\n    author: @alice\n", encoding="utf-8"
    )
    library = Library.load(tmp_path)
    assert [(e.title, e.pr) for e in library] == [("T", None)]  # the note still loads
    (problem,) = library.problems
    assert (problem.path, problem.line) == (str(tmp_path / "d.meta.yaml"), 5)
    assert '"@alice"' in problem.message


FOCUS_LABELS = st.sampled_from(["看点", "要点", "亮点", "Focus", "Highlights"])
CAVEAT_LABELS = st.sampled_from(["风险", "坑", "注意", "Risks", "Caveat"])
ITEMS = st.sampled_from(
    [
        "`free_blocks` 的调用时机",
        "回退路径仍走 PyTorch 实现",
        "the page size constraint of 128",
        "ROCm 上默认关闭",
        "CUDA graph 下的缓冲区复用",
        "acceptance rate measured on MT-Bench",
    ]
)


def marker(kind: str, number: int) -> str:
    return {
        "-": "-",
        "*": "*",
        "•": "•",
        "1.": f"{number}.",
        "1)": f"{number})",
        "①": chr(0x2460 + number - 1),
    }[kind]


@given(
    st.sampled_from(["-", "*", "•", "1.", "1)", "①"]),
    st.lists(st.tuples(st.booleans(), ITEMS), min_size=2, max_size=4, unique_by=lambda pair: pair[1]),
    FOCUS_LABELS,
    CAVEAT_LABELS,
    st.sampled_from(["：", ":", ": "]),
    st.sampled_from(["", "。"]),
)
@settings(max_examples=150, deadline=None)
def test_list_lines_that_open_with_a_label_give_their_items_to_that_part(
    kind: str, lines: list[tuple[bool, str]], focus: str, caveat: str, colon: str, stop: str
) -> None:
    """`- 看点：A` / `2. Risks: B` lines: each item goes to its label's part, the marker to none."""
    body = "\n".join(
        f"{marker(kind, n)} {caveat if risky else focus}{colon}{item}{stop}"
        for n, (risky, item) in enumerate(lines, start=1)
    )
    note = f"值得一读。作者换掉了采样实现。\n{body}"
    (entry,) = parse_raw_text(f"vllm-project/vllm\n\nT\n\n{note}\n", "d.txt").entries
    focused = [item for risky, item in lines if not risky]
    assert entry.highlights == (focused or ["作者换掉了采样实现"])  # no focus label: the body sentences
    assert entry.caveats == [item for risky, item in lines if risky]
    assert entry.why == "作者换掉了采样实现"


TITLE_WORDS = st.sampled_from(
    [
        "修复滑动窗口下的块泄漏",
        "EAGLE-3 草稿模型支持",
        "[Perf] FlashInfer 采样器",
        "V1 引擎：异步调度",
        "LoRA 运行时加载",
    ]
)
NOTE_LINES = st.sampled_from(
    [
        "值得精读。多层隐藏状态拼接。",
        "注意：与 tree attention 组合尚未测试。",
        "Worth a look. It avoids a sort.",
        "坑：ROCm 默认关闭；",
    ]
)
LIST_RUNS = st.sampled_from([["- 看点：A 的确定性", "- 看点：B 回退路径"], ["1. 锁粒度", "2. 失败回滚"]])


@given(
    st.lists(
        st.tuples(
            TITLE_WORDS,
            st.lists(st.one_of(NOTE_LINES.map(lambda line: [line]), LIST_RUNS), min_size=1, max_size=3),
        ),
        min_size=1,
        max_size=4,
        unique_by=lambda entry: entry[0],
    ),
    st.data(),
)
@settings(max_examples=100, deadline=None)
def test_a_blank_line_inside_a_note_keeps_every_entry_with_a_warning_at_its_line(
    entries: list[tuple[str, list[list[str]]]], data: st.DataObject
) -> None:
    """A paragraph that ends a sentence or is a list, where a title is due, is more of the note
    before it: the titles after it stay titles, and the split is a warning at its line."""
    lines = ["vllm-project/vllm"]
    splits: list[int] = []
    for title, pieces in entries:
        lines += ["", title, ""]
        for index, piece in enumerate(pieces):
            if index and data.draw(st.booleans()):
                lines.append("")  # the curator's blank line inside the note
                splits.append(len(lines) + 1)
            lines += piece
    result = parse_raw_text("\n".join(lines) + "\n", "d.txt")
    assert [(e.title, e.note) for e in result.entries] == [
        (title, "\n".join(line for piece in pieces for line in piece)) for title, pieces in entries
    ]
    assert [
        (w.line, "blank line inside the note" in w.message) for w in result.warnings if w.line in splits
    ] == [(line, True) for line in splits]


@given(
    SLUGS,
    st.sampled_from(
        ["{}", "https://github.com/{}", "https://github.com/{}/", "http://github.com/{}.git", "# {}"]
    ),
    st.sampled_from(["", " ", "\t"]),
)
@settings(max_examples=100)
def test_the_repository_line_may_be_the_slug_its_github_address_or_a_heading(
    slug: str, written: str, pad: str
) -> None:
    text = f"{written.format(slug)}{pad}\n\nT\n\n值得精读。#12\n"
    (entry,) = parse_raw_text(text, "d.txt").entries
    assert entry.repo == slug
    assert entry.refs[0].url == f"https://github.com/{entry.repo}/pull/12"


@given(st.sampled_from(["#", "##", "###"]), TITLE_WORDS, st.sampled_from(["d.md", "d.MD"]))
@settings(max_examples=30)
def test_a_markdown_digest_title_written_as_a_heading_is_its_text(marks: str, title: str, name: str) -> None:
    text = f"# vllm-project/vllm\n\n{marks} {title}\n\n值得精读。说明。\n"
    (entry,) = parse_raw_text(text, name).entries
    assert (entry.repo, entry.title, entry.source) == ("vllm-project/vllm", title, f"{name}:3")


@pytest.mark.parametrize("encoding", ["gbk", "gb18030", "latin-1", "utf-16"])
def test_a_file_in_another_encoding_is_an_error_at_its_line_until_it_is_saved_as_utf8(
    tmp_path: Path, encoding: str
) -> None:
    (tmp_path / "a.txt").write_text("vllm-project/vllm\n\nGood\n\n值得精读。说明。\n", encoding="utf-8")
    title = "Café fix" if encoding == "latin-1" else "修复 FlashInfer 采样"
    text = f"vllm-project/vllm\n\n{title}\n\nMust read. Good.\n"
    bad = tmp_path / "b.txt"
    bad.write_bytes(text.encode(encoding))
    library = Library.load(tmp_path)
    assert [e.title for e in library] == ["Good"]
    (problem,) = library.problems
    line = 1 if encoding == "utf-16" else 3  # UTF-16: its byte-order mark
    assert (problem.path, problem.line, problem.severity) == (str(bad), line, "error")
    assert problem.message.startswith("not UTF-8 text (byte 0x") and problem.message.endswith(
        "save it as UTF-8"
    )
    bad.write_text(text, encoding="utf-8")
    assert library.refresh() is True
    assert [e.title for e in library] == ["Good", title] and library.problems == []


# Items without closing marks, each with a place to wrap it: (first line, second line, as one).
WRAPPED = st.sampled_from(
    [
        ("把全局锁拆成", "每个 adapter 一把锁", "把全局锁拆成每个 adapter 一把锁"),
        ("kernel 选择逻辑放在", "`MLACommonBackend` 里", "kernel 选择逻辑放在 `MLACommonBackend` 里"),
        ("the retry path, which is", "where the bug was", "the retry path, which is where the bug was"),
        (
            "how `AttentionMetadata` is built",
            "once per step",
            "how `AttentionMetadata` is built once per step",
        ),
    ]
)
AFTER_LIST = st.sampled_from(
    [
        (
            "适合做 Blackwell 适配和 MLA 内核集成的同学。",
            "audience",
            "适合做 Blackwell 适配和 MLA 内核集成的同学",
        ),
        ("坑：SM90 上仍走 FlashMLA。", "caveats", "SM90 上仍走 FlashMLA"),
        ("Watch out: the old path stays for a release.", "caveats", "the old path stays for a release"),
        (
            "Useful for anyone working on the scheduler.",
            "audience",
            "Useful for anyone working on the scheduler",
        ),
    ]
)


@given(
    st.lists(st.tuples(WRAPPED, st.booleans()), min_size=2, max_size=4, unique_by=lambda item: item[0]),
    st.sampled_from(["-", "•", "1.", "①"]),
    st.sampled_from(["看点：", "重点看三处：", "Focus:"]),
    AFTER_LIST,
)
@settings(max_examples=150, deadline=None)
def test_a_wrapped_list_item_is_one_item_and_the_sentence_after_the_list_is_its_own(
    items: list[tuple[tuple[str, str, str], bool]],
    kind: str,
    lead: str,
    after: tuple[str, str, str],
) -> None:
    lines = ["值得精读。作者拆了锁。", lead]
    for n, ((head, tail, whole), wrapped) in enumerate(items, start=1):
        lines += [f"{marker(kind, n)} {head}", tail] if wrapped else [f"{marker(kind, n)} {whole}"]
    lines.append(after[0])
    (entry,) = parse_raw_text("vllm-project/vllm\n\nT\n\n" + "\n".join(lines) + "\n", "d.txt").entries
    assert entry.highlights == [whole for (_, _, whole), _ in items]
    part = entry.audience if after[1] == "audience" else entry.caveats
    assert part == (after[2] if after[1] == "audience" else [after[2]])


PROBE = Path(__file__).with_name("digests-probe")
# Per entry of tests/digests-probe, in file order: PR, author, verdict, how many focus points,
# whether an audience was found, how many caveats, the refs named in the note.
PROBE_ENTRIES = [
    (18540, "heheda12345", "值得精读", 3, True, 0, [18520, 18533]),
    (16937, "benchislett", "强烈推荐", 3, True, 1, []),
    (19205, "abmfy", "值得一读", 2, False, 1, [19205]),
    (19970, "WoosukKwon", "值得精读", 3, True, 1, [19970]),
    (17046, "LucasWilkinson", "值得精读", 3, True, 1, []),
    (11396, "DarkLight1337", "值得一读", 2, True, 0, []),
    (6566, "Jeffwan", "★★★★☆", 2, True, 1, [6566]),
    (14591, "chaunceyjiang", "值得精读", 3, True, 1, []),
    (12071, "youkaichao", "值得一读", 2, False, 0, []),
    (16531, "Isotr0py", "值得一读", 1, False, 1, []),
]
# Topics of each entry in English and in Chinese, as a reader would type them.
PROBE_QUERIES = [
    ("sliding window", 18540),
    ("滑动窗口", 18540),
    ("prefix cache leak", 18540),
    ("eagle", 16937),
    ("投机解码", 16937),
    ("flashinfer sampler", 19205),
    ("采样", 19205),
    ("async scheduling", 19970),
    ("异步调度", 19970),
    ("blackwell", 17046),
    ("MLA cutlass", 17046),
    ("multimodal cache", 11396),
    ("多模态缓存", 11396),
    ("lora runtime", 6566),
    ("动态加载 LoRA", 6566),
    ("hermes tool call", 14591),
    ("工具调用", 14591),
    ("torchrun", 12071),
    ("external launcher", 12071),
    ("gguf moe", 16531),
    ("量化 MoE", 16531),
]


def resaved(text: str) -> bytes:
    """The same digest as another editor saves it: a BOM, CRLF, trailing spaces and tabs,
    note lines indented with a tab, runs of blank lines."""
    lines = []
    for line in text.split("\n"):
        if line and not line[0].isascii() and not line.startswith(("【", "\u2460")):
            line = "\t" + line
        lines.append(line + (" \t" if line else ""))
    return ("\ufeff" + "\r\n".join(lines).replace("\r\n\r\n", "\r\n\r\n\r\n")).encode("utf-8")


def test_a_month_in_another_hand_reads_the_same_however_it_is_saved(tmp_path: Path) -> None:
    written, saved = tmp_path / "written", tmp_path / "saved"
    shutil.copytree(PROBE, written)
    shutil.copytree(PROBE, saved)
    raw = saved / "vllm-digest-2026-10.txt"
    raw.write_bytes(resaved(raw.read_text(encoding="utf-8")))
    libraries = [Library.load(written), Library.load(saved)]
    parts = [
        [
            (
                e.id,
                e.title,
                e.pr,
                e.author,
                e.tags,
                e.verdict,
                e.why,
                e.highlights,
                e.audience,
                e.caveats,
                e.refs,
            )
            for e in library
        ]
        for library in libraries
    ]
    assert parts[0] == parts[1]
    library = libraries[0]
    assert [
        (
            e.pr,
            e.author,
            e.verdict,
            len(e.highlights),
            e.audience is not None,
            len(e.caveats),
            [r.number for r in e.refs],
        )
        for e in library
    ] == PROBE_ENTRIES
    assert all("-" not in e.highlights and e.why and e.tags for e in library)
    [problem] = library.problems
    assert (Path(problem.path).name, problem.line, problem.severity) == (
        "vllm-digest-2026-10.txt",
        10,
        "warning",
    )
    assert problem.message.startswith("blank line inside the note of '【修复】前缀缓存")


def test_a_month_in_another_hand_is_found_by_its_topics_in_english_and_chinese() -> None:
    index = SearchIndex.build(Library.load(PROBE).entries)
    assert [(query, index.search(query).hits[0].entry.pr) for query, _ in PROBE_QUERIES] == PROBE_QUERIES


@given(
    st.integers(1, 999_999),
    st.sampled_from(
        ['"#{}"', "PR {}", "'PR #{}'", "vllm-project/vllm#{}", "https://github.com/vllm-project/vllm/pull/{}"]
    ),
)
@settings(max_examples=60)
def test_a_pr_in_metadata_written_as_a_link_is_its_number(number: int, written: str) -> None:
    text = (
        "repo: vllm-project/vllm\nentries:\n  - title: T\n"
        f"    pr: {written.format(number)}\n    related: [{written.format(number + 1)}, {number + 2}]\n"
    )
    (meta,) = parse_structured(text, "d.meta.yaml").metadata
    assert (meta.pr, meta.url) == (number, f"https://github.com/vllm-project/vllm/pull/{number}")
    assert [ref.number for ref in meta.related] == [number + 1, number + 2]


def test_a_pr_written_after_a_bare_hash_is_an_error_at_its_line_not_a_silent_comment(tmp_path: Path) -> None:
    (tmp_path / "d.txt").write_text("vllm-project/vllm\n\nT\n\n值得精读。说明。\n", encoding="utf-8")
    meta = tmp_path / "d.meta.yaml"
    meta.write_text(
        "repo: vllm-project/vllm\nentries:\n  - title: T  # the note's title\n    pr: #54537\n",
        encoding="utf-8",
    )
    library = Library.load(tmp_path)
    assert [(e.title, e.pr) for e in library] == [("T", None)]
    assert [str(p) for p in library.problems] == [
        f"{meta}:4: error: `pr: #54537` is a YAML comment, so no number is read: write `pr: 54537`"
    ]
