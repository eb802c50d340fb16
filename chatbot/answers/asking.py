"""Which part of a thread reply asks, and how many questions it holds.

People quote the bot's answer before asking about it ("> Focus on: … why?"), write a paragraph of
context before "anyway: who wrote it?", and ask two things at once ("谁写的，什么时候合的"). The
answerer answers the asking part, each of its questions, never the quote or the preamble.
"""

from __future__ import annotations

import re

from chatbot.answers.addressing import asks_something
from chatbot.answers.intents import Intent
from chatbot.answers.intents import cached_classify as classify

# A quoted line: Slack sends "> " as "&gt; "; a question typed under it is the question.
_QUOTE_LINE_RE = re.compile(r"^\s*(?:>|&gt;)\s?")
# Sentence ends: a question or exclamation mark, a Chinese full stop or semicolon, a line break, and
# ". " before the next sentence (not a dot inside `a.b` or 1.5).
_SENTENCE_END_RE = re.compile(r"(?<=[?？!！。；\n])|(?<=;)(?![A-Za-z])|(?<=\.)\s+")  # not the ; of tl;dr
# Where one question ends and the next starts within a sentence: a comma, or "and"/"also"/以及/另外
# before the next asking clause ("what's the root cause and how was it tested?").
_QUESTION_SPLIT_RE = re.compile(r"[,，、]|\s+(?:and|also|plus)\s+|以及|另外|还有(?=\S)")
MAX_QUESTIONS = 3


def unquoted(text: str) -> str:
    """The message without its quoted lines; the quote itself when nothing else was typed."""
    lines = text.split("\n")
    own = [line for line in lines if not _QUOTE_LINE_RE.match(line)]
    if any(line.strip() for line in own):
        return "\n".join(own).strip()
    return "\n".join(_QUOTE_LINE_RE.sub("", line) for line in lines).strip()


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END_RE.split(text) if s and s.strip()]


def asking_part(text: str, limit: int) -> str:
    """The part of a message that asks. A message of several sentences whose asking sentences
    are a known kind of question is answered on those ("…broke two dashboards. Anyway: who
    wrote it?" asks who wrote it); otherwise the whole message, its last `limit` characters when
    longer (the question comes last, the context first)."""
    text = unquoted(text)
    parts = sentences(text)
    if len(parts) > 1:
        asking = " ".join(s for s in parts if asks_something(s))
        if asking and classify(asking) != "other":
            text = asking
    if len(text) > limit:
        tail = text[-limit:]
        cut = _SENTENCE_END_RE.search(tail)
        text = tail[cut.end() :] if cut and tail[cut.end() :].strip() else tail
    return text.strip()


def questions(text: str) -> list[tuple[Intent, str]]:
    """The questions of one message, each with its kind: "风险是什么？怎么测的？" holds two, "谁写的，
    什么时候合的" two; a clause that asks nothing ("对 reviewer 而言") belongs to its neighbour.
    One kind asked twice is one question; a message of one clause holds none to split."""
    parts = sentences(text)
    if len(parts) < 2 and not _QUESTION_SPLIT_RE.search(text):
        return []
    found: list[tuple[Intent, str]] = []
    for clause in (c for sentence in parts for c in _asking_clauses(sentence)):
        intent = classify(clause)
        if intent == "other" or all(intent != kind for kind, _ in found):
            found.append((intent, clause))
    return found[:MAX_QUESTIONS]


def _asking_clauses(sentence: str) -> list[str]:
    """A sentence's questions: its clauses when every one asks ("谁写的，什么时候合的"), else the
    sentence itself when it asks ("If I use FP8, does it break?" is one question)."""
    clauses = [c.strip() for c in _QUESTION_SPLIT_RE.split(sentence) if c and c.strip()]
    if len(clauses) > 1 and all(asks_something(c) for c in clauses):
        return clauses
    return [sentence] if asks_something(sentence) else []
