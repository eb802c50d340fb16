"""People a note names without an `@`: known GitHub handles and the full names behind them.

A bare word is a person only when it is a known handle: vLLM's committers, code owners and
frequent contributors (`data/people.yaml`), a digest's PR authors, or a handle its `.meta.yaml`
lists under `people:` (with the names curators write for it). Handle-shaped words are many in a
note (`fp16`, `top-k`, `v0.27`), so the anchor, not the shape, decides: ordinary words never count.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from chatbot.text import has_han
from chatbot.yamlfast import load_yaml

# A handle as GitHub allows it (letters, digits, single dashes), standing alone: not inside a
# path, a code name, an address or a longer word.
# (Chinese may touch it: `mgoin把它合了`, `看 mgoin的` — only Latin letters and digits end it.)
HANDLE_WORD_RE = re.compile(
    r"[A-Za-z0-9](?<![A-Za-z0-9_@/.`-].)[A-Za-z0-9-]{0,38}+(?![A-Za-z0-9_/]|-\w|\.\w)"
)


# Where a note says who someone is, whoever they are: `Michael Goin (mgoin)`, `author wenscarl`,
# `reviewed by alice-dev`, `zixi-qi chose …`, `apatke 的 #5958`, `作者 bob`. The handle is a
# group; an all-capitals word in brackets is an abbreviation (`Expert parallel (EP)`), not one.
_IN_BRACKETS_RE = re.compile(r"[(（][ \t]*@?((?![A-Z0-9-]+[)）])[A-Za-z0-9][A-Za-z0-9-]{1,38})[ \t]*[)）]")
_NAME_BEFORE_RE = re.compile(r"(?<![\w-])(?:[A-Z][a-zà-ÿ]+[ \t]){1,3}$")
_WORD = r"([A-Za-z0-9][A-Za-z0-9-]{1,38}+)(?![\w-])"
# After `author`/`作者` a lowercase word is a handle (`author wenscarl`); after `reviewed by`, `by`,
# `cc`, `ping`, `thanks to` and before a doing verb only a word shaped like a handle is.
_STRONG_LEAD_RE = re.compile(r"(?<![\w-])(?<!the )(?<!The )(?:(?i:author)[ \t]+|作者[ \t]*)@?" + _WORD)
# `作者 K-Mistele`, `作者是 iMMIQ`, `Author: LDLINGLINGLING`: after the Chinese word or a colon the
# word is the handle, whatever its case (an acronym, `作者 PR 里说`, and a full name are not).
_SAID_AUTHOR_RE = re.compile(
    r"(?:作者(?:[ \t]*\**[ \t]*[:：]|是|为)?|(?<![\w-])(?i:author)[ \t]*\**[ \t]*[:：])[ \t]*\**[ \t]*@?"
    + _WORD
    + r"(?![ \t]+[A-Z][a-z])"
)
# A label or lead that names people, then a list of them: `**评审**: markmc, luyuzhe111`,
# `Reviewers: a, b`, `**评审**: cc 了 a, b`. Each item shaped like a handle or a name is one.
_PEOPLE_LABEL_RE = re.compile(
    r"(?:^|(?<=[\n。；;]))[ \t]*(?:[-*•][ \t]*)?(?:[^\w\s]+[ \t]*)?\**[ \t]*"
    r"(?:(?i:reviewers?|reviewed by|approved by|authors?|co-authors?|contributors?)|评审人?|审阅人?|审核人?"
    r"|作者|协作者?|贡献者|参与者)[ \t]*\**[ \t]*[:：][ \t]*\**[ \t]*(?:(?i:cc|ping)[ \t]*)?(?:了[ \t]*)?@?"
    + _WORD,
    re.MULTILINE,
)
_PEOPLE_WORDS_RE = re.compile(
    r"(?i:review|approved|author|contributor)|评审|审阅|审核|作者|协作|贡献者|参与者"
)
# A line labelled with the people of the PR (`People: tomasruizt (author)；ekagra-ranjan 建议测 AL`):
# every word on it shaped like a person is one, whatever role or clause surrounds it.
_PEOPLE_LINE_RE = re.compile(
    r"(?:^|(?<=[\n。；;|]))[ \t]*(?:[-*•][ \t]*)?\**[ \t]*(?:(?i:people|who's who)|人员|相关人员?|参与者?|人物)"
    r"[ \t]*\**[ \t]*[:：]([^\n|]*)",
    re.MULTILINE,
)
_LINE_WORD_RE = re.compile(r"(?<![\w@/.`#-])@?([A-Za-z][A-Za-z0-9-]{1,38})(?![\w-])")
# `#23463（rojagtap，…）`, `#8709（liuyanyi）`: a name in brackets right after a PR is its author's.
_PR_THEN_NAME_RE = re.compile(r"#\d+[ \t]*[（(][ \t]*@?([A-Za-z][A-Za-z0-9-]{1,38})(?=[ \t]*[）)，,；;、])")
# What opens a segment of a `People:` line: its start, or a separator and spaces (`；`, `，`).
_SEGMENT_START_RE = re.compile(r"(?:[:：；;，,、]|^)[ \t\*@]*$")
# The next item of a list of names: `, luyuzhe111`, ` and ekagra-ranjan`, `、@bob`.
_NEXT_ITEM_RE = re.compile(r"[ \t]*(?:,|，|、|和|与|及|&|and\b)[ \t]*@?" + _WORD)
# A word whose case changes inside it, as a name written together does (`YaoJiayi`, `iMMIQ`,
# `LiuXiaoxuanPKU`); a capitalised word alone (`Michael`) does not.
_INNER_CASE_RE = re.compile(r"[A-Za-z0-9-]*(?:[a-z][A-Z]|[A-Z]{2,}[a-z])[A-Za-z0-9-]*")
# A handle with an initial before a dash: `K-Mistele`.
_INITIAL_DASH_RE = re.compile(r"[A-Z]-[A-Z][a-z]{2,}[0-9]*")
# `reviewed by` is a `by`: an ordinary word may follow it (`reviewed by default`, `by scheduler`).
_REVIEW_LEAD_RE = re.compile(r"(?<![\w-])(?i:authored by|reviewed by|reviewer)[ \t]+@?" + _WORD)
_WEAK_LEAD_RE = re.compile(r"(?<![\w-])(?i:by|cc|cc'd|cc'ed|ping|thanks to|hat tip to|h/t)[ \t]+@?" + _WORD)
# Leads that only people follow: `co-authored with`, `reported by`, `approved by`, `review was
# requested from`, `pinged`, `r=mgoin`. A first name is not taken (`approved by Lily Liu`: the full
# name is read as a name); a list goes on (`co-authored with SolitaryThinker, Yard1 and rkooo567`).
# (Each lead is found as a string in the lower-cased note, then the word after it: a pattern
# opening with the alternation was tried at every character, a third of the reading time.)
_PEOPLE_LEADS = (
    "co-authored with ",
    "co-authored by ",
    "co-author ",
    "reported by ",
    "reported first by ",
    "approved by ",
    "requested from ",
    "pinged ",
    "kudos to ",
    "shout-out to ",
    "shoutout to ",
    "credit to ",
    "credits to ",
    "r=",
)
_AFTER_LEAD_RE = re.compile(r"[ \t]*@?" + _WORD + r"(?![ \t]+[A-Z][a-z])")
# `@sighingnow 和 Juelianqvq 挂为共同作者`, `Cade Daniel 是 co-author`: a name before the role it had
# (found from the role, then the word before it).
_ROLE_RE = re.compile(r"共同作者|联合作者|(?i:co-?authors?)\b")
_ROLE_BEFORE_RE = re.compile(r"(?<![\w@/.`-])([A-Za-z][A-Za-z0-9-]{1,38})[ \t]*(?:挂为|是|作为|为)?[ \t]*$")
# `githebs, who had been chasing these bugs`: a word and a comma before `who` is someone (things
# take `which`); a surname (`Cyrus Leung, who`) is left to the full name.
_WHO_RE = re.compile(r"(?<![\w@/.`-])([A-Za-z][A-Za-z0-9-]{1,38}+),[ \t]+who\b")
# `zixi-qi chose …`, `marcelodiaz558 had already tested …`: found from the verb (`_DOING_VERBS_RE`),
# then the word before it, maybe with an auxiliary or an adverb between.
_DOER_BEFORE_RE = re.compile(
    r"(?<![\w@/.`-])([A-Za-z0-9][A-Za-z0-9-]{1,38})[ \t]+"
    r"(?:(?:had|has|have|also|already|first|later|then|originally|just)[ \t]+){0,2}$"
)
# A Chinese clause that opens with a handle doing something (`【看点】zixi-qi 让…`, `。wenscarl 接入…`,
# `，AichenF 先在 SGLang 里把…`): a lowercase handle or a name with its initial (`AichenF`; not a
# product's CamelCase, `FlashInfer`), then the verb, maybe after an adverb and a place (`先在 X 里`).
_ZH_DOING_RE = re.compile(
    r"(?:^|(?<=[。；：，】（(\n*:]))[ \t]*([a-z][a-z0-9-]{2,38}+|[A-Z][a-z]{2,}[A-Z])(?![\w-])[ \t]*"
    r"(?:(?:先|也|又|还|已经|之前|早先|最早|首先|曾经?|刚)[ \t]*)?"
    r"(?:在[^，。；：\n]{1,24}?(?:里|上|中|那边|这边)[ \t]*)?"
    r"(?=让|把|给|接入|加了|加的|修了|提了|提的|写了|做了|改了|开了|实现了|指出|认为|提出|发现|补上|顺手|说|建议|解释|表示|要求)"
)
# The same before verbs an ordinary word may stand before too (`default 修复`): only a word shaped
# like a handle (`mengzhu28 想在…`, `ishaan-smallest 修 …`, `linitra24 在 v0.25 上跑`).
_ZH_WEAK_DOING_RE = re.compile(
    _ZH_DOING_RE.pattern[: _ZH_DOING_RE.pattern.rindex("(?=")] + r"(?=想|修|跑|测|复现|贴)"
)
# The same after a few Chinese words opening the clause (`不过 plops655 在评论里质疑…`,
# `评论里 sfc-gh-hazhang 提到…`): only a word shaped like a handle is taken there.
_ZH_LED_DOING_RE = re.compile(
    r"(?:^|(?<=[。；：，】\n]))[ \t]*[\u4e00-\u9fff]{1,4}[ \t]+([A-Za-z0-9][A-Za-z0-9-]{2,38}+)(?![\w-])[ \t]*"
    r"(?:在[^，。；：\n]{1,24}?(?:里|上|中|那边|这边)[ \t]*)?"
    r"(?=指出|认为|提出|提到|发现|质疑|追问|确认|反馈|报告|吐槽|补充|回复)"
)
# People listed with an `@` handle (`@ApostaC 和 @KuntaiDu、YaoJiayi`): the bare ones are people too.
_WITH_AT_RE = re.compile(
    r"@[A-Za-z0-9][A-Za-z0-9-]{0,38}(?:[ \t]*(?:、|和|与|及|,|，|and\b)[ \t]*@?[A-Za-z0-9][\w-]*)+"
)
_LISTED_RE = re.compile(r"(?:、|和|与|及|,|，|and\b)[ \t]*([A-Za-z0-9][A-Za-z0-9-]{1,38})(?![\w-])")
_CAMEL_NAME_RE = re.compile(r"(?:[A-Z][a-z]+){2,3}|[a-z][a-z0-9-]+")
# `apatke 的 #5958`, `jmkuebler 也开了个 #21809`, `ehartford 在 #17579 里要的`: found from the `的 #N`,
# `开了个 #N`, `在 #N 里` (rare pairs), then the word before it (an adverb, `也`, may stand between).
_HIS_PR_RE = re.compile(r"(?:的|(?:开了|提了|发了|开的|提的)个?|在)[ \t]*(?:#|PR[ \t]*#?|issue[ \t]*#?)\d")
_OWNER_BEFORE_RE = re.compile(
    r"(?<![\w@/.`-])([A-Za-z][A-Za-z0-9-]{1,38})[ \t]*(?:也|又|还|先|后来|之前|早先)?[ \t]*$"
)
_PART_RE = re.compile(r"[a-z][a-z0-9]+|[A-Z][a-z]+[0-9]*")
_WORDY_TAILS = frozenset(
    [
        "only",
        "style",
        "based",
        "aware",
        "side",
        "free",
        "wise",
        "like",
        "level",
        "time",
        "size",
        "grained",
        "bound",
        "safe",
        "specific",
        "and",
        "to",
        "in",
        "out",
        "up",
        "down",
        "off",
        "on",
        "of",
        "by",
        "the",
    ]
)
# A compound that counts is a word (`two-shot`, `single-node`, `multi-step`), not a handle.
_COUNTING_HEADS = frozenset(
    "one two three four five six seven eight nine ten single double triple multi half zero first second third".split()  # noqa: SIM905
)
_LETTERS_DIGITS_RE = re.compile(r"[a-z]{4,}[0-9]+")
_NAME_INITIAL_RE = re.compile(r"[A-Z][a-z]{2,}[A-Z]")  # `AichenF`: a name and its initial


def handle_like(word: str) -> bool:
    """Shaped like a handle and unlike a word or a code: `jinzhen-lin`, `Akshat-Tripathi`,
    `alexsun07`; not `top-k`, `fp16`, `V1-only`, `DeepSeek-V2`."""
    if "-" in word:
        parts = word.split("-")
        return (
            len(parts) <= 3
            and all(_PART_RE.fullmatch(part) for part in parts)
            and parts[-1].casefold() not in _WORDY_TAILS
            and parts[0].casefold() not in _COUNTING_HEADS
        )
    return _LETTERS_DIGITS_RE.fullmatch(word) is not None


def named_as_people(text: str, not_people: frozenset[str]) -> list[tuple[int, str]]:
    """(position, handle) where the text says who someone is, known or not: `Michael Goin
    (mgoin)`, `author wenscarl`, `by alice-dev`, `zixi-qi chose …`, `apatke 的 #5958`."""
    found = _named_in_brackets(text) + _owners_of_prs(text) + _listed_with_handles(text) + _led_people(text)
    found += _on_people_lines(text)
    found += _before(
        text, (m.start() + 1 for m in _DOING_VERBS_RE.finditer(text)), _DOER_BEFORE_RE, _credited
    )
    if "作者" in text or "uthor" in text:
        found += _before(text, (m.start() for m in _ROLE_RE.finditer(text)), _ROLE_BEFORE_RE, _who_person)
    found += _said_as(text)
    return [(at, handle) for at, handle in found if handle.casefold() not in not_people]


def _on_people_lines(text: str) -> list[tuple[int, str]]:
    """The people of `People:` lines, and the names in brackets after a PR (`#8709（liuyanyi）`)."""
    found: list[tuple[int, str]] = []
    if ":" in text or "：" in text:
        for line in _PEOPLE_LINE_RE.finditer(text):
            for m in _LINE_WORD_RE.finditer(text, line.start(1), line.end(1)):
                if _line_person(
                    m.group(1), _SEGMENT_START_RE.search(text, line.start(1) - 1, m.start()) is not None
                ):
                    found.append((m.start(1), m.group(1)))
    if "#" in text:
        found.extend(
            (m.start(1), m.group(1)) for m in _PR_THEN_NAME_RE.finditer(text) if _led_person(m.group(1))
        )
    return found


def _line_person(word: str, opens_segment: bool) -> bool:
    """On a `People:` line: a segment's first word shaped like any person (`tomasruizt (author)`);
    inside a clause, only a handle's shape (`报 bug 的 CNTRYROA`, not `why this bug occurs`)."""
    if opens_segment:  # the label says who is listed: a lowercase word too (`charent (author)`)
        return _led_person(word) or (word[0].islower() and word.casefold() not in _AFTER_AUTHOR)
    return _credited(word) or (word.isupper() and len(word) >= 6)


