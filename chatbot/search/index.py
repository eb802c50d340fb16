"""Topic search over the library: weighted fields, glossary expansion, typo correction.

Public contract used by the Slack adapter, the CLI and the answerer:
`SearchIndex.build(entries, glossary=None)`, `.search(query, limit, offset) -> SearchResult`,
`.topics()`.

A query becomes *units*: glossary concepts it names (`spec decode`), and what is left —
single words, code identifiers, Chinese runs. Each unit scores an entry by the heaviest field
it occurs in (`W_*`: PR number 5 > title, author 3 > GitHub title, tags 2.5 > identifiers,
people 2 > related and referenced PRs 1.5 > note 1) times its strength (`SYNONYM` 0.6 for any term of the
concept, plus the asked term's own field weight (`LITERAL` 1.0) where the entry uses it; a
narrower concept `NARROWER` 0.45; a typo correction ×`FUZZY` 0.7) times its rarity (BM25 idf).
Generic words (fix, PR, 修复…) add only a little and never match alone; an entry needs one
real unit, and hits far below the best one are dropped, so a query that matches nothing real
returns nothing, with topics to suggest instead.
"""

from __future__ import annotations

import math
import re
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain, islice, repeat
from typing import Any, Generic, NamedTuple, TypeVar, cast

import numpy as np
from numpy.typing import NDArray
from rapidfuzz import process
from rapidfuzz.distance import OSA

from chatbot.digest import Entry, full_names
from chatbot.search.descriptions import MIN_KEYS, Described, DescriptionIndex
from chatbot.search.glossary import ConceptMatch, Glossary, KeyTest, MatchMemo, remember
from chatbot.search.hanfields import han_fields, level_holding
from chatbot.search.sharing import NamedParts, compound_held, named_in, not_minority, not_padding
from chatbot.search.tokens import (
    Kind,
    SplitText,
    Token,
    atomic,
    han_text,
    run_keys,
    segment_words,
    split_text,
    stem,
    surface_of,
    tokenize,
)
from chatbot.search.written import Writings
from chatbot.text import HAN_RUN, han_class

# Field weights: where a term occurs says how much the entry is about it.
W_PR = 5.0
W_TITLE = 3.0
W_AUTHOR = 3.0
W_GITHUB_TITLE = 2.5
W_TAG = 2.5
W_IDENTIFIER = 2.0
W_PERSON = 2.0
W_REF = 1.5
W_NOTE = 1.0
FIELD_WEIGHTS = (
    W_PR,
    W_TITLE,
    W_AUTHOR,
    W_GITHUB_TITLE,
    W_TAG,
    W_IDENTIFIER,
    W_PERSON,
    W_REF,
    W_NOTE,
)
WEIGHT_OF_LEVEL = sorted(set(FIELD_WEIGHTS))  # postings store a field's level, lightest 0
LEVEL = {weight: level for level, weight in enumerate(WEIGHT_OF_LEVEL)}
STRONG_FIELD = W_IDENTIFIER  # fields at least this heavy say what the entry is *about* (topics)

LITERAL = 1.0
SYNONYM = 0.6
NARROWER = 0.45
FUZZY = 0.7
GENERIC = 0.15
PARTIAL = 0.7
RELATIVE_FLOOR = 0.2

