"""Coordinate search over the answer scorer's few weights, on the training pool only.

Run: .venv/bin/python bench/tune_answers.py [--sweeps N]
Each weight in turn is tried at ½, ¾, 1¼, 1½ and 2 times its value with the others held; a move
is kept when it gets more training rows right (a false denial costs half a row) and the project
sets (tests/, bench/paraphrases.yaml, the held-out month) lose at most one row. The sealed pool is
never read here: score it once with bench/answers.py after adopting what this prints. Two worker
processes; a sweep over the weights below takes about four minutes on two cores.
"""

from __future__ import annotations

import json
import sys
from multiprocessing import Pool
from types import ModuleType

from answers import QuestionSet, question_sets, score_set

from chatbot.answers import answerer, retrieval

# The weights searched: the modules that read each, its name. The floor's three constants
# (MIN_FIT, OFF_KIND_SHARED, MIN_SHARED) are bench/answers_floor.py's, by leave-one-set-out.
WEIGHTS: tuple[tuple[tuple[ModuleType, ...], str], ...] = (
    ((retrieval,), "FUZZY_SHARE"),
    ((retrieval,), "FACT_SHARE"),
    ((retrieval,), "LEX_BY_FIT"),
    ((retrieval,), "ABOUT_FIT"),
    ((retrieval,), "CUE_SHARE"),
    ((retrieval,), "WORD_SHARED"),
    ((answerer,), "BAND"),
)
FACTORS = (0.5, 0.75, 1.25, 1.5, 2.0)
FALSE_DENIAL_COST = 0.5
PROJECT_SLACK = 1  # project rows a move may lose

_SETS: list[QuestionSet] = []


def _apply(values: dict[str, float]) -> None:
    for modules, name in WEIGHTS:
        for module in modules:
            setattr(module, name, values[name])


def evaluate(values: dict[str, float]) -> tuple[int, int, int]:
    """Training rows right, training false denials, project rows right, with these weights."""
    if not _SETS:
        _SETS.extend(question_sets({"training", "project"}))
    _apply(values)
    right = denials = project = 0
    for qs in _SETS:
        tally = score_set(qs, show=False)
        if qs.pool == "training":
            right, denials = right + tally.right, denials + tally.false_denials
        else:
            project += tally.right
    return right, denials, project


def main() -> int:
    args = sys.argv[1:]
    sweeps = int(args[args.index("--sweeps") + 1]) if "--sweeps" in args else 1
    current = {name: float(getattr(modules[0], name)) for modules, name in WEIGHTS}
    with Pool(2) as pool:
        base = pool.apply(evaluate, (current,))
        floor = base[2] - PROJECT_SLACK

        def objective(result: tuple[int, int, int]) -> float:
            right, denials, project = result
            return right - FALSE_DENIAL_COST * denials if project >= floor else float("-inf")

        best = objective(base)
        print(f"start: training right {base[0]}, false denials {base[1]}, project right {base[2]}")
        for _ in range(sweeps):
            for _, name in WEIGHTS:
                tries = [{**current, name: round(current[name] * f, 3)} for f in FACTORS]
                for values, result in zip(tries, pool.map(evaluate, tries), strict=True):
                    print(f"  {name}={values[name]}: right {result[0]}, FD {result[1]}, project {result[2]}")
                    if objective(result) > best:
                        best, current = objective(result), values
        print("best:", json.dumps(current))
    return 0


if __name__ == "__main__":
    sys.exit(main())
