"""The index build alone: CPU seconds and memory of `SearchIndex.build`, against another tree.

    .venv/bin/python bench/index_build.py [--size 10000] [--runs 5] [--low-repetition]
                                          [--against /path/to/an/older/tree]

Each run is a fresh interpreter that loads the library and then builds the index, both under
`build_long_lived` (as `bench/scale.py`'s load child and `serve` do), and reports the build's
`process_time`, the peak RSS after it and the RSS it kept (after minus before). With
`--against`, runs of that tree's `chatbot` alternate with this one's (CPU time and RSS, not
wall time: the machine is shared); medians.

`--low-repetition` builds a library whose pieces of text rarely repeat, so no memo flatters the
build: each note is 2-5 real seed sentences, shuffled, with 30 % of their Han characters swapped
for random ones of the seed's alphabet and random Latin words, identifiers and `#refs`
inserted; titles are random, and each entry has one random tag (seeded: the same files each
time, written once to the bench cache).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import statistics
import string
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Nothing of `chatbot` (nor of bench.corpus, which imports it) is imported at the top: a child
# measures the tree it is given, so that tree must come first on the path when it is imported.

FIELDS = ("cpu", "peak", "kept")


def _rss_mib() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * resource.getpagesize() / 2**20


def child(tree: Path, folder: Path) -> dict[str, float]:
    """One measurement, in this (fresh) interpreter, of `tree`'s index build."""
    sys.path.insert(0, str(tree))
    from chatbot.digest import Library
    from chatbot.heap import build_long_lived
    from chatbot.search import SearchIndex, load_glossary

    if not Path(sys.modules["chatbot"].__file__ or "").is_relative_to(tree):
        raise RuntimeError(f"chatbot was not imported from {tree}")

    library = build_long_lived(lambda: Library.load(folder))
    glossary = load_glossary(folder)
    before = _rss_mib()
    cpu = time.process_time()
    build_long_lived(lambda: SearchIndex.build(library.entries, glossary))
    cpu = time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"cpu": cpu, "peak": peak, "kept": _rss_mib() - before}


class _Text:
    """Random pieces of text for the low-repetition library."""

    def __init__(self, rng: random.Random, alphabet: list[str]) -> None:
        self.rng, self.alphabet = rng, alphabet

    def han(self, n: int) -> str:
        return "".join(self.rng.choice(self.alphabet) for _ in range(n))

    def word(self) -> str:
        return "".join(self.rng.choice(string.ascii_lowercase) for _ in range(self.rng.randint(3, 10)))

    def ident(self) -> str:
        parts = [self.word() for _ in range(self.rng.randint(2, 3))]
        sep = self.rng.choice(["_", ".", "-", "::", ""])
        return sep.join(parts) if sep else "".join(p.capitalize() for p in parts)

    def mutate(self, sentence: str) -> str:
        chars = [self.han(1) if "一" <= c <= "龥" and self.rng.random() < 0.3 else c for c in sentence]
        out = "".join(chars)
        for _ in range(self.rng.randint(1, 3)):
            at = self.rng.randrange(len(out) + 1)
            thing = self.rng.choice(
                [
                    f" {self.word()} ",
                    f" `{self.ident()}` ",
                    self.han(self.rng.randint(2, 6)),
                    f" #{self.rng.randrange(1000, 70000)} ",
                ]
            )
            out = out[:at] + thing + out[at:]
        return out


def low_repetition_items(size: int) -> list[dict[str, Any]]:
    """Entries whose notes, titles and tags rarely repeat (see the module docstring)."""
    from bench.corpus import seed_entries
    from chatbot.search import Glossary

    rng = random.Random(4242)
    seed = seed_entries()
    alphabet = sorted({c for e in seed for c in e.title + e.note if "一" <= c <= "龥"})
    text = _Text(rng, alphabet)
    sentences = [s for e in seed for s in re.split(r"(?<=[。；])", e.note) if s.strip()]
    concepts = list(Glossary.load().concepts.values())
    people = sorted({e.author for e in seed if e.author} | {p for e in seed for p in e.people})
    items: list[dict[str, Any]] = []
    for n in range(size):
        picked = rng.sample(concepts, 2)
        title = f"{text.han(rng.randint(2, 5))} {rng.choice(picked[0].terms)} {text.word()} {text.ident()} {text.han(3)} {n}"
        note = "".join(text.mutate(s) for s in rng.sample(sentences, rng.randint(2, 5))).replace("\n", " ")
        author = rng.choice(people) if rng.random() < 0.5 else text.word()
        related = [60000 + rng.randrange(size), 40000 + rng.randrange(20000)]
        tags = [c.display for c in picked] + [text.word()]
        items.append(
            {
                "title": title,
                "note": note,
                "pr": 60000 + n,
                "author": author,
                "tags": tags,
                "related": related,
            }
        )
    return items


def low_repetition_dir(size: int) -> Path:
    """The low-repetition library of `size` entries, written once per machine and reused."""
    from bench.corpus import write_items
    from bench.scale import CACHE

    folder = CACHE / f"low-repetition-{size}"
    done = folder / ".complete"
    if done.exists():
        return folder
    write_items(folder, low_repetition_items(size), "lowrep-digest")
    done.write_text("ok")
    return folder


def run_child(tree: Path, folder: Path) -> dict[str, float]:
    command = [sys.executable, str(Path(__file__)), "--child", str(tree), str(folder)]
    done = subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--low-repetition", action="store_true")
    parser.add_argument("--against", type=Path, help="another checkout whose chatbot/ to compare")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(Path(args.child[0]), Path(args.child[1]))))
        return
    from bench.scale import library_dir

    folder = low_repetition_dir(args.size) if args.low_repetition else library_dir(args.size)
    trees = {"this tree": ROOT, **({"against": args.against.resolve()} if args.against else {})}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for run in range(args.runs):
        order = list(trees.items()) if run % 2 == 0 else list(reversed(trees.items()))
        for name, tree in order:
            results[name].append(run_child(tree, folder))
    print(f"SearchIndex.build on {folder} ({args.runs} runs each, medians)")
    print(f"{'tree':<10} {'CPU s':>7} {'peak RSS MiB':>13} {'kept RSS MiB':>13}")
    for name, rows in results.items():
        cpu, peak, kept = (statistics.median(r[f] for r in rows) for f in FIELDS)
        print(f"{name:<10} {cpu:>7.3f} {peak:>13.1f} {kept:>13.1f}")


if __name__ == "__main__":
    main()
