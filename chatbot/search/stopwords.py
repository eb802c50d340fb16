"""Query words that name no topic: dropped (`STOPWORDS`), or refining a match but never making
one alone (`GENERIC_WORDS`, `GENERIC_HAN`; `IDENT_AFFIXES` around an identifier's topic)."""

from __future__ import annotations

from chatbot.search.tokens import Token, stem

# Words that carry no topic at all: dropped from queries.
STOPWORDS = frozenset(
    stem(w)
    for w in """a an the of to in on at for and or with without by from into is are was were be been
    being how what why which who whom when where does do did can could should would will shall may
    might must has have had having i me my we our you your it its this that these those about any some show find search
    look get give tell list all me please there here than then so not no yes hi hello thanks thank
    want need know like just also more most very much many one two three vs via per""".split()  # noqa: SIM905
)
# Words that say "this is about vLLM PRs" without naming a topic: they refine, never match alone.
GENERIC_WORDS = frozenset(
    stem(w)
    for w in """vllm pr prs pull request requests fix fixes fixed fixing bug bugs bugfix bugfixes issue
    issues digest entry entries topic topics thing things stuff new add adds added change changes
    changed update updates updated code reviewer review reviews worth read reading improve improved
    make makes problem problems github commit commits merge merged main model models""".split()  # noqa: SIM905
)
# Pieces of a setting's or function's name around its topic (`enable_prefix_caching`,
# `use_cuda_graph`): the rest of such an identifier says what it is about.
IDENT_AFFIXES = frozenset(
    stem(w)
    for w in """enable enabled disable disabled use using get has is vllm""".split()  # noqa: SIM905
)
GENERIC_HAN = frozenset(
    """修复 问题 什么 怎么 如何 哪些 哪个 相关 关于 有关 一个 这个 那个 我们 你们 他们 值得 精读 可以
    是否 一下 看看 介绍 讲讲 重点 关注 工程 程师 参考 借鉴 意义 有没 没有 时候 请问 帮我 查找 搜索
    一些 文章 内容 代码 最近 哪个 为什么 什么 么样 怎样 这些 那些 东西 有哪 想看 推荐 一篇 条目
    中的 里的 方面 主题 话题 模型""".split()  # noqa: SIM905
)


def filler(token: Token) -> bool:
    """A word an identifier's topic does not lie in (`use` of `use_cuda_graph`, `fix` of `fix_bug`)."""
    return token.key in STOPWORDS or token.key in GENERIC_WORDS or token.key in IDENT_AFFIXES
