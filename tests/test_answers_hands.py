"""Notes in hands the bot was not written for: pasted from Slack (emoji shortcodes, `*label*`),
release-note tags (`Breaking:`, `r=@x`), a verdict closing the note under a one-line label."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.answers import Answerer
from chatbot.answers.answerer import _honest_line, _with_its_list
from chatbot.answers.candidates import Candidate
from chatbot.answers.composer import Composer
from chatbot.answers.intents import cached_reading
from chatbot.digest import Library
from chatbot.digest.rawtext import parse_raw_text
from tests.answering import ask

DIGEST = """vllm-project/vllm

KV cache 分层卸载 (#61001)

:white_check_mark: 建议看
*要点* 把冷的 KV block 挪到 CPU 内存，命中时再拷回 GPU
*坑* :warning: 只在 `--kv-offload-size` 大于 0 时生效，拷回有额外延迟
感谢 @alice 的 review

Make `Engine` keyword-only (#61002)

[must-read] Breaking: `Engine(...)` now takes only `model` positionally. Migration: pass the rest as keyword arguments. Perf: none measured. @bob, r=@carol.

调度器的抢占顺序 (#61003)

作者 dave 把抢占从按到达时间改成按优先级，吞吐从 10 req/s 到 12 req/s。不过低优先级请求可能饿死。一句话：建议精读。

Add a tokens-per-second gauge (#61004)

[skip] Closed, not merged. Adds a gauge with the live generation rate. @erin pushed back: a computed rate is an anti-pattern in Prometheus, export counters and let PromQL do `rate()`.

Log the scheduler's queue depth (#61005)

[skim] Closed. Logs the waiting queue depth every step at debug level. @frank.
"""


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> tuple[Answerer, Library]:
    folder = tmp_path_factory.mktemp("hands")
    (folder / "d.txt").write_text(DIGEST, encoding="utf-8")
    library = Library.load(folder)
    return Answerer(library), library


@pytest.mark.parametrize(
    ("pr", "question", "found", "expect", "absent"),
    [
        ("61001", "有啥坑", True, "--kv-offload-size", ":warning:"),  # a shortcode is a marker
        ("61002", "will this break my code", True, "only `model` positionally", ""),
        ("61002", "who approved it", True, "carol", ""),  # r=@carol names the reviewer
        ("61003", "要看吗", True, "建议精读", ""),  # the verdict closing the note
        ("61003", "吞吐提升多少", True, "12 req/s", ""),
        ("61003", "显存能省多少", False, "", ""),  # the only numbers are throughput
        ("61004", "why was it closed", True, "pushed back", ""),
        ("61004", "为啥被关了", True, "anti-pattern", ""),
        ("61005", "why was it closed", False, "", ""),  # closed, and the note says not why
    ],
)
def test_other_hands(
    bot: tuple[Answerer, Library], pr: str, question: str, found: bool, expect: str, absent: str
) -> None:
    answerer, library = bot
    entry = library.get(pr)
    assert entry is not None
    answer = answerer.answer(entry, question)
    assert answer.found is found, answer.text
    assert expect in answer.text
    assert not absent or absent not in answer.text.removesuffix(entry.url or ""), answer.text


def test_a_tldr_line_holding_only_the_verdict_is_not_the_summary(bot: tuple[Answerer, Library]) -> None:
    answerer, library = bot
    entry = library.get("61003")
    assert entry is not None
    answer = answerer.answer(entry, "tl;dr")
    assert "建议精读" not in answer.text and "抢占" in answer.text, answer.text


@pytest.mark.parametrize(
    ("question", "found"),
    [("比原来快吗", True), ("会不会拖慢请求", True), ("显存占用会变大吗", False), ("is it faster", True)],
)
def test_a_yes_no_question_about_a_measure_needs_a_clause_naming_it(
    bot: tuple[Answerer, Library], question: str, found: bool
) -> None:
    answerer, library = bot
    entry = library.get("61003")  # throughput is measured; memory is never named
    assert entry is not None
    assert answerer.answer(entry, question).found is found


TABLES_AND_QA = """vllm-project/vllm

## 前缀缓存换淘汰策略 (#62001)

| 项 | 说明 |
|---|---|
| 结论 | 值得看，做长上下文的可以读 |
| 风险 | 默认仍是 LRU；想用得自己 cherry-pick |
| 怎么开 | `--eviction-policy freq` |

## LoRA kernels exit early (#62002)

Q: 这个 PR 解决什么？ A: 某个 adapter 没有这个 slice 时 kernel 直接返回，不再空算。
Q: catch? A: dense 加载会慢约 2%（31.6 → 32.2 ms）。
Q: 有人复现吗 A: gina 复现后只涨了 0.1%。
"""


@pytest.mark.parametrize(
    ("pr", "question", "expect", "absent"),
    [
        ("62001", "有啥风险", "cherry-pick", "|"),  # a table row is its label and value
        ("62001", "how do i turn it on", "--eviction-policy freq", "|"),
        ("62002", "有没有坑", "31.6 → 32.2 ms", "Q:"),  # the answer under the curator's own question
        ("62002", "别人复现了吗", "gina", "Q:"),
    ],
)
def test_table_rows_and_qa_lines(tmp_path: Path, pr: str, question: str, expect: str, absent: str) -> None:
    answer = ask(tmp_path, TABLES_AND_QA, pr, question, name="d.md")
    assert answer.found, answer.text
    assert expect in answer.text and absent not in answer.text, answer.text


NOTION = """vllm-project/vllm

## 调度器顺序改成严格优先级 · #63001

- **背景**
  - 开了 chunked prefill 后，新 prefill 会插到 swapped 请求前面
- **改动**
  - 作者 @ann 把 "running > swapped > waiting" 变成严格优先级
  - 但最后 **没合，closed**
> 💡 结论：值得看，理解老调度器排序语义的好材料；代码已过时
"""


@pytest.mark.parametrize(
    ("question", "expect", "absent"),
    [
        ("merged?", "没合，closed", "**"),  # a state question, not a typo of "merged when"; no lone `**`
        ("tl;dr", "新 prefill 会插到 swapped", "好材料"),  # the note's first point, not the verdict's reasons
    ],
)
def test_a_notion_page(tmp_path: Path, question: str, expect: str, absent: str) -> None:
    answer = ask(tmp_path, NOTION, "63001", question, name="d.md")
    assert answer.found, answer.text
    assert expect in answer.text and absent not in answer.text, answer.text


def test_a_bare_label_above_a_list_is_what_the_list_is_about() -> None:
    """`- **现象**` over its sub-bullets names them (matched, never quoted alone)."""
    from chatbot.answers.candidates import note_clauses

    note = "- **现象**\n  - 结果 KV block 被偷偷加载回来\n- **修法**\n  - flag 为真时直接 return"
    clauses = [(text, about) for _, text, _, about in note_clauses(note)]
    assert clauses == [("结果 KV block 被偷偷加载回来", "现象"), ("flag 为真时直接 return", "修法")]


ROLES = """vllm-project/vllm

### Fix MiniCPM LoRA (#64001)

Reported by ml-gcn in #64000: LoRA on MiniCPM3 errored at load. Jee Jee Li (jeejeelee) fixed the target modules, co-authored with Cyrus Leung. r=mgoin with a plain LGTM.
"""


@pytest.mark.parametrize(
    ("question", "expect"),
    [
        ("谁报的 bug", "ml-gcn"),  # the question word asks for a person; 报 is "reported"
        ("co-author 是谁", "Cyrus Leung"),  # "author" inside "co-author" is not the author
        ("谁 approve 的", "r=mgoin"),
    ],
)
def test_who_did_what(tmp_path: Path, question: str, expect: str) -> None:
    answer = ask(tmp_path, ROLES, "64001", question, name="d.md")
    assert answer.found and expect in answer.text, answer.text


MEASURED = """vllm-project/vllm

FP8 层改走 CUTLASS kernel (#65001)

作者把 FP8 层从 `torch._scaled_mm` 换成自带的 CUTLASS kernel，在 Llama-3-8B 上端到端快了 5-15%。推荐。

前缀缓存的 block 标记提前 (#65002)

v2 块管理器调度完一个 batch 后没有把命中前缀缓存的 block 标成 computed，要等序列跑完。作者把标记提前到调度之后。

给 granite 20b 补 kernel 维度 (#65003)

往 punica kernel 里加维度，让 granite 20b 能跑 LoRA。gsm8k accuracy 从 0.6406 到 0.655。
限制: 模型的 head size 必须是 128 或 256
"""


@pytest.mark.parametrize(
    ("pr", "question", "found", "expect"),
    [
        ("65001", "speedup 多少", True, "5-15%"),  # a range is a number; 快了 says speed
        ("65002", "这个 bug 的根因是啥", True, "没有把命中前缀缓存的 block"),  # a failure to act is a cause
        ("65002", "修完之后快了几秒", False, ""),  # a how-much question; the note has no number
        ("65003", "有坑吗", True, "head size 必须是 128"),  # 限制 is a caveat's label
        ("65003", "给哪个模型加的", True, "granite 20b"),  # a name with a size is a model
        ("65003", "how much better is the accuracy", True, "0.655"),  # "better" is no subject
        ("65002", "用的哪个模型跑的", False, ""),  # a model is asked for; the note names none
        ("65001", "which model did they bench on", True, "Llama-3-8B"),
    ],
)
def test_measures_and_causes(tmp_path: Path, pr: str, question: str, found: bool, expect: str) -> None:
    answer = ask(tmp_path, MEASURED, pr, question)
    assert answer.found is found and expect in answer.text, answer.text


@pytest.mark.parametrize(
    ("question", "found"),
    [
        ("does it work with multimodal models too", False),  # the note never names them
        ("does it also work for suffix decoding", False),
        ("prefix caching 也能用吗", True),  # the note does name it
        ("does weight quantization at load time also go through the kernel", True),  # most words are there
    ],
)
def test_a_question_about_the_changes_reach(tmp_path: Path, question: str, found: bool) -> None:
    note = (
        "vllm-project/vllm\n\nPrefix caching for prompt embeds (#66001)\n\n"
        "[must-read] Prefix caching now works for requests sent as prompt embeds; weight quantization "
        "at load time keeps the old kernel. Fixes issue #25096.\n"
    )
    answer = ask(tmp_path, note, "66001", question)
    assert answer.found is found, answer.text


def test_a_reason_for_closing_speaks_of_its_fate(tmp_path: Path) -> None:
    """A "because" about how the change works is no reason the PR was closed."""
    note = (
        "vllm-project/vllm\n\n不做 split_k (#66002)\n\n"
        "不做 split_k，因为 expand 的 K 很小，所以收益有限。PR 已关闭。\n\n"
        "加吞吐 gauge (#66003)\n\nrobertgshaw2-redhat 指出算好再挂 gauge 是 anti-pattern。PR 已关闭。\n"
    )
    assert ask(tmp_path, note, "66002", "为啥被关了").found is False
    reply = ask(tmp_path, note, "66003", "为啥被关了")
    assert reply.found and "指出算好再挂 gauge" in reply.text, reply.text


@pytest.mark.parametrize(
    ("question", "found"), [("开了 tkw1 之后吞吐多少", False), ("without tkw1 吞吐多少", True)]
)
def test_a_value_after_the_change_is_not_the_baseline(tmp_path: Path, question: str, found: bool) -> None:
    note = (
        "vllm-project/vllm\n\nAITER tkw1 MoE kernel (#66004)\n\n"
        "Wires the tkw1 kernel in. Baseline without tkw1 was 6.47 requests/s; the after figure is in the PR.\n"
    )
    assert ask(tmp_path, note, "66004", question).found is found


def test_a_summary_skips_a_line_saying_only_who_reviewed_it(tmp_path: Path) -> None:
    """ "改了啥" is told by the change, not by the closing "X 已 review"; and a 、 joining two
    clauses ("原来先起 A、等它就绪再起 B，改成…") is one point, not a list of two."""
    note = (
        "vllm-project/vllm\n\nP/D 示例改为并发启动 #66005\n\n"
        "【结论】可看可不看。【看点】demo 原来先起 prefill、等它就绪再起 decode，改成两边同时拉起，"
        "启动等待大约减半。【坑】只动了 examples。Nicolò Lucchesi 已 review。\n"
    )
    reply = ask(tmp_path, note, "66005", "改了啥")
    assert "两边同时拉起" in reply.text and "已 review" not in reply.text, reply.text


POLARITY_NOTE = (
    "vllm-project/vllm\n\nRDNA3 上的 FP8 MoE 路径 (#66010)\n\n"
    "值得一读。只覆盖 gfx1100，gfx1151（Strix Halo）要等 #46186。"
    "A100 这类没有 FP8 的卡才走这条路，4090 是 Ada 有原生 FP8，不走这里。"
    "新 gauge 是启动以来的累计值，不是滑动窗口。RTX 5090 上 GSM8K 是 0.897。"
    "和 fp8 KV cache 一起用还没验证。The old counter is deprecated rather than removed.\n"
)


@pytest.mark.parametrize(
    ("question", "lead"),
    [
        ("strix halo 能用吗", "不。"),  # "要等 #46186": not yet, though nothing says 不
        ("4090 能跑吗", "不。"),
        ("gauge 是滑动窗口吗", "不。"),
        ("does this work on a 5090", "Yes."),
        ("can i combine it with fp8 kv cache", ""),  # not tried: neither yes nor no
        ("is the old counter gone", ""),  # "deprecated rather than removed": weighed, neither
    ],
)
def test_a_yes_or_no_is_read_in_the_sentence_naming_what_was_asked(
    tmp_path: Path, question: str, lead: str
) -> None:
    reply = ask(tmp_path, POLARITY_NOTE, "66010", question)
    assert reply.found, reply.text
    if lead:
        assert reply.text.startswith(lead), reply.text
    else:
        assert not reply.text.startswith(("Yes", "No", "是的", "不。")), reply.text


def test_a_clause_promising_a_list_is_said_with_it() -> None:
    """ "…能白拿到的东西：A、B，以及 C" is said with what it promised, not as the promise alone; a
    label's value (`可跳过：…`) is not such a promise."""
    note = (
        "@tlrm 补充了升级能白拿到的东西：Lovelace fp8 kernels、2:4 sparse kernels，以及一些改进。评审里有坑。"
    )
    promise = Candidate(("note", "people"), "@tlrm 补充了升级能白拿到的东西", "note")
    said = _with_its_list(note, promise)
    assert (
        said.text == "@tlrm 补充了升级能白拿到的东西：Lovelace fp8 kernels、2:4 sparse kernels，以及一些改进"
    )
    verdict = Candidate(("verdict",), "★★☆ 可跳过", "verdict")
    assert _with_its_list("★★☆ 可跳过：只改了示例。", verdict) == verdict


def test_a_summary_tells_the_change_not_the_review(tmp_path: Path) -> None:
    note = (
        "vllm-project/vllm\n\nTPU 上 V1 换成 ragged paged attention (#66011)\n\n"
        "值得精读，尤其是三个点：一是把 v1 `pallas.py` 里的 3 个独立 kernel 换成新的 kernel；二是把 prompt "
        "和 decode 合成一个 step；三是顺带升级了 `torch_xla` 的 pin。评审里 @alexm-redhat 要求给常量补一段"
        "说明，作者 @vanbasten23 后来在 #14155 里补上。对从事 TPU 后端的工程师尤其有借鉴意义。注意：测试很慢。\n"
    )
    summary = ask(tmp_path, note, "66011", "tl;dr")
    assert "3 个独立 kernel" in summary.text and "评审里" not in summary.text, summary.text


def test_a_reviewers_verdict_quoted_in_the_note_answers_who_reviewed_it(tmp_path: Path) -> None:
    note = (
        "vllm-project/vllm\n\nMLA fp8 cat + quant 融合 (#66012)\n\n"
        "★★☆ worth a skim\n\n**TL;DR:** 复用 `QuantFP8`，不写新 kernel。\n\n"
        '**Why it matters:** ProExpertProg 的评价是 "a very elegant solution"，mgoin 说 "Elegant reuse"。\n'
    )
    reply = ask(tmp_path, note, "66012", "who reviewed the MLA fusion one")
    assert reply.found and "mgoin" in reply.text, reply.text


def test_who_wrote_it_is_denied_in_its_own_words_not_as_a_clipped_topic() -> None:
    """ "who wrote the v1 ngram one" on a note naming no one: the kind's own line, not "doesn't
    cover wrote the v1 ngram one"."""
    (entry,) = parse_raw_text("vllm-project/vllm\n\nV1 ngram (#66013)\n\n值得一读。\n", "d.txt").entries
    question = "who wrote the v1 ngram one"
    line = _honest_line(cached_reading(question), [], Composer(entry, "en", 200), question)
    assert line == "The note names no author and no people.", line


@pytest.mark.parametrize(
    ("question", "expect"),
    [
        ("2.76x 是实测的吗", "simulation"),  # `2.76x` is one word, not a `76x` the note lacks
        ("多久打一次 warning", "每 500 次"),  # how often: answered by "every N"
        ("how often does it warn", "每 500 次"),
    ],
)
def test_a_decimal_and_a_frequency_are_read_as_written(tmp_path: Path, question: str, expect: str) -> None:
    note = (
        "vllm-project/vllm\n\nTPU v6e 调优框架 (#66016)\n\n"
        "可跳过。平均加速 2.76x，但注明是 simulation，不是实机跑出来的。"
        "第一次发生 preemption 时打 warning，之后每 500 次再打一次。\n"
    )
    reply = ask(tmp_path, note, "66016", question)
    assert reply.found and expect in reply.text, reply.text


@pytest.mark.parametrize(
    ("question", "lead", "expect"),
    [
        ("cu118 wheels 还上传吗", "不。", "CUDA 11.8"),  # a wheel tag is its CUDA version; 不上传 is a no
        ("does it support sampling with temperature or only greedy", "", "greedy"),  # one of two named
    ],
)
def test_a_wheel_tag_and_an_alternative_are_answered(
    tmp_path: Path, question: str, lead: str, expect: str
) -> None:
    note = (
        "vllm-project/vllm\n\nV1 ngram + wheels (#66017)\n\n值得一读。"
        "只支持 greedy decoding，只在 decode 阶段做 spec decode。"
        "`.buildkite/upload-wheels.sh` 里 CUDA 11.8 的 wheel 是不上传的。\n"
    )
    reply = ask(tmp_path, note, "66017", question)
    assert reply.found and expect in reply.text, reply.text
    assert reply.text.startswith(lead) and (lead or not reply.text.startswith(("Yes", "No"))), reply.text


def test_a_clause_is_quoted_once_however_its_colon_is_written(tmp_path: Path) -> None:
    """`Numbers: 四个条件…：A、B` read as a label's value and as a clause is one thing: said once."""
    note = (
        "vllm-project/vllm\n\nmulti-LoRA 在 TP>=2 下输出错乱 (#66018)\n\n"
        "Verdict: 4/5 值得看\n"
        "Numbers: 四个条件同时满足才触发：`tensor_parallel_size >= 2`、`max-cpu-loras >= 2`、"
        "`serving-lora-modules >= 2`、`max_loras < max-cpu-loras`\n"
        "Fix: `PackedLoRALayerWeights.pack()` 不再原地改权重。\n"
    )
    reply = ask(tmp_path, note, "66018", "啥条件下会触发这个 lora bug")
    assert reply.text.count("四个条件同时满足才触发") == 1, reply.text
    assert "max_loras < max-cpu-loras" in reply.text, reply.text


def test_a_summary_skips_whose_pr_it_was_and_where_it_ended(tmp_path: Path) -> None:
    """ "这个是 X 提的改动，最后 closed 没进主线" frames the change; the summary tells it."""
    note = (
        "vllm-project/vllm\n\n[Core] allocate all prefill kv greedily (#66019)\n\n"
        "这个是 @milesial 提的 V1 scheduler 改动，最后 closed 没进主线，但思路值得过一遍。"
        "看点：判断能不能调度的时候就把整段 prefill 的 KV 一次性要下来，要不到就先别进来。"
        "做调度的必看。\n"
    )
    summary = ask(tmp_path, note, "66019", "tl;dr")
    assert "整段 prefill 的 KV" in summary.text and "没进主线" not in summary.text, summary.text