# Words that carry no topic at all: dropped from queries.
STOPWORDS = frozenset(
    stem(w)
    for w in """a an the of to in on at for and or with without by from into is are was were be been
    being how what why which who whom when where does do did can could should would will shall may
    might must i me my we our you your it its this that these those about any some show find search
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
# Words of the neighbouring domains (infrastructure, databases, drivers, deployment): a question about
# Terraform state, a MySQL index or a CUDA driver install uses them, and so do notes on vLLM. Alone
# they name nothing of vLLM: neither as a plain word nor as the glossary term they happen to be
# (`state` is stemmed like `stats`, `index` like `indexer`, `迁移` is a refactor's) do they make a hit;
# they refine one that a specific concept, identifier or distinctive term makes.
NEAR_DOMAIN = frozenset(
    """state states stateful lock locks locking index indexes indices install installs installed
    installing installation installer driver drivers migration migrations migrate migrating database
    databases db server servers deploy deploys deployed deploying deployment deployments table tables
    query queries schema schemas cluster clusters node nodes proxy proxies container containers
    autoscaling autoscaler autoscale scaling scale instance instances replica replicas backup backups
    storage disk disks network networking port ports service services setup upgrade upgrades upgrading
    version versions connection connections transaction transactions docker kubernetes k8s helm pod
    pods terraform ansible gpu gpus alert alerts alerting dashboard dashboards""".split()  # noqa: SIM905
)
# Subjects of those domains: a query naming one that no entry mentions is about it, not about vLLM
# (`MySQL index`, `Redis cache eviction`): it gets the honest no-match, whatever else it shares.
FOREIGN_SUBJECTS = frozenset(
    """terraform mysql postgres postgresql redis nginx kafka elasticsearch mongodb mariadb sqlite
    jenkins ansible apache tomcat haproxy rabbitmq memcached cassandra zookeeper etcd istio envoy
    autoscaling autoscaler hpa linux ubuntu debian centos systemd alertmanager grafana datadog airflow
    spark hadoop flink java jvm react vue angular django spring oauth ssl dns sql nosql tensorflow onnx
    onnxruntime torchserve tritonserver tensorrt-llm trt-llm trtllm kubectl minikube openshift""".split()  # noqa: SIM905
)
# Other serving stacks, by their names in more than one word.
FOREIGN_PHRASES = ("triton inference server", "tensorflow serving", "text generation inference")
NEAR_DOMAIN_HAN = frozenset(
    """迁移 部署 安装 驱动 数据库 索引 状态 锁 服务器 服务 集群 节点 容器 升级 版本 扩缩容 自动扩缩容 网络
    端口 存储 备份 查询 事务 连接池 数据 配置 冲突 失败 执行 解析 环境 温度 显示 过高 不足 不够 磁盘 带宽 证书
    域名 连不上 连接 宕机 告警 面板""".split()  # noqa: SIM905
)
GENERIC_HAN = frozenset(
    """修复 问题 什么 怎么 如何 哪些 哪个 相关 关于 有关 一个 这个 那个 我们 你们 他们 值得 精读 可以
    是否 一下 看看 介绍 讲讲 重点 关注 工程 程师 参考 借鉴 意义 有没 没有 时候 请问 帮我 查找 搜索
    一些 文章 内容 代码 最近 哪个 为什么 什么 么样 怎样 这些 那些 东西 有哪 想看 推荐 一篇 条目
    中的 里的 方面 主题 话题 模型""".split()  # noqa: SIM905
)


@dataclass(frozen=True)
class Hit:
    """One ranked entry with the query terms that matched it (for display)."""

    entry: Entry
    score: float
    matched: list[str]


@dataclass(frozen=True)
class SearchResult:
    """A page of ranked hits; `suggestions` are topics to offer when nothing matched."""

    query: str
    hits: list[Hit]
    total: int
    suggestions: list[str] = field(default_factory=list)


class _Analysed(NamedTuple):
    """What one field contributes to the index."""

    keys: list[array[int]]  # key numbers per Latin stretch and Chinese run (pieces may share keys)
    segments: list[str]  # Latin stretches, for the vocabulary
    matches: tuple[tuple[str, str, str], ...]  # (concept, glossary term, as written)
    concepts: frozenset[str]
    concept_terms: frozenset[tuple[str, str]]
    han: str
    numbers: tuple[array[int], array[int]] = (array("I"), array("I"))  # of concepts, of terms


_NO_CONCEPTS: frozenset[str] = frozenset()
_NO_TERMS: frozenset[tuple[str, str]] = frozenset()

K = TypeVar("K", str, tuple[str, str])


class _Postings(Generic[K]):
    """Per key, the entries holding it with the weight of the heaviest field it occurs in.

    Built as flat arrays: the key numbers of each field as its pieces of text give them
    (repeats included), and per field its entry, level and key count (no object, no dict per
    entry or posting). Every `chunk` raw postings they are packed (`_pack`) into 64-bit
    (key, entry, 15 - level) values and the raw arrays start over. `finish` sorts the packed
    values in place, keeps each (key, entry) once at its heaviest level and splits them into
    entries and levels (5 bytes a posting kept), sliced per key at query time: no step holds
    a second copy of the table."""

    chunk = 1 << 16  # raw postings packed at a time: big enough that numpy's calls are few

    def __init__(self) -> None:
        self.weights = np.array(WEIGHT_OF_LEVEL, dtype=np.float64)
        self._ids: dict[K, int] = {}  # interned keys: a key's number is the count of keys before it
        self._keys = array("I")
        self._counts = array("I")
        self._entries = array("I")
        self._levels = array("B")
        self._packed = array("Q")  # packed postings of the entries so far, each (key, entry) once
        self._starts = np.zeros(1, dtype=np.intp)
        self._found = np.zeros(0, dtype=np.uint32)
        self._found_levels = np.zeros(0, dtype=np.uint8)

    def numbers(self, keys: frozenset[K]) -> array[int]:
        """The keys' numbers, a new key numbered by the count of keys before it: one C-level
        `setdefault` per key, its default the dict's size at that moment (`map` takes each
        size just before the call that may add the key), not a set difference, an update and
        a lookup."""
        ids = self._ids
        return array("I", map(ids.setdefault, keys, map(len, repeat(ids))))

    def number(self, key: K) -> array[int]:
        """One key's number (a PR number field holds one key: no set made for it)."""
        ids = self._ids
        number = ids.get(key)
        if number is None:
            number = ids[key] = len(ids)
        return array("I", (number,))

    def add_fields(self, index: int, levels: Sequence[int], fields: Sequence[Sequence[array[int]]]) -> None:
        """Post the fields of entry `index`, each the key numbers of its pieces at its level, at
        once: one copy of all their buffers, a few C-level extends, no Python call per field
        beyond counting its keys. Fields come heaviest first, so an entry's first posting of a
        key has the right level."""
        self._keys.frombytes(b"".join(chain.from_iterable(fields)))
        self._counts.extend([sum(map(len, pieces)) for pieces in fields])
        self._entries.extend(repeat(index, len(levels)))
        self._levels.extend(levels)
        if len(self._keys) >= self.chunk:
            self._pack()

    def _pack(self) -> None:
        """Pack the raw postings since the last pack into 64-bit (key, entry, 15 - level)
        values (sorting them here too, to drop repeats early, cost 3% of a build: a second sort
        of every posting for 15% fewer of them)."""
        if not self._entries:
            return
        if self._entries[-1] >= 1 << 28:
            raise ValueError("an index holds fewer than 2**28 entries")
        counts = np.frombuffer(self._counts, dtype=np.uint32)
        per_field = np.frombuffer(self._entries, dtype=np.uint32) << np.uint32(4)
        per_field |= np.uint32(15) - np.frombuffer(self._levels, dtype=np.uint8)
        packed = np.frombuffer(self._keys, dtype=np.uint32).astype(np.uint64)
        packed <<= np.uint64(32)
        packed |= np.repeat(per_field, counts)  # 4 bytes a posting, widened in the ufunc's buffer
        del per_field, counts
        self._keys, self._counts, self._entries, self._levels = array("I"), array("I"), array("I"), array("B")
        self._packed.frombytes(packed.tobytes())

    def finish(self) -> None:
        """Sort the packed postings in place (by key, entries ascending, the heaviest level of
        a (key, entry) first), keep the first of each (key, entry) and split them into the
        entries and levels kept, a slice at a time: each posting's entry and level (its low 32
        bits) are written over the front of the packed buffer itself, which then shrinks to
        them before the levels are taken out. No second table-sized array is ever held (at
        100k entries the table is ~100 MB packed), nor the levels beside the full buffer."""
        self._pack()
        buffer, self._packed = self._packed, array("Q")
        packed = np.frombuffer(buffer, dtype=np.uint64)
        packed.sort()
        packed = packed[: self._dedupe(packed)]
        # Key k's postings start at the first value of at least k << 32.
        bounds = np.arange(len(self._ids) + 1, dtype=np.uint64) << np.uint64(32)
        self._starts = np.searchsorted(packed, bounds).astype(np.intp, copy=False)
        del bounds
        found = np.frombuffer(buffer, dtype=np.uint32)  # posting i's (entry, level) goes to its 4i..4i+3
        step, part, count = self.chunk, packed[:0], len(packed)
        for lo in range(0, count, step):
            # Values lo.. are read before the slice writes bytes 4lo..4(lo+step), values below
            # lo: a step never longer than lo (the first slice is computed before it is written).
            part = packed[lo : lo + step]
            found[lo : lo + len(part)] = part & np.uint64(0xFFFFFFFF)  # entry << 4 | 15 - level
        del packed, found, part
        del buffer[(count + 1) // 2 :]  # the entries' half stays; realloc gives the rest back
        self._found = np.frombuffer(buffer, dtype=np.uint32, count=count)
        self._found_levels = np.empty(count, dtype=np.uint8)
        for lo in range(0, count, step):
            low = self._found[lo : lo + step]
            self._found_levels[lo : lo + step] = np.uint32(15) - (low & np.uint32(0xF))
            low >>= np.uint32(4)

    def _dedupe(self, packed: NDArray[np.uint64]) -> int:
        """Keep the first of each (key, entry) of the sorted values (its heaviest level) at the
        front, in place, a slice at a time; return how many."""
        kept, step = 0, self.chunk
        for lo in range(0, len(packed), step):
            part = packed[lo : lo + step + 1]  # the next slice's first value: is it new?
            new = (part[1:] ^ part[:-1]) > np.uint64(15)
            values = part[1:][new]
            if lo == 0:
                values = np.concatenate([part[:1], values])
            packed[kept : kept + len(values)] = values
            kept += len(values)
        return kept

    def number_of(self, key: K) -> int | None:
        """The key's number, None for a key never posted."""
        return self._ids.get(key)

    def get(self, key: K) -> tuple[NDArray[np.uint32], NDArray[np.float64]]:
        """The entries holding `key` (ascending) and each one's field weight."""
        number = self.number_of(key)
        if number is None:
            return self._found[:0], self.weights[:0]
        lo, hi = self._starts[number], self._starts[number + 1]
        return self._found[lo:hi], self.weights[self._found_levels[lo:hi]]

    def raise_to(self, vector: NDArray[np.float64], key: K, factor: float = 1.0) -> None:
        """Raise each entry's score in `vector` to its weight for `key` times `factor` (an
        entry is listed once per key, so the indices are distinct)."""
        found, weights = self.get(key)
        vector[found] = np.maximum(vector[found], weights * factor)

    def __contains__(self, key: K) -> bool:
        return key in self._ids


@dataclass
class _Unit:
    """One thing the query asks for: its score per entry, and how to show what matched.

    `scores` is a float64 vector over all entries, 0.0 where the unit did not match (every
    score a unit gives is positive); `matched` counts the entries it matched (for the idf).
    """

    generic: bool
    scores: NDArray[np.float64]
    display: Callable[[int], list[str]]
    qualifies: bool = True  # False: adds to an entry's score but cannot make it a hit alone
    plain: bool = False  # a plain Latin word (`cache`, `engine`), not a concept or identifier
    asked: bool = True  # False: a second unit of something the query asked once (literal term)
    keys: frozenset[str] = frozenset()  # the query's keys it stands for (a description may explain them)
    near: bool = False  # a word of a neighbouring domain: asked, but no answer to it is a vLLM entry
    unknown: bool = False  # a word neither the library nor vLLM's vocabulary knows

    @property
    def matched(self) -> int:
        return int(np.count_nonzero(self.scores))


def _fields(entry: Entry) -> list[tuple[float, str, bool]]:
    """An entry's searchable texts with their weights, and whether the text is one that recurs
    across entries (tags, identifiers, people, refs: analysed once per index); list fields stay
    separate texts. Focus points, why-read and caveats are clauses of the note, so the note
    covers them.
    """
    out: list[tuple[float, str, bool]] = [(W_TITLE, entry.title, False)]
    out.extend((W_TAG, tag, True) for tag in entry.tags)
    if entry.github_title:
        out.append((W_GITHUB_TITLE, entry.github_title, False))
    out.extend((W_IDENTIFIER, ident, True) for ident in entry.identifiers)
    for person in entry.people:  # a handle, and the full names written for it (`Michael Goin`)
        out.append((W_PERSON, person, True))
        out.extend((W_PERSON, name, True) for name in full_names(person))
    if entry.author:
        out.append((W_AUTHOR, entry.author, True))
        out.extend((W_AUTHOR, name, True) for name in full_names(entry.author))
    if entry.pr:
        out.append((W_PR, f"#{entry.pr}", True))
    out.extend((W_REF, f"#{ref.number}", True) for ref in entry.all_refs)
    out.append((W_NOTE, entry.note, False))
    return out


def _dedupe_surfaces(surfaces: Iterable[str]) -> list[str]:
    """Display terms in order, without one contained in an earlier one or containing it."""
    kept: list[str] = []
    kept_keys: list[str] = []
    seen: set[str] = set()
    for s in surfaces:
        if s in seen:  # an entry writes a term many times; its first copy decided already
            continue
        seen.add(s)
        folded = _display_key(s)
        # A plain loop, not `any` over a generator: this runs for every term of every hit.
        for key in kept_keys:
            if _contains(key, folded) or _contains(folded, key):
                break
        else:
            kept.append(s)
            kept_keys.append(folded)
    return kept


@lru_cache(maxsize=1 << 14)
def _display_key(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def _contains(longer: str, shorter: str) -> bool:
    """`minicpm` in `minicpmo`, `编译` in `可编译`; but a short Latin word (`ci`) is not inside any word."""
    if shorter == longer:
        return True
    return shorter in longer and (len(shorter) >= 4 or _is_han(shorter))


@lru_cache(maxsize=1 << 14)
def _is_han(text: str) -> bool:
    """Cached: display terms recur, and every hit asks this of each of them, several times."""
    return bool(han_text(text))


def _display(surfaces: list[str], query_terms: list[str]) -> list[str]:
    """Up to two display terms: the one closest to what was asked, and one in the other script."""
    if not surfaces:
        return []
    asked = [t.casefold() for t in query_terms]
    first = next((s for s in surfaces if any(a in s.casefold() for a in asked)), surfaces[0])
    other = next((s for s in surfaces if _is_han(s) != _is_han(first)), None)
    return [first, other] if other else [first]


class _Build(MatchMemo):
    """What one index build remembers and then drops: glossary matches and key numbers per
    distinct Latin stretch and Chinese run (notes repeat them), and the analyses of recurring
    fields. Nothing of it outlives the build: module-level caches would keep a library's worth
    of small objects for the life of the process."""

    def __init__(self, postings: _Postings[str], glossary: Glossary) -> None:
        super().__init__()
        self.postings = postings
        self.glossary = glossary
        self.segment_numbers: dict[str, array[int]] = {}
        self.run_numbers: dict[str, array[int]] = {}
        self.analysed: dict[str, _Analysed] = {}
        self.words: dict[str, str] = {}  # surface → key of the library's words, first seen first
        self._new_words: dict[str, list[tuple[str, str, Kind]]] = {}  # this entry's new stretches'
        self._cut: SplitText | None = None  # the text analysed last, and its key numbers
        self._pieces: list[array[int]] = []

    def key_numbers(self, cut: SplitText) -> list[array[int]]:
        """The key numbers of each Latin stretch and Chinese run of a text (a new stretch is
        matched against the glossary on the way, from the same keys)."""
        found = list(map(self.segment_numbers.get, cut.segments))
        found.extend(map(self.run_numbers.get, cut.han_runs))
        if None in found:
            pieces = [*cut.segments, *cut.han_runs]
            for i, number in enumerate(found):
                if number is None:
                    found[i] = self._segment(pieces[i]) if i < len(cut.segments) else self._run(pieces[i])
        self._cut, self._pieces = cut, cast("list[array[int]]", found)
        return self._pieces

    def _segment(self, segment: str) -> array[int]:
        words = self._new_words[segment] = segment_words(segment)
        keys = frozenset([key for key, _, _ in words])
        if segment not in self.segments:
            self.add_segment(self.glossary, segment, keys)
        return remember(self.segment_numbers, segment, self.postings.numbers(keys))

    def _run(self, run: str) -> array[int]:
        keys = run_keys(run)
        if run not in self.runs:
            self.add_run(self.glossary, run, keys)
        return remember(self.run_numbers, run, self.postings.numbers(keys))

    def collect_words(self, segments: list[str]) -> None:
        """Add the words of this entry's newly numbered stretches to the vocabulary, in order,
        each stretch once (its words were kept when it was numbered). A stretch numbered before
        had its words collected in that entry: no set of collected stretches is kept (at 100k
        entries it held every distinct stretch of the library). One numbered again after its
        memo started over adds nothing new: `setdefault` keeps each word's first place."""
        new_words = self._new_words
        for segment in segments:
            words = new_words.pop(segment, None)
            if words is not None:
                for key, surface, kind in words:
                    if kind != "ref":
                        self.words.setdefault(surface, key)

    def end_entry(self) -> None:
        self._new_words.clear()

    def key_test(self, text: SplitText) -> KeyTest:
        """For the text just numbered, a test on its key numbers (no key set gathered: its
        pieces' numbers joined in one array on first use, each key one C-level scan of it)."""
        if text is not self._cut:
            return super().key_test(text)
        pieces, number_of = self._pieces, self.postings.number_of
        joined: list[array[int]] = []

        def has_all(keys: tuple[str, ...]) -> bool:
            if not joined:
                joined.append(array("I", b"".join(pieces)))
            numbers = joined[0]
            return all(n is not None and n in numbers for n in map(number_of, keys))

        return has_all


class SearchIndex:
    """An inverted index over entries' token keys and glossary concepts."""

    def __init__(self, entries: Sequence[Entry], glossary: Glossary) -> None:
        self.entries = list(entries)
        self.glossary = glossary
        self.postings: _Postings[str] = _Postings()
        self.concepts: _Postings[str] = _Postings()
        self.concept_terms: _Postings[tuple[str, str]] = _Postings()
        # Per entry, one tuple of writings and one string: a built index adds almost nothing
        # for later full collections to walk, and little memory per entry.
        self.concept_fields = Writings()
        self.han: list[str] = []
        self.vocabulary: dict[str, str] = {}
        self._ref_terms = any(key.startswith("#") for key in glossary.terms_by_first_key())
        # A build allocates much and frees nothing: callers that own the process pause and
        # freeze the collector around it (`chatbot.heap.build_long_lived`).
        self._topics = self._index_all()

    @classmethod
    def build(cls, entries: Sequence[Entry], glossary: Glossary | None = None) -> SearchIndex:
        return cls(entries, glossary if glossary is not None else Glossary.load())

    # -- building ---------------------------------------------------------------------------

    def _analyse(self, text: str, recurs: bool, build: _Build) -> tuple[_Analysed, bool]:
        """Keys, glossary concepts and Chinese text of one field, and whether it is new.
        Recurring fields (tags, identifiers, handles) are analysed once per build; titles and
        notes are not kept (they rarely repeat, and a build would hold all their analyses)."""
        cached = build.analysed.get(text)
        if cached is not None:
            return cached, False
        if text[0] == "#" and text[1:].isascii() and text[1:].isdigit() and not self._ref_terms:
            # `#12345` (the PR, its references): one key, no glossary term, nothing to display;
            # not kept (cheaper made again than held: most PR numbers occur once or twice).
            number = self.postings.number(f"#{int(text[1:])}")
            return _Analysed([number], [], (), _NO_CONCEPTS, _NO_TERMS, ""), False
        cut = split_text(text)
        keys = build.key_numbers(cut)
        matches = tuple(self.glossary.find_in(cut, build))
        if matches:
            concepts = frozenset([m[0] for m in matches])
            terms = frozenset([m[:2] for m in matches])
            numbers = (self.concepts.numbers(concepts), self.concept_terms.numbers(terms))
            analysed = _Analysed(keys, cut.segments, matches, concepts, terms, cut.han, numbers)
        else:  # most fields name no concept: no sets made for them
            analysed = _Analysed(keys, cut.segments, matches, _NO_CONCEPTS, _NO_TERMS, cut.han)
        if recurs:
            build.analysed[text] = analysed
        return analysed, True

    def _index_all(self) -> list[tuple[str, int]]:
        """Fill the postings and the vocabulary; return the topic counts (title, tags, identifiers)."""
        topic_counts: dict[str, int] = {}
        plain_tags: dict[str, bool] = {}
        concept_labels = {c: self.glossary.label(c) for c in self.glossary.concepts}
        build = _Build(self.postings, self.glossary)
        for index, entry in enumerate(self.entries):
            strong = self._index_entry(index, entry, build)
            labels = {concept_labels[c] for c in strong}
            labels.update(tag for tag in entry.tags if self._plain_tag(tag, plain_tags))
            for label in labels:
                topic_counts[label] = topic_counts.get(label, 0) + 1
        words = build.words
        del build  # its memos served this build only
        for table in (self.postings, self.concepts, self.concept_terms):
            table.finish()
        self._build_vocabulary(words)
        return sorted(topic_counts.items(), key=lambda kv: (-kv[1], kv[0].casefold()))

    def _index_entry(self, index: int, entry: Entry, build: _Build) -> set[str]:
        """Post one entry's fields and keep what display and phrase checks need; return the
        concepts its strong fields name."""
        analysed = [
            (weight, *self._analyse(text, recurs, build))
            for weight, text, recurs in sorted(_fields(entry), key=_heaviest_first)
        ]
        fields = [(weight, fielded) for weight, fielded, _ in analysed]
        self._post(index, fields)
        for _, fielded, new in reversed(analysed):  # lightest first, as words were always collected
            if new:
                build.collect_words(fielded.segments)
        build.end_entry()
        self._keep(fields)
        return {c for weight, fielded in fields if weight >= STRONG_FIELD for c in fielded.concepts}

    def _keep(self, fields: list[tuple[float, _Analysed]]) -> None:
        """What display (how a field wrote a concept) and Chinese phrase checks need later."""
        self.concept_fields.add([a.matches for _, a in fields if a.concepts])
        self.han.append(han_fields([(LEVEL[w], a.han) for w, a in fields if a.han]))

    def _post(self, index: int, fields: list[tuple[float, _Analysed]]) -> None:
        """Post an entry's fields (heaviest first) under their keys, concepts and concept terms."""
        self.postings.add_fields(index, [LEVEL[w] for w, _ in fields], [a.keys for _, a in fields])
        named = [(LEVEL[w], a.numbers) for w, a in fields if a.concepts]
        if named:
            levels = [level for level, _ in named]
            self.concepts.add_fields(index, levels, [numbers[:1] for _, numbers in named])
            self.concept_terms.add_fields(index, levels, [numbers[1:] for _, numbers in named])

    def _plain_tag(self, tag: str, cache: dict[str, bool]) -> bool:
        """A tag that is a topic of its own: not generic and naming no glossary concept."""
        plain = cache.get(tag)
        if plain is None:
            tokens = tokenize(tag)
            plain = cache[tag] = any(t.key not in GENERIC_WORDS for t in tokens) and not self.glossary.find(
                tokens
            )
        return plain

    def _build_vocabulary(self, vocabulary: dict[str, str]) -> None:
        """Words of the library (surface → key, first seen first) and of the glossary, the typo
        corrector's choices."""
        for surface, key in _glossary_words(self.glossary):
            vocabulary.setdefault(surface, key)
        self.vocabulary = {s.casefold(): k for s, k in vocabulary.items() if s[0].isalpha()}
        self._fuzzy_choices = [w for w in self.vocabulary if len(w) >= 4 and w.isalpha()]

    def _surfaces(self, index: int, concept: str) -> list[str]:
        """How an entry writes a concept, heaviest field first (`torch.compile`, `编译`)."""
        return _dedupe_surfaces(self._written(index).get(concept, ()))

    # Entry → concept → how its fields write it (heaviest first, repeats dropped), made the first
    # time a hit shows the entry: a note names dozens of concepts, and scanning them all for
    # each hit and concept cost more than the ranking at 1k entries. Not part of a snapshot.
    _written_memo: dict[int, dict[str, dict[str, None]]] | None = None
    _WRITTEN_KEPT = 4096  # entries whose writings are kept; then it starts over

    def _written(self, index: int) -> dict[str, dict[str, None]]:
        memo = self._written_memo
        if memo is None or len(memo) >= self._WRITTEN_KEPT:
            memo = self._written_memo = {}
        written = memo.get(index)
        if written is None:
            written = {}
            for concept, term, text in self.concept_fields.of(index):
                written.setdefault(concept, {})[text or term] = None
            memo[index] = written
        return written

    def __getstate__(self) -> dict[str, Any]:
        """What pickles (the snapshot): everything but the memos of answered queries."""
        return {key: value for key, value in self.__dict__.items() if key not in _QUERY_MEMOS}

    # -- querying ---------------------------------------------------------------------------

    def _idf(self, matched: int) -> float:
        n = max(len(self.entries), 1)
        return math.log(1.0 + (n - matched + 0.5) / (matched + 0.5))

    def _known(self, token: Token) -> bool:
        return token.key in self.postings or token.surface.casefold() in self.vocabulary

    def _correct(self, word: str) -> str | None:
        """The vocabulary word a typo most likely meant; short words need near-exact spelling."""
        if len(word) < 4 or not word.isalpha() or not self._fuzzy_choices:
            return None
        max_edits = 1 if len(word) <= 7 else 2
        best = process.extractOne(word, self._fuzzy_choices, scorer=OSA.distance, score_cutoff=max_edits)
        if best is None:
            return None
        choice: str = best[0]
        if choice[0] != word[0]:
            return None
        if len(word) == 4 and sorted(choice) != sorted(word):
            return None  # four letters: only a swapped pair is a typo, not a different word
        return choice

    def _corrected_query(self, tokens: list[Token]) -> tuple[list[Token], set[str]]:
        """Query tokens after replacing unknown Latin words by their closest vocabulary word,
        and the keys the corrections gave (they count ×`FUZZY`)."""
        fixes = self._typo_fixes(tokens)
        if not fixes:
            return tokens, set()
        corrected = tokenize(" ".join(_rewritten(tokens, fixes)))
        fuzzy_keys = {t.key for t in tokenize(" ".join(fixes.values()))}
        return corrected, fuzzy_keys

    def _joined_han(self, query: str) -> str:
        """The query with the space between two Chinese runs dropped where a glossary term spans
        it: a writer who spaces Chinese words (`图像预处理 缓存`) still names the concept
        (`图像预处理缓存`); spaces that split no term stay, and each run keeps its own matches."""
        pieces: list[str] = []
        start = 0
        for space in _SPACE_BETWEEN_HAN.finditer(query):
            left = _LAST_HAN_RUN.search(query, 0, space.start())
            right = HAN_RUN.match(query, space.end())
            if left and right and self._spans(left.group(), right.group()):
                pieces.append(query[start : space.start()])
                start = space.end()
        pieces.append(query[start:])
        return "".join(pieces)

    def _spans(self, left: str, right: str) -> bool:
        """Whether a glossary term lies across the joint of two Chinese runs."""
        return any(
            m.term not in left and m.term not in right for m in self.glossary.find(tokenize(left + right))
        )

    def _typo_fixes(self, tokens: list[Token]) -> dict[str, str]:
        """Surface → vocabulary word, for the query words that look like typos."""
        fixes: dict[str, str] = {}
        for token in tokens:
            if token.kind != "word" or token.key in STOPWORDS or token.key in GENERIC_WORDS:
                continue
            if self._known(token) or token.surface.casefold() in NEAR_DOMAIN:
                continue
            choice = self._correct(token.surface.casefold())
            if choice:
                fixes[token.surface] = choice
        return fixes

    def _units(self, tokens: list[Token], fuzzy_keys: set[str], typed: list[Token]) -> list[_Unit]:
        """The query's units: glossary concepts first, then what the concepts left, by group;
        descriptions are met by the words as `typed`, before any typo correction."""
        stream = atomic(tokens)
        units, covered, split, named = self._concept_units(tokens, stream, fuzzy_keys)
        wholes: dict[int, list[Token]] = {}
        for token in tokens:
            if token.kind in {"ident", "joined"}:
                wholes.setdefault(token.group, []).append(token)
        uncovered = _uncovered_groups(stream, covered)
        for group in split:
            if wholes.get(group) and all(_filler(stream[i]) for i in uncovered.get(group, [])):
                uncovered.pop(group, None)  # concepts name every real part of the identifier
                whole = self._whole_unit(wholes[group])
                if whole:
                    units.append(whole)
        concept_units = list(units)
        for group, positions in uncovered.items():
            named_parts = self._named_parts(concept_units, stream, group) if group in split else None
            units.extend(
                self._group_units(group, positions, stream, wholes.get(group, []), fuzzy_keys, named_parts)
            )
        return self._with_described(units, self._described(typed, named, stream, covered))

    def _named_parts(self, concept_units: list[_Unit], stream: list[Token], group: int) -> NamedParts:
        real = {t.key for t in stream if t.group == group and not _filler(t)}
        return named_in(concept_units, real, len(self.entries))

    def _described(
        self, typed: list[Token], named: set[str], stream: list[Token], covered: set[int]
    ) -> list[Described]:
        """Concepts the query describes without naming them (whether or not an entry has them),
        by at least two words beyond the concepts it names (`CUDA graph` names CUDA graphs; it
        does not describe eager mode, "run without CUDA graphs")."""
        keys = {stream[i].key for i in covered}
        return [
            d
            for d in self._description_index().match(typed)
            if d.concept not in named and len(d.keys - keys) >= MIN_KEYS
        ]

    def _description_index(self) -> DescriptionIndex:
        descriptions = self.__dict__.get("_descriptions")
        if descriptions is None:  # made on first use: a build or a snapshot need not hold it
            lines = ((c.id, line) for c in self.glossary.concepts.values() for line in c.describes)
            descriptions = self.__dict__["_descriptions"] = DescriptionIndex(lines, STOPWORDS | GENERIC_WORDS)
        return descriptions

    def _with_described(self, units: list[_Unit], described: list[Described]) -> list[_Unit]:
        """Add a unit per described concept in place of the words its description explains
        (`serve`, `before` of "serve important requests before the rest"; `GPU memory` of a
        question describing sleep mode is not every entry on GPU memory)."""
        if not described:
            return units
        explained = frozenset().union(*(d.keys for d in described))
        units = [u for u in units if not (u.keys and u.keys <= explained)]  # the words it explains
        for found in (d for d in described if d.concept in self.concepts):
            unit = self._concept_unit(found.concept, [])  # no term asked: the typo level (×FUZZY)
            unit.keys = found.keys
            units.append(unit)
        return units

    def _whole_unit(self, wholes: list[Token]) -> _Unit | None:
        """The identifier itself, when concepts named each of its parts: they only refine it."""
        scores = self._vector()
        for whole in wholes:
            self.postings.raise_to(scores, whole.key)
        if not scores.any():
            return None
        shown = [wholes[0].surface]
        return _Unit(False, scores, lambda _index: shown)

    def _concept_units(
        self, tokens: list[Token], stream: list[Token], fuzzy_keys: set[str]
    ) -> tuple[list[_Unit], set[int], set[int], set[str]]:
        """A unit per concept the query names (and one for its literal terms), the positions
        of the atomic stream the concepts cover, the identifiers' groups they split and the
        concepts named."""
        named = _NamedConcepts()
        for m in _outermost(self.glossary.find(tokens)):
            named.add(m, stream, fuzzy_keys)
        units: list[_Unit] = []
        for concept, terms in named.terms.items():
            concept_units = [self._concept_unit(concept, terms)]
            literal = self._literal_unit(concept, [t for t, fuzzy in terms if not fuzzy])
            if literal:
                concept_units.append(literal)
            for unit in concept_units:  # `mm` in `mm_hash` refines; the identifier decides
                unit.qualifies = concept in named.whole and concept in named.specific
                unit.keys = frozenset(named.keys[concept])
                unit.near = concept not in named.specific
            units.extend(concept_units)
        return units, named.covered, named.split, set(named.terms)

    def _group_units(
        self,
        group: int,
        positions: list[int],
        stream: list[Token],
        wholes: list[Token],
        fuzzy_keys: set[str],
        named_parts: NamedParts | None = None,
    ) -> list[_Unit]:
        """Units of what is left of one identifier, word or Chinese run."""
        first = stream[positions[0]]
        if first.kind == "cjk":
            return self._han_units(group, positions, stream)
        if first.kind == "part":
            ident_unit = self._ident_unit(wholes, [stream[i] for i in positions], named_parts)
            return [ident_unit] if ident_unit else []
        word_units = (self._word_unit(stream[i], wholes, fuzzy_keys) for i in positions)
        return [unit for unit in word_units if unit]

    def _han_units(self, group: int, positions: list[int], stream: list[Token]) -> list[_Unit]:
        """A unit per contiguous stretch of a Chinese run; what is left of a run around a
        concept (`处理` in `异常处理`) only refines."""
        remnant = len(positions) < sum(1 for t in stream if t.group == group)
        units = [self._han_unit([stream[i] for i in run]) for run in _contiguous(positions)]
        for han_unit in units:
            han_unit.qualifies = not remnant
        return units

    def _concept_unit(self, concept: str, terms: list[tuple[str, bool]]) -> _Unit:
        """Every entry naming the concept at the synonym level (the literal unit adds the asked
        term's own weight, so using the very term still ranks first), or a narrower concept."""
        asked = [t for t, _ in terms]
        factor = FUZZY if all(f for _, f in terms) else 1.0
        scores = self._key_scores(self.concepts, concept, SYNONYM * factor)
        if factor != 1.0:  # a typo-corrected term has no literal unit: keep its literal level here
            for term in asked:
                self.concept_terms.raise_to(scores, (concept, term), LITERAL * factor)
        shown = [concept, *self.glossary.concepts[concept].includes]
        shown_concept = self._raise_narrower(scores, shown[1:], factor)

        def display(index: int) -> list[str]:
            return self._show(index, shown[int(shown_concept[index])], asked)

        return _Unit(False, scores, display)

    def _raise_narrower(
        self, scores: NDArray[np.float64], includes: list[str], factor: float
    ) -> NDArray[np.intp]:
        """Raise entries to their narrower concepts' level; return, per entry, which concept
        its score came from: 0 the asked one, n the n-th narrower."""
        shown_concept = np.zeros(len(self.entries), dtype=np.intp)
        for position, narrower in enumerate(includes, start=1):
            if narrower not in self.concepts:  # no entry names it: nothing to raise
                continue
            found, weights = self.concepts.get(narrower)
            values = weights * NARROWER * factor
            raised = values > scores[found]
            scores[found[raised]] = values[raised]
            shown_concept[found[raised]] = position
        return shown_concept

    def _vector(self) -> NDArray[np.float64]:
        """A unit's scores over all entries, 0.0 meaning not matched."""
        return np.zeros(len(self.entries), dtype=np.float64)

    def _key_scores(self, table: _Postings[K], key: K, factor: float = 1.0) -> NDArray[np.float64]:
        """Each entry's field weight for `key` times `factor`, as a unit's scores."""
        scores = self._vector()
        found, weights = table.get(key)
        scores[found] = weights * factor  # a fresh vector: raising 0.0 to a weight is the weight
        return scores

    def _show(self, index: int, concept: str, asked: list[str]) -> list[str]:
        return _display(self._surfaces(index, concept), asked)

    def _literal_unit(self, concept: str, terms: list[str]) -> _Unit | None:
        """Entries that use the very term asked for rank above those using a synonym."""
        present = [t for t in dict.fromkeys(terms) if (concept, t) in self.concept_terms]
        if not present:
            return None
        scores = self._vector()
        for term in present:  # LITERAL is 1.0: the field weight is the score
            self.concept_terms.raise_to(scores, (concept, term))
        return _Unit(False, scores, _nothing, asked=False)

    def _word_unit(self, token: Token, wholes: list[Token], fuzzy_keys: set[str]) -> _Unit | None:
        if token.key in STOPWORDS:
            return None
        fuzzy = token.key in fuzzy_keys
        factor = FUZZY if fuzzy else 1.0
        shown = [_surface_for(self.vocabulary, token.key) if fuzzy else token.surface]
        word = token.surface.casefold()
        near = word in NEAR_DOMAIN or word in FOREIGN_SUBJECTS
        scores = self._vector()
        for key in [token.key, *(w.key for w in wholes)]:
            self.postings.raise_to(scores, key, factor)
        unit = _Unit(
            token.key in GENERIC_WORDS or near, scores, lambda _index: shown, plain=token.kind == "word"
        )
        unit.keys, unit.near = frozenset({token.key}), near
        unit.unknown = self._unknown(token, fuzzy, unit)
        return unit

    def _unknown(self, token: Token, fuzzy: bool, unit: _Unit) -> bool:
        """A word no entry holds, no typo of one, that vLLM's vocabulary (terms, descriptions)
        does not use either."""
        if fuzzy or unit.matched:
            return False
        return not self._known(token) and not self._description_index().knows(token)

    def _ident_unit(
        self, wholes: list[Token], parts: list[Token], named_parts: NamedParts | None = None
    ) -> _Unit | None:
        """What is left of an identifier; `named_parts`: its other parts, named by concepts."""
        shown = [wholes[0].surface if wholes else " ".join(p.surface for p in parts)]
        scores = self._vector()
        for whole in wholes:
            self.postings.raise_to(scores, whole.key)
        meaningful = [p for p in parts if not _filler(p)]  # `use` of `use_cuda_graph` is not it
        if not meaningful:  # generic only when the identifier's words are (`fix_bug`)
            generic = all(p.key in STOPWORDS or p.key in GENERIC_WORDS for p in parts)
            return _Unit(generic, scores, lambda _index: shown) if scores.any() else None
        counts, heaviest = self._coverage(meaningful)
        enough = np.flatnonzero(compound_held(counts, len(meaningful), named_parts))
        values = heaviest[enough] * PARTIAL * counts[enough] / len(meaningful)
        raised = values > scores[enough]
        scores[enough[raised]] = values[raised]
        return _Unit(False, scores, lambda _index: shown, keys=_keys_of(parts))

    def _coverage(self, tokens: list[Token]) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
        """Per entry, how many of the tokens' keys it holds and the heaviest field among them."""
        counts = np.zeros(len(self.entries), dtype=np.intp)
        heaviest = self._vector()
        for token in tokens:
            found, weights = self.postings.get(token.key)
            counts[found] += 1
            heaviest[found] = np.maximum(heaviest[found], weights)
        return counts, heaviest

    def _han_unit(self, run: list[Token]) -> _Unit:
        phrase = surface_of(run)
        shown = [phrase]
        near = _near_domain_han(phrase)
        generic = all(t.key in GENERIC_HAN for t in run) or near
        keys = frozenset(t.key for t in run)
        if len(run) == 1:
            scores = self._key_scores(self.postings, run[0].key)
            return _Unit(generic, scores, lambda _index: shown, keys=keys, near=near)
        counts, heaviest = self._coverage(run)
        coverage = counts / len(run)
        scores = self._vector()
        enough = np.flatnonzero(coverage >= 0.5)
        scores[enough] = heaviest[enough] * PARTIAL * coverage[enough]
        for index in np.flatnonzero(coverage == 1.0).tolist():
            level = level_holding(self.han[index], phrase)
            if level is not None:
                scores[index] = WEIGHT_OF_LEVEL[level]
        return _Unit(generic, scores, lambda _index: shown, keys=keys, near=near)

    def search(self, query: str, limit: int = 5, offset: int = 0) -> SearchResult:
        found, scores, units = self._rank(query)
        start = max(offset, 0)
        page = _best(found, scores, start + max(limit, 0))[start:]
        hits = [Hit(self.entries[i], round(score, 4), self._matched(i, units)) for score, i in page]
        suggestions = [] if len(found) else self.suggest(query)
        return SearchResult(query, hits, len(found), suggestions)

    def rank(self, query: str) -> list[Hit]:
        """Every entry that really matches the query, best first."""
        found, scores, units = self._rank(query)
        return [
            Hit(self.entries[i], round(score, 4), self._matched(i, units))
            for score, i in _best(found, scores, len(found))
        ]

    def _rank(self, query: str) -> tuple[NDArray[np.intp], NDArray[np.float64], list[tuple[float, _Unit]]]:
        """Entry indices of every real match (ascending), their scores, and the query's units.

        Scores are summed in a dense float64 vector, unit by unit in query order: the same
        additions in the same order as summing Python floats per entry, so the same scores.
        """
        typed = tokenize(self._joined_han(query[:500]))
        tokens, fuzzy_keys = self._corrected_query(typed)
        asked = self._units(tokens, fuzzy_keys, typed)
        units = self._weighted(asked, query[:500].casefold(), tokens)
        qualifying = [unit.scores for _, unit in units if not unit.generic and unit.qualifies]
        if not qualifying:  # every unit matched something: a qualifying one makes a real match
            return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float64), units
        # The first product is the first sum (0.0 + x is x): no zero vector to add it to.
        totals = units[0][1].scores * units[0][0]
        for factor, unit in units[1:]:
            totals += unit.scores * factor
        real = _real_matches(qualifying, asked)
        if not real.any():  # only padding matched
            return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float64), units
        floor = max(float(totals[real].max()) * RELATIVE_FLOOR, 1e-12)
        found = np.flatnonzero(real & (totals >= floor))
        return found, totals[found], units

    def _weighted(self, asked: list[_Unit], lowered: str, tokens: list[Token]) -> list[tuple[float, _Unit]]:
        """The units that matched something, each with its factor (idf, ×`GENERIC`); none when
        the query names a subject of a neighbouring domain no entry mentions (Redis, MySQL,
        TensorRT-LLM…): it is about that, not about a vLLM entry."""
        if any(p in lowered for p in FOREIGN_PHRASES) or any(self._foreign(t) for t in tokens):
            return []
        return [
            (self._idf(matched) * (GENERIC if u.generic else 1.0), u) for u in asked if (matched := u.matched)
        ]

    def _foreign(self, token: Token) -> bool:
        return token.surface.casefold() in FOREIGN_SUBJECTS and token.key not in self.postings

    def _matched(self, index: int, units: list[tuple[float, _Unit]]) -> list[str]:
        """Display terms for one hit, the units that weighed most first. Generic words (`PR`,
        `fix`, `修复`) refine the ranking but are not what an entry is found by: not shown."""
        gains: list[tuple[float, _Unit]] = []
        for factor, unit in units:
            score = unit.scores.item(index)  # a Python float, without a numpy scalar in between
            if score > 0.0 and not unit.generic:
                gains.append((factor * score, unit))
        gains.sort(key=lambda g: -g[0])
        return _dedupe_surfaces(term for _, unit in gains for term in unit.display(index))

    def suggest(self, query: str, count: int = 5) -> list[str]:
        """Topics to offer when nothing matched: ones that look like the query first."""
        topics = self._topic_labels()
        if not topics:
            return []
        close = [
            label
            for label, score, _ in process.extract(query.casefold(), topics, limit=3, score_cutoff=75)
            if score
        ]
        # Only `count` are shown: stop at them, not after a copy of every topic.
        return [*close, *islice((t for t in topics if t not in close), max(count - len(close), 0))][:count]

    def _topic_labels(self) -> list[str]:
        """The topics' labels, made once per index (every no-match answer offers some)."""
        labels = self.__dict__.get("_labels")
        if labels is None:
            labels = self.__dict__["_labels"] = [label for label, _ in self._topics]
        return labels

    def topics(self) -> list[tuple[str, int]]:
        """Concepts the library is about (title, tags, identifiers), with how many entries."""
        return list(self._topics)


