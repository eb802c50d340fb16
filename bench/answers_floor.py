"""The answer floor, calibrated by leave-one-set-out over the training pool.

Run: .venv/bin/python bench/answers_floor.py
For every grid point of the floor's three constants (`chatbot/answers/answerer.py`: MIN_FIT,
OFF_KIND_SHARED, MIN_SHARED) every training and project set is scored once. Then each training set
is held out in turn: the point with the most right answers on the other training sets (ties to the
project sets) is picked and measured on the held-out set. The sealed pool is never read.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from answers import QuestionSet, Reply, find, is_right, question_sets

from chatbot.answers import answerer
from chatbot.digest import Library

GRID = {"MIN_FIT": (0.5, 1.0), "OFF_KIND_SHARED": (1.0, 1.5, 2.5), "MIN_SHARED": (1.0, 1.5)}
Point = tuple[float, ...]
Scores = dict[str, tuple[int, int]]  # set name → (right, rows)


def score(qs: QuestionSet) -> tuple[int, int]:
    library = Library.load(qs.folder)
    bot = answerer.Answerer(library)
    right = rows = 0
    for case in qs.cases:
        entry = find(library, case.key)
        if entry is None:
            continue
        answer = bot.answer(entry, case.question)
        rows += 1
        right += is_right(entry, Reply(answer.text, answer.found), case)
    return right, rows


def share(scores: Scores, names: Sequence[str]) -> float:
    right = sum(scores[n][0] for n in names)
    rows = sum(scores[n][1] for n in names)
    return right / rows if rows else 0.0


def main() -> None:
    sets = list(question_sets({"training", "project"}))
    by_point: dict[Point, Scores] = {}
    for point in itertools.product(*GRID.values()):
        for name, value in zip(GRID, point, strict=True):
            setattr(answerer, name, value)
        by_point[point] = {qs.name: score(qs) for qs in sets}
    training = [qs.name for qs in sets if qs.pool == "training"]
    project = [qs.name for qs in sets if qs.pool == "project"]
    for held in training:
        rest = [t for t in training if t != held]
        best = max(by_point, key=lambda p: (share(by_point[p], rest), share(by_point[p], project)))
        picked = dict(zip(GRID, best, strict=True))
        print(
            f"held out {held:<22} pick {picked}  held-out {share(by_point[best], [held]):.1%}"
            f"  (rest {share(by_point[best], rest):.1%}, project {share(by_point[best], project):.1%})"
        )


if __name__ == "__main__":
    main()
