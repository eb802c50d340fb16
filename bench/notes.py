"""Note anatomy: parts found and parse time, against the note parser of a baseline revision.

Run: .venv/bin/python bench/notes.py [--baseline REV]   (default REV: main)
The baseline is that revision's `chatbot/digest/note.py`, loaded from git beside the current one, so
both read the same notes in the same run: the bundled digest (first curator) and the notes in
`tests/curators/` (other hands). Prints, per set, how many notes have a verdict, an audience, a caveat
and a ref found, and the parse time per note (p50 of repeated runs), with ratios.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

from chatbot.digest import Entry, Library, NoteParts, analyse_note, parse_raw_text

ROOT = Path(__file__).resolve().parent.parent
REPEAT = 30
Analyse = Callable[[str, str, str], NoteParts]


def baseline_parser(rev: str) -> Analyse:
    """`analyse_note` of `rev`'s note.py, executed as a module of its own."""
    source = subprocess.run(
        ["git", "show", f"{rev}:chatbot/digest/note.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    module = types.ModuleType("baseline_note")
    module.__dict__["__name__"] = "baseline_note"
    sys.modules["baseline_note"] = module
    exec(compile(source, f"{rev}:chatbot/digest/note.py", "exec"), module.__dict__)
    parser: Analyse = module.__dict__["analyse_note"]
    return parser


def note_sets() -> dict[str, list[Entry]]:
    sets = {"first curator (bundled)": Library.load(ROOT / "digests").entries}
    for path in sorted((ROOT / "tests/curators").glob("*.txt")):
        sets[f"{path.stem} ({path.name})"] = parse_raw_text(
            path.read_text(encoding="utf-8"), str(path)
        ).entries
    return sets


def found(parser: Analyse, entries: list[Entry]) -> dict[str, int]:
    counts = dict.fromkeys(("verdict", "audience", "caveats", "refs"), 0)
    for entry in entries:
        parts = parser(entry.note, entry.repo, entry.title)
        counts["verdict"] += parts.verdict is not None
        counts["audience"] += parts.audience is not None
        counts["caveats"] += bool(parts.caveats)
        counts["refs"] += bool(parts.refs)
    return counts


def per_note_us(parser: Analyse, entries: list[Entry]) -> float:
    runs = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        for entry in entries:
            parser(entry.note, entry.repo, entry.title)
        runs.append((time.perf_counter() - start) / len(entries) * 1e6)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description="Note anatomy against a baseline revision's parser.")
    parser.add_argument("--baseline", default="main")
    rev = parser.parse_args().baseline
    before = baseline_parser(rev)
    after: Analyse = analyse_note
    for name, entries in note_sets().items():
        print(f"\n{name}: {len(entries)} notes")
        old, new = found(before, entries), found(after, entries)
        for part in old:
            print(f"  {part:<9} found in  {rev}: {old[part]:>3}   now: {new[part]:>3}")
        t_old, t_new = per_note_us(before, entries), per_note_us(after, entries)
        print(
            f"  parse time per note  {rev}: {t_old:8.1f} µs   now: {t_new:8.1f} µs   ratio {t_new / t_old:.2f}x"
        )


if __name__ == "__main__":
    main()
