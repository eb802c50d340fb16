"""Follow-up answers per question set and pool, against the best-sentence baseline on the same rows.

Run: .venv/bin/python bench/answers.py [-v] [--pool project,training,sealed] [--latency]
Pools: `project` (the sets this repository grew with: tests/followup_questions.yaml,
bench/paraphrases.yaml, tests/threads_heldout.yaml on the bundled digest; the held-out month;
tests/curator_notes.yaml on tests/curators), `training` (eval/training/*: tune on these) and
`sealed` (eval/sealed/*: scored, never read). Per set: right (every expected substring present,
found, the quote shorter than 3/4 of the note; a `none` row: the answer says the note does not
cover it), false denials (a question answered "not covered"), honest denials (a `none` row answered
"not covered"), and the baseline (rapidfuzz: the note sentence most similar to the question) on the
same rows. `-v` lists the misses of the project and training sets on stderr, never a sealed set's
rows. `--latency`: answer p50/p99 per set (20 repeats).
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from collections.abc import Callable, Iterator
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
    key: str  # the PR number, or `digest:position` for notes without one
    question: str
    expect: list[str] | None  # None: the note has no answer
    found: bool = True  # False: the answer must say the note lacks it, and still hold `expect`


@dataclass(frozen=True)
class QuestionSet:
    pool: str
    name: str
    folder: Path
    cases: list[Case]


@dataclass(frozen=True)
class Reply:
    text: str
    found: bool


def _load(path: Path) -> dict:  # type: ignore[type-arg]
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


def test_set() -> list[Case]:
    data = _load(ROOT / "tests/followup_questions.yaml")
    cases = []
    for pr, kinds in data["expect"].items():
        for intent, expect in kinds.items():
            for q in data["phrasings"][intent]:
                cases.append(Case(str(pr), q, None if expect == "none" else list(expect)))
    cases += [Case(str(i["pr"]), i["q"], list(i["expect"])) for i in data["questions"]]
    return cases


def paraphrase_set() -> list[Case]:
    data = _load(ROOT / "bench/paraphrases.yaml")
    return [
        Case(str(i["pr"]), i["q"], None if i.get("none") else list(i["expect"])) for i in data["questions"]
    ]


def thread_set() -> list[Case]:
    data = _load(ROOT / "tests/threads_heldout.yaml")
    return [
        Case(str(i["pr"]), i["q"], list(i["expect"]), i.get("found", True)) for i in data.get("questions", [])
    ]


def followups(path: Path) -> list[Case]:
    """A `followups.yaml` (eval/README.md; tests/followups_heldout.yaml has the same shape)."""
    data = _load(path)
    return [
        Case(str(i["pr"]), str(i["q"]), [str(s) for s in i["expect"]]) for i in data.get("questions") or []
    ] + [Case(str(i["pr"]), str(i["q"]), None) for i in data.get("none") or []]


def curator_set() -> list[Case]:
    data = _load(ROOT / "tests/curator_notes.yaml")
    return [
        Case(f"{Path(name).stem}:{q['entry']}", q["q"], list(q["expect"]))
        for name, hand in data.items()
        for q in hand.get("questions", [])
    ]


def question_sets(pools: set[str]) -> Iterator[QuestionSet]:
    digests, tests = ROOT / "digests", ROOT / "tests"
    if "project" in pools:
        yield QuestionSet("project", "tests", digests, test_set())
        yield QuestionSet("project", "paraphrases", digests, paraphrase_set())
        yield QuestionSet("project", "threads", digests, thread_set())
        yield QuestionSet(
            "project",
            "held-out month",
            tests / "digests-heldout",
            followups(tests / "followups_heldout.yaml"),
        )
        yield QuestionSet("project", "curators", tests / "curators", curator_set())
    for pool in ("training", "sealed"):
        if pool in pools:
            for folder in sorted(
                p for p in (ROOT / "eval" / pool).glob("*") if (p / "followups.yaml").exists()
            ):
                yield QuestionSet(pool, folder.name, folder / "digest", followups(folder / "followups.yaml"))


SENTENCE_CUT = re.compile(r"(?<=[。！？!?；\n])")


def baseline(entry: Entry, question: str) -> Reply:
    """The single note sentence most similar to the question (rapidfuzz `process.extractOne`,
    WRatio), plus the link; the note cut at its sentence punctuation by one regex, not by the
    project's own splitter, so the baseline is what anyone would write."""
    pieces = [s.strip() for s in SENTENCE_CUT.split(entry.note) if s.strip()]
    best = process.extractOne(question, pieces, scorer=fuzz.WRatio)
    return Reply(f"{best[0] if best else ''}\n{entry.url}", True)


