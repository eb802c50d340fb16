"""A Chinese query met by the words an entry shares, not by the bigrams across them (a question
word is none); a typo corrected to a word with its first letter (issue 26)."""

from __future__ import annotations

from chatbot.digest import parse_raw_text
from chatbot.search import SearchIndex

DIGEST = """vllm-project/vllm

V1 prefix cache 只缓存新 block

小修：给 cache_full_blocks 传对的 num_cached_blocks，删掉一层检查。

给 metrics 加上 label

新 gauge 的 label 里带 adapter 列表，路由器拿它做决策。多个 adapter 怎么办还没定。

修 prefix cache 部分命中时的 block table

没命中的序列 block table 全是 0，结果算错，或者直接非法访存。适合踩过这个出错的人。
"""


def _index() -> SearchIndex:
    return SearchIndex.build(parse_raw_text(DIGEST, "digest.txt").entries)


def _titles(query: str) -> list[str]:
    return [hit.entry.title for hit in _index().search(query, limit=5).hits]


def test_a_chinese_run_is_met_by_the_words_an_entry_holds() -> None:
    # 命中, 结果, 出错 are in the first entry: six of eight characters, three of seven bigrams.
    assert _titles("prefix cache 命中一半结果出错")[0] == "修 prefix cache 部分命中时的 block table"


def test_one_word_of_a_two_word_run_is_not_the_run() -> None:
    assert _titles("图片输入") == []


def test_a_typo_keeps_its_first_letter() -> None:
    # `tabel` is one edit from `table` and from `label`: the first letter decides.
    assert _titles("block tabel")[0] == "修 prefix cache 部分命中时的 block table"


def test_a_question_word_and_one_character_is_no_topic() -> None:
    # `怎么写` covers two of its three characters in an entry saying `怎么办`: it names nothing.
    assert _titles("怎么写") == []


def test_a_glossary_name_typed_as_written_is_no_typo() -> None:
    # `minicpm` is a term's whole identifier: not a typo of `minicpmo`, a word of the library.
    digest = "vllm-project/vllm\n\nEagle3 支持 MiniCPM3\n\n值得一读。草稿模型。\n\nMiniCPMO 修复\n\n可跳过。改了 minicpmo.py。\n"
    index = SearchIndex.build(parse_raw_text(digest, "digest.txt").entries)
    assert "Eagle3 支持 MiniCPM3" in [hit.entry.title for hit in index.search("minicpm").hits]


def test_who_a_note_names_first_ranks_first_without_an_author() -> None:
    """No metadata names an author: the entry whose note opens with the person comes before one
    that names them last."""
    digest = (
        "vllm-project/vllm\n\nSpec decode metrics (#71001)\n\n@qandrew adds acceptance metrics; "
        "Jialin tested it and @WoosukKwon reviewed.\n\nFirst TPU backend (#71002)\n\n@WoosukKwon "
        "added the first TPU backend on PyTorch XLA.\n"
    )
    index = SearchIndex.build(parse_raw_text(digest, "digest.txt").entries)
    assert [h.entry.pr for h in index.search("WoosukKwon").hits][:2] == [71002, 71001]
