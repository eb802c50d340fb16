"""The small bilingual vocabularies a note's parts are recognised by, loaded from data.

Curators differ in words, not in kinds of parts: `【风险】`, `坑：` and `Gotcha:` all announce a
caveat. The words live in `chatbot/digest/data/note_labels.yaml` so a new curator's habit is a
data change with a test note, not a code change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Literal, get_args

from chatbot.yamlfast import load_yaml

PartKind = Literal["verdict", "why", "focus", "audience", "caveats", "refs"]
PART_KINDS: tuple[PartKind, ...] = get_args(PartKind)

_SPACES_RE = re.compile(r"[\s*_]+")
_MARKER_RE = re.compile(r"^[^\w【\[(（]+")


def label_key(text: str) -> str:
    """A label as compared: case-folded, without spaces, markdown emphasis or the emoji or
    bullet a curator marks it with (`📌 推荐`, `⚠️ 注意`)."""
    return _MARKER_RE.sub("", _SPACES_RE.sub("", text)).casefold()


@dataclass(frozen=True)
class NoteVocabulary:
    """Compiled vocabularies: labels per part, verdict words, lead patterns, person verbs."""

    labels: dict[str, PartKind]
    label_words: tuple[tuple[str, PartKind], ...]  # as written in the data file, for hints
    modifiers: tuple[str, ...]
    suffixes: tuple[str, ...]
    verdict_re: re.Pattern[str]
    verdict_stem_re: re.Pattern[str]
    audience_re: _Leads  # any of the audience leads
    caveat_re: _Leads  # any of the caveat leads
    person_before_verb_re: re.Pattern[str]  # `carol argued`: group 1 is the name
    person_verb_re: re.Pattern[str]  # a space and a reporting verb: found before the costly pattern
    enumeration_lead_re: re.Pattern[str]
    not_people: frozenset[str]
    known: dict[str, PartKind | None] = field(default_factory=dict, compare=False)  # label_kind cache

    def label_kind(self, label: str) -> PartKind | None:
        """The part a label announces (`主要风险` → caveats), or None for an unknown label."""
        key = label_key(label)
        if key in self.labels:
            return self.labels[key]
        if key not in self.known:
            self.known[key] = self._modified_label_kind(key)
        return self.known[key]

    def _modified_label_kind(self, key: str) -> PartKind | None:
        for modifier in ("", *self.modifiers):
            if not key.startswith(modifier):
                continue
            word = key[len(modifier) :]
            if word in self.labels:
                return self.labels[word]
            for suffix in self.suffixes:  # 风险点 → 风险, 注意事项 → 注意
                if word.endswith(suffix) and word[: -len(suffix)] in self.labels:
                    return self.labels[word[: -len(suffix)]]
        return None

    def is_audience(self, text: str) -> bool:
        return self.audience_re.search(text)

    def is_caveat(self, text: str) -> bool:
        return self.caveat_re.search(text)


def _alternation(words: list[str], after_space: bool = False) -> str:
    r"""Longest first, spaces matching any run of spaces or a hyphen (`worth a look` is also
    `[worth-a-look]`); Latin words bounded as words (only at their end `after_space`: a pattern
    putting `\s` before them, whose test is then a waste)."""
    before = "" if after_space else "(?<![A-Za-z0-9])"
    parts = []
    for word in sorted(set(words), key=len, reverse=True):
        escaped = re.escape(word).replace(r"\ ", r"(?:\s+|-)")
        if word[:1].isascii() and word[:1].isalnum():
            escaped = rf"{before}{escaped}(?![A-Za-z0-9])"
        parts.append(escaped)
    return "|".join(parts)


@dataclass(frozen=True)
class _Leads:
    """Lead patterns: those opening with `^` tried once at the start (`match`), the others
    searched; one alternation of all of them was tried at every position of every sentence.
    Each searched pattern is searched on its own: `re` skips quickly to where a pattern of
    literal words may start, which it cannot do for an alternation mixing them with `\b…`."""

    opening: re.Pattern[str] | None
    anywhere: tuple[re.Pattern[str], ...]

    def search(self, text: str) -> bool:
        if self.opening is not None and self.opening.match(text):
            return True
        return any(pattern.search(text) for pattern in self.anywhere)


def _any_of(patterns: list[str]) -> _Leads:
    """One pattern for a list of them; a leading `(?i)` becomes a scoped `(?i:…)` group. A
    pattern opening with `^` is anchored as a whole (no top-level `|` after it)."""
    opening: list[str] = []
    anywhere: list[str] = []
    for p in patterns:
        flags, body = ("(?i:", p[4:]) if p.startswith("(?i)") else ("(?:", p)
        if body.startswith("^"):
            opening.append(f"{flags}{body[1:]})")
        else:
            anywhere.append(f"{flags}{_first_letter_look(body)}{body})")
    return _Leads(re.compile("|".join(opening)) if opening else None, tuple(re.compile(p) for p in anywhere))


def _first_letter_look(body: str) -> str:
    r"""`(?=[ab…])` for a body `\b(?:a…|b…)…` whose words all open with a letter or digit, else "".
    `re` cannot skip ahead through a pattern opening with `\b` (nor a case-insensitive word
    list), but through a class it can; inside the pattern's flags the look folds case as it does.
    Classes and escaped punctuation are not parsed here: a body holding them gets no look."""
    if not body.startswith(r"\b(?:") or "[" in body or re.search(r"\\[^A-Za-z0-9]", body):
        return ""
    words = _top_level_alternatives(body[5:])
    if not words or not all(word[:1].isascii() and word[:1].isalnum() for word in words):
        return ""
    return f"(?=[{''.join(sorted({word[0] for word in words}))}])"


def _top_level_alternatives(text: str) -> list[str] | None:
    """The alternatives of a group whose `(?:` is cut off, when nothing repeats the group."""
    words: list[str] = []
    depth, start = 0, 0
    for at, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")" and depth > 0:
            depth -= 1
        elif char == ")":
            optional = text[at + 1 : at + 2] in ("?", "*", "{")
            return None if optional else [*words, text[start:at]]
        elif char == "|" and depth == 0:
            words.append(text[start:at])
            start = at + 1
    return None


@lru_cache(maxsize=1)
def vocabulary() -> NoteVocabulary:
    """The bundled vocabularies; a malformed data file fails loudly with its name."""
    text = resources.files("chatbot.digest").joinpath("data/note_labels.yaml").read_text(encoding="utf-8")
    data = load_yaml(text)
    labels, label_words = _labels(data["labels"])

    def words(key: str) -> list[str]:
        return [str(v) for v in data[key]]

    verbs = _alternation(words("person_verbs"), after_space=True)  # both patterns put `\s` before
    return NoteVocabulary(
        labels=labels,
        label_words=label_words,
        modifiers=tuple(sorted((label_key(m) for m in words("label_modifiers")), key=len, reverse=True)),
        suffixes=tuple(label_key(m) for m in words("label_suffixes")),
        verdict_re=re.compile(_alternation(words("verdicts")), re.IGNORECASE),
        verdict_stem_re=re.compile(_alternation(words("verdict_stems")), re.IGNORECASE),
        audience_re=_any_of(words("audience_leads")),
        caveat_re=_any_of(words("caveat_leads")),
        # Opens with its first letter, the look-behinds after it (`re` skips to letters); the name
        # holds no space, so taking its letters possessively (`+`) never loses a match.
        person_before_verb_re=re.compile(
            rf"([A-Za-z](?<!['’]s .)(?<![\w`@/.-].)[A-Za-z0-9-]{{1,38}}+)(?=\s+(?:{verbs}))"
        ),
        person_verb_re=re.compile(rf"\s(?:{verbs})"),
        enumeration_lead_re=re.compile(rf"(?:{_alternation(words('enumeration_leads'))})\s*$", re.IGNORECASE),
        not_people=frozenset(w.casefold() for w in words("not_people")),
    )


def _labels(data: dict[str, list[Any]]) -> tuple[dict[str, PartKind], tuple[tuple[str, PartKind], ...]]:
    """Label keys to the part they announce (the first part wins), and the words as written."""
    labels: dict[str, PartKind] = {}
    label_words: list[tuple[str, PartKind]] = []
    for kind, words in data.items():
        if kind not in PART_KINDS:
            raise ValueError(f"note_labels.yaml: unknown part {kind!r}")
        for word in words:
            labels.setdefault(label_key(str(word)), kind)
            label_words.append((str(word), kind))
    return labels, tuple(label_words)
