"""Follow-up answers vs. the obvious baseline (best single sentence by rapidfuzz), same questions.

Run: .venv/bin/python bench/answers.py
Prints, per question set, hit rate (right part of the note, shorter than 3/4 of the note), the
same ignoring the length rule ("any length"), and answer latency p50/p99 for the answerer and the baseline, with ratios.
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml
from rapidfuzz import fuzz, process

from chatbot.answers import Answerer
from chatbot.digest import Entry, Library

ROOT = Path(__file__).resolve().parent.parent
REPEAT = 20


@dataclass(frozen=True)
class Case:
    pr: int
    question: str
    expect: list[str] | None  # None: the note has no answer


@dataclass(frozen=True)
class Reply:
    text: str
    found: bool


def test_set() -> list[Case]:
    data = yaml.safe_load((ROOT / "tests/followup_questions.yaml").read_text(encoding="utf-8"))
    cases = []
    for pr, kinds in data["expect"].items():
        for intent, expect in kinds.items():
            for q in data["phrasings"][intent]:
                cases.append(Case(int(pr), q, None if expect == "none" else list(expect)))
    cases += [Case(int(i["pr"]), i["q"], list(i["expect"])) for i in data["questions"]]
    return cases


def paraphrase_set() -> list[Case]:
    data = yaml.safe_load((ROOT / "bench/paraphrases.yaml").read_text(encoding="utf-8"))
    return [
        Case(int(i["pr"]), i["q"], None if i.get("none") else list(i["expect"])) for i in data["questions"]
    ]


SENTENCE_CUT = re.compile(r"(?<=[。！？!?；\n])")


def baseline(entry: Entry, question: str) -> Reply:
    """The single note sentence most similar to the question (rapidfuzz `process.extractOne`,
    WRatio), plus the link; the note cut at its sentence punctuation by one regex, not by the
    project's own splitter, so the baseline is what anyone would write."""
    pieces = [s.strip() for s in SENTENCE_CUT.split(entry.note) if s.strip()]
    best = process.extractOne(question, pieces, scorer=fuzz.WRatio)
    return Reply(f"{best[0] if best else ''}\n{entry.url}", True)


def is_hit(entry: Entry, reply: Reply, case: Case, check_length: bool = True) -> bool:
    if check_length and len(reply.text) >= 0.75 * len(entry.note):
        return False
    if case.expect is None:
        return not reply.found
    return reply.found and all(s in reply.text for s in case.expect)


def measure(
    library: Library, cases: list[Case], answer: Callable[[Entry, str], Reply]
) -> tuple[float, float, float, float]:
    """Hit rate (with and without the length rule), p50 and p99 latency (µs) over the cases."""
    hits = 0
    content_hits = 0
    times: list[float] = []
    for case in cases:
        entry = library.get(str(case.pr))
        assert entry is not None
        reply = answer(entry, case.question)
        hits += is_hit(entry, reply, case)
        content_hits += is_hit(entry, reply, case, check_length=False)
        for _ in range(REPEAT):
            start = time.perf_counter()
            answer(entry, case.question)
            times.append((time.perf_counter() - start) * 1e6)
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return hits / len(cases), content_hits / len(cases), statistics.median(times), p99


def main() -> int:
    library = Library.load(ROOT / "digests")
    answerer = Answerer(library.entries)

    def ours(entry: Entry, question: str) -> Reply:
        a = answerer.answer(entry, question)
        return Reply(a.text, a.found)

    print(f"{'question set':<26}{'metric':<14}{'answerer':>12}{'baseline':>12}{'ratio':>9}")
    for name, cases in (("tests (%d)", test_set()), ("paraphrases (%d)", paraphrase_set())):
        label = name % len(cases)
        rate, content, p50, p99 = measure(library, cases, ours)
        b_rate, b_content, b_p50, b_p99 = measure(library, cases, baseline)
        rows = [
            ("hit rate", f"{rate:.1%}", f"{b_rate:.1%}", f"{rate / b_rate:.2f}x" if b_rate else "-"),
            ("any length", f"{content:.1%}", f"{b_content:.1%}", f"{content / b_content:.2f}x"),
            ("p50 (µs)", f"{p50:.0f}", f"{b_p50:.0f}", f"{p50 / b_p50:.2f}x"),
            ("p99 (µs)", f"{p99:.0f}", f"{b_p99:.0f}", f"{p99 / b_p99:.2f}x"),
        ]
        for i, (metric, a, b, r) in enumerate(rows):
            print(f"{label if i == 0 else '':<26}{metric:<14}{a:>12}{b:>12}{r:>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