def _said_as(text: str) -> list[tuple[int, str]]:
    """What the patterns of `_SAID_AS` find, each with the rest of a list it opens (`作者 @matkle，
    two-shot …`: a list goes on with people's shapes only)."""
    found: list[tuple[int, str]] = []
    for pattern, needed, takes in _SAID_AS:
        if needed(text):
            for m in pattern.finditer(text):
                if takes(m.group(1)):
                    found.append((m.start(1), m.group(1)))
                    found.extend(listed_after(text, m.end(1), _shaped(takes)))
    return found


def _before(
    text: str, anchors: Iterable[int], before: re.Pattern[str], takes: Callable[[str], bool]
) -> list[tuple[int, str]]:
    """The word `before` finds right before each anchor (a verb, a role), when `takes` takes it."""
    found: list[tuple[int, str]] = []
    for anchor in anchors:
        m = before.search(text, max(anchor - 60, 0), anchor)
        if m is not None and takes(m.group(1)):
            found.append((m.start(1), m.group(1)))
    return found


def _shaped(takes: Callable[[str], bool]) -> Callable[[str], bool]:
    """`takes`, for the items of a list a person opens: only a word shaped like a person."""

    def item(word: str) -> bool:
        return takes(word) and _led_person(word)

    return item


def listed_after(text: str, end: int, takes: Callable[[str], bool]) -> list[tuple[int, str]]:
    """The rest of a list a person opens (`reviewed by njhill and luyuzhe111`, `mgoin, alice-dev`):
    each next item the same test takes, up to the first it does not."""
    found: list[tuple[int, str]] = []
    while (item := _NEXT_ITEM_RE.match(text, end)) is not None and takes(item.group(1)):
        found.append((item.start(1), item.group(1)))
        end = item.end(1)
    return found


