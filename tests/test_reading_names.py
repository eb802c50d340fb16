"""Reading notes by another hand: people without `@`, RFC refs, Markdown labels, rated verdicts,
lists of names (issue 26)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatbot.cli import main
from chatbot.digest import Library, analyse_note, json_schema, parse_raw_text
from chatbot.digest.names import find_people, find_refs
from chatbot.search import SearchIndex

REPO = "vllm-project/vllm"
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("note", "people"),
    [
        (
            "robertgshaw2-redhat and DarkLight1337 reviewed it; alexm-nm ran the numbers.",
            ["robertgshaw2-redhat", "DarkLight1337", "alexm-nm"],
        ),
        ("Michael Goin 对 scale 的处理很谨慎。", ["mgoin"]),
        ("Nicolo Lucchesi is the person to ping.", ["NickLucche"]),
        ("Nicolò Lucchesi 看过，mgoin把它合了，看njhill的分析。", ["NickLucche", "mgoin", "njhill"]),
        ("Who should read: quantization folks; Michael Goin (mgoin) already approved.", ["mgoin"]),
        ("Kunshang Ji (jikunshang) cut the older PR down.", ["jikunshang"]),
        ("Watch out: author jinzhen-lin did several rounds afterwards.", ["jinzhen-lin"]),
        ("zixi-qi chose the push connector over PR 43366.", ["zixi-qi"]),
        ("要连着 apatke 的 #5958 一起看。", ["apatke"]),
        (
            "Who should read: Blackwell folks; author wenscarl, reviewed by Pavani Majety (pavanimajety).",
            ["wenscarl", "pavanimajety"],
        ),
        ("@aarnphm 要求补一个测试，mgoin 直接 LGTM。", ["aarnphm", "mgoin"]),
        ("概述：加了 parser。作者 K-Mistele。", ["K-Mistele"]),
        ("**评审**: markmc, luyuzhe111, ekagra-ranjan", ["markmc", "luyuzhe111", "ekagra-ranjan"]),
        ("- **Reviewers:** iMMIQ, LDLINGLINGLING", ["iMMIQ", "LDLINGLINGLING"]),
        ("Reviewed by njhill and luyuzhe111.", ["njhill", "luyuzhe111"]),
        ("Reviewed by mgoin and top-k sampling folks.", ["mgoin"]),  # a list goes on with people only
        (
            "**评审**: cc 了 pcmoritz, robertgshaw2-neuralmagic, mgoin",
            ["pcmoritz", "robertgshaw2-neuralmagic", "mgoin"],
        ),
    ],
)
def test_people_named_without_an_at_are_read(note: str, people: list[str]) -> None:
    assert find_people(note) == people


@pytest.mark.parametrize(
    "note",
    [
        "Expert parallel (EP) is supported, DeepSeek-V2-Lite (MLA) too.",
        "by default the by-pass is done by hand; by 2x on SM100 by fp16.",
        "The author said top-k and V1-only paths were fixed; fp16 chose nothing.",
        "PR author said so, and the author notes that it is safe.",
        "由 pop 改为计数式 discard，kernel 的 #123 仍未合并。",
        "Thanks to pipeline parallel and the scheduler, it is faster.",
        "后来 #31777 发现 linear LoRA 的 PDL 反而拖慢。",  # a PR finds things, it is nobody
        "作者 PR 里说 Reviewers: the scheduler and kernel owners.",
    ],
)
def test_ordinary_words_and_code_are_nobody(note: str) -> None:
    assert find_people(note) == []


ORDINARY = st.sampled_from(
    [
        "the",
        "scheduler",
        "kernel",
        "cache",
        "is",
        "and",
        "was",
        "fixed",
        "chose",
        "wrote",
        "by",
        "default",
        "the",
        "patch",
        "model",
        "top-k",
        "fp16",
        "bf16",
        "V1-only",
        "DeepSeek-V2",
        "Llama-3.1-70B",
        "pipeline",
        "parallel",
        "的",
        "调度",
        "修复",
        "内存",
        "在",
        "review",
        "里",
        "of",
        "reviewed",
        "moved",
        "added",
        "cc",
        "ping",
        "thanks",
        "to",
        "TL;DR",
        "Risks:",
        "(EP)",
        "(MLA)",
        "2x",
        "SM100",
        "x86",
        "H100",
    ]
)


@given(st.lists(ORDINARY, min_size=1, max_size=30))
@settings(max_examples=200, deadline=None)
def test_no_ordinary_words_make_a_person(words: list[str]) -> None:
    """Handle-shaped words (`top-k`, `fp16`, `V1-only`) and lead words (`by`, `author`) in any
    order: none of them is a person unless the note says who someone is."""
    assert find_people(" ".join(words)) == []


def test_a_meta_people_list_and_authors_anchor_bare_handles(tmp_path: Path) -> None:
    (tmp_path / "d.txt").write_text(
        f"{REPO}\n\nLoRA 热加载\n\n值得精读。Alice Wong 对锁的分析很到位，bobsmith 补了测试。\n\n"
        "调度器重构\n\n值得一读。carol 重写了队列。\n",
        encoding="utf-8",
    )
    (tmp_path / "d.meta.yaml").write_text(
        f"repo: {REPO}\npeople:\n  alice-dev: Alice Wong\nentries:\n"
        "  - title: LoRA 热加载\n    pr: 101\n    author: bobsmith\n"
        "  - title: 调度器重构\n    pr: 102\n    reviewers: ['@carol']\n",
        encoding="utf-8",
    )
    library = Library.load(tmp_path)
    assert [e.people for e in library.entries] == [["alice-dev", "bobsmith"], ["carol"]]
    assert not library.errors


def test_the_schema_carries_people_and_reviewers() -> None:
    schema = json.loads(json_schema())
    assert "people" in schema["properties"]
    assert "reviewers" in schema["$defs"]["StructuredEntry"]["properties"]
    assert json.loads((ROOT / "docs" / "digest.schema.json").read_text(encoding="utf-8")) == schema


def test_rfc_issue_and_cross_repository_references_are_refs() -> None:
    refs = find_refs(
        "Design in RFC 14719, tracked in issue 15901; ported from sgl-project/sglang#11737.", REPO
    )
    assert [r.url for r in refs] == [
        "https://github.com/vllm-project/vllm/pull/14719",
        "https://github.com/vllm-project/vllm/pull/15901",
        "https://github.com/sgl-project/sglang/pull/11737",
    ]


MARKDOWN_NOTE = (
    "**TL;DR:** 启动时 `--scheduling-policy priority` 一个 flag 搞定。worth a skim ★★☆\n"
    "值得看：\n- 改动本身很小\n- 要连着 #5958 一起看\n"
    "注意：强制抢占不走 KV swap。\n谁该读：做多租户网关的同学。"
)


def test_a_markdown_tldr_label_and_a_rated_verdict_are_read_without_their_marks() -> None:
    parts = analyse_note(MARKDOWN_NOTE, REPO)
    assert parts.verdict == "worth a skim ★★☆"
    assert parts.why == "启动时 `--scheduling-policy priority` 一个 flag 搞定"
    assert parts.highlights == ["改动本身很小", "要连着 #5958 一起看"]
    assert parts.caveats == ["强制抢占不走 KV swap"]
    assert parts.audience == "做多租户网关的同学"


@pytest.mark.parametrize(
    ("note", "verdict"),
    [
        ("**TL;DR:** 换成 mmap 加载。Must-skim ★★★\n值得看：\n- 冷启动快\n- 文档补了", "Must-skim ★★★"),
        (
            "**TL;DR:** 纯重构。Must-skim ★★★（前提是你碰 structured output）\n注意：diff 很大。",
            "Must-skim ★★★（前提是你碰 structured output）",
        ),
        ("**TL;DR:** CPU 上的 LoRA。可跳过 ★☆☆\n注意：只测了 x86。", "可跳过 ★☆☆"),
        ("Skip unless you run --enable-server-load-tracking: it only counts /v1/responses.", "Skip"),
        ("Worth a skim for the perf trick: the queue is updated in place.", "Worth a skim"),
    ],
)
def test_verdicts_in_english_chinese_and_stars(note: str, verdict: str) -> None:
    assert analyse_note(note, REPO).verdict == verdict


@pytest.mark.parametrize(
    "note",
    [
        "Must read. Tested on hardware from:\n- NVIDIA\n- AMD\n- Intel\n- Google\n- AWS\nFocus: the scheduler change.",
        "Must read. Adopters: Meta; LinkedIn; Roblox; Red Hat; IBM. Focus: the scheduler change.",
    ],
)
def test_a_list_of_names_is_not_a_list_of_focus_points(note: str) -> None:
    parts = analyse_note(note, REPO)
    assert parts.highlights == ["the scheduler change"]


def test_explain_shows_the_people_and_refs_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    digest = tmp_path / "d.md"
    digest.write_text(
        f"{REPO}\n\n## 调度策略进 EngineArgs\n\n{MARKDOWN_NOTE}\nmgoin 看过，见 RFC 14719。\n",
        encoding="utf-8",
    )
    main(["validate", "--explain", str(digest)])
    out = capsys.readouterr().out
    assert "verdict:  worth a skim ★★☆" in out
    assert "people:   mgoin" in out
    assert "#14719 https://github.com/vllm-project/vllm/pull/14719" in out


def test_a_search_for_a_full_name_finds_the_entry_naming_the_handle() -> None:
    text = (
        f"{REPO}\n\nFP8 MoE 修复\n\n值得精读。mgoin 指出 scale 的广播错误。\n\n"
        "LoRA 热加载\n\n值得一读，Nick Hill 对锁粒度的分析很到位。\n\n调度器重构\n\n值得一读，队列改为原地更新。\n"
    )
    index = SearchIndex.build(parse_raw_text(text, "d.txt").entries)
    assert [hit.entry.title for hit in index.search("Michael Goin").hits] == ["FP8 MoE 修复"]
    assert [hit.entry.title for hit in index.search("njhill").hits] == ["LoRA 热加载"]


@pytest.mark.parametrize(
    ("note", "people"),
    [
        ("【结论】值得看。【看点】zixi-qi 让 P 端支持 PP。", ["zixi-qi"]),
        ("值得精读。wenscarl 接入 FlashInfer 的 kernel。", ["wenscarl"]),
        ("@ApostaC 和 @KuntaiDu、YaoJiayi 一起把接口开放出来。", ["ApostaC", "KuntaiDu", "YaoJiayi"]),
        ("值得看，JaneD 先在 FlashInfer 里把 PDL 接上了。", ["JaneD"]),  # a name and its initial
        ("值得看。bobchen 已经在上游那边修了这个。", ["bobchen"]),
    ],
)
def test_people_introduced_in_chinese_prose_are_read(note: str, people: list[str]) -> None:
    """A handle opening a clause before a doing verb, or listed with `@` handles, is a person."""
    assert sorted(find_people(note)) == sorted(people)


@pytest.mark.parametrize(
    ("note", "people"),
    [
        ("改了。scheduler 让请求排队，kernel 把数据搬走，pipeline 让它更快，tokenizer 把文本切开。", []),
        ("@mgoin 和 LMCache、NVIDIA 一起测过。", ["mgoin"]),
        ("值得看，FlashInfer 在 Blackwell 上把 kernel 调快了，PyTorch 也把接口改了，OpenAI 让它兼容。", []),
    ],
)
def test_words_doing_things_in_chinese_prose_are_nobody(note: str, people: list[str]) -> None:
    assert find_people(note) == people


@pytest.mark.parametrize(
    ("note", "verdict"),
    [
        ("> ★★★☆☆ 小而美，值得扫一眼\n- **Why:** 接上了 PDL。", "★★★☆☆ 小而美，值得扫一眼"),
        ("> ★★★★★ MI300 用户必读\n- **Why:** 不再掉回慢路径。", "★★★★★ MI300 用户必读"),
        ("> ★★☆☆☆ 可跳过：示例写清楚了。", "★★☆☆☆ 可跳过"),
        (
            "★★★☆☆ 改动很短但影响面大，worth a skim\n注意：默认打开。",
            "★★★☆☆ 改动很短但影响面大，worth a skim",
        ),
        ("> ★★★★☆\n> Focus: the scheduler change.", "★★★★☆"),
    ],
)
def test_a_rating_that_opens_a_quoted_line_is_the_verdict(note: str, verdict: str) -> None:
    """A Markdown quote marker hides neither a verdict nor a label."""
    parts = analyse_note(note, REPO)
    assert parts.verdict == verdict
    assert not any(">" in item for item in parts.highlights)


def test_a_quoted_label_is_read_as_a_label() -> None:
    parts = analyse_note("> 值得精读。\n> 风险：只测了 H100。", REPO)
    assert parts.verdict == "值得精读"
    assert parts.caveats == ["只测了 H100"]


def test_a_meta_pr_outranks_a_number_at_the_end_of_the_title(tmp_path: Path) -> None:
    """`… (#10395)` may be the issue a PR fixes: the `.meta.yaml` says which PR the entry is."""
    title = "[BugFix] Fix hermes tool parser stream arguments (#10395)"
    (tmp_path / "d.txt").write_text(
        f"{REPO}\n\n{title}\n\n值得一读。关掉了 issue 10395。\n", encoding="utf-8"
    )
    (tmp_path / "d.meta.yaml").write_text(
        f'repo: {REPO}\nentries:\n  - title: "{title}"\n    pr: 10398\n', encoding="utf-8"
    )
    (entry,) = Library.load(tmp_path).entries
    assert (entry.pr, entry.url) == (10398, f"https://github.com/{REPO}/pull/10398")


BOLD_BULLETS = (
    "> ★★★☆☆ worth a skim\n"
    "- **Why:** the prefill kernels are fused.\n"
    "- **Numbers:** TTFT about 8% lower on rank-8 adapters.\n"
    "- **Caveats:** prefill only; decode is untouched.\n"
    "- **How to enable:** any `--enable-lora` run picks it up.\n"
    "- **Status:** merged in 0.9.\n"
    "- **Who:** anyone serving many small adapters.\n"
)


def test_bold_bullet_labels_are_read_as_labels_without_their_marks() -> None:
    """`**How to enable:**` after a caveat is a part of its own, not more of the caveat; an
    unknown bold label (`**Status:**`) still ends the part before it."""
    parts = analyse_note(BOLD_BULLETS, REPO)
    assert parts.highlights == [
        "TTFT about 8% lower on rank-8 adapters",
        "any `--enable-lora` run picks it up",
    ]
    assert parts.caveats == ["prefill only; decode is untouched"]
    assert parts.audience == "anyone serving many small adapters"
    texts = [parts.why or "", *parts.highlights, *parts.caveats, parts.audience or ""]
    assert not any("*" in text or "Status" in text for text in texts)


@pytest.mark.parametrize(
    ("note", "people"),
    [
        ("Reported by ML-GCN in #9282; thanks to ML-GCN for the repro.", ["ML-GCN"]),
        (
            "The tracking issue comaniac co-authored with SolitaryThinker, Yard1 and rkooo567.",
            ["comaniac", "SolitaryThinker", "Yard1", "rkooo567"],
        ),
        (
            "Cyrus Leung cc'd K-Mistele; githebs, who had been chasing these bugs, tried it.",
            ["DarkLight1337", "K-Mistele", "githebs"],
        ),
        ("marcelodiaz558 had already tested it, and PedroF43 chimed in.", ["marcelodiaz558", "PedroF43"]),
        (
            "ztang2370 made the good start; deferred to chenyang78, mgoin and Lucas Wilkinson.",
            ["ztang2370", "chenyang78", "mgoin", "LucasWilkinson"],
        ),
        ("Hat tip to soumendus, who first pointed the bisect; r=mgoin.", ["soumendus", "mgoin"]),
    ],
)
def test_credits_reporters_co_authors_and_lists_name_people(note: str, people: list[str]) -> None:
    assert find_people(note) == people


@pytest.mark.parametrize(
    "note",
    [
        "Woosuk Kwon said he got the idea; Jee Jee Li confirmed it; Nick Hill said thanks.",
        "MiniCPM3's trainable layers differ, and GPT4's tokenizer too.",
        "作者 @matkle，two-shot all-reduce 的 kernel；作者 ping 了 @WoosukKwon",
        "longregen 发现文档的 hashing 建议落后了。",
        "Thanks to FlashInfer for the kernels; reported by users, who saw it first.",
    ],
)
def test_surnames_model_names_and_counting_words_are_nobody(note: str) -> None:
    found = set(find_people(note))
    assert not found & {
        "Kwon",
        "Li",
        "Hill",
        "MiniCPM3",
        "GPT4",
        "two-shot",
        "ping",
        "hashing",
        "FlashInfer",
        "users",
    }


def test_a_meta_people_map_written_name_first_maps_names_to_handles(tmp_path: Path) -> None:
    (tmp_path / "d.md").write_text(
        f"{REPO}\n\n### Scheduler (#101)\n\nCody Yu wrote it, Zed Quux approved it. Verdict: read it.\n",
        encoding="utf-8",
    )
    (tmp_path / "d.meta.yaml").write_text(
        'people:\n  "Zed Quux": zquux\n  "Cody Yu": comaniac\nentries:\n  - title: "Scheduler (#101)"\n    pr: 101\n',
        encoding="utf-8",
    )
    (entry,) = Library.load(tmp_path).entries
    assert entry.people == ["comaniac", "zquux"]


@pytest.mark.parametrize(
    ("note", "people"),
    [
        ("同一周 jmkuebler 也开了个 #21809，思路类似。", ["jmkuebler"]),
        ("之前 ehartford 在 #17579 里要的就是这个。", ["ehartford"]),
        ("@sighingnow 和 Juelianqvq 挂为共同作者。", ["sighingnow", "Juelianqvq"]),
        ("相关 issue #23641（luolun 提的思路）。", ["luolun"]),
        ("V1 在 #123 里修了，ROCm 的 #3 也是；scheduler 也开了个 #4，the co-author 没说话。", []),
    ],
)
def test_people_before_their_prs_and_roles_in_chinese_prose(note: str, people: list[str]) -> None:
    assert find_people(note) == people


@pytest.mark.parametrize(
    ("note", "people"),
    [
        (
            "People: tomasruizt (author)；ekagra-ranjan 建议测 AL；报 bug 的 CNTRYROA 被叫来试",
            ["tomasruizt", "ekagra-ranjan", "CNTRYROA"],
        ),
        ("People: charent (author)；jeejeelee 要求先解释 why this bug occurs", ["charent", "jeejeelee"]),
        ("MoE 层的同类改造是 #23463（rojagtap，关联 issue #20711）。", ["rojagtap"]),
        ("related: yurekami's #31288; March-H noticed the change.", ["yurekami", "March-H"]),
        ("0.89 @16, 0.85 @64 lol. the log showed it. backstory: mgoin's #18965 tried first.", ["mgoin"]),
        ("#31288 / #31307 (broadcast drafts from rank 0)", []),
    ],
)
def test_people_lines_pr_authors_in_brackets_and_at_numbers(note: str, people: list[str]) -> None:
    assert find_people(note) == people
