"""Reading notes: the people, references and verdicts each evaluation set says a note holds.

    .venv/bin/python bench/reading.py [--pool training|sealed|all] [--rows]

Every set under eval/<pool>/ has a `reading.yaml` (format in eval/README.md): per entry (by PR),
whether the note gives a verdict, the GitHub handles it names and the PRs/issues it refers to.
The set's digest folder is loaded as the bot loads it, and per set this prints the share of
named people read (goal ≥ 90 %), of references read (goal: all), of verdicts read, and the
verdicts read where the set says there is none. `--rows` lists each miss, for training sets
only: a sealed set is scored, never read, so only its totals are printed.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chatbot.digest import Entry, Library  # noqa: E402


@dataclass
class Score:
    """Counts of one set (or all): wanted and read, and the misses (training sets only)."""

    people: int = 0
    people_read: int = 0
    refs: int = 0
    refs_read: int = 0
    verdicts: int = 0
    verdicts_read: int = 0
    no_verdict: int = 0
    verdict_invented: int = 0
    missing_entries: int = 0
    misses: list[str] = field(default_factory=list)

    def add(self, other: Score) -> None:
        for name in ("people", "people_read", "refs", "refs_read", "verdicts", "verdicts_read"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.no_verdict += other.no_verdict
        self.verdict_invented += other.verdict_invented
        self.missing_entries += other.missing_entries

    def line(self, name: str) -> str:
        return (
            f"{name:<34} people {_share(self.people_read, self.people)}  refs {_share(self.refs_read, self.refs)}"
            f"  verdicts {_share(self.verdicts_read, self.verdicts)}"
            f"  verdict where none {self.verdict_invented}/{self.no_verdict}"
            + (f"  entries not found {self.missing_entries}" if self.missing_entries else "")
        )


def _share(part: int, whole: int) -> str:
    return f"{part:>3}/{whole:<3} {100 * part / whole:5.1f} %" if whole else f"{part:>3}/{whole:<3}    — "


def entries_by_pr(entries: list[Entry]) -> dict[int, Entry]:
    """Each entry under the PR the library gives it (its metadata's, or the one its title ends
    with): a set whose entries are not found here shows a reading miss, not a bench guess."""
    return {entry.pr: entry for entry in reversed(entries) if entry.pr is not None}


def ref_keys(entry: Entry) -> set[str]:
    """Each ref as a set writes it: its number (this repository) or `owner/name#N`."""
    keys: set[str] = set()
    for ref in entry.refs:
        owner_name, _, number = ref.url.removeprefix("https://github.com/").partition("/pull/")
        if not number:
            owner_name, _, number = ref.url.removeprefix("https://github.com/").partition("/issues/")
        keys.add(
            str(ref.number) if owner_name.casefold() == entry.repo.casefold() else f"{owner_name}#{number}"
        )
    return keys


def score_set(folder: Path) -> Score:
    library = Library.load(folder / "digest")
    by_pr = entries_by_pr(library.entries)
    wanted: list[dict[str, Any]] = yaml.safe_load((folder / "reading.yaml").read_text(encoding="utf-8"))[
        "entries"
    ]
    score = Score()
    for row in wanted:
        entry = by_pr.get(int(row["pr"]))
        people = [str(p) for p in row.get("people") or []]
        refs = [str(r) for r in row.get("refs") or []]
        score.people += len(people)
        score.refs += len(refs)
        score.verdicts += bool(row["verdict"])
        score.no_verdict += not row["verdict"]
        if entry is None:
            score.missing_entries += 1
            score.misses.append(f"  #{row['pr']}: no entry")
            continue
        _score_entry(entry, row["pr"], people, refs, bool(row["verdict"]), score)
    return score


def _score_entry(
    entry: Entry, pr: int, people: list[str], refs: list[str], verdict: bool, score: Score
) -> None:
    read_people = {p.casefold() for p in entry.people}
    missed_people = [p for p in people if p.casefold() not in read_people]
    score.people_read += len(people) - len(missed_people)
    keys = ref_keys(entry)
    missed_refs = [r for r in refs if r not in keys]
    score.refs_read += len(refs) - len(missed_refs)
    read_verdict = entry.verdict is not None
    score.verdicts_read += verdict and read_verdict
    score.verdict_invented += not verdict and read_verdict
    extra_people = [p for p in entry.people if p.casefold() not in {w.casefold() for w in people}]
    if missed_people or missed_refs or verdict != read_verdict or extra_people:
        score.misses.append(
            f"  #{pr}: people missed {missed_people} read but not named {extra_people}, refs missed "
            f"{missed_refs}, verdict wanted {verdict} read {entry.verdict!r}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", choices=["training", "sealed", "all"], default="all")
    parser.add_argument("--rows", action="store_true", help="list the misses of training sets")
    args = parser.parse_args(argv)
    pools = ["training", "sealed"] if args.pool == "all" else [args.pool]
    for pool in pools:
        sets = sorted(p for p in (ROOT / "eval" / pool).glob("*") if (p / "reading.yaml").is_file())
        total = Score()
        for folder in sets:
            score = score_set(folder)
            total.add(score)
            if pool == "training":
                print(score.line(f"{pool}/{folder.name}"))
                if args.rows:
                    print("\n".join(score.misses))
        if sets:
            print(total.line(f"{pool} ({len(sets)} sets)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