# The item before the next of a list: `chenyang78, ` before `mgoin` (read backwards, at its end).
_ITEM_BEFORE_RE = re.compile(r"(?<![\w@/.`-])([A-Za-z0-9][A-Za-z0-9-]{1,38})[ \t]*(?:,|，|、)[ \t]*$")


def listed_before(text: str, starts: Iterable[int], takes: Callable[[str], bool]) -> list[tuple[int, str]]:
    """The items of a list that come before a person in it (`the kernel experts — chenyang78,
    mgoin, @tlrmchlsmth`): each one before, while the same test takes it."""
    found: list[tuple[int, str]] = []
    for start in starts:
        while (item := _ITEM_BEFORE_RE.search(text, max(start - 60, 0), start)) is not None:
            if not takes(item.group(1)):
                break
            found.append((item.start(1), item.group(1)))
            start = item.start(1)
    return found


def _named_word(word: str) -> bool:
    """After `作者` or `Author:`: any word but an acronym (`PR`, `API`) or a verb (`said`)."""
    return not (word.isupper() and len(word) <= 4) and word.casefold() not in _AFTER_AUTHOR


# A handle written in capitals with a dash (`ML-GCN`), or a name with an initial after a dash
# (`March-H`); a digit run after a mixed-case name (`PedroF43`).
_CAPS_DASH_RE = re.compile(r"[A-Z]{2,}(?:-[A-Z0-9]{2,})+|[A-Z][a-z]{2,}-[A-Z]")
_NAME_DIGITS_RE = re.compile(r"[A-Za-z]*[a-z][A-Z][A-Za-z]*[0-9]+")


