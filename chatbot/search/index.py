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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np
from numpy.typing import NDArray
from rapidfuzz import process

from chatbot.digest import Entry
from chatbot.search.build import build_tables
from chatbot.search.descriptions import MIN_KEYS, Described, DescriptionIndex
from chatbot.search.display import dedupe_surfaces, display, is_han
from chatbot.search.fields import WEIGHT_OF_LEVEL
from chatbot.search.glossary import ConceptMatch, Glossary
from chatbot.search.hanfields import level_holding
from chatbot.search.postings import K, Postings
from chatbot.search.query import (
    closest_word,
    contiguous,
    inside_identifier,
    joined_han,
    outermost,
    rewritten,
    surface_for,
    uncovered_groups,
)
from chatbot.search.sharing import NamedParts, compound_held, named_in, not_minority, not_padding
from chatbot.search.stopwords import GENERIC_HAN, GENERIC_WORDS, STOPWORDS, filler
from chatbot.search.tokens import Token, atomic, surface_of, tokenize

# Strengths of a unit's match, and the floor below the best hit (see the module's docstring).
LITERAL = 1.0
SYNONYM = 0.6
NARROWER = 0.45
FUZZY = 0.7
GENERIC = 0.15
PARTIAL = 0.7
RELATIVE_FLOOR = 0.2

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
    onnxruntime torchserve tritonserver tensorrt-llm trt-llm trtllm kubectl minikube openshift git
    deepspeed horovod zero3 keras""".split()  # noqa: SIM905
)
# Other serving stacks, by their names in more than one word.
FOREIGN_PHRASES = ("triton inference server", "tensorflow serving", "text generation inference")
NEAR_DOMAIN_HAN = frozenset(
    """迁移 部署 安装 驱动 数据库 索引 状态 锁 服务器 服务 集群 节点 容器 升级 版本 扩缩容 自动扩缩容 网络
    端口 存储 备份 查询 事务 连接池 数据 配置 冲突 失败 执行 解析 环境 温度 显示 过高 不足 不够 磁盘 带宽 证书
    域名 连不上 连接 宕机 告警 面板""".split()  # noqa: SIM905
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
    described: bool = False  # a concept the query describes in plain words (`describes:` lines)

    @property
    def matched(self) -> int:
        return int(np.count_nonzero(self.scores))


class SearchIndex:
    """An inverted index over entries' token keys and glossary concepts."""

    def __init__(self, entries: Sequence[Entry], glossary: Glossary) -> None:
        self.entries = list(entries)
        self.glossary = glossary
        # A build allocates much and frees nothing: callers that own the process pause and
        # freeze the collector around it (`chatbot.heap.build_long_lived`).
        tables = build_tables(self.entries, glossary)
        self.postings, self.concepts, self.concept_terms = (
            tables.postings,
            tables.concepts,
            tables.concept_terms,
        )
        # Per entry, one tuple of writings and one string: a built index adds almost nothing
        # for later full collections to walk, and little memory per entry.
        self.concept_fields, self.han = tables.concept_fields, tables.han
        self.vocabulary, self._topics = tables.vocabulary, tables.topics
        # By first letter, which a typo keeps (`tabel` is `table`, never `label` at the same distance).
        self._fuzzy_choices: dict[str, list[str]] = {}
        for word in self.vocabulary:
            if len(word) >= 4 and word.isalpha():
                self._fuzzy_choices.setdefault(word[0], []).append(word)

    @classmethod
    def build(cls, entries: Sequence[Entry], glossary: Glossary | None = None) -> SearchIndex:
        return cls(entries, glossary if glossary is not None else Glossary.load())

    def _surfaces(self, index: int, concept: str) -> list[str]:
        """How an entry writes a concept, heaviest field first (`torch.compile`, `编译`)."""
        return dedupe_surfaces(self._written(index).get(concept, ()))

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

    def _corrected_query(self, tokens: list[Token]) -> tuple[list[Token], set[str]]:
        """Query tokens after replacing unknown Latin words by their closest vocabulary word,
        and the keys the corrections gave (they count ×`FUZZY`)."""
        fixes = self._typo_fixes(tokens)
        if not fixes:
            return tokens, set()
        corrected = tokenize(" ".join(rewritten(tokens, fixes)))
        fuzzy_keys = {t.key for t in tokenize(" ".join(fixes.values()))}
        return corrected, fuzzy_keys

    def _typo_fixes(self, tokens: list[Token]) -> dict[str, str]:
        """Surface → vocabulary word, for the query words that look like typos."""
        fixes: dict[str, str] = {}
        for token in tokens:
            if token.kind != "word" or token.key in STOPWORDS or token.key in GENERIC_WORDS:
                continue
            if self._known(token) or token.surface.casefold() in NEAR_DOMAIN:
                continue
            surface = token.surface.casefold()
            choice = closest_word(surface, self._fuzzy_choices.get(surface[:1], []))
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
        uncovered = uncovered_groups(stream, covered)
        for group in split:
            if wholes.get(group) and all(filler(stream[i]) for i in uncovered.get(group, [])):
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
        real = {t.key for t in stream if t.group == group and not filler(t)}
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
            descriptions = self.__dict__["_descriptions"] = DescriptionIndex(
                lines, STOPWORDS | GENERIC_WORDS | GENERIC_HAN
            )
        return descriptions

    def _with_described(self, units: list[_Unit], described: list[Described]) -> list[_Unit]:
        """Add a unit per described concept in place of the words its description explains
        (`serve`, `before` of "serve important requests before the rest"; `GPU memory` of a
        question describing sleep mode is not every entry on GPU memory)."""
        if not described:
            return units
        explained = frozenset().union(*(d.keys for d in described))
        said = self._description_index().explained
        # The words it explains; a neighbouring domain's word among them (`不够` of `显存不够时`) is
        # the description's too, whatever bigrams across words its run holds.
        units = [u for u in units if not (u.keys and said(u.keys, explained, loosely=u.near))]
        for found in described:
            unit = self._concept_unit(found.concept, [])  # no term asked: the typo level (×FUZZY)
            self._raise_scattered(unit.scores, found.concept)
            if unit.matched:
                unit.keys, unit.described = found.keys, True
                units.append(unit)
        return units

    def _raise_scattered(self, scores: NDArray[np.float64], concept: str) -> None:
        """Entries that hold every word of one of a described concept's terms, not side by side
        ("caches the multimodal preprocessor output" holds `preprocessor cache`), at the level of
        a partial match: a note that explains a feature need not write its name."""
        for term in self.glossary.concepts[concept].terms:
            words = [t for t in atomic(tokenize(term)) if not filler(t) and t.key not in GENERIC_HAN]
            if len({t.key for t in words}) < 2:
                continue
            counts, heaviest = self._coverage(words)
            held = np.flatnonzero(counts == len(words))
            values = heaviest[held] * PARTIAL * SYNONYM * FUZZY
            raised = values > scores[held]
            scores[held[raised]] = values[raised]

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
        for m in outermost(self.glossary.find(tokens)):
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
        units = [self._han_unit([stream[i] for i in run]) for run in contiguous(positions)]
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

    def _key_scores(self, table: Postings[K], key: K, factor: float = 1.0) -> NDArray[np.float64]:
        """Each entry's field weight for `key` times `factor`, as a unit's scores."""
        scores = self._vector()
        found, weights = table.get(key)
        scores[found] = weights * factor  # a fresh vector: raising 0.0 to a weight is the weight
        return scores

    def _show(self, index: int, concept: str, asked: list[str]) -> list[str]:
        return display(self._surfaces(index, concept), asked)

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
        shown = [surface_for(self.vocabulary, token.key) if fuzzy else token.surface]
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
        meaningful = [p for p in parts if not filler(p)]  # `use` of `use_cuda_graph` is not it
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

    def _han_coverage(self, run: list[Token]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Per entry, the share of the run's characters its bigrams cover, and the heaviest
        field among them. Characters, not bigrams: `命中一半结果出错` holds three words and
        four bigrams across them (`中一`, `果出`…) no one writes; an entry holding `命中`,
        `结果` and `出错` covers six of its eight characters, three of its seven bigrams."""
        held = np.zeros(len(self.entries), dtype=np.bool_)
        covered = np.zeros(len(self.entries), dtype=np.intp)
        heaviest = self._vector()
        for token in run:
            found, weights = self.postings.get(token.key)
            now = np.zeros(len(self.entries), dtype=np.bool_)
            now[found] = True
            covered += now  # each bigram held covers its second character…
            covered += now & ~held  # …and its first, when the bigram before was not held
            heaviest[found] = np.maximum(heaviest[found], weights)
            held = now
        return covered / (len(run) + 1), heaviest

    def _han_unit(self, run: list[Token]) -> _Unit:
        phrase = surface_of(run)
        shown = [phrase]
        near = _near_domain_han(phrase)
        generic = all(t.key in GENERIC_HAN for t in run) or _generic_han(phrase) or near
        keys = frozenset(t.key for t in run)
        if len(run) == 1:
            scores = self._key_scores(self.postings, run[0].key)
            return _Unit(generic, scores, lambda _index: shown, keys=keys, near=near)
        coverage, heaviest = self._han_coverage(run)
        scores = self._vector()
        enough = np.flatnonzero(coverage > 0.5)  # more than half (`图片输入`: `输入` alone is not it)
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
        typed = tokenize(joined_han(query[:500], self.glossary))
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
        return dedupe_surfaces(term for _, unit in gains for term in unit.display(index))

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
        if inside_identifier(stream, m):
            self.split.add(stream[m.start].group)
        else:
            self.whole.add(m.concept)
        if m.text.casefold() not in NEAR_DOMAIN and not _near_domain_han(m.text):
            self.specific.add(m.concept)


def _keys_of(tokens: list[Token]) -> frozenset[str]:
    return frozenset(t.key for t in tokens)


def _generic_han(text: str) -> bool:
    """Chinese made of words that name no topic but one character (`怎么写`, `哪些人`)."""
    return _only_words_of(text, GENERIC_HAN_LONGEST_FIRST)


def _near_domain_han(text: str) -> bool:
    """Chinese made only of words of neighbouring domains (`数据库迁移`, `部署了`), at most one
    particle left over: `死锁` and `多节点` name vLLM topics (a deadlock, multi-node), not a lock or
    a node."""
    return _only_words_of(text, NEAR_DOMAIN_HAN_LONGEST_FIRST, PARTICLES)


PARTICLES = frozenset("的了吗呢吧啊呀么在和与及是有要会能个这那哪些下上中里都也还就很怎")


def _only_words_of(text: str, words: tuple[str, ...], spare: frozenset[str] | None = None) -> bool:
    """Chinese made of these words, at most one character left over (of `spare`, when given)."""
    if not text or not is_han(text):
        return False
    rest = text
    for word in words:
        rest = rest.replace(word, "")
    return len(rest) <= 1 and len(rest) < len(text) and (spare is None or set(rest) <= spare)


GENERIC_HAN_LONGEST_FIRST = tuple(sorted(GENERIC_HAN, key=len, reverse=True))
NEAR_DOMAIN_HAN_LONGEST_FIRST = tuple(sorted(NEAR_DOMAIN_HAN, key=len, reverse=True))


def _real_matches(qualifying: list[NDArray[np.float64]], asked: list[_Unit]) -> NDArray[np.bool_]:
    """Entries a qualifying unit matched, less those only a minority of plain words did."""
    real = qualifying[0] > 0.0
    for scores in qualifying[1:]:
        real |= scores > 0.0
    if any(unit.plain and unit.matched for unit in asked):
        real &= not_padding(asked, len(real))
    # A neighbouring domain's word in a question that describes a vLLM concept (`the server has to
    # extract the arguments` of tool calling) is the describer's own word: entries holding the
    # described concept are no minority of it.
    described = [unit.scores > 0.0 for unit in asked if unit.described]
    real &= np.logical_or.reduce([not_minority(asked, len(real)), *described])
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


def _nothing(_index: int) -> list[str]:
    return []
