"""Whether the quote answers a yes/no question yes or no: read in the sentence that names what
was asked, not anywhere in the clause ("FlashInfer 要等后续 PR" under "flashinfer 能用吗" is a no,
though nothing in it says 不). Where the quote names none of the asker's words, or raises the
question itself ("会不会掉精度"), no yes or no is claimed: the quote speaks for itself.
"""

from __future__ import annotations

import re
from typing import Literal

from chatbot.answers.retrieval import EN_STOP, ZH_STOP_CHARS
from chatbot.text import HAN_RUN, LATIN_WORD, han_bigrams

Polarity = Literal["answer_yes", "answer_no"]

# A sentence saying the thing is not so, not yet, not here, or only elsewhere: 不 before a verb
# (`是不上传的`, `吃不到`), but not the 不 of `不过`, `不少`, `不仅`, `不再要求` (a limit lifted).
NEGATION_RE = re.compile(
    r"不再支持|不(?!错|少|过|仅|同|断|久|但|光|管|然|如|妨|止|外|一样|再)(?=[\u4e00-\u9fff])|无法|尚未|暂不|未|没|要等|等后续|"
    r"用不[上了]|两回事|零|(?i:\btodo\b|\bnot\b|n't\b|\bno longer (?:support|work|avail|exist)|unsupported|"
    r"\bnever\b|\bzero\b|\bnone\b)"
)
# The note asking it too ("会不会掉精度", "是否可接受"), or weighing one thing against another
# ("deprecates rather than deletes"): neither yes nor no.
ASKED_RE = re.compile(
    r"([会是能有要可])不\1|是否|[?？]|而不是|而非|(?i:\bwhether\b|\brather than\b|\binstead of\b)"
)
# Not tried ("还没验证"): a no to "was it tested", neither yes nor no to "can I combine it".
UNTRIED_RE = re.compile(
    r"[没未]\s*(?:验证|测|确认)|待确认|要自己确认|"
    r"(?i:\buntested\b|\bunverified\b|\bunclear\b|\bnot (?:yet )?(?:tested|verified|validated)\b)"
)
SENTENCE_RE = re.compile(r"[^。；;！!\n]+")


def polarity(subject: str, text: str, *, problem: bool = False, testing: bool = False) -> Polarity | None:
    """Yes or no for a yes/no question (its `subject`: without its cue words) from the quote
    `text`: no when a sentence naming one of the question's own words says it is not so; yes
    when those sentences do not; None when no sentence names them or one asks it too. `problem`:
    the question asks about a problem ("有坑吗"), so a clause telling one is a yes however it is
    worded; `testing`: it asks whether it was tested, so "还没验证" is a no."""
    held = _naming(_asked_words(subject), text)
    if not held or _any(ASKED_RE, held):
        return None
    if problem:
        return "answer_yes"
    if _any(UNTRIED_RE, held):
        return "answer_no" if testing else None
    return "answer_no" if _any(NEGATION_RE, held) else "answer_yes"


def _naming(words: list[str], text: str) -> list[str]:
    """The sentences of `text` that name one of `words`."""
    return [s for s in SENTENCE_RE.findall(text) if any(w in s.lower() for w in words)]


def _any(pattern: re.Pattern[str], sentences: list[str]) -> bool:
    return any(pattern.search(s) for s in sentences)


def _asked_words(subject: str) -> list[str]:
    """What the question names: its Latin words (not stop words; 3+ letters or with a digit),
    else the bigrams of its Chinese that are not all particles."""
    lower = subject.lower()
    latin = [w for w in LATIN_WORD.findall(lower) if _a_latin_name(w)]
    if latin:
        return latin
    grams = (g for run in HAN_RUN.findall(lower) if len(run) > 1 for g in han_bigrams(run))
    return [g for g in grams if _a_han_word(g)]


def _a_latin_name(word: str) -> bool:
    return word not in EN_STOP and (len(word) >= 3 or any(c.isdigit() for c in word))


def _a_han_word(gram: str) -> bool:
    return not set(gram) <= ZH_STOP_CHARS and not set(gram) & _ASKING_CHARS


_ASKING_CHARS = frozenset("不没吗呢吧么")  # "会不会", "有没有": how it is asked, not what