def _credited(word: str) -> bool:
    """After `by`, `cc`, `thanks to`, before a doing verb: a handle's shape (`jinzhen-lin`,
    `alexsun07`, `K-Mistele`, `ML-GCN`, `PedroF43`), not a word or a product (`FlashInfer`)."""
    return (
        handle_like(word)
        or _INITIAL_DASH_RE.fullmatch(word) is not None
        or _CAPS_DASH_RE.fullmatch(word) is not None
        or _NAME_DIGITS_RE.fullmatch(word) is not None
    )


def _led_person(word: str) -> bool:
    """After a lead only people follow (`co-authored with`): any shape a list of people holds."""
    return _listed_person(word) or _CAPS_DASH_RE.fullmatch(word) is not None


def _who_person(word: str) -> bool:
    """Before `, who`: a handle's shape or a lowercase word unlike an English one (`githebs`)."""
    return _led_person(word) or _lowercase_or_handle_like(word)


def _listed_person(word: str) -> bool:
    """An item of a people label's list: a handle's shape, a name written together
    (`YaoJiayi`, `iMMIQ`), a long all-capitals handle, a lowercase word unlike an English one."""
    return (
        _handle_not_word(word)
        or _INNER_CASE_RE.fullmatch(word) is not None
        or _INITIAL_DASH_RE.fullmatch(word) is not None
        or (word.isupper() and len(word) >= 6)
    )


