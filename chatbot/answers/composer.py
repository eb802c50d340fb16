"""Building an answer's text within its budget: interface words, fact lines, quotes, the PR link.

The interface words (a prefix per kind of answer, its "not in the note" line) are data, in
`data/answer_words.yaml`, in both languages; the quotes stay the curator's own words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Literal

from chatbot.answers.candidates import Candidate
from chatbot.digest import Entry, clean, split_top_level
from chatbot.yamlfast import load_yaml

Lang = Literal["zh", "en"]
SHORT_NOTE = 200  # on a note this short, one whole relevant sentence may be quoted
BULLET = "• "
MIN_LEAD = 8
# A framing opener says who or what the sentence is for, not the point: "对 reviewer 而言，…".
FRAMING_RE = re.compile(r"^(?:对于?[^，,。：:]{1,24}(?:而言|来说)|另外|此外|其次|总之|总的来说)[，,：:]\s*")
INTRO = 16  # a lead-in before a colon this short is skipped for what follows it  # a lead shorter than this is a heading, not a point
LEAD_SEPARATORS = ("——", "：", ":", "，", ",", "；", ";", "、")


@lru_cache(maxsize=1)
def answer_words() -> dict[str, dict[Lang, str]]:
    """The interface words by key and language (the data file, read once)."""
    text = resources.files("chatbot.answers").joinpath("data/answer_words.yaml").read_text(encoding="utf-8")
    data = load_yaml(text)
    return {str(key): {"zh": str(v["zh"]), "en": str(v["en"])} for key, v in data["words"].items()}


@lru_cache(maxsize=2)
def words_in(lang: Lang) -> dict[str, str]:
    """The interface words of one language."""
    return {key: by_lang[lang] for key, by_lang in answer_words().items()}


def lead(candidate: Candidate) -> str:
    """A candidate's short form when room is tight: its given one, else its first real clause."""
    if candidate.short:
        return candidate.short
    head = FRAMING_RE.sub("", candidate.text, count=1) or candidate.text
    intro = split_top_level(head, ["：", ":"])
    if len(intro) > 1 and len(clean(intro[0])) <= INTRO and clean("".join(intro[1:])):
        head = clean("".join(intro[1:]))  # "它展示了一个高价值的测试模式：…" is about what follows
    for sep in LEAD_SEPARATORS:
        cut = split_top_level(head, [sep])
        if len(cut) > 1 and clean(cut[0]):
            # A bare heading ("测试设计——…") keeps the first clause after it.
            first = clean(cut[0])
            rest = "".join(cut[1:]).removeprefix(sep)
            head = first if len(first) >= MIN_LEAD else clean(first + sep + rest)
    return head


@dataclass
class Composer:
    """Builds the answer text within the budget: fact lines, prefix, quotes, then the PR link."""

    entry: Entry
    lang: Lang
    limit: int
    sources: list[str] = field(default_factory=list)
    found: bool = True

    def word(self, key: str) -> str:
        return answer_words()[key][self.lang]

    @property
    def link(self) -> str:
        return self.entry.url or ""

    @property
    def room(self) -> int:
        """Space for the answer's words. On a short note the link would take half the budget or
        more, so it goes after them without counting against them."""
        reserve = len(self.link) + 1 if self.link else 0
        return self.limit - reserve if reserve * 2 < self.limit else self.limit

    def finish(self, body: str) -> str:
        """Body plus the PR link line: every answer names the PR it speaks for."""
        body = body.strip()
        if self.link:
            return f"{body}\n{self.link}" if body else self.link
        return body

    def lines(self, lines: Sequence[str]) -> str:
        """Plain lines (facts, an honest "not in the note"), whole: they are the bot's own words."""
        return self.finish("\n".join(lines))

    def quote(self, prefix: str, chosen: Sequence[Candidate]) -> str:
        """Fact lines, then the prefix and the quotes: the longest variant that fits (all in
        full; the first in full and leads; leads; fewer), cut only as a last resort."""
        facts = [c for c in chosen if c.fact]
        quotes = [c for c in chosen if not c.fact]
        self.sources.extend(c.source for c in chosen)
        head = [c.text for c in facts]
        room = self._quote_room(prefix, quotes, head)
        body = ""
        for label in dict.fromkeys([prefix, ""]):  # the interface words go first when room is short
            for texts in _variants(quotes):
                body = self._render(head, label, texts)
                if len(body) <= room:
                    return self.finish(body)
        return self.finish(body[: max(room - 1, 1)] + "…")

    def _quote_room(self, prefix: str, quotes: Sequence[Candidate], head: Sequence[str]) -> int:
        """The room, or on a short note enough for the whole first quote."""
        if not quotes or len(self.entry.note) > SHORT_NOTE:
            return self.room
        whole = len(self._render(head, prefix, [quotes[0].text]))
        return max(self.room, min(whole, int(len(self.entry.note) * 0.75) - 1))

    @staticmethod
    def _render(head: Sequence[str], prefix: str, texts: Sequence[str]) -> str:
        if not texts:
            return "\n".join(head)
        texts = [_balanced(t) for t in texts]
        if len(texts) == 1:
            body = f"{prefix}{texts[0]}"
        else:
            bullets = "\n".join(BULLET + t for t in texts)
            body = f"{prefix.rstrip()}\n{bullets}" if prefix.strip() else bullets
        return "\n".join([*head, body.strip()])


def _balanced(text: str) -> str:
    """A clause cut out of `**bold**` keeps one of its markers ("但最后 **没合，closed"): an
    unpaired marker is dropped, or Slack shows the asterisks."""
    return text.replace("**", "") if text.count("**") % 2 else text


def _variants(quotes: Sequence[Candidate]) -> list[list[str]]:
    """Ways to quote, longest first: all in full; the first in full and the leads of the next
    ones, or the first n in full; the leads of the first n; nothing but the facts."""
    full = list(dict.fromkeys(c.text for c in quotes))
    leads = list(dict.fromkeys(lead(c) for c in quotes))
    variants: list[list[str]] = [full]
    for n in range(len(full), 0, -1):
        variants.append(list(dict.fromkeys([*full[:1], *leads[1:n]])))
        variants.append(full[:n])
    variants.extend(leads[:n] for n in range(len(leads), 0, -1))
    return variants or [[]]