_SPACE_BETWEEN_HAN = re.compile(f"(?<={han_class()})\\s+(?={han_class()})")
_LAST_HAN_RUN = re.compile(f"{HAN_RUN.pattern}$")

# SearchIndex attributes made while answering, not by the build: never part of a snapshot.
_QUERY_MEMOS = frozenset({"_written_memo", "_labels", "_descriptions"})


class _NamedConcepts:
    """What the glossary found in a query, per concept: the terms asked (and whether a typo
    correction gave them), the positions covered, and whether it was named outside a longer
    identifier and by a term of its own rather than a word of a neighbouring domain."""

    def __init__(self) -> None:
        self.terms: dict[str, list[tuple[str, bool]]] = {}
        self.keys: dict[str, set[str]] = {}
        self.covered: set[int] = set()
        self.split: set[int] = set()  # identifiers' groups a concept names only some parts of
        self.whole: set[str] = set()  # concepts named once at least outside a longer identifier
        self.specific: set[str] = set()  # concepts named once at least by more than a generic word

    def add(self, m: ConceptMatch, stream: list[Token], fuzzy_keys: set[str]) -> None:
        span = range(m.start, m.end)
        self.covered.update(span)
        is_fuzzy = bool(fuzzy_keys) and any(stream[i].key in fuzzy_keys for i in span)
        self.terms.setdefault(m.concept, []).append((m.term, is_fuzzy))
        self.keys.setdefault(m.concept, set()).update(stream[i].key for i in span)
        if _inside_identifier(stream, m):
            self.split.add(stream[m.start].group)
        else:
            self.whole.add(m.concept)
        if m.text.casefold() not in NEAR_DOMAIN and not _near_domain_han(m.text):
            self.specific.add(m.concept)