def _has_people_label(text: str) -> bool:
    """Whether `_PEOPLE_LABEL_RE` may match: a colon and one of its label words."""
    return (":" in text or "：" in text) and _PEOPLE_WORDS_RE.search(text) is not None


def _listed_with_handles(text: str) -> list[tuple[int, str]]:
    """`@ApostaC 和 @KuntaiDu、YaoJiayi`: a bare name in a list of `@` handles is one of them, when
    it is shaped like a name (`YaoJiayi`, `alice-dev`), not an acronym or a product (`LMCache`)
    nor a dashed word (`@rasmith, reviewed-by Michael Goin`)."""
    if "@" not in text:
        return []
    return [
        (run.start() + m.start(1), m.group(1))
        for run in _WITH_AT_RE.finditer(text)
        for m in _LISTED_RE.finditer(run.group(0))
        if _CAMEL_NAME_RE.fullmatch(m.group(1)) and ("-" not in m.group(1) or handle_like(m.group(1)))
    ]


def _owners_of_prs(text: str) -> list[tuple[int, str]]:
    """`apatke 的 #5958`, `jmkuebler 也开了个 #21809`: the handle-shaped word right before a PR it owns."""
    found: list[tuple[int, str]] = []
    if not has_han(text) or ("#" not in text and "PR" not in text):
        return found
    for m in _HIS_PR_RE.finditer(text):
        owner = _OWNER_BEFORE_RE.search(text, max(m.start() - 40, 0), m.start())
        if owner is not None and _owner(owner.group(1)):
            found.append((owner.start(1), owner.group(1)))
    return found


