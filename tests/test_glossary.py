"""The bilingual glossary: bundled data, curator extensions, problems with file:line."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from chatbot.search.glossary import Glossary, MatchMemo, load_glossary
from chatbot.search.tokens import split_text, tokenize


def concepts_of(glossary: Glossary, text: str) -> list[str]:
    return [e.concept for e in glossary.expand(text)]


def test_bundled_glossary_is_valid_and_broad() -> None:
    glossary = Glossary.load()
    assert glossary.problems == []
    assert len(glossary) > 80
    for concept in glossary.concepts.values():
        for included in concept.includes:
            assert included in glossary, f"{concept.id} includes unknown {included}"


def test_terms_bridge_languages_abbreviations_and_hardware() -> None:
    glossary = Glossary.load()
    pairs = {
        "编译": "compile",
        "torch.compile": "compile",
        "多模态": "multimodal",
        "spec decode": "speculative-decoding",
        "投机解码": "speculative-decoding",
        "PD 分离": "pd-disaggregation",
        "KV 卸载": "kv-offload",
        "前缀缓存": "prefix-caching",
        "DSv4": "deepseek-v4",
        "RTX 5090": "sm120",
        "RTX PRO 6000": "sm120",
        "GB200": "sm100",
        "H200": "hopper",
        "A100": "ampere",
        "NVFP4": "nvfp4",
        "qwen3vl": "qwen3-vl",
    }
    for text, concept in pairs.items():
        assert concept in concepts_of(glossary, text), text


def test_expand_gives_every_term_of_the_concept() -> None:
    [expansion] = Glossary.load().expand("投机解码")
    assert expansion.label == "speculative decoding"
    assert {"spec decode", "投机解码", "speculative decoding"} <= set(expansion.terms)


def test_curator_file_in_digest_dir_adds_terms_and_concepts(tmp_path: Path) -> None:
    (tmp_path / "team.glossary.yaml").write_text(
        "concepts:\n"
        "  - {id: compile, zh: [图模式]}\n"
        "  - {id: our-cluster, label: our cluster, en: [dragon cluster], zh: [龙集群]}\n",
        encoding="utf-8",
    )
    glossary = load_glossary(tmp_path)
    assert glossary.problems == []
    assert concepts_of(glossary, "图模式") == ["compile"]
    assert concepts_of(glossary, "torch.compile") == ["compile"]  # bundled terms kept
    assert concepts_of(glossary, "龙集群") == ["our-cluster"]


def test_bad_concepts_are_reported_with_line_and_the_rest_loads(tmp_path: Path) -> None:
    path = tmp_path / "glossary.yaml"
    path.write_text(
        "concepts:\n"
        "  - id: fine-one\n"
        "    en: [fine thing]\n"
        "  - id: Bad Id\n"
        "    en: [x]\n"
        "  - id: typo-field\n"
        "    english: [oops]\n"
        "  - id: no-terms\n"
        "  - id: ghost\n"
        "    en: [ghost]\n"
        "    includes: [nowhere]\n",
        encoding="utf-8",
    )
    glossary = Glossary.load([path], bundled=False)
    rendered = [str(p) for p in glossary.problems]
    assert rendered == [
        f"{path}:4: error: concepts.3.id: String should match pattern '^[a-z0-9][a-z0-9_.+-]*$'".replace(
            "concepts.3", "concepts.1"
        ),
        f"{path}:7: error: concepts.2.english: Extra inputs are not permitted",
        f"{path}:8: error: concept 'no-terms' has no terms",
        f"{path}:11: warning: includes unknown concept 'nowhere'",
    ]
    assert set(glossary.concepts) == {"fine-one", "ghost"}


def test_broken_yaml_is_one_problem_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "glossary.yaml"
    path.write_text("concepts:\n  - {id: a, en: [b\n", encoding="utf-8")
    glossary = Glossary.load([path])
    assert len(glossary.problems) == 1
    assert glossary.problems[0].path == str(path) and glossary.problems[0].line >= 2
    assert concepts_of(glossary, "投机解码 torch.compile") == ["speculative-decoding", "compile"]  # bundled


_GLOSSARY = Glossary.load()
_TERMS = sorted({t for c in _GLOSSARY.concepts.values() for t in c.terms})


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(_TERMS),
            st.sampled_from(
                ["的", " ", "，", "修复", "上", "and", "_", "-", "。", "PD", "KV", "kv cache", "缓存", "图"]
            ),
            st.text(max_size=6),
        ),
        max_size=12,
    )
)
def test_fast_index_matching_agrees_with_find(pieces: list[str]) -> None:
    """The index's `find_in` (substring and patterns) finds what `find` (token streams) finds,
    written as the text wrote it (a mixed-script match is traced back from its keys)."""
    text = "".join(pieces)
    slow = {(m.concept, m.term, m.text) for m in _GLOSSARY.find(tokenize(text))}
    fast = set(_GLOSSARY.find_in(split_text(text)))
    assert fast == slow, text


def test_memo_shares_one_value_for_pieces_that_match_nothing() -> None:
    """Most stretches and runs of a library name no term: a build's memo holds one shared
    value for all of them, not a pair and an empty set each (memory at the build's peak)."""
    memo = MatchMemo()
    plain = memo.segment_matches(_GLOSSARY, ["hello there", "quiet words"])
    runs = memo.run_matches(_GLOSSARY, ["你好朋友", "今天天气"])
    assert plain[0] == plain[1] == runs[0] == runs[1] == ((), frozenset())
    assert plain[0] is plain[1] is runs[0] is runs[1]
    [named] = memo.segment_matches(_GLOSSARY, ["torch.compile speedup"])
    assert named[0] and named[0] is not plain[0]