def is_right(entry: Entry, reply: Reply, case: Case) -> bool:
    # The PR link is not part of the budget: only the quote must stay under 3/4 of the note.
    quoted = reply.text.removesuffix(entry.url or "\0").rstrip()
    if len(quoted) >= 0.75 * len(entry.note):
        return False
    if case.expect is None:
        return not reply.found
    return reply.found == case.found and all(s in reply.text for s in case.expect)


def find(library: Library, key: str) -> Entry | None:
    """The entry a row names: by PR number (the library's: metadata, or the one a title ends
    with), or by `digest:position`."""
    if ":" not in key:
        return library.get(key)
    digest, position = key.rsplit(":", 1)
    return next((e for e in library if e.digest == digest and e.position == int(position)), None)


@dataclass
class Tally:
    right: int = 0
    baseline: int = 0
    false_denials: int = 0
    honest_denials: int = 0
    nones: int = 0
    missing_entries: int = 0


def score_set(qs: QuestionSet, show: bool) -> Tally:
    library = Library.load(qs.folder)
    answerer = Answerer(library)
    tally = Tally()
    for case in qs.cases:
        entry = find(library, case.key)
        if entry is None:
            tally.missing_entries += 1
            continue
        answer = answerer.answer(entry, case.question)
        reply = Reply(answer.text, answer.found)
        right = is_right(entry, reply, case)
        tally.right += right
        tally.baseline += is_right(entry, baseline(entry, case.question), case)
        tally.nones += case.expect is None
        if not answer.found and case.expect is not None and case.found:
            tally.false_denials += 1
        if not answer.found and case.expect is None:
            tally.honest_denials += 1
        if show and not right and qs.pool != "sealed":
            want = "nothing (honest denial)" if case.expect is None else case.expect
            print(
                f"  miss {qs.name} #{case.key} {case.question!r} want={want}: {answer.text!r}",
                file=sys.stderr,
            )
    return tally


def latency(qs: QuestionSet, answer: Callable[[Entry, str], object]) -> tuple[float, float]:
    """Answer p50 and p99 (µs) over the set's rows, each asked `REPEAT` times."""
    library = Library.load(qs.folder)
    times: list[float] = []
    for case in qs.cases:
        entry = find(library, case.key)
        if entry is None:
            continue
        for _ in range(REPEAT):
            start = time.perf_counter()
            answer(entry, case.question)
            times.append((time.perf_counter() - start) * 1e6)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.99))]


def main() -> int:
    args = sys.argv[1:]
    show = "-v" in args
    pools = (
        set(args[args.index("--pool") + 1].split(","))
        if "--pool" in args
        else {"project", "training", "sealed"}
    )
    print(f"{'pool / set':<34}{'rows':>6}{'right':>9}{'baseline':>10}{'false den.':>12}{'honest den.':>13}")
    for qs in question_sets(pools):
        t = score_set(qs, show)
        n = len(qs.cases)
        label = f"{qs.pool} / {qs.name}"
        honest = f"{t.honest_denials}/{t.nones}"
        print(f"{label:<34}{n:>6}{t.right / n:>9.1%}{t.baseline / n:>10.1%}{t.false_denials:>12}{honest:>13}")
        if t.missing_entries:
            print(f"{'':<34}{t.missing_entries} rows name no entry of the set's digest")
        if "--latency" in args:
            answerer = Answerer(Library.load(qs.folder))
            p50, p99 = latency(qs, answerer.answer)
            print(f"{'':<34}answer p50 {p50:.0f} µs, p99 {p99:.0f} µs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