def _named_in_brackets(text: str) -> list[tuple[int, str]]:
    """`Michael Goin (mgoin)`: a handle in brackets right after one to three capitalised words;
    an all-capitals word in brackets is an abbreviation (`Expert parallel (EP)`), not one."""
    if "(" not in text and "（" not in text:
        return []
    return [
        (m.start(1), m.group(1))
        for m in _IN_BRACKETS_RE.finditer(text)
        if _NAME_BEFORE_RE.search(text, max(m.start() - 60, 0), m.start())
    ]


def _lowercase_or_handle_like(word: str) -> bool:
    """After `author`: a handle (`author wenscarl`, `author K-Mistele`), not the verb of `PR
    author said` nor a word ending like an English one (`reviewed by scheduler`)."""
    return (
        handle_like(word)
        or _INITIAL_DASH_RE.fullmatch(word) is not None
        or (word[0].islower() and word.casefold() not in _AFTER_AUTHOR and not english_like(word))
    )


# What follows `author` when it is not a name: `PR author said`, `author notes that`.
_AFTER_AUTHOR = frozenset(
    [
        "said",
        "says",
        "did",
        "does",
        "claims",
        "claimed",
        "notes",
        "noted",
        "added",
        "adds",
        "mentions",
        "mentioned",
        "explains",
        "explained",
        "wrote",
        "writes",
        "has",
        "had",
        "is",
        "was",
        "also",
        "agreed",
        "confirmed",
        "argues",
        "argued",
        "asked",
        "asks",
        "thinks",
        "believes",
        "replied",
        "responded",
        "ping",
        "pinged",
        "cc",
        "himself",
        "herself",
        "themselves",
        "and",
        "or",
        "of",
        "in",
        "on",
        "for",
        "to",
        "who",
        "which",
    ]
)


