"""Whether a reply in one of the bot's threads is addressed to the bot.

People talk to each other under the bot's posts ("lgtm, thanks", "👍", "@alice 你看下这个"); a bot
that answers every reply is noise and gets muted. A reply is for the bot when it mentions the
bot, or asks something (a question mark, an interrogative in Chinese or English), requests
something ("explain the design", "讲讲测试") or is a terse follow-up phrasing ("root cause",
"related PRs") without mentioning somebody else. The words are
data (`data/addressing.yaml`); the shapes (where an English interrogative stands, a Chinese
request verb followed by 得 describing rather than asking) are here.

Pure: the caller says whether the text mentioned the bot or other people (Slack markup is the
adapter's business) and passes the text without mentions.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Literal

from chatbot.answers.intents import intent_rules
from chatbot.text import HAN_CHAR, normalize_question
from chatbot.yamlfast import load_yaml

FollowUpMode = Literal["questions", "mentions", "all"]
FOLLOWUP_MODES: tuple[FollowUpMode, ...] = ("questions", "mentions", "all")

_URL_RE = re.compile(r"https?://\S+")
_SHORTCODE_RE = re.compile(r":[a-z0-9_+\-']+:")  # :thumbsup:, :+1:, :white_check_mark:
_CLAUSE_SPLIT_RE = re.compile(r"[.!;,:\n。！；，：、…]+|\s[-–—]\s")
_EN_WORD_RE = re.compile(r"[a-z0-9][a-z0-9';+]*")
_SEPARATORS = r"[\s\.,!~`'\"。，！～、;；:：…\-—_*()（）\[\]]*"


@dataclass(frozen=True)
class AddressingRules:
    """The vocabularies of `data/addressing.yaml`, compiled."""

    question_marks: tuple[str, ...]
    zh_question: re.Pattern[str]
    zh_not_question: re.Pattern[str]
    zh_request: re.Pattern[str]
    en_interrogatives: frozenset[str]
    en_requests: frozenset[str]
    en_auxiliaries: frozenset[str]
    en_statement_verbs: frozenset[str]
    en_exclamations: tuple[tuple[str, ...], ...]
    en_fillers: tuple[tuple[str, ...], ...]
    acknowledgement: re.Pattern[str]


def _alternation(phrases: list[str]) -> str:
    ordered = sorted({normalize_question(p) for p in phrases}, key=len, reverse=True)
    parts = []
    for phrase in ordered:
        escaped = re.escape(phrase).replace(r"\ ", r"\s*")
        if phrase[:1].isascii() and phrase[:1].isalnum():
            escaped = r"(?<![a-z0-9])" + escaped
        if phrase[-1:].isascii() and phrase[-1:].isalnum():
            escaped += r"(?![a-z0-9])"
        parts.append(escaped)
    return "|".join(parts)


@lru_cache(maxsize=1)
def addressing_rules() -> AddressingRules:
    text = resources.files("chatbot.answers").joinpath("data/addressing.yaml").read_text(encoding="utf-8")
    data = load_yaml(text)

    def words(key: str) -> list[str]:
        return [str(w) for w in data[key]]

    fillers = sorted(
        (tuple(normalize_question(f).split()) for f in words("en_fillers")), key=len, reverse=True
    )
    return AddressingRules(
        question_marks=tuple(normalize_question(m) for m in words("question_marks")),
        zh_question=re.compile(_alternation(words("zh_interrogatives"))),
        zh_not_question=re.compile(_alternation(words("zh_not_questions"))),
        # A request verb followed by 得 describes ("总结得很好"), it does not ask.
        zh_request=re.compile(f"(?:{_alternation(words('zh_requests'))})(?!得)"),
        en_interrogatives=frozenset(normalize_question(w) for w in words("en_interrogatives")),
        en_requests=frozenset(normalize_question(w) for w in words("en_requests")),
        en_auxiliaries=frozenset(normalize_question(w) for w in words("en_auxiliaries")),
        en_statement_verbs=frozenset(normalize_question(w) for w in words("en_statement_verbs")),
        en_exclamations=tuple(tuple(normalize_question(w).split()) for w in words("en_exclamations")),
        en_fillers=tuple(fillers),
        acknowledgement=re.compile(
            f"^{_SEPARATORS}(?:(?:{_alternation(words('acknowledgements'))}){_SEPARATORS})+$"
        ),
    )


def _plain(text: str) -> str:
    """Normalised text without URLs, emoji shortcodes, emoji and other symbols."""
    norm = normalize_question(_URL_RE.sub(" ", text))
    norm = _SHORTCODE_RE.sub(" ", norm)
    kept = []
    for ch in norm:
        category = unicodedata.category(ch)
        if ch == "+" or not (category.startswith("S") or category in ("Cf", "Mn", "Co", "Cs")):
            kept.append(ch)
    return re.sub(r"\s+", " ", "".join(kept)).strip()


# A letter, digit or Chinese character: a message without any is emoji and punctuation.
_MEANINGFUL_RE = re.compile(f"[a-z0-9]|{HAN_CHAR.pattern}")


def is_chatter(text: str) -> bool:
    """Emoji only, or nothing but acknowledgements ("lgtm, thanks", "收到👍", "+1")."""
    plain = _plain(text)
    if not _MEANINGFUL_RE.search(plain):
        return True
    return bool(addressing_rules().acknowledgement.match(plain))


def _clause_words(clause: str, rules: AddressingRules) -> list[str]:
    words = _EN_WORD_RE.findall(clause)
    changed = True
    while changed and words:
        changed = False
        for filler in rules.en_fillers:
            if tuple(words[: len(filler)]) == filler and len(words) > len(filler):
                words = words[len(filler) :]
                changed = True
                break
    return words


def asks_something(text: str) -> bool:
    """A question (question mark, interrogative) or a request (explain…, 讲讲…), either language."""
    rules = addressing_rules()
    plain = _plain(text)
    if not plain:
        return False
    return _marked_question(plain, rules) or any(
        _clause_asks(clause, rules) for clause in _CLAUSE_SPLIT_RE.split(plain)
    )


_TLDR_RE = re.compile(r"(?<![a-z])(?:tl;?dr|eli5)(?![a-z])")
# "值不值得", "改动大不大", "能不能": one character asked both ways.
_A_NOT_A_RE = re.compile(f"({HAN_CHAR.pattern})不\\1")


def _marked_question(plain: str, rules: AddressingRules) -> bool:
    """A question mark, a Chinese question or request, or tl;dr / eli5 anywhere in the text."""
    if any(mark in plain for mark in rules.question_marks):
        return True
    han = rules.zh_not_question.sub(" ", plain)
    return bool(
        rules.zh_question.search(han)
        or rules.zh_request.search(han)
        or _A_NOT_A_RE.search(han)
        or _TLDR_RE.search(plain)
    )


def _clause_asks(clause: str, rules: AddressingRules) -> bool:
    """An English clause opening with an interrogative or a request; not an exclamation ("how
    nice"), nor a statement ("will check", "can do": not "will it…?")."""
    words = _clause_words(clause.strip(), rules)
    if not words or any(tuple(words[: len(e)]) == e for e in rules.en_exclamations):
        return False
    first = words[0]
    if first in rules.en_auxiliaries and len(words) > 1 and words[1] in rules.en_statement_verbs:
        return False
    return first in rules.en_interrogatives or first in rules.en_requests


TERSE_CHARS = 24
TERSE_COVER = 0.7


def names_a_kind_of_question(text: str) -> bool:
    """A terse message that is itself a follow-up phrasing ("root cause", "related PRs", "风险点",
    "链接"): typed at the bot, even without a question mark. The phrasing must be most of the
    message, so "测试设计很巧妙" (a comment on the tests) is not one."""
    plain = _plain(text)
    if not plain or len(plain) > TERSE_CHARS or len(plain.split()) > 3:
        return False
    ack = addressing_rules().acknowledgement
    if any(ack.match(word) for word in plain.split()):
        return False  # "nice design", "great tests": praise, not a question
    return _phrased_share(plain) >= TERSE_COVER


# Words that carry no question of their own in a terse one: "PR 地址" asks 地址, "合入日期是" 日期.
_TERSE_FILLER_RE = re.compile(r"(?<![a-z])(?:pr|the|its?)(?![a-z])|这个|这|的|是|呢|吧|呀")


def _phrased_share(plain: str) -> float:
    """How much of a terse message the follow-up phrasings cover, together ("英文" + "原标题"),
    not counting filler words the phrasings leave out."""
    covered = [False] * len(plain)
    for rule in intent_rules():
        if match := rule.pattern.search(plain):
            covered[match.start() : match.end()] = [True] * (match.end() - match.start())
    filler = [False] * len(plain)
    for match in _TERSE_FILLER_RE.finditer(plain):
        filler[match.start() : match.end()] = [True] * (match.end() - match.start())
    counted = [i for i, ch in enumerate(plain) if not ch.isspace() and (covered[i] or not filler[i])]
    return sum(covered[i] for i in counted) / len(counted) if counted else 0.0


def addressed_to_bot(
    text: str,
    *,
    mentions_bot: bool = False,
    mentions_others: bool = False,
    mode: FollowUpMode = "questions",
) -> bool:
    """Whether to answer a reply in an owned thread. `text` is the reply without its mentions.

    - `all`: every reply (the bot's threads are for the bot);
    - `mentions`: only replies that mention the bot;
    - `questions` (default): a mention of the bot, or a question/request that does not mention
      somebody else. A mention followed only by "thanks" is thanks, not a question; a bare
      mention asks for the summary.
    """
    if mode == "all":
        return True
    stripped = text.strip()
    if mentions_bot:
        return not stripped or not is_chatter(stripped)
    if mode == "mentions" or mentions_others:
        return False
    return not is_chatter(stripped) and (asks_something(stripped) or names_a_kind_of_question(stripped))
