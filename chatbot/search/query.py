"""Reading a query: its concepts' spans, what they leave uncovered, typo corrections, and
Chinese written with spaces. Functions of the query's tokens and the glossary alone; what an
entry scores is `index.py`'s."""

from __future__ import annotations

import re

from rapidfuzz import process
from rapidfuzz.distance import OSA

from chatbot.search.glossary import ConceptMatch, Glossary
from chatbot.search.stopwords import filler
from chatbot.search.tokens import Token, tokenize
from chatbot.text import HAN_RUN, han_class


def closest_word(word: str, choices: list[str]) -> str | None:
    """The vocabulary word a typo most likely meant; short words need near-exact spelling."""
    if len(word) < 4 or not word.isalpha() or not choices:
        return None
    max_edits = 1 if len(word) <= 7 else 2
    best = process.extractOne(word, choices, scorer=OSA.distance, score_cutoff=max_edits)
    if best is None:
        return None
    choice: str = best[0]
    if choice[0] != word[0]:
        return None
    if len(word) == 4 and sorted(choice) != sorted(word):
        return None  # four letters: only a swapped pair is a typo, not a different word
    return choice


def joined_han(query: str, glossary: Glossary) -> str:
    """The query with the space between two Chinese runs dropped where a glossary term spans
    it: a writer who spaces Chinese words (`图像预处理 缓存`) still names the concept
    (`图像预处理缓存`); spaces that split no term stay, and each run keeps its own matches."""
    pieces: list[str] = []
    start = 0
    for space in _SPACE_BETWEEN_HAN.finditer(query):
        left = _LAST_HAN_RUN.search(query, 0, space.start())
        right = HAN_RUN.match(query, space.end())
        if left and right and _spans(glossary, left.group(), right.group()):
            pieces.append(query[start : space.start()])
            start = space.end()
    pieces.append(query[start:])
    return "".join(pieces)


def _spans(glossary: Glossary, left: str, right: str) -> bool:
    """Whether a glossary term lies across the joint of two Chinese runs."""
    return any(m.term not in left and m.term not in right for m in glossary.find(tokenize(left + right)))


_SPACE_BETWEEN_HAN = re.compile(f"(?<={han_class()})\\s+(?={han_class()})")
_LAST_HAN_RUN = re.compile(f"{HAN_RUN.pattern}$")


def rewritten(tokens: list[Token], fixes: dict[str, str]) -> list[str]:
    """The query's groups as text again, with the typo fixes (a Chinese run re-joined)."""
    out: list[str] = []
    groups_done: set[int] = set()
    for token in tokens:
        if token.group in groups_done:
            continue
        groups_done.add(token.group)
        group = [t for t in tokens if t.group == token.group]
        if token.kind == "cjk":
            out.append("".join(t.surface[0] for t in group) + group[-1].surface[-1:])
        else:
            out.append(fixes.get(token.surface, token.surface))
    return out


def outermost(matches: list[ConceptMatch]) -> list[ConceptMatch]:
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


def inside_identifier(stream: list[Token], match: ConceptMatch) -> bool:
    """Whether the match is some of an identifier's real parts but not all of them (`mm` in
    `mm_hash`; not `prefix caching` in `enable_prefix_caching`)."""
    group = stream[match.start].group
    span = stream[match.start : match.end]
    if any(t.kind != "part" or t.group != group for t in span):
        return False
    rest = [t for t in stream[: match.start] + stream[match.end :] if t.group == group]
    return not all(filler(t) for t in rest)


def uncovered_groups(stream: list[Token], covered: set[int]) -> dict[int, list[int]]:
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


def contiguous(positions: list[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for i in positions:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def surface_for(vocabulary: dict[str, str], key: str) -> str:
    return next((surface for surface, k in vocabulary.items() if k == key), key)