# How English words end (`scheduler`, `pipeline`, `caching`): a lowercase word ending so is a
# word doing something in Chinese prose, not a person (`scheduler 让请求排队`).
_WORDY_END_RE = re.compile(
    r"(?:er|or|ers|ors|ing|ion|ions|ed|ly|es|al|ic|ity|ment|able|ure|ize|ise|ache|ate|ive|ine|ory|"
    r"ance|ence|ness|ful|less|ous|ant|ent|ism|ist|ware|work|flow|path|line|time|size|load|set)$"
)


# How English words begin: a vowel, a consonant and a vowel, or one of these pairs. A lowercase word
# opening with any other pair of consonants (`jmkuebler`, `zhisbug`, `ywang`) is a name, whatever its end.
_ENGLISH_ONSET_RE = re.compile(
    r"[aeiouy]|[b-df-hj-np-tv-z][aeiouy]|(?:bl|br|ch|cl|cr|dr|dw|fl|fr|gh|gl|gn|gr|kl|kn|kr|ph|pl|pn|pr|ps|"
    r"qu|rh|sc|sh|sk|sl|sm|sn|sp|sq|st|sw|th|tr|tw|wh|wr)"
)


def english_like(word: str) -> bool:
    """Ends like an English word (`scheduler`, `tokenize`) and begins like one."""
    return _WORDY_END_RE.search(word) is not None and _ENGLISH_ONSET_RE.match(word.casefold()) is not None


def _handle_not_word(word: str) -> bool:
    """Before a Chinese doing verb: a handle's shape (`zixi-qi`), or a long lowercase word that
    does not end like an English one (`wenscarl`, `tingtingtangmeta`)."""
    if handle_like(word) or _NAME_INITIAL_RE.fullmatch(word):
        return True
    return "-" not in word and len(word) >= 6 and not english_like(word)


def _owner(word: str) -> bool:
    """Before `的 #N`: a handle, or a lowercase word that does not end like an English one
    (`hermes parser 的 #1`, `V1 在 #2 里`, `ROCm 的 #3` are things)."""
    return word.casefold() not in _NOT_OWNERS and (
        handle_like(word) or (word[0].islower() and not english_like(word))
    )


# Each pattern, what a text must hold for it to run, and which of its words it takes.


def _has_strong_lead(text: str) -> bool:
    """Whether `_STRONG_LEAD_RE` may match: `author`, `review…` (any case) or `作者` is there."""
    return "uthor" in text or "UTHOR" in text or "eview" in text or "EVIEW" in text or "作者" in text


_WEAK_LEADS = (
    "by",
    "By",
    "BY",
    "cc",
    "Cc",
    "CC",
    "ping",
    "Ping",
    "PING",
    "hanks to",
    "HANKS TO",
    "tip to",
    "h/t",
)


def _has_weak_lead(text: str) -> bool:
    """Whether `_WEAK_LEAD_RE` may match: one of its lead words (as cased in writing) is there."""
    return any(lead in text for lead in _WEAK_LEADS)


_DOING_VERBS_RE = re.compile(
    r" (?:chose|wrote|added|fixed|reworked|ported|moved|rewrote|landed|split|reverted|reviewed|approved|"
    r"measured|benchmarked|profiled|traced|made|filed|opened|implemented|tested|revived|chimed|kept|tried|"
    r"started|offered|submitted|contributed|bisected|debugged|reproduced|reran|restored|stopped|noticed)\b"
)


def _led_people(text: str) -> list[tuple[int, str]]:
    """The people after a lead only people follow (`_PEOPLE_LEADS`), and the rest of their list."""
    low = text.lower()
    if len(low) != len(text):  # a letter whose lower case is longer (`İ`): positions would drift
        return []
    found: list[tuple[int, str]] = []
    for lead in _PEOPLE_LEADS:
        at = low.find(lead)
        while at != -1:
            before = low[at - 1] if at else " "
            m = None if before.isalnum() or before in "-_" else _AFTER_LEAD_RE.match(text, at + len(lead))
            if m is not None and _led_person(m.group(1)):
                found.append((m.start(1), m.group(1)))
                found.extend(listed_after(text, m.end(1), _led_person))
            at = low.find(lead, at + 1)
    return found


