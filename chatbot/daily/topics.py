"""Topics of a subscription, resolved like a search: glossary concepts first, then free words.

`resolve_topics("kv cache, 多模态 spec decode", glossary, index)` finds the concepts the words
name (`KV cache`, `multimodal`, `speculative decoding`) through the bilingual glossary, in any
language or alias. A word no concept covers is kept as a free word when the search finds entries
for it, and is otherwise returned as unknown, so the command can name it instead of guessing.

`entries_on(topics, index)` is the set of entries a channel's topics select: what the search
returns for each topic (narrower concepts included, as in a search).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from chatbot.daily.subscription import Topic, schedule_words
from chatbot.search import Glossary, SearchIndex
from chatbot.search.tokens import ATOMIC_KINDS, Token, tokenize


@dataclass(frozen=True)
class Resolved:
    topics: list[Topic]
    unknown: list[str]


def resolve_topics(words: Sequence[str], glossary: Glossary, index: SearchIndex) -> Resolved:
    """Concepts named by the words (longest term first), free words the search knows, the rest unknown."""
    topics: list[Topic] = []
    unknown: list[str] = []
    # Commas separate topics: `kv cache, offload` is two, `kv cache offload` the one concept.
    for chunk in re.split(r"[,，、;；]+", " ".join(words)):
        _resolve_chunk(chunk, glossary, index, topics, unknown)
    return Resolved(topics, unknown)


def _resolve_chunk(
    text: str, glossary: Glossary, index: SearchIndex, topics: list[Topic], unknown: list[str]
) -> None:
    tokens = tokenize(text)
    stream = [t for t in tokens if t.kind in ATOMIC_KINDS]
    covered = _concept_topics(tokens, len(stream), glossary, topics)
    filler = schedule_words().filler
    for word in _uncovered_words(stream, covered):
        if word.casefold() in filler:
            continue
        if not index.rank(word):
            if word not in unknown:
                unknown.append(word)
            continue
        key = f"word:{word.casefold()}"
        if key not in {t.key for t in topics}:
            topics.append(Topic(key, word, word))


def _concept_topics(tokens: list[Token], size: int, glossary: Glossary, topics: list[Topic]) -> list[bool]:
    """Adds the concepts the tokens name (the longest match first, no overlaps) to `topics`;
    which of the `size` atomic tokens they cover."""
    covered = [False] * size
    end = 0
    for match in sorted(glossary.find(tokens), key=lambda m: (m.start, -(m.end - m.start))):
        if match.start < end:
            continue
        end = match.end
        covered[match.start : match.end] = [True] * (match.end - match.start)
        if match.concept not in {t.key for t in topics}:
            topics.append(Topic(match.concept, glossary.label(match.concept), match.text or match.term))
    return covered


def _uncovered_words(stream: list[Token], covered: list[bool]) -> list[str]:
    """The text of each run of uncovered tokens within one word (a Latin word or a Han run)."""
    runs: list[list[Token]] = []
    previous: Token | None = None
    for token, done in zip(stream, covered, strict=True):
        if done:
            previous = None
            continue
        if previous is not None and previous.group == token.group:
            runs[-1].append(token)
        else:
            runs.append([token])
        previous = token
    words: list[str] = []
    for run in runs:
        if run[0].kind == "cjk":
            # Han runs are cut into overlapping bigrams: the first, then each one's last character.
            words.append(run[0].surface + "".join(t.surface[-1] for t in run[1:]))
        else:
            words.append(" ".join(dict.fromkeys(t.surface for t in run)))
    return words


def entries_on(topics: Iterable[Topic], index: SearchIndex) -> frozenset[str]:
    """Ids of the entries the search finds for any of the topics."""
    found: set[str] = set()
    for topic in topics:
        found.update(hit.entry.id for hit in index.rank(topic.query))
    return frozenset(found)