def _keys_of(tokens: list[Token]) -> frozenset[str]:
    return frozenset(t.key for t in tokens)


def _near_domain_han(text: str) -> bool:
    """Chinese made only of words of neighbouring domains (`数据库迁移`, `部署`), at most one
    character left over."""
    if not text or not _is_han(text):
        return False
    rest = text
    for word in sorted(NEAR_DOMAIN_HAN, key=len, reverse=True):
        rest = rest.replace(word, "")
    return len(rest) <= 1 and len(rest) < len(text)


def _real_matches(qualifying: list[NDArray[np.float64]], asked: list[_Unit]) -> NDArray[np.bool_]:
    """Entries a qualifying unit matched, less those only a minority of plain words did."""
    real = qualifying[0] > 0.0
    for scores in qualifying[1:]:
        real |= scores > 0.0
    if any(unit.plain and unit.matched for unit in asked):
        real &= not_padding(asked, len(real))
    real &= not_minority(asked, len(real))
    return real


def _best(found: NDArray[np.intp], scores: NDArray[np.float64], count: int) -> list[tuple[float, int]]:
    """The `count` best (score, entry index), highest score first, ties by entry order.
    Only the page is ordered: a broad query over 10k entries need not sort them all."""
    if count <= 0 or not len(found):
        return []
    if len(found) <= _SORTED_IN_PYTHON:  # a few matches: numpy's per-call cost is the cost
        return sorted(zip(scores.tolist(), found.tolist(), strict=True), key=_score_then_entry)[:count]
    if count < len(found):
        # Every entry scoring at least the count-th best score, ties at the cut included.
        cut = np.partition(scores, len(scores) - count)[len(scores) - count]
        keep = scores >= cut
        found, scores = found[keep], scores[keep]
    order = np.lexsort((found, -scores))[:count]
    return list(zip(scores[order].tolist(), found[order].tolist(), strict=True))