_SAID_AS: tuple[tuple[re.Pattern[str], Callable[[str], bool], Callable[[str], bool]], ...] = (
    (_STRONG_LEAD_RE, _has_strong_lead, _lowercase_or_handle_like),
    (_SAID_AUTHOR_RE, _has_strong_lead, _named_word),
    (_PEOPLE_LABEL_RE, _has_people_label, _listed_person),
    (_REVIEW_LEAD_RE, _has_strong_lead, handle_like),
    (_WEAK_LEAD_RE, _has_weak_lead, _credited),
    (_WHO_RE, lambda text: ", who" in text, _who_person),
    (_ZH_DOING_RE, has_han, _handle_not_word),
    (_ZH_WEAK_DOING_RE, has_han, handle_like),
    (_ZH_LED_DOING_RE, has_han, handle_like),
)
# Words before `的 #123` that are no one's: `上游的 #1` is Chinese, these are English.
_NOT_OWNERS = frozenset(
    [
        "pr",
        "issue",
        "rfc",
        "fix",
        "patch",
        "commit",
        "kernel",
        "bug",
        "test",
        "tests",
        "upstream",
        "main",
        "the",
        "this",
        "that",
    ]
)


_WORDS_RE = re.compile(r"[A-Za-z0-9À-ɏ][A-Za-z0-9À-ɏ-]*")  # Latin words, accents kept


def _plain_letters(name: str) -> str:
    """`Nicolò Lucchesi` as typed on a keyboard without accents: `Nicolo Lucchesi`."""
    decomposed = unicodedata.normalize("NFKD", name)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@dataclass(frozen=True)
class KnownPeople:
    """Handles (case-folded → as written) and full names (→ handle) a note may name bare."""

    handles: Mapping[str, str]
    names: Mapping[str, str]
    _names_re: re.Pattern[str] | None = field(default=None, compare=False)
    # Lower-cased handles and first words of names: a note none of whose words is one of them
    # (most notes) is not searched at all.
    _words: frozenset[str] = field(default=frozenset(), compare=False)

    @classmethod
    def of(cls, people: Mapping[str, Iterable[str]]) -> KnownPeople:
        handles = {handle.casefold(): handle for handle in people}
        names: dict[str, str] = {}
        for handle, written in people.items():
            for name in written:
                for form in {" ".join(name.split()), _plain_letters(" ".join(name.split()))}:
                    names.setdefault(form, handle)
        alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
        names_re = re.compile(rf"(?<![\w])(?:{alternatives})(?!\w)") if names else None
        words = frozenset([*handles, *(name.split()[0].lower() for name in names)])
        return cls(handles, names, names_re, words)

    def handle(self, word: str) -> str | None:
        """The handle a bare word is, as the list writes it, or None."""
        return self.handles.get(word.casefold())

    def names_of(self, handle: str) -> list[str]:
        """The full names written for a handle (`mgoin` → `Michael Goin`)."""
        return [name for name, owner in self.names.items() if owner.casefold() == handle.casefold()]

    def found(self, text: str) -> list[tuple[int, str]]:
        """(position, handle) of every known handle or full name the text names."""
        if self._words.isdisjoint(map(str.lower, _WORDS_RE.findall(text))):
            return []
        out = [
            (m.start(), handle)
            for m in HANDLE_WORD_RE.finditer(text)
            if (handle := self.handles.get(m.group().casefold())) is not None
        ]
        if self._names_re is not None:
            out.extend((m.start(), self.names[m.group()]) for m in self._names_re.finditer(text))
        return out


@lru_cache(maxsize=1)
def known_people() -> KnownPeople:
    """The bundled list (`data/people.yaml`); a malformed file fails loudly with its name."""
    text = resources.files("chatbot.digest").joinpath("data/people.yaml").read_text(encoding="utf-8")
    data = load_yaml(text)
    people = data["people"]
    return KnownPeople.of({str(handle): [str(n) for n in names or []] for handle, names in people.items()})


@lru_cache(maxsize=4096)
def full_names(handle: str) -> tuple[str, ...]:
    """The full names the bundled list writes for a handle (`mgoin` → `Michael Goin`), so a
    search for the name finds the entries naming the handle."""
    return tuple(known_people().names_of(handle))