# Up to this many matches, `_best` sorts Python floats: the same order as the lexsort below.
_SORTED_IN_PYTHON = 16


def _score_then_entry(pair: tuple[float, int]) -> tuple[float, int]:
    return -pair[0], pair[1]


def _heaviest_first(field: tuple[float, str, bool]) -> float:
    return -field[0]


def _nothing(_index: int) -> list[str]:
    return []


def _rewritten(tokens: list[Token], fixes: dict[str, str]) -> list[str]:
    """The query's groups as text again, with the typo fixes (a Chinese run re-joined)."""
    rewritten: list[str] = []
    groups_done: set[int] = set()
    for token in tokens:
        if token.group in groups_done:
            continue
        groups_done.add(token.group)
        group = [t for t in tokens if t.group == token.group]
        if token.kind == "cjk":
            rewritten.append("".join(t.surface[0] for t in group) + group[-1].surface[-1:])
        else:
            rewritten.append(fixes.get(token.surface, token.surface))
    return rewritten


def _outermost(matches: list[ConceptMatch]) -> list[ConceptMatch]:
    """Matches not inside a longer one (`decoding` inside `speculative decoding`)."""
    spans = {(m.start, m.end) for m in matches}  # matches of several concepts share spans
    kept: list[ConceptMatch] = []
    for m in matches:  # plain loops, not `any` over a generator: every uncached query runs this
        length = m.end - m.start
        for lo, hi in spans:
            if lo <= m.start and m.end <= hi and hi - lo > length:
                break
        else:
            kept.append(m)
    return kept


def _glossary_words(glossary: Glossary) -> Iterator[tuple[str, str]]:
    """Surface → key of the glossary's term words, so a typo can complete a term."""
    for known in glossary.concepts.values():
        for term in known.terms:
            for token in tokenize(term):
                if token.kind in {"word", "part", "joined"}:
                    yield token.surface, token.key


def _filler(token: Token) -> bool:
    return token.key in STOPWORDS or token.key in GENERIC_WORDS or token.key in IDENT_AFFIXES


def _inside_identifier(stream: list[Token], match: ConceptMatch) -> bool:
    """Whether the match is some of an identifier's real parts but not all of them (`mm` in
    `mm_hash`; not `prefix caching` in `enable_prefix_caching`)."""
    group = stream[match.start].group
    span = stream[match.start : match.end]
    if any(t.kind != "part" or t.group != group for t in span):
        return False
    rest = [t for t in stream[: match.start] + stream[match.end :] if t.group == group]
    return not all(_filler(t) for t in rest)


def _uncovered_groups(stream: list[Token], covered: set[int]) -> dict[int, list[int]]:
    """Positions of the atomic stream no concept covers, by token group."""
    groups: dict[int, list[int]] = {}
    for i, token in enumerate(stream):
        if i in covered:
            continue
        if token.kind == "cjk" and any(
            j in covered and 0 <= j < len(stream) and stream[j].group == token.group for j in (i - 1, i + 1)
        ):
            continue  # a bigram straddling a concept's characters (`发解` after `并发`)
        groups.setdefault(token.group, []).append(i)
    return groups


def _contiguous(positions: list[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for i in positions:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def _surface_for(vocabulary: dict[str, str], key: str) -> str:
    return next((surface for surface, k in vocabulary.items() if k == key), key)
